"""Where new blocks go so that none lands on top of another (Qt-free).

Every way of adding blocks (a palette entry activated or dropped, the canvas menu, paste,
duplicate) asks for the shift nearest to where the blocks were wanted that keeps each of
them, with its label, a gap away from every block already there. A shift that only moved
the corners apart (the old cascade of 30 px) still drew a block over most of another.
"""
from __future__ import annotations

import math
from typing import Iterable, Iterator, Sequence

from blocksim.gui.canvas.geometry import GRID, LABEL_HEIGHT, Placement, label_width

Rect = tuple[float, float, float, float]  # x, y, width, height

GAP = 3 * GRID  # free space kept around a block moved aside (room for a wire between)
CLEAR = 0.0  # a spot the user chose is kept unless a block would be drawn over another
MAX_RINGS = 80  # grid steps searched around the wanted spot before going below everything
BEHIND = 1.5  # a shift left or up counts this much more: new blocks go right and down first
_CELL = 100.0  # side of the buckets of forbidden shifts


def footprint(place: Placement, label: str) -> list[Rect]:
    """The room a block takes on the canvas: its drawn rectangle, and its label's under it."""
    x, y, w, h = place.rect
    text_w = label_width(label)
    return [(x, y, w, h), (x + w / 2 - text_w / 2, y + h, text_w, LABEL_HEIGHT + 4.0)]


def free_shift(taken: Sequence[Rect], moving: Sequence[Rect], gap: float = GAP,
               clear: float = CLEAR, step: float = GRID) -> tuple[float, float]:
    """(0, 0) when every rectangle of `moving` is at least `clear` away from every rectangle
    of `taken` (the spot asked for is free); else the shift (dx, dy), in multiples of
    `step`, nearest to (0, 0) (left and up counting BEHIND times more) that leaves them at
    least `gap` away. Beyond MAX_RINGS steps, the shift that puts them below everything."""
    if not _Forbidden(taken, moving, clear, 0.0).hits(0.0, 0.0):
        return 0.0, 0.0
    forbidden = _Forbidden(taken, moving, gap, MAX_RINGS * step)
    best: tuple[float, float, float] | None = None  # (cost, -dy, -dx): ties go down, right
    for ring in range(1, MAX_RINGS + 1):
        if best is not None and ring * step > best[0]:  # no point of this ring costs less
            break
        for dx, dy in _ring(ring, step):
            key = (_cost(dx, dy), -dy, -dx)
            if (best is None or key < best) and not forbidden.hits(dx, dy):
                best = key
    if best is not None:
        return -best[2], -best[1]
    bottom = max(y + h for _, y, _, h in taken)
    top = min(y for _, y, _, _ in moving)
    return 0.0, math.ceil((bottom + gap - top) / step) * step


def _cost(dx: float, dy: float) -> float:
    return math.hypot(dx * (BEHIND if dx < 0 else 1.0), dy * (BEHIND if dy < 0 else 1.0))


def _ring(ring: int, step: float) -> Iterator[tuple[float, float]]:
    """The grid shifts `ring` steps away (Chebyshev distance) from (0, 0)."""
    for i in range(-ring, ring + 1):
        yield i * step, -ring * step
        yield i * step, ring * step
    for j in range(-ring + 1, ring):
        yield -ring * step, j * step
        yield ring * step, j * step


class _Forbidden:
    """The shifts that would bring a moving rectangle within `gap` of a taken one: for each
    pair an open rectangle of shifts, bucketed so a query looks at the few nearby."""

    def __init__(self, taken: Iterable[Rect], moving: Iterable[Rect], gap: float,
                 reach: float):
        """Only shifts within `reach` of (0, 0) in each direction are asked about."""
        self.cells: dict[tuple[int, int], list[Rect]] = {}
        moving = list(moving)
        edge = math.floor(reach / _CELL) + 1
        for tx, ty, tw, th in taken:
            for mx, my, mw, mh in moving:
                x0, x1 = tx - mx - mw - gap, tx + tw + gap - mx
                y0, y1 = ty - my - mh - gap, ty + th + gap - my
                if x1 < -reach or x0 > reach or y1 < -reach or y0 > reach:
                    continue  # a block far away: no shift searched reaches it
                box = (x0, y0, x1, y1)
                for i in range(max(math.floor(x0 / _CELL), -edge),
                               min(math.floor(x1 / _CELL), edge) + 1):
                    for j in range(max(math.floor(y0 / _CELL), -edge),
                                   min(math.floor(y1 / _CELL), edge) + 1):
                        self.cells.setdefault((i, j), []).append(box)

    def hits(self, dx: float, dy: float) -> bool:
        boxes = self.cells.get((math.floor(dx / _CELL), math.floor(dy / _CELL)), ())
        return any(x0 < dx < x1 and y0 < dy < y1 for x0, y0, x1, y1 in boxes)
