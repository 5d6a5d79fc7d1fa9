"""Sink blocks: record signals under the block's id, or stop the run."""
from __future__ import annotations

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes
from blocksim.compiler.limits import MAX_PORTS


class Output(BlockType):
    """Log the input signal under this block's id (a column `id`, or `id[k]` for vectors)."""

    name = "Output"
    category = "Sinks"
    inputs = (Port("u", "signal to record"),)
    logs = True

    def sizes(self, p, in_widths):
        return Sizes({})


class Scope(Output):
    """Log the inputs under this block's id and plot them together in the editor.

    With several inputs the first is still `u` (wires stay when inputs are added), then u2,
    u3, ...; they are logged one after the other (columns `id[0]`, `id[1]`, ...), and the
    editor draws one curve per element with a legend. `units` labels the y axis.
    """

    name = "Scope"
    inputs = (Port("u", "signal to plot"),)
    params = (Param("inputs", "int", 1, "number of inputs: u, then u2, u3, ...", low=1,
                    high=MAX_PORTS),
              Param("units", "text", "", "units of the plotted signals, shown on the y "
                    "axis (e.g. m/s; empty: none)"))

    def input_ports(self, p):
        more = tuple(Port(f"u{k}", f"signal {k} to plot") for k in range(2, int(p.inputs) + 1))
        return (Port("u", "signal to plot"), *more)


class XYGraph(BlockType):
    """Log x and y under this block's id and plot y against x in the editor.

    The logged signal is x followed by y: columns `id[0]` (x) and `id[1]` (y) for scalar
    inputs; for vectors of width n, id[0] .. id[n-1] are x and the rest y, and the editor
    draws one curve per element pair. Rows are the output grid plus both limits of every
    event, as for a Scope, so a jump shows as a straight segment between the two limits.
    """

    name = "XYGraph"
    category = "Sinks"
    inputs = (Port("x", "horizontal coordinate"), Port("y", "vertical coordinate"))
    logs = True

    def sizes(self, p, in_widths):
        # None: a width the compiler has not reached yet (it asks again once it has), not 1
        wx, wy = in_widths.get("x"), in_widths.get("y")
        if wx and wy and wx != wy:
            raise ValueError(f"inputs 'x' (width {wx}) and 'y' (width {wy}) must have the "
                             f"same width")
        return Sizes({})


class Stop(BlockType):
    """End the run successfully at the event where the input becomes nonzero (true)."""

    name = "Stop"
    category = "Sinks"
    event_kinds = (
        EventKind("stop", "the input became nonzero: the run stops here"),
    )
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


BLOCK_TYPES = (Output, Scope, XYGraph, Stop,)
