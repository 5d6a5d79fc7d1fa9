"""Source blocks: signals that depend only on time and parameters."""
from __future__ import annotations

import math

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes, broadcast, lit, size_of
from blocksim.blocktypes.sampletime import CONSTANT, CONTINUOUS

from .lookup import (SEG_ANCHOR, SEG_HI, SEG_INDEX, SEG_LO, SEG_VALUES, PiecewiseLinear,
                     table_problem)


class Constant(BlockType):
    """Output a constant value (scalar or vector)."""

    name = "Constant"
    category = "Sources"
    rate = CONSTANT
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
    event_kinds = (
        EventKind("step", "the jump from `before` to `after` at `time`"),
    )
    rate = CONTINUOUS  # a function of time
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

    def next_time(self, e: Emit):
        return f"({lit(e.p.time)} if t < {lit(e.p.time)} else inf)"

    def output(self, e: Emit):
        n = len(e.y["y"])
        before, after = broadcast(e.p.before, n), broadcast(e.p.after, n)
        return {"y": [f"{y} = ({lit(a)} if {e.m[0]} else {lit(b)})"
                      for y, a, b in zip(e.y["y"], after, before)]}

    def update(self, e: Emit):
        return [f"if {e.m[0]} == 0.0 and t >= {lit(e.p.time)}:",
                f"    {e.m[0]} = 1.0; {e.event('step')}"]


def _common_size(p, names: tuple[str, ...]) -> int:
    """The output width given by several vector parameters (each of length 1 or n)."""
    return max(size_of(p[name]) for name in names)


def _sizes_problem(p, names: tuple[str, ...]) -> str | None:
    n = _common_size(p, names)
    for name in names:
        if size_of(p[name]) not in (1, n):
            longest = next(other for other in names if size_of(p[other]) == n)
            return (f"'{name}' has {size_of(p[name])} elements but '{longest}' has {n} "
                    f"(give 1 or {n})")
    return None


class Sine(BlockType):
    """A sine wave: y = amplitude * sin(2*pi*frequency*t + phase) + bias.

    The wave is smooth, so it needs no events and the solver's error control alone decides
    the steps. Any parameter may be a vector, which makes the output a vector (the other
    parameters expand), e.g. three phases of a three-phase source.
    """

    name = "Sine"
    category = "Sources"
    rate = CONTINUOUS  # a function of time
    params = (
        Param("amplitude", "vector", 1.0, "peak deviation from the bias"),
        Param("frequency", "vector", 1.0, "frequency", unit="Hz"),
        Param("phase", "vector", 0.0, "phase at t = 0", unit="rad"),
        Param("bias", "vector", 0.0, "offset added to the wave"),
    )
    outputs = (Port("y", "the sine wave"),)
    _VECTORS = ("amplitude", "frequency", "phase", "bias")

    def check(self, p):
        return _sizes_problem(p, self._VECTORS)

    def sizes(self, p, in_widths):
        return Sizes({"y": _common_size(p, self._VECTORS)})

    def output(self, e: Emit):
        n = len(e.y["y"])
        a, f, ph, b = (broadcast(e.p[name], n) for name in self._VECTORS)
        lines = []
        for k, y in enumerate(e.y["y"]):
            arg = f"{lit(2.0 * math.pi * f[k])} * t" + (f" + {lit(ph[k])}" if ph[k] else "")
            wave = f"math.sin({arg})" if a[k] == 1.0 else f"{lit(a[k])} * math.sin({arg})"
            lines.append(f"{y} = {wave}" + (f" + {lit(b[k])}" if b[k] else ""))
        return {"y": lines}


