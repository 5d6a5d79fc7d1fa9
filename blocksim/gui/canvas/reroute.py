"""New bend points for the wires an edit spoiled, without Qt.

After blocks move (drag, nudge, rotate, flip, automatic layout) or a wire is drawn or
reconnected, a wire is left as it is while it is clean: not through a block, not doubling
back on itself, not on or touching another net's wire (see `routecheck`). A spoiled wire
keeps as many of the user's bends as still give a clean route, counted from the end that
stayed; failing that it takes the plain route, and failing that a path found around blocks
and other nets (`pathfind`). Wires are settled one after the other, each against the ones
before, so the result is deterministic and no two settled wires share a line.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from blocksim.gui.canvas.geometry import GRID, STUB, Point
from blocksim.gui.canvas.pathfind import Occupied, find_path
from blocksim.gui.canvas.routecheck import (
    Drawing,
    LineIndex,
    RectIndex,
    doubles_back,
    draw,
    segments,
    wire_ends,
    wire_route,
)
from blocksim.gui.canvas.routing import bend_points
from blocksim.model import Diagram, Wire

log = logging.getLogger(__name__)

Points = list[Point]
PASSES = 3  # rounds over the wires still spoiled
REACHES = (40.0, 120.0, 240.0)  # a path is searched near its ends first, then wider


class Router:
    """One level's drawing, kept up to date while wires are settled one by one."""

    def __init__(self, diagram: Diagram, names: Mapping[str, Any] | None = None,
                 layouts: Mapping[str, dict | None] | None = None,
                 points: Mapping[int, Sequence[Point]] | None = None):
        """`layouts` and `points` override blocks' layouts and wires' bends (an edit not
        yet applied); the diagram itself is not changed."""
        self.diagram = diagram
        if layouts:
            diagram = replace(diagram, blocks=[
                replace(b, layout=layouts[b.id]) if b.id in layouts else b
                for b in diagram.blocks])
        self.points = {i: list(w.points) for i, w in enumerate(diagram.wires)}
        self.points.update({i: list(p) for i, p in (points or {}).items()})
        if points:
            diagram = replace(diagram, wires=[
                replace(w, points=self.points[i]) if i in points else w
                for i, w in enumerate(diagram.wires)])
        self.drawing: Drawing = draw(diagram, names)
        self.blocks = RectIndex(self.drawing.rects)
        self.lines = LineIndex()
        self.routes: dict[int, Points] = {}
        self.pending: set[int] = set()  # spoiled wires not settled yet
        for r in self.drawing.routes:
            self.routes[r.index] = r.points
            self.lines.add(r.net, r.index, r.points)

    # ----- judging -----
    def faults(self, index: int, points: Sequence[Point]) -> int:
        """How many things are wrong with wire `index` drawn along these corners (wires
        still waiting to be settled do not count: they will make way)."""
        net = str(self.diagram.wires[index].src)
        count = sum(len(self.blocks.hits(a, b)) for a, b in segments(points))
        count += doubles_back(points)
        others = (self.lines.overlaps(net, points) | self.lines.touches(net, points))
        return count + len(others - self.pending - {index})

    def spoiled(self) -> list[int]:
        """Wires with a fault, in the level's order."""
        return [i for i, points in self.routes.items() if self.faults(i, points)]

    # ----- settling -----
    def settle(self, indices: Iterable[int], kept_end: Mapping[int, str] | None = None
               ) -> dict[int, Points]:
        """Make each of these wires clean if it is not; returns the new bend points of
        the wires that changed. `kept_end` says, per wire, which end stayed ("src" or
        "dst"): the user's bends are kept from that end as far as they can be.

        The spoiled wires are settled in order, each making way for the ones before it
        only. A wire left with a fault (no clean path near) is settled first in the next
        round, and the wires in its way are settled again after it ("rip-up and
        re-route")."""
        self.changed: dict[int, Points] = {}
        self.kept_end = dict(kept_end or {})
        todo = [i for i in dict.fromkeys(indices)
                if i in self.routes and self.faults(i, self.routes[i])]
        self._round(todo)
        for _ in range(PASSES - 1):
            left = [i for i in todo if self.faults(i, self.routes[i])]
            if not left:
                break
            for index in left:
                if self.faults(index, self.routes[index]):
                    self._round([index] + self._in_way(index))
            todo = list(dict.fromkeys(todo + [w for i in left for w in self._in_way(i)]))
        return self.changed

    def _round(self, order: list[int]) -> None:
        """Settle these wires in this order, each making way for the ones before it."""
        self.pending = set(order)
        for index in order:
            self.pending.discard(index)
            now = self.faults(index, self.routes[index])
            if not now:
                continue
            new = self._clear_of_all(index)
            if new is None:
                new = self._best(index, self.kept_end.get(index))
            if new is None or new == self.points[index]:
                continue
            if self.faults(index, wire_route(self.drawing, self.diagram.wires[index],
                                             new)) < now:
                self._set(index, new)
                self.changed[index] = new
        self.pending = set()

    def _clear_of_all(self, index: int) -> Points | None:
        """The best choice for a wire that is clean even of the wires still waiting
        (so they need not move for it), or None."""
        waiting, self.pending = self.pending, set()
        try:
            new = self._best(index, self.kept_end.get(index))
            clean = new is not None and not self.faults(
                index, wire_route(self.drawing, self.diagram.wires[index], new))
        finally:
            self.pending = waiting
        return new if clean else None

    def _in_way(self, index: int) -> list[int]:
        """The wires of other nets that wire `index`'s plain route would overlap or touch,
        and those passing right by its ports (where it has to go straight)."""
        wire = self.diagram.wires[index]
        route = wire_route(self.drawing, wire, [])
        ends = wire_ends(self.drawing, wire)
        if route is None or ends is None:
            return []
        net = str(wire.src)
        found = self.lines.overlaps(net, route) | self.lines.touches(net, route)
        for (x, y), (dx, dy) in ends:
            x, y = x + dx * 2 * STUB, y + dy * 2 * STUB
            lo_x, hi_x, lo_y, hi_y = x - 2 * GRID, x + 2 * GRID, y - 2 * GRID, y + 2 * GRID
            found |= {other for other, points in self.routes.items()
                      if str(self.diagram.wires[other].src) != net
                      and any(_box_meets([a, b], lo_x, hi_x, lo_y, hi_y)
                              for a, b in segments(points))}
        return sorted(found)

    def _set(self, index: int, points: Points) -> None:
        wire = self.diagram.wires[index]
        self.points[index] = points
        route = wire_route(self.drawing, wire, points)
        self.lines.remove(index)
        self.lines.add(str(wire.src), index, route)
        self.routes[index] = route

    def _best(self, index: int, kept_end: str | None) -> Points | None:
        """The first clean choice of: the user's bends from the end that stayed, no bends,
        a path found; if none is clean, the one with fewest faults."""
        wire = self.diagram.wires[index]
        user = self.points[index]
        tried: list[tuple[int, int, Points]] = []
        for order, points in enumerate(self._choices(wire, user, kept_end)):
            route = wire_route(self.drawing, wire, points)
            if route is None:
                return None
            faults = self.faults(index, route)
            if not faults:
                return points
            tried.append((faults, order, points))
        found = self._search(index, wire)
        if found is not None:
            route = wire_route(self.drawing, wire, found)
            faults = self.faults(index, route)
            if not faults:
                return found
            tried.append((faults, len(tried), found))
        return min(tried)[2] if tried else None

    @staticmethod
    def _choices(wire: Wire, user: Points, kept_end: str | None) -> Iterable[Points]:
        if kept_end == "src":
            for k in range(len(user) - 1, 0, -1):
                yield user[:k]
        elif kept_end == "dst":
            for k in range(1, len(user)):
                yield user[k:]
        yield []

    def _search(self, index: int, wire: Wire) -> Points | None:
        ends = wire_ends(self.drawing, wire)
        if ends is None:
            return None
        (start, sdir), (end, edir) = ends
        net = str(wire.src)
        for reach in REACHES:
            near = reach + 2 * STUB + GRID
            lo_x, hi_x = min(start[0], end[0]) - near, max(start[0], end[0]) + near
            lo_y, hi_y = min(start[1], end[1]) - near, max(start[1], end[1]) + near
            nearby = [(str(self.diagram.wires[other].src), points)
                      for other, points in self.routes.items()
                      if other != index and other not in self.pending
                      and _box_meets(points, lo_x, hi_x, lo_y, hi_y)]
            rects = [r for r in self.drawing.rects.values() if r[0] < hi_x
                     and r[0] + r[2] > lo_x and r[1] < hi_y and r[1] + r[3] > lo_y]
            found = find_path(start, sdir, end, edir, rects, Occupied.of(nearby, net), reach,
                              lead=STUB)
            if found is not None:
                return bend_points([start, *found, end])
        return None


