"""Starting the editor where it cannot open a window gives one line and exit status 2 (no
Qt abort, no traceback); Qt's own messages go to logging and stay off the terminal unless
asked for (-v)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from blocksim.gui.window import display  # noqa: E402

from blocksim.gui.window import qtmessages

ROOT = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="X11/Wayland display handling")
QT_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "QT_QPA_PLATFORM_PLUGIN_PATH")


def run(arguments: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """A Python process started as a user would start the editor, with a clean display
    environment plus `env`."""
    clean = {k: v for k, v in os.environ.items() if k not in QT_VARIABLES}
    clean.update(env, PYTHONPATH=str(ROOT), BLOCKSIM_AUTOSAVE_DIR=str(tmp_path / "autosave"),
                 BLOCKSIM_SETTINGS=str(tmp_path / "settings.ini"))
    return subprocess.run([sys.executable, *arguments], cwd=tmp_path, env=clean, text=True,
                          capture_output=True, timeout=120)


ENTRY_POINT = ["-c", "import sys; from blocksim.gui.window.app import main; sys.exit(main())"]


@linux_only
@pytest.mark.parametrize("command", [["-m", "blocksim", "gui"], ENTRY_POINT],
                         ids=["blocksim gui", "blocksim-gui"])
def test_no_display_is_said_in_one_line(tmp_path, command):
    result = run(command, tmp_path)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("blocksim: no display")
    assert "DISPLAY" in lines[0] and "Xvfb" in lines[0] and "blocksim render" in lines[0]


@linux_only
def test_a_platform_plugin_that_cannot_load_names_the_missing_library(tmp_path):
    """Qt's xcb plugin, with the name of a library it needs changed to one that exists
    nowhere (same length, so the file stays valid): what a missing system library does."""
    real = display.plugin_file("xcb")
    if not real.is_file():
        pytest.skip("this PySide6 has no xcb platform plugin")
    data = real.read_bytes()
    needle = b"libQt6XcbQpa.so.6"
    assert needle in data
    folder = tmp_path / "platforms"
    folder.mkdir()
    (folder / real.name).write_bytes(data.replace(needle, b"libQt6XcbQpX.so.6"))
    result = run(["-m", "blocksim", "gui"], tmp_path, DISPLAY=":987",
                 QT_QPA_PLATFORM_PLUGIN_PATH=str(folder))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("blocksim: cannot open a window: Qt's xcb platform plugin")
    assert "libQt6XcbQpX.so.6" in lines[0] and "blocksim render" in lines[0]


@linux_only
def test_a_display_that_does_not_answer_is_one_line_too(tmp_path):
    result = run(["-m", "blocksim", "gui"], tmp_path, DISPLAY=":987")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("blocksim: cannot open a window"), lines


def test_the_explanations():
    assert display.missing_display({}, "linux") is not None
    assert display.missing_display({"DISPLAY": ":0"}, "linux") is None
    assert display.missing_display({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert display.missing_display({}, "win32") is None
    line = display.explain(["qt.qpa.xcb: could not connect to display :5",
                            "This application failed to start ..."], {})
    assert "could not connect to display :5" in line
    assert display.debian_package("libxcb-icccm.so.4") == "libxcb-icccm4"
    assert display.debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"
    assert display.debian_package("libEGL.so.1") == "libegl1"


OPEN_AND_CLOSE = ["-c", """
import sys
from PySide6.QtCore import QTimer
from blocksim.gui.window import app
opened = app.create_window
def create_window(diagram=None):
    window = opened(diagram)
    QTimer.singleShot(300, window.close)
    return window
app.create_window = create_window
sys.exit(app.main(sys.argv[1:]))
"""]


def test_qt_messages_stay_off_the_terminal_unless_asked(tmp_path):
    """The offscreen platform warns about every window it shows; the editor's terminal stays
    empty, and -v shows Qt's messages as log records of blocksim.gui.qt."""
    quiet = run(OPEN_AND_CLOSE, tmp_path, QT_QPA_PLATFORM="offscreen")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    verbose = run([*OPEN_AND_CLOSE, "-v"], tmp_path, QT_QPA_PLATFORM="offscreen")
    assert verbose.returncode == 0
    assert "WARNING blocksim.gui.qt: This plugin does not support" in verbose.stderr


def test_qt_messages_become_log_records(qapp, caplog):
    from PySide6.QtCore import qInfo, qWarning

    qtmessages.install()
    try:
        with caplog.at_level(logging.DEBUG, logger="blocksim.gui.qt"):
            qWarning("careful")
            qInfo("for your information")
    finally:
        from PySide6.QtCore import qInstallMessageHandler
        qInstallMessageHandler(None)
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert ("blocksim.gui.qt", logging.WARNING, "careful") in records
    assert ("blocksim.gui.qt", logging.INFO, "for your information") in records
