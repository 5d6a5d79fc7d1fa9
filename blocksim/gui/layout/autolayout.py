"""Automatic layout of diagrams that carry no positions, without Qt.

A layered (Sugiyama-style) drawing: blocks in columns by signal flow from left to right
(`layering`: which wires are feedback, which column each block takes), rows ordered to
reduce crossings (`ordering`) and aligned so that chains of single wires are straight.
Every forward wire passes through a reserved slot in each column between its ends; each
feedback wire gets one straight row, hugging its loop or going round what it spans,
whichever crosses less (`feedback`), with slots reserved for it too, so no wire ever runs
through a block. `autoroute` puts the vertical runs on tracks in the gaps, with a spare
track where two nets' pieces would continue each other; the rare wires still in one line
with another net (two wires swapping rows in one gap) are then re-routed
(`reroute.repair`, given just those wires: the plan knows where its faults can be). A
small level is laid out several ways (feedback cuts, row orders, restarts) and the most
readable picture kept (`layoutscore`). The result is deterministic, and the work grows
about linearly with the diagram.
"""
from __future__ import annotations

import logging
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping

from blocksim.blocktypes import registry
from blocksim.gui.layout.autoroute import MIN_GAP, TRACK, WirePlanner
from blocksim.gui.layout.feedback import Feedback
from blocksim.gui.canvas.geometry import (
    LABEL_HEIGHT,
    Placement,
    has_position,
    label_width,
    port_spread,
    snap,
)
from blocksim.gui.layout.layering import Layering
from blocksim.gui.layout.layoutscore import readability
from blocksim.gui.layout.ordering import Orderer, number
from blocksim.gui.canvas.portinfo import PortInfo, block_placement, port_info, scope_names
from blocksim.gui.canvas.reroute import repair
from blocksim.gui.canvas.routing import route
from blocksim.diagram.model import Diagram

log = logging.getLogger(__name__)

V_GAP = 20.0  # free space between blocks of one column (below the label)
TOP_PAD = 10.0  # free space above a block in its slot
MARGIN = 20.0
MULTI_START_BLOCKS = 150  # levels up to this size are laid out several ways (see _arrange)
WIDE_SEARCH_BLOCKS = 60  # ... and up to this size from feedback cuts found every way
LAYERINGS = 4  # feedback choices tried
RESTARTS = 6  # shuffled first row orders tried on the best way
OUTSIDE = (0.5, -0.5)  # feedback rows round everything they span: penalty, then bonus
BACK_WEIGHT = 3  # how hard the slots of a feedback row pull each other straight
STATEFUL_TYPES = {"Memory"}  # besides the Continuous category: where loops are closed
TOP = -1  # the port index of an edge into a top port (a trigger or an enable)
TOP_APPROACH = 20.0  # how far above the block a wire into a top port comes along
IN_LINE = 3.0  # score of two nets' pieces in one line in a gap (re-routed after: detours)
TOP_ROOM = 30.0  # room above a block with a top port (its wire comes along there)


@dataclass
class _Node:
    key: Any  # block id, or ("dummy", net, layer)
    width: float = 0.0
    height: float = 0.0  # the block body
    extent: float = 0.0  # the whole slot: body, label and gap
    top_pad: float = 0.0  # slot top to body top
    inputs: int = 0
    outputs: int = 0
    layer: int = 0
    order: float = 0.0
    y: float = 0.0  # slot top
    column_width: float = 0.0

    @property
    def dummy(self) -> bool:
        return isinstance(self.key, tuple)

    def port_y(self, kind: str, index: int) -> float:
        """Offset of a port from the slot top (a dummy's single "port" is its centre line).
        A top port (index TOP) is wanted a little above the block: its wire comes along
        there (in the room left above the block) and turns down into it."""
        if self.dummy:
            return self.extent / 2
        if index == TOP:
            return self.top_pad - TOP_APPROACH
        return self.top_pad + port_spread(self.height, index,
                                          self.inputs if kind == "in" else self.outputs)


