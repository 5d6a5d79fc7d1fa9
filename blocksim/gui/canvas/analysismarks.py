"""Linear analysis marks drawn on the canvas: a small glyph where a marked signal leaves its
source port, as Simulink draws its linearization I/O points.

An input is a filled badge with an arrow pointing onto the wire (a perturbation enters), an
output a hollow badge with an arrow pointing away from it (the signal is measured), a loop
opening a cross on the wire. One glyph
per marked port, beside the first segment of the first of its wires; the tooltip says it in
words.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from blocksim.diagram.model import ANALYSIS_ROLES
from blocksim.gui.canvas.items import BlockItem, WireItem

if TYPE_CHECKING:
    from blocksim.gui.canvas.scene import DiagramScene

MARK_COLOUR = QColor("#c2410c")  # a burnt orange: apart from selection blue and error red
RADIUS = 5.5  # of a badge
START = 9.0  # from the port to the first part of the glyph, along the wire
STEP = 13.0  # between the glyph's parts, along the wire
LIFT = 9.0  # from the wire to a badge's centre
WORDS = {"input": "input (a perturbation is added here)",
         "output": "output (the signal is measured here)",
         "open": "loop opened here"}


class AnalysisGlyph(QGraphicsItem):
    """The marks of one source port, drawn from its wire's start along `direction`: a badge
    per input or output beside the wire (an arrow onto it, or away from it), and a cross on
    the wire where the loop is opened."""

    def __init__(self, port: str, marks: tuple[str, ...], start: tuple[float, float],
                 direction: tuple[float, float], reach: float, below: bool = False):
        super().__init__()
        self.port = port
        self.marks = marks
        self.wire = None  # the WireItem it is drawn on
        self.setPos(QPointF(*start))
        self.setZValue(2)  # over the wires, under nothing that is dragged
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # clicks go to the wire below
        dx, dy = direction
        self._along = (dx, dy)
        # the side the badges stand on: above (or below) a horizontal first segment, left
        # (or right) of a vertical one
        side = (0.0, -1.0) if abs(dx) >= abs(dy) else (-1.0, 0.0)
        self._side = (-side[0], -side[1]) if below else side
        self._reach = reach  # length of the wire's first segment
        self._parts = self._layout()
        self.setToolTip(f"Linear analysis at {port}:\n" + "\n".join(WORDS[m] for m in marks))

    def _layout(self) -> list[tuple[str, QPointF]]:
        """Each mark and its centre (item coordinates): the cross on the first segment of
        the wire, the badges beside the port, one after the other along the wire."""
        (dx, dy), (nx, ny) = self._along, self._side
        parts, offset = [], RADIUS + 2
        for mark in self.marks:
            if mark == "open":
                at = min(START, max(self._reach / 2, 3.0))
                parts.append((mark, QPointF(dx * at, dy * at)))
            else:
                parts.append((mark, QPointF(dx * offset + nx * LIFT, dy * offset + ny * LIFT)))
                offset += STEP
        return parts

    def badge_rects(self) -> list[QRectF]:
        """Where the badges are, in scene coordinates (to keep them off other wires)."""
        return [QRectF(self.mapToScene(c).x() - RADIUS, self.mapToScene(c).y() - RADIUS,
                       2 * RADIUS, 2 * RADIUS) for mark, c in self._parts if mark != "open"]

    def boundingRect(self) -> QRectF:
        box = QRectF()
        for _, centre in self._parts:
            box = box.united(QRectF(centre.x() - RADIUS, centre.y() - RADIUS,
                                    2 * RADIUS, 2 * RADIUS))
        return box.adjusted(-2, -2, 2, 2)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        (nx, ny) = self._side
        for mark, c in self._parts:
            if mark == "open":
                painter.setPen(QPen(MARK_COLOUR, 2.2, Qt.PenStyle.SolidLine,
                                    Qt.PenCapStyle.RoundCap))
                r = RADIUS * 0.7
                painter.drawLine(QPointF(c.x() - r, c.y() - r), QPointF(c.x() + r, c.y() + r))
                painter.drawLine(QPointF(c.x() - r, c.y() + r), QPointF(c.x() + r, c.y() - r))
                continue
            filled = mark == "input"
            painter.setPen(QPen(MARK_COLOUR, 1.4))
            painter.setBrush(QBrush(MARK_COLOUR if filled else QColor("white")))
            painter.drawEllipse(c, RADIUS, RADIUS)
            ink = QColor("white") if filled else MARK_COLOUR
            # towards the wire for an input (-side), away from it for an output (+side)
            sign = -1.0 if filled else 1.0
            tip = QPointF(c.x() + sign * nx * RADIUS * 0.6, c.y() + sign * ny * RADIUS * 0.6)
            tail = QPointF(c.x() - sign * nx * RADIUS * 0.6, c.y() - sign * ny * RADIUS * 0.6)
            painter.setPen(QPen(ink, 1.4, Qt.PenStyle.SolidLine, Qt.PenCapStyle.FlatCap))
            painter.drawLine(tail, tip)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QBrush(ink))
            painter.drawPolygon(_head((tail.x(), tail.y()), (tip.x(), tip.y()), 3.6))


def _head(tail: tuple[float, float], tip: tuple[float, float], size: float) -> QPolygonF:
    (x1, y1), (x2, y2) = tail, tip
    length = max(math.hypot(x2 - x1, y2 - y1), 1e-9)
    dx, dy = (x2 - x1) / length, (y2 - y1) / length
    return QPolygonF([QPointF(x2, y2),
                      QPointF(x2 - dx * size - dy * size * 0.6, y2 - dy * size + dx * size * 0.6),
                      QPointF(x2 - dx * size + dy * size * 0.6, y2 - dy * size - dx * size * 0.6)])


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
    """The glyph of `port` at the start of the drawn wire `wire` (a WireItem): its badges
    on the side of the first segment where they cover no other wire or block, if either."""
    (x0, y0), (x1, y1) = wire.route[0], wire.route[1]
    length = max(math.hypot(x1 - x0, y1 - y0), 1e-9)
    direction = ((x1 - x0) / length, (y1 - y0) / length)
    scene = wire.scene()
    first = None
    for below in (False, True):
        item = AnalysisGlyph(port, marks, (x0, y0), direction, length, below)
        item.wire = wire
        first = first or item
        if scene is None or not any(_covers(scene, rect) for rect in item.badge_rects()):
            return item
    return first


def _covers(scene, rect: QRectF) -> bool:
    """Whether a wire or block of `scene` is drawn inside `rect`."""
    for other in scene.items(rect):
        if isinstance(other, BlockItem):
            return True
        if isinstance(other, WireItem) and any(
                _crosses(rect, a, b) for a, b in zip(other.route, other.route[1:])):
            return True
    return False


def _crosses(rect: QRectF, a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether the segment a-b (horizontal or vertical, as routes are) passes through rect."""
    (x1, y1), (x2, y2) = a, b
    return (min(x1, x2) <= rect.right() and max(x1, x2) >= rect.left()
            and min(y1, y2) <= rect.bottom() and max(y1, y2) >= rect.top())
