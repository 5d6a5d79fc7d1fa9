"""The canvas items: blocks with their ports and labels, and orthogonal wires.

Items draw what the model says (through `geometry` and `routing`, the same numbers the
automatic layout uses) and never change the model themselves: the scene turns what the user
did into undo commands.

Painting is on the path of every frame, so an item works out once what it draws (paths,
fitted fonts, text boxes: a block's look only changes when the scene replaces the item) and
blocks are cached as device pixmaps, which panning merely copies. Below readable sizes
texts are left out (see `TEXT_LOD`).
"""
from __future__ import annotations

from dataclasses import dataclass
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

from blocksim.blocktypes import registry
from blocksim.gui.canvas.geometry import LABEL_HEIGHT, Placement, Point, label_left, snap
from blocksim.gui.canvas.portinfo import (
    PortInfo,
    block_placement,
    bottom_ports,
    has_diagram,
    port_texts,
)
from blocksim.gui.canvas.routing import route
from blocksim.gui.canvas.symbolpaint import domain_colour, pin_marks, symbol_strokes, symbol_texts
from blocksim.diagram.model import Block, Wire

INK = QColor("#262626")
SELECTED = QColor("#1c6ed6")
ERROR = QColor("#d62728")
WIRE = QColor("#303a46")
PORT_SIZE = 5.0
HIT_RADIUS = 9.0
TEXT_LOD = 0.2  # below this scale no text is drawn (8 pt labels would be 2 px high)
PORT_TEXT_LOD = 0.4  # ... and below this no port names

CATEGORY_FILL = {
    "Sources": "#e8f5e4", "Sinks": "#e3eefb", "Continuous": "#fff6d8",
    "Discontinuities": "#fde9dc", "Logic": "#efe6f7", "Discrete": "#fff0f5",
    "Lookup Tables": "#e6f4f4", "Ports & Subsystems": "#eceff3", "Signal Routing": "#f2f2f2",
}
SHAPES = {"Gain": "triangle"}

# Looked up once: enum attribute access costs microseconds on every paint.
_ANTIALIASING = QPainter.RenderHint.Antialiasing
_NO_PEN = Qt.PenStyle.NoPen
_NO_BRUSH = Qt.BrushStyle.NoBrush
_CENTER = Qt.AlignmentFlag.AlignCenter
_TOP_CENTER = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
_POSITION_CHANGE = QGraphicsItem.GraphicsItemChange.ItemPositionChange
_POSITION_CHANGED = QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged
_lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform


def _font(points: float, bold: bool = False) -> QFont:
    font = QFont("DejaVu Sans")
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


GLYPH_FONT = _font(9.5)
LABEL_FONT = _font(8.0)
PORT_FONT = _font(6.5)


def _pen(color: QColor, width: float, style=Qt.PenStyle.SolidLine) -> QPen:
    pen = QPen(color, width, style)
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    return pen


_BLOCK_PENS = {state: QPen(color, width) for state, color, width in (
    ("plain", INK, 1.2), ("selected", SELECTED, 2.4), ("marked", ERROR, 2.4))}
_WIRE_PENS = {state: _pen(color, width, style) for state, color, width, style in (
    ("plain", WIRE, 1.3, Qt.PenStyle.SolidLine), ("selected", SELECTED, 2.2, Qt.PenStyle.SolidLine),
    ("marked", ERROR, 2.2, Qt.PenStyle.SolidLine), ("dangling", ERROR, 1.3, Qt.PenStyle.DashLine))}
_BRUSHES = {state: QBrush(pen.color()) for state, pen in _WIRE_PENS.items()}
_INK_PEN = QPen(INK)
_SYMBOL_PEN = _pen(INK, 1.2)
_SELECTION_HALO = _pen(SELECTED, 1.4, Qt.PenStyle.DashLine)
_PORT_MARK_PEN = _pen(ERROR, 2.0)  # a ring round the port a diagnostic names
_SYMBOL_HALO = {"selected": _pen(SELECTED, 1.4, Qt.PenStyle.DashLine),
                "marked": _pen(ERROR, 2.0, Qt.PenStyle.DashLine)}
