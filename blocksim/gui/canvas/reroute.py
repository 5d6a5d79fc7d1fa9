"""New bend points for the wires an edit spoiled, without Qt.

After blocks move (drag, nudge, rotate, flip, automatic layout) or a wire is drawn or
reconnected, a wire is left as it is while it is clean: not through a block, not doubling
back on itself, not on or touching another net's wire (see `routecheck`), and, for a wire
at a moved block, not a detour (`is_detour`: much longer or bendier than a fresh route). A
spoiled wire keeps as many of the user's bends as still give a clean route that is no
detour, counted from the end that stayed; failing that it takes the plain route, and
failing that a path found around blocks and other nets (`pathfind`). Wires are settled one after the other, each against the ones
before, so the result is deterministic and no two settled wires share a line.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from blocksim.gui.canvas.geometry import GRID, STUB, Point, has_position
from blocksim.gui.canvas.pathfind import Occupied, find_path
from blocksim.gui.canvas.routecheck import (
    Drawing,
    LineIndex,
    all_levels,
    RectIndex,
    doubles_back,
    draw,
    segments,
    wire_ends,
    wire_route,
)
from blocksim.gui.canvas.routing import bend_points
from blocksim.diagram.model import Diagram, Wire

log = logging.getLogger(__name__)

Points = list[Point]
PASSES = 3  # rounds over the wires still spoiled
REACHES = (40.0, 160.0)  # a path is searched near its ends first, then wider
REPAIR_REACHES = (40.0,)  # the automatic layout's few spoiled wires need only local jogs
SEARCH_NODES = 3000  # states a search may look at before it gives up (some 30 ms),
# plus one per grid cell of its box: a long wire may look further
NEAR = 600.0  # what lies this much beyond an edit's blocks and wires cannot matter to it
PORT_KEEP = 2 * GRID  # a path found keeps this far out of line with other blocks' ports
# A route through kept user bends is a detour when it is longer than a fresh route (without
# those bends) by more than this factor plus this slack, or has more than EXTRA_BENDS more
# bends: a jog the user drew (two bends) survives a move, a loop the move made pointless not.
DETOUR_FACTOR = 1.2
DETOUR_SLACK = 2 * GRID
EXTRA_BENDS = 2


def route_size(points: Sequence[Point]) -> tuple[float, int]:
    """(length, bends) of a route given by its corners."""
    length = sum(abs(b[0] - a[0]) + abs(b[1] - a[1]) for a, b in zip(points, points[1:]))
    return length, max(len(points) - 2, 0)


def is_detour(route: Sequence[Point], fresh: Sequence[Point]) -> bool:
    """Whether a route is much longer or bendier than the fresh route between the same
    ports (the rule that decides whether a user's bends are still worth keeping)."""
    (length, bends), (fresh_length, fresh_bends) = route_size(route), route_size(fresh)
    return (length > DETOUR_FACTOR * fresh_length + DETOUR_SLACK
            or bends > fresh_bends + EXTRA_BENDS)


class Router:
    """One level's drawing, kept up to date while wires are settled one by one."""

    def __init__(self, diagram: Diagram, names: Mapping[str, Any] | None = None,
                 layouts: Mapping[str, dict | None] | None = None,
                 points: Mapping[int, Sequence[Point]] | None = None,
                 focus: Iterable[str] | None = None, reaches: Sequence[float] = REACHES):
        """`layouts` and `points` override blocks' layouts and wires' bends (an edit not
        yet applied); the diagram itself is not changed. With `focus`, only what lies
        near those blocks and their wires is drawn (see `neighbourhood`): an edit of one
        block in a big diagram costs what its surroundings cost."""
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
        self.reaches = tuple(reaches)
        only = None if focus is None else neighbourhood(diagram, set(focus))
        self.drawing: Drawing = draw(diagram, names, only)
        self.blocks = RectIndex(self.drawing.rects)
        self.labels = RectIndex(self.drawing.labels)
        self.lines = LineIndex()
        self.routes: dict[int, Points] = {}
        self.pending: set[int] = set()  # spoiled wires not settled yet
        self.boxes: dict[int, tuple[float, float, float, float]] = {}  # route bounds
        self._stubs: dict[tuple[str, str], tuple[float, float, float, float]] | None = None
        for r in self.drawing.routes:
            self.routes[r.index] = r.points
            self.boxes[r.index] = _bounds(r.points)
            self.lines.add(r.net, r.index, r.points)

    def net(self, index: int) -> str:
        """The net of wire `index` (see `nets`)."""
        return self.drawing.net(index, self.diagram.wires[index])

    # ----- judging -----
    def faults(self, index: int, points: Sequence[Point]) -> int:
        """How many things are wrong with wire `index` drawn along these corners (wires
        still waiting to be settled do not count: they will make way)."""
        net = self.net(index)
        count = sum(len(self.blocks.hits(a, b)) + len(self.labels.hits(a, b))
                    for a, b in segments(points))
        count += doubles_back(points)
        others = (self.lines.overlaps(net, points) | self.lines.touches(net, points))
        return count + len(others - self.pending - {index})

    def spoiled(self) -> list[int]:
        """Wires with a fault, in the level's order."""
        return [i for i, points in self.routes.items() if self.faults(i, points)]

    # ----- settling -----
    def settle(self, indices: Iterable[int], kept_end: Mapping[int, str] | None = None,
               rip_up: bool = True) -> dict[int, Points]:
        """Make each of these wires clean if it is not; returns the new bend points of
        the wires that changed. `kept_end` says, per wire, which end stayed ("src" or
        "dst"): the user's bends are kept from that end as far as they can be, while
        the route through them is no detour.

        The spoiled wires are settled in order, each making way for the ones before it
        only. A wire left with a fault (no clean path near) is settled first in the next
        round, and (with `rip_up`) the wires in its way are settled again after it
        ("rip-up and re-route"); without, no wire outside `indices` moves."""
        self.changed: dict[int, Points] = {}
        self.kept_end = dict(kept_end or {})
        self.fresh: dict[int, Points | None] = {}
        todo = [i for i in dict.fromkeys(indices)
                if i in self.routes and (self.faults(i, self.routes[i])
                                         or self._detour(i, self.routes[i]))]
        self._round(todo)
        for _ in range(PASSES - 1):
            left = [i for i in todo if self.faults(i, self.routes[i])]
            if not left:
                break
            for index in left:
                if self.faults(index, self.routes[index]):
                    self._round([index] + (self._in_way(index) if rip_up else []))
            if rip_up:
                todo = list(dict.fromkeys(todo + [w for i in left for w in self._in_way(i)]))
        return self.changed

    def _round(self, order: list[int]) -> None:
        """Settle these wires in this order, each making way for the ones before it."""
        self.pending = set(order)
        for index in order:
            self.pending.discard(index)
            now = self.faults(index, self.routes[index])
            detour = not now and self._detour(index, self.routes[index])
            if not now and not detour:
                continue
            new = self._clear_of_all(index)
            if new is None:
                new = self._best(index, self.kept_end.get(index))
            if new is None or new == self.points[index]:
                continue
            faults = self.faults(index, wire_route(self.drawing, self.diagram.wires[index],
                                                   new))
            if faults < now or (detour and not faults):
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
        net = self.net(index)
        found = self.lines.overlaps(net, route) | self.lines.touches(net, route)
        for (x, y), (dx, dy) in ends:
            x, y = x + dx * 2 * STUB, y + dy * 2 * STUB
            lo_x, hi_x, lo_y, hi_y = x - 2 * GRID, x + 2 * GRID, y - 2 * GRID, y + 2 * GRID
            found |= {other for other in self._near(lo_x, hi_x, lo_y, hi_y)
                      if self.net(other) != net
                      and any(_box_meets([a, b], lo_x, hi_x, lo_y, hi_y)
                              for a, b in segments(self.routes[other]))}
        return sorted(found)

    def _near(self, lo_x: float, hi_x: float, lo_y: float, hi_y: float) -> list[int]:
        """Wires whose bounds meet the box given."""
        return [i for i, (x0, x1, y0, y1) in self.boxes.items()
                if x0 <= hi_x and x1 >= lo_x and y0 <= hi_y and y1 >= lo_y]

    def _set(self, index: int, points: Points) -> None:
        wire = self.diagram.wires[index]
        self.points[index] = points
        route = wire_route(self.drawing, wire, points)
        self.lines.remove(index)
        self.lines.add(self.net(index), index, route)
        self.routes[index] = route
        self.boxes[index] = _bounds(route)

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
            if not faults and not (points and self._detour(index, route)):
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

    def _detour(self, index: int, route: Sequence[Point]) -> bool:
        """Whether a route of a wire whose user bends were kept (see `settle`) is a
        detour next to the fresh route (False when there is no clean fresh route)."""
        if index not in self.kept_end:
            return False
        ends = wire_ends(self.drawing, self.diagram.wires[index])
        if ends is None:
            return False
        (start, _), (end, _) = ends
        shortest = abs(end[0] - start[0]) + abs(end[1] - start[1])
        length, bends = route_size(route)
        if length <= DETOUR_FACTOR * shortest + DETOUR_SLACK and bends <= EXTRA_BENDS:
            return False  # no fresh route can be short enough to make this one a detour
        if index not in self.fresh:
            self.fresh[index] = self._fresh_route(index)
        fresh = self.fresh[index]
        return fresh is not None and is_detour(route, fresh)

    def _fresh_route(self, index: int) -> Points | None:
        """The clean route the wire takes without the user's bends (plain, else found),
        or None."""
        wire = self.diagram.wires[index]
        for points in ([], self._search(index, wire)):
            route = None if points is None else wire_route(self.drawing, wire, points)
            if route is not None and not self.faults(index, route):
                return route
        return None

    def _port_stubs(self) -> dict[tuple[str, str], tuple[float, float, float, float]]:
        """(block, port) -> the line just outside each port (`_stub_rect`):
        a path found keeps off other blocks' ports, where a wire passing by, or turning,
        would look connected to them."""
        if self._stubs is None:
            self._stubs = {}
            for block_id, (place, info) in self.drawing.places.items():
                for kind in ("in", "out", "phys"):
                    for name in info.ports(kind):
                        slot = info.slot(kind, name)
                        if slot is not None:
                            self._stubs[(block_id, name)] = _stub_rect(*place.port(*slot))
        return self._stubs

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
        net = self.net(index)
        for reach in self.reaches:
            near = reach + 2 * STUB + GRID
            lo_x, hi_x = min(start[0], end[0]) - near, max(start[0], end[0]) + near
            lo_y, hi_y = min(start[1], end[1]) - near, max(start[1], end[1]) + near
            nearby = [(self.net(other), self.routes[other])
                      for other in self._near(lo_x, hi_x, lo_y, hi_y)
                      if other != index and other not in self.pending]
            own = {(wire.src.block, wire.src.port), (wire.dst.block, wire.dst.port)}
            stubs = [r for key, r in self._port_stubs().items() if key not in own]
            rects = [r for table in (self.drawing.rects.values(), self.drawing.labels.values(),
                                     stubs)
                     for r in table if r[0] <= hi_x and r[0] + r[2] >= lo_x
                     and r[1] <= hi_y and r[1] + r[3] >= lo_y]
            cells = (hi_x - lo_x) * (hi_y - lo_y) / (GRID * GRID)
            found = find_path(start, sdir, end, edir, rects, Occupied.of(nearby, net), reach,
                              lead=STUB, max_nodes=int(SEARCH_NODES + cells))
            if found is not None:
                return bend_points([start, *found, end])
        return None


def _stub_rect(port: Point, direction: Point) -> tuple[float, float, float, float]:
    """The line a wire would take out of (or into) a port, PORT_KEEP long, as a rectangle
    of no width."""
    (x, y), (dx, dy) = port, direction
    ex, ey = x + dx * PORT_KEEP, y + dy * PORT_KEEP
    return min(x, ex), min(y, ey), abs(ex - x), abs(ey - y)


def _bounds(points: Sequence[Point]) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), max(xs), min(ys), max(ys)


