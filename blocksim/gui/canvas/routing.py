"""Orthogonal (Manhattan) wire routes through a wire's bend points, without Qt.

A wire's `points` are only hints: the route leaves the source port straight, passes through
every point, and enters the destination port straight, inserting the corners needed to keep
every segment horizontal or vertical. So a wire stays attached and orthogonal whatever the
user does to the blocks at its ends.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

from blocksim.gui.canvas.geometry import STUB, Point

Rect = tuple[float, float, float, float]  # x, y, width, height
DETOUR = 20.0  # how far a backward wire passes below its blocks


def route(start: Point, start_dir: Point, end: Point, end_dir: Point,
          points: Sequence[Point] = (), start_rect: Rect | None = None,
          end_rect: Rect | None = None) -> list[Point]:
    """The corners of an orthogonal route from an output port to an input port.

    `start_dir` and `end_dir` point out of the ports. Without bend points, a wire that can
    go forward jogs half-way; one that has to go back passes below both blocks.
    """
    s = (start[0] + start_dir[0] * STUB, start[1] + start_dir[1] * STUB)
    e = (end[0] + end_dir[0] * STUB, end[1] + end_dir[1] * STUB)
    middle = list(points) if points else _default_middle(start, start_dir, end, end_dir,
                                                         s, e, start_rect, end_rect)
    path = [start, s, *middle, e, end]
    return simplify(orthogonalize(path))


def _default_middle(start: Point, sdir: Point, end: Point, edir: Point, s: Point, e: Point,
                    start_rect: Rect | None, end_rect: Rect | None) -> list[Point]:
    horizontal = sdir[1] == 0 and edir[1] == 0
    vertical = sdir[0] == 0 and edir[0] == 0
    if horizontal and sdir[0] == -edir[0] and (e[0] - s[0]) * sdir[0] >= 0:
        mid = round((start[0] + end[0]) / 2)
        return [(mid, start[1]), (mid, end[1])]
    if vertical and sdir[1] == -edir[1] and (e[1] - s[1]) * sdir[1] >= 0:
        mid = round((start[1] + end[1]) / 2)
        return [(start[0], mid), (end[0], mid)]
    if horizontal and sdir[0] == -edir[0]:  # backwards: go round below both blocks
        rects = [r for r in (start_rect, end_rect) if r is not None]
        bottom = max([r[1] + r[3] for r in rects] + [start[1], end[1]]) + DETOUR
        return [(s[0], bottom), (e[0], bottom)]
    if vertical and sdir[1] == -edir[1]:
        rects = [r for r in (start_rect, end_rect) if r is not None]
        right = max([r[0] + r[2] for r in rects] + [start[0], end[0]]) + DETOUR
        return [(right, s[1]), (right, e[1])]
    return []


def orthogonalize(path: Sequence[Point]) -> list[Point]:
    """Insert a corner between consecutive points that are not on one horizontal or vertical.

    Of the two possible corners, take the one that makes no U-turn and the fewest bends.
    """
    out: list[Point] = [path[0]]
    for i in range(1, len(path)):
        a, b = out[-1], path[i]
        if a[0] == b[0] or a[1] == b[1]:
            out.append(b)
            continue
        before = out[-2] if len(out) >= 2 else None
        after = path[i + 1] if i + 1 < len(path) else None
        corners = [(b[0], a[1]), (a[0], b[1])]
        best = min(corners, key=lambda c: _cost([before, a, c, b, after]))
        out.extend([best, b])
    return out


def _direction(a: Point, b: Point) -> tuple[int, int] | None:
    dx, dy = b[0] - a[0], b[1] - a[1]
    if dx == 0 and dy == 0:
        return None
    if dx != 0 and dy != 0:
        return None  # not orthogonal: judged later
    return (int(dx > 0) - int(dx < 0), int(dy > 0) - int(dy < 0))


def _cost(window: list[Point | None]) -> int:
    """Bends count 1, U-turns 10, over a short run of points (None: no point there)."""
    pts = [p for p in window if p is not None]
    dirs = [d for d in (_direction(pts[k], pts[k + 1]) for k in range(len(pts) - 1)) if d]
    cost = 0
    for d1, d2 in zip(dirs, dirs[1:]):
        if d1 == (-d2[0], -d2[1]):
            cost += 10
        elif d1 != d2:
            cost += 1
    return cost


def simplify(path: Sequence[Point]) -> list[Point]:
    """Drop repeated points and points in the middle of a straight run."""
    out: list[Point] = []
    for p in path:
        p = (float(p[0]), float(p[1]))
        if out and out[-1] == p:
            continue
        if len(out) >= 2 and _between(out[-2], out[-1], p):
            out[-1] = p
            continue
        out.append(p)
    return out


def _between(a: Point, m: Point, b: Point) -> bool:
    """Whether m lies on the straight axis-parallel run from a to b."""
    if a[0] == m[0] == b[0]:
        return min(a[1], b[1]) <= m[1] <= max(a[1], b[1])
    if a[1] == m[1] == b[1]:
        return min(a[0], b[0]) <= m[0] <= max(a[0], b[0])
    return False


def bend_points(path: Sequence[Point]) -> list[Point]:
    """The points to store for a route: its inner corners (the ends come from the ports)."""
    return [(float(x), float(y)) for x, y in simplify(path)[1:-1]]


def junctions(paths: Iterable[Sequence[Point]]) -> list[Point]:
    """Where routes of one net (same source port) split: points with three or more arms.

    A point where two of the net's wires merely cross (each going straight through, sharing
    no arm) is not a junction: a dot there would claim a join that is not drawn.
    """
    routes = [[(a, b, d) for a, b in zip(path, path[1:])
               if (d := _direction(a, b)) is not None] for path in paths]
    corners = {p for segments in routes for a, b, _ in segments for p in (a, b)}
    arms: dict[Point, list[set[tuple[int, int]]]] = defaultdict(list)  # per route
    for segments in routes:
        mine: dict[Point, set[tuple[int, int]]] = defaultdict(set)
        for a, b, d in segments:
            mine[a].add(d)
            mine[b].add((-d[0], -d[1]))
        for a, b, d in segments:  # corners of other routes inside this one's segments
            for p in corners:
                if p != a and p != b and _between(a, p, b):
                    mine[p] |= {d, (-d[0], -d[1])}
        for p, dirs in mine.items():
            arms[p].append(dirs)
    found = []
    for p, per_route in arms.items():
        union = set().union(*per_route)
        if len(union) < 3:
            continue
        crossing = all(len(d) == 2 and _opposite(*d) for d in per_route) and \
            sum(len(d) for d in per_route) == len(union)
        if not crossing:
            found.append(p)
    return sorted(found)


def _opposite(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a == (-b[0], -b[1])
