"""Nothing outside blocksim/gui imports Qt: the headless core must run on a server."""
import subprocess
import sys


def test_core_and_cli_do_not_import_qt():
    code = ("import sys, blocksim, blocksim.cli, blocks, blocksim.compiler, blocksim.engine, "
            "blocksim.format, blocksim.registry; blocksim.registry.all_types(); "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'pyqtgraph', 'shiboken6', 'PyQt5', 'PyQt6')]; print(bad); "
            "sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
