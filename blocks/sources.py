"""Source blocks: signals that depend only on time and parameters."""
from __future__ import annotations

import math

from blocksim.blockspec import BlockType, Emit, Param, Port, Sizes, broadcast, lit, size_of


class Constant(BlockType):
    """Output a constant value (scalar or vector)."""

    name = "Constant"
    category = "Sources"
    params = (Param("value", "vector", 1.0, "the constant"),)
    outputs = (Port("y", "the constant"),)

    def sizes(self, p, in_widths):
        return Sizes({"y": size_of(p.value)})

    def output(self, e: Emit):
        values = broadcast(e.p.value, len(e.y["y"]))
        return {"y": [f"{y} = {lit(v)}" for y, v in zip(e.y["y"], values)]}


class Step(BlockType):
    """Jump from `before` to `after` at `time`, hit exactly as a time event."""

    name = "Step"
    category = "Sources"
    params = (
        Param("time", "scalar", 1.0, "step time", unit="s"),
        Param("before", "vector", 0.0, "value before the step"),
        Param("after", "vector", 1.0, "value from the step time on"),
    )
    outputs = (Port("y", "step signal"),)
    has_time_events = True

    def check(self, p):
        if size_of(p.before) not in (1, size_of(p.after)) and size_of(p.after) != 1:
            return "'before' and 'after' have different lengths"
        return None

    def sizes(self, p, in_widths):
        return Sizes({"y": max(size_of(p.before), size_of(p.after))}, discrete=1)

    def next_time_event(self, p, t):
        return p.time if t < p.time else math.inf

    def output(self, e: Emit):
        n = len(e.y["y"])
        before, after = broadcast(e.p.before, n), broadcast(e.p.after, n)
        return {"y": [f"{y} = ({lit(a)} if {e.m[0]} else {lit(b)})"
                      for y, a, b in zip(e.y["y"], after, before)]}

    def update(self, e: Emit):
        return [f"if {e.m[0]} == 0.0 and t >= {lit(e.p.time)}:",
                f"    {e.m[0]} = 1.0; {e.event('step')}"]


BLOCK_TYPES = (Constant, Step,)
