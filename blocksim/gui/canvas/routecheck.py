"""How clean the wires of one diagram level are, as the canvas draws them. Without Qt.

`draw` works out the same block rectangles and wire routes the canvas items show (same
placement, same glyph, same router), and `check` counts what makes a drawing misleading:
segments through a block or over a block's label, segments of two different nets on one line (they look branched),
a bend or end of one net lying on another net's wire, or two nets' wires on one line with
only a short gap between them (both look like a join), wires doubling
back on themselves (a dangling stub) or crossing themselves (a loop), plus crossings and
bends. Tests, the benchmark and the
re-router (`reroute`) all use these numbers, so "clean" means one thing everywhere.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from blocksim.gui.canvas.geometry import LABEL_HEIGHT, Placement, Point, label_left, label_width
from blocksim.gui.canvas.nets import net_keys
from blocksim.gui.canvas.portinfo import (
    PortInfo,
    block_placement,
    bottom_ports,
    physical_ports,
    glyph,
    port_info,
    scope_names,
    subsystem_ports,
)
from blocksim.gui.canvas.routing import Rect, route
from blocksim.gui.layout.layoutscore import measure
from blocksim.diagram.model import Block, Diagram, PortRef, Wire

CELL = 200.0  # bucket size of the spatial index over block rectangles
INSET = 1.0  # a segment on a block's edge (a port stub) is not through it
GAP = 15.0  # two nets' wires on one line closer than this look like one wire

Segment = tuple[Point, Point]


@dataclass
class WireRoute:
    """One wire as drawn: its index in the level, its net (source port) and its corners."""

    index: int
    net: str
    src: str
    dst: str
    points: list[Point]


@dataclass
class Drawing:
    """Block rectangles and wire routes of one level, in canvas coordinates."""

    rects: dict[str, Rect]
    routes: list[WireRoute]
    places: dict[str, tuple[Placement, PortInfo]] = field(default_factory=dict)
    labels: dict[str, Rect] = field(default_factory=dict)  # the ids drawn under blocks
    nets: dict[int, str] = field(default_factory=dict)  # wire index -> its net (`nets`)

    def net(self, index: int, wire: Wire) -> str:
        """The net of wire `index` (its source port if the drawing has no word on it)."""
        return self.nets.get(index) or str(wire.src)


@dataclass
class Quality:
    """What `check` found; the lists name the wires (by index) and blocks concerned."""

    crossings: int = 0
    bends: int = 0
    length: float = 0.0
    through_blocks: list[tuple[int, str]] = field(default_factory=list)
    through_labels: list[tuple[int, str]] = field(default_factory=list)  # over a block's id
    shared: list[tuple[int, int]] = field(default_factory=list)  # different nets, one line
    touching: list[tuple[int, int]] = field(default_factory=list)  # a bend on another net
    stubs: list[int] = field(default_factory=list)  # wires that double back or loop

    @property
    def faults(self) -> int:
        """Everything that misleads a reader (crossings and bends are only untidy)."""
        return (len(self.through_blocks) + len(self.through_labels) + len(self.shared)
                + len(self.touching) + len(self.stubs))

    def summary(self) -> dict[str, Any]:
        return {"crossings": self.crossings, "bends": self.bends,
                "through blocks": len(self.through_blocks),
                "through labels": len(self.through_labels), "shared segments": len(self.shared),
                "touching": len(self.touching), "stubs": len(self.stubs)}


# ----- the drawing -----
def drawn_glyphs(diagram: Diagram, only: Iterable[str] | None = None) -> dict[str, str]:
    """The text drawn in each block (or in the blocks `only`): its port number for an
    Inport or Outport, else its glyph (the canvas sizes blocks to fit it)."""
    ins, outs = subsystem_ports(diagram)
    numbers = {bid: str(i + 1) for ports in (ins, outs) for i, bid in enumerate(ports)}
    wanted = None if only is None else set(only)
    return {b.id: numbers.get(b.id, "") if b.type in ("Inport", "Outport") else glyph(b)
            for b in diagram.blocks if wanted is None or b.id in wanted}


def draw(diagram: Diagram, names: Mapping[str, Any] | None = None,
         only: Iterable[str] | None = None) -> Drawing:
    """The level as the canvas draws it (wires whose ports do not exist are left out);
    with `only`, just those blocks and the wires between them."""
    names = scope_names(diagram) if names is None else names
    texts = drawn_glyphs(diagram, only)
    places = {}
    for blk in diagram.blocks:
        if blk.id in texts:
            info = port_info(blk, names, diagram.wires)
            places[blk.id] = (block_placement(blk, info, texts[blk.id]), info)
    drawing = Drawing({bid: place.rect for bid, (place, _) in places.items()}, [], places)
    drawing.labels = {blk.id: label_rect(drawing.rects[blk.id], blk, bottom_ports(*places[blk.id]))
                      for blk in diagram.blocks if blk.id in places}
    drawing.nets = dict(enumerate(level_nets(diagram, names, places)))
    for index, wire in enumerate(diagram.wires):
        points = wire_route(drawing, wire)
        if points is not None:
            drawing.routes.append(WireRoute(index, drawing.nets[index], wire.src.block,
                                            wire.dst.block, points))
    return drawing


def level_nets(diagram: Diagram, names: Mapping[str, Any],
               places: Mapping[str, tuple[Placement, PortInfo]]) -> list[str]:
    """The net of each wire of the level (see `nets`); blocks not in `places` are asked
    for their physical ports only if their type can have any."""
    physical: dict[str, tuple[str, ...]] = {b: info.physical for b, (_, info) in places.items()}
    blocks = {b.id: b for b in diagram.blocks}

    def is_physical(ref: PortRef) -> bool:
        ports = physical.get(ref.block)
        if ports is None:
            block = blocks.get(ref.block)
            ports = physical_ports(block, names) if block is not None else ()
            physical[ref.block] = ports
        return ref.port in ports

    return net_keys(diagram.wires, is_physical)


def label_rect(rect: Rect, block: Block, bottom: Sequence[float] = ()) -> Rect:
    """Where the canvas writes a block's label (its id) under it (beside the ports on its
    bottom edge, `bottom`: their x), a little inside the text's line so that a wire
    passing just above or below does not count."""
    x, y, w, h = rect
    width = label_width(str((block.layout or {}).get("label") or block.id))
    left = label_left(x, w, width, bottom)
    return left, y + h + 4.0, width, LABEL_HEIGHT - 6.0


def wire_ends(drawing: Drawing, wire: Wire) -> tuple[tuple[Point, Point], tuple[Point, Point]] | None:
    """(position, outward direction) of a wire's source and destination ports, or None."""
    src, dst = drawing.places.get(wire.src.block), drawing.places.get(wire.dst.block)
    if src is None or dst is None:
        return None
    a = src[1].slot(src[1].kind_of(wire.src.port, "out"), wire.src.port)
    b = dst[1].slot(dst[1].kind_of(wire.dst.port, "in"), wire.dst.port)
    if a is None or b is None:
        return None
    return src[0].port(*a), dst[0].port(*b)