def _box_meets(points: Sequence[Point], lo_x: float, hi_x: float, lo_y: float,
               hi_y: float) -> bool:
    """Whether the bounding box of these points meets the box given (edges included)."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) <= hi_x and max(xs) >= lo_x and min(ys) <= hi_y and max(ys) >= lo_y


def neighbourhood(diagram: Diagram, focus: set[str]) -> set[str]:
    """Ids of the blocks that can matter to re-routing the wires at `focus`: those near
    the focus blocks or the other ends of their wires, and the ends of every wire passing
    there (judged from layout positions and bend points, without drawing anything)."""
    where = {b.id: (_coordinate(b.layout, "x"), _coordinate(b.layout, "y"))
             for b in diagram.blocks}
    spots = [where[b] for b in focus if b in where]
    for wire in diagram.wires:
        if wire.src.block in focus or wire.dst.block in focus:
            spots += [where.get(wire.src.block, (0.0, 0.0)),
                      where.get(wire.dst.block, (0.0, 0.0)), *wire.points]
    if not spots:
        return set(focus)
    lo_x, hi_x = min(p[0] for p in spots) - NEAR, max(p[0] for p in spots) + NEAR
    lo_y, hi_y = min(p[1] for p in spots) - NEAR, max(p[1] for p in spots) + NEAR
    found = {b for b, (x, y) in where.items() if lo_x <= x <= hi_x and lo_y <= y <= hi_y}
    for wire in diagram.wires:
        ends = [where.get(wire.src.block, (0.0, 0.0)), where.get(wire.dst.block, (0.0, 0.0))]
        if _box_meets([*ends, *wire.points], lo_x - NEAR, hi_x + NEAR, lo_y - NEAR,
                      hi_y + NEAR):
            found |= {wire.src.block, wire.dst.block}
    return found | focus


def _coordinate(layout: Mapping[str, Any] | None, key: str) -> float:
    try:
        return float((layout or {}).get(key, 0.0))
    except (TypeError, ValueError):
        return 0.0


def after_move(diagram: Diagram, names: Mapping[str, Any] | None,
               layouts: Mapping[str, dict | None],
               points: Mapping[int, Sequence[Point]] | None = None) -> dict[int, Points]:
    """Bend points to change, besides `points`, when blocks take these `layouts`: the wires
    at the moved blocks and the wires the moved blocks (or their labels) now cover are made
    clean."""
    moved = set(layouts)
    router = Router(diagram, names, layouts, points, focus=moved)
    first, kept = [], {}
    for i, wire in enumerate(diagram.wires):
        a, b = wire.src.block in moved, wire.dst.block in moved
        if a or b:
            first.append(i)
            if a != b and i not in (points or {}):
                kept[i] = "dst" if a else "src"
    covered = [i for i, route in router.routes.items() if i not in set(first) and any(
        bid in moved for a, b in segments(route)
        for bid in router.blocks.hits(a, b) + router.labels.hits(a, b))]
    changed = router.settle(first + covered, kept)
    log.debug("re-routed %d wires after moving %d blocks", len(changed), len(moved))
    return changed


def repair(diagram: Diagram, names: Mapping[str, Any] | None = None,
           suspects: Iterable[int] | None = None) -> int:
    """Re-route every spoiled wire of one level in place (or, given `suspects`, those of
    them that are spoiled: a caller that knows where faults can be skips the full check
    and draws only their neighbourhood); returns how many changed."""
    focus = None if suspects is None else {
        b for i in suspects for b in (diagram.wires[i].src.block, diagram.wires[i].dst.block)}
    router = Router(diagram, names, reaches=REPAIR_REACHES, focus=focus)
    changed = router.settle(router.spoiled() if suspects is None else suspects)
    for index, points in changed.items():
        diagram.wires[index].points = points
    return len(changed)


def repair_saved(diagram: Diagram) -> list[str]:
    """Re-route, in place, the wires of every level whose saved bends make a fault (through
    a block, on another net's line: a hand-edited file, one saved before a block moved, or
    from an older version); every other wire keeps its bends exactly. Returns the wires
    changed, as "level/src->dst" (level left out at the top). A level where some block
    has no position is left to the automatic layout (it places blocks and routes anew)."""
    found = []
    for path, level, names in all_levels(diagram):
        if not level.wires or not all(has_position(b.layout) for b in level.blocks):
            continue
        router = Router(level, names)
        spoiled = router.spoiled()
        if not spoiled:
            continue
        changed = router.settle(spoiled, rip_up=False)
        for index, points in sorted(changed.items()):
            wire = level.wires[index]
            wire.points = points
            found.append("/".join([*path, f"{wire.src}->{wire.dst}"]))
    return found


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
    router = Router(replace(diagram, wires=wires), names,
                    focus={wire.src.block, wire.dst.block})
    changed = router.settle([index])
    return changed.get(index, list(wire.points))
