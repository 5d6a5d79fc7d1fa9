"""Drops layout values no canvas can draw (not finite, or absurdly far out), so the editor and
`blocksim render` place those blocks and route those wires automatically instead of failing.

The file format accepts any number in a layout (a coordinate of 1e308 once made `render`
raise OverflowError); the layout is the editor's business, so the editor repairs it, says
which block or wire it repaired, and writes the repaired layout on the next save. Without Qt.
"""
from __future__ import annotations

from blocksim.gui.canvas.geometry import usable_coordinate, usable_size
from blocksim.diagram.model import Diagram


def drop_unusable_layout(diagram: Diagram, prefix: str = "") -> list[str]:
    """Remove unusable positions and sizes of blocks and bend points of wires, at every
    level, in place; returns one message per block or wire repaired, naming it."""
    found = []
    for blk in diagram.blocks:
        layout = blk.layout
        if layout:
            name = f"block '{prefix}{blk.id}'"
            position = [layout.get(k) for k in ("x", "y")]
            if any(v is not None for v in position) and not all(
                    usable_coordinate(v) for v in position):
                layout.pop("x", None)
                layout.pop("y", None)
                found.append(f"{name}: layout position ({position[0]!r}, {position[1]!r}) "
                             f"is not usable; the block is placed automatically")
            for key in ("width", "height"):
                if layout.get(key) is not None and not usable_size(layout[key]):
                    found.append(f"{name}: layout {key} {layout.pop(key)!r} is not usable; "
                                 f"the default size is used")
        if blk.subsystem is not None:
            found += drop_unusable_layout(blk.subsystem, f"{prefix}{blk.id}/")
    for wire in diagram.wires:
        if wire.points and not all(usable_coordinate(x) and usable_coordinate(y)
                                   for x, y in wire.points):
            wire.points = []
            found.append(f"wire {prefix}{wire.src.block}.{wire.src.port} -> {prefix}"
                         f"{wire.dst.block}.{wire.dst.port}: bend points are not usable; "
                         f"the wire is routed automatically")
    return found
