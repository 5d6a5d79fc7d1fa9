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
        for r in self.drawing.routes:
            self.routes[r.index] = r.points
            self.lines.add(r.net, r.index, r.points)

    # ----- judging -----
    def faults(self, index: int, points: Sequence[Point]) -> int:
        """How many things are wrong with wire `index` drawn along these corners."""
        net = str(self.diagram.wires[index].src)
        count = sum(len(self.blocks.hits(a, b)) for a, b in segments(points))
        count += doubles_back(points)
        count += len(self.lines.overlaps(net, points) - {index})
        count += len(self.lines.touches(net, points) - {index})
        return count

    def spoiled(self) -> list[int]:
        """Wires with a fault, in the level's order."""
        return [i for i, points in self.routes.items() if self.faults(i, points)]

    # ----- settling -----
    def settle(self, indices: Iterable[int], kept_end: Mapping[int, str] | None = None
               ) -> dict[int, Points]:
        """Make each of these wires clean if it is not; returns the new bend points of
        the wires that changed. `kept_end` says, per wire, which end stayed ("src" or
        "dst"): the user's bends are kept from that end as far as they can be."""
        changed: dict[int, Points] = {}
        for index in dict.fromkeys(indices):
            route = self.routes.get(index)
            if route is None or not self.faults(index, route):
                continue
            end = (kept_end or {}).get(index)
            new = self._best(index, end)
            if new is not None and new != self.points[index]:
                self._set(index, new)
                changed[index] = new
        return changed

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
                      if other != index and _box_meets(points, lo_x, hi_x, lo_y, hi_y)]
            rects = [r for r in self.drawing.rects.values() if r[0] < hi_x
                     and r[0] + r[2] > lo_x and r[1] < hi_y and r[1] + r[3] > lo_y]
            found = find_path(start, sdir, end, edir, rects, Occupied.of(nearby, net), reach)
            if found is not None:
                return bend_points([start, *found, end])
        return None


def _box_meets(points: Sequence[Point], lo_x: float, hi_x: float, lo_y: float,
               hi_y: float) -> bool:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) < hi_x and max(xs) > lo_x and min(ys) < hi_y and max(ys) > lo_y


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
