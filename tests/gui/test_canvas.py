"""The canvas driven like a user: palette drops, wiring by mouse, moves, branches, bends."""
import pytest

pytest.importorskip("PySide6")

from editor_helpers import block_point, drag, lag_diagram, port_point, snapshot  # noqa: E402
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from blocksim.gui.canvas.area import Canvas  # noqa: E402
from blocksim.gui.document.document import DiagramDocument  # noqa: E402
from blocksim.gui.canvas.scene import BLOCK_MIME  # noqa: E402
from blocksim.diagram.model import PortRef  # noqa: E402


@pytest.fixture
def canvas(qtbot):
    doc = DiagramDocument(lag_diagram())
    widget = Canvas(doc)
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    qtbot.waitExposed(widget)
    widget.view.reset_zoom()
    widget.view.centerOn(widget.scene.diagram_rect().center())
    return widget


def _drop(viewport, point: QPoint, type_name: str) -> None:
    data = QMimeData()
    data.setData(BLOCK_MIME, type_name.encode("utf-8"))
    pos = QPointF(point)
    for cls in (QDragEnterEvent, QDragMoveEvent):
        event = cls(point, Qt.CopyAction, data, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(viewport, event)
    drop = QDropEvent(pos, Qt.CopyAction, data, Qt.LeftButton, Qt.NoModifier)
    QApplication.sendEvent(viewport, drop)


def test_palette_drop_adds_a_block_where_dropped(canvas):
    view = canvas.view
    point = QPoint(80, 500)
    _drop(view.viewport(), point, "Gain")
    diagram = canvas.doc.level(())
    added = diagram.blocks[-1]
    assert added.type == "Gain" and added.id == "gain1"
    x, y, w, h = canvas.scene.blocks["gain1"].placement.rect
    centre = view.mapToScene(point)
    assert abs(x + w / 2 - centre.x()) <= 10 and abs(y + h / 2 - centre.y()) <= 10
    _drop(view.viewport(), QPoint(200, 500), "Gain")
    assert diagram.blocks[-1].id == "gain2"
    canvas.doc.undo_stack.undo()
    canvas.doc.undo_stack.undo()
    assert [b.id for b in diagram.blocks] == ["step", "sum", "integ", "fb", "y"]


def test_dragging_from_an_output_to_a_free_input_connects_them(canvas):
    doc, view = canvas.doc, canvas.view
    canvas.editor.add_block("Scope", view.mapToScene(QPoint(500, 600)))
    before = len(doc.diagram.wires)
    drag(view.viewport(), port_point(canvas, "step", "out", "y"),
         port_point(canvas, "scope1", "in", "u"))
    assert len(doc.diagram.wires) == before + 1
    wire = doc.diagram.wires[-1]
    assert (str(wire.src), str(wire.dst)) == ("step.y", "scope1.u")
    assert doc.undo_stack.undoText() == "Connect step.y to scope1.u"
    # a connected input refuses a second wire: dropping there changes nothing
    drag(view.viewport(), port_point(canvas, "integ", "out", "y"),
         port_point(canvas, "scope1", "in", "u"))
    assert len(doc.diagram.wires) == before + 1
    assert not [i for i in canvas.scene.items() if i.zValue() == 10]  # no rubber wire left


def test_moving_a_block_is_one_undo_step_and_wires_follow(canvas):
    doc, view, scene = canvas.doc, canvas.view, canvas.scene
    before = snapshot(doc.diagram)
    steps_before = doc.undo_stack.count()
    start = block_point(canvas, "fb")
    drag(view.viewport(), start, start + QPoint(60, 80), steps=8)
    assert doc.undo_stack.count() == steps_before + 1
    moved = doc.diagram.block("fb").layout
    old = before["blocks"][3]["layout"]
    assert (moved["x"] - old["x"], moved["y"] - old["y"]) == (60, 80)
    item = scene.blocks["fb"]
    for wire in scene.wires:
        if "fb" in (wire.wire.src.block, wire.wire.dst.block):
            end = wire.route[0] if wire.wire.src.block == "fb" else wire.route[-1]
            kind, port = ("out", "y") if wire.wire.src.block == "fb" else ("in", "u")
            assert end == item.port_position(kind, port)[0]  # still attached
    doc.undo_stack.undo()
    assert snapshot(doc.diagram) == before
    doc.undo_stack.redo()
    assert doc.diagram.block("fb").layout == moved


def test_branching_from_a_wire_adds_a_wire_from_the_same_source(canvas):
    doc, view, scene = canvas.doc, canvas.view, canvas.scene
    canvas.editor.add_block("Scope", view.mapToScene(QPoint(600, 620)))
    wire = next(w for w in scene.wires if str(w.wire.dst) == "integ.u")
    (x1, y1), (x2, y2) = wire.route[0], wire.route[1]
    on_wire = view.mapFromScene(QPointF((x1 + x2) / 2, (y1 + y2) / 2))
    drag(view.viewport(), on_wire, port_point(canvas, "scope1", "in", "u"), steps=6)
    new = doc.diagram.wires[-1]
    assert new.src == PortRef("sum", "y") and new.dst == PortRef("scope1", "u")
    branch = scene.wires[-1]
    assert branch.route[0] == wire.route[0]  # leaves the same port
    assert all(a[0] == b[0] or a[1] == b[1] for a, b in zip(branch.route, branch.route[1:]))


def test_reconnecting_a_wire_end_and_bending_a_segment(canvas):
    doc, view, scene = canvas.doc, canvas.view, canvas.scene
    canvas.editor.add_block("Scope", view.mapToScene(QPoint(620, 620)))
    before = snapshot(doc.diagram)
    drag(view.viewport(), port_point(canvas, "y", "in", "u"),
         port_point(canvas, "scope1", "in", "u"))
    assert any(str(w.src) == "integ.y" and str(w.dst) == "scope1.u" for w in doc.diagram.wires)
    assert not any(str(w.dst) == "y.u" for w in doc.diagram.wires)
    doc.undo_stack.undo()
    assert snapshot(doc.diagram) == before
    # Shift+drag an inner segment of the feedback wire: new bend points, one step
    wire = next(w for w in scene.wires if str(w.wire.dst) == "sum.u2")
    inner = max(range(1, len(wire.route) - 2),
                key=lambda i: abs(wire.route[i][0] - wire.route[i + 1][0])
                + abs(wire.route[i][1] - wire.route[i + 1][1]))
    a, b = wire.route[inner], wire.route[inner + 1]
    start = view.mapFromScene(QPointF((a[0] + b[0]) / 2, (a[1] + b[1]) / 2))
    shift = QPoint(0, 40) if a[1] == b[1] else QPoint(40, 0)
    drag(view.viewport(), start, start + shift, Qt.ShiftModifier)
    changed = doc.diagram.wires[wire.index]
    assert changed.points != before["wires"][wire.index].get("points")
    route = scene.wires[wire.index].route
    assert all(p[0] == q[0] or p[1] == q[1] for p, q in zip(route, route[1:]))
    doc.undo_stack.undo()
    assert snapshot(doc.diagram) == before


def test_zoom_pan_and_fit(canvas):
    view = canvas.view
    zoom = view.zoom
    view.zoom_in()
    assert view.zoom == pytest.approx(zoom * 1.2)
    view.zoom_out()
    view.fit()
    rect = view.mapFromScene(canvas.scene.diagram_rect()).boundingRect()
    assert view.viewport().rect().adjusted(-2, -2, 2, 2).contains(rect)
    bar = view.horizontalScrollBar()
    view.zoom_by(4)
    value = bar.value()
    centre = view.viewport().rect().center()
    from PySide6.QtTest import QTest
    QTest.mousePress(view.viewport(), Qt.MiddleButton, Qt.NoModifier, centre)
    QTest.mouseMove(view.viewport(), centre + QPoint(-100, 0))
    QTest.mouseRelease(view.viewport(), Qt.MiddleButton, Qt.NoModifier, centre + QPoint(-100, 0))
    assert bar.value() != value
    # Space + left drag pans too, and moves nothing
    value, before = bar.value(), snapshot(canvas.doc.diagram)
    QTest.keyPress(view, Qt.Key_Space)
    drag(view.viewport(), block_point(canvas, "sum"), block_point(canvas, "sum") + QPoint(80, 0))
    QTest.keyRelease(view, Qt.Key_Space)
    assert bar.value() != value and snapshot(canvas.doc.diagram) == before


def test_a_drawn_wire_goes_round_blocks_in_its_way(canvas):
    doc, view, scene = canvas.doc, canvas.view, canvas.scene
    (sx, sy), _ = scene.blocks["sum"].port_position("out", "y")  # integ and y are in the way
    right = max(item.placement.rect[0] + item.placement.rect[2] for item in scene.blocks.values())
    canvas.editor.add_block("Scope", QPointF(right + 80, sy))
    drag(view.viewport(), port_point(canvas, "sum", "out", "y"),
         port_point(canvas, "scope1", "in", "u"))
    assert str(doc.diagram.wires[-1].dst) == "scope1.u" and doc.diagram.wires[-1].points
    route = scene.wires[-1].route
    for item in scene.blocks.values():
        x, y, w, h = item.placement.rect
        for p, q in zip(route, route[1:]):
            if p[1] == q[1]:
                assert not (y < p[1] < y + h and min(p[0], q[0]) < x + w and max(p[0], q[0]) > x)
            else:
                assert not (x < p[0] < x + w and min(p[1], q[1]) < y + h and max(p[1], q[1]) > y)


def test_rubber_band_selects_the_blocks_it_touches(canvas):
    view, scene = canvas.view, canvas.scene
    rect = scene.blocks["sum"].sceneBoundingRect().united(scene.blocks["integ"].sceneBoundingRect())
    top_left = view.mapFromScene(rect.topLeft()) - QPoint(15, 25)
    bottom_right = view.mapFromScene(rect.bottomRight()) + QPoint(5, 5)
    drag(view.viewport(), top_left, bottom_right, steps=6)
    assert set(scene.selected_block_ids()) >= {"sum", "integ"}
    assert canvas.doc.undo_stack.count() == 0  # selecting is not an edit
