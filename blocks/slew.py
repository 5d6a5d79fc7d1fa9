"""Nonlinearities with memory whose switching depends on the direction the input moves:
Rate Limiter and Backlash.

Where they start or stop following the input is a condition on du/dt (the input's rate
reaching a slew rate; the input turning round). The engine has no derivative of a signal,
and no function of u's values alone changes sign at that instant: a limiter that only saw
u would notice the change late, by the time u had drifted measurably from the right
answer. So these blocks read du/dt from an input `du` (often at hand: the input of the
integrator that makes u, the cosine beside a sine, a ramp's slope) and locate those
instants as ordinary zero crossings of du - rate or du. For an input that is piecewise
constant (a setpoint, a sequence of steps) `derivative` = "zero" drops the port.

A jump of u at an event (a step) is seen by comparing u with the block's output just
before the event (`pre_event`); a change smaller than about 1e-13 of |u| plus what u
moves in a few ulps of t (roundoff of a continuous signal whose formula changes at an
event) counts as continuous.
"""
from __future__ import annotations

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes, broadcast, lit, size_of

from .nonlinear import common_width, pick, shown, sizes_problem

_DERIVATIVE = Param(
    "derivative", "choice", "port",
    "where du/dt comes from: 'port' (input du, exact switching for any input) or 'zero' "
    "(u is piecewise constant, e.g. a setpoint: switching only where it jumps; no du port; "
    "u must not move between its jumps)",
    choices=("port", "zero"))
_DU = Port("du", "du/dt, the rate of change of u (derivative = port)")


def _ports(p) -> tuple[str, ...]:
    return ("u", "du") if p.derivative == "port" else ("u",)


def _du(e: Emit, k: int) -> str:
    return pick(e.u["du"], k) if "du" in e.u else "0.0"


def _tolerance(u: str, y: str, rate: str) -> str:
    """The size below which u - y at an event counts as roundoff, not a jump: relative to
    the values, plus what a signal moving at `rate` covers in a few ulps of t (an event's
    instant is the first float past a crossing, where two formulas of one continuous
    signal differ by that much)."""
    return f"1e-13 * (abs({u}) + abs({y})) + 4e-15 * abs(t) * ({rate})"


class _ReadsRate:
    """Mixed into RateLimiter and Backlash: the `du` port only with derivative = "port";
    the output depends on u directly (it follows u in some modes)."""

    inputs: tuple[Port, ...]

    def input_ports(self, p):
        return self.inputs if p.derivative == "port" else self.inputs[:1]

    def feedthrough(self, p):
        return {"y": ("u",)}


