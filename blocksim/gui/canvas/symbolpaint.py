"""Qt paths for the symbols of physical components (`symbols`) and for their ports.

A symbol's primitives are given in unrotated block coordinates; here they become painter
paths in the drawn block's coordinates (rotation and flip applied by one transform), so
the block item only paints what was worked out once. Texts stay upright.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen, QPolygonF, QTransform

from blocksim.gui.canvas import symbols
from blocksim.gui.canvas.geometry import Placement
from blocksim.gui.canvas.portinfo import PortInfo
from blocksim.physical.domains import DOMAINS

INK = QColor("#262626")
NO_DOMAIN = "#7f7f7f"  # a physical port of a domain the editor does not know
PIN_HALF = 3.5  # half the side of a physical port's square
_FILLS = {"ink": INK, "white": QColor("white"), "light": QColor("#e6eaef")}


def domain_colour(domain: str | None) -> QColor:
    """The colour ports and wires of a physical domain are drawn in."""
    known = DOMAINS.get(domain or "")
    return QColor(known.colour if known is not None else NO_DOMAIN)


def _pen(colour: QColor, width: float) -> QPen:
    pen = QPen(colour, width)
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    return pen


@dataclass
class Stroke:
    """One part of a component's symbol, ready to paint (pen None: fill only)."""

    path: QPainterPath
    pen: QPen | None
    brush: QBrush


def unrotated_to_drawn(local: Placement) -> QTransform:
    """The map from unrotated block coordinates (0..w, 0..h) to the drawn block's (its
    rotation and flip applied)."""
    (x0, y0), (x1, y1), (x2, y2) = local.local(0, 0), local.local(1, 0), local.local(0, 1)
    return QTransform(x1 - x0, y1 - y0, x2 - x0, y2 - y0, x0, y0)


def symbol_strokes(type_name: str, local: Placement) -> list[Stroke] | None:
    """The strokes of a component type's symbol for a block placed at the origin as
    `local`; None if the type has no symbol (it is drawn as a box with its name)."""
    primitives = symbols.drawing(type_name, local.w, local.h)
    if not primitives:
        return None
    transform = unrotated_to_drawn(local)
    strokes = []
    for item in primitives:
        if isinstance(item, symbols.Text):
            continue
        path = QPainterPath()
        fill = getattr(item, "fill", None)
        pen: QPen | None = _pen(INK, getattr(item, "width", 1.3))
        if isinstance(item, symbols.Line):
            path.moveTo(*item.points[0])
            for point in item.points[1:]:
                path.lineTo(*point)
        elif isinstance(item, symbols.Shape):
            path.addPolygon(QPolygonF([QPointF(*point) for point in item.points]))
            path.closeSubpath()
            pen = None if fill == "ink" else pen
        elif isinstance(item, symbols.Circle):
            path.addEllipse(QPointF(*item.centre), item.radius, item.radius)
        elif isinstance(item, symbols.Arc):
            (cx, cy), r = item.centre, item.radius
            box = QRectF(cx - r, cy - r, 2 * r, 2 * r)
            path.arcMoveTo(box, item.start)
            path.arcTo(box, item.start, item.span)
        brush = QBrush(_FILLS[fill]) if fill in _FILLS else QBrush()
        strokes.append(Stroke(transform.map(path), pen, brush))
    return strokes


def symbol_texts(type_name: str, local: Placement) -> list[tuple[QRectF, QFont, str]]:
    """The letters of a symbol (V, A, +, ...), upright at their places in the drawn block."""
    texts = []
    for item in symbols.drawing(type_name, local.w, local.h):
        if isinstance(item, symbols.Text):
            x, y = local.local(*item.centre)
            font = QFont("DejaVu Sans")
            font.setPointSizeF(item.size)
            texts.append((QRectF(x - 12, y - 8, 24, 16), font, item.text))
    return texts


def pin_marks(info: PortInfo, local: Placement, connected: set[tuple[str, str]]
              ) -> list[tuple[QPainterPath, QPen, QBrush]]:
    """A small square at each physical port in its domain's colour: hollow while nothing
    is connected to it, filled once something is."""
    marks = []
    for name in info.physical:
        slot = info.slot("phys", name)
        if slot is None:
            continue
        (x, y), _ = local.port(*slot)
        colour = domain_colour(info.domain_of(name))
        path = QPainterPath()
        path.addRect(QRectF(x - PIN_HALF, y - PIN_HALF, 2 * PIN_HALF, 2 * PIN_HALF))
        filled = QBrush(colour) if ("phys", name) in connected else QBrush(QColor("white"))
        marks.append((path, _pen(colour, 1.3), filled))
    return marks
