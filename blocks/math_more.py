"""More math blocks in Simulink's style: MinMax and Rounding (their switches and jumps
located as events), Polynomial, Matrix Gain, Dot Product and Bias (plain straight-line
code with exact literals)."""
from __future__ import annotations

import numpy as np

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes, broadcast, lit, size_of
from blocksim.compiler.limits import MAX_PORTS

from .linear import _combo
from .math_ops import elementwise_width
from .nonlinear import (BAND_SLOTS, ROUNDING_RULES, IntegerBand, integer_band_code,
                        note_change, pick)


class MinMax(BlockType):
    """The smallest or largest of the inputs (elementwise), or of one input's elements.

    With `inputs` = 1 the output is the min or max over the elements of u (a scalar);
    with more, over the inputs u1, u2, ... elementwise (width-1 inputs expand). Which
    candidate wins is a latched mode: one zero crossing per other candidate watches its
    difference with the winner, so the output switches exactly where another candidate
    overtakes it and a step never straddles the kink. Ties keep the current winner.
    """

    name = "MinMax"
    category = "Math"
    event_kinds = (
        EventKind("switch", "another candidate became the smallest or largest (inputs > 1)"),
    )
    params = (
        Param("function", "choice", "min", "the smallest or the largest", choices=("min", "max")),
        Param("inputs", "int", 1, "number of inputs; 1: over the elements of u", low=1,
              high=MAX_PORTS),
    )
    inputs = (Port("u", "the vector to reduce (inputs = 1)"),
              Port("u1", "first candidate (inputs > 1: one port u1, u2, ... per input)"))
    outputs = (Port("y", "min or max"),)

    def input_ports(self, p):
        if p.inputs == 1:
            return (Port("u", "the vector whose elements are compared"),)
        return tuple(Port(f"u{i + 1}", f"candidate {i + 1}") for i in range(p.inputs))

    def _shape(self, p, in_widths) -> tuple[int, int]:
        """(output width, candidates per output element)."""
        if p.inputs == 1:
            return 1, in_widths.get("u") or 1
        return elementwise_width(in_widths), p.inputs

    def sizes(self, p, in_widths):
        n, count = self._shape(p, in_widths)
        if count == 1:
            return Sizes({"y": n})
        return Sizes({"y": n}, discrete=n, zero_crossings=n * count)

    def zc_directions(self, p, count):
        return [-1] * count  # only the winner being overtaken matters

    def _candidates(self, e: Emit, k: int) -> list[str]:
        if "u" in e.u:
            return list(e.u["u"])
        return [pick(e.u[f"u{i + 1}"], k) for i in range(e.p.inputs)]

    @staticmethod
    def _winner(mode: str, candidates: list[str]) -> str:
        """The candidate the latched mode names, as one conditional expression."""
        text = candidates[-1]
        for j in range(len(candidates) - 2, -1, -1):
            text = f"{candidates[j]} if {mode} == {float(j)!r} else {text}"
        return f"({text})"

    def output(self, e: Emit):
        lines = []
        for k, y in enumerate(e.y["y"]):
            c = self._candidates(e, k)
            lines.append(f"{y} = {c[0] if len(c) == 1 else self._winner(e.m[k], c)}")
        return {"y": lines}

    def zero_crossing(self, e: Emit):
        lines = []
        for k in range(len(e.y["y"])):
            c = self._candidates(e, k)
            w = f"_w{e.index}"
            lines.append(f"{w} = {self._winner(e.m[k], c)}")
            for j, cj in enumerate(c):
                diff = f"{w} - {cj}" if e.p.function == "max" else f"{cj} - {w}"
                lines.append(f"{e.g[k * len(c) + j]} = (1.0 if {e.m[k]} == {float(j)!r} "
                             f"else {diff})")
        return lines

    def update(self, e: Emit):
        """Move to the best of the candidates that overtake the winner just after the
        event (by their values at it); the next pass checks the new winner the same way."""
        better = ">" if e.p.function == "max" else "<"
        j_var, v_var = f"_j{e.index}", f"_b{e.index}"
        lines = []
        for k in range(len(e.y["y"]) if e.g else 0):
            c = self._candidates(e, k)
            lines += [f"{j_var} = -1.0", f"{v_var} = 0.0"]
            for j, cj in enumerate(c):
                zn = e.zn[k * len(c) + j]
                lines += [f"if {zn} < 0.0 and ({j_var} < 0.0 or {cj} {better} {v_var}):",
                          f"    {j_var} = {float(j)!r}; {v_var} = {cj}"]
            lines += [f"if {j_var} >= 0.0:", f"    {e.m[k]} = {j_var}",
                      *note_change(e, "switch", "    ")]
        return lines


class Rounding(IntegerBand, BlockType):
    """Round the input to an integer, elementwise: floor, ceil, round or fix.

    As Simulink's Rounding Function: round goes half away from zero, fix towards zero.

    The integer is a latched mode: two zero crossings watch the ends of the interval of
    inputs that round to it, so each jump happens exactly where the input crosses an end
    and the output is constant between jumps (no step straddles one).
    """

    name = "Rounding"
    category = "Math"
    params = (Param("function", "choice", "floor", "the rounding rule", choices=ROUNDING_RULES),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "the rounded input"),)

    def sizes(self, p, in_widths):
        n = in_widths.get("u") or 1
        return Sizes({"y": n}, discrete=BAND_SLOTS * n, zero_crossings=2 * n)

    def output(self, e: Emit):
        return {"y": [f"{y} = {e.m[BAND_SLOTS * k]}" for k, y in enumerate(e.y["y"])]}

    def update(self, e: Emit):
        return integer_band_code(e, e.p.function, [1.0] * len(e.y["y"]))