@dataclass
class _Texts:
    """Where a block's texts go, in block coordinates, worked out once."""

    ports: list[tuple[QRectF, str]]
    glyph: tuple[QRectF, QFont, str] | None
    label: tuple[QRectF, str, Qt.AlignmentFlag]
    symbol: list[tuple[QRectF, QFont, str]]  # the upright letters of a component's symbol


class BlockItem(QGraphicsItem):
    """One block: body, unconnected-port chevrons, glyph, port names and the id below."""

    def __init__(self, block: Block, info: PortInfo, glyph: str, connected: set[tuple[str, str]],
                 cached: bool = True):
        super().__init__()
        self.block_id = block.id
        self.block_type = block.type
        self.has_diagram = block.subsystem is not None and has_diagram(block.type)
        self.info = info
        self.glyph = glyph
        self.connected = connected  # {("in"|"out", port name)}
        self.label = str((block.layout or {}).get("label") or block.id)
        self.model_pos = QPointF(float((block.layout or {}).get("x", 0.0)),
                                 float((block.layout or {}).get("y", 0.0)))
        self.base = block_placement(block, info, glyph)
        self.texts = port_texts(block.type, info)
        self.marked = False
        self.marked_ports: frozenset[str] = frozenset()  # ringed: a diagnostic names them
        category = getattr(registry.get(block.type), "category", "")
        self.fill = QColor(CATEGORY_FILL.get(category, "#fafafa") if info.known else "#e0e0e0")
        self._fill_brush = QBrush(self.fill)
        self.on_moved: Callable[["BlockItem"], None] | None = None
        local = Placement(0.0, 0.0, self.base.w, self.base.h, self.base.rotation, self.base.flip)
        self._local = local
        self._strokes = symbol_strokes(block.type, local) if info.physical else None
        self._body_path = self._body(local)
        self._chevrons = self._chevron_path(local)
        self._pins = pin_marks(info, local, connected)
        self._controls = self._control_path(local, block)
        self._drawn_texts: _Texts | None = None  # worked out at the first paint with text
        self.setFlags(QGraphicsItem.ItemIsSelectable | QGraphicsItem.ItemIsMovable
                      | QGraphicsItem.ItemSendsGeometryChanges)
        if cached:  # a pixmap per block: panning copies it instead of drawing text again
            self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setPos(self.model_pos)
        self.setZValue(1)
        self._tooltip = f"{block.id} ({block.type})"
        self.setToolTip(self._tooltip)
        self.rate: tuple[str | None, str] = (None, "")  # sample-time colour and its meaning
        self._rate_pen: QPen | None = None
        width, height = self.base.size
        label_w = QFontMetricsF(LABEL_FONT).horizontalAdvance(self.label) + 4
        label_x = label_left(0.0, width, label_w, bottom_ports(local, info))
        left = min(-PORT_SIZE * 2, label_x)
        self._bounds = QRectF(left, -PORT_SIZE * 2, max(width + PORT_SIZE * 4, label_w),
                              height + PORT_SIZE * 2 + LABEL_HEIGHT + 4)
        self._bounds.setRight(max(self._bounds.right(), width + PORT_SIZE * 2,
                                  label_x + label_w))

    # ----- geometry -----
    @property
    def placement(self) -> Placement:
        """The placement at the item's current position (which moves during a drag)."""
        b = self.base
        pos = self.pos()
        return Placement(pos.x(), pos.y(), b.w, b.h, b.rotation, b.flip)

    def ports(self, kind: str) -> Sequence[str]:
        """The ports of one kind: "in", "out" or "phys" (physical)."""
        return self.info.ports(kind)

    def kind_of(self, name: str, default: str) -> str:
        """The kind of port `name` ("phys" for a physical one; else `default` if the
        block has no word on it)."""
        return self.info.kind_of(name, default)

    def port_position(self, kind: str, name: str) -> tuple[Point, Point] | None:
        """Canvas position and outward direction of a port; None if there is no such port."""
        slot = self.info.slot(kind, name)
        if slot is None:
            return None
        return self.placement.port(*slot)

    def port_near(self, pos: QPointF, radius: float = HIT_RADIUS) -> tuple[str, str] | None:
        """The (kind, port name) within `radius` of a canvas point, nearest first."""
        best, best_d = None, radius * radius
        for kind in ("in", "out", "phys"):
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
        if change == _POSITION_CHANGE:
            return QPointF(snap(value.x()), snap(value.y()))
        if change == _POSITION_CHANGED and self.on_moved:
            self.on_moved(self)
        return super().itemChange(change, value)

    def set_rate(self, color: str | None, text: str) -> None:
        """Draw the block in the colour of its sample time (None: as usual); `text` says
        the rate in the tooltip."""
        if (color, text) == self.rate:
            return
        self.rate = (color, text)
        self._rate_pen = QPen(QColor(color), 2.2) if color else None
        self.setToolTip(self._tooltip + (f"\nsample time: {text}" if text else ""))
        self.update()

    # ----- drawing -----
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setRenderHint(_ANTIALIASING)
        state = "marked" if self.marked else "selected" if self.isSelected() else "plain"
        rate_pen = self._rate_pen
        if self._strokes is not None:
            self._paint_symbol(painter, state)
        else:
            painter.setPen(rate_pen if rate_pen is not None and state != "marked"
                           else _BLOCK_PENS[state])
            painter.setBrush(self._fill_brush)
            painter.drawPath(self._body_path)
        if rate_pen is not None and state == "selected":  # the rate's colour stays readable
            painter.setPen(_SELECTION_HALO)
            painter.setBrush(_NO_BRUSH)
            painter.drawRect(self._body_path.boundingRect().adjusted(-4, -4, 4, 4))
        for path, pen, brush in self._pins:
            painter.setPen(pen)
            painter.setBrush(brush)
            painter.drawPath(path)
        if self._chevrons is not None:
            painter.setPen(_NO_PEN)
            painter.setBrush(_BRUSHES[state])
            painter.drawPath(self._chevrons)
        if self._controls is not None:
            painter.setPen(_SYMBOL_PEN)
            painter.setBrush(_NO_BRUSH)
            painter.drawPath(self._controls)
        if self.marked_ports:
            self._paint_port_marks(painter)
        lod = _lod(painter.worldTransform())
        if lod < TEXT_LOD:
            return
        texts = self._drawn_texts or self._work_out_texts()
        painter.setPen(_INK_PEN)
        for rect, font, text in texts.symbol:
            painter.setFont(font)
            painter.drawText(rect, _CENTER, text)
        if lod >= PORT_TEXT_LOD and texts.ports:
            painter.setFont(PORT_FONT)
            for rect, text in texts.ports:
                painter.drawText(rect, _CENTER, text)
        if texts.glyph is not None:
            rect, font, text = texts.glyph
            painter.setFont(font)
            if rate_pen is not None:
                painter.setPen(rate_pen)
            painter.drawText(rect, _CENTER, text)
            painter.setPen(_INK_PEN)
        painter.setFont(LABEL_FONT)
        painter.drawText(texts.label[0], texts.label[2], texts.label[1])

    def _paint_symbol(self, painter: QPainter, state: str) -> None:
        """A component's symbol (no box round it); a dashed frame when it is selected or a
        diagnostic names it."""
        for stroke in self._strokes:
            painter.setPen(stroke.pen if stroke.pen is not None else _NO_PEN)
            painter.setBrush(stroke.brush)
            painter.drawPath(stroke.path)
        halo = _SYMBOL_HALO.get(state)
        if halo is not None:
            painter.setPen(halo)
            painter.setBrush(_NO_BRUSH)
            painter.drawRect(self._body_path.boundingRect().adjusted(-3, -3, 3, 3))

    def _paint_port_marks(self, painter: QPainter) -> None:
        """A red ring round each marked port (of either kind, by name)."""
        painter.setPen(_PORT_MARK_PEN)
        painter.setBrush(_NO_BRUSH)
        for kind in ("in", "out", "phys"):
            for name in self.ports(kind):
                if name in self.marked_ports:
                    (x, y), _ = self._local.port(*self.info.slot(kind, name))
                    painter.drawEllipse(QPointF(x, y), PORT_SIZE, PORT_SIZE)

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

    def _chevron_path(self, local: Placement) -> QPainterPath | None:
        """One path with the chevrons of all unconnected ports (None if all are wired)."""
        path = None
        for kind in ("in", "out"):
            for name in self.ports(kind):
                if (kind, name) not in self.connected:
                    point, direction = local.port(*self.info.slot(kind, name))
                    path = path or QPainterPath()
                    path.addPolygon(_chevron(point, direction, kind))
                    path.closeSubpath()
        return path

    def _control_path(self, local: Placement, block: Block) -> QPainterPath | None:
        """The symbol under each top port, as Simulink draws them: an edge with its arrow
        for a trigger (rising, falling or either), a pulse for an enable."""
        path = None
        for name in self.info.top:
            (x, y), (dx, dy) = local.port(*self.info.slot("in", name))
            path = path or QPainterPath()
            centre = (x - dx * 10.0, y - dy * 10.0)
            kind = "enable" if name == "enable" else str(block.params.get("edge", "rising"))
            _control_symbol(path, centre, kind)
        return path

    def _work_out_texts(self) -> _Texts:
        """Port names beside their ports, the glyph fitted into the room they leave, the
        label under the block (beside the ports on its bottom edge)."""
        local = self._local
        width, height = local.size
        ports = []
        inset = {(-1, 0): 0.0, (1, 0): 0.0, (0, -1): 0.0, (0, 1): 0.0}  # per side
        for kind, texts in zip(("in", "out", "phys"), self.texts):
            for name, text in zip(self.ports(kind), texts):
                if text:
                    rect, side, used = self._port_text(local, self.info.slot(kind, name), text)
                    ports.append((rect, text))
                    inset[side] = max(inset[side], used)
        glyph_rect = QRectF(0, 0, width, height).adjusted(
            inset[(-1, 0)], inset[(0, -1)], -inset[(1, 0)], -inset[(0, 1)])
        if SHAPES.get(self.block_type) == "triangle":
            glyph_rect = self._triangle_text_rect(local)
        glyph_rect = glyph_rect.adjusted(2, 1, -2, -1)
        font = _fitted_font(glyph_rect, self.glyph, GLYPH_FONT)
        glyph = (glyph_rect, font, self.glyph) if font is not None else None
        label_w = QFontMetricsF(LABEL_FONT).horizontalAdvance(self.label) + 4
        left = label_left(0.0, width, label_w, bottom_ports(local, self.info))
        label = (QRectF(left, height + 3, label_w, LABEL_HEIGHT), self.label, _TOP_CENTER)
        symbol = symbol_texts(self.block_type, local) if self._strokes is not None else []
        self._drawn_texts = _Texts(ports, glyph, label, symbol)
        return self._drawn_texts

    @staticmethod
    def _port_text(local: Placement, slot: tuple[str, int, int],
                   text: str) -> tuple[QRectF, tuple[int, int], float]:
        """Where a port's name goes, inside the block next to it; its side and the room it
        takes there."""
        (x, y), (dx, dy) = local.port(*slot)
        side = (int(round(dx)), int(round(dy)))
        metrics = QFontMetricsF(PORT_FONT)
        tw, th = metrics.horizontalAdvance(text), metrics.height()
        if dx:  # port on a left or right edge: text runs inwards from it
            left = x + 3 if dx < 0 else x - 3 - tw
            return QRectF(left, y - th / 2, tw, th), side, tw + 4
        top = y + 1 if dy < 0 else y - 1 - th
        return QRectF(x - tw / 2, top, tw, th), side, th + 2

    def _triangle_text_rect(self, local: Placement) -> QRectF:
        w, h = self.base.w, self.base.h
        (x1, y1), (x2, y2) = local.local(0, h * 0.25), local.local(w * 0.62, h * 0.75)
        return QRectF(QPointF(min(x1, x2), min(y1, y2)), QPointF(max(x1, x2), max(y1, y2)))


