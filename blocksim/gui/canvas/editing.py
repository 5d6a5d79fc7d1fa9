"""Edit operations on the current selection: add, delete, copy, paste, duplicate, rotate,
flip, group into a subsystem, automatic arrangement; each is one undo step.

The clipboard carries a fragment as the text of a blocksim diagram document (blocks plus
the wires between them), so it is checked by the same loader as files when pasted. Plain
text, not a custom mime type: a QMimeData left on the clipboard crashes PySide6 6.12 at exit.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import logging
from typing import Any

from PySide6.QtCore import QObject, QPointF
from PySide6.QtGui import QGuiApplication

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import REQUIRED
from blocksim.errors import DiagramFileError
from blocksim.diagram.format import diagram_from_dict, diagram_to_dict
from blocksim.gui.layout import autolayout
from blocksim.gui.document.commands import (
    AddItems,
    ChangeLayout,
    ChangeWire,
    Composite,
    RemoveItems,
    fresh_id,
)
from blocksim.gui.canvas.freespot import footprint, free_shift
from blocksim.gui.canvas.geometry import snap
from blocksim.gui.document.grouping import group_blocks
from blocksim.gui.canvas.portinfo import block_placement, has_diagram, port_info
from blocksim.gui.canvas.scene import DiagramScene, wire_key
from blocksim.diagram.model import Block, Diagram, PortRef, Wire

log = logging.getLogger(__name__)

MAX_SIGNAL_NAME = 200  # characters (resources/diagram.schema.json)
# Starting values for parameters a block type requires (others start at their defaults).
STARTER_PARAMS: dict[str, dict[str, Any]] = {
    "StateSpace": {"A": [[-1.0]], "B": [[1.0]], "C": [[1.0]]},
}
_KIND_STARTERS = {"scalar": 0.0, "vector": 0.0, "int": 1, "bool": False, "text": "u",
                  "signs": "++"}


def new_block(diagram: Diagram, type_name: str, center: tuple[float, float],
              names: dict[str, Any]) -> Block:
    """A block of `type_name` with a fresh id (type in lower case + number) centred there."""
    block_type = registry.get(type_name)
    if block_type is None:
        raise ValueError(f"unknown block type '{type_name}'")
    params = dict(STARTER_PARAMS.get(type_name, {}))
    for prm in block_type.params:
        if prm.default is REQUIRED and prm.name not in params:
            params[prm.name] = prm.choices[0] if prm.choices else _KIND_STARTERS.get(prm.kind, 0)
    block_id = fresh_id((b.id for b in diagram.blocks), type_name.lower())
    block = Block(block_id, type_name, params)
    if has_diagram(type_name):  # Subsystem, TriggeredSubsystem, ...: an empty inside
        block.subsystem = Diagram()
    info = port_info(block, names)
    w, h = block_placement(block, info).size
    block.layout = {"x": snap(center[0] - w / 2), "y": snap(center[1] - h / 2)}
    return block


class Editor(QObject):
    """The edit operations of one canvas scene."""

    def __init__(self, scene: DiagramScene, parent: QObject | None = None):
        super().__init__(parent)
        self.scene = scene
        self.doc = scene.doc
        scene.blockDropped.connect(self.add_block)

    @property
    def diagram(self) -> Diagram:
        return self.doc.level(self.scene.level)

    def add_block(self, type_name: str, pos: QPointF) -> str | None:
        """Add a block of `type_name` centred at a canvas point; returns its id."""
        try:
            block = new_block(self.diagram, type_name, (pos.x(), pos.y()),
                              self.doc.names(self.scene.level))
        except ValueError as exc:
            log.warning("%s", exc)
            return None
        dx, dy = self._free_shift([block])
        block.layout = {**block.layout, "x": block.layout["x"] + dx,
                        "y": block.layout["y"] + dy}
        self.doc.push(AddItems(self.doc, self.scene.level, [block], text=f"Add {block.id}"))
        self.scene.select_only([block.id])
        return block.id

    def delete(self) -> None:
        ids, wires = self.scene.selected_block_ids(), self.scene.selected_wire_indices()
        if not ids and not wires:
            return
        what = ", ".join(ids) if 0 < len(ids) <= 3 else f"{len(ids) + len(wires)} items"
        self.doc.push(RemoveItems(self.doc, self.scene.level, ids, wires, f"Delete {what}"))

    def select_all(self) -> None:
        """Every block and wire of the shown level (one selection change, not one per item)."""
        self.scene.select_only(list(self.scene.blocks),
                               [wire_key(item.wire) for item in self.scene.wires])

    # ----- clipboard -----
    def fragment(self) -> Diagram | None:
        """The selected blocks and the wires among them, as a diagram of its own."""
        ids = set(self.scene.selected_block_ids())
        if not ids:
            return None
        diagram = self.diagram
        return Diagram(blocks=[copy.deepcopy(b) for b in diagram.blocks if b.id in ids],
                       wires=[copy.deepcopy(w) for w in diagram.wires
                              if w.src.block in ids and w.dst.block in ids])

    def copy(self) -> bool:
        fragment = self.fragment()
        if fragment is None:
            return False
        QGuiApplication.clipboard().setText(json.dumps(diagram_to_dict(fragment), indent=1))
        return True

    def cut(self) -> None:
        if self.copy():
            self.delete()

    def paste(self) -> bool:
        raw = QGuiApplication.clipboard().text()
        if not raw.lstrip().startswith("{"):
            return False
        try:
            fragment = diagram_from_dict(json.loads(raw), source="clipboard")
        except (ValueError, DiagramFileError):
            return False
        self._insert(fragment, self._free_shift(fragment.blocks, fragment.wires), "Paste")
        return True

    def duplicate(self) -> None:
        fragment = self.fragment()
        if fragment is not None:
            self._insert(fragment, self._free_shift(fragment.blocks, fragment.wires),
                         "Duplicate")

    def _free_shift(self, blocks: list[Block], wires: list[Wire] = ()) -> tuple[float, float]:
        """The shift nearest to where `blocks` are that puts none of them, nor its label, on
        top of a block of the shown level (freespot)."""
        names = self.doc.names(self.scene.level)
        taken = [rect for item in self.scene.blocks.values()
                 for rect in footprint(item.placement, item.label)]
        moving = [rect for b in blocks
                  for rect in footprint(block_placement(b, port_info(b, names, list(wires))),
                                        str((b.layout or {}).get("label") or b.id))]
        return free_shift(taken, moving)

    def name_wire(self, index: int, name: str) -> None:
        """Give wire `index` of the shown level a signal name ('' removes it); one undo step."""
        old = self.diagram.wires[index]
        name = " ".join(name.split())[:MAX_SIGNAL_NAME]  # one line, as the file format wants
        if name == old.name:
            return
        new = dataclasses.replace(copy.deepcopy(old), name=name)
        text = f"Name signal {old.src} '{name}'" if name else f"Remove the name of {old.src}"
        self.doc.push(ChangeWire(self.doc, self.scene.level, index, new, text))

    def _insert(self, fragment: Diagram, shift: tuple[float, float], verb: str) -> None:
        """Add copies of a fragment's blocks, renamed where their ids are taken, shifted."""
        dx, dy = shift
        taken = {b.id for b in self.diagram.blocks}
        renames: dict[str, str] = {}
        blocks = []
        for blk in fragment.blocks:
            new_id = blk.id if blk.id not in taken else fresh_id(taken, blk.id)
            taken.add(new_id)
            renames[blk.id] = new_id
            blk = copy.deepcopy(blk)
            blk.id = new_id
            layout = dict(blk.layout or {})
            layout["x"] = float(layout.get("x", 0.0)) + dx
            layout["y"] = float(layout.get("y", 0.0)) + dy
            blk.layout = layout
            blocks.append(blk)
        wires = [Wire(PortRef(renames[w.src.block], w.src.port),
                      PortRef(renames[w.dst.block], w.dst.port),
                      [(x + dx, y + dy) for x, y in w.points], w.name, w.analysis)
                 for w in fragment.wires if w.src.block in renames and w.dst.block in renames]
        self.doc.push(AddItems(self.doc, self.scene.level, blocks, wires,
                               f"{verb} {len(blocks)} block{'s' * (len(blocks) != 1)}"))
        self.scene.select_only([b.id for b in blocks])

    # ----- orientation -----
    def rotate(self, quarter_turns: int = 1) -> None:
        self._reorient("Rotate", lambda lay: {
            **lay, "rotation": (int(lay.get("rotation", 0)) + 90 * quarter_turns) % 360})

    def flip(self) -> None:
        self._reorient("Flip", lambda lay: {**lay, "flip": not lay.get("flip", False)})

    def _reorient(self, verb: str, change) -> None:
        ids = self.scene.selected_block_ids()
        if not ids:
            return
        diagram = self.diagram
        layouts = {}
        for block_id in ids:
            item = self.scene.blocks[block_id]
            old = dict(diagram.block(block_id).layout or {})
            new = change(old)
            for key, default in (("rotation", 0), ("flip", False)):
                if new.get(key) == default:
                    new.pop(key, None)
            # keep the block's centre where it is
            before = item.base
            after = dataclasses.replace(before, rotation=int(new.get("rotation", 0)),
                                        flip=bool(new.get("flip", False)))
            cx = float(old.get("x", 0.0)) + before.size[0] / 2
            cy = float(old.get("y", 0.0)) + before.size[1] / 2
            new["x"], new["y"] = snap(cx - after.size[0] / 2), snap(cy - after.size[1] / 2)
            layouts[block_id] = new
        self.doc.push(ChangeLayout(self.doc, self.scene.level, layouts, {},
                                   f"{verb} {', '.join(ids[:3])}{'...' if len(ids) > 3 else ''}"))

    def nudge(self, dx: float, dy: float) -> None:
        """Move the selection by a grid step; repeated nudges are one undo step."""
        ids = self.scene.selected_block_ids()
        if not ids:
            return
        diagram = self.diagram
        layouts = {}
        for block_id in ids:
            lay = dict(diagram.block(block_id).layout or {})
            lay["x"] = float(lay.get("x", 0.0)) + dx
            lay["y"] = float(lay.get("y", 0.0)) + dy
            layouts[block_id] = lay
        chosen = set(ids)
        points = {i: [(x + dx, y + dy) for x, y in w.points] for i, w in enumerate(diagram.wires)
                  if w.points and w.src.block in chosen and w.dst.block in chosen}
        self.doc.push(ChangeLayout(self.doc, self.scene.level, layouts, points, "Nudge",
                                   merge=True))

    # ----- structure -----
    def group(self) -> str | None:
        """Group the selected blocks into a new Subsystem; returns its id."""
        ids = self.scene.selected_block_ids()
        if not ids:
            return None
        level = self.scene.level
        diagram = self.diagram
        new_id = fresh_id((b.id for b in diagram.blocks if b.id not in ids), "subsystem")
        plan = group_blocks(diagram, set(ids), new_id, self.doc.names(level))
        self.doc.push(Composite(f"Group {len(ids)} blocks into {new_id}", [
            RemoveItems(self.doc, level, ids, plan.removed_wires),
            AddItems(self.doc, level, [plan.subsystem], plan.outer_wires)]))
        self.scene.select_only([new_id])
        return new_id

    def auto_arrange(self) -> None:
        """Lay out the current level afresh (blocks and wire bends) as one undo step."""
        diagram = self.diagram
        trial = copy.deepcopy(diagram)
        autolayout.layout_diagram(trial, self.doc.names(self.scene.level), recursive=False,
                                  force=True)
        layouts = {b.id: b.layout for b in trial.blocks}
        points = {i: w.points for i, w in enumerate(trial.wires)}
        self.doc.push(ChangeLayout(self.doc, self.scene.level, layouts, points, "Arrange"))
