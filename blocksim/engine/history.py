"""The engine's side of input histories (transport delays) on the Python path.

A block that declares a `blockspec.History` gets a ring in the run's discrete-state array
(`blocksim.blocktypes.history_ring`); the engine fills it: after each accepted step, the inputs at
five points of the step from the solver's dense output (the records then interpolate the
input to the solver's order), and at each event a marker (the input may jump there), the
record of a step that went past a located event cut at its instant. A fixed delay reads
its markers to schedule the input's discontinuities as time events after the delay; it
never reads a step still being taken, because the steps are held to the shortest fixed
delay (`max_step`). The numba loop does the same in compiled code (`native.rings`), the C
backend and exported FMUs in C (`blocksim/ccode/runtime/bs_history.c`).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

from blocksim.blocktypes import history_ring as ring
from blocksim.compiler import dataflow
from blocksim.compiler.compiled import CompiledModel
from blocksim.engine import derived
from blocksim.engine.dopri5 import RTOL_FLOOR
from blocksim.engine.segment import PythonLoop

if TYPE_CHECKING:
    from blocksim.engine.simulator import RunState, Simulator

PROBE_FILENAME = "<blocksim generated history probe>"
BREAKPOINT = "breakpoint"  # the log entry of a fixed delay's breakpoint (`blocks.delays`)
# Where a piece of a step is probed: the quartic's nodes, then the two checks.
FRACTIONS = tuple(j / (ring.NODES - 1) for j in range(ring.NODES)) + ring.CHECKS


def probe_signals(model: CompiledModel) -> list[int]:
    """The signals the rings keep, channel after channel."""
    return [i for channel in model.history for i in channel.signals]


def probe_source(model: CompiledModel) -> str:
    """Source of `probe(t, x, m, z)`: the inputs the rings keep, pruned from `outputs`."""
    return dataflow.observe_source(derived.functions(model), probe_signals(model), "probe")


def probe_function(model: CompiledModel) -> Callable:
    """probe(t, x, m, z) -> the kept inputs (cached on the model)."""
    if "probe" not in model.derived:
        text = probe_source(model)
        scope: dict = {}
        namespace = model.functions["outputs"].__globals__  # the generated constants
        exec(compile(text, PROBE_FILENAME, "exec"), namespace, scope)  # our own text
        model.register_lines(PROBE_FILENAME, "probe", text)
        model.derived["probe"] = scope["probe"]
    return model.derived["probe"]


def max_step(model: CompiledModel) -> float:
    """The longest step that never reads a delayed input inside itself: the shortest
    fixed delay (inf without one)."""
    return min((c.delay for c in model.history if c.delay > 0), default=math.inf)


class History:
    """Fills the rings of one run (in its RunState's m) on the Python path, and reports a
    ring that overflowed on either path."""

    def __init__(self, sim: "Simulator"):
        self.sim = sim
        self.model = sim.model
        self.probe = probe_function(sim.model)
        # The blocks whose "breakpoint" entries are a delay's breakpoints (other blocks log
        # entries of that name too: a FromTable's jump is a fresh discontinuity).
        self.delays = frozenset(c.block for c in self.model.history if c.delay > 0)
        self.offsets = []
        offset = 0
        for channel in self.model.history:
            self.offsets.append(offset)
            offset += channel.width

    def record(self, st: "RunState", stepper) -> None:
        """The stepper's last accepted step into every ring: in pieces whose quartics
        meet the run's tolerances (an input that is no state, a sine source, can vary
        faster than the steps the states allow)."""
        t0, t1 = stepper.t_old, stepper.t
        if not t1 > t0:
            return
        s = self.sim.settings
        rtol = max(s.rtol, RTOL_FLOOR)  # as the solver honours it
        a, width, smallest = t0, t1 - t0, (t1 - t0) * 2.0 ** -ring.SPLITS
        while a < t1:
            b = t1 if a + width >= t1 else a + width
            values = []
            for f in FRACTIONS:
                tq = a if f == 0.0 else b if f == 1.0 else a + (b - a) * f
                values.append(self.probe(tq, stepper.dense(tq), st.m, st.z))
            if b - a > smallest and not ring.fits(values, len(values[0]), rtol, s.atol):
                width = 0.5 * (b - a)
                continue
            for channel, offset in zip(self.model.history, self.offsets):
                if not ring.store_step(st.m, channel.base, channel.capacity, channel.width,
                                       channel.span, a, b, values, offset):
                    self.check(st)
            a, width = b, 2.0 * width

    def mark(self, st: "RunState") -> None:
        """An event at st.t in every ring."""
        for channel in self.model.history:
            if not ring.store_marker(st.m, channel.base, channel.capacity, channel.width,
                                     channel.span, st.t, channel.delay, channel.feedback):
                self.check(st)

    def settled(self, st: "RunState", other: bool, entries: list[tuple[int, str]]) -> None:
        """The event at st.t has settled: `other`, a crossing or a sample hit happened;
        `entries`, the (block, kind) log entries of the instant. A marker is fresh where
        something other than a delay's breakpoint happened (a block's time event, a
        crossing, a hit), or the breakpoint of a delay that can reach the ring's input
        (`history_ring.settle_marker`)."""
        passed = set()
        for block, kind in entries:
            if kind == BREAKPOINT and block in self.delays:
                passed.add(block)
            else:
                other = True
        for channel in self.model.history:
            fresh = other or any(b in passed for b in channel.upstream)
            ring.settle_marker(st.m, channel.base, channel.capacity, channel.width, st.t,
                               fresh)

    def check(self, st: "RunState") -> None:
        """SimulationError naming the first block whose ring overflowed."""
        for channel in self.model.history:
            if st.m[channel.base + ring.OVERFLOW]:
                block = self.model.block_ids[channel.block]
                raise self.sim._fail(
                    f"the input history needs more than buffer_size = {channel.capacity} "
                    f"steps within {channel.span:g} s; raise buffer_size", st.t, block)


class HistoryLoop(PythonLoop):
    """The Python loop with every accepted step recorded in the rings."""

    def _stepper(self, st: "RunState", t_bound: float, first_step: float | None):
        stepper = super()._stepper(st, t_bound, first_step)
        inner, history = stepper.step, self.sim.history

        def step() -> None:
            inner()
            history.record(st, stepper)
        stepper.step = step  # the instance's own: the stepper's class stays what it is
        return stepper