def _control_symbol(path: QPainterPath, centre: Point, kind: str) -> None:
    """Add a trigger's edge symbol ("rising", "falling", "either") or an enable's pulse
    ("enable"), 14 x 8 px, upright whatever the block's rotation, to `path`."""
    cx, cy = centre
    left, right, top, bottom = cx - 7.0, cx + 7.0, cy - 4.0, cy + 4.0

    def line(*points: Point) -> None:
        path.moveTo(*points[0])
        for point in points[1:]:
            path.lineTo(*point)

    def arrow(x: float, tip: float, down: bool) -> None:
        back = tip - 3.0 if down else tip + 3.0
        line((x - 2.5, back), (x, tip), (x + 2.5, back))

    if kind == "falling":
        line((left, top), (cx, top), (cx, bottom), (right, bottom))
        arrow(cx, bottom, down=True)
    elif kind in ("either", "enable"):
        a, b = cx - 3.5, cx + 3.5
        line((left, bottom), (a, bottom), (a, top), (b, top), (b, bottom), (right, bottom))
        if kind == "either":
            arrow(a, top, down=False)
            arrow(b, bottom, down=True)
    else:  # rising
        line((left, bottom), (cx, bottom), (cx, top), (right, top))
        arrow(cx, top, down=False)


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


def _fitted_font(rect: QRectF, text: str, font: QFont) -> QFont | None:
    """`font`, shrunk until `text` fits in `rect`; None if there is nothing to draw."""
    if not text or rect.width() <= 2:
        return None
    font = QFont(font)
    size = font.pointSizeF()
    while size > 5.0:
        metrics = QFontMetricsF(font)
        fits = metrics.horizontalAdvance(text) <= rect.width()
        if fits and metrics.height() <= rect.height() + 4:
            break
        size -= 0.5
        font.setPointSizeF(size)
    return font


