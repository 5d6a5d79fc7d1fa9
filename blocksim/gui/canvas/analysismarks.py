"""Linear analysis marks drawn on the canvas: a small glyph where a marked signal leaves its
source port, as Simulink draws its linearization I/O points.

An input is an arrow pointing onto the wire (a perturbation enters), an output an arrow
pointing away from it (the signal is measured), a loop opening a cross on the wire. One glyph
per marked port, beside the first segment of the first of its wires; the tooltip says it in
words.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from blocksim.diagram.model import ANALYSIS_ROLES

if TYPE_CHECKING:
    from blocksim.gui.canvas.scene import DiagramScene

MARK_COLOUR = QColor("#c2410c")  # a burnt orange: apart from selection blue and error red
STEP = 11.0  # distance along the wire between the glyph's parts
REACH = 13.0  # length of an arrow beside the wire
WORDS = {"input": "input (a perturbation is added here)",
         "output": "output (the signal is measured here)",
         "open": "loop opened here"}


class AnalysisGlyph(QGraphicsItem):
    """The marks of one source port, drawn from its wire's start along `direction`."""

    def __init__(self, port: str, marks: tuple[str, ...], start: tuple[float, float],
                 direction: tuple[float, float]):
        super().__init__()
        self.port = port
        self.marks = marks
        self.wire = None  # the WireItem it is drawn on
        self.setPos(QPointF(*start))
        self.setZValue(2)  # over the wires, under nothing that is dragged
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # clicks go to the wire below
        dx, dy = direction
        self._along = (dx, dy)
        # the side the arrows stand on: above a horizontal wire, left of a vertical one
        nx, ny = (dy, -dx) if abs(dx) >= abs(dy) else (-dy, dx)
        if (abs(dx) >= abs(dy) and ny > 0) or (abs(dx) < abs(dy) and nx > 0):
            nx, ny = -nx, -ny
        self._side = (nx, ny)
        self._path, self._heads = self._shapes()
        self.setToolTip(f"Linear analysis at {port}:\n" + "\n".join(WORDS[m] for m in marks))

    def _shapes(self) -> tuple[QPainterPath, list[QPolygonF]]:
        (dx, dy), (nx, ny) = self._along, self._side
        path, heads = QPainterPath(), []
        offset = STEP
        for mark in self.marks:
            bx, by = dx * offset, dy * offset
            if mark == "open":
                r = 4.5
                for sx, sy in ((dx + nx, dy + ny), (dx - nx, dy - ny)):
                    path.moveTo(bx - sx * r, by - sy * r)
                    path.lineTo(bx + sx * r, by + sy * r)
            else:
                near = (bx + nx * 2.5, by + ny * 2.5)
                far = (bx + nx * REACH, by + ny * REACH)
                tail, tip = (far, near) if mark == "input" else (near, far)
                path.moveTo(*tail)
                path.lineTo(*tip)
                heads.append(_head(tail, tip))
            offset += STEP
        return path, heads

    def boundingRect(self) -> QRectF:
        box = self._path.controlPointRect()
        for head in self._heads:
            box = box.united(head.boundingRect())
        return box.adjusted(-2, -2, 2, 2)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(MARK_COLOUR, 1.8, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QBrush(MARK_COLOUR))
        for head in self._heads:
            painter.drawPolygon(head)


def _head(tail: tuple[float, float], tip: tuple[float, float], size: float = 5.5) -> QPolygonF:
    (x1, y1), (x2, y2) = tail, tip
    length = max(math.hypot(x2 - x1, y2 - y1), 1e-9)
    dx, dy = (x2 - x1) / length, (y2 - y1) / length
    return QPolygonF([QPointF(x2, y2),
                      QPointF(x2 - dx * size - dy * size * 0.5, y2 - dy * size + dx * size * 0.5),
                      QPointF(x2 - dx * size + dy * size * 0.5, y2 - dy * size - dx * size * 0.5)])


class AnalysisMarks:
    """The glyphs of a scene's marked ports, rebuilt after the scene rebuilds its wires."""

    def __init__(self, scene: "DiagramScene"):
        self.scene = scene
        self.items: list[AnalysisGlyph] = []

    def sync(self) -> None:
        for item in self.items:
            if item.scene() is self.scene:
                self.scene.removeItem(item)
        self.items = []
        marked: dict[str, set[str]] = {}
        for wire in self.scene.doc.level(self.scene.level).wires:
            if wire.analysis:
                marked.setdefault(str(wire.src), set()).update(wire.analysis)
        for wire in self.scene.wires:  # the first drawn wire of each marked port
            port = str(wire.wire.src)
            route = wire.route
            if port not in marked or len(route) < 2:
                continue
            roles = marked.pop(port)
            item = _glyph(port, tuple(r for r in ANALYSIS_ROLES if r in roles), wire)
            self.scene.addItem(item)
            self.items.append(item)

    def follow(self) -> None:
        """Redraw the glyphs at their wires' current starts (while a block is dragged)."""
        for i, item in enumerate(self.items):
            if len(item.wire.route) < 2:
                continue
            new = _glyph(item.port, item.marks, item.wire)
            self.scene.removeItem(item)
            self.scene.addItem(new)
            self.items[i] = new

    def shown(self) -> dict[str, tuple[str, ...]]:
        """The marks drawn, by port name (tests and pictures)."""
        return {item.port: item.marks for item in self.items}


def _glyph(port: str, marks: tuple[str, ...], wire) -> AnalysisGlyph:
    """The glyph of `port` at the start of the drawn wire `wire` (a WireItem)."""
    (x0, y0), (x1, y1) = wire.route[0], wire.route[1]
    length = max(math.hypot(x1 - x0, y1 - y0), 1e-9)
    item = AnalysisGlyph(port, marks, (x0, y0), ((x1 - x0) / length, (y1 - y0) / length))
    item.wire = wire
    return item
