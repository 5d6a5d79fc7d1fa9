"""The n-D lookup table: multilinear interpolation on a grid, its cell latched per input.

Every breakpoint is a kink of the output along its dimension, so each input's segment (the
grid cell it is in, or a clipped region outside the grid) is a discrete state, changed only
at the located crossing of a breakpoint, as in LookupTable1D: error control never sees a
step that straddles a kink. The output is a fixed sum over the cell's 2^n corners read from
the table by the latched cell indices: no search and no Python call outside events, so it
runs in the numba backend's compiled loop.
"""
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes, elementwise_width, lit

MAX_DIMS = 4
# Discrete-state layout of one input's segment along one dimension:
# [segment, lower switch point, upper switch point, cell index, anchor, width, gain, offset]
# The weight of the cell's upper corner is gain * (u - anchor) / width + offset.
SLOTS = 8
SEG, LO, HI, CELL, ANCHOR, WIDTH, GAIN, OFFSET = range(SLOTS)


def segments(x: Any, clip: bool) -> tuple[list[float], np.ndarray]:
    """Switch points and the slot rows of each segment along one dimension.

    With clip every breakpoint switches: below the grid the weight is 0 (the first value),
    above it 1 (the last); inside, cell j runs from x[j] to x[j + 1]. Extrapolating, the
    first and last cells extend to infinity and only the inner breakpoints switch.
    """
    x = [float(v) for v in np.asarray(x, dtype=float).ravel()]
    n, rows = len(x), []
    if clip:
        rows.append((-math.inf, x[0], 0, x[0], x[1] - x[0], 0.0, 0.0))
        rows += [(x[j], x[j + 1], j, x[j], x[j + 1] - x[j], 1.0, 0.0) for j in range(n - 1)]
        rows.append((x[-1], math.inf, n - 2, x[-2], x[-1] - x[-2], 0.0, 1.0))
        switch = x
    else:
        rows = [(x[j] if j else -math.inf, x[j + 1] if j < n - 2 else math.inf, j, x[j],
                 x[j + 1] - x[j], 1.0, 0.0) for j in range(n - 1)]
        switch = x[1:-1]
    table = np.array([(float(j), *row) for j, row in enumerate(rows)], dtype=float)
    return switch, table


def _breakpoints_problem(x: Any, name: str, count: int) -> str | None:
    x = np.asarray(x, dtype=float)
    if x.ndim > 1:
        return f"'{name}' must be a vector, got an array of shape {x.shape}"
    x = np.atleast_1d(x)
    if x.size != count:
        return (f"'{name}' has {x.size} points but the table has {count} along that "
                f"dimension")
    d = np.diff(x)
    if np.any(d <= 0):
        i = int(np.flatnonzero(d <= 0)[0])
        return (f"'{name}' must be strictly increasing, but element {i + 1} ({x[i + 1]:g}) "
                f"does not exceed element {i} ({x[i]:g})")
    return None


