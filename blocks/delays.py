"""Continuous-time delays: Transport Delay (fixed) and Variable Transport Delay.

Both read the past of their input from a history the engine keeps (`blockspec.History`,
`blocksim.blocktypes.history_ring`): one record per accepted step interpolating the input to the
solver's order (a step is split into pieces until each meets the run's tolerances), and
a marker at each event, where the input may jump. The output never
depends on the input at the same instant, so a delay closes a feedback loop: a
delay-differential equation is an integrator fed back through a delay.

A fixed delay also makes the input's discontinuities exact events after the delay: the
start (where the initial output gives way to the input) and every event at t_e re-appear
as a time event at t_e + delay, so no step straddles a jump or kink of the delayed signal.
That sum is taken in ticks of the grid holding the clock's ticks and the delay
(`rates.delay_grid`, `history_ring.later`) where t_e is one: on a hit's time to the bit.
In a feedback loop such a breakpoint is itself an event of the input, whose discontinuity
is one derivative smoother each time round (t0, t0 + delay, t0 + 2 delay, ... for a DDE);
after `history_ring.MAX_LEVEL` rounds the solver steps over it. A breakpoint is scheduled
again only where it can matter: by the delay itself if its output reaches its input, by a
delay downstream of it, and by every delay where something else happened at the instant
(the engine decides from the diagram's graph and the event's log).
"""
from __future__ import annotations

from blocksim.blocktypes import history_ring
from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, History, Param, Port, Sizes, broadcast, lit
from blocksim.blocktypes.sampletime import CONTINUOUS

from .nonlinear import common_width, pick, shown, sizes_problem

_INITIAL = Param("initial_output", "vector", 0.0,
                 "the output before the delayed input exists (while t - delay < start)")
_BUFFER = Param("buffer_size", "int", 4096,
                "solver steps of the input kept: at least the steps within the (largest) "
                "delay; a run that needs more fails, naming the block", low=8, high=1_000_000)


def _ring(e: Emit) -> str:
    """The arguments naming the block's history ring (`history_ring`)."""
    return f"m, {e.hist}, {e.p.buffer_size}, {len(e.u['u'])}"


def _read(e: Emit, k: int, q: str, clamp: int, default: float) -> str:
    """Element k of the input at time q from the block's history (`default` before any
    step is recorded)."""
    element = k if len(e.u["u"]) > 1 else 0
    return f"_hist_read({_ring(e)}, {element}, {q}, {clamp}, {lit(default)})"