class Pulse(BlockType):
    """A rectangular pulse train: `amplitude` for `width` percent of each period, else 0.

    The first pulse starts at `delay`; before it the output is 0. Every rising and falling
    edge is a time event, so the solver lands exactly on it and the output jumps there (the
    left and right limits both appear in the results). The number of edges passed is a
    discrete state; its parity says whether the pulse is high, and a second discrete state
    holds the next edge time so the event iteration costs one comparison when nothing is due.
    """

    name = "Pulse"
    category = "Sources"
    event_kinds = (
        EventKind("rise", "a pulse begins: the output jumps to `amplitude`"),
        EventKind("fall", "a pulse ends: the output falls to 0"),
    )
    rate = CONTINUOUS  # a function of time
    params = (
        Param("amplitude", "vector", 1.0, "pulse height (a vector gives a vector output)"),
        Param("period", "scalar", 1.0, "time from one rising edge to the next", unit="s"),
        Param("width", "scalar", 50.0, "pulse width as a percentage of the period, 0 < width "
              "< 100", unit="%"),
        Param("delay", "scalar", 0.0, "time of the first rising edge (phase delay)", unit="s"),
    )
    outputs = (Port("y", "amplitude while the pulse is high, else 0"),)
    has_time_events = True

    def check(self, p):
        if not (math.isfinite(p.period) and p.period > 0):
            return f"period must be a positive number of seconds, got {p.period:g}"
        if not 0.0 < p.width < 100.0:
            return f"width must be a percentage strictly between 0 and 100, got {p.width:g}"
        if not math.isfinite(p.delay):
            return f"delay must be finite, got {p.delay:g}"
        return None

    def sizes(self, p, in_widths):
        return Sizes({"y": size_of(p.amplitude)}, discrete=2)

    @staticmethod
    def edge(p, n: float) -> float:
        """Time of edge n (even n: rising edge n/2, odd n: the falling edge after it)."""
        return p.delay + (n // 2.0) * p.period + (n % 2.0) * (p.period * p.width / 100.0)

    @classmethod
    def edges_until(cls, p, t: float) -> tuple[float, float, float]:
        """(number of edges at or before t, time of the next edge, time of the last one)."""
        if t < p.delay:
            return 0.0, cls.edge(p, 0.0), -math.inf
        n = max(0.0, 2.0 * math.floor((t - p.delay) / p.period) - 2.0)  # a little behind
        while cls.edge(p, n) <= t:
            n += 1.0
        return n, cls.edge(p, n), cls.edge(p, n - 1.0)

    def initial_discrete(self, p, n):
        return [0.0, self.edge(p, 0.0)]

    def count_time_events(self, p, start, stop):
        return 2.0 * max(0.0, stop - max(start, p.delay)) / p.period + 2.0

    def next_time_event(self, p, t):
        return self.edges_until(p, t)[1]

    def next_time(self, e: Emit):
        return e.m[1]  # the next edge, kept by `update`

    def output(self, e: Emit):
        amp = broadcast(e.p.amplitude, len(e.y["y"]))
        return {"y": [f"{y} = ({lit(a)} if {e.m[0]} % 2.0 == 1.0 else 0.0)"
                      for y, a in zip(e.y["y"], amp)]}

    def update(self, e: Emit):
        p = e.p
        count, due = e.m
        n, last = f"_n{e.index}", f"_e{e.index}"
        delay, period = lit(p.delay), lit(p.period)
        high = lit(p.period * p.width / 100.0)

        def edge(k: str) -> str:  # `edge`, written out
            return f"{delay} + ({k} // 2.0) * {period} + ({k} % 2.0) * {high}"
        # `edges_until(p, t)` written out (compiled code calls no Python helper); t is past
        # the first edge here, since `due` starts there.
        return [f"if t >= {due}:",
                f"    {n} = max(0.0, 2.0 * _f_floor((t - {delay}) / {period}) - 2.0)",
                f"    while {edge(n)} <= t:",
                f"        {n} += 1.0",
                f"    {count}, {due}, {last} = {n}, {edge(n)}, {edge(f'({n} - 1.0)')}",
                # At the start only an edge exactly at the start time is an event worth logging.
                f"    if init and {last} != t: changed = True",
                f"    elif {count} % 2.0 == 1.0: {e.event('rise')}",
                f"    else: {e.event('fall')}"]


class Ramp(BlockType):
    """A ramp: `initial` until `start`, then rising with `slope` per second.

    y = initial + slope * (t - start) from the start time on. The kink at the start is a
    time event, so the solver never steps across it; `initial` and `slope` may be vectors.
    """

    name = "Ramp"
    category = "Sources"
    event_kinds = (
        EventKind("start", "t reached `start`: the ramp begins to rise"),
    )
    rate = CONTINUOUS  # a function of time
    params = (
        Param("slope", "vector", 1.0, "rate of change after the start", unit="1/s"),
        Param("start", "scalar", 0.0, "time the ramp starts", unit="s"),
        Param("initial", "vector", 0.0, "output until the start time"),
    )
    outputs = (Port("y", "the ramp"),)
    has_time_events = True
    _VECTORS = ("slope", "initial")

    def check(self, p):
        if not math.isfinite(p.start):
            return f"start must be a finite time, got {p.start:g}"
        return _sizes_problem(p, self._VECTORS)

    def sizes(self, p, in_widths):
        return Sizes({"y": _common_size(p, self._VECTORS)}, discrete=1)

    def next_time_event(self, p, t):
        return p.start if t < p.start else math.inf

    def next_time(self, e: Emit):
        return f"({lit(e.p.start)} if t < {lit(e.p.start)} else inf)"

    def output(self, e: Emit):
        n = len(e.y["y"])
        slope, initial = broadcast(e.p.slope, n), broadcast(e.p.initial, n)
        t0 = lit(e.p.start)
        return {"y": [f"{y} = ({lit(y0)} + {lit(s)} * (t - {t0}) if {e.m[0]} else {lit(y0)})"
                      for y, s, y0 in zip(e.y["y"], slope, initial)]}

    def update(self, e: Emit):
        start = lit(e.p.start)
        return [f"if {e.m[0]} == 0.0 and t >= {start}:",
                f"    {e.m[0]} = 1.0",
                f"    if init and t != {start}: changed = True",  # started before the run
                f"    else: {e.event('start')}"]


class Clock(BlockType):
    """The simulation time t, e.g. as the input of a formula or a lookup table."""

    name = "Clock"
    category = "Sources"
    rate = CONTINUOUS  # a function of time
    outputs = (Port("y", "simulation time", ),)

    def sizes(self, p, in_widths):
        return Sizes({"y": 1})

    def output(self, e: Emit):
        return {"y": [f"{e.y['y'][0]} = t"]}


class FromTable(BlockType):
    """A signal given as a table of (time, value) points, interpolated linearly in time.

    Before the first time and after the last the end values are held. `values` has one
    entry per time, or one row per time with one column per output element. A time given
    twice makes a jump (the second row holds from then on). Every breakpoint is a time
    event, so the solver stops exactly at each kink; the current segment and its
    coefficients are discrete states, so the output costs one multiply-add per element.
    """

    name = "FromTable"
    category = "Sources"
    event_kinds = (
        EventKind("breakpoint", "one of the table's times passed"),
    )
    rate = CONTINUOUS  # a function of time
    params = (
        Param("times", "vector", [0.0, 1.0], "breakpoint times, increasing (a time may appear "
              "twice for a jump)", unit="s", table=True),
        Param("values", "vector", [0.0, 1.0], "values at the times: a vector, or a matrix "
              "with one row per time and one column per output element", table=True),
    )
    outputs = (Port("y", "the interpolated signal"),)
    has_time_events = True

    def check(self, p):
        return table_problem(p.times, p.values, "times", "values", strict=False)

    def _table(self, p) -> PiecewiseLinear:
        cached = getattr(self, "_cache", None)
        if cached is None or cached[0] is not p:
            self._cache = (p, PiecewiseLinear(p.times, p.values, "clip"))
        return self._cache[1]

    def sizes(self, p, in_widths):
        width = self._table(p).width
        return Sizes({"y": width}, discrete=SEG_VALUES + 2 * width)

    def initial_discrete(self, p, n):
        return list(self._table(p).slots(0))

    def count_time_events(self, p, start, stop):
        return float(size_of(p.times))

    def next_time_event(self, p, t):
        return self._table(p).next_switch(t)

    def next_time(self, e: Emit):
        return e.m[SEG_HI]  # the end of the segment, kept by `update`

    def output(self, e: Emit):
        m, width = e.m, len(e.y["y"])
        return {"y": [f"{y} = {m[SEG_VALUES + j]} + {m[SEG_VALUES + width + j]} * "
                      f"(t - {m[SEG_ANCHOR]})" for j, y in enumerate(e.y["y"])]}

    def update(self, e: Emit):
        table = self._table(e.p)
        # `table.right` and `table.slots` written out (compiled code calls no Python helper):
        # the switch points, and every segment's slots as one row of a table.
        switch = e.const(table.switch)
        slots = e.const(table.slot_table())
        var = f"_k{e.index}"
        return [f"if init or t >= {e.m[SEG_HI]}:",
                f"    {var} = int(np.searchsorted({switch}, t, side='right'))",
                f"    if {var} != {e.m[SEG_INDEX]}:",
                *[f"        {m} = {slots}[{var}, {j}]" for j, m in enumerate(e.m)],
                # At the start only a breakpoint exactly at the start time is logged.
                f"        if init and t != {e.m[SEG_LO]}: changed = True",
                f"        else: {e.event('breakpoint')}"]


BLOCK_TYPES = (Constant, Step, Sine, Pulse, Ramp, Clock, FromTable,)