@dataclass
class _Edge:
    wire: int  # index into diagram.wires
    src: str
    src_port: int
    dst: str
    dst_port: int
    net: tuple[str, int]
    back: bool = False
    reversed: bool = False  # a connection laid out from its file dst to its file src
    # node keys from src to dst: forward, the slots of the columns strictly between; for
    # feedback, the slots of every column from the source's back to the destination's
    chain: list[Any] = field(default_factory=list)


def needs_layout(diagram: Diagram) -> bool:
    """Whether some block of this level (not its subsystems) has no position."""
    return any(not has_position(b.layout) for b in diagram.blocks)


def layout_diagram(diagram: Diagram, names: Mapping[str, Any] | None = None,
                   recursive: bool = True, force: bool = False) -> bool:
    """Give positions to blocks that lack them, in place; True if anything changed.

    A level where no block has a position (or every level, with `force`) is laid out
    entirely, wire bends included; a level where only some blocks lack one gets those
    placed in a row below the rest.
    """
    names = scope_names(diagram, names) if names is not None else scope_names(diagram)
    changed = False
    if diagram.blocks and (force or needs_layout(diagram)):
        if force or not any(has_position(b.layout) for b in diagram.blocks):
            _arrange(diagram, names)
        else:
            _place_missing(diagram, names)
        changed = True
    if recursive:
        for blk in diagram.blocks:
            if blk.subsystem is not None:
                inner = scope_names(blk.subsystem, names)
                changed |= layout_diagram(blk.subsystem, inner, True, force)
    return changed


def _place_missing(diagram: Diagram, names: Mapping[str, Any]) -> None:
    placed = [b for b in diagram.blocks if has_position(b.layout)]
    bottom = max(float(b.layout["y"]) + 80.0 for b in placed)
    x = min(float(b.layout["x"]) for b in placed)
    for blk in diagram.blocks:
        if has_position(blk.layout):
            continue
        info = port_info(blk, names, diagram.wires)
        w = block_placement(blk, info).w
        blk.layout = {**(blk.layout or {}), "x": snap(x), "y": snap(bottom)}
        x += max(w, label_width(blk.id)) + MIN_GAP


def _arrange(diagram: Diagram, names: Mapping[str, Any]) -> None:
    """Lay out one level entirely. A level of up to MULTI_START_BLOCKS blocks is laid out
    a few ways (the likeliest feedback choices, rows ordered from either end, feedback
    going round or hugging its loop; then the best of those with the rows' first order
    shuffled a few times) and the picture with the fewest crossings, shortest wires and
    fewest bends is kept: cheap for diagrams people draw, and much better than trusting
    one heuristic. Bigger levels take the first way only."""
    infos = {b.id: port_info(b, names, diagram.wires) for b in diagram.blocks}
    stateful = {b.id for b in diagram.blocks if b.type in STATEFUL_TYPES or getattr(
        registry.get(b.type), "category", "") == "Continuous"}
    first = _Layered(diagram, infos, stateful)
    small = len(diagram.blocks) <= MULTI_START_BLOCKS
    layering = Layering([b.id for b in diagram.blocks], first.edges, first.types, stateful)
    choices = layering.choices(wide=len(diagram.blocks) <= WIDE_SEARCH_BLOCKS)
    variants = [(choice, mirror, outside, 0) for choice in choices[:LAYERINGS]
                for mirror in (False, True) for outside in OUTSIDE]
    if not small:
        variants = variants[:1]
    best: tuple[float, int, _Layered] | None = None

    def attempt(i: int, variant: tuple) -> None:
        nonlocal best
        choice, mirror, outside, seed = variant
        run = first if i == 0 else _Layered(diagram, infos, stateful)
        run.plan(choice, layering.discovery, mirror, outside, seed)
        score = run.score() if small else 0.0
        if best is None or score < best[0]:
            best = (score, i, run)

    for i, variant in enumerate(variants):
        attempt(i, variant)
    if small:  # restarts of the row order from the best way's layering
        choice, mirror, outside, _ = variants[best[1]]
        for seed in range(1, RESTARTS + 1):
            attempt(len(variants) + seed, (choice, mirror, outside, seed))
    best[2].write()
    # A small level is checked whole (cheap; a safety net for the plan's own account of
    # its faults); a big one trusts that account, so a clean plan costs no drawing.
    suspects = None if small else best[2].in_line_wires()
    repaired = repair(diagram, names, suspects) if suspects is None or suspects else 0
    if repaired:
        log.debug("%d wires of the layout re-routed to keep nets apart", repaired)