def _box_meets(points: Sequence[Point], lo_x: float, hi_x: float, lo_y: float,
               hi_y: float) -> bool:
    """Whether the bounding box of these points meets the box given (edges included)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) <= hi_x and max(xs) >= lo_x and min(ys) <= hi_y and max(ys) >= lo_y


def after_move(diagram: Diagram, names: Mapping[str, Any] | None,
               layouts: Mapping[str, dict | None],
               points: Mapping[int, Sequence[Point]] | None = None) -> dict[int, Points]:
    """Bend points to change, besides `points`, when blocks take these `layouts`: the wires
    at the moved blocks and the wires the moved blocks now cover are made clean."""
    router = Router(diagram, names, layouts, points)
    moved = set(layouts)
    first, kept = [], {}
    for i, wire in enumerate(diagram.wires):
        a, b = wire.src.block in moved, wire.dst.block in moved
        if a or b:
            first.append(i)
            if a != b and i not in (points or {}):
                kept[i] = "dst" if a else "src"
    covered = [i for i, route in router.routes.items() if i not in set(first) and any(
        bid in moved for a, b in segments(route) for bid in router.blocks.hits(a, b))]
    changed = router.settle(first + covered, kept)
    log.debug("re-routed %d wires after moving %d blocks", len(changed), len(moved))
    return changed


def repair(diagram: Diagram, names: Mapping[str, Any] | None = None) -> int:
    """Re-route every spoiled wire of one level in place; returns how many changed."""
    router = Router(diagram, names)
    changed = router.settle(router.spoiled())
    for index, points in changed.items():
        diagram.wires[index].points = points
    return len(changed)


def settle_wire(diagram: Diagram, names: Mapping[str, Any] | None, wire: Wire,
                index: int | None = None) -> Points:
    """Bend points for a wire about to be added (index None) or to replace wire `index`:
    its own bends if they make a clean route, else a clean path if there is one."""
    wires = list(diagram.wires)
    if index is None:
        index = len(wires)
        wires.append(wire)
    else:
        wires[index] = wire
    router = Router(replace(diagram, wires=wires), names)
    changed = router.settle([index])
    return changed.get(index, list(wire.points))
