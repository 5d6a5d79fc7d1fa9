"""GUI tests run without a display, with their settings and autosave in a temporary folder
and every dialog answered by the test."""
import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

try:  # PySide6 6.12 on Python < 3.12 leaks references to None (see blocksim/gui/window/qtcompat.py)
    from blocksim.gui.window.qtcompat import protect_none
    protect_none()
except ImportError:  # no PySide6: the GUI tests skip themselves
    pass


@pytest.fixture(autouse=True)
def _widgets_live_until_teardown(request):
    """Keep the widgets a test gives `qtbot.addWidget` alive until they are closed.

    pytest-qt holds them by weak reference and processes pending events after the test
    body. A widget reachable only through a reference cycle (a canvas: its scene's signals
    hold its bound methods) could then be collected by a garbage collection that a paint
    event of its own triggers, freeing the view's background pixmap while it is drawn into
    (a segfault in QPainter.drawPoints, seen under valgrind)."""
    if "qtbot" not in request.fixturenames:
        return
    qtbot = request.getfixturevalue("qtbot")
    kept = request.node.blocksim_kept_widgets = []  # dropped after pytest-qt closed them
    add = qtbot.addWidget

    def keep(widget, *args, **kwargs):
        kept.append(widget)
        return add(widget, *args, **kwargs)

    qtbot.addWidget = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    """Let go of the kept widgets once the teardown (pytest-qt closes them) is over."""
    yield
    item.__dict__.pop("blocksim_kept_widgets", None)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Autosave and settings in tmp_path; dialogs answered (messages are collected)."""
    from blocksim.gui.window import dialogs

    monkeypatch.setenv("BLOCKSIM_AUTOSAVE_DIR", str(tmp_path / "autosave"))
    monkeypatch.setenv("BLOCKSIM_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("BLOCKSIM_TRUST_LIST", str(tmp_path / "trusted-python.json"))
    messages = []
    monkeypatch.setattr(dialogs, "message", lambda parent, title, text, level="warning":
                        messages.append((title, text)))
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, name: "discard")
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, texts: [False] * len(texts))
    monkeypatch.setattr(dialogs, "ask_trust", lambda parent, diagram, files: False)
    monkeypatch.setattr(dialogs, "ask_allow_write", lambda parent, reason, paths: False)
    return messages


@pytest.fixture
def window(qtbot, tmp_path, env):
    """A main window on a small saved diagram (a lag loop: step, sum, integ, fb, y)."""
    from editor_helpers import lag_diagram

    from blocksim.diagram.format import save_diagram
    from blocksim.gui.window import app

    path = tmp_path / "lag.json"
    save_diagram(lag_diagram(), path)
    win = app.create_window(str(path))
    qtbot.addWidget(win)
    return win


@pytest.fixture
def runner(qtbot):
    """A simulation runner thread, stopped and joined after the test (scope tests)."""
    from blocksim.gui.scopes.runner import SimulationRunner
    runner = SimulationRunner()
    yield runner
    runner.stop()
    assert runner.wait(5000)
