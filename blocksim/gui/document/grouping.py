"""Grouping selected blocks into a new Subsystem block, as a model transformation without Qt.

Wires that cross the selection's boundary become subsystem ports: one Inport per outside
source that feeds the selection (its signal may feed several blocks inside), one Outport per
inside source that feeds something outside; one ConnectionPort per inside physical port
connected to something outside (a connection has no direction: the port joins both
sides), on the side of the group where the outside lies. The compiler's rules
(blocks/ports.py, blocksim/compiler/flatten.py) name a subsystem's ports by these blocks'
ids, so the outer wires use `subsystem.in1`, `subsystem.out1`, `subsystem.conn1`, ...
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Mapping

from blocksim.gui.canvas.geometry import Point, snap
from blocksim.gui.canvas.portinfo import block_placement, port_info
from blocksim.diagram.model import ANALYSIS_ROLES, Block, Diagram, PortRef, Wire

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
    points = _port_points(diagram, names)
    port_y = {key: point[1] for key, point in points.items()}
    removed: list[int] = []
    incoming: dict[str, list[Wire]] = {}
    outgoing: dict[str, list[Wire]] = {}
    crossing: dict[str, list[tuple[PortRef, PortRef]]] = {}  # inside connector: (in, out)
    infos = {b.id: port_info(b, names, diagram.wires) for b in diagram.blocks}
    for index, wire in enumerate(diagram.wires):
        src_in, dst_in = wire.src.block in ids, wire.dst.block in ids
        if not (src_in or dst_in):
            continue
        removed.append(index)
        inside, outside = (wire.src, wire.dst) if src_in else (wire.dst, wire.src)
        info = infos.get(inside.block)
        if src_in and dst_in:
            inner.wires.append(copy.deepcopy(wire))
        elif info is not None and inside.port in info.physical:
            crossing.setdefault(str(inside), []).append((inside, outside))
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
        outer.append(Wire(PortRef.parse(src), PortRef(new_id, port_id), analysis=_marks(wires)))
    used_y = []
    for n, (src, wires) in enumerate(order(outgoing, "src"), start=1):
        port_id = _free(taken, "out", n)
        y = _free_y(port_y.get((wires[0].src.block, wires[0].src.port), top) - 20, used_y)
        inner.blocks.append(Block(port_id, "Outport", {},
                                  {"x": snap(right + PORT_GAP), "y": y}))
        inner.wires.append(Wire(PortRef.parse(src), PortRef(port_id, "u"), analysis=_marks(wires)))
        for wire in wires:
            outer.append(Wire(PortRef(new_id, port_id), copy.deepcopy(wire.dst)))
    _connection_ports(crossing, infos, inner, outer, taken, new_id, points,
                      (left, top, right, bottom))
    sub = Block(new_id, "Subsystem", {}, None, inner)
    info = port_info(sub, names)
    size = block_placement(sub, info).size
    sub.layout = {"x": snap((left + right - size[0]) / 2), "y": snap((top + bottom - size[1]) / 2)}
    return Grouping(removed, sub, outer)


def _connection_ports(crossing: Mapping[str, list[tuple[PortRef, PortRef]]],
                      infos: Mapping[str, Any], inner: Diagram, outer: list[Wire],
                      taken: set[str], new_id: str, port_x: Mapping[tuple[str, str], Point],
                      bounds: tuple[float, float, float, float]) -> None:
    """A ConnectionPort inside for each inside physical port connected outside, joined to
    it inside and to the outside ports outside; left of the group if most of what it
    joins outside lies left of the group's middle, else right."""
    left, top, right, bottom = bounds
    middle = (left + right) / 2
    used: dict[bool, list[float]] = {True: [], False: []}
    ordered = sorted(crossing.values(), key=lambda pairs: port_x.get(
        (pairs[0][0].block, pairs[0][0].port), (0.0, top))[1])
    for n, pairs in enumerate(ordered, start=1):
        inside = pairs[0][0]
        port_id = _free(taken, "conn", n)
        xs = [port_x.get((o.block, o.port), (middle, 0.0))[0] for _, o in pairs]
        on_left = sum(x < middle for x in xs) * 2 >= len(xs)
        y = _free_y(port_x.get((inside.block, inside.port), (0.0, top))[1] - 10, used[on_left])
        x = snap(left - PORT_GAP - PORT_WIDTH) if on_left else snap(right + PORT_GAP)
        domain = infos[inside.block].domain_of(inside.port)
        inner.blocks.append(Block(port_id, "ConnectionPort", {"domain": domain},
                                  {"x": x, "y": y}))
        inner.wires.append(Wire(PortRef(port_id, "p"), copy.deepcopy(inside)))
        for _, outside in pairs:
            outer.append(Wire(PortRef(new_id, port_id), copy.deepcopy(outside)))


def _port_points(diagram: Diagram, names: Mapping[str, Any]) -> dict[tuple[str, str], Point]:
    """Canvas position of every port of the level, keyed by (block id, port name)."""
    found = {}
    for blk in diagram.blocks:
        info = port_info(blk, names, diagram.wires)
        place = block_placement(blk, info)
        for kind in ("in", "out", "phys"):
            for name in info.ports(kind):
                slot = info.slot(kind, name)
                if slot is not None:
                    found[(blk.id, name)] = place.port(*slot)[0]
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


def _marks(wires: list[Wire]) -> tuple[str, ...]:
    """The linear analysis marks of a signal that crosses the new subsystem's border: they
    stay with its source port, now driving a single wire to or from the subsystem's port."""
    found = {role for wire in wires for role in wire.analysis}
    return tuple(role for role in ANALYSIS_ROLES if role in found)
