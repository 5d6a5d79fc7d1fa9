"""Orthogonal wire paths around blocks and other nets' wires, without Qt.

A* search on the canvas grid: a step costs its length, a bend costs more, and cells inside a
block (with a small margin) are forbidden, so a wire goes round the blocks between its ends
with few bends. Given the wires already drawn (`Occupied`), it also never runs along another
net's wire, never bends on one and never passes another net's bend (each would look like a
join), crosses other wires only at a price, and follows its own net's wires cheaply (so a
branch leaves its trunk late). The result is stored as the wire's bend points; the plain
router (`routing.route`) then draws through them.
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from blocksim.gui.canvas.geometry import GRID, STUB, Point
from blocksim.gui.canvas.routing import Rect, simplify

BEND = 3.0  # a bend costs as much as this many grid steps
CLEARANCE = 5.0  # keep wires this far from block edges
REACH = 200.0  # how far beyond the two ends a path may wander
MAX_NODES = 60000
CROSSING = 4.0  # crossing another net's wire costs as much as this many grid steps
OWN = 0.4  # a step along a wire of the same net costs this much

GREED = 1.5  # how much the search trusts its estimate (1: exact shortest paths)

Cell = tuple[int, int]


@dataclass
class Occupied:
    """The grid cells that drawn wires take, split into other nets' and the own net's."""

    along_h: set[Cell] = field(default_factory=set)  # other nets' horizontal runs
    along_v: set[Cell] = field(default_factory=set)  # ... vertical runs
    corners: set[Cell] = field(default_factory=set)  # ... bends and ends
    own_h: set[Cell] = field(default_factory=set)  # the own net's horizontal runs
    own_v: set[Cell] = field(default_factory=set)

    @classmethod
    def of(cls, routes: Iterable[tuple[Any, Sequence[Point]]], net: Any) -> "Occupied":
        """Cells of these (net, corners) routes as seen by a wire of `net`."""
        occupied = cls()
        for other, points in routes:
            mine = other == net
            h, v = (occupied.own_h, occupied.own_v) if mine else \
                (occupied.along_h, occupied.along_v)
            grow = 0 if mine else 1  # another net's run, one cell longer at each end: a
            for a, b in zip(points, points[1:]):  # wire in line with it must leave a gap
                ca, cb = _cell(a), _cell(b)
                if ca[1] == cb[1] and a[1] == b[1]:
                    h.update((x, ca[1]) for x in range(min(ca[0], cb[0]) - grow,
                                                       max(ca[0], cb[0]) + 1 + grow))
                elif ca[0] == cb[0] and a[0] == b[0]:
                    v.update((ca[0], y) for y in range(min(ca[1], cb[1]) - grow,
                                                       max(ca[1], cb[1]) + 1 + grow))
            if not mine:
                occupied.corners.update(_cell(p) for p in points)
        return occupied

    def step_cost(self, cell: Cell, nxt: Cell, turned: bool) -> float | None:
        """What stepping from `cell` to its neighbour `nxt` costs (None: not allowed)."""
        horizontal = cell[1] == nxt[1]
        along, across = (self.along_h, self.along_v) if horizontal else \
            (self.along_v, self.along_h)
        if nxt in self.corners or (cell in along and nxt in along):
            return None
        if turned and (cell in self.along_h or cell in self.along_v):
            return None
        own = self.own_h if horizontal else self.own_v
        cost = OWN if cell in own and nxt in own else 1.0
        return cost + (CROSSING if nxt in across else 0.0)


def find_path(start: Point, start_dir: Point, end: Point, end_dir: Point,
              obstacles: Sequence[Rect], occupied: Occupied | None = None,
              reach: float = REACH, lead: float = 2 * STUB,
              max_nodes: int = MAX_NODES) -> list[Point] | None:
    """Bend points of a short orthogonal path from an output port to an input port that
    avoids `obstacles` (and keeps clear of the wires in `occupied`); None if there is none
    nearby (the caller then routes plainly). The path stays within `reach` of the box
    spanned by its ends: the search costs about the area of that box. It leaves and enters
    the ports straight for `lead`, and gives up after looking at `max_nodes` states."""
    s = _cell((start[0] + start_dir[0] * lead, start[1] + start_dir[1] * lead))
    e = _cell((end[0] + end_dir[0] * lead, end[1] + end_dir[1] * lead))
    reach = int(reach / GRID)
    lo = (min(s[0], e[0]) - reach, min(s[1], e[1]) - reach)
    hi = (max(s[0], e[0]) + reach, max(s[1], e[1]) + reach)
    blocked = _blocked(obstacles, lo, hi)
    blocked.discard(s)
    blocked.discard(e)
    first = (int(start_dir[0]), int(start_dir[1]))
    last = (-int(end_dir[0]), -int(end_dir[1]))  # direction of travel into the port
    counter = itertools.count()
    frontier = [(_guess(s, e), next(counter), 0.0, s, first)]
    came: dict[tuple, tuple | None] = {(s, first): None}
    cost: dict[tuple, float] = {(s, first): 0.0}
    while frontier:
        _, _, spent, cell, heading = heapq.heappop(frontier)
        if cell == e and heading == last:
            return _points(start, end, _trace(came, (cell, heading)))
        if spent > cost.get((cell, heading), float("inf")) or len(cost) > max_nodes:
            if len(cost) > max_nodes:
                return None
            continue
        for turn in (heading, (heading[1], -heading[0]), (-heading[1], heading[0])):
            nxt = (cell[0] + turn[0], cell[1] + turn[1])
            if nxt in blocked or not (lo[0] <= nxt[0] <= hi[0] and lo[1] <= nxt[1] <= hi[1]):
                continue
            turned = turn != heading
            if occupied is None:
                length = 1.0
            else:
                length = occupied.step_cost(cell, nxt, turned)
                if length is None:
                    continue
            step = spent + length + (BEND if turned else 0.0)
            if nxt == e and turn != last:
                step += BEND  # arriving sideways costs the final bend
            key = (nxt, turn)
            if step < cost.get(key, float("inf")):
                cost[key] = step
                came[key] = (cell, heading)
                heapq.heappush(frontier, (step + _guess(nxt, e), next(counter), step, nxt, turn))
    return None


def _cell(point: Point) -> tuple[int, int]:
    return round(point[0] / GRID), round(point[1] / GRID)


def _guess(a: tuple[int, int], b: tuple[int, int]) -> float:
    """An estimate of the cost from a to b: the free grid's, weighted by GREED. More than
    the true cost (along the own net's wires, or where a straight run exists), so the
    search heads for the end rather than trying every equally good detour: much quicker,
    and the path found is at most GREED times as costly as the best."""
    return (abs(a[0] - b[0]) + abs(a[1] - b[1])) * GREED


def _blocked(obstacles: Sequence[Rect], lo, hi) -> set[tuple[int, int]]:
    cells = set()
    for x, y, w, h in obstacles:
        x0 = max(lo[0], int((x - CLEARANCE) // GRID))
        x1 = min(hi[0], int((x + w + CLEARANCE) // GRID) + 1)
        y0 = max(lo[1], int((y - CLEARANCE) // GRID))
        y1 = min(hi[1], int((y + h + CLEARANCE) // GRID) + 1)
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                px, py = cx * GRID, cy * GRID
                if x - CLEARANCE <= px <= x + w + CLEARANCE and \
                        y - CLEARANCE <= py <= y + h + CLEARANCE:
                    cells.add((cx, cy))
    return cells


def _trace(came: dict, key: tuple) -> list[tuple[int, int]]:
    cells = []
    while key is not None:
        cells.append(key[0])
        key = came[key]
    return cells[::-1]


def _points(start: Point, end: Point, cells: list[tuple[int, int]]) -> list[Point]:
    """The inner corners of start -> cells -> end."""
    path = [start] + [(cx * GRID, cy * GRID) for cx, cy in cells] + [end]
    corners = simplify(path)
    return [(float(x), float(y)) for x, y in corners[1:-1]]
