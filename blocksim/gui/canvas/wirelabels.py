"""Signal labels: a named wire's name drawn beside it on the canvas.

The name is the model's (`Wire.name`, saved in the file); the label only follows the wire's
route, so it is rebuilt with the wires and moved while a block is dragged. Of the spots
beside the wire's segments it takes the one clear of blocks and other labels, crossing the
fewest wires, preferring a horizontal run long enough for the text (above it, where the eye
reads a signal's name in Simulink too). Branches of one net with one name show it once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QGraphicsItem, QGraphicsSimpleTextItem

if TYPE_CHECKING:
    from blocksim.gui.canvas.items import WireItem
    from blocksim.gui.canvas.scene import DiagramScene

LABEL_COLOR = QColor("#1f4e8c")
GAP = 2.0  # pixels between the wire and its label
_FONT = QFont("DejaVu Sans")
_FONT.setPointSizeF(7.5)
_FONT.setItalic(True)

Segment = tuple[tuple[float, float], tuple[float, float]]


class WireLabel(QGraphicsSimpleTextItem):
    """The name of one wire, placed by `WireLabels` beside the wire's current route."""

    def __init__(self, wire: "WireItem"):
        super().__init__(wire.wire.name)
        self.wire = wire
        self.setFont(_FONT)
        self.setBrush(LABEL_COLOR)
        self.setZValue(1)  # above wires, below the rubber wire of a gesture
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # clicks go to what is below
        self.setToolTip(f"{wire.wire.name}: {wire.wire.src} → {wire.wire.dst}")

    def place(self, branches: list[Sequence[tuple[float, float]]], blocks: list[QRectF],
              segments: list[Segment], taken: list[QRectF]) -> None:
        """Move to the free-most spot beside the wire, or else beside another branch of its
        net (which carries the same signal); hidden if the wire has no route."""
        box = self.boundingRect()
        spot = best_spot(self.wire.route, box.width(), box.height(), blocks, segments, taken,
                         branches) if self.wire.route else None
        self.setVisible(spot is not None)
        if spot is not None:
            self.setPos(spot.topLeft())


def candidates(route: Sequence[tuple[float, float]], width: float, height: float
               ) -> list[tuple[QRectF, Segment]]:
    """Boxes a label of this size could take beside the route: above and below the middle
    of each horizontal segment, right and left of each vertical one; each with its segment."""
    found = []
    for a, b in zip(route, route[1:]):
        (ax, ay), (bx, by) = a, b
        if a == b:
            continue
        mx, my = (ax + bx) / 2, (ay + by) / 2
        if ay == by:
            spots = [(mx - width / 2, my - height - GAP), (mx - width / 2, my + GAP)]
        else:
            spots = [(mx + GAP + 1, my - height / 2), (mx - width - GAP - 1, my - height / 2)]
        found += [(QRectF(x, y, width, height), (a, b)) for x, y in spots]
    return found


def _crosses(box: QRectF, segment: Segment) -> bool:
    """Whether an axis-parallel segment passes through the inside of a box."""
    (ax, ay), (bx, by) = segment
    if ay == by:
        return (box.top() < ay < box.bottom() and min(ax, bx) < box.right()
                and max(ax, bx) > box.left())
    return (box.left() < ax < box.right() and min(ay, by) < box.bottom()
            and max(ay, by) > box.top())


def best_spot(route: Sequence[tuple[float, float]], width: float, height: float,
              blocks: list[QRectF], segments: list[Segment], taken: list[QRectF],
              branches: Sequence[Sequence[tuple[float, float]]] = ()) -> QRectF | None:
    """The candidate box that covers the fewest blocks and labels, then crosses the fewest
    wires, then is beside the wire itself rather than another branch of its net, then sits
    by a segment at least as long as the text (horizontal runs first, the longest first);
    None for a route without segments."""
    best = None
    for other, path in enumerate([route, *branches]):
        for box, (a, b) in candidates(path, width, height):
            length = abs(b[0] - a[0]) + abs(b[1] - a[1])
            horizontal = a[1] == b[1]
            score = (sum(box.intersects(r) for r in blocks)
                     + sum(box.intersects(r) for r in taken),
                     sum(_crosses(box, s) for s in segments), other > 0,
                     length < (width if horizontal else height), not horizontal, -length)
            if best is None or score < best[0]:
                best = (score, box)
    return None if best is None else best[1]


class WireLabels:
    """The labels of a scene's wires, rebuilt after the scene rebuilds its wire items."""

    def __init__(self, scene: "DiagramScene"):
        self.scene = scene
        self.items: list[WireLabel] = []

    def sync(self) -> None:
        """One label per named wire (a name repeated on branches of one net: once)."""
        for item in self.items:
            if item.scene() is self.scene:
                self.scene.removeItem(item)
        self.items = []
        shown: set[tuple[str, str]] = set()
        for wire in self.scene.wires:
            name = wire.wire.name
            key = (str(wire.wire.src), name)
            if not name or key in shown:
                continue
            shown.add(key)
            label = WireLabel(wire)
            self.scene.addItem(label)
            self.items.append(label)
        self.follow()

    def follow(self) -> None:
        """Place every label anew, clear of blocks, wires and the labels placed before it
        (after a rebuild, and while a block is dragged)."""
        if not self.items:
            return
        blocks = [item.sceneBoundingRect() for item in self.scene.blocks.values()]
        segments = [s for wire in self.scene.wires for s in zip(wire.route, wire.route[1:])]
        nets: dict[str, list] = {}
        for wire in self.scene.wires:
            nets.setdefault(str(wire.wire.src), []).append(wire)
        taken: list[QRectF] = []
        for item in self.items:
            branches = [w.route for w in nets[str(item.wire.wire.src)] if w is not item.wire]
            item.place(branches, blocks, segments, taken)
            if item.isVisible():
                taken.append(item.sceneBoundingRect())

    def texts(self) -> dict[str, str]:
        """Shown label text by wire key ('src->dst'), for tests and pictures."""
        return {f"{i.wire.wire.src}->{i.wire.wire.dst}": i.text() for i in self.items
                if i.isVisible()}
