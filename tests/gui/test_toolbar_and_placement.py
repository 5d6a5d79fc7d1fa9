"""Issue 13: stop time and solver in the toolbar (undo steps, in step with the Diagram
panel), pasted and added blocks never on top of another, palette search ranked by name
before documentation, and the diagram's description shown in the window."""
import math

import pytest

pytest.importorskip("PySide6")

from editor_helpers import palette_drop, type_text  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


@pytest.fixture
def active(window, qtbot):
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitActive(window):
        window.activateWindow()
    return window


def test_toolbar_stop_time_is_an_undo_step_shown_in_the_diagram_panel(active):
    doc, fields = active.doc, active.sim_fields
    panel_stop = active.panels.settings.number_edits["stop"]
    assert fields.stop.text() == "2" and panel_stop.text() == "2"
    steps = doc.undo_stack.count()
    fields.stop.setFocus()
    type_text(fields.stop, "7.5")
    QTest.keyClick(fields.stop, Qt.Key_Return)
    assert doc.diagram.simulation.stop == 7.5
    assert doc.undo_stack.count() == steps + 1
    assert doc.undo_stack.undoText() == "Set stop time to 7.5 s"
    assert panel_stop.text() == "7.5"  # the Diagram panel follows
    active.actions_.undo.trigger()
    assert doc.diagram.simulation.stop == 2 and fields.stop.text() == "2"
    type_text(panel_stop, "3")  # and the toolbar follows the panel
    QTest.keyClick(panel_stop, Qt.Key_Return)
    assert doc.diagram.simulation.stop == 3 and fields.stop.text() == "3"


def test_a_bad_stop_time_is_refused_and_said(active):
    doc, fields = active.doc, active.sim_fields
    steps = doc.undo_stack.count()
    for text in ("soon", "-1"):  # not a number; before the start
        fields.stop.setFocus()
        type_text(fields.stop, text)
        QTest.keyClick(fields.stop, Qt.Key_Return)
        assert doc.diagram.simulation.stop == 2 and doc.undo_stack.count() == steps
        assert active.statusBar().currentMessage().startswith("Not applied: ")
        assert fields.stop.text() == "2"


