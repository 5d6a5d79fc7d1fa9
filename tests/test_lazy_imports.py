"""Start-up imports only what a command needs: `blocksim --help` no numpy, a dopri5 run no
scipy.integrate (only radau, bdf and dop853 use scipy's solvers) and no jsonschema (needed
only to word what is wrong with a file). Checked by module, in a fresh interpreter, never
by timing."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "jsonschema")


def imported_by(code: str) -> set[str]:
    """The top-level packages of HEAVY, and scipy.integrate, that `code` leaves imported."""
    probe = (f"import sys\n{code}\n"
             f"print(sorted({{m for m in sys.modules if m.split('.')[0] in {HEAVY!r}"
             f" and m.count('.') <= 1}}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return set(eval(done.stdout.splitlines()[-1]))  # a list printed by our own code


def test_importing_the_cli_imports_no_numpy():
    assert imported_by("import blocksim.cli.main") == set()


def test_help_imports_no_numpy():
    code = ("from blocksim.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert imported_by(code) == set()


def test_a_dopri5_run_imports_no_scipy_at_all_nor_jsonschema():
    """The whole ball to its accumulation point (events, resets, the event log written):
    scipy's own import (about 0.25 s of CPU) is more than the rest of the run."""
    code = ("from blocksim.cli.main import main\n"
            "assert main(['run', 'diagrams/bouncing_ball.json', '-q',"
            " '--events', __import__('os').devnull]) == 0")
    found = imported_by(code)
    assert "numpy" in found  # the probe saw the run's imports
    assert not {m for m in found if m.split(".")[0] in ("scipy", "jsonschema")}


def test_a_bdf_run_imports_scipy_integrate():
    code = ("from blocksim.cli.main import main\n"
            "assert main(['run', 'diagrams/bouncing_ball.json', '-q', '--stop-time', '3',"
            " '--solver', 'bdf']) == 0")
    assert "scipy.integrate" in imported_by(code)


def test_a_file_that_fails_the_schema_still_gets_jsonschemas_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "blocksim", "version": 1, "blocks": [{"id": "a"}], '
                   '"wires": []}', encoding="utf-8")
    code = ("from blocksim.cli.main import main\n"
            f"assert main(['validate', {str(bad)!r}]) == 2")
    assert "jsonschema" in imported_by(code)


def test_a_diagram_without_python_files_loads_no_user_block_machinery():
    """blocksim.user (and its hashing) is for diagrams that name Python files."""
    code = ("import sys\nimport blocksim\n"
            "blocksim.load('diagrams/bouncing_ball.json')\n"
            "print(sorted(m for m in sys.modules if m.startswith('blocksim.user')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]"]
