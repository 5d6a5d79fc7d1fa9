"""Issue 13: a wire's signal name, set from the editor as one undo step, saved in the file,
and drawn on the canvas beside the wire (following it when a block moves)."""
import json

import pytest

pytest.importorskip("PySide6")

from editor_helpers import block_point, drag  # noqa: E402
from PySide6.QtCore import QPoint  # noqa: E402


def _label(window, key: str):
    return next(item for item in window.canvas.scene.labels.items
                if f"{item.wire.wire.src}->{item.wire.wire.dst}" == key)


def _index(window, dst: str) -> int:
    return next(i for i, w in enumerate(window.doc.diagram.wires) if str(w.dst) == dst)


def test_naming_a_wire_is_one_undo_step_and_is_saved(window, tmp_path):
    doc, editor = window.doc, window.canvas.editor
    steps = doc.undo_stack.count()
    editor.name_wire(_index(window, "integ.u"), "error")
    assert doc.undo_stack.count() == steps + 1 and doc.dirty
    assert window.canvas.scene.labels.texts() == {"sum.y->integ.u": "error"}
    window.actions_.undo.trigger()
    assert doc.diagram.wires[_index(window, "integ.u")].name == ""
    assert window.canvas.scene.labels.texts() == {}
    window.actions_.redo.trigger()
    assert window.files.save_to(tmp_path / "named.json")
    saved = json.loads((tmp_path / "named.json").read_text())
    assert {w["dst"]: w.get("name") for w in saved["wires"]}["integ.u"] == "error"
    assert window.files.open_path(tmp_path / "named.json", ask=False)
    assert window.canvas.scene.labels.texts() == {"sum.y->integ.u": "error"}


def test_the_label_sits_beside_its_wire_and_follows_a_moved_block(window, qtbot):
    window.show()
    qtbot.waitExposed(window)
    window.canvas.editor.name_wire(_index(window, "integ.u"), "error")
    label = _label(window, "sum.y->integ.u")
    assert label.isVisible() and label.text() == "error"

    def gap() -> float:
        """Distance from the label's box to the wire's route (0: touching)."""
        box = label.sceneBoundingRect()
        route = label.wire.route
        best = float("inf")
        for (ax, ay), (bx, by) in zip(route, route[1:]):
            dx = max(box.left() - max(ax, bx), min(ax, bx) - box.right(), 0)
            dy = max(box.top() - max(ay, by), min(ay, by) - box.bottom(), 0)
            best = min(best, (dx * dx + dy * dy) ** 0.5)
        return best

    assert gap() <= 4  # right beside the wire
    assert not any(label.sceneBoundingRect().intersects(block_rect(item))
                   for item in window.canvas.scene.blocks.values())
    before = label.scenePos()
    canvas = window.canvas
    start = block_point(canvas, "integ")
    drag(canvas.view.viewport(), start, start + QPoint(0, 60))
    assert window.doc.diagram.block("integ").layout["y"] != 0
    label = _label(window, "sum.y->integ.u")
    assert label.scenePos() != before and gap() <= 4


def block_rect(item):
    from PySide6.QtCore import QRectF

    return QRectF(*item.placement.rect)


def test_branches_with_one_name_show_it_once(window):
    editor = window.canvas.editor
    editor.name_wire(_index(window, "fb.u"), "x")
    editor.name_wire(_index(window, "y.u"), "x")
    assert list(window.canvas.scene.labels.texts().values()) == ["x"]


def test_a_pasted_named_wire_keeps_its_name(window):
    editor, scene = window.canvas.editor, window.canvas.scene
    editor.name_wire(_index(window, "integ.u"), "error")
    scene.select_only(["sum", "integ"])
    window.actions_.copy.trigger()
    window.actions_.paste.trigger()
    names = [w.name for w in window.doc.diagram.wires if w.name]
    assert names == ["error", "error"]


def test_edit_menu_names_the_selected_wire(window, monkeypatch):
    from blocksim.gui.window import dialogs

    monkeypatch.setattr(dialogs, "ask_text", lambda parent, title, label, text="": "u_err")
    action = window.actions_.name_signal
    scene = window.canvas.scene
    scene.select_only(["sum"])
    assert not action.isEnabled()  # a block, not a wire
    wire = next(w for w in scene.wires if str(w.wire.dst) == "integ.u")
    scene.clearSelection()
    wire.setSelected(True)
    assert action.isEnabled()
    action.trigger()
    assert window.doc.diagram.wires[wire.index].name == "u_err"