class _Layered:
    """One layered layout of one diagram level."""

    def __init__(self, diagram: Diagram, infos: Mapping[str, PortInfo], stateful: set[str]):
        self.diagram = diagram
        self.infos = infos
        self.types = {b.id: b.type for b in diagram.blocks}
        self.stateful = stateful
        self.nodes: dict[Any, _Node] = {}
        self.edges: list[_Edge] = []
        # links between neighbouring columns: key -> [(other key, own fraction, other's)]
        self.succ: dict[Any, list[tuple[Any, float, float]]] = defaultdict(list)
        self.pred: dict[Any, list[tuple[Any, float, float]]] = defaultdict(list)
        self.discovery: list[str] = []
        self._build()

    def plan(self, choice: tuple[set[int], Mapping[str, int]], discovery: list[str],
             mirror: bool = False, outside: float = OUTSIDE[0], seed: int = 0) -> None:
        """Work out every position (nothing is written to the diagram yet); a `seed`
        shuffles each column's first order (a restart of the crossing reduction)."""
        back, layer = choice
        self.discovery = discovery
        for edge in self.edges:
            edge.back = edge.wire in back
        for node, value in layer.items():
            self.nodes[node].layer = value
        self._add_dummies()
        initial = self._initial()
        if mirror:
            for column in initial:
                column.reverse()
        if seed:
            shuffle = random.Random(seed).shuffle
            for column in initial:
                shuffle(column)
        number(initial)
        layers = Orderer(self.nodes, self.succ, self.pred).run(initial)
        self._stack(layers)
        self._align(layers)
        Feedback(self.nodes, self.edges, self.succ, self.pred,
                 lambda key, column: self.nodes[self._slot(key[1], column)],
                 outside).place(layers)
        self.xs = self._assign_x(layers)

    def score(self) -> float:
        """How hard the picture is to read (see layoutscore)."""
        routes = []
        for edge in self.edges:
            (start, sdir), (end, edir) = self._port("out", edge.src, edge.src_port), \
                self._port("in", edge.dst, edge.dst_port)
            routes.append((edge.net, route(start, sdir, end, edir,
                                           self.router.points(edge, MARGIN))))
        return readability(routes) + IN_LINE * len(self.router.in_line())

    def in_line_wires(self) -> list[int]:
        """The wires of the nets whose pieces the plan left in one line with another net's
        (see autoroute.in_line): the only faults a plan can have, re-routed afterwards."""
        nets = {net for pair in self.router.in_line() for net in pair}
        return [edge.wire for edge in self.edges if edge.net in nets]

    def _port(self, kind: str, block: str, index: int) -> tuple:
        node = self.nodes[block]
        x, y = self._position(node)
        place = Placement(x, y, node.width, node.height)
        if index == TOP:  # conditional subsystems have one top port
            return place.port("top", 0, 1)
        return place.port(kind, index, node.inputs if kind == "in" else node.outputs)

    def _position(self, node: _Node) -> tuple[float, float]:
        """Top-left corner of a block's body on the canvas."""
        x = self.xs[node.layer] + (self.column_w[node.layer] - node.width) / 2
        return snap(x), node.y + node.top_pad + MARGIN

    # ----- graph -----
    def _build(self) -> None:
        for blk in self.diagram.blocks:
            info = self.infos[blk.id]
            place = block_placement(blk, info)
            w, h = place.w, place.h
            label = (blk.layout or {}).get("label") or blk.id
            room = TOP_ROOM if info.top else 0.0
            self.nodes[blk.id] = _Node(
                blk.id, w, h, snap(h + LABEL_HEIGHT + V_GAP + 4.9 + room), TOP_PAD + room,
                len(info.side_inputs),
                len(info.right), column_width=max(w, label_width(str(label))))
        for index, wire in enumerate(self.diagram.wires):
            if wire.src.block not in self.nodes or wire.dst.block not in self.nodes:
                continue
            (src, src_port), (dst, dst_port), turned = self._flow(wire)
            outs, ins = self.infos[src].right, self.infos[dst].side_inputs
            sp = outs.index(src_port) if src_port in outs else 0
            dp = TOP if dst_port in self.infos[dst].edge("top") else \
                ins.index(dst_port) if dst_port in ins else 0
            self.edges.append(_Edge(index, src, sp, dst, dp, (src, sp), reversed=turned))

    def _flow(self, wire) -> tuple[tuple[str, str], tuple[str, str], bool]:
        """The ends of a wire as the layout lets it flow (left to right): a signal wire
        from its source; a connection, which has no direction, from the end on its
        block's right edge to the end on its block's left or top edge (as drawn in the
        file when that says nothing). True if that is the file's dst to its src."""
        a, b = (wire.src.block, wire.src.port), (wire.dst.block, wire.dst.port)
        ia, ib = self.infos[a[0]], self.infos[b[0]]
        if a[1] not in ia.physical or b[1] not in ib.physical:
            return a, b, False
        rights = (a[1] in ia.right, b[1] in ib.right)
        lefts = (a[1] in ia.side_inputs + ia.edge("top"), b[1] in ib.side_inputs + ib.edge("top"))
        if rights[1] and lefts[0] and not (rights[0] and lefts[1]):
            return b, a, True
        return a, b, False

    def _slot(self, net: tuple[str, int], layer: int) -> tuple:
        """The slot a net's wire takes in a column it passes (shared by the whole net)."""
        key = ("dummy", net, layer)
        if key not in self.nodes:
            self.nodes[key] = _Node(key, extent=2 * TRACK, layer=layer)
        return key

    def _link(self, a: Any, b: Any, fa: float, fb: float) -> None:
        """a in some column wired to b in the next one, at port fractions fa and fb."""
        if (b, fa, fb) not in self.succ[a]:
            self.succ[a].append((b, fa, fb))
            self.pred[b].append((a, fa, fb))

    def _add_dummies(self) -> None:
        """Slots for every column a forward wire passes; a net shares its slots."""
        for edge in self.edges:
            if edge.back:
                continue
            src, dst = self.nodes[edge.src], self.nodes[edge.dst]
            fa = (edge.src_port + 0.5) / max(src.outputs, 1)
            fb = 0.0 if edge.dst_port == TOP else (edge.dst_port + 0.5) / max(dst.inputs, 1)
            slots = [self._slot(edge.net, layer) for layer in range(src.layer + 1, dst.layer)]
            edge.chain = [edge.src, *slots, edge.dst]
            for k, (a, b) in enumerate(zip(edge.chain, edge.chain[1:])):
                self._link(a, b, fa if k == 0 else 0.5, fb if k == len(edge.chain) - 2 else 0.5)

    def _initial(self) -> list[list[_Node]]:
        """Columns in order of discovery (a net's slots after its source)."""
        rank = {key: i for i, key in enumerate(self.discovery)}

        def initial_rank(node: _Node) -> tuple:
            if node.dummy:
                return (rank.get(node.key[1][0], 0), 1)
            return (rank.get(node.key, 0), 0)

        layers: list[list[_Node]] = [
            [] for _ in range(max(n.layer for n in self.nodes.values()) + 1)]
        for node in sorted(self.nodes.values(), key=initial_rank):
            layers[node.layer].append(node)  # feedback slots do not exist yet
        number(layers)
        return layers

    # ----- coordinates -----
    @staticmethod
    def _stack(layers: list[list[_Node]]) -> None:
        for layer in layers:
            y = 0.0
            for node in layer:
                node.y = y
                y += node.extent

    def _align(self, layers: list[list[_Node]]) -> None:
        """Move the slots of each column (keeping their order) towards the ports they are
        wired to, sweeping right and left: single inputs come in straight."""
        links = self._port_links()
        for sweep in range(9):
            down = sweep % 2 == 0
            order = layers if down else layers[::-1]
            for layer in order:
                wanted = []
                for node in layer:
                    targets = [other.y + other_off - own_off
                               for other, own_off, other_off in links[node.key][0 if down else 1]]
                    wanted.append(sum(targets) / len(targets) if targets else node.y)
                self._pack(layer, wanted)
        top = min((n.y for n in self.nodes.values()), default=0.0)
        for node in self.nodes.values():
            node.y = snap(node.y - top)

    def _port_links(self) -> dict[Any, tuple[list, list]]:
        """For each node: (neighbour, own port offset, neighbour port offset), as seen when
        sweeping right and when sweeping left."""
        links: dict[Any, tuple[list, list]] = defaultdict(lambda: ([], []))
        for edge in self.edges:
            chain = [self.nodes[k] for k in edge.chain]
            if edge.back:
                if len(chain) > 2:  # placed (see feedback): keep its row straight
                    self._feedback_links(links, chain, edge)
                continue
            for k, (a, b) in enumerate(zip(chain, chain[1:])):
                a_off = a.port_y("out", edge.src_port) if k == 0 else a.port_y("out", 0)
                last = k == len(chain) - 2
                b_off = b.port_y("in", edge.dst_port) if last else b.port_y("in", 0)
                weight = 1 + a.dummy + b.dummy  # keep long wires straight
                for _ in range(weight):
                    links[b.key][0].append((a, b_off, a_off))
                    links[a.key][1].append((b, a_off, b_off))
        return links

    @staticmethod
    def _feedback_links(links: dict, chain: list[_Node], edge: _Edge) -> None:
        """A feedback row's slots pull each other straight and its end slots stay near the
        ports it joins; blocks are not pulled by feedback (they follow the signal flow)."""
        slots = chain[1:-1]
        for a, b in zip(slots[1:], slots):  # a left of b
            for _ in range(BACK_WEIGHT):
                links[b.key][0].append((a, TRACK, TRACK))
                links[a.key][1].append((b, TRACK, TRACK))
        for slot, block, kind, port in ((slots[0], chain[0], "out", edge.src_port),
                                        (slots[-1], chain[-1], "in", edge.dst_port)):
            for side in (0, 1):
                links[slot.key][side].append((block, TRACK, block.port_y(kind, port)))

    @staticmethod
    def _pack(layer: list[_Node], wanted: list[float]) -> None:
        """Place the column's slots in order, each as near its wish as the others allow
        (clusters of touching slots sit at their members' mean wish; prefix sums of the
        extents keep a merge O(1), so a long column costs O(n))."""
        top = [0.0]  # top[k]: a slot's offset from the column's first, if all touched
        for node in layer:
            top.append(top[-1] + node.extent)
        clusters: list[list[Any]] = []  # [first index, last index, sum of wish - top, count]
        for i in range(len(layer)):
            clusters.append([i, i, wanted[i] - top[i], 1])
            while len(clusters) > 1:
                prev, cur = clusters[-2], clusters[-1]
                prev_end = prev[2] / prev[3] + top[prev[1] + 1]
                if prev_end <= cur[2] / cur[3] + top[cur[0]]:
                    break
                clusters[-2:] = [[prev[0], cur[1], prev[2] + cur[2], prev[3] + cur[3]]]
        for first, last, total, count in clusters:
            base = total / count
            for k in range(first, last + 1):
                layer[k].y = base + top[k]

    def _assign_x(self, layers: list[list[_Node]]) -> list[float]:
        """Column left edges; the gaps are wide enough for the wires' vertical runs."""
        self.router = WirePlanner(self.nodes, self.edges)
        self.router.plan()
        self.router.order_tracks()
        self.column_w = [max((n.column_width for n in layer if not n.dummy), default=0.0)
                         for layer in layers]
        xs, x, gap_left = [], MARGIN + self.router.gap_width(-1), {-1: MARGIN}
        for i, width in enumerate(self.column_w):
            xs.append(x)
            gap_left[i] = x + width
            x += width + self.router.gap_width(i)
        self.router.assign_tracks(gap_left)
        return xs

    def write(self) -> None:
        """Store the planned positions and wire bends in the diagram."""
        for blk in self.diagram.blocks:
            layout = {k: v for k, v in (blk.layout or {}).items()
                      if k not in ("x", "y", "rotation", "flip")}
            layout["x"], layout["y"] = self._position(self.nodes[blk.id])
            blk.layout = layout
        for edge in self.edges:
            points = [(float(x), float(y)) for x, y in self.router.points(edge, MARGIN)]
            self.diagram.wires[edge.wire].points = points[::-1] if edge.reversed else points
