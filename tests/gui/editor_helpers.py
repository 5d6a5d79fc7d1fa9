"""Helpers for the editor tests: small diagrams, and mouse gestures on the real view."""
from __future__ import annotations

import copy

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest

from blocksim.diagram.format import diagram_from_dict, diagram_to_dict
from blocksim.diagram.model import Diagram


def lag_diagram() -> Diagram:
    """step -> sum -> integ -> y, with feedback integ -> fb -> sum.u2 (the format doc's lag)."""
    data = {
        "format": "blocksim", "version": 1, "parameters": {"tau": 0.5},
        "simulation": {"stop": 2.0, "output_interval": 0.1},
        "blocks": [
            {"id": "step", "type": "Step", "params": {"time": 0.5}},
            {"id": "sum", "type": "Sum", "params": {"signs": "+-"}},
            {"id": "integ", "type": "Integrator", "params": {"x0": 0}},
            {"id": "fb", "type": "Gain", "params": {"k": "1 / tau"}},
            {"id": "y", "type": "Output", "params": {}},
        ],
        "wires": [
            {"src": "step.y", "dst": "sum.u1"}, {"src": "sum.y", "dst": "integ.u"},
            {"src": "integ.y", "dst": "fb.u"}, {"src": "fb.y", "dst": "sum.u2"},
            {"src": "integ.y", "dst": "y.u"},
        ],
    }
    return diagram_from_dict(data, source="<lag>")


def snapshot(diagram: Diagram) -> dict:
    """A deep, comparable picture of the whole model."""
    return copy.deepcopy(diagram_to_dict(diagram))


def port_point(canvas, block_id: str, kind: str, port: str) -> QPoint:
    """Where a port is, in viewport pixels."""
    (x, y), _ = canvas.scene.blocks[block_id].port_position(kind, port)
    return canvas.view.mapFromScene(QPointF(x, y))


def block_point(canvas, block_id: str) -> QPoint:
    """The middle of a block's body, in viewport pixels."""
    x, y, w, h = canvas.scene.blocks[block_id].placement.rect
    return canvas.view.mapFromScene(QPointF(x + w / 2, y + h / 2))


def drag(viewport, start: QPoint, end: QPoint, modifiers=Qt.NoModifier, steps: int = 4) -> None:
    """Press at start, move in a few steps, release at end, as a user's mouse would."""
    QTest.mousePress(viewport, Qt.LeftButton, modifiers, start)
    for i in range(1, steps + 1):
        point = start + (end - start) * (i / steps)
        QTest.mouseMove(viewport, point)
    QTest.mouseRelease(viewport, Qt.LeftButton, modifiers, end)


def palette_drop(viewport, point: QPoint, type_name: str) -> None:
    """Drop a block type from the palette at a viewport point: the drag enter, move and drop
    a real drag would deliver, carrying the palette's own mime data (QDrag.exec would block
    an offscreen run)."""
    from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
    from PySide6.QtWidgets import QApplication

    from blocksim.gui.panels.palette import block_mime_data

    data = block_mime_data(type_name)
    for cls in (QDragEnterEvent, QDragMoveEvent):
        QApplication.sendEvent(viewport, cls(point, Qt.CopyAction, data, Qt.LeftButton,
                                             Qt.NoModifier))
    QApplication.sendEvent(viewport, QDropEvent(QPointF(point), Qt.CopyAction, data,
                                                Qt.LeftButton, Qt.NoModifier))


def type_text(widget, text: str) -> None:
    """Select everything in a line edit and type `text` over it, key by key."""
    QTest.keyClick(widget, Qt.Key_A, Qt.ControlModifier)
    if text:
        QTest.keyClicks(widget, text)
    else:
        QTest.keyClick(widget, Qt.Key_Delete)


def tab_to(widget, limit: int = 10) -> None:
    """Press Tab until `widget` has the keyboard focus."""
    from PySide6.QtWidgets import QApplication

    for _ in range(limit):
        if QApplication.focusWidget() is widget:
            return
        QTest.keyClick(QApplication.focusWidget(), Qt.Key_Tab)
    assert QApplication.focusWidget() is widget


def click(viewport, point: QPoint) -> None:
    """A left click at a viewport point."""
    QTest.mouseClick(viewport, Qt.LeftButton, Qt.NoModifier, point)


def open_window(qtbot):
    """A main window as `blocksim-gui` opens it (after offering recovery), shown."""
    from blocksim.gui.window import app

    window = app.create_window()
    qtbot.addWidget(window)
    qtbot.waitExposed(window)
    with qtbot.waitActive(window):  # so that keyboard focus moves as it does for a user
        window.activateWindow()
    return window


def run_in_editor(window, qtbot, timeout_ms: int = 20000):
    """Trigger the Run action and wait for the runner's results."""
    with qtbot.waitSignal(window.sim.runner.finished, timeout=timeout_ms) as blocker:
        window.actions_.run.trigger()
    assert window.sim.runner.wait(5000)
    return blocker.args[0]
