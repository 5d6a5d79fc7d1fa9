"""The canvas items: blocks with their ports and labels, and orthogonal wires.

Items draw what the model says (through `geometry` and `routing`, the same numbers the
automatic layout uses) and never change the model themselves: the scene turns what the user
did into undo commands.
"""
from __future__ import annotations

from typing import Callable, Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QStyleOptionGraphicsItem

from blocksim import registry
from blocksim.gui.geometry import LABEL_HEIGHT, Placement, Point, snap
from blocksim.gui.portinfo import PortInfo, block_placement, port_texts
from blocksim.gui.routing import route
from blocksim.model import Block, Wire

INK = QColor("#262626")
SELECTED = QColor("#1c6ed6")
ERROR = QColor("#d62728")
WIRE = QColor("#303a46")
PORT_SIZE = 5.0
HIT_RADIUS = 9.0

CATEGORY_FILL = {
    "Sources": "#e8f5e4", "Sinks": "#e3eefb", "Continuous": "#fff6d8",
    "Discontinuities": "#fde9dc", "Logic": "#efe6f7", "Discrete": "#fff0f5",
    "Lookup Tables": "#e6f4f4", "Ports & Subsystems": "#eceff3", "Signal Routing": "#f2f2f2",
}
SHAPES = {"Gain": "triangle"}


def _font(points: float, bold: bool = False) -> QFont:
    font = QFont("DejaVu Sans")
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


GLYPH_FONT = _font(9.5)
LABEL_FONT = _font(8.0)
PORT_FONT = _font(6.5)


