"""Every edit is an undo command: undo returns the model to the same dict, redo reapplies."""
import pytest

pytest.importorskip("PySide6")

from editor_helpers import lag_diagram, snapshot  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402

from blocksim.gui.canvas.area import Canvas  # noqa: E402
from blocksim.gui.document.commands import (  # noqa: E402
    AddItems,
    ChangeLayout,
    ChangeWire,
    RemoveItems,
    RenameBlock,
    SetDiagramParameters,
    SetParams,
    SetSimulation,
    fresh_id,
)
from blocksim.gui.document.document import DiagramDocument  # noqa: E402
from blocksim.diagram.model import Block, PortRef, Wire  # noqa: E402


@pytest.fixture
def canvas(qtbot):
    widget = Canvas(DiagramDocument(lag_diagram()))
    qtbot.addWidget(widget)
    return widget


def _round_trip(doc, make, *, steps: int = 1):
    """Apply an edit, check it changed the model, undo, redo; returns the edited dict."""
    before = snapshot(doc.diagram)
    make()
    after = snapshot(doc.diagram)
    assert after != before
    for _ in range(steps):
        doc.undo_stack.undo()
    assert snapshot(doc.diagram) == before
    for _ in range(steps):
        doc.undo_stack.redo()
    assert snapshot(doc.diagram) == after
    return after


def test_each_command_undoes_to_the_same_dict(canvas):
    doc = canvas.doc
    push = doc.push
    _round_trip(doc, lambda: push(AddItems(doc, (), [Block("k", "Gain", {"k": 2},
                                                           {"x": 0, "y": 0})])))
    _round_trip(doc, lambda: push(RemoveItems(doc, (), ["sum"], [])))
    _round_trip(doc, lambda: push(RemoveItems(doc, (), [], [1])))  # wires: integ->fb left
    _round_trip(doc, lambda: push(AddItems(doc, (), wires=[Wire(PortRef("step", "y"),
                                                                PortRef("k", "u"))])))
    _round_trip(doc, lambda: push(ChangeWire(doc, (), 1, Wire(
        PortRef("step", "y"), PortRef("k", "u"), [(300.0, 10.0), (300.0, 50.0)]))))
    _round_trip(doc, lambda: push(ChangeLayout(doc, (), {"fb": {"x": 5, "y": 7}},
                                               {0: [(1.0, 2.0)]})))
    _round_trip(doc, lambda: push(SetParams(doc, (), "k", {"k": 3})))
    edited = _round_trip(doc, lambda: push(RenameBlock(doc, (), "integ", "state")))
    assert {w["src"] for w in edited["wires"]} >= {"state.y"}
    _round_trip(doc, lambda: push(SetDiagramParameters(doc, (), {"tau": 2.0, "k": "2*tau"})))
    _round_trip(doc, lambda: push(SetSimulation(doc, doc.diagram.simulation.replaced(
        stop=9.0, solver="radau"))))


def test_rename_refuses_bad_and_taken_ids(canvas):
    doc = canvas.doc
    with pytest.raises(ValueError, match="already"):
        RenameBlock(doc, (), "sum", "fb")
    with pytest.raises(ValueError, match="valid"):
        RenameBlock(doc, (), "sum", "2x")
    assert fresh_id(["gain1", "gain2"], "gain") == "gain3"
    assert fresh_id(["sum"], "sum") == "sum1"


def test_editor_operations_are_single_undo_steps(canvas, qtbot):
    editor, scene, doc = canvas.editor, canvas.scene, canvas.doc
    scene.select_only(["integ", "fb"])
    _round_trip(doc, editor.duplicate)
    assert {"integ1", "fb1"} <= {b.id for b in doc.diagram.blocks}
    scene.select_only(["integ", "fb"])
    assert editor.copy()
    _round_trip(doc, editor.paste)
    pasted = [b for b in doc.diagram.blocks if b.id not in ("integ1", "fb1")][-2:]
    assert [b.type for b in pasted] == ["Integrator", "Gain"]
    assert any(w.src.block == pasted[0].id and w.dst.block == pasted[1].id
               for w in doc.diagram.wires)  # the wire between copied blocks came along
    scene.select_only(["fb"])
    after = _round_trip(doc, editor.rotate)
    assert next(b for b in after["blocks"] if b["id"] == "fb")["layout"]["rotation"] == 90
    after = _round_trip(doc, editor.flip)
    assert next(b for b in after["blocks"] if b["id"] == "fb")["layout"]["flip"] is True
    _round_trip(doc, lambda: editor.nudge(10, 0))
    scene.select_only(["sum", "integ"])
    _round_trip(doc, editor.delete)
    _round_trip(doc, editor.auto_arrange)
    editor.add_block("Sum", QPointF(0, 0))
    assert doc.diagram.blocks[-1].params == {}
    editor.add_block("StateSpace", QPointF(100, 0))
    assert set(doc.diagram.blocks[-1].params) == {"A", "B", "C"}


def test_nudges_merge_into_one_step(canvas):
    doc = canvas.doc
    canvas.scene.select_only(["fb"])
    count = doc.undo_stack.count()
    for _ in range(3):
        canvas.editor.nudge(10, 0)
    assert doc.undo_stack.count() == count + 1
    doc.undo_stack.undo()
    assert doc.diagram.block("fb").layout == lag_layout(doc)


def lag_layout(doc):
    fresh = DiagramDocument(lag_diagram())
    return fresh.diagram.block("fb").layout
