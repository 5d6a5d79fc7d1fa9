"""Grouping into a subsystem, opening it, editing inside and going back up."""
import numpy as np
import pytest

pytest.importorskip("PySide6")

from editor_helpers import block_point, lag_diagram, snapshot  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

import blocksim
from blocksim.diagram.format import diagram_from_dict, diagram_to_dict  # noqa: E402
from blocksim.gui.canvas.area import Canvas  # noqa: E402
from blocksim.gui.document.commands import RenameBlock  # noqa: E402
from blocksim.gui.document.document import DiagramDocument  # noqa: E402


@pytest.fixture
def canvas(qtbot):
    widget = Canvas(DiagramDocument(lag_diagram()))
    qtbot.addWidget(widget)
    widget.show()
    return widget


def test_group_keeps_the_behaviour_and_undoes_in_one_step(canvas):
    doc, scene = canvas.doc, canvas.scene
    before = snapshot(doc.diagram)
    reference = blocksim.simulate(diagram_from_dict(before))
    scene.select_only(["sum", "integ"])
    new_id = canvas.editor.group()
    assert new_id == "subsystem1"
    sub = doc.diagram.block(new_id)
    inner = {b.id: b.type for b in sub.subsystem.blocks}
    assert inner == {"sum": "Sum", "integ": "Integrator", "in1": "Inport", "in2": "Inport",
                     "out1": "Outport"}
    outer = {(str(w.src), str(w.dst)) for w in doc.diagram.wires}
    assert ("step.y", "subsystem1.in1") in outer and ("fb.y", "subsystem1.in2") in outer
    assert {("subsystem1.out1", "fb.u"), ("subsystem1.out1", "y.u")} <= outer
    grouped = blocksim.simulate(diagram_from_dict(diagram_to_dict(doc.diagram)))
    assert np.allclose(grouped["y"], reference["y"], rtol=0, atol=1e-12)
    assert scene.selected_block_ids() == [new_id]
    doc.undo_stack.undo()
    assert snapshot(doc.diagram) == before


def test_open_edit_inside_and_navigate_up(canvas):
    doc, scene = canvas.doc, canvas.scene
    scene.select_only(["sum", "integ"])
    canvas.editor.group()
    canvas.open_subsystem("subsystem1")
    assert canvas.level == ("subsystem1",)
    assert set(scene.blocks) == {"sum", "integ", "in1", "in2", "out1"}
    assert [b.text() for b in canvas.breadcrumb.buttons] == ["untitled"]
    assert scene.blocks["in2"].glyph == "2"  # port blocks show their port number
    # edits inside are commands on the same stack; renaming a port follows outside
    doc.push(RenameBlock(doc, ("subsystem1",), "in1", "drive"))
    assert any(str(w.dst) == "subsystem1.drive" for w in doc.diagram.wires)
    scene.select_only(["integ"])
    canvas.editor.rotate()
    assert doc.level(("subsystem1",)).block("integ").layout["rotation"] == 90
    canvas.breadcrumb.buttons[0].click()
    assert canvas.level == ()
    canvas.open_subsystem("subsystem1")
    canvas.go_up()
    assert canvas.level == () and scene.selected_block_ids() == ["subsystem1"]
    # undoing the grouping while inside the subsystem goes back to the top level
    canvas.open_subsystem("subsystem1")
    for _ in range(3):
        doc.undo_stack.undo()
    assert canvas.level == () and "subsystem1" not in scene.blocks


def test_locate_opens_the_subsystem_and_selects(canvas):
    scene = canvas.scene
    scene.select_only(["sum", "integ"])
    canvas.editor.group()
    assert canvas.locate("subsystem1/integ")
    assert canvas.level == ("subsystem1",) and scene.selected_block_ids() == ["integ"]
    assert not canvas.locate("nowhere/block")


def test_double_click_opens_a_subsystem(canvas, qtbot):
    canvas.scene.select_only(["sum", "integ"])
    canvas.editor.group()
    canvas.view.fit()
    QTest.mouseDClick(canvas.view.viewport(), Qt.LeftButton, Qt.NoModifier,
                      block_point(canvas, "subsystem1"))
    qtbot.waitUntil(lambda: canvas.level == ("subsystem1",), timeout=2000)
    assert "integ" in canvas.scene.blocks
