"""Undo commands: the only code that changes the diagram model while the editor runs.

Each command keeps just what it needs to go both ways (the blocks it removed and where they
were, the old and new layouts, ...), never a snapshot of the whole diagram. Commands address
a diagram level by its subsystem path, so edits inside subsystems share one undo stack.
"""
from __future__ import annotations

import copy
import re
from typing import Any, Iterable, Mapping

from PySide6.QtGui import QUndoCommand

from blocksim.gui.canvas.reroute import after_move
from blocksim.gui.document.document import DiagramDocument, Level
from blocksim.diagram.model import (ANALYSIS_ROLES, Block, Diagram, PortRef,
                                    SimulationSettings, Wire)

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MERGE_NUDGE = 1


class LevelCommand(QUndoCommand):
    """A command on one diagram level; subclasses implement `apply` and `revert`."""

    def __init__(self, doc: DiagramDocument, level: Level, text: str):
        super().__init__(text)
        self.doc = doc
        self.level = tuple(level)

    def redo(self) -> None:
        self.apply(self.doc.level(self.level))
        self.doc.notify(self.level)

    def undo(self) -> None:
        self.revert(self.doc.level(self.level))
        self.doc.notify(self.level)

    def apply(self, diagram: Diagram) -> None:
        raise NotImplementedError

    def revert(self, diagram: Diagram) -> None:
        raise NotImplementedError


class Composite(QUndoCommand):
    """Several commands as one undo step: done in order, undone in reverse.

    Plain Python composition, not Qt's parent/child commands: with PySide6 those are freed
    twice (by the parent and by Python) and crash the interpreter at exit.
    """

    def __init__(self, text: str, parts: list[QUndoCommand]):
        super().__init__(text)
        self.parts = list(parts)

    def redo(self) -> None:
        for part in self.parts:
            part.redo()

    def undo(self) -> None:
        for part in reversed(self.parts):
            part.undo()


class AddItems(LevelCommand):
    """Add blocks and wires at the end of a level (add block, connect, paste, duplicate)."""

    def __init__(self, doc: DiagramDocument, level: Level, blocks: Iterable[Block] = (),
                 wires: Iterable[Wire] = (), text: str = "Add"):
        super().__init__(doc, level, text)
        self.blocks = [copy.deepcopy(b) for b in blocks]
        self.wires = [copy.deepcopy(w) for w in wires]

    def apply(self, diagram: Diagram) -> None:
        taken = {b.id for b in diagram.blocks}
        for blk in self.blocks:
            if blk.id in taken:
                raise ValueError(f"a block '{blk.id}' exists already")
        diagram.blocks.extend(copy.deepcopy(self.blocks))
        diagram.wires.extend(copy.deepcopy(self.wires))

    def revert(self, diagram: Diagram) -> None:
        if self.wires:
            del diagram.wires[len(diagram.wires) - len(self.wires):]
        if self.blocks:
            del diagram.blocks[len(diagram.blocks) - len(self.blocks):]


class RemoveItems(LevelCommand):
    """Delete blocks (with every wire touching them) and wires; undo puts them back in place."""

    def __init__(self, doc: DiagramDocument, level: Level, block_ids: Iterable[str] = (),
                 wire_indices: Iterable[int] = (), text: str = "Delete"):
        super().__init__(doc, level, text)
        diagram = doc.level(level)
        ids = set(block_ids)
        self.blocks = [(i, copy.deepcopy(b)) for i, b in enumerate(diagram.blocks) if b.id in ids]
        wires = set(wire_indices)
        self.wires = [(i, copy.deepcopy(w)) for i, w in enumerate(diagram.wires)
                      if i in wires or w.src.block in ids or w.dst.block in ids]

    def apply(self, diagram: Diagram) -> None:
        for i, _ in reversed(self.wires):
            del diagram.wires[i]
        for i, _ in reversed(self.blocks):
            del diagram.blocks[i]

    def revert(self, diagram: Diagram) -> None:
        for i, blk in self.blocks:
            diagram.blocks.insert(i, copy.deepcopy(blk))
        for i, wire in self.wires:
            diagram.wires.insert(i, copy.deepcopy(wire))