def wire_route(drawing: Drawing, wire: Wire,
               points: Sequence[Point] | None = None) -> list[Point] | None:
    """The corners the canvas draws for a wire (through `points` if given, else through
    its own bend points)."""
    ends = wire_ends(drawing, wire)
    if ends is None:
        return None
    (start, sdir), (end, edir) = ends
    return route(start, sdir, end, edir, wire.points if points is None else points,
                 drawing.rects[wire.src.block], drawing.rects[wire.dst.block])


# ----- segments -----
def segments(points: Sequence[Point]) -> Iterator[Segment]:
    """The non-empty segments of a route."""
    for a, b in zip(points, points[1:]):
        if a != b:
            yield a, b


def crosses_rect(a: Point, b: Point, rect: Rect) -> bool:
    """Whether the axis-parallel segment a-b passes through the inside of a rectangle."""
    x, y, w, h = rect
    x0, x1 = x + INSET, x + w - INSET
    y0, y1 = y + INSET, y + h - INSET
    lo_x, hi_x = min(a[0], b[0]), max(a[0], b[0])
    lo_y, hi_y = min(a[1], b[1]), max(a[1], b[1])
    return lo_x < x1 and hi_x > x0 and lo_y < y1 and hi_y > y0


def doubles_back(points: Sequence[Point]) -> bool:
    """Whether a route turns straight back on itself somewhere (a dangling stub) or
    crosses itself (a loop)."""
    segs = list(segments(points))
    dirs = [_unit(a, b) for a, b in segs]
    if any(d1 == (-d2[0], -d2[1]) for d1, d2 in zip(dirs, dirs[1:])):
        return True
    return any(_meet(segs[i], segs[j]) for i in range(len(segs))
               for j in range(i + 2, len(segs)))


