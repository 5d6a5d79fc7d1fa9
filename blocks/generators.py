"""Periodic and swept generators: Signal Generator, Chirp, Repeating Sequence.

Their jumps, resets and corners are time events on exact closed-form instants (computed
from an integer count, never by adding periods up), so the solver lands on each and no
step straddles a kink; between them every output is a closed form in t.
"""
from __future__ import annotations

import math

import numpy as np

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes, broadcast, lit, size_of
from blocksim.blocktypes.sampletime import CONTINUOUS

from .lookup import table_problem
from .nonlinear import sizes_problem

def _countable(segments: float, name: str) -> None:
    """Segments are numbered by floats: beyond 2**52 of them from t = 0 the numbers (and
    the instants) are no longer exact, so the run is refused (ValueError) before it."""
    if segments > 2.0 ** 52:
        raise ValueError(f"parameter '{name}': at the times of this run (up to {segments:.3g} "
                         f"segments from t = 0) its instants are not exact in float64; "
                         f"use a lower frequency or times nearer 0")


# Per output element of a SignalGenerator with events: the segment number j, the end of
# the segment (the next time event), the sign of the segment and its anchor time.
_J, _DUE, _SIGN, _ANCHOR = 0, 1, 2, 3
_SEGMENT_SLOTS = 4

# waveform: (segments per period, start of segment j in segment lengths minus j, value at
# the anchor in amplitudes, slope in amplitudes per segment length, signs alternate,
# event kind). Segment j covers [(j + a) h, (j + a + 1) h) with h = period / segments, its
# anchor is j h and y = sign_j * amplitude * (value + slope * (t - j h) / h).
_WAVES = {
    "square": (2, 0.0, 1.0, 0.0, True, "edge"),
    "sawtooth": (1, -0.5, 0.0, 2.0, False, "reset"),
    "triangle": (2, -0.5, 0.0, 2.0, True, "corner"),
}