def test_toolbar_solver_is_an_undo_step_in_step_with_the_panel(active, tmp_path):
    import json

    doc, combo = active.doc, active.sim_fields.solver
    panel_combo = active.panels.settings.solver
    assert combo.currentText() == "dopri5"
    combo.setFocus()
    QTest.keyClicks(combo, "radau")
    assert doc.diagram.simulation.solver == "radau"
    assert doc.undo_stack.undoText() == "Set solver to radau"
    assert panel_combo.currentText() == "radau"
    assert active.files.save_to(tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["simulation"]["solver"] == "radau"
    active.actions_.undo.trigger()
    assert combo.currentText() == "dopri5" and panel_combo.currentText() == "dopri5"
    steps = doc.undo_stack.count()
    QTest.qWait(QApplication.keyboardInputInterval() + 100)  # a new keyboard search
    QTest.keyClicks(combo, "euler")  # needs a fixed step the lag diagram does not set
    assert doc.diagram.simulation.solver == "dopri5" and doc.undo_stack.count() == steps
    assert "step" in active.statusBar().currentMessage()
    assert combo.currentText() == "dopri5"


def _drawn(item):
    """A block as the canvas draws it: its body and its label (measured in the label's
    font), in scene coordinates."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFontMetricsF

    from blocksim.gui.canvas.items import LABEL_FONT

    x, y, w, h = item.placement.rect
    text_w = QFontMetricsF(LABEL_FONT).horizontalAdvance(item.label)
    label = QRectF(x + w / 2 - text_w / 2, y + h + 3, text_w, 12)
    return QRectF(x, y, w, h).united(label)


def _overlapping(scene) -> list[tuple[str, str]]:
    """Pairs of blocks whose bodies or labels overlap on the canvas."""
    drawn = {block_id: _drawn(item) for block_id, item in scene.blocks.items()}
    ids = sorted(drawn)
    return [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]
            if drawn[a].intersects(drawn[b])]


def test_pastes_and_duplicates_never_land_on_a_block(active):
    """Ctrl+V three times, Ctrl+D of the last paste and of the original: each copy beside
    the others, none drawn over another (30 px diagonal steps once were)."""
    doc, scene = active.doc, active.canvas.scene
    scene.select_only(["step"])
    active.actions_.copy.trigger()
    for _ in range(3):
        active.actions_.paste.trigger()
    active.actions_.duplicate.trigger()
    scene.select_only(["step"])
    active.actions_.duplicate.trigger()
    assert len(doc.diagram.blocks) == 10 and _overlapping(scene) == []
    x0, y0 = doc.diagram.block("step").layout["x"], doc.diagram.block("step").layout["y"]
    steps = [b for b in doc.diagram.blocks if b.type == "Step" and b.id != "step"]
    # beside the original: the copies stay near it (within three block-widths)
    assert all(math.hypot(b.layout["x"] - x0, b.layout["y"] - y0) < 300 for b in steps)


def test_a_pasted_group_keeps_its_shape_and_wire(active):
    doc, scene = active.doc, active.canvas.scene
    scene.select_only(["integ", "fb"])
    active.actions_.copy.trigger()
    wires = len(doc.diagram.wires)
    active.actions_.paste.trigger()
    new = scene.selected_block_ids()
    assert len(new) == 2 and len(doc.diagram.wires) == wires + 1 and _overlapping(scene) == []
    old = {b: doc.diagram.block(b).layout for b in ("integ", "fb")}
    moved = {doc.diagram.block(b).type: doc.diagram.block(b).layout for b in new}
    shifts = {(moved[doc.diagram.block(b).type]["x"] - old[b]["x"],
               moved[doc.diagram.block(b).type]["y"] - old[b]["y"]) for b in old}
    assert len(shifts) == 1  # one shift for the whole group


def test_cut_and_paste_puts_blocks_back_where_they_were(active):
    doc, scene = active.doc, active.canvas.scene
    before = dict(doc.diagram.block("fb").layout)
    scene.select_only(["fb"])
    active.actions_.cut.trigger()
    active.actions_.paste.trigger()
    assert doc.diagram.block("fb").layout == before


def test_palette_enter_double_clicks_and_drops_at_one_spot_never_overlap(active):
    """Enter in the search field twice, double-clicks on an entry, drops at one point and
    the canvas menu at a block: every new block beside the others, near where it was asked."""
    doc, palette = active.doc, active.panels.palette
    count = len(doc.diagram.blocks)
    palette.search.setFocus()
    type_text(palette.search, "Gain")
    for _ in range(2):
        QTest.keyClick(palette.search, Qt.Key_Return)
    for _ in range(3):
        palette._activated(palette.item_for("Gain"))  # double-click / Enter on the entry
    viewport = active.canvas.view.viewport()
    point = QPoint(viewport.width() // 2, 40)
    for _ in range(2):
        palette_drop(viewport, point, "Constant")
    x, y, w, h = active.canvas.scene.blocks["integ"].placement.rect
    added = active.canvas.editor.add_block("Sine", QPointF(x + w / 2, y + h / 2))
    assert len(doc.diagram.blocks) == count + 8
    assert _overlapping(active.canvas.scene) == []
    sine = active.canvas.scene.blocks[added].placement.rect
    assert math.hypot(sine[0] - x, sine[1] - y) < 200  # beside integ, not far away


def test_a_free_shift_is_the_nearest_clear_spot():
    from blocksim.gui.canvas.freespot import GAP, free_shift

    block = (0.0, 0.0, 50.0, 60.0)
    assert free_shift([], [block]) == (0.0, 0.0)
    assert free_shift([(200.0, 0.0, 50.0, 60.0)], [block]) == (0.0, 0.0)
    dx, dy = free_shift([block], [block])
    assert (dx, dy) == (50.0 + GAP, 0.0)  # right beats below (60 + GAP) and left (behind)
    dx, dy = free_shift([block, (70.0, 0.0, 50.0, 60.0)], [block])
    assert (dx, dy) == (0.0, 60.0 + GAP)


def test_palette_search_ranks_names_before_documentation(active, qtbot):
    palette = active.panels.palette
    palette.search.setFocus()
    QTest.keyClicks(palette.search, "integ")
    shown = palette.visible_types()
    prefix = [t for t in shown if t.casefold().startswith("integ")]
    inside = [t for t in shown if "integ" in t.casefold() and t not in prefix]
    doc_only = [t for t in shown if "integ" not in t.casefold()]
    assert prefix == ["Integrator"] and doc_only  # the documentation matches come too ...
    assert shown == prefix + inside + doc_only  # ... after every name match
    assert inside == sorted(inside, key=str.casefold)
    with qtbot.waitSignal(palette.blockActivated) as picked:
        QTest.keyClick(palette.search, Qt.Key_Return)
    assert picked.args == ["Integrator"]
    palette.search.clear()
    QTest.keyClicks(palette.search, "limit")
    shown = palette.visible_types()
    assert shown.index("RateLimiter") < shown.index("Integrator")  # name before doc
    palette.search.clear()
    tree = palette.tree
    assert tree.topLevelItem(0).childCount() > 0  # grouped by category again


def test_the_diagrams_description_is_shown(env, qtbot):
    from blocksim.diagram.format import load_diagram
    from blocksim.gui.window import app
    from blocksim.gui.window.files import examples_dir

    path = examples_dir() / "bouncing_ball.json"
    description = load_diagram(path).description
    window = app.create_window(str(path))
    qtbot.addWidget(window)
    label = window.description_label
    assert label.isVisibleTo(window) and label.text()
    assert description.startswith(label.text().rstrip("…"))
    assert label.fontMetrics().horizontalAdvance(label.text()) <= 360  # room for messages
    assert label.toolTip() == description.strip()
    window.actions_.new.trigger()
    assert not label.isVisibleTo(window) and label.toolTip() == ""


def test_select_all_and_paste_change_the_selection_once(active):
    """One selectionChanged per edit, not one per item: the window and panels react to each
    one (on 1,000 blocks that made Select All take 22 s and a paste 49 s; speed itself is
    not asserted here)."""
    scene = active.canvas.scene
    heard = []

    def hear() -> None:
        heard.append(len(scene.selectedItems()))

    scene.selectionChanged.connect(hear)
    try:
        active.actions_.select_all.trigger()
        assert heard == [len(scene.blocks) + len(scene.wires)]
        active.actions_.copy.trigger()
        heard.clear()
        active.actions_.paste.trigger()
        assert len(heard) == 1
        assert len(scene.selected_block_ids()) == 5
    finally:  # a connection left behind would outlive the scene
        scene.selectionChanged.disconnect(hear)