class BlockItem(QGraphicsItem):
    """One block: body, unconnected-port chevrons, glyph, port names and the id below."""

    def __init__(self, block: Block, info: PortInfo, glyph: str, connected: set[tuple[str, str]]):
        super().__init__()
        self.block_id = block.id
        self.block_type = block.type
        self.info = info
        self.glyph = glyph
        self.connected = connected  # {("in"|"out", port name)}
        self.label = str((block.layout or {}).get("label") or block.id)
        self.model_pos = QPointF(float((block.layout or {}).get("x", 0.0)),
                                 float((block.layout or {}).get("y", 0.0)))
        self.base = block_placement(block, info, glyph)
        self.texts = port_texts(block.type, info)
        self.marked = False
        category = getattr(registry.get(block.type), "category", "")
        self.fill = QColor(CATEGORY_FILL.get(category, "#fafafa") if info.known else "#e0e0e0")
        self.on_moved: Callable[["BlockItem"], None] | None = None
        self.setFlags(QGraphicsItem.ItemIsSelectable | QGraphicsItem.ItemIsMovable
                      | QGraphicsItem.ItemSendsGeometryChanges)
        self.setPos(self.model_pos)
        self.setZValue(1)
        self.setToolTip(f"{block.id} ({block.type})")
        width, height = self.base.size
        label_w = QFontMetricsF(LABEL_FONT).horizontalAdvance(self.label) + 4
        left = min(-PORT_SIZE * 2, width / 2 - label_w / 2)
        self._bounds = QRectF(left, -PORT_SIZE * 2, max(width + PORT_SIZE * 4, label_w),
                              height + PORT_SIZE * 2 + LABEL_HEIGHT + 4)
        self._bounds.setRight(max(self._bounds.right(), width + PORT_SIZE * 2))

    # ----- geometry -----
    @property
    def placement(self) -> Placement:
        """The placement at the item's current position (which moves during a drag)."""
        b = self.base
        return Placement(self.pos().x(), self.pos().y(), b.w, b.h, b.rotation, b.flip)

    def ports(self, kind: str) -> Sequence[str]:
        return self.info.inputs if kind == "in" else self.info.outputs

    def port_position(self, kind: str, name: str) -> tuple[Point, Point] | None:
        """Canvas position and outward direction of a port; None if there is no such port."""
        ports = self.ports(kind)
        if name not in ports:
            return None
        return self.placement.port(kind, ports.index(name), len(ports))

    def port_near(self, pos: QPointF, radius: float = HIT_RADIUS) -> tuple[str, str] | None:
        """The (kind, port name) within `radius` of a canvas point, nearest first."""
        best, best_d = None, radius * radius
        for kind in ("in", "out"):
            for name in self.ports(kind):
                (x, y), _ = self.port_position(kind, name)
                d = (x - pos.x()) ** 2 + (y - pos.y()) ** 2
                if d <= best_d:
                    best, best_d = (kind, name), d
        return best

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        width, height = self.base.size
        path.addRect(QRectF(-PORT_SIZE, -PORT_SIZE, width + 2 * PORT_SIZE,
                            height + 2 * PORT_SIZE))
        return path

    def itemChange(self, change, value):
        if change == QGraphicsItem.ItemPositionChange:
            return QPointF(snap(value.x()), snap(value.y()))
        if change == QGraphicsItem.ItemPositionHasChanged and self.on_moved:
            self.on_moved(self)
        return super().itemChange(change, value)

    # ----- drawing -----
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setRenderHint(QPainter.Antialiasing)
        local = Placement(0.0, 0.0, self.base.w, self.base.h, self.base.rotation, self.base.flip)
        color = ERROR if self.marked else SELECTED if self.isSelected() else INK
        width = 2.4 if (self.marked or self.isSelected()) else 1.2
        painter.setPen(QPen(color, width))
        painter.setBrush(QBrush(self.fill))
        painter.drawPath(self._body(local))
        painter.setPen(Qt.NoPen)
        painter.setBrush(QBrush(color))
        for kind in ("in", "out"):
            ports = self.ports(kind)
            for i, name in enumerate(ports):
                if (kind, name) not in self.connected:
                    point, direction = local.port(kind, i, len(ports))
                    painter.drawPolygon(_chevron(point, direction, kind))
        self._paint_texts(painter, local)

    def _body(self, local: Placement) -> QPainterPath:
        path = QPainterPath()
        w, h = self.base.w, self.base.h
        if SHAPES.get(self.block_type) == "triangle":
            pts = [local.local(0, 0), local.local(w, h / 2), local.local(0, h)]
            path.addPolygon(QPolygonF([QPointF(x, y) for x, y in pts]))
            path.closeSubpath()
        else:
            width, height = local.size
            radius = 10.0 if self.block_type in ("Inport", "Outport") else 3.0
            path.addRoundedRect(QRectF(0, 0, width, height), radius, radius)
        return path

    def _paint_texts(self, painter: QPainter, local: Placement) -> None:
        width, height = local.size
        painter.setPen(INK)
        painter.setFont(PORT_FONT)
        inset = {(-1, 0): 0.0, (1, 0): 0.0, (0, -1): 0.0, (0, 1): 0.0}  # per side
        for kind, texts in zip(("in", "out"), self.texts):
            for i, text in enumerate(texts):
                if text:
                    side, used = self._port_text(painter, local, kind, i, len(texts), text)
                    inset[side] = max(inset[side], used)
        glyph_rect = QRectF(0, 0, width, height).adjusted(
            inset[(-1, 0)], inset[(0, -1)], -inset[(1, 0)], -inset[(0, 1)])
        if SHAPES.get(self.block_type) == "triangle":
            glyph_rect = self._triangle_text_rect(local)
        _fit_text(painter, glyph_rect.adjusted(2, 1, -2, -1), self.glyph, GLYPH_FONT)
        painter.setFont(LABEL_FONT)
        painter.setPen(INK)
        label_rect = QRectF(width / 2 - 200, height + 3, 400, LABEL_HEIGHT)
        painter.drawText(label_rect, Qt.AlignHCenter | Qt.AlignTop, self.label)

    def _port_text(self, painter: QPainter, local: Placement, kind: str, index: int,
                   count: int, text: str) -> tuple[tuple[int, int], float]:
        """Draw a port's name inside the block next to it; returns its side and the room
        it takes there."""
        (x, y), (dx, dy) = local.port(kind, index, count)
        side = (int(round(dx)), int(round(dy)))
        metrics = QFontMetricsF(PORT_FONT)
        tw, th = metrics.horizontalAdvance(text), metrics.height()
        if dx:  # port on a left or right edge: text runs inwards from it
            left = x + 3 if dx < 0 else x - 3 - tw
            painter.drawText(QRectF(left, y - th / 2, tw, th), Qt.AlignCenter, text)
            return side, tw + 4
        top = y + 1 if dy < 0 else y - 1 - th
        painter.drawText(QRectF(x - tw / 2, top, tw, th), Qt.AlignCenter, text)
        return side, th + 2

    def _triangle_text_rect(self, local: Placement) -> QRectF:
        w, h = self.base.w, self.base.h
        (x1, y1), (x2, y2) = local.local(0, h * 0.25), local.local(w * 0.62, h * 0.75)
        return QRectF(QPointF(min(x1, x2), min(y1, y2)), QPointF(max(x1, x2), max(y1, y2)))


