"""Wire bends for the automatic layout: vertical runs in the gaps between columns. Without Qt.

Every wire follows a chain of slots, one per column it passes (see autolayout): forward
wires from left to right; feedback wires leave their source to the right, run back along
the row reserved for them (see feedback) and enter their destination from the left. Where
a wire changes height it runs vertically in the gap between two columns; each such run gets
its own track (a net shares one: that is where it branches), ordered to cross as few other
wires as possible, and the gaps are made as wide as their tracks need.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol, Sequence

from blocksim.gui.canvas.geometry import GRID, STUB, snap
from blocksim.gui.canvas.routecheck import GAP

TRACK = 10.0  # distance between parallel wires
MIN_GAP = 50.0  # horizontal space between columns
EXHAUSTIVE = 6  # gaps with at most this many runs try every order of tracks
SPARE = 1.0  # cost of a spare track that keeps two nets' pieces apart (order_tracks)
SIFT_PASSES = 4  # rounds of moving single runs to their best place (bigger gaps)

Attach = tuple[float, str]  # (y, "L" or "R"): where a horizontal piece leaves a run


class Node(Protocol):
    """What the planner needs of a layout slot (see autolayout._Node)."""

    layer: int
    y: float

    def port_y(self, kind: str, index: int) -> float: ...


@dataclass
class _Run:
    """A vertical piece of wire in one gap, and where horizontal pieces leave it."""

    attach: list[Attach] = field(default_factory=list)

    @property
    def span(self) -> tuple[float, float]:
        ys = [y for y, _ in self.attach]
        return min(ys), max(ys)


class WirePlanner:
    """Plans the tracks in the gaps for the edges of one layered layout."""

    def __init__(self, nodes: dict[Any, Node], edges: Sequence[Any]):
        self.nodes = nodes
        self.edges = edges
        self.gaps: dict[int, dict[Any, _Run]] = defaultdict(dict)
        self.slots: dict[tuple[int, Any], float] = {}

    # ----- planning (needs y only) -----
    def plan(self) -> None:
        for edge in self.edges:
            for gap, a, b in self._steps(edge):
                run = self.gaps[gap].setdefault(edge.net, _Run())
                run.attach.extend((a, b))

    def _steps(self, edge: Any) -> Iterator[tuple[int, Attach, Attach]]:
        """The vertical runs of one wire: (gap, where it comes from, where it goes on).

        Gap i lies right of column i (gap -1: left of the first column)."""
        chain = [self.nodes[k] for k in edge.chain]
        ys = self._chain_ys(edge, chain)
        if not edge.back:
            for k in range(len(ys) - 1):
                if ys[k] != ys[k + 1]:
                    yield chain[0].layer + k, (ys[k], "L"), (ys[k + 1], "R")
            return
        # feedback: out to the right, back through its slots, in from the left
        yield chain[0].layer, (ys[0], "L"), (ys[1], "L")
        for k in range(1, len(ys) - 2):
            if ys[k] != ys[k + 1]:
                yield chain[k].layer - 1, (ys[k], "R"), (ys[k + 1], "L")
        yield chain[-1].layer - 1, (ys[-2], "R"), (ys[-1], "R")

    @staticmethod
    def _chain_ys(edge: Any, chain: list[Node]) -> list[float]:
        return ([chain[0].y + chain[0].port_y("out", edge.src_port)]
                + [n.y + n.port_y("in", 0) for n in chain[1:-1]]
                + [chain[-1].y + chain[-1].port_y("in", edge.dst_port)])

    def gap_width(self, gap: int) -> float:
        """Room for the gap's tracks (gap -1 is left of the first column)."""
        n = self.units.get(gap, 0)
        if gap < 0:
            return 2 * STUB + n * TRACK if n else 0.0
        return max(MIN_GAP, 2 * STUB + (n + 1) * TRACK)

    def order_tracks(self) -> None:
        """The order of the runs in each gap, and where a spare track goes between two
        neighbours whose pieces would continue each other across a short gap (one
        arriving from the left at the height where the next leaves to the right): one
        track apart they would read as one wire, two apart they do not."""
        self.orders: dict[int, list[tuple[Any, int]]] = {}  # gap -> (run, track number)
        self.units: dict[int, int] = {}
        for gap, runs in self.gaps.items():
            order = _best_order(list(runs.items()))
            placed, unit, before = [], 0, None
            for key in order:
                ends = _Ends(runs[key])
                if before is not None and any(y in before.left_set for y in ends.rights):
                    unit += 1
                placed.append((key, unit))
                unit += 1
                before = ends
            self.orders[gap] = placed
            self.units[gap] = unit

    # ----- tracks (needs x) -----
    def assign_tracks(self, gap_left: dict[int, float]) -> None:
        """Give every run an x in its gap, in the order that crosses least."""
        for gap, placed in self.orders.items():
            width = self.gap_width(gap)
            n = self.units[gap]
            for key, unit in placed:
                self.slots[(gap, key)] = snap(gap_left[gap] + width * (unit + 1) / (n + 1),
                                              GRID)

    def in_line(self) -> list[tuple[Any, Any]]:
        """The pairs of nets (one pair per piece) whose pieces the track order left in one
        line in a gap: the only way two nets of this plan can meet (every y of a column
        belongs to one slot or port, every run has a track of its own), so these are the
        wires re-routing must take apart afterwards."""
        found = []
        for gap, runs in self.gaps.items():
            placed = sorted(runs, key=lambda key: self.slots[(gap, key)])
            ends = [_Ends(runs[key]) for key in placed]
            for i, a in enumerate(ends):
                for j in range(i + 1, len(ends)):
                    b = ends[j]
                    if a.lo <= b.hi and b.lo <= a.hi:
                        near = self.slots[(gap, placed[j])] - self.slots[(gap, placed[i])] < GAP
                        hits = sum(1 for y in b.lefts if y in a.right_set) + near * \
                            sum(1 for y in b.rights if y in a.left_set)
                        found += [(placed[i], placed[j])] * hits
        return found

    def points(self, edge: Any, offset: float) -> list[tuple[float, float]]:
        """The bend points of one wire (y shifted by `offset`)."""
        points = []
        for gap, (y1, _), (y2, _) in self._steps(edge):
            x = self.slots[(gap, edge.net)]
            points += [(x, y1 + offset), (x, y2 + offset)]
        return points