class ChangeWire(LevelCommand):
    """Replace one wire: reconnect an end, or move its bend points."""

    def __init__(self, doc: DiagramDocument, level: Level, index: int, new: Wire,
                 text: str = "Change wire"):
        super().__init__(doc, level, text)
        self.index = index
        self.old = copy.deepcopy(doc.level(level).wires[index])
        self.new = copy.deepcopy(new)

    def apply(self, diagram: Diagram) -> None:
        diagram.wires[self.index] = copy.deepcopy(self.new)

    def revert(self, diagram: Diagram) -> None:
        diagram.wires[self.index] = copy.deepcopy(self.old)


class SetAnalysisMarks(LevelCommand):
    """Set the linear analysis marks of the signal an output port drives, on every wire it
    drives, so that all branches of the signal agree (blocksim.diagram.analysis_points)."""

    def __init__(self, doc: DiagramDocument, level: Level, port: PortRef,
                 marks: Iterable[str], text: str):
        super().__init__(doc, level, text)
        diagram = doc.level(level)
        self.indices = [i for i, w in enumerate(diagram.wires) if w.src == port]
        if not self.indices:
            raise ValueError(f"no wire starts at {port}")
        self.old = [diagram.wires[i].analysis for i in self.indices]
        wanted = set(marks)
        self.new = tuple(role for role in ANALYSIS_ROLES if role in wanted)

    def apply(self, diagram: Diagram) -> None:
        for i in self.indices:
            diagram.wires[i].analysis = self.new

    def revert(self, diagram: Diagram) -> None:
        for i, marks in zip(self.indices, self.old):
            diagram.wires[i].analysis = marks


class ChangeLayout(LevelCommand):
    """New layouts for some blocks and new bend points for some wires (move, rotate, flip).

    The wires the change would spoil (through a block, doubling back, on another net's
    wire) are re-routed in the same step (`reroute.after_move`), so undo puts both back.
    Keyboard nudges of the same blocks merge into one step.
    """

    def __init__(self, doc: DiagramDocument, level: Level,
                 layouts: Mapping[str, dict[str, Any] | None],
                 points: Mapping[int, list[tuple[float, float]]] | None = None,
                 text: str = "Move", merge: bool = False, reroute: bool = True):
        super().__init__(doc, level, text)
        diagram = doc.level(level)
        self.new_layouts = copy.deepcopy(dict(layouts))
        self.old_layouts = {i: copy.deepcopy(diagram.block(i).layout) for i in layouts}
        self.new_points = {i: list(p) for i, p in (points or {}).items()}
        if reroute and self.new_layouts:
            self.new_points.update(after_move(diagram, doc.names(level), self.new_layouts,
                                              self.new_points))
        self.old_points = {i: list(diagram.wires[i].points) for i in self.new_points}
        self.merge = merge

    def apply(self, diagram: Diagram) -> None:
        self._set(diagram, self.new_layouts, self.new_points)

    def revert(self, diagram: Diagram) -> None:
        self._set(diagram, self.old_layouts, self.old_points)

    @staticmethod
    def _set(diagram: Diagram, layouts: Mapping, points: Mapping) -> None:
        for block_id, layout in layouts.items():
            diagram.block(block_id).layout = copy.deepcopy(layout)
        for index, pts in points.items():
            diagram.wires[index].points = list(pts)

    def id(self) -> int:
        return _MERGE_NUDGE if self.merge else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        """Take a following nudge of the same blocks into this step. The wires each nudge
        re-routed may differ: the step keeps the first old and the last new value of each."""
        if not (isinstance(other, ChangeLayout) and other.merge and self.merge
                and other.level == self.level
                and set(other.new_layouts) == set(self.new_layouts)):
            return False
        self.new_layouts = other.new_layouts
        self.new_points = {**self.new_points, **other.new_points}
        self.old_points = {**other.old_points, **self.old_points}
        return True


class SetParams(LevelCommand):
    """Replace a block's parameter dict."""

    def __init__(self, doc: DiagramDocument, level: Level, block_id: str,
                 params: Mapping[str, Any]):
        super().__init__(doc, level, f"Set parameters of {block_id}")
        self.block_id = block_id
        self.old = copy.deepcopy(doc.level(level).block(block_id).params)
        self.new = copy.deepcopy(dict(params))

    def apply(self, diagram: Diagram) -> None:
        diagram.block(self.block_id).params = copy.deepcopy(self.new)

    def revert(self, diagram: Diagram) -> None:
        diagram.block(self.block_id).params = copy.deepcopy(self.old)