def _vector(value) -> np.ndarray:
    return np.atleast_1d(np.asarray(value, dtype=float))


class Polynomial(BlockType):
    """Evaluate a polynomial of the input, elementwise: y = c[0] u^n + ... + c[n-1] u + c[n].

    Coefficients are given highest power first, as MATLAB's polyval, and evaluated the same
    way (Horner's scheme), with exact literals.
    """

    name = "Polynomial"
    category = "Math"
    params = (Param("coefficients", "vector", [1.0, 0.0],
                    "coefficients, highest power first (polyval order)", table=True),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "polyval(coefficients, u)"),)

    def check(self, p):
        if np.ndim(p.coefficients) > 1:
            return (f"parameter 'coefficients' must be a vector, got an array of shape "
                    f"{np.shape(p.coefficients)}")
        return None

    def sizes(self, p, in_widths):
        return Sizes({"y": in_widths.get("u") or 1})

    def output(self, e: Emit):
        c = [lit(v) for v in _vector(e.p.coefficients)]
        lines = []
        for k, y in enumerate(e.y["y"]):
            u, text = pick(e.u["u"], k), c[0]
            for coefficient in c[1:]:  # Horner, as polyval
                text = f"({text}) * {u} + {coefficient}"
            lines.append(f"{y} = {text}")
        return {"y": lines}


class MatrixGain(BlockType):
    """Multiply the input vector by a matrix: y = K u (Simulink's Gain as Matrix(K*u)).

    K is a list of rows (m x n): u must have width n, y has width m. A number is a 1 x 1
    matrix and a flat list a single row (y = the weighted sum of u's elements).
    """

    name = "MatrixGain"
    category = "Math"
    params = (Param("K", "vector", [[1.0, 0.0], [0.0, 1.0]],
                    "the matrix, as a list of rows", table=True),)
    inputs = (Port("u", "input vector (width = columns of K)"),)
    outputs = (Port("y", "K u (width = rows of K)"),)

    @staticmethod
    def matrix(p) -> np.ndarray:
        k = np.asarray(p.K, dtype=float)
        return k.reshape(1, -1) if k.ndim < 2 else k

    def check(self, p):
        if np.ndim(p.K) > 2:
            return f"parameter 'K' must be a matrix (a list of rows), got shape {np.shape(p.K)}"
        return None

    def sizes(self, p, in_widths):
        k = self.matrix(p)
        width = in_widths.get("u")
        if width is not None and width != k.shape[1]:
            raise ValueError(f"input 'u' has width {width} but parameter 'K' has "
                             f"{k.shape[1]} columns (K is {k.shape[0]}x{k.shape[1]}; K*u "
                             f"needs u of width {k.shape[1]})")
        return Sizes({"y": k.shape[0]})

    def output(self, e: Emit):
        k, u = self.matrix(e.p), e.u["u"]
        return {"y": [f"{y} = {_combo(list(zip(row.tolist(), u)))}"
                      for y, row in zip(e.y["y"], k)]}


class DotProduct(BlockType):
    """The dot product of two vectors: y = sum(u1 .* u2) (a width-1 input expands)."""

    name = "DotProduct"
    category = "Math"
    inputs = (Port("u1", "first vector"), Port("u2", "second vector"))
    outputs = (Port("y", "sum of the elementwise products (a scalar)"),)

    def sizes(self, p, in_widths):
        elementwise_width(in_widths)  # ValueError names the input of the wrong width
        return Sizes({"y": 1})

    def output(self, e: Emit):
        n = max(len(e.u["u1"]), len(e.u["u2"]))
        terms = [f"{pick(e.u['u1'], k)} * {pick(e.u['u2'], k)}" for k in range(n)]
        return {"y": [f"{e.y['y'][0]} = {' + '.join(terms)}"]}


class Bias(BlockType):
    """Add a constant to the input: y = u + bias (a vector bias widens a scalar input)."""

    name = "Bias"
    category = "Math"
    params = (Param("bias", "vector", 0.0, "the value added (same unit as u)"),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "u + bias"),)

    def sizes(self, p, in_widths):
        width, size = in_widths.get("u") or 1, size_of(p.bias)
        if width not in (1, size) and size != 1:
            raise ValueError(f"input 'u' has width {width} but parameter 'bias' has {size} "
                             f"elements (give 1 or {width})")
        return Sizes({"y": max(width, size)})

    def output(self, e: Emit):
        b = broadcast(e.p.bias, len(e.y["y"]))
        return {"y": [f"{y} = {pick(e.u['u'], k)} + {lit(b[k])}"
                      for k, y in enumerate(e.y["y"])]}


BLOCK_TYPES = (MinMax, Rounding, Polynomial, MatrixGain, DotProduct, Bias,)
