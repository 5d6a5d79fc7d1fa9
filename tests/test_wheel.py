"""The package as `pip install blocksim` gives it to a newcomer: a wheel built from a clean
copy of the sources, installed into a fresh virtual environment, used from another folder.

Dependencies (numpy, scipy, PySide6, ...) come from the environment running the tests: the
fresh venv's `outer.pth` lists this environment's site-packages folders. (`venv
--system-site-packages` would not do: made from inside a venv it sees the base interpreter's
site-packages, not the venv's, where `pip install -e ".[test,gui]"` put PySide6.) The folders
are listed as paths, so their own .pth files (an editable blocksim's finder) do not run:
blocksim itself comes only from the wheel.
"""
from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from blocksim.diagram.examples import example_name, example_paths

ROOT = Path(__file__).resolve().parents[1]

EXAMPLES_MENU = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
qt = QApplication(["blocksim"])
from blocksim.gui.window import app
window = app.create_window(None)
print(len(window.examples_menu.actions()))
"""

# Opens two examples from the installed editor's menu (one reads a CSV beside it) and runs
# each; prints "name title blocks status rows" per example.
EXAMPLE_FROM_MENU = """
import os
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication
qt = QApplication(["blocksim"])
from blocksim.gui.window import app
window = app.create_window(None)
for name in ("bouncing_ball", "from_file_measured"):
    next(a for a in window.examples_menu.actions() if a.text() == name).trigger()
    outcome = []
    loop = QEventLoop()
    window.sim.runner.finished.connect(lambda r: (outcome.append((r.status, len(r.time))),
                                                  loop.quit()))
    window.sim.runner.failed.connect(lambda m, p: (outcome.append(("failed: " + m, 0)),
                                                   loop.quit()))
    QTimer.singleShot(120000, loop.quit)
    window.actions_.run.trigger()
    loop.exec()
    window.sim.runner.finished.disconnect()
    window.sim.runner.failed.disconnect()
    print(name, window.doc.title, len(window.doc.diagram.blocks), *outcome[0])
"""


def site_folders() -> list[str]:
    """This environment's site-packages folders: a venv's own (and the base's when the venv
    sees them), the user's when enabled, as the running interpreter found them."""
    folders = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return [folder for folder in folders if Path(folder).is_dir()]


def sources() -> list[str]:
    """Tracked and new (not ignored) files: the checkout without build leftovers."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    return [name for name in listed.stdout.splitlines() if (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the venv's python, a folder far from the sources)."""
    base = tmp_path_factory.mktemp("wheel")
    clean = base / "src"
    for name in sources():
        (clean / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clean / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(base / "dist"), str(clean)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((base / "dist").glob("blocksim-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
    python = base / "venv" / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True, check=True)
    (Path(purelib.stdout.strip()) / "outer.pth").write_text("\n".join(site_folders()) + "\n")
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                           str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return python, elsewhere


def run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BLOCKSIM_BACKEND")}
    return subprocess.run([str(python), *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=240)


def test_the_wheel_claims_only_the_blocksim_name(installed):
    python, here = installed
    site = Path(run(python, here, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"
                    ).stdout.strip())
    top = {p.name for p in site.iterdir() if not p.name.endswith((".dist-info", ".pth"))}
    assert "blocksim" in top and "blocks" not in top and "diagrams" not in top
    record = next(site.glob("blocksim-*.dist-info")) / "RECORD"
    roots = {line.split("/", 1)[0] for line in record.read_text().splitlines()}
    assert roots <= {"blocksim", next(site.glob("blocksim-*.dist-info")).name, "..", "../.."}, roots
    found = run(python, here, "-c", "import blocksim, blocksim.blocks as b; print(blocksim.__file__);"
                "print(b.__file__)").stdout.split()
    assert all(str(site) in f for f in found), found


def test_the_dependencies_come_from_the_environment_running_the_tests(installed):
    """Made from inside a venv, the wheel's venv uses that venv's packages (where
    `pip install -e ".[test,gui]"` put them), not the base interpreter's."""
    python, here = installed
    import numpy

    found = run(python, here, "-c", "import numpy; print(numpy.__file__)")
    assert found.returncode == 0, found.stderr[-2000:]
    assert Path(found.stdout.strip()) == Path(numpy.__file__)


def test_examples_are_listed_and_run_by_name(installed):
    python, here = installed
    listed = run(python, here, "-m", "blocksim", "examples")
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines()[:len(example_paths())]]
    assert names == [example_name(p) for p in example_paths()]
    ran = run(python, here, "-m", "blocksim", "run", "bouncing_ball", "--out", "ball.csv")
    assert ran.returncode == 0, ran.stderr
    assert "finished at t = 30" in ran.stderr and (here / "ball.csv").stat().st_size > 10000


def test_python_m_blocksim_help(installed):
    python, here = installed
    shown = run(python, here, "-m", "blocksim", "--help")
    assert shown.returncode == 0 and "usage: blocksim" in shown.stdout
    assert "examples" in shown.stdout


def test_the_editor_examples_menu_is_full(installed):
    pytest.importorskip("PySide6")
    python, here = installed
    shown = run(python, here, "-c", EXAMPLES_MENU)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert int(shown.stdout.split()[-1]) == len(example_paths()) > 5


def test_the_wheel_holds_the_schema_blocks_and_examples(installed):
    wheel = next(installed[0].parents[2].glob("dist/blocksim-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "blocksim/resources/diagram.schema.json" in names
    assert "blocksim/blocks/__init__.py" in names and "blocksim/__main__.py" in names
    assert {f"blocksim/diagrams/{example_name(p)}.json" for p in example_paths()} <= names


def test_an_example_opens_from_the_installed_editors_menu_and_runs(installed):
    """The Examples menu of an installed wheel opens shipped diagrams (as untitled copies)
    that run, including one that reads a data file beside it."""
    pytest.importorskip("PySide6")
    python, here = installed
    shown = run(python, here, "-c", EXAMPLE_FROM_MENU)
    assert shown.returncode == 0, shown.stderr[-2000:]
    lines = [line.split() for line in shown.stdout.splitlines() if line.strip()][-2:]
    assert [line[:2] for line in lines] == [["bouncing_ball", "untitled"],
                                           ["from_file_measured", "untitled"]]
    for name, _title, blocks, status, rows in lines:
        assert int(blocks) > 2 and status == "finished" and int(rows) > 100, (name, status)