def _chevron(point: Point, direction: Point, kind: str) -> QPolygonF:
    """A small triangle at a port pointing along the signal flow."""
    x, y = point
    dx, dy = direction
    if kind == "in":  # tip on the edge, pointing into the block
        tip = QPointF(x, y)
        base = (x + dx * PORT_SIZE * 1.4, y + dy * PORT_SIZE * 1.4)
    else:  # base on the edge, pointing out
        tip = QPointF(x + dx * PORT_SIZE * 1.4, y + dy * PORT_SIZE * 1.4)
        base = (x, y)
    nx, ny = -dy * PORT_SIZE, dx * PORT_SIZE
    return QPolygonF([tip, QPointF(base[0] + nx, base[1] + ny),
                      QPointF(base[0] - nx, base[1] - ny)])


def _fit_text(painter: QPainter, rect: QRectF, text: str, font: QFont) -> None:
    """Draw `text` centred in `rect`, shrinking the font until it fits."""
    if not text or rect.width() <= 2:
        return
    font = QFont(font)
    size = font.pointSizeF()
    while size > 5.0:
        metrics = QFontMetricsF(font)
        fits = metrics.horizontalAdvance(text) <= rect.width()
        if fits and metrics.height() <= rect.height() + 4:
            break
        size -= 0.5
        font.setPointSizeF(size)
    painter.setFont(font)
    painter.drawText(rect, Qt.AlignCenter, text)


class WireItem(QGraphicsPathItem):
    """A wire drawn as an orthogonal route between the ports of two block items."""

    def __init__(self, index: int, wire: Wire, find: Callable[[str], BlockItem | None]):
        super().__init__()
        self.index = index
        self.wire = wire
        self.find = find
        self.marked = False
        self.dangling = False
        self.route: list[Point] = []
        self.junctions: list[Point] = []
        self.setFlags(QGraphicsItem.ItemIsSelectable)
        self.setZValue(0)
        self.setToolTip(f"{wire.src} → {wire.dst}")
        self.update_path()

    def update_path(self) -> None:
        """Recompute the route from the blocks' current positions."""
        src, dst = self.find(self.wire.src.block), self.find(self.wire.dst.block)
        if src is None or dst is None:
            self.route = []
            self.setPath(QPainterPath())
            return
        start = src.port_position("out", self.wire.src.port)
        end = dst.port_position("in", self.wire.dst.port)
        self.dangling = start is None or end is None
        if start is None:
            start = (_edge_middle(src, 1.0), src.placement.direction(1.0, 0.0))
        if end is None:
            end = (_edge_middle(dst, 0.0), dst.placement.direction(-1.0, 0.0))
        ds, dd = src.pos() - src.model_pos, dst.pos() - dst.model_pos
        points = self.wire.points
        if points and ds == dd and (ds.x() or ds.y()):  # both ends move: the bends go along
            points = [(x + ds.x(), y + ds.y()) for x, y in points]
        self.route = route(start[0], start[1], end[0], end[1], points,
                           src.placement.rect, dst.placement.rect)
        path = QPainterPath(QPointF(*self.route[0]))
        for x, y in self.route[1:]:
            path.lineTo(x, y)
        self.prepareGeometryChange()
        self.setPath(path)

    def boundingRect(self) -> QRectF:
        return super().boundingRect().adjusted(-6, -6, 6, 6)

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(8.0)
        return stroker.createStroke(self.path())

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        if not self.route:
            return
        painter.setRenderHint(QPainter.Antialiasing)
        color = ERROR if (self.marked or self.dangling) else (
            SELECTED if self.isSelected() else WIRE)
        pen = QPen(color, 2.2 if (self.isSelected() or self.marked) else 1.3)
        pen.setJoinStyle(Qt.MiterJoin)
        if self.dangling:
            pen.setStyle(Qt.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.NoBrush)
        painter.drawPath(self.path())
        painter.setPen(Qt.NoPen)
        painter.setBrush(QBrush(color))
        (x1, y1), (x2, y2) = self.route[-2], self.route[-1]
        dx, dy = (x2 - x1), (y2 - y1)
        length = max(abs(dx) + abs(dy), 1e-9)
        dx, dy = dx / length, dy / length
        size = 7.0
        painter.drawPolygon(QPolygonF([
            QPointF(x2, y2), QPointF(x2 - dx * size - dy * size * 0.45,
                                     y2 - dy * size + dx * size * 0.45),
            QPointF(x2 - dx * size + dy * size * 0.45, y2 - dy * size - dx * size * 0.45)]))
        for x, y in self.junctions:
            painter.drawEllipse(QPointF(x, y), 3.0, 3.0)


def _edge_middle(item: BlockItem, lx_fraction: float) -> Point:
    b = item.placement
    return b.scene(b.w * lx_fraction, b.h / 2)