class _Ends:
    """A run's attachments in the shape the track order needs them (built once per run)."""

    __slots__ = ("lo", "hi", "rights", "lefts", "right_set", "left_set")

    def __init__(self, run: _Run):
        self.lo, self.hi = run.span
        self.rights = [y for y, side in run.attach if side == "R"]
        self.lefts = [y for y, side in run.attach if side == "L"]
        self.right_set = set(self.rights)
        self.left_set = set(self.lefts)


def _crossings(a: _Ends, b: _Ends) -> float:
    """Crossings when run a's track is left of run b's, plus penalties for pieces of the
    two in one line (they would look connected)."""
    count = 0.0
    count += sum(1 for y in a.rights if b.lo < y < b.hi)  # a's pieces going right pass b
    count += sum(1 for y in b.lefts if a.lo < y < a.hi)  # b's pieces going left pass a
    count += 10 * sum(1 for y in b.lefts if y in a.right_set)  # two wires on one line
    count += SPARE * sum(1 for y in b.rights if y in a.left_set)  # ... in line: a spare
    return count


def _costs(ends: list[_Ends]) -> list[dict[int, float]]:
    """cost[i][j]: _crossings(i left of j), for the pairs whose spans meet (the others
    cost nothing either way); pairs found by sweeping the spans in order."""
    n = len(ends)
    cost: list[dict[int, float]] = [{} for _ in range(n)]
    by_lo = sorted(range(n), key=lambda i: ends[i].lo)
    for k, i in enumerate(by_lo):
        for j in by_lo[k + 1:]:
            if ends[j].lo > ends[i].hi:
                break
            for a, b in ((i, j), (j, i)):
                c = _crossings(ends[a], ends[b])
                if c:
                    cost[a][b] = c
    return cost


def _best_order(runs: list[tuple[Any, _Run]]) -> list[Any]:
    """Keys of the runs from left to right: exhaustive for a few; beyond, sorted by a
    cheap estimate and improved by moving one run at a time to its best place (sifting:
    unlike swaps of neighbours it gets a run past others it does not meet)."""
    n = len(runs)
    if n <= 1:
        return [key for key, _ in runs]
    ends = [_Ends(run) for _, run in runs]
    cost = _costs(ends)
    if n <= EXHAUSTIVE:
        return [runs[i][0] for i in _exact_order(cost)]
    # Start from how much each run prefers the left: a run whose pieces go right should be
    # on the right of the ones it would otherwise cross, and so on.
    score = []
    for i, e in enumerate(ends):
        score.append(((len(e.rights) - len(e.lefts)) / (len(e.rights) + len(e.lefts)),
                      e.hi - e.lo, i))
    order = [i for *_, i in sorted(score)]
    for _ in range(SIFT_PASSES):
        if not _sift(order, cost):
            break
    return [runs[i][0] for i in order]


def _exact_order(cost: list[dict[int, float]]) -> list[int]:
    """The cheapest order of a few runs, by dynamic programming over the sets of runs
    placed first (O(2^n n^2) instead of trying all n! orders)."""
    n = len(cost)
    best: list[tuple[float, int]] = [(0.0, -1)] + [(float("inf"), -1)] * ((1 << n) - 1)
    for mask in range(1, 1 << n):
        members = [i for i in range(n) if mask >> i & 1]
        for j in members:  # j is the rightmost of this set
            rest = mask & ~(1 << j)
            total = best[rest][0] + sum(cost[i].get(j, 0.0) for i in members if i != j)
            if total < best[mask][0]:
                best[mask] = (total, j)
    order, mask = [], (1 << n) - 1
    while mask:
        j = best[mask][1]
        order.append(j)
        mask &= ~(1 << j)
    return order[::-1]


def _sift(order: list[int], cost: list[dict[int, float]]) -> bool:
    """Move each run, in turn, to the place in `order` where the total is least; True if
    any moved."""
    improved = False
    for item in list(order):
        at = order.index(item)
        rest = order[:at] + order[at + 1:]
        mine = cost[item]
        here = total = sum(mine.get(other, 0.0) for other in rest)  # leftmost
        best, best_at = total, 0
        for q, other in enumerate(rest):
            total += cost[other].get(item, 0.0) - mine.get(other, 0.0)
            if q + 1 == at:
                here = total
            if total < best - 1e-9:
                best, best_at = total, q + 1
        if best < here - 1e-9:
            rest.insert(best_at, item)
            order[:] = rest
            improved = True
    return improved