class RateLimiter(_ReadsRate, BlockType):
    """Limit the rate of change of a signal (continuous time, as Simulink's Rate Limiter).

    The output follows u while du/dt lies within [falling, rising]; otherwise it moves at
    the limit rate (a state y' = rising or falling) until it meets u again. A jump of u
    (and an initial output different from u at the start) is followed at the limit rate
    too. Modes: following (y = u exactly), rising limited, falling limited. The instants
    between them are located events: limiting starts where du - rising or du - falling
    crosses zero (the `du` input; see `derivative`) or u jumps, and ends where u - y
    crosses zero; events log "rising limit", "falling limit" and "follow". With a `du`
    input a second state integrates it, only so that the solver's steps follow the input
    while y moves at a constant rate (a crossing cannot hide inside one long step).
    """

    name = "RateLimiter"
    category = "Discontinuities"
    event_kinds = (
        EventKind("rising limit", "the output moves at the `rising` rate (the input rises "
                                  "faster, or jumped up)"),
        EventKind("falling limit", "the output moves at the `falling` rate (the input falls "
                                   "faster, or jumped down)"),
        EventKind("follow", "the output met the input again and follows it"),
    )
    params = (
        Param("rising", "vector", 1.0, "rising slew rate, > 0: the fastest the output rises",
              unit="1/s"),
        Param("falling", "vector", -1.0, "falling slew rate, < 0 (Simulink's sign): the "
              "fastest the output falls", unit="1/s"),
        Param("initial", "vector", 0.0, "initial output y(0); it ramps to u(0) if different"),
        _DERIVATIVE,
    )
    inputs = (Port("u", "input"), _DU)
    outputs = (Port("y", "the rate-limited input"),)
    _VECTORS = ("rising", "falling", "initial")
    # Discrete slots per element: mode (0, +1, -1), output and input before the event,
    # whether limiting began in this event.
    M, L, U, B = 0, 1, 2, 3
    SLOTS = 4


    def check(self, p):
        problem = sizes_problem(p, self._VECTORS)
        if problem:
            return problem
        if any(r <= 0.0 for r in broadcast(p.rising, size_of(p.rising))):
            return f"parameter 'rising' must be > 0 (a rate of increase), got {shown(p.rising)}"
        if any(f >= 0.0 for f in broadcast(p.falling, size_of(p.falling))):
            return (f"parameter 'falling' must be < 0 (a rate of decrease, as in Simulink), "
                    f"got {shown(p.falling)}")
        return None

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, _ports(p), self._VECTORS)
        shadow = n if p.derivative == "port" else 0
        return Sizes({"y": n}, states=n + shadow, discrete=self.SLOTS * n, zero_crossings=3 * n)

    def zc_directions(self, p, count):
        return [-1] * count  # u reaching y; du leaving [falling, rising]

    def initial_states(self, p, n):
        count = n // 2 if p.derivative == "port" else n
        return broadcast(p.initial, count) + [0.0] * (n - count)

    def initial_discrete(self, p, n):
        y0 = broadcast(p.initial, n // self.SLOTS)
        # Before the start "u was y0": a different u(0) is a jump, limited from y0.
        return [v for k in range(n // self.SLOTS) for v in (0.0, y0[k], y0[k], 0.0)]

    def _slots(self, e: Emit, k: int) -> tuple[str, str, str, str]:
        return tuple(e.m[self.SLOTS * k:self.SLOTS * (k + 1)])  # type: ignore[return-value]

    def _rates(self, e: Emit) -> tuple[list[float], list[float]]:
        n = len(e.y["y"])
        return broadcast(e.p.rising, n), broadcast(e.p.falling, n)

    def output(self, e: Emit):
        return {"y": [f"{y} = ({e.x[k]} if {self._slots(e, k)[self.M]} != 0.0 else "
                      f"{pick(e.u['u'], k)})" for k, y in enumerate(e.y["y"])]}

    def derivative(self, e: Emit):
        rise, fall = self._rates(e)
        lines = []
        n = len(e.y["y"])
        for k in range(n):
            mode = self._slots(e, k)[self.M]
            lines.append(f"{e.dx[k]} = ({lit(rise[k])} if {mode} > 0.0 else {lit(fall[k])} "
                         f"if {mode} < 0.0 else 0.0)")
        # The shadow integrates du: the solver's error control then follows the input in
        # every mode (y' is constant), so u cannot cross y and back within one step.
        lines += [f"{e.dx[n + k]} = {_du(e, k)}" for k in range(len(e.dx) - n)]
        return lines

    def zero_crossing(self, e: Emit):
        rise, fall = self._rates(e)
        lines = []
        for k in range(len(e.y["y"])):
            mode, u, x, du = self._slots(e, k)[self.M], pick(e.u["u"], k), e.x[k], _du(e, k)
            g = e.g[3 * k:3 * k + 3]
            lines.append(f"{g[0]} = ({u} - {x} if {mode} > 0.0 else {x} - {u} "
                         f"if {mode} < 0.0 else 1.0)")
            if "du" in e.u:
                lines += [f"{g[1]} = ({lit(rise[k])} - {du} if {mode} == 0.0 else 1.0)",
                          f"{g[2]} = ({du} - {lit(fall[k])} if {mode} == 0.0 else 1.0)"]
            else:
                lines += [f"{g[1]} = 1.0", f"{g[2]} = 1.0"]
        return lines

    def pre_event(self, e: Emit):
        lines = []
        for k in range(len(e.y["y"])):
            mode, left, left_u, began = self._slots(e, k)
            u = pick(e.u["u"], k)
            lines += [f"{left} = ({e.x[k]} if {mode} != 0.0 else {u})", f"{left_u} = {u}",
                      f"{began} = 0.0"]
        return lines

    def update(self, e: Emit):
        """Limiting: u past y just after the event ends it; u level with y just after
        (moving at the limit rate) does not. In the event where limiting began, u and y
        are level to roundoff (at an onset they part only at second order, below what the
        look-ahead resolves), so there only a jump of u back across y ends it. Following
        (also just caught): a jump of u at this event starts limiting from the output
        before it; else, if it was following before this pass, du leaving [falling,
        rising] just after the event starts it from u (after a catch the next pass checks
        the rates, which read 1.0 while limiting). Whether u jumped compares it with its
        value before the event, not with y: a catch that a fixed-step solver sees late,
        with u already past y, is still a catch. One entry per change of mode: where y
        meets u while u moves faster the other way, "follow" then the new limit."""
        rise, fall = self._rates(e)
        d, old, jump = f"_d{e.index}", f"_o{e.index}", f"_j{e.index}"
        lines = []
        for k in range(len(e.y["y"])):
            mode, left, left_u, began = self._slots(e, k)
            u, x, du = pick(e.u["u"], k), e.x[k], _du(e, k)
            zn = e.zn[3 * k:3 * k + 3]
            tol = _tolerance(u, left_u, f"abs({du}) + {lit(rise[k] - fall[k])}")
            lines += [
                f"{old} = {mode}",
                f"{jump} = abs({u} - {left_u}) > {tol}",
                f"if {mode} > 0.0 and {zn[0]} < 0.0 and ({began} == 0.0 or {jump}):",
                f"    {mode} = 0.0",
                f"elif {mode} < 0.0 and {zn[0]} < 0.0 and ({began} == 0.0 or {jump}):",
                f"    {mode} = 0.0",
                f"if {mode} == 0.0:",
                f"    {d} = {u} - {left}",
                f"    if {jump} and {d} > {tol}:",
                f"        {x} = {left}; {mode} = 1.0; {began} = 1.0",
                f"    elif {jump} and -{d} > {tol}:",
                f"        {x} = {left}; {mode} = -1.0; {began} = 1.0",
                f"    elif {old} == 0.0 and {zn[1]} < 0.0:",
                f"        {x} = {u}; {mode} = 1.0; {began} = 1.0",
                f"    elif {old} == 0.0 and {zn[2]} < 0.0:",
                f"        {x} = {u}; {mode} = -1.0; {began} = 1.0",
                f"if {mode} != {old}:",
                f"    if {mode} > 0.0: {e.event('rising limit')}",
                f"    elif {mode} < 0.0: {e.event('falling limit')}",
                f"    else: {e.event('follow')}",
            ]
        return lines


class Backlash(_ReadsRate, BlockType):
    """Play between input and output, as in gears: Simulink's Backlash.

    The output holds its value while the input moves within a deadband of `width` centred
    on it; when the input reaches an edge it pushes the output along (y = u - width/2
    going up, u + width/2 going down) until it turns round, and the output holds again.
    Modes: disengaged (y held), engaged upwards, engaged downwards. Engagement is located
    where u crosses an edge of the band (or jumps past it); disengagement where du/dt
    crosses zero (the `du` input; see `derivative`) or u jumps back. With derivative =
    "zero" (u piecewise constant) the contact after a push lasts until u jumps back, as
    the driven side stays against the driver at rest (the output is the same as if it
    had been released there); a u that moves between its jumps after all is followed
    while it pushes, never chattered. Events log "engage" and "disengage". At the start
    an initial output with u(0) outside its band engages.
    """

    name = "Backlash"
    category = "Discontinuities"
    event_kinds = (
        EventKind("engage", "the input reached an edge of the deadband and pushes the output "
                            "along"),
        EventKind("disengage", "the input turned round (or jumped back): the output holds"),
    )
    params = (
        Param("width", "vector", 1.0, "deadband width, >= 0 (same unit as u)", low=0.0),
        Param("initial", "vector", 0.0, "initial output"),
        _DERIVATIVE,
    )
    inputs = (Port("u", "input (the driving side)"), _DU)
    outputs = (Port("y", "the driven side"),)
    _VECTORS = ("width", "initial")
    # Discrete slots per element: mode (0, +1, -1), held output, output before the event,
    # whether it was released in this event.
    M, Y, L, R = 0, 1, 2, 3
    SLOTS = 4


    def check(self, p):
        return sizes_problem(p, self._VECTORS)

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, _ports(p), self._VECTORS)
        return Sizes({"y": n}, discrete=self.SLOTS * n, zero_crossings=2 * n)

    def zc_directions(self, p, count):
        return [-1] * count  # u leaving the band; the engaged direction ending

    def initial_discrete(self, p, n):
        y0 = broadcast(p.initial, n // self.SLOTS)
        return [v for k in range(n // self.SLOTS) for v in (0.0, y0[k], y0[k], 0.0)]

    def _slots(self, e: Emit, k: int) -> tuple[str, str, str, str]:
        return tuple(e.m[self.SLOTS * k:self.SLOTS * (k + 1)])  # type: ignore[return-value]

    def _half(self, e: Emit) -> list[str]:
        return [lit(w / 2.0) for w in broadcast(e.p.width, len(e.y["y"]))]

    def _current(self, e: Emit, k: int, half: str) -> str:
        mode, held = self._slots(e, k)[:2]
        u = pick(e.u["u"], k)
        return f"({held} if {mode} == 0.0 else {u} - {half} if {mode} > 0.0 else {u} + {half})"

    def output(self, e: Emit):
        half = self._half(e)
        return {"y": [f"{y} = {self._current(e, k, half[k])}" for k, y in enumerate(e.y["y"])]}

    def zero_crossing(self, e: Emit):
        half = self._half(e)
        lines = []
        for k in range(len(e.y["y"])):
            mode, held = self._slots(e, k)[:2]
            u, du, b = pick(e.u["u"], k), _du(e, k), half[k]
            # Disengaged: positive inside the band (written exactly as the held value is
            # set at a disengagement, so a u at rest on the edge reads 0, not roundoff).
            # Engaged: the input's rate in the pushing direction; without a du port the
            # contact lasts until u jumps back (a u at rest after a push stays in contact,
            # as the driven side does; a u that moves anyway is followed, never chattered).
            ends = ("1.0" if e.p.derivative == "zero"
                    else f"{du} if {mode} > 0.0 else -({du})")
            lines += [f"{e.g[2 * k]} = ({held} - ({u} - {b}) if {mode} == 0.0 else {ends})",
                      f"{e.g[2 * k + 1]} = (({u} + {b}) - {held} if {mode} == 0.0 else 1.0)"]
        return lines

    def pre_event(self, e: Emit):
        half = self._half(e)
        lines = []
        for k in range(len(e.y["y"])):
            slots = self._slots(e, k)
            lines += [f"{slots[self.L]} = {self._current(e, k, half[k])}",
                      f"{slots[self.R]} = 0.0"]
        return lines

    def update(self, e: Emit):
        """Disengaged: u past an edge just after the event engages; right after a release
        in the same event (u level with the edge to roundoff, turning: the look-ahead
        cannot tell which way at first order) only a clear crossing does. Engaged: u
        jumping back (below the output before the event) releases the output where it
        was; du at or past zero just after the event releases it where it is."""
        half = self._half(e)
        lines = []
        for k in range(len(e.y["y"])):
            mode, held, left, released = self._slots(e, k)
            u, du, b = pick(e.u["u"], k), _du(e, k), half[k]
            zn0, zn1 = e.zn[2 * k], e.zn[2 * k + 1]
            tol = _tolerance(u, left, f"abs({du})")
            lines += [
                f"if {mode} == 0.0:",
                f"    if {zn0} < 0.0 and ({released} == 0.0 or ({u} - {b}) - {held} > {tol}):",
                f"        {mode} = 1.0; {e.event('engage')}",
                f"    elif {zn1} < 0.0 and ({released} == 0.0 or {held} - ({u} + {b}) > {tol}):",
                f"        {mode} = -1.0; {e.event('engage')}",
                f"elif {mode} > 0.0:",
                f"    if {u} - {b} < {left} - ({tol}):",
                f"        {mode} = 0.0; {held} = {left}; {released} = 1.0; {e.event('disengage')}",
                f"    elif {zn0} <= 0.0:",
                f"        {mode} = 0.0; {held} = {u} - {b}; {released} = 1.0; "
                f"{e.event('disengage')}",
                "else:",
                f"    if {u} + {b} > {left} + ({tol}):",
                f"        {mode} = 0.0; {held} = {left}; {released} = 1.0; {e.event('disengage')}",
                f"    elif {zn0} <= 0.0:",
                f"        {mode} = 0.0; {held} = {u} + {b}; {released} = 1.0; "
                f"{e.event('disengage')}",
            ]
        return lines


BLOCK_TYPES = (RateLimiter, Backlash,)
