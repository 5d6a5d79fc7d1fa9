"""Sink blocks: record signals under the block's id, or stop the run."""
from __future__ import annotations

from blocksim.blockspec import BlockType, Emit, Port, Sizes


class Output(BlockType):
    """Log the input signal under this block's id (a column `id`, or `id[k]` for vectors)."""

    name = "Output"
    category = "Sinks"
    inputs = (Port("u", "signal to record"),)
    logs = True

    def sizes(self, p, in_widths):
        return Sizes({})


class Scope(Output):
    """Log the input under this block's id and plot it in the editor."""

    name = "Scope"


class Stop(BlockType):
    """End the run successfully at the event where the input becomes nonzero (true)."""

    name = "Stop"
    category = "Sinks"
    inputs = (Port("u", "stop when nonzero"),)

    def sizes(self, p, in_widths):
        return Sizes({}, zero_crossings=1)

    def zero_crossing(self, e: Emit):
        return [f"{e.g[0]} = {e.u['u'][0]}"]

    def update(self, e: Emit):
        return [f"if {e.u['u'][0]} != 0.0: ev.append(({e.index}, 'stop'))"]


BLOCK_TYPES = (Output, Scope, Stop,)