class LookupTableND(BlockType):
    """Interpolate multilinearly in an n-D table (n = 2 to 4): y = T(u1, ..., un).

    `table` is an n-dimensional array (nested lists), its axis d running along
    `breakpoints<d>`; the number of inputs is the table's number of dimensions (breakpoints
    of unused dimensions are ignored). Inside the grid the output is the multilinear
    interpolant (linear along each axis, as scipy's RegularGridInterpolator "linear");
    outside, "clip" holds each input at the grid's edge and "extrapolate" continues the
    edge cell's interpolant. Crossing a breakpoint is a located event (kind "segment").
    Inputs of width 1 expand to the others' width (one lookup per element).
    """

    name = "LookupTableND"
    category = "Lookup Tables"
    event_kinds = (
        EventKind("segment", "an input crossed a breakpoint into another cell of the table"),
    )
    params = (
        Param("breakpoints1", "vector", [0.0, 1.0], "input u1's grid, strictly increasing",
              table=True),
        Param("breakpoints2", "vector", [0.0, 1.0], "input u2's grid, strictly increasing",
              table=True),
        Param("breakpoints3", "vector", [0.0, 1.0], "input u3's grid (a 3-D or 4-D table)",
              table=True),
        Param("breakpoints4", "vector", [0.0, 1.0], "input u4's grid (a 4-D table)",
              table=True),
        Param("table", "vector", [[0.0, 0.0], [0.0, 1.0]], "output values: an n-D array, "
              "table[i1][i2]... at (breakpoints1[i1], breakpoints2[i2], ...)", table=True),
        Param("method", "choice", "linear", "interpolation between breakpoints",
              choices=("linear",)),
        Param("out_of_range", "choice", "clip", "outside the grid: hold the edge value "
              "(clip) or continue the edge cell (extrapolate)", choices=("clip", "extrapolate")),
    )
    inputs = (Port("u1", "input along the table's first axis; one port per dimension"),
              Port("u2", "input along the second axis"))
    outputs = (Port("y", "interpolated table value"),)
    zc_direction = -1  # only leaving the segment matters

    def dims(self, p) -> int:
        return int(np.ndim(p.table))

    def check(self, p):
        table = np.asarray(p.table, dtype=float)
        if not 2 <= table.ndim <= MAX_DIMS:
            return (f"'table' must be an array of 2 to {MAX_DIMS} dimensions (a 1-D table is "
                    f"LookupTable1D), got {table.ndim}")
        for d in range(table.ndim):
            if table.shape[d] < 2:
                return f"'table' needs at least 2 points along dimension {d + 1}"
            problem = _breakpoints_problem(p[f"breakpoints{d + 1}"], f"breakpoints{d + 1}",
                                           table.shape[d])
            if problem:
                return problem
        return None

    def input_ports(self, p):
        return tuple(Port(f"u{d + 1}", f"input along axis {d + 1}") for d in range(self.dims(p)))

    def _grid(self, p) -> list[tuple[list[float], np.ndarray]]:
        cached = getattr(self, "_cache", None)
        if cached is None or cached[0] is not p:
            clip = p.out_of_range == "clip"
            self._cache = (p, [segments(p[f"breakpoints{d + 1}"], clip)
                               for d in range(self.dims(p))])
        return self._cache[1]

    def sizes(self, p, in_widths):
        n, dims = elementwise_width(in_widths), self.dims(p)
        return Sizes({"y": n}, discrete=SLOTS * dims * n, zero_crossings=2 * dims * n)

    def initial_discrete(self, p, n):
        # Segment 0's slots with index -1: the first update locates each input.
        rows = [[-1.0, *table[0, 1:].tolist()] for _, table in self._grid(p)]
        per_element = [v for row in rows for v in row]
        return per_element * (n // len(per_element))

    def _slots(self, e: Emit, k: int, d: int) -> list[str]:
        base = SLOTS * (k * self.dims(e.p) + d)
        return e.m[base:base + SLOTS]

    def output(self, e: Emit):
        dims, table = self.dims(e.p), e.const(np.asarray(e.p.table, dtype=float))
        lines = []
        for k, y in enumerate(e.y["y"]):
            weights, cells = [], []
            for d in range(dims):
                s, u = self._slots(e, k, d), _pick(e.u[f"u{d + 1}"], k)
                weights.append(f"({s[GAIN]} * ({u} - {s[ANCHOR]}) / {s[WIDTH]} + {s[OFFSET]})")
                cells.append(f"int({s[CELL]})")
            terms = []
            for corner in itertools.product((0, 1), repeat=dims):
                factors = [w if c else f"(1.0 - {w})" for w, c in zip(weights, corner)]
                index = ", ".join(f"{cell} + {c}" if c else cell
                                  for cell, c in zip(cells, corner))
                terms.append(" * ".join(factors) + f" * {table}[{index}]")
            lines.append(f"{y} = " + " + ".join(terms))
        return {"y": lines}

    def zero_crossing(self, e: Emit):
        lines, dims = [], self.dims(e.p)
        for k in range(len(e.y["y"])):
            for d in range(dims):
                s, u, j = self._slots(e, k, d), _pick(e.u[f"u{d + 1}"], k), 2 * (k * dims + d)
                lines += [f"{e.g[j]} = {u} - {s[LO]}", f"{e.g[j + 1]} = {s[HI]} - {u}"]
        return lines

    def update(self, e: Emit):
        """LookupTable1D's relocation, per input element and dimension (see there)."""
        dims, lines, var = self.dims(e.p), [], f"_k{e.index}"
        for d, (switch, rows) in enumerate(self._grid(e.p)):
            switch_c, rows_c = e.const(switch), e.const(rows)
            last = lit(len(rows) - 1)
            for k in range(len(e.y["y"])):
                s, u, j = self._slots(e, k, d), _pick(e.u[f"u{d + 1}"], k), 2 * (k * dims + d)
                zn_lo, zn_hi, seg = e.zn[j], e.zn[j + 1], s[SEG]
                right = f"float(np.searchsorted({switch_c}, {u}, side='right'))"
                left = f"float(np.searchsorted({switch_c}, {u}, side='left'))"
                lines += [
                    f"if {seg} < 0.0 or {zn_lo} < 0.0 or {zn_hi} <= 0.0:",
                    f"    if {seg} < 0.0:",
                    f"        {var} = {right}",
                    f"    elif {zn_hi} <= 0.0 and {seg} < {last}:",
                    f"        {var} = min({last}, max({seg} + 1.0, {right}))",
                    f"    elif {zn_lo} < 0.0 and {seg} > 0.0:",
                    f"        {var} = max(0.0, min({seg} - 1.0, {left}))",
                    "    else:",
                    f"        {var} = {seg}",
                    f"    if {var} != {seg}:",
                    *[f"        {s[i]} = {rows_c}[int({var}), {i}]" for i in range(SLOTS)],
                    "        if init: changed = True",
                    f"        else: {e.event('segment')}",
                ]
        return lines


def _pick(seq: list[str], k: int) -> str:
    return seq[k] if len(seq) > 1 else seq[0]


BLOCK_TYPES = (LookupTableND,)