class WireItem(QGraphicsPathItem):
    """A wire drawn as an orthogonal route between the ports of two block items.

    A wire between two physical ports is a connection: no direction, so no arrowhead, and
    drawn in its domain's colour. One between a physical port and a signal port, or
    between two domains, is drawn as broken (the compiler refuses it).
    """

    def __init__(self, index: int, wire: Wire, find: Callable[[str], BlockItem | None]):
        super().__init__()
        self.index = index
        self.wire = wire
        self.find = find
        self.marked = False
        self.dangling = False
        self.route: list[Point] = []
        self.junctions: list[Point] = []
        self._arrow: QPolygonF | None = None
        self.domain: str | None = None  # set for a connection of physical ports
        self._domain_pen: QPen | None = None
        self._domain_brush: QBrush | None = None
        self._bounds = QRectF()
        self.setFlags(QGraphicsItem.ItemIsSelectable)
        self.setZValue(0)
        self._tooltip = f"{wire.src} → {wire.dst}"
        self.setToolTip(self._tooltip)
        self.rate: tuple[str | None, str] = (None, "")
        self._rate_pen: QPen | None = None
        self._rate_brush: QBrush | None = None
        self.signature: tuple = ()  # what the scene built it from (see scene._rebuild)
        self.update_path()

    def set_rate(self, color: str | None, text: str) -> None:
        """Draw the wire in the colour of its signal's sample time (None: as usual)."""
        if (color, text) == self.rate:
            return
        self.rate = (color, text)
        self._rate_pen = _pen(QColor(color), 1.6) if color else None
        self._rate_brush = QBrush(QColor(color)) if color else None
        self.setToolTip(self._tooltip + (f"\nsample time: {text}" if text else ""))
        self.update()

    def update_path(self) -> None:
        """Recompute the route from the blocks' current positions."""
        src, dst = self.find(self.wire.src.block), self.find(self.wire.dst.block)
        if src is None or dst is None:
            self.route = []
            self._arrow = None
            self.setPath(QPainterPath())
            return
        src_kind = src.kind_of(self.wire.src.port, "out")
        dst_kind = dst.kind_of(self.wire.dst.port, "in")
        start = src.port_position(src_kind, self.wire.src.port)
        end = dst.port_position(dst_kind, self.wire.dst.port)
        self._set_domain(src, dst, src_kind, dst_kind)
        self.dangling = start is None or end is None or (
            "phys" in (src_kind, dst_kind) and self.domain is None)
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
        self._arrow = _arrow(self.route[-2], self.route[-1]) \
            if len(self.route) > 1 and self.domain is None else None
        self.prepareGeometryChange()
        self.setPath(path)

    def _set_domain(self, src: BlockItem, dst: BlockItem, src_kind: str, dst_kind: str) -> None:
        """Whether the wire is a connection (both ends physical ports of one domain)."""
        domain = None
        if src_kind == dst_kind == "phys":
            a, b = src.info.domain_of(self.wire.src.port), dst.info.domain_of(self.wire.dst.port)
            domain = a if a == b else None
        if domain != self.domain or (domain is not None and self._domain_pen is None):
            self.domain = domain
            colour = domain_colour(domain)
            self._domain_pen = _pen(colour, 1.6) if domain is not None else None
            self._domain_brush = QBrush(colour) if domain is not None else None

    def setPath(self, path: QPainterPath) -> None:
        """Also keeps the bounds, so that Qt's many boundingRect calls cost no path work."""
        self._bounds = path.controlPointRect().adjusted(-7, -7, 7, 7)
        super().setPath(path)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(8.0)
        return stroker.createStroke(self.path())

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        if not self.route:
            return
        painter.setRenderHint(_ANTIALIASING)
        state = "marked" if self.marked else "dangling" if self.dangling else (
            "selected" if self.isSelected() else "plain")
        if state == "plain" and self._domain_pen is not None:
            pen, brush = self._domain_pen, self._domain_brush
        elif state == "plain" and self._rate_pen is not None:
            pen, brush = self._rate_pen, self._rate_brush
        else:
            pen, brush = _WIRE_PENS[state], _BRUSHES[state]
        painter.setPen(pen)
        painter.setBrush(_NO_BRUSH)
        painter.drawPath(self.path())
        painter.setPen(_NO_PEN)
        painter.setBrush(brush)
        if self._arrow is not None:
            painter.drawPolygon(self._arrow)
        for x, y in self.junctions:
            painter.drawEllipse(QPointF(x, y), 3.0, 3.0)


def _arrow(before: Point, tip: Point, size: float = 7.0) -> QPolygonF:
    """The arrowhead at the end of a wire's last segment."""
    (x1, y1), (x2, y2) = before, tip
    dx, dy = (x2 - x1), (y2 - y1)
    length = max(abs(dx) + abs(dy), 1e-9)
    dx, dy = dx / length, dy / length
    return QPolygonF([
        QPointF(x2, y2), QPointF(x2 - dx * size - dy * size * 0.45,
                                 y2 - dy * size + dx * size * 0.45),
        QPointF(x2 - dx * size + dy * size * 0.45, y2 - dy * size - dx * size * 0.45)])


def _edge_middle(item: BlockItem, lx_fraction: float) -> Point:
    b = item.placement
    return b.scene(b.w * lx_fraction, b.h / 2)
