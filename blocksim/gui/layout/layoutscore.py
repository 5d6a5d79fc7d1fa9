"""How readable a drawing is, as one number: crossings, wire length and bends. Without Qt.

The automatic layout draws a small diagram several ways and keeps the one that scores
lowest (see autolayout._arrange), so this is what "a clean picture" means to it: every
crossing of two different nets counts 1, every WIRE_PER_CROSSING pixels of wire count 1,
and every BENDS_PER_CROSSING bends count 1.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Iterable, Sequence

from blocksim.gui.canvas.geometry import Point

WIRE_PER_CROSSING = 800.0
BENDS_PER_CROSSING = 10.0


def readability(routes: Iterable[tuple[Any, Sequence[Point]]]) -> float:
    """The score of a drawing given as (net, route corners) per wire: lower is better."""
    crossings, length, bends = measure(routes)
    return crossings + length / WIRE_PER_CROSSING + bends / BENDS_PER_CROSSING


def measure(routes: Iterable[tuple[Any, Sequence[Point]]]) -> tuple[int, float, int]:
    """(crossings between different nets, total length, bends) of orthogonal routes."""
    horizontal: list[tuple[float, float, float, Any]] = []  # (y, x1, x2, net)
    vertical: list[tuple[float, float, float, Any]] = []  # (x, y1, y2, net)
    length, bends = 0.0, 0
    for net, points in routes:
        bends += max(len(points) - 2, 0)
        for (x1, y1), (x2, y2) in zip(points, points[1:]):
            length += abs(x2 - x1) + abs(y2 - y1)
            if y1 == y2 and x1 != x2:
                horizontal.append((y1, min(x1, x2), max(x1, x2), net))
            elif x1 == x2 and y1 != y2:
                vertical.append((x1, min(y1, y2), max(y1, y2), net))
    horizontal.sort(key=lambda h: h[0])
    ys = [h[0] for h in horizontal]
    crossings = 0
    for x, y1, y2, net in vertical:  # only the horizontal pieces within its height
        for y, x1, x2, other in horizontal[bisect_right(ys, y1):bisect_left(ys, y2)]:
            if other != net and x1 < x < x2:
                crossings += 1
    return crossings, length, bends