class RenameBlock(LevelCommand):
    """Give a block a new id, and follow it in every wire that names it.

    Renaming an Inport, Outport or ConnectionPort renames the subsystem's port, so the wires
    one level up that use that port follow too.
    """

    def __init__(self, doc: DiagramDocument, level: Level, old: str, new: str):
        super().__init__(doc, level, f"Rename {old} to {new}")
        diagram = doc.level(level)
        check_new_id(diagram, new)
        self.old, self.new = old, new
        block = diagram.block(old)
        self.wires = [i for i, w in enumerate(diagram.wires) if old in (w.src.block, w.dst.block)]
        self.outer: list[tuple[int, str]] = []  # (wire index one level up, "src"/"dst")
        if level and block.type in ("Inport", "Outport", "ConnectionPort"):
            parent, owner = doc.level(level[:-1]), level[-1]
            # a connection (a ConnectionPort's) may name the port at either end
            ends = {"Inport": ("dst",), "Outport": ("src",)}.get(block.type, ("src", "dst"))
            for i, w in enumerate(parent.wires):
                for end in ends:
                    ref = getattr(w, end)
                    if ref.block == owner and ref.port == old:
                        self.outer.append((i, end))

    def apply(self, diagram: Diagram) -> None:
        self._rename(diagram, self.old, self.new)

    def revert(self, diagram: Diagram) -> None:
        self._rename(diagram, self.new, self.old)

    def _rename(self, diagram: Diagram, a: str, b: str) -> None:
        diagram.block(a).id = b
        for i in self.wires:
            wire = diagram.wires[i]
            if wire.src.block == a:
                wire.src = PortRef(b, wire.src.port)
            if wire.dst.block == a:
                wire.dst = PortRef(b, wire.dst.port)
        if self.outer:
            parent = self.doc.level(self.level[:-1])
            for i, end in self.outer:
                ref = getattr(parent.wires[i], end)
                setattr(parent.wires[i], end, PortRef(ref.block, b))
            self.doc.notify(self.level[:-1])


class SetDiagramParameters(LevelCommand):
    """Replace the named parameters of the top diagram or of a subsystem."""

    def __init__(self, doc: DiagramDocument, level: Level, parameters: Mapping[str, Any]):
        super().__init__(doc, level, "Set diagram parameters")
        self.old = copy.deepcopy(doc.level(level).parameters)
        self.new = copy.deepcopy(dict(parameters))

    def apply(self, diagram: Diagram) -> None:
        diagram.parameters = copy.deepcopy(self.new)

    def revert(self, diagram: Diagram) -> None:
        diagram.parameters = copy.deepcopy(self.old)


class SetSimulation(LevelCommand):
    """Replace the simulation settings (stop time, solver, tolerances, ...)."""

    def __init__(self, doc: DiagramDocument, settings: SimulationSettings):
        super().__init__(doc, (), "Set simulation settings")
        self.old = copy.deepcopy(doc.diagram.simulation)
        self.new = copy.deepcopy(settings)

    def apply(self, diagram: Diagram) -> None:
        diagram.simulation = copy.deepcopy(self.new)

    def revert(self, diagram: Diagram) -> None:
        diagram.simulation = copy.deepcopy(self.old)


def check_new_id(diagram: Diagram, new: str) -> None:
    """ValueError with a message for the user if `new` cannot be a block id here."""
    if not IDENTIFIER.fullmatch(new):
        raise ValueError(f"'{new}' is not a valid block id (letters, digits and _, "
                         f"not starting with a digit)")
    if any(b.id == new for b in diagram.blocks):
        raise ValueError(f"there is already a block '{new}'")


def fresh_id(taken: Iterable[str], base: str) -> str:
    """`base` followed by the smallest number that makes an id not in `taken`."""
    taken = set(taken)
    stem = re.sub(r"\d+$", "", base) or "block"
    stem = re.sub(r"[^A-Za-z0-9_]", "_", stem)
    if not IDENTIFIER.fullmatch(stem):
        stem = "b_" + stem
    n = 1
    while f"{stem}{n}" in taken:
        n += 1
    return f"{stem}{n}"
