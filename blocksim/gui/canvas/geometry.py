"""Where a block and its ports sit on the canvas, from its layout dict, without Qt.

The canvas items, the automatic layout and the wire router all use these numbers, so the
picture, the layout and the routes always agree. Layout `x`, `y` is the top-left corner of
the block as drawn (after rotation); `width`, `height` are its unrotated size. A block is
flipped (mirrored left-right) first, then rotated clockwise by `rotation` degrees.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

Point = tuple[float, float]

GRID = 10.0
STUB = 10.0  # a wire leaves a port straight for at least this far
LABEL_HEIGHT = 16.0  # room for the id drawn under a block
LABEL_CHAR_WIDTH = 6.2  # average character width of the label font, for layout estimates

MAX_COORD = 1e7  # a layout value beyond this (or not finite) is treated as missing
MAX_SIZE = 1e5  # ... and a block size beyond this

WIDE_TYPES = {"Subsystem": 90.0, "TriggeredSubsystem": 100.0, "EnabledSubsystem": 100.0,
               "StateSpace": 80.0, "TransferFunction": 80.0, "Expression": 80.0,
               "CompareToConstant": 60.0}
_NARROW_TYPES = {"Mux": 20.0, "Demux": 20.0}


_OUTWARDS = {"in": (-1.0, 0.0), "out": (1.0, 0.0), "top": (0.0, -1.0), "bottom": (0.0, 1.0)}


def snap(value: float, grid: float = GRID) -> float:
    """`value` rounded to the nearest grid line."""
    return round(value / grid) * grid


PORT_CHAR_WIDTH = 4.8  # average character width of the port-name font
GLYPH_CHAR_WIDTH = 7.2  # ... and of the glyph font


def default_size(block_type: str, n_inputs: int, n_outputs: int, left_chars: int = 0,
                 right_chars: int = 0, glyph_chars: int = 0) -> tuple[float, float]:
    """The unrotated size of a block: 20 px of edge per port, and wide enough for the port
    names (`left_chars`, `right_chars`: longest on each side) around the glyph."""
    n = max(n_inputs, n_outputs, 1)
    width = _NARROW_TYPES.get(block_type) or WIDE_TYPES.get(block_type, 50.0)
    texts = ((left_chars + right_chars) * PORT_CHAR_WIDTH + glyph_chars * GLYPH_CHAR_WIDTH
             + 8.0 * (bool(left_chars) + bool(right_chars)) + 12.0)
    width = max(width, math.ceil(texts / GRID) * GRID)
    height = max(40.0, 20.0 * n)
    return width, height


LABEL_BOX_WIDTH = 400.0  # the canvas writes a block's label centred in a box this wide


def label_width(text: str) -> float:
    """An estimate of the width of a block label, for layout and routing (the canvas
    measures exactly), at most the box the canvas writes it in (a longer one is cut)."""
    return min(LABEL_CHAR_WIDTH * len(text) + 6.0, LABEL_BOX_WIDTH)


def label_left(x: float, w: float, width: float, bottom: Sequence[float] = ()) -> float:
    """The left end of a block's label of this `width`, centred under the block at x
    (width w), or, where a port on its bottom edge (`bottom`: their x) would have its
    wire through the text, just right of those ports."""
    left = x + w / 2 - width / 2
    hit = [p for p in bottom if left - 4.0 <= p <= left + width + 4.0]
    return max(hit) + 6.0 if hit else left


def port_spread(height: float, index: int, count: int) -> float:
    """Offset of port `index` of `count` along an edge: centred, 2 grid steps apart (more on
    a tall block), so ports of default-sized blocks sit on grid lines and wires line up."""
    count = max(count, 1)
    pitch = 2 * GRID * max(1, math.floor(height / count / (2 * GRID)))
    return height / 2 + (index - (count - 1) / 2) * pitch


@dataclass(frozen=True)
class Placement:
    """A block's position, size and orientation, mapping block-local points to the canvas."""

    x: float
    y: float
    w: float  # unrotated width
    h: float  # unrotated height
    rotation: int = 0
    flip: bool = False

    @property
    def size(self) -> tuple[float, float]:
        """Width and height as drawn (swapped by a quarter turn)."""
        return (self.h, self.w) if self.rotation in (90, 270) else (self.w, self.h)

    @property
    def rect(self) -> tuple[float, float, float, float]:
        """(x, y, width, height) of the drawn block on the canvas."""
        width, height = self.size
        return self.x, self.y, width, height

    def direction(self, dx: float, dy: float) -> Point:
        """A block-local direction as seen on the canvas."""
        if self.flip:
            dx = -dx
        for _ in range((self.rotation // 90) % 4):
            dx, dy = -dy, dx  # a quarter turn clockwise (y grows downwards)
        return dx, dy

    def local(self, lx: float, ly: float) -> Point:
        """A point of the unrotated block (0..w, 0..h) relative to the drawn block's corner."""
        cx, cy = self.direction(lx - self.w / 2, ly - self.h / 2)
        width, height = self.size
        return cx + width / 2, cy + height / 2

    def scene(self, lx: float, ly: float) -> Point:
        """A point of the unrotated block on the canvas."""
        px, py = self.local(lx, ly)
        return self.x + px, self.y + py

    def port_offset(self, edge: str, index: int, count: int) -> Point:
        """Unrotated position of port `index` of `count` on an edge: "in" (left), "out"
        (right), "top" (a conditional subsystem's trigger or enable input, a controlled
        source's input, a ground's pin) or "bottom" (a sensor's output)."""
        if edge == "top":
            return port_spread(self.w, index, count), 0.0
        if edge == "bottom":
            return port_spread(self.w, index, count), self.h
        return (0.0 if edge == "in" else self.w), port_spread(self.h, index, count)

    def port(self, edge: str, index: int, count: int) -> tuple[Point, Point]:
        """Canvas position of a port and the direction a wire leaves it (outwards)."""
        lx, ly = self.port_offset(edge, index, count)
        return self.scene(lx, ly), self.direction(*_OUTWARDS[edge])


def placement(layout: Mapping[str, Any] | None, block_type: str, n_inputs: int,
              n_outputs: int, size: tuple[float, float] | None = None) -> Placement:
    """The placement a layout dict describes, with defaults (or `size`) for what it lacks."""
    layout = layout or {}
    dw, dh = size or default_size(block_type, n_inputs, n_outputs)
    w = _positive(layout.get("width"), dw)
    h = max(_positive(layout.get("height"), dh), 20.0 * max(n_inputs, n_outputs, 1))
    rotation = layout.get("rotation", 0)
    rotation = rotation if rotation in (0, 90, 180, 270) else 0
    return Placement(_number(layout.get("x"), 0.0), _number(layout.get("y"), 0.0), w, h,
                     int(rotation), bool(layout.get("flip", False)))


def has_position(layout: Mapping[str, Any] | None) -> bool:
    """Whether a layout dict places the block (both coordinates present)."""
    return (bool(layout) and usable_coordinate(layout.get("x"))
            and usable_coordinate(layout.get("y")))


def usable_coordinate(value: Any) -> bool:
    """Whether a layout value can place something on a canvas: a finite number no farther
    out than MAX_COORD (1e308 in a file once made pictures fail to render)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and abs(value) <= MAX_COORD)


def usable_size(value: Any) -> bool:
    """Whether a layout width or height can be drawn: positive, finite, at most MAX_SIZE."""
    return usable_coordinate(value) and 0 < value <= MAX_SIZE


def _number(value: Any, default: float) -> float:
    return float(value) if usable_coordinate(value) else default


def _positive(value: Any, default: float) -> float:
    return float(value) if usable_size(value) else default
