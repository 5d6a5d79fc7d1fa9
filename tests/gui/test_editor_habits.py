"""Issue 13, small habits of a desktop tool: the toolbar progress bar shows during a run,
the Scopes panel forgets the previous diagram, Ctrl+Y redoes, the inspector's text is
plain text, and CompareToConstant's default shows its operator."""
import pytest

pytest.importorskip("PySide6")

from editor_helpers import run_in_editor  # noqa: E402

from blocksim.gui.window.files import examples_dir  # noqa: E402


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
    from blocksim.gui.window import app

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


def test_ctrl_y_and_ctrl_shift_z_redo(shown, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from blocksim.gui.document.commands import SetParams

    doc = shown.doc
    with qtbot.waitActive(shown):
        shown.activateWindow()
    doc.push(SetParams(doc, (), "fb", {"k": 7}))
    for modifiers, key in ((Qt.ControlModifier, Qt.Key_Y),
                           (Qt.ControlModifier | Qt.ShiftModifier, Qt.Key_Z)):
        QTest.keyClick(shown.canvas.view, Qt.Key_Z, Qt.ControlModifier)  # undo
        assert doc.diagram.block("fb").params == {"k": "1 / tau"}
        QTest.keyClick(shown.canvas.view, key, modifiers)
        assert doc.diagram.block("fb").params == {"k": 7}


def test_inspector_doc_shows_apostrophes_not_entities(qtbot):
    from PySide6.QtGui import QTextDocument

    from blocksim.blocktypes import registry
    from blocksim.gui.panels.inspector import BlockInspector
    from blocksim.diagram.model import Block, Diagram

    from PySide6.QtCore import Qt

    name, block_type = next((n, t) for n, t in sorted(registry.all_types().items())
                            if "'" in (t.doc or t.__doc__ or ""))
    inspector = BlockInspector()
    qtbot.addWidget(inspector)
    diagram = Diagram(blocks=[Block("b", name)])
    inspector.show_block(diagram, diagram.blocks[0])
    assert "&#" not in inspector.doc.text()
    assert inspector.doc.textFormat() == Qt.TextFormat.RichText  # entities never shown raw
    shown = QTextDocument()
    shown.setHtml(inspector.doc.text())
    text = shown.toPlainText()
    assert "&#x27;" not in text and "&#39;" not in text
    word = next(w for w in (block_type.doc or block_type.__doc__).split() if "'" in w)
    assert word.strip("`.,;:()") in text.replace("\n", " ")


def test_compare_to_constant_default_shows_its_operator():
    from blocksim.gui.canvas.portinfo import glyph
    from blocksim.diagram.model import Block

    assert glyph(Block("c", "CompareToConstant")) == "≤ 0"  # the declared default, <= 0
    assert glyph(Block("c", "CompareToConstant", {"operator": ">", "constant": 2})) == "> 2"
    assert glyph(Block("r", "RelationalOperator")) == "<"  # its declared default
