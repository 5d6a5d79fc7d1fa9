"""Lookup tables: piecewise-linear functions of a signal, with their kinks made into events.

A table is held as switch points plus, per segment, an anchor, a value and a slope. The
segment a signal is in is a discrete state, latched between events, and its coefficients
are copied into discrete states too, so the generated output is one multiply-add for any
table length: no search and no Python call per evaluation. Zero crossings at the ends of the
current segment make the solver stop exactly at a breakpoint, where the update moves to the
neighbouring segment (a Python call, but only at events).
"""
from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes

# Discrete-state layout of one piecewise-linear segment, shared with FromTable:
# [segment index, lower switch point, upper switch point, anchor, values..., slopes...]
SEG_INDEX, SEG_LO, SEG_HI, SEG_ANCHOR, SEG_VALUES = 0, 1, 2, 3, 4


class PiecewiseLinear:
    """A piecewise-linear function of one variable, vector-valued (one column per element).

    Segment j covers [S[j-1], S[j]) of the switch points S (S[-1] = -inf, S[len] = +inf);
    on it the function is value_j + slope_j * (u - anchor_j). With `extrapolation` "clip"
    every breakpoint is a switch point and the end values are held outside the table; with
    "linear" the first and last segments extend to infinity. Breakpoints may repeat once
    (a jump): the zero-length segment between them is never occupied.
    """

    def __init__(self, x: Any, values: Any, extrapolation: str = "clip"):
        x = np.atleast_1d(np.asarray(x, dtype=float)).ravel()
        v = np.asarray(values, dtype=float)
        v = v.reshape(len(x), -1) if v.ndim <= 1 else v
        dx = np.diff(x)
        slopes = np.zeros((len(dx), v.shape[1]))
        moving = dx > 0  # a repeated breakpoint (a jump) has no slope
        slopes[moving] = np.diff(v, axis=0)[moving] / dx[moving][:, None]
        if extrapolation == "linear" and len(x) >= 2:
            self.switch = x[1:-1].tolist()
            anchors, vals, slps = x[:-1], v[:-1], slopes
        else:
            self.switch = x.tolist()
            zero = np.zeros((1, v.shape[1]))
            anchors = np.concatenate([x[:1], x[:-1], x[-1:]])
            vals = np.concatenate([v[:1], v[:-1], v[-1:]])
            slps = np.concatenate([zero, slopes, zero])
        self.width = v.shape[1]
        # Plain lists (one C-level conversion each) and slots built on demand: a table of
        # a million breakpoints compiles in a fraction of a second.
        self._bounds = [-math.inf, *self.switch, math.inf]
        self._anchors = anchors.tolist()
        self._values = vals.tolist()
        self._slopes = slps.tolist()
        self._arrays = (np.asarray(self._bounds), np.asarray(anchors, dtype=float),
                        np.asarray(vals, dtype=float), np.asarray(slps, dtype=float))

    @property
    def segments(self) -> int:
        return len(self._anchors)

    def slot_table(self) -> np.ndarray:
        """Every segment's slots (see `slots`) as the rows of one array, built at once."""
        bounds, anchors, vals, slps = self._arrays
        n = len(anchors)
        return np.column_stack([np.arange(n, dtype=float), bounds[:-1], bounds[1:], anchors,
                                vals, slps])

    def slots(self, j: float) -> tuple[float, ...]:
        """Discrete-state values of segment j: index, lo, hi, anchor, values, slopes."""
        k = int(j)
        return (float(k), self._bounds[k], self._bounds[k + 1], self._anchors[k],
                *self._values[k], *self._slopes[k])

    def right(self, u: float) -> float:
        """The segment holding u + 0 (u at a switch point belongs to the segment above)."""
        return float(bisect.bisect_right(self.switch, u))

    def left(self, u: float) -> float:
        """The segment holding u - 0 (u at a switch point belongs to the segment below)."""
        return float(bisect.bisect_left(self.switch, u))

    def next_switch(self, u: float) -> float:
        """The first switch point strictly above u (inf if none)."""
        j = bisect.bisect_right(self.switch, u)
        return self.switch[j] if j < len(self.switch) else math.inf

    def relocate(self, k: float, u: float, zn_lo: float, zn_hi: float) -> float:
        """The segment after an event, from the signs of u - lo and hi - u just after it.

        Leaving upwards (hi - u <= 0) moves at least one segment up, downwards (u - lo < 0)
        at least one down, further if u jumped; the next event pass re-reads the signs for
        the new segment, so a choice that roundoff made wrong is corrected there. The two
        tests are exact complements at a shared switch point, so this cannot ping-pong.
        """
        if k < 0.0:  # the first update (see LookupTable1D.initial_discrete)
            return self.right(u)
        last = float(self.segments - 1)
        if zn_hi <= 0.0 and k < last:
            return min(last, max(k + 1.0, self.right(u)))
        if zn_lo < 0.0 and k > 0.0:
            return max(0.0, min(k - 1.0, self.left(u)))
        return k


