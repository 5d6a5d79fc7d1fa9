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
        return Sizes({}, zero_crossings=1, discrete=1)  # m: the stop was asked for

    def zero_crossing(self, e: Emit):
        return [f"{e.g[0]} = {e.u['u'][0]}"]

    def update(self, e: Emit):
        # Logged once, though the input stays nonzero in every later pass of the event.
        return [f"if {e.u['u'][0]} != 0.0 and {e.m[0]} == 0.0:",
                f"    {e.m[0]} = 1.0",
                f"    {e.event('stop')}"]


BLOCK_TYPES = (Output, Scope, Stop,)
