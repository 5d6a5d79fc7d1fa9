"""Issue 13, small habits of a desktop tool: the toolbar progress bar shows during a run,
the Scopes panel forgets the previous diagram, Ctrl+Y redoes, the inspector's text is
plain text, and CompareToConstant's default shows its operator."""
import pytest

pytest.importorskip("PySide6")

from editor_helpers import run_in_editor  # noqa: E402

from blocksim.gui.files import examples_dir  # noqa: E402


@pytest.fixture
def shown(window, qtbot):
    """The lag-loop window, shown (widgets report isVisible only in a shown window)."""
    window.show()
    qtbot.waitExposed(window)
    return window


def test_progress_bar_appears_in_the_toolbar_during_a_run(shown, qtbot):
    progress = shown.progress
    qtbot.waitUntil(lambda: not progress.isVisible(), timeout=2000)
    seen = []
    shown.sim.runner.progressChanged.connect(
        lambda _f: seen.append((progress.isVisible(), progress.value())))
    with qtbot.waitSignal(shown.sim.runner.finished, timeout=20000):
        shown.actions_.run.trigger()
        qtbot.waitUntil(progress.isVisible, timeout=2000)  # on screen, not only the flag
        assert progress.width() > 20 and progress.height() > 5
    assert seen and all(visible for visible, _ in seen)
    qtbot.waitUntil(lambda: not progress.isVisible(), timeout=2000)


def test_scopes_forget_the_previous_diagram(env, qtbot):
    from blocksim.gui import app

    window = app.create_window()
    qtbot.addWidget(window)
    scopes = window.sim.scopes
    ball = examples_dir() / "bouncing_ball.json"
    for change in (window.actions_.new.trigger, lambda: window.files.open_path(ball),
                   lambda: window.files.open_example(ball)):
        next(a for a in window.examples_menu.actions() if a.text() == ball.stem).trigger()
        run_in_editor(window, qtbot)
        assert scopes.views and scopes.results is not None
        assert scopes.scope_data(next(iter(scopes.views)))[0].size > 0
        change()
        assert scopes.views == {} and scopes.results is None and scopes.tabs.count() == 0
        assert scopes.status.text() == "" and "Run" in scopes.placeholder.text()
        assert scopes.placeholder.isVisibleTo(scopes.scope_area())
    run_in_editor(window, qtbot)  # the scopes of the diagram now open come back
    assert scopes.views and scopes.scope_data(next(iter(scopes.views)))[0].size > 0
