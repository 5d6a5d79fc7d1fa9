"""Automatic layout of diagrams that carry no positions, without Qt.

A layered (Sugiyama-style) drawing: blocks in columns by signal flow from left to right,
sources pulled next to what they feed, loggers in the last column, rows ordered to reduce
crossings and aligned so that chains of single wires are straight. Long wires pass through
reserved slots between the blocks; feedback wires go round above or below the blocks they
span. The result is deterministic: the same diagram always gets the same picture.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping

from blocksim import registry
from blocksim.gui.autoroute import MIN_GAP, TRACK, WirePlanner
from blocksim.gui.geometry import (
    LABEL_HEIGHT,
    has_position,
    label_width,
    port_spread,
    snap,
)
from blocksim.gui.portinfo import PortInfo, block_placement, port_info, scope_names
from blocksim.model import Diagram

log = logging.getLogger(__name__)

V_GAP = 20.0  # free space between blocks of one column (below the label)
TOP_PAD = 10.0  # free space above a block in its slot
MARGIN = 20.0
SINK_TYPES = {"Output", "Scope", "Outport", "Stop"}
SOURCE_TYPES = {"Inport"}
STATEFUL_TYPES = {"Memory"}  # besides the Continuous category: where loops are closed


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
        """Offset of a port from the slot top (a dummy's single "port" is its centre line)."""
        if self.dummy:
            return self.extent / 2
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
    chain: list[Any] = field(default_factory=list)  # node keys from src to dst


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
            _Layered(diagram, names).run()
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


class _Layered:
    """One run of the layered layout over one diagram level."""

    def __init__(self, diagram: Diagram, names: Mapping[str, Any]):
        self.diagram = diagram
        self.infos: dict[str, PortInfo] = {
            b.id: port_info(b, names, diagram.wires) for b in diagram.blocks}
        self.types = {b.id: b.type for b in diagram.blocks}
        self.stateful = {b.id for b in diagram.blocks if b.type in STATEFUL_TYPES or getattr(
            registry.get(b.type), "category", "") == "Continuous"}
        self.nodes: dict[Any, _Node] = {}
        self.edges: list[_Edge] = []
        self.succ: dict[Any, list[Any]] = defaultdict(list)
        self.pred: dict[Any, list[Any]] = defaultdict(list)

    def run(self) -> None:
        self._build()
        self._break_cycles()
        self._assign_layers()
        self._add_dummies()
        layers = self._order()
        self._assign_y(layers)
        xs = self._assign_x(layers)
        self._write(xs)

    # ----- graph -----
    def _build(self) -> None:
        for blk in self.diagram.blocks:
            info = self.infos[blk.id]
            place = block_placement(blk, info)
            w, h = place.w, place.h
            label = (blk.layout or {}).get("label") or blk.id
            self.nodes[blk.id] = _Node(
                blk.id, w, h, snap(h + LABEL_HEIGHT + V_GAP + 4.9), TOP_PAD, len(info.inputs),
                len(info.outputs), column_width=max(w, label_width(str(label))))
        for index, wire in enumerate(self.diagram.wires):
            src, dst = wire.src.block, wire.dst.block
            if src not in self.nodes or dst not in self.nodes:
                continue
            outs, ins = self.infos[src].outputs, self.infos[dst].inputs
            sp = outs.index(wire.src.port) if wire.src.port in outs else 0
            dp = ins.index(wire.dst.port) if wire.dst.port in ins else 0
            self.edges.append(_Edge(index, src, sp, dst, dp, (src, sp)))

    def _break_cycles(self) -> None:
        """Choose which wires are feedback: the cheapest of a few candidate choices."""
        ids = [b.id for b in self.diagram.blocks]
        has_input = {e.dst for e in self.edges}
        roots = [i for i in ids if i not in has_input] + [i for i in ids if i in has_input]
        first, self.discovery = self._dfs(roots, self.edges)
        candidates = [first, self._dfs(roots, self.edges[::-1])[0], self._greedy_fas(ids),
                      self._states_last(roots)]
        best = min(candidates, key=self._cost)
        for edge in self.edges:
            edge.back = edge.wire in best

    def _dfs(self, roots: list[str], edges: list[_Edge]) -> tuple[set[int], list[str]]:
        """Depth-first from the sources; an edge back onto the current path is feedback."""
        out: dict[str, list[_Edge]] = defaultdict(list)
        for edge in edges:
            out[edge.src].append(edge)
        state: dict[str, int] = {}  # 1 on the path, 2 done
        back: set[int] = set()
        discovery: list[str] = []
        for root in roots:
            if root in state:
                continue
            stack = [(root, iter(out[root]))]
            state[root] = 1
            discovery.append(root)
            while stack:
                node, pending = stack[-1]
                edge = next(pending, None)
                if edge is None:
                    state[node] = 2
                    stack.pop()
                elif state.get(edge.dst) == 1:
                    back.add(edge.wire)
                elif edge.dst not in state:
                    state[edge.dst] = 1
                    discovery.append(edge.dst)
                    stack.append((edge.dst, iter(out[edge.dst])))
        return back, discovery

    def _greedy_fas(self, ids: list[str]) -> set[int]:
        """Eades-Lin-Smyth: peel sinks and sources, else the node with most out- over in-edges."""
        edges = [e for e in self.edges if e.src != e.dst]
        left: list[str] = []
        right: list[str] = []
        remaining = list(ids)
        while remaining:
            live = set(remaining)
            ins = {n: sum(1 for e in edges if e.dst == n and e.src in live) for n in remaining}
            outs = {n: sum(1 for e in edges if e.src == n and e.dst in live) for n in remaining}
            sinks = [n for n in remaining if outs[n] == 0]
            sources = [n for n in remaining if ins[n] == 0 and outs[n] > 0]
            if sinks:
                right[:0] = sinks
                chosen = set(sinks)
            elif sources:
                left += sources
                chosen = set(sources)
            else:
                best = max(remaining, key=lambda n: outs[n] - ins[n])
                left.append(best)
                chosen = {best}
            remaining = [n for n in remaining if n not in chosen]
        rank = {n: i for i, n in enumerate(left + right)}
        return {e.wire for e in self.edges if rank[e.src] >= rank[e.dst]}

    def _states_last(self, roots: list[str]) -> set[int]:
        """Feedback taken from the outputs of state blocks (integrators) where possible, the
        way block diagrams are usually drawn."""
        fast = [e for e in self.edges if e.src not in self.stateful]
        back, _ = self._dfs(roots, fast)
        succ: dict[str, set[str]] = defaultdict(set)
        for e in fast:
            if e.wire not in back:
                succ[e.src].add(e.dst)
        for e in (e for e in self.edges if e.src in self.stateful):
            if self._reaches(succ, e.dst, e.src):
                back.add(e.wire)
            else:
                succ[e.src].add(e.dst)
        return back

    @staticmethod
    def _reaches(succ: Mapping[str, set[str]], start: str, goal: str) -> bool:
        seen, todo = {start}, [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            for nxt in succ.get(node, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def _cost(self, back: set[int]) -> float:
        """Long wires and wide feedback loops make a layout hard to read; feedback into an
        integrator (rather than out of one) looks unusual."""
        layer = self._layering(back)
        cost = 0.0
        for e in self.edges:
            span = layer[e.dst] - layer[e.src]
            if e.wire in back:
                cost += (abs(span) + 1) * 3 + 2
                cost += 12 * (e.dst in self.stateful) - 2 * (e.src in self.stateful)
            else:
                cost += max(span - 1, 0)
        return cost

    def _assign_layers(self) -> None:
        layer = self._layering({e.wire for e in self.edges if e.back})
        for node, value in layer.items():
            self.nodes[node].layer = value

    def _layering(self, back: set[int]) -> dict[str, int]:
        """Columns: longest path from the sources, sources pulled to what they feed, and
        loggers in the last column unless that would make their wires long."""
        fwd = [e for e in self.edges if e.wire not in back and e.src != e.dst]
        preds: dict[str, set[str]] = defaultdict(set)
        succs: dict[str, set[str]] = defaultdict(set)
        for e in fwd:
            preds[e.dst].add(e.src)
            succs[e.src].add(e.dst)
        layer: dict[str, int] = {}
        topo = self._topological(preds, succs)
        for node in topo:
            layer[node] = max((layer[p] + 1 for p in preds[node]), default=0)
        for node in reversed(topo):  # sources next to the first block they feed
            if not preds[node] and succs[node] and self.types[node] not in SOURCE_TYPES:
                layer[node] = max(layer[node], min(layer[s] for s in succs[node]) - 1)
        last = max(layer.values(), default=0)
        sinks = [n for n in topo if not succs[n] and self.types[n] in SINK_TYPES and preds[n]]
        if any(layer[n] == last and n not in sinks for n in topo):
            last += 1 if sinks else 0
        for node in sinks:
            if self.types[node] == "Outport" or layer[node] >= last - 2:
                layer[node] = last
        return layer

    def _topological(self, preds: Mapping[str, set], succs: Mapping[str, set]) -> list[str]:
        remaining = {n: len(preds[n]) for n in self.discovery}
        ready = [n for n in self.discovery if remaining[n] == 0]
        rank = {n: i for i, n in enumerate(self.discovery)}
        result = []
        while ready:
            ready.sort(key=rank.__getitem__)
            node = ready.pop(0)
            result.append(node)
            for s in succs[node]:
                remaining[s] -= 1
                if remaining[s] == 0:
                    ready.append(s)
        return result

    def _add_dummies(self) -> None:
        """Long forward wires pass through one slot per column; a net shares its slots."""
        for edge in self.edges:
            src, dst = self.nodes[edge.src], self.nodes[edge.dst]
            chain: list[Any] = [edge.src]
            if not edge.back:
                for layer in range(src.layer + 1, dst.layer):
                    key = ("dummy", edge.net, layer)
                    if key not in self.nodes:
                        self.nodes[key] = _Node(key, extent=2 * TRACK, layer=layer)
                    chain.append(key)
            chain.append(edge.dst)
            edge.chain = chain
            if edge.back:
                continue
            for k, (a, b) in enumerate(zip(chain, chain[1:])):
                na, nb = self.nodes[a], self.nodes[b]
                fa = (edge.src_port + 0.5) / max(na.outputs, 1) if k == 0 else 0.5
                last = k == len(chain) - 2
                fb = (edge.dst_port + 0.5) / max(nb.inputs, 1) if last else 0.5
                if (b, fa, fb) not in self.succ[a]:
                    self.succ[a].append((b, fa, fb))
                    self.pred[b].append((a, fa, fb))

    # ----- order within columns -----
    def _order(self) -> list[list[_Node]]:
        count = max(n.layer for n in self.nodes.values()) + 1
        layers: list[list[_Node]] = [[] for _ in range(count)]
        rank = {key: i for i, key in enumerate(self.discovery)}
        for node in sorted(self.nodes.values(), key=lambda n: self._initial_rank(n, rank)):
            layers[node.layer].append(node)
        self._number(layers)
        best = [list(layer) for layer in layers]
        best_cross = self._crossings(layers)
        for sweep in range(12):
            rng = range(1, count) if sweep % 2 == 0 else range(count - 2, -1, -1)
            down = sweep % 2 == 0
            for i in rng:
                layer = layers[i]
                centers = {}
                for node in layer:  # mean position of the ports it is wired to
                    if down:
                        nbrs = [self.nodes[k].order + fa for k, fa, _ in self.pred[node.key]]
                    else:
                        nbrs = [self.nodes[k].order + fb for k, _, fb in self.succ[node.key]]
                    centers[node.key] = sum(nbrs) / len(nbrs) if nbrs else node.order + 0.5
                layer.sort(key=lambda n: (centers[n.key], n.order))
                for pos, node in enumerate(layer):
                    node.order = pos
            crossings = self._crossings(layers)
            if crossings < best_cross:
                best, best_cross = [list(layer) for layer in layers], crossings
        self._number(best)
        return best

    def _initial_rank(self, node: _Node, rank: Mapping[Any, int]) -> tuple:
        if node.dummy:
            return (rank.get(node.key[1][0], 0), 1)
        return (rank.get(node.key, 0), 0)

    @staticmethod
    def _number(layers: list[list[_Node]]) -> None:
        for layer in layers:
            for pos, node in enumerate(layer):
                node.order = pos

    def _crossings(self, layers: list[list[_Node]]) -> int:
        total = 0
        for layer in layers[:-1]:
            pairs = sorted((node.order + fa, self.nodes[b].order + fb)
                           for node in layer for b, fa, fb in self.succ[node.key])
            for i, (a1, b1) in enumerate(pairs):
                for a2, b2 in pairs[i + 1:]:
                    if a2 > a1 and b2 < b1:
                        total += 1
        return total

    # ----- coordinates -----
    def _assign_y(self, layers: list[list[_Node]]) -> None:
        for layer in layers:
            y = 0.0
            for node in layer:
                node.y = y
                y += node.extent
        links = self._port_links()
        for sweep in range(9):  # ends going down: single inputs come in straight
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
        """For each node: (neighbour, own port offset, neighbour port offset) left and right."""
        links: dict[Any, tuple[list, list]] = defaultdict(lambda: ([], []))
        for edge in self.edges:
            if edge.back:
                continue
            chain = [self.nodes[k] for k in edge.chain]
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
    def _pack(layer: list[_Node], wanted: list[float]) -> None:
        """Place the column's slots in order, each as near its wish as the others allow."""
        clusters: list[list[Any]] = []  # [first index, last index, position]
        for i in range(len(layer)):
            clusters.append([i, i, wanted[i]])
            while len(clusters) > 1:
                prev, cur = clusters[-2], clusters[-1]
                prev_end = prev[2] + sum(layer[k].extent for k in range(prev[0], prev[1] + 1))
                if prev_end <= cur[2]:
                    break
                first, last = prev[0], cur[1]
                offsets, acc = [], 0.0
                for k in range(first, last + 1):
                    offsets.append(acc)
                    acc += layer[k].extent
                pos = sum(wanted[k] - offsets[k - first] for k in range(first, last + 1))
                clusters[-2:] = [[first, last, pos / (last - first + 1)]]
        for first, last, pos in clusters:
            for k in range(first, last + 1):
                layer[k].y = pos
                pos += layer[k].extent

    def _assign_x(self, layers: list[list[_Node]]) -> list[float]:
        """Column left edges; the gaps are wide enough for the wires' vertical runs."""
        self.router = WirePlanner(self.nodes, self.edges)
        self.router.plan(layers)
        self.column_w = [max((n.column_width for n in layer if not n.dummy), default=0.0)
                         for layer in layers]
        xs, x, gap_left = [], MARGIN + self.router.gap_width(-1), {-1: MARGIN}
        for i, width in enumerate(self.column_w):
            xs.append(x)
            gap_left[i] = x + width
            x += width + self.router.gap_width(i)
        self.router.assign_tracks(gap_left)
        return xs

    def _write(self, xs: list[float]) -> None:
        for blk in self.diagram.blocks:
            node = self.nodes[blk.id]
            x = xs[node.layer] + (self.column_w[node.layer] - node.width) / 2
            layout = {k: v for k, v in (blk.layout or {}).items()
                      if k not in ("x", "y", "rotation", "flip")}
            layout["x"] = snap(x)
            layout["y"] = node.y + node.top_pad + MARGIN
            blk.layout = layout
        for edge in self.edges:
            points = self.router.points(edge, MARGIN)
            self.diagram.wires[edge.wire].points = [(float(x), float(y)) for x, y in points]

