"""Wire bends for the automatic layout: vertical runs in the gaps between columns, and the
rows that feedback wires take above or below the blocks they span. Without Qt.

Each wire's vertical run in a gap gets its own track (a net shares one), ordered to cross as
few other wires as possible; feedback wires choose the side (above or below) that is shorter
and crosses fewer of the destination's other inputs, and nested loops keep inner rows closer.
"""
from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from blocksim.gui.geometry import GRID, LABEL_HEIGHT, STUB, snap

TRACK = 10.0  # distance between parallel wires
MIN_GAP = 50.0  # horizontal space between columns
CROSSING = 150.0  # how many pixels of detour one avoided crossing is worth
BELOW_BIAS = 0.9  # feedback goes below when it is about as good (the usual convention)


class Node(Protocol):
    """What the planner needs of a layout slot (see autolayout._Node)."""

    layer: int
    y: float
    top_pad: float
    height: float
    inputs: int
    outputs: int

    @property
    def dummy(self) -> bool: ...

    def port_y(self, kind: str, index: int) -> float: ...


@dataclass
class _Run:
    """A vertical piece of wire in one gap, and where horizontal pieces leave it."""

    attach: list[tuple[float, str]] = field(default_factory=list)  # (y, "L" or "R")

    @property
    def span(self) -> tuple[float, float]:
        ys = [y for y, _ in self.attach]
        return min(ys), max(ys)


class WirePlanner:
    """Plans rows and tracks for the edges of one layered layout."""

    def __init__(self, nodes: dict[Any, Node], edges: Sequence[Any]):
        self.nodes = nodes
        self.edges = edges
        self.gaps: dict[int, dict[Any, _Run]] = defaultdict(dict)
        self.slots: dict[tuple[int, Any], float] = {}
        self.rows: dict[tuple[Any, str], float] = {}
        self.row_of: dict[int, tuple[Any, str]] = {}  # wire -> row key

    # ----- planning (needs y only) -----
    def plan(self, layers: list[list[Node]]) -> None:
        plans = [self._feedback_side(e, layers) for e in self.edges if e.back]
        self._assign_rows(plans)
        for plan in plans:
            edge, row = plan["edge"], self.rows[plan["key"]]
            self.row_of[edge.wire] = plan["key"]
            src, dst = self.nodes[edge.src], self.nodes[edge.dst]
            self._run(src.layer, edge.net, (plan["sy"], "L"), (row, "L"))
            self._run(dst.layer - 1, ("in", edge.wire), (row, "R"), (plan["dy"], "R"))
        for edge in self.edges:
            if not edge.back:
                chain = [self.nodes[k] for k in edge.chain]
                ys = self._chain_ys(edge, chain)
                for k in range(len(ys) - 1):
                    if ys[k] != ys[k + 1]:
                        self._run(chain[0].layer + k, edge.net, (ys[k], "L"), (ys[k + 1], "R"))

    def _chain_ys(self, edge: Any, chain: list[Node]) -> list[float]:
        return ([chain[0].y + chain[0].port_y("out", edge.src_port)]
                + [n.y + n.port_y("in", 0) for n in chain[1:-1]]
                + [chain[-1].y + chain[-1].port_y("in", edge.dst_port)])

    def _feedback_side(self, edge: Any, layers: list[list[Node]]) -> dict[str, Any]:
        src, dst = self.nodes[edge.src], self.nodes[edge.dst]
        sy = src.y + src.port_y("out", edge.src_port)
        dy = dst.y + dst.port_y("in", edge.dst_port)
        lo, hi = min(src.layer, dst.layer), max(src.layer, dst.layer)
        spanned = [n for layer in layers[lo:hi + 1] for n in layer]
        top = min(n.y + (n.port_y("in", 0) if n.dummy else n.top_pad) for n in spanned)
        bottom = max(n.y + (n.port_y("in", 0) if n.dummy else n.top_pad + n.height
                                                              + LABEL_HEIGHT) for n in spanned)
        above = (sy - top) + (dy - top) + CROSSING * (edge.dst_port + edge.src_port)
        below = ((bottom - sy) + (bottom - dy) + CROSSING * (
            dst.inputs - 1 - edge.dst_port + src.outputs - 1 - edge.src_port)) * BELOW_BIAS
        side = "above" if above < below else "below"
        return {"edge": edge, "side": side, "span": hi - lo, "sy": sy, "dy": dy,
                "start": snap(top - 2 * TRACK) if side == "above" else snap(bottom + TRACK)}

    def _assign_rows(self, plans: list[dict[str, Any]]) -> None:
        """One row per net and side, outside every column it spans; inner loops first, so
        they get the rows nearest the blocks and loops nest."""
        groups: dict[tuple[Any, str], list[dict[str, Any]]] = defaultdict(list)
        for plan in plans:
            plan["key"] = (plan["edge"].net, plan["side"])
            groups[plan["key"]].append(plan)

        def order(key):
            members = groups[key]
            dy = members[0]["dy"]
            return (max(p["span"] for p in members), key[1],
                    dy if key[1] == "above" else -dy, members[0]["edge"].wire)

        taken: list[tuple[float, int, int]] = []
        for key in sorted(groups, key=order):
            members = groups[key]
            above = key[1] == "above"
            row = (min if above else max)(p["start"] for p in members)
            first = min(self.nodes[p["edge"].dst].layer - 1 for p in members)
            last = max(self.nodes[p["edge"].src].layer for p in members)
            while any(y == row and a <= last and first <= b for y, a, b in taken):
                row += -TRACK if above else TRACK
            taken.append((row, first, last))
            self.rows[key] = row

    def _run(self, gap: int, key: Any, *attach: tuple[float, str]) -> None:
        self.gaps[gap].setdefault(key, _Run()).attach.extend(attach)

    def gap_width(self, gap: int) -> float:
        """Room for the gap's tracks (gap -1 is left of the first column)."""
        n = len(self.gaps.get(gap, {}))
        if gap < 0:
            return 2 * STUB + n * TRACK if n else 0.0
        return max(MIN_GAP, 2 * STUB + (n + 1) * TRACK)

    # ----- tracks (needs x) -----
    def assign_tracks(self, gap_left: dict[int, float]) -> None:
        """Give every run an x in its gap, in the order that crosses least."""
        for gap, runs in self.gaps.items():
            order = _best_order(list(runs.items()))
            width = self.gap_width(gap)
            n = len(order)
            for i, key in enumerate(order):
                self.slots[(gap, key)] = snap(gap_left[gap] + width * (i + 1) / (n + 1), GRID)

    def points(self, edge: Any, offset: float) -> list[tuple[float, float]]:
        """The bend points of one wire (y shifted by `offset`)."""
        chain = [self.nodes[k] for k in edge.chain]
        src, dst = chain[0], chain[-1]
        if edge.back:
            sy = src.y + src.port_y("out", edge.src_port) + offset
            dy = dst.y + dst.port_y("in", edge.dst_port) + offset
            row = self.rows[self.row_of[edge.wire]] + offset
            x1 = self.slots[(src.layer, edge.net)]
            x2 = self.slots[(dst.layer - 1, ("in", edge.wire))]
            return [(x1, sy), (x1, row), (x2, row), (x2, dy)]
        ys = [y + offset for y in self._chain_ys(edge, chain)]
        points = []
        for k in range(len(ys) - 1):
            if ys[k] != ys[k + 1]:
                x = self.slots[(src.layer + k, edge.net)]
                points += [(x, ys[k]), (x, ys[k + 1])]
        return points


