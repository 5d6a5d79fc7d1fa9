"""Without an optional extra, what needs it says, in one line, the command that installs it:
`blocksim render`, `blocksim gui` and `blocksim-gui` without the gui extra (PySide6,
pyqtgraph), a sweep table's to_pandas() without pandas. (Results.to_pandas, to_xarray and
plot: tests/test_frames.py.)

The editor's libraries are installed here, so a child process hides them as an environment
without them would: importing them fails with ModuleNotFoundError, as it does there.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blocksim.sweeps.table import SweepTable

ROOT = Path(__file__).resolve().parents[1]

HIDE = """
import sys

class Hidden:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Hidden())
"""

CLI = HIDE + """
from blocksim.cli.main import main
sys.exit(main({argv!r}))
"""

EDITOR = HIDE + """
from blocksim.gui.window.app import main
sys.exit(main([]))
"""

NOTEBOOK = HIDE + """
import logging
logging.basicConfig(level=logging.WARNING)
import blocksim
d = blocksim.DiagramBuilder(stop=1)
d.add("Constant", id="c", value=1.0)
print(d._repr_svg_())
"""


def child(code: str, cwd: Path, display: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    if display:  # a display is there: the editor would open a window but for the extra
        env["DISPLAY"] = ":0"
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=120)


INSTALL = "pip install 'blocksim[gui]'"


@pytest.mark.parametrize("hidden, named", [(("PySide6", "shiboken6"), "PySide6"),
                                           (("pyqtgraph",), "pyqtgraph")])
def test_blocksim_gui_without_the_extra_names_it(tmp_path, hidden, named):
    done = child(CLI.format(hidden=hidden, argv=["gui", "bouncing_ball"]), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"blocksim: the editor needs the editor's libraries ({named} is not installed): "
        f"{INSTALL}"]


def test_blocksim_gui_says_the_extra_before_the_display(tmp_path):
    """Without a display either, the first thing to fix is said first."""
    done = child(CLI.format(hidden=("PySide6",), argv=["gui"]), tmp_path, display=False)
    assert done.returncode == 2 and INSTALL in done.stderr and "DISPLAY" not in done.stderr


def test_blocksim_gui_entry_point_without_the_extra(tmp_path):
    done = child(EDITOR.format(hidden=("PySide6",)), tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"blocksim: the editor needs the editor's libraries (PySide6 is not installed): "
        f"{INSTALL}"]


def test_blocksim_render_without_the_extra_names_it(tmp_path):
    done = child(CLI.format(hidden=("PySide6",), argv=["render", "bouncing_ball", "--out",
                                                        "ball.png"]), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"blocksim: drawing a diagram needs the editor's libraries (PySide6 is not "
        f"installed): {INSTALL}"]
    assert not (tmp_path / "ball.png").exists()


def test_a_notebook_shows_the_summary_quietly_without_the_extra(tmp_path):
    done = child(NOTEBOOK.format(hidden=("PySide6",)), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None" and done.stderr == ""


def test_a_sweep_tables_to_pandas_without_pandas_names_the_extra(monkeypatch):
    table = SweepTable(names=("k",), metric_names=("m",), rows={0: (1.0, "ok", 2.0, "")}, total=1)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import fails as if not installed
    with pytest.raises(ImportError, match=r"table.to_pandas\(\) needs pandas, which is not "
                                          r"installed: pip install 'blocksim\[pandas\]'"):
        table.to_pandas()
