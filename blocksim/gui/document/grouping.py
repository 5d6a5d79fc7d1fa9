"""Grouping selected blocks into a new Subsystem block, as a model transformation without Qt.

Wires that cross the selection's boundary become subsystem ports: one Inport per outside
source that feeds the selection (its signal may feed several blocks inside), one Outport per
inside source that feeds something outside. The compiler's rules (blocks/ports.py,
blocksim/compiler/flatten.py) name a subsystem's ports by these blocks' ids, so the outer
wires use `subsystem.in1`, `subsystem.out1`, ...
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Mapping

from blocksim.gui.canvas.geometry import snap
from blocksim.gui.canvas.portinfo import block_placement, port_info
from blocksim.diagram.model import Block, Diagram, PortRef, Wire

PORT_GAP = 60.0  # free space between the grouped blocks and the new Inports/Outports
PORT_WIDTH = 50.0


@dataclass
class Grouping:
    """What grouping changes at the outer level: wires to remove, the block and wires to add."""

    removed_wires: list[int]
    subsystem: Block
    outer_wires: list[Wire] = field(default_factory=list)


def group_blocks(diagram: Diagram, ids: set[str], new_id: str,
                 names: Mapping[str, Any]) -> Grouping:
    """Plan the grouping of blocks `ids` of `diagram` into a Subsystem named `new_id`."""
    chosen = [b for b in diagram.blocks if b.id in ids]
    if not chosen:
        raise ValueError("select the blocks to group first")
    inner = Diagram(blocks=[copy.deepcopy(b) for b in chosen])
    port_y = _port_positions(diagram, names)
    removed: list[int] = []
    incoming: dict[str, list[Wire]] = {}
    outgoing: dict[str, list[Wire]] = {}
    for index, wire in enumerate(diagram.wires):
        src_in, dst_in = wire.src.block in ids, wire.dst.block in ids
        if not (src_in or dst_in):
            continue
        removed.append(index)
        if src_in and dst_in:
            inner.wires.append(copy.deepcopy(wire))
        elif dst_in:
            incoming.setdefault(str(wire.src), []).append(wire)
        else:
            outgoing.setdefault(str(wire.src), []).append(wire)
    left, top, right, bottom = _bounds(chosen, diagram, names)
    taken = {b.id for b in chosen}
    outer: list[Wire] = []

    def order(groups: dict[str, list[Wire]], end: str) -> list[tuple[str, list[Wire]]]:
        return sorted(groups.items(), key=lambda kv: port_y.get(
            (getattr(kv[1][0], end).block, getattr(kv[1][0], end).port), 0.0))

    used_y: list[float] = []
    for n, (src, wires) in enumerate(order(incoming, "dst"), start=1):
        port_id = _free(taken, "in", n)
        y = _free_y(port_y.get((wires[0].dst.block, wires[0].dst.port), top) - 20, used_y)
        layout = {"x": snap(left - PORT_GAP - PORT_WIDTH), "y": y}
        inner.blocks.append(Block(port_id, "Inport", {}, layout))
        for wire in wires:
            inner.wires.append(Wire(PortRef(port_id, "y"), copy.deepcopy(wire.dst)))
        outer.append(Wire(PortRef.parse(src), PortRef(new_id, port_id)))
    used_y = []
    for n, (src, wires) in enumerate(order(outgoing, "src"), start=1):
        port_id = _free(taken, "out", n)
        y = _free_y(port_y.get((wires[0].src.block, wires[0].src.port), top) - 20, used_y)
        inner.blocks.append(Block(port_id, "Outport", {},
                                  {"x": snap(right + PORT_GAP), "y": y}))
        inner.wires.append(Wire(PortRef.parse(src), PortRef(port_id, "u")))
        for wire in wires:
            outer.append(Wire(PortRef(new_id, port_id), copy.deepcopy(wire.dst)))
    sub = Block(new_id, "Subsystem", {}, None, inner)
    info = port_info(sub, names)
    size = block_placement(sub, info).size
    sub.layout = {"x": snap((left + right - size[0]) / 2), "y": snap((top + bottom - size[1]) / 2)}
    return Grouping(removed, sub, outer)


def _port_positions(diagram: Diagram, names: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    """Canvas y of every port of the level, keyed by (block id, port name)."""
    found = {}
    for blk in diagram.blocks:
        info = port_info(blk, names, diagram.wires)
        place = block_placement(blk, info)
        for kind, ports in (("in", info.inputs), ("out", info.outputs)):
            for name in ports:
                found[(blk.id, name)] = place.port(*info.slot(kind, name))[0][1]
    return found


def _bounds(blocks: list[Block], diagram: Diagram,
            names: Mapping[str, Any]) -> tuple[float, float, float, float]:
    rects = []
    for blk in blocks:
        info = port_info(blk, names, diagram.wires)
        rects.append(block_placement(blk, info).rect)
    return (min(r[0] for r in rects), min(r[1] for r in rects),
            max(r[0] + r[2] for r in rects), max(r[1] + r[3] for r in rects))


def _free(taken: set[str], stem: str, n: int) -> str:
    while f"{stem}{n}" in taken:
        n += 1
    taken.add(f"{stem}{n}")
    return f"{stem}{n}"


def _free_y(y: float, used: list[float]) -> float:
    y = snap(y)
    while any(abs(y - other) < 50 for other in used):
        y += 10
    used.append(y)
    return y