class TransportDelay(BlockType):
    """Delay the input by a fixed time: y(t) = u(t - delay), initial_output before.

    The input's history is kept with the solver's dense output, so the delayed signal is
    as accurate as the integration; the solver's steps are held to at most the delay.
    Every discontinuity of the input (the start, any event: a Step's, a table's
    breakpoint, a sample hit, a crossing) re-appears as a time event after the delay
    (logged "breakpoint"), where the output takes the input's left limit just before and
    its right limit just after. The instant is computed as sample hits are: the delay and
    the model's sample times count ticks of one grid (the delay as written: 0.1 is one
    tenth), so a hold's jump at a hit comes back exactly on the hit a whole number of
    periods later (one period between two holds of that period is a UnitDelay), not an
    ulp beside it. Vector inputs are delayed elementwise.
    """

    name = "TransportDelay"
    category = "Continuous"
    event_kinds = (
        EventKind("breakpoint", "a discontinuity of the input (the start, an event) came out "
                                "of the delay"),
    )
    params = (
        Param("delay", "scalar", 1.0, "the delay, > 0", unit="s"),
        _INITIAL,
        _BUFFER,
    )
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "the input delayed: u(t - delay)"),)
    rate = CONTINUOUS  # its output changes with time whatever the input's rate
    has_time_events = True

    def feedthrough(self, p):
        return {"y": ()}

    def check(self, p):
        if not p.delay > 0.0:
            return f"parameter 'delay' must be > 0 s, got {shown(p.delay)}"
        return None

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, ("u",), ("initial_output",))
        return Sizes({"y": n},
                     history=History("u", float(p.delay), int(p.buffer_size), float(p.delay)))

    def output(self, e: Emit):
        # Before the first breakpoint (the start's) has passed: the initial output.
        begun = f"m[{e.hist + history_ring.LO}] != -inf"
        y0 = broadcast(e.p.initial_output, len(e.y["y"]))
        q = f"t - {lit(e.p.delay)}"
        return {"y": [f"{y} = ({_read(e, k, q, 1, y0[k])} if {begun} else {lit(y0[k])})"
                      for k, y in enumerate(e.y["y"])]}

    def update(self, e: Emit):
        """The breakpoints due now pass (the ring's header moves on)."""
        return [f"while _hist_due({_ring(e)}, t, {lit(e.p.delay)}):",
                f"    {e.event('breakpoint')}"]

    def next_time_event(self, p, t):
        """Unknown without a run: the breakpoints follow the run's events (`next_time`
        reads them from the block's slots)."""
        return float("inf")

    def next_time(self, e: Emit) -> str:
        return f"_hist_later(m, {e.hist}, float(m[{e.hist + history_ring.HI}]), {lit(e.p.delay)})"

    def count_time_events(self, p, start, stop):
        return (stop - start) / float(p.delay) + 1.0


class VariableTransportDelay(BlockType):
    """Delay the input by a time given as an input: y(t) = u(t - tau(t)).

    tau is clipped to [0, max_delay]; the history kept covers max_delay. The output is
    initial_output while t - tau < start; that instant is a located event. When the
    delay is shorter than a solver step, the newest step's interpolant is extrapolated
    (with a zero delay at the start, the output is initial_output until the first step).
    Unlike the fixed delay, jumps of the input are not scheduled again after the delay:
    the solver's error control steps over them.
    """

    name = "VariableTransportDelay"
    category = "Continuous"
    params = (
        Param("max_delay", "scalar", 1.0, "the largest delay, >= 0: tau is clipped to "
              "[0, max_delay]", unit="s"),
        _INITIAL,
        _BUFFER,
    )
    inputs = (Port("u", "input"), Port("tau", "the delay (s)"))
    outputs = (Port("y", "the input delayed: u(t - tau)"),)
    rate = CONTINUOUS
    # Discrete slot: the start time, where the history begins.
    T0 = 0

    def feedthrough(self, p):
        return {"y": ("tau",)}

    def check(self, p):
        if not p.max_delay >= 0.0:
            return f"parameter 'max_delay' must be >= 0 s, got {shown(p.max_delay)}"
        return sizes_problem(p, ("initial_output",))

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, ("u", "tau"), ("initial_output",))
        return Sizes({"y": n}, discrete=1, zero_crossings=n,
                     history=History("u", float(p.max_delay), int(p.buffer_size)))

    def _q(self, e: Emit, k: int) -> str:
        return f"t - min(max({pick(e.u['tau'], k)}, 0.0), {lit(e.p.max_delay)})"

    def output(self, e: Emit):
        y0 = broadcast(e.p.initial_output, len(e.y["y"]))
        return {"y": [f"{y} = ({lit(y0[k])} if {e.z[k]} < 0.0 else "
                      f"{_read(e, k, self._q(e, k), 0, y0[k])})"
                      for k, y in enumerate(e.y["y"])]}

    def zero_crossing(self, e: Emit):
        return [f"{g} = {self._q(e, k)} - {e.m[self.T0]}" for k, g in enumerate(e.g)]

    def update(self, e: Emit):
        t0 = e.m[self.T0]
        return [f"if init and {t0} != t:", f"    {t0} = t", "    changed = True"]


BLOCK_TYPES = (TransportDelay, VariableTransportDelay)