def table_problem(x: Any, values: Any, x_name: str, v_name: str, strict: bool) -> str | None:
    """A message if breakpoints x and table values cannot form a table, else None."""
    x = np.asarray(x, dtype=float)
    v = np.asarray(values, dtype=float)
    if x.ndim > 1:
        return f"'{x_name}' must be a vector, got an array of shape {x.shape}"
    x = np.atleast_1d(x)
    if x.size < 2:
        return f"'{x_name}' needs at least 2 points, got {x.size}"
    if not np.all(np.isfinite(x)):
        return f"'{x_name}' must be finite, got {x.tolist()}"
    if not np.all(np.isfinite(v)):
        return f"'{v_name}' must be finite"
    d = np.diff(x)
    if strict and np.any(d <= 0):
        i = int(np.flatnonzero(d <= 0)[0])
        return (f"'{x_name}' must be strictly increasing, but element {i + 1} ({x[i + 1]:g}) "
                f"does not exceed element {i} ({x[i]:g})")
    if not strict:
        if np.any(d < 0):
            i = int(np.flatnonzero(d < 0)[0])
            return (f"'{x_name}' must be increasing, but element {i + 1} ({x[i + 1]:g}) is "
                    f"below element {i} ({x[i]:g})")
        if np.any((d[:-1] == 0) & (d[1:] == 0)):
            return f"'{x_name}' repeats a value more than twice (a jump needs exactly two)"
    rows = v.shape[0] if v.ndim >= 1 else 1
    if v.ndim > 2 or rows != x.size:
        shape = "one value" if v.ndim == 0 else f"shape {v.shape}"
        return (f"'{v_name}' must have one {'row' if v.ndim == 2 else 'value'} per element of "
                f"'{x_name}' ({x.size}), got {shape}")
    if strict and v.ndim != 1:
        return f"'{v_name}' must be a vector, got an array of shape {v.shape}"
    return None


class LookupTable1D(BlockType):
    """Interpolate linearly in a 1-D table, elementwise on u.

    Between breakpoints the output is the straight line through the neighbouring table
    values; outside them it is either held at the end value ("clip") or continues the first
    or last segment ("linear"). Each breakpoint is a kink, so the segment is a latched mode:
    zero crossings at the segment's ends stop the solver exactly at a breakpoint, and error
    control never sees a step that straddles a kink.
    """

    name = "LookupTable1D"
    category = "Lookup Tables"
    event_kinds = (
        EventKind("segment", "the input crossed a breakpoint into another segment of the "
                             "table"),
    )
    params = (
        Param("breakpoints", "vector", [0.0, 1.0], "input values, strictly increasing",
              table=True),
        Param("table", "vector", [0.0, 1.0], "output values, one per breakpoint", table=True),
        Param("extrapolation", "choice", "clip", "outside the breakpoints: hold the end value "
              "(clip) or extend the end segment (linear)", choices=("clip", "linear")),
    )
    inputs = (Port("u", "input, looked up elementwise"),)
    outputs = (Port("y", "interpolated table value"),)
    zc_direction = -1  # only leaving the segment matters

    def check(self, p):
        return table_problem(p.breakpoints, p.table, "breakpoints", "table", strict=True)

    def _table(self, p) -> PiecewiseLinear:
        cached = getattr(self, "_cache", None)
        if cached is None or cached[0] is not p:
            self._cache = (p, PiecewiseLinear(p.breakpoints, p.table, p.extrapolation))
        return self._cache[1]

    def sizes(self, p, in_widths):
        n = in_widths.get("u") or 1
        return Sizes({"y": n}, discrete=6 * n, zero_crossings=2 * n)

    def initial_discrete(self, p, n):
        # Segment 0's coefficients with index -1: the first update locates the input.
        return [-1.0, *self._table(p).slots(0)[1:]] * (n // 6)

    def output(self, e: Emit):
        m, u = e.m, e.u["u"]
        lines = []
        for k, y in enumerate(e.y["y"]):
            b = 6 * k
            uk = u[k] if len(u) > 1 else u[0]
            lines.append(f"{y} = {m[b + SEG_VALUES]} + {m[b + SEG_VALUES + 1]} * "
                         f"({uk} - {m[b + SEG_ANCHOR]})")
        return {"y": lines}

    def zero_crossing(self, e: Emit):
        m, u = e.m, e.u["u"]
        lines = []
        for k in range(len(e.y["y"])):
            b = 6 * k
            uk = u[k] if len(u) > 1 else u[0]
            lines += [f"{e.g[2 * k]} = {uk} - {m[b + SEG_LO]}",
                      f"{e.g[2 * k + 1]} = {m[b + SEG_HI]} - {uk}"]
        return lines

    def update(self, e: Emit):
        table = self._table(e.p)
        # `table.relocate` and `table.slots` written out (compiled code calls no Python
        # helper): bisect as np.searchsorted on the switch points, the slots as table rows.
        switch, slots = e.const(table.switch), e.const(table.slot_table())
        last = float(table.segments - 1)
        m, u = e.m, e.u["u"]
        var = f"_k{e.index}"
        lines = []
        for k in range(len(e.y["y"])):
            b = 6 * k
            uk = u[k] if len(u) > 1 else u[0]
            zn_lo, zn_hi = e.zn[2 * k], e.zn[2 * k + 1]
            right = f"float(np.searchsorted({switch}, {uk}, side='right'))"
            left = f"float(np.searchsorted({switch}, {uk}, side='left'))"
            lines += [
                f"if {m[b]} < 0.0 or {zn_lo} < 0.0 or {zn_hi} <= 0.0:",  # else: stays put
                f"    if {m[b]} < 0.0:",  # the first update (see initial_discrete)
                f"        {var} = {right}",
                f"    elif {zn_hi} <= 0.0 and {m[b]} < {last!r}:",
                f"        {var} = min({last!r}, max({m[b]} + 1.0, {right}))",
                f"    elif {zn_lo} < 0.0 and {m[b]} > 0.0:",
                f"        {var} = max(0.0, min({m[b]} - 1.0, {left}))",
                "    else:",
                f"        {var} = {m[b]}",
                f"    if {var} != {m[b]}:",
                *[f"        {m[b + j]} = {slots}[int({var}), {j}]" for j in range(6)],
                "        if init: changed = True",  # setting up the mode is no event
                f"        else: {e.event('segment')}",
            ]
        return lines


BLOCK_TYPES = (LookupTable1D,)
