"""Signal labels: a named wire's name drawn beside it on the canvas.

The name is the model's (`Wire.name`, saved in the file); the label only follows the wire's
route, so it is rebuilt with the wires and moved while a block is dragged. It sits above the
longest horizontal run of the wire (beside the longest vertical one if there is none),
where the eye reads a signal's name in Simulink too. Branches of one net that carry the same
name show it once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from PySide6.QtCore import QPointF, Qt
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


class WireLabel(QGraphicsSimpleTextItem):
    """The name of one wire, placed by `place` along the wire's current route."""

    def __init__(self, wire: "WireItem"):
        super().__init__(wire.wire.name)
        self.wire = wire
        self.setFont(_FONT)
        self.setBrush(LABEL_COLOR)
        self.setZValue(1)  # above wires, below the rubber wire of a gesture
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # clicks go to the wire or the canvas below
        self.setToolTip(f"{wire.wire.name}: {wire.wire.src} → {wire.wire.dst}")
        self.place()

    def place(self) -> None:
        """Move beside the wire's longest straight run (hidden if the wire has no route)."""
        spot = label_anchor(self.wire.route)
        self.setVisible(spot is not None)
        if spot is None:
            return
        (x, y), horizontal = spot
        box = self.boundingRect()
        if horizontal:  # centred above the run
            self.setPos(QPointF(x - box.width() / 2, y - box.height() - GAP))
        else:  # to the right of the run, centred on it
            self.setPos(QPointF(x + GAP + 1, y - box.height() / 2))


def label_anchor(route: Sequence[tuple[float, float]]
                 ) -> tuple[tuple[float, float], bool] | None:
    """The middle of the longest horizontal segment of a route (else of the longest
    vertical one), and whether it is horizontal; None for a route without segments."""
    best = None
    for (ax, ay), (bx, by) in zip(route, route[1:]):
        horizontal = ay == by
        length = abs(bx - ax) + abs(by - ay)
        key = (horizontal, length)
        if length > 0 and (best is None or key > best[0]):
            best = (key, ((ax + bx) / 2, (ay + by) / 2), horizontal)
    return None if best is None else (best[1], best[2])


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

    def follow(self) -> None:
        """Re-place every label (the routes changed during a drag)."""
        for item in self.items:
            item.place()

    def texts(self) -> dict[str, str]:
        """Shown label text by wire key ('src->dst'), for tests and pictures."""
        return {f"{i.wire.wire.src}->{i.wire.wire.dst}": i.text() for i in self.items
                if i.isVisible()}