class SignalGenerator(BlockType):
    """A periodic wave: sine, square, sawtooth or triangle, of `amplitude` and `frequency`.

    All four cross zero rising at t = 0 like the sine: sine A sin(2 pi f t); square +A for
    the first half of each period (from t = k/f on) and -A for the second; sawtooth rising
    from -A to +A over each period with its reset from +A to -A at t = (k + 1/2)/f;
    triangle rising from -A to +A and back, corners (+-A) at t = (2k + 1)/(4f). Each jump,
    reset and corner is a time event at its exact instant (the left and right limits both
    appear in the results); between them the output is a straight line, so the steps of the
    solver only see smooth pieces. `amplitude` and `frequency` may be vectors (one element
    per output, the other expanding).
    """

    name = "SignalGenerator"
    category = "Sources"
    event_kinds = (
        EventKind("rise", "square: the jump up to +amplitude"),
        EventKind("fall", "square: the jump down to -amplitude"),
        EventKind("reset", "sawtooth: the jump from +amplitude back to -amplitude"),
        EventKind("corner", "triangle: a corner, at +-amplitude"),
    )
    rate = CONTINUOUS  # a function of time
    params = (
        Param("waveform", "choice", "sine", "the wave's shape",
              choices=("sine", "square", "sawtooth", "triangle")),
        Param("amplitude", "vector", 1.0, "peak value (a negative one inverts the wave)"),
        Param("frequency", "vector", 1.0, "frequency, > 0", unit="Hz"),
    )
    outputs = (Port("y", "the wave"),)
    has_time_events = True
    _VECTORS = ("amplitude", "frequency")

    def check(self, p):
        low = float(np.min(np.asarray(p.frequency, dtype=float)))
        if not low > 0.0:
            return f"parameter 'frequency' must be > 0 Hz, got {low:g}"
        return sizes_problem(p, self._VECTORS)

    def _width(self, p) -> int:
        return max(size_of(p[name]) for name in self._VECTORS)

    def sizes(self, p, in_widths):
        n = self._width(p)
        slots = 0 if p.waveform == "sine" else _SEGMENT_SLOTS * n
        return Sizes({"y": n}, discrete=slots)

    def initial_discrete(self, p, n):
        # No segment yet, due at once: the first update locates t.
        return [-math.inf, -math.inf, 1.0, 0.0] * (n // _SEGMENT_SLOTS)

    @staticmethod
    def _segment(p, f: float, t: float) -> float:
        """The segment holding t (its start <= t < its end), as the generated code finds it."""
        count, a = _WAVES[p.waveform][:2]
        d = count * f
        j = math.floor(t * d - a)
        while (j + a + 1.0) / d <= t:
            j += 1.0
        while (j + a) / d > t:
            j -= 1.0
        return float(j)

    def count_time_events(self, p, start, stop):
        if p.waveform == "sine":
            return 0.0
        count = _WAVES[p.waveform][0]
        freqs = broadcast(p.frequency, self._width(p))
        _countable(max(abs(start), abs(stop)) * count * max(freqs), "frequency")
        return sum(count * f * max(0.0, stop - start) + 2.0 for f in freqs)

    def next_time_event(self, p, t):
        if p.waveform == "sine":
            return math.inf
        count, a = _WAVES[p.waveform][:2]
        return min((self._segment(p, f, t) + a + 1.0) / (count * f)
                   for f in broadcast(p.frequency, self._width(p)))

    def next_time(self, e: Emit):
        if e.p.waveform == "sine":
            return "inf"
        dues = [e.m[_SEGMENT_SLOTS * k + _DUE] for k in range(len(e.y["y"]))]
        return dues[0] if len(dues) == 1 else f"min({', '.join(dues)})"

    def output(self, e: Emit):
        n = len(e.y["y"])
        amp, freq = broadcast(e.p.amplitude, n), broadcast(e.p.frequency, n)
        if e.p.waveform == "sine":
            return {"y": [f"{y} = {lit(a)} * math.sin({lit(2.0 * math.pi * f)} * t)"
                          for y, a, f in zip(e.y["y"], amp, freq)]}
        count, _, value, slope = _WAVES[e.p.waveform][:4]
        lines = []
        for k, y in enumerate(e.y["y"]):
            m = e.m[_SEGMENT_SLOTS * k:_SEGMENT_SLOTS * (k + 1)]
            if slope:
                rate = lit(amp[k] * slope * count * freq[k])  # amplitude * slope / h
                lines.append(f"{y} = {m[_SIGN]} * {rate} * (t - {m[_ANCHOR]})")
            else:
                lines.append(f"{y} = {m[_SIGN]} * {lit(amp[k] * value)}")
        return {"y": lines}

    def update(self, e: Emit):
        if e.p.waveform == "sine":
            return []
        count, a, _, _, alternate, kind = _WAVES[e.p.waveform]
        freqs = broadcast(e.p.frequency, len(e.y["y"]))
        j = f"_j{e.index}"
        lines = []
        for k, f in enumerate(freqs):
            m = e.m[_SEGMENT_SLOTS * k:_SEGMENT_SLOTS * (k + 1)]
            d, a_ = lit(count * f), lit(a)
            sign = (f"(1.0 - 2.0 * ({j} - 2.0 * _f_floor({j} / 2.0)))" if alternate
                    else "1.0")
            if kind == "edge":  # square: a rising or a falling edge by the new sign
                log = [f"        elif {m[_SIGN]} > 0.0: {e.event('rise')}",
                       f"        else: {e.event('fall')}"]
            else:
                log = [f"        else: {e.event(kind)}"]
            # `_segment` written out (compiled code calls no Python helper).
            lines += [f"if init or t >= {m[_DUE]}:",
                      f"    {j} = _f_floor(t * {d} - {a_})",
                      f"    while ({j} + {a_} + 1.0) / {d} <= t:",
                      f"        {j} += 1.0",
                      f"    while ({j} + {a_}) / {d} > t:",
                      f"        {j} -= 1.0",
                      f"    if {j} != {m[_J]}:",
                      f"        {m[_J]} = {j}",
                      f"        {m[_DUE]} = ({j} + {a_} + 1.0) / {d}",
                      f"        {m[_SIGN]} = {sign}",
                      f"        {m[_ANCHOR]} = {j} / {d}",
                      # At the start only a segment starting exactly then is an event.
                      f"        if init and ({j} + {a_}) / {d} != t: changed = True",
                      *log]
        return lines


class Chirp(BlockType):
    """A swept-frequency sine (Simulink's Chirp Signal), its frequency rising linearly.

    The frequency is f(t) = f0 + (f1 - f0) t / T (f0 `initial_frequency`, f1
    `target_frequency` at t = T `target_time`, and it goes on sweeping after T); the phase
    is its integral in closed form, y = sin(2 pi (f0 t + (f1 - f0) t^2 / (2 T))). It is
    smooth: no events.
    """

    name = "Chirp"
    category = "Sources"
    rate = CONTINUOUS  # a function of time
    params = (
        Param("initial_frequency", "scalar", 0.1, "frequency at t = 0", unit="Hz"),
        Param("target_time", "scalar", 100.0, "time at which the frequency is "
              "target_frequency, > 0", unit="s"),
        Param("target_frequency", "scalar", 1.0, "frequency at the target time", unit="Hz"),
    )
    outputs = (Port("y", "sin of the swept phase"),)

    def check(self, p):
        if not p.target_time > 0.0:
            return f"parameter 'target_time' must be > 0 s, got {p.target_time:g}"
        return None

    def sizes(self, p, in_widths):
        return Sizes({"y": 1})

    def output(self, e: Emit):
        p = e.p
        rate = (p.target_frequency - p.initial_frequency) / p.target_time
        w0, half = lit(2.0 * math.pi * p.initial_frequency), lit(math.pi * rate)
        return {"y": [f"{e.y['y'][0]} = math.sin(({w0} + {half} * t) * t)"]}


# RepeatingSequence slots: the number of the next breakpoint (counted over all periods),
# its time, the anchor of the current segment, then its values and slopes.
_NEXT, _AT, _ANCHOR_T, _VALUES = 0, 1, 2, 3


class RepeatingSequence(BlockType):
    """A (time, value) table, interpolated linearly, repeated with the period of its last time.

    Simulink's Repeating Sequence.

    `times` start at 0 and increase (a time given twice makes a jump: the second row holds
    from then on); the period is the last time, where the output returns to the first
    value (a jump unless the last value equals the first, as in a sawtooth). `values` has
    one entry per time, or one row per time with one column per output element. Every
    breakpoint of every period is a time event at k * period + times[i], computed from the
    integer k, so breakpoints never drift however many periods pass.
    """

    name = "RepeatingSequence"
    category = "Sources"
    event_kinds = (
        EventKind("breakpoint", "one of the table's times passed (in any period)"),
    )
    rate = CONTINUOUS  # a function of time
    params = (
        Param("times", "vector", [0.0, 2.0], "breakpoint times of one period, from 0 "
              "increasing; the last is the period", unit="s", table=True),
        Param("values", "vector", [0.0, 2.0], "values at the times: a vector, or a matrix "
              "with one row per time and one column per output element", table=True),
    )
    outputs = (Port("y", "the repeated, interpolated sequence"),)
    has_time_events = True

    def check(self, p):
        problem = table_problem(p.times, p.values, "times", "values", strict=False)
        if problem:
            return problem
        times = np.atleast_1d(np.asarray(p.times, dtype=float))
        if times[0] != 0.0:
            return f"parameter 'times' must start at 0, got {times[0]:g}"
        if not times[-1] > 0.0:
            return "parameter 'times' must end at a period > 0"
        return None

    def _table(self, p) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(segment starts within a period, values at the starts, slopes, period)."""
        cached = getattr(self, "_cache", None)
        if cached is not None and cached[0] is p:
            return cached[1]
        times = np.atleast_1d(np.asarray(p.times, dtype=float))
        values = np.asarray(p.values, dtype=float).reshape(len(times), -1)
        moving = np.flatnonzero(np.diff(times) > 0)  # a repeated time starts no segment
        starts = times[moving]
        slopes = (values[moving + 1] - values[moving]) / (times[moving + 1] - times[moving])[:, None]
        table = (starts, values[moving], slopes, float(times[-1]))
        self._cache = (p, table)
        return table

    def sizes(self, p, in_widths):
        width = self._table(p)[1].shape[1]
        return Sizes({"y": width}, discrete=_VALUES + 2 * width)

    def initial_discrete(self, p, n):
        # No breakpoint yet, due at once: the first update locates t.
        return [-math.inf, -math.inf, 0.0] + [0.0] * (n - _VALUES)

    def _edge(self, p, n: float) -> float:
        """Time of breakpoint n (n = k * segments + i: times[i] of period k)."""
        starts, _, _, period = self._table(p)
        k = math.floor(n / len(starts))
        return k * period + float(starts[int(n - k * len(starts))])

    def _next_edge(self, p, t: float) -> float:
        """The number of the first breakpoint after t, as the generated code finds it."""
        starts, _, _, period = self._table(p)
        k = math.floor(t / period)
        n = k * len(starts) + float(np.searchsorted(starts, t - k * period, side="right")) - 2.0
        while self._edge(p, n) <= t:
            n += 1.0
        return n

    def count_time_events(self, p, start, stop):
        starts, _, _, period = self._table(p)
        _countable(max(abs(start), abs(stop)) / period * len(starts), "times")
        return len(starts) * (max(0.0, stop - start) / period + 2.0)

    def next_time_event(self, p, t):
        return self._edge(p, self._next_edge(p, t))

    def next_time(self, e: Emit):
        return e.m[_AT]

    def output(self, e: Emit):
        m, width = e.m, len(e.y["y"])
        return {"y": [f"{y} = {m[_VALUES + j]} + {m[_VALUES + width + j]} * "
                      f"(t - {m[_ANCHOR_T]})" for j, y in enumerate(e.y["y"])]}

    def update(self, e: Emit):
        starts, values, slopes, period = self._table(e.p)
        count, width = float(len(starts)), values.shape[1]
        s_name = e.const(starts)
        rows = e.const(np.column_stack([values, slopes]))
        n, c, k = f"_n{e.index}", f"_c{e.index}", f"_k{e.index}"
        per, num = lit(period), lit(count)

        def edge(i: str) -> str:  # `_edge`, written out
            q = f"_f_floor({i} / {num})"
            return f"({q} * {per} + {s_name}[int({i} - {q} * {num})])"
        m = e.m
        return [f"if init or t >= {m[_AT]}:",
                f"    {k} = _f_floor(t / {per})",
                f"    {n} = {k} * {num} + float(np.searchsorted({s_name}, t - {k} * {per}, "
                f"side='right')) - 2.0",
                f"    while {edge(n)} <= t:",
                f"        {n} += 1.0",
                f"    if {n} != {m[_NEXT]}:",
                f"        {c} = {n} - 1.0",
                f"        {k} = _f_floor({c} / {num})",
                f"        {m[_NEXT]} = {n}",
                f"        {m[_AT]} = {edge(n)}",
                f"        {m[_ANCHOR_T]} = {edge(c)}",
                *[f"        {m[_VALUES + j]} = {rows}[int({c} - {k} * {num}), {j}]"
                  for j in range(2 * width)],
                # At the start only a breakpoint exactly at the start time is an event.
                f"        if init and {m[_ANCHOR_T]} != t: changed = True",
                f"        else: {e.event('breakpoint')}"]


BLOCK_TYPES = (SignalGenerator, Chirp, RepeatingSequence)