def _crossings(a: _Run, b: _Run) -> float:
    """Crossings when run a's track is left of run b's."""
    (a_lo, a_hi), (b_lo, b_hi) = a.span, b.span
    count = 0.0
    for y, side in a.attach:  # a's pieces going right pass b's track
        if side == "R" and b_lo < y < b_hi:
            count += 1
    for y, side in b.attach:  # b's pieces going left pass a's track
        if side == "L" and a_lo < y < a_hi:
            count += 1
    rights = {y for y, side in a.attach if side == "R"}
    for y, side in b.attach:  # two wires on one line would look connected
        if side == "L" and y in rights:
            count += 10
    return count


def _best_order(runs: list[tuple[Any, _Run]]) -> list[Any]:
    """Keys of the runs from left to right: exhaustive for a few, greedy beyond."""
    n = len(runs)
    cost = [[_crossings(runs[i][1], runs[j][1]) if i != j else 0.0 for j in range(n)]
            for i in range(n)]
    if n <= 6:
        best = min(itertools.permutations(range(n)), key=lambda p: sum(
            cost[p[i]][p[j]] for i in range(n) for j in range(i + 1, n)))
        return [runs[i][0] for i in best]
    left, order = set(range(n)), []
    while left:
        pick = min(sorted(left), key=lambda i: sum(cost[i][j] for j in left if j != i))
        order.append(pick)
        left.discard(pick)
    return [runs[i][0] for i in order]