def _meet(s: Segment, t: Segment) -> bool:
    """Whether two axis-parallel segments share a point."""
    (a, b), (c, d) = s, t
    return (min(a[0], b[0]) <= max(c[0], d[0]) and min(c[0], d[0]) <= max(a[0], b[0])
            and min(a[1], b[1]) <= max(c[1], d[1]) and min(c[1], d[1]) <= max(a[1], b[1]))


def _unit(a: Point, b: Point) -> tuple[int, int]:
    dx, dy = b[0] - a[0], b[1] - a[1]
    return (int(dx > 0) - int(dx < 0), int(dy > 0) - int(dy < 0))


class RectIndex:
    """Block rectangles bucketed on a coarse grid, for quick 'which blocks are near'."""

    def __init__(self, rects: Mapping[str, Rect]):
        self.rects = dict(rects)
        self.cells: dict[tuple[int, int], list[str]] = defaultdict(list)
        for block_id, rect in self.rects.items():
            for cell in _cells(rect):
                self.cells[cell].append(block_id)

    def hits(self, a: Point, b: Point) -> list[str]:
        """Ids of the blocks the segment a-b passes through."""
        lo_x, hi_x = (a[0], b[0]) if a[0] <= b[0] else (b[0], a[0])
        lo_y, hi_y = (a[1], b[1]) if a[1] <= b[1] else (b[1], a[1])
        found: set[str] = set()
        cells, rects = self.cells, self.rects
        for cx in range(int(lo_x // CELL), int(hi_x // CELL) + 1):  # inline: opening a
            for cy in range(int(lo_y // CELL), int(hi_y // CELL) + 1):  # file checks
                for bid in cells.get((cx, cy), ()):  # every segment
                    x, y, w, h = rects[bid]
                    if lo_x < x + w - INSET and hi_x > x + INSET and \
                            lo_y < y + h - INSET and hi_y > y + INSET:
                        found.add(bid)
        return sorted(found) if found else []


def _cells(rect: Rect) -> Iterator[tuple[int, int]]:
    x, y, w, h = rect
    for cx in range(int(x // CELL), int((x + w) // CELL) + 1):
        for cy in range(int(y // CELL), int((y + h) // CELL) + 1):
            yield cx, cy


class LineIndex:
    """Horizontal and vertical segments, and the corners (bends and ends) of routes, by the
    line they lie on: overlap and touch queries look at one line only."""

    def __init__(self) -> None:
        self.lines: dict[tuple[str, float], list[tuple[float, float, Any, int]]] = \
            defaultdict(list)
        self.corners: dict[tuple[str, float], list[tuple[float, Any, int]]] = defaultdict(list)
        self._keys: dict[int, set[tuple[str, float]]] = defaultdict(set)  # lines of a wire

    def add(self, net: Any, wire: int, points: Sequence[Point]) -> None:
        keys = self._keys[wire]
        for a, b in segments(points):
            key, lo, hi = _line(a, b)
            self.lines[key].append((lo, hi, net, wire))
            keys.add(key)
        for x, y in points:
            for key, along in ((("h", float(y)), float(x)), (("v", float(x)), float(y))):
                self.corners[key].append((along, net, wire))
                keys.add(key)

    def remove(self, wire: int) -> None:
        """Forget a wire's segments and corners (before adding its new route)."""
        for key in self._keys.pop(wire, ()):
            for table in (self.lines, self.corners):
                if key in table:
                    table[key] = [e for e in table[key] if e[-1] != wire]

    def overlaps(self, net: Any, points: Sequence[Point]) -> set[int]:
        """Wires of other nets with a segment on the same line as one of these, over a
        positive length."""
        found = set()
        for a, b in segments(points):
            key, lo, hi = _line(a, b)
            for o_lo, o_hi, o_net, wire in self.lines.get(key, ()):
                if o_net != net and min(hi, o_hi) > max(lo, o_lo):
                    found.add(wire)
        return found

    def corners_on_others(self, net: Any, points: Sequence[Point]) -> set[int]:
        """Wires of other nets that a bend or end of this route lies on."""
        found = set()
        for x, y in points:
            for key, along in ((("h", float(y)), x), (("v", float(x)), y)):
                for lo, hi, o_net, wire in self.lines.get(key, ()):
                    if o_net != net and lo <= along <= hi:
                        found.add(wire)
        return found

    def in_line(self, net: Any, points: Sequence[Point]) -> set[int]:
        """Wires of other nets with a segment on the same line as one of these, less than
        GAP from it: the eye joins them into one wire."""
        found = set()
        for a, b in segments(points):
            key, lo, hi = _line(a, b)
            for o_lo, o_hi, o_net, wire in self.lines.get(key, ()):
                if o_net != net and max(lo, o_lo) - min(hi, o_hi) < GAP:
                    found.add(wire)
        return found

    def touches(self, net: Any, points: Sequence[Point]) -> set[int]:
        """Wires of other nets this route touches at a bend or end of either, or that
        continue one of its segments after a short gap: all look like a junction."""
        found = self.corners_on_others(net, points) | self.in_line(net, points)
        for a, b in segments(points):
            key, lo, hi = _line(a, b)
            found |= {wire for along, o_net, wire in self.corners.get(key, ())
                      if o_net != net and lo <= along <= hi}
        return found


def _line(a: Point, b: Point) -> tuple[tuple[str, float], float, float]:
    if a[1] == b[1]:
        return ("h", float(a[1])), min(a[0], b[0]), max(a[0], b[0])
    return ("v", float(a[0])), min(a[1], b[1]), max(a[1], b[1])


# ----- the check -----
def check(drawing: Drawing) -> Quality:
    """Count the faults and untidiness of a drawing (see `Quality`)."""
    quality = Quality()
    quality.crossings, quality.length, quality.bends = measure(
        (r.net, r.points) for r in drawing.routes)
    blocks = RectIndex(drawing.rects)
    labels = RectIndex(drawing.labels)
    lines = LineIndex()
    for r in drawing.routes:
        lines.add(r.net, r.index, r.points)
    for r in drawing.routes:
        for a, b in segments(r.points):
            quality.through_blocks += [(r.index, bid) for bid in blocks.hits(a, b)]
            quality.through_labels += [(r.index, bid) for bid in labels.hits(a, b)]
        if doubles_back(r.points):
            quality.stubs.append(r.index)
        quality.shared += [(r.index, w) for w in sorted(lines.overlaps(r.net, r.points))
                           if w > r.index]
        touched = lines.corners_on_others(r.net, r.points) | lines.in_line(r.net, r.points)
        quality.touching += [(r.index, w) for w in sorted(touched)]
    quality.through_blocks = sorted(set(quality.through_blocks))
    quality.through_labels = sorted(set(quality.through_labels))
    return quality


def level_quality(diagram: Diagram, names: Mapping[str, Any] | None = None) -> Quality:
    """`check` of one level as the canvas draws it."""
    return check(draw(diagram, names))


def all_levels(diagram: Diagram, names: Mapping[str, Any] | None = None,
               path: tuple[str, ...] = ()) -> Iterable[tuple[tuple[str, ...], Diagram, dict]]:
    """Every level of a diagram (top first) with the names visible there."""
    names = scope_names(diagram, names)
    yield path, diagram, names
    for blk in diagram.blocks:
        if blk.subsystem is not None:
            yield from all_levels(blk.subsystem, names, path + (blk.id,))
