"""The canvas scene: mirrors one diagram level of the document as block and wire items.

It observes the document (`changed`) and brings its items up to date; it never edits the
model directly. Mouse gestures are handled by `interaction.Gestures`, which turns each one
into a single undo command.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from typing import Mapping

from PySide6.QtCore import QPointF, QRectF, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsScene, QGraphicsSceneMouseEvent

from blocksim.gui.document.document import DiagramDocument, Level
from blocksim.gui.canvas.analysismarks import AnalysisMarks
from blocksim.gui.canvas.interaction import Gestures
from blocksim.gui.canvas.items import BlockItem, WireItem
from blocksim.gui.canvas.nets import net_keys
from blocksim.gui.canvas.portinfo import port_info
from blocksim.gui.canvas.routecheck import drawn_glyphs
from blocksim.gui.canvas.routing import junctions
from blocksim.gui.canvas.sampletimes import SampleTimes
from blocksim.gui.canvas.wirelabels import WireLabels

log = logging.getLogger(__name__)

BLOCK_MIME = "application/x-blocksim-block"


def wire_key(wire) -> str:
    """How the scene recognises a wire across rebuilds: its two ends."""
    return f"{wire.src}->{wire.dst}"


class DiagramScene(QGraphicsScene):
    """Items for the blocks and wires of one level; follows the document's changes."""

    levelChanged = Signal(tuple)
    openRequested = Signal(str)  # a block with a nested diagram was double-clicked
    blockActivated = Signal(str)  # another block was double-clicked
    blockDropped = Signal(str, QPointF)  # a block type dropped from the palette

    def __init__(self, doc: DiagramDocument, parent=None, cache_items: bool = True):
        super().__init__(parent)
        self.doc = doc
        # Pixmap caches make panning cheap on screen; a picture export (SVG) wants vectors.
        self.cache_items = cache_items
        self.level: Level = ()
        self.blocks: dict[str, BlockItem] = {}
        self.wires: list[WireItem] = []
        self.marked_blocks: set[str] = set()
        self.marked_wires: set[str] = set()
        self.marked_ports: dict[str, frozenset[str]] = {}  # block id -> ringed port names
        self._signatures: dict[str, tuple] = {}
        self._models: dict[str, object] = {}  # block id -> model Block, as of the last sync
        self._nets: list[str] = []  # the net of each wire of the level (see `nets`)
        self.sample_times: SampleTimes | None = None  # rates to colour by (None: no colours)
        self.gestures = Gestures(self)
        self.labels = WireLabels(self)  # signal names beside their wires
        self.analysis_marks = AnalysisMarks(self)  # linear analysis points at their ports
        self.setBackgroundBrush(QColor("white"))
        doc.changed.connect(self._on_changed)
        doc.reset.connect(self._on_reset)
        self.sync()

    # ----- following the document -----
    def set_level(self, level: Level) -> None:
        """Show another level (a subsystem's inside, or back up)."""
        self.level = tuple(level)
        self.clear_items()
        self.sync()
        self.levelChanged.emit(self.level)

    def clear_items(self) -> None:
        for item in list(self.blocks.values()) + self.wires:
            self.removeItem(item)
        self.blocks.clear()
        self.wires.clear()
        self._signatures.clear()
        self._models.clear()

    def _on_reset(self) -> None:
        self.marked_blocks, self.marked_wires, self.marked_ports = set(), set(), {}
        self.set_level(())

    def _on_changed(self, level: Level) -> None:
        self.sync()

    def sync(self) -> None:
        """Bring the items in line with the model; selection is kept by id."""
        if not self.doc.has_level(self.level):
            level = self.level
            while level and not self.doc.has_level(level):
                level = level[:-1]
            self.set_level(level)
            return
        before = self._selection()
        # Items are replaced one by one: the selection would pass through states that are
        # not the user's (none, or a renamed block unselected), so the panels hear of it
        # once, at the end, and only if it changed.
        blocked = self.blockSignals(True)
        try:
            self._rebuild(*before)
        finally:
            self.blockSignals(blocked)
        after = self._selection()
        if (after[0], after[2]) != (before[0], before[2]):
            self.selectionChanged.emit()
        # room to scroll around the drawing, growing with it
        self.setSceneRect(self.itemsBoundingRect().adjusted(-2000, -2000, 2000, 2000))
        self.update()

    def _selection(self) -> tuple[set[str], set[int], set[str]]:
        """Selected block ids, the ids of their model objects (which survive a rename) and
        selected wire keys."""
        selected = {i.block_id for i in self.blocks.values() if i.isSelected()}
        models = {id(self._models[b]) for b in selected if b in self._models}
        return selected, models, {wire_key(w.wire) for w in self.wires if w.isSelected()}

    def _rebuild(self, selected: set[str], renamed: set[int], selected_wires: set[str]) -> None:
        diagram = self.doc.level(self.level)
        names = self.doc.names(self.level)
        infos = {blk.id: port_info(blk, names, diagram.wires) for blk in diagram.blocks}
        connected: dict[str, set] = defaultdict(set)
        for wire in diagram.wires:
            for end, default in ((wire.src, "out"), (wire.dst, "in")):
                info = infos.get(end.block)
                connected[end.block].add((info.kind_of(end.port, default) if info else default,
                                          end.port))
        self._nets = net_keys(diagram.wires, lambda ref: ref.block in infos and (
            ref.port in infos[ref.block].physical))
        keep: dict[str, BlockItem] = {}
        texts = drawn_glyphs(diagram)  # the same the routing check sizes blocks by
        for blk in diagram.blocks:
            info = infos[blk.id]
            text = texts[blk.id]
            signature = (blk.type, repr(blk.params), repr(blk.layout), info, text,
                         frozenset(connected[blk.id]))
            item = self.blocks.get(blk.id)
            if item is None or self._signatures.get(blk.id) != signature:
                if item is not None:
                    self.removeItem(item)
                item = BlockItem(blk, info, text, connected[blk.id], self.cache_items)
                item.on_moved = self._block_moved
                self.addItem(item)
            item.marked = blk.id in self.marked_blocks
            item.marked_ports = self.marked_ports.get(blk.id, frozenset())
            item.setSelected(blk.id in selected or id(blk) in renamed)
            keep[blk.id] = item
            self._signatures[blk.id] = signature
        for block_id, item in self.blocks.items():
            if block_id not in keep:
                self.removeItem(item)
                self._signatures.pop(block_id, None)
        self.blocks = keep
        self._models = {blk.id: blk for blk in diagram.blocks}
        # A wire item is kept while its wire, bends and end blocks' items are the same:
        # after a move only the moved blocks' wires (and the re-routed ones) are rebuilt.
        old = {item.signature: item for item in self.wires}
        wires = []
        for index, wire in enumerate(diagram.wires):
            src, dst = self.blocks.get(wire.src.block), self.blocks.get(wire.dst.block)
            signature = (index, id(wire), str(wire.src), str(wire.dst),
                         tuple(map(tuple, wire.points)), id(src), id(dst))
            item = old.pop(signature, None)
            if item is None:
                item = WireItem(index, wire, self.blocks.get)
                item.signature = signature
                self.addItem(item)
            item.marked = wire_key(wire) in self.marked_wires
            item.setSelected(wire_key(wire) in selected_wires)
            wires.append(item)
        for item in old.values():
            self.removeItem(item)
        self.wires = wires
        self.labels.sync()
        self.analysis_marks.sync()
        self._update_junctions()
        if self.sample_times is not None:
            self._colour_items()

    def _block_moved(self, item: BlockItem) -> None:
        for wire in self.wires:
            if item.block_id in (wire.wire.src.block, wire.wire.dst.block):
                wire.update_path()
        self.labels.follow()
        self.analysis_marks.follow()
        self._update_junctions()

    def _update_junctions(self) -> None:
        """Dots where the wires of one net split (a branch, or three connections meeting)."""
        nets: dict[str, list[WireItem]] = defaultdict(list)
        for item in self.wires:
            item.junctions = []
            nets[self.net_of(item)].append(item)
        for items in nets.values():
            if len(items) > 1:
                items[0].junctions = junctions(i.route for i in items if i.route)
                items[0].update()

    # ----- queries -----
    def net_of(self, item: WireItem) -> str:
        """The net of a wire item (see `nets`): its source port, or for a connection the
        physical net it belongs to."""
        nets = self._nets
        return nets[item.index] if item.index < len(nets) else str(item.wire.src)

    def selected_block_ids(self) -> list[str]:
        """Ids of the selected blocks, in the diagram's order."""
        order = [b.id for b in self.doc.level(self.level).blocks]
        chosen = {i.block_id for i in self.blocks.values() if i.isSelected()}
        return [b for b in order if b in chosen]

    def selected_wire_indices(self) -> list[int]:
        return [w.index for w in self.wires if w.isSelected()]

    def port_at(self, pos: QPointF, radius: float = 9.0) -> tuple[BlockItem, str, str] | None:
        """The block item and (kind, port) nearest to a canvas point, if one is close."""
        best = None
        for item in self.blocks.values():
            hit = item.port_near(pos, radius)
            if hit is not None:
                (x, y), _ = item.port_position(*hit)
                d = (x - pos.x()) ** 2 + (y - pos.y()) ** 2
                if best is None or d < best[0]:
                    best = (d, item, hit)
        return (best[1], *best[2]) if best else None

    def block_at(self, pos: QPointF) -> BlockItem | None:
        for item in self.items(pos):
            if isinstance(item, BlockItem):
                return item
        return None

    def wire_at(self, pos: QPointF) -> WireItem | None:
        for item in self.items(pos):
            if isinstance(item, WireItem):
                return item
        return None

    def diagram_rect(self) -> QRectF:
        """The area covered by blocks and wires (labels included)."""
        rect = QRectF()
        for item in list(self.blocks.values()) + self.wires:
            rect = rect.united(item.sceneBoundingRect())
        return rect

    # ----- sample-time colours (a view concern: the model is not touched) -----
    def set_sample_times(self, rates: SampleTimes | None) -> None:
        """Colour blocks and wires by these rates (see `sampletimes`); None: no colours."""
        self.sample_times = rates
        self._colour_items()

    def _colour_items(self) -> None:
        rates = self.sample_times
        if rates is None or not self.doc.has_level(self.level):
            for item in list(self.blocks.values()) + self.wires:
                item.set_rate(None, "")
            return
        blocks, signals = rates.level_rates(self.doc.diagram, self.level)
        for block_id, item in self.blocks.items():
            rate = blocks.get(block_id)
            item.set_rate(rates.color(rate), rates.describe(rate) if rate is not None else "")
        for item in self.wires:
            rate = signals.get(str(item.wire.src))
            item.set_rate(rates.color(rate), rates.describe(rate) if rate is not None else "")

    # ----- highlights -----
    def set_marks(self, blocks: set[str], wires: set[str] = frozenset(),
                  ports: Mapping[str, set[str]] | None = None) -> None:
        """Outline blocks (ids at this level) and wires (see `wire_key`) in red, and ring
        the ports named per block in `ports`."""
        self.marked_blocks, self.marked_wires = set(blocks), set(wires)
        self.marked_ports = {b: frozenset(p) for b, p in (ports or {}).items() if p}
        for block_id, item in self.blocks.items():
            item.marked = block_id in self.marked_blocks
            item.marked_ports = self.marked_ports.get(block_id, frozenset())
            item.update()
        for item in self.wires:
            item.marked = wire_key(item.wire) in self.marked_wires
            item.update()

    def select_only(self, block_ids=(), wire_keys=()) -> None:
        """Select exactly these; items already in the right state are left alone, so
        selecting what is selected changes nothing (the inspector keeps its form)."""
        chosen, keys = set(block_ids), set(wire_keys)
        wanted = [self.blocks[b] for b in chosen if b in self.blocks]
        wanted += [item for item in self.wires if wire_key(item.wire) in keys]
        before = set(self.selectedItems())
        # one selectionChanged at the end, not one per item (the window and panels react
        # to each: pasting 1,000 blocks took most of a minute)
        blocked = self.blockSignals(True)
        try:
            for item in wanted:
                item.setSelected(True)
            keep = set(wanted)
            for item in self.selectedItems():
                if item not in keep:
                    item.setSelected(False)
        finally:
            self.blockSignals(blocked)
        if set(self.selectedItems()) != before:
            self.selectionChanged.emit()

    # ----- events -----
    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if not self.gestures.press(event):
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if not self.gestures.move(event):
            super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if not self.gestures.release(event):
            super().mouseReleaseEvent(event)
            self.gestures.after_release(event)

    def mouseDoubleClickEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        item = self.block_at(event.scenePos())
        if item is None:
            super().mouseDoubleClickEvent(event)
            return
        if item.has_diagram:
            self.openRequested.emit(item.block_id)
        else:
            self.blockActivated.emit(item.block_id)
        event.accept()

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasFormat(BLOCK_MIME):
            event.acceptProposedAction()
        else:
            event.ignore()

    dragMoveEvent = dragEnterEvent

    def dropEvent(self, event) -> None:
        data = event.mimeData()
        if not data.hasFormat(BLOCK_MIME):
            event.ignore()
            return
        type_name = bytes(data.data(BLOCK_MIME)).decode("utf-8").strip()
        event.acceptProposedAction()
        self.blockDropped.emit(type_name, event.scenePos())
