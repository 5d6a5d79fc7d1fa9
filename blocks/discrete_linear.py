"""Discrete linear systems: transfer functions in z^-1 or z (DiscreteTransferFcn) and in z^-1
(DiscreteFilter), both realised by one direct form II transposed helper, and state-space
models (DiscreteStateSpace). Like the continuous ones they become straight-line code with
exact coefficient literals, zero coefficients left out."""
from __future__ import annotations

import numpy as np

from .discrete import broadcast_names
from .linear import StateSpace, _combo, _finite
from blocksim.blocktypes.blockspec import SAMPLE_TIME, BlockType, Emit, Param, Port, Sizes, broadcast


def _vector(p, name: str) -> np.ndarray:
    return np.atleast_1d(np.asarray(p[name], dtype=float)).ravel()


def _shape_problem(p) -> str | None:
    for name in ("num", "den"):
        if np.asarray(p[name]).ndim > 1:
            return f"parameter '{name}' must be a vector of coefficients, got shape " \
                   f"{np.asarray(p[name]).shape}"
        problem = _finite(name, _vector(p, name))
        if problem:
            return f"parameter {problem}"
    if _vector(p, "den")[0] == 0.0:
        return f"parameter 'den': the leading coefficient den[0] is zero (den = " \
               f"{_vector(p, 'den').tolist()})"
    return None


class _Filter(BlockType):
    """A rational transfer function b(z^-1)/a(z^-1), elementwise over the input, realised in
    direct form II transposed (scipy.signal.lfilter's and MATLAB filter's structure):

        y(k) = b0 u(k) + s0(k),  s_i(k+1) = b_(i+1) u(k) + s_(i+1)(k) - a_(i+1) y(k),

    with a normalised to a0 = 1 and zero initial states. Subclasses say how their
    parameters give (b, a) of equal length.
    """

    category = "Discrete"
    discrete = True
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "filtered input"),)

    def coefficients(self, p) -> tuple[list[float], list[float]]:
        """(b, a) of equal length, divided by a[0] (ValueError if it is 0)."""
        num, den = _vector(p, "num"), _vector(p, "den")
        if den[0] == 0.0:
            raise ValueError("den[0] is zero")
        return self._padded(num, den, p)

    def _padded(self, num: np.ndarray, den: np.ndarray, p) -> tuple[list[float], list[float]]:
        raise NotImplementedError

    def check(self, p):
        return _shape_problem(p)

    def feedthrough(self, p):
        try:
            direct = self.coefficients(p)[0][0] != 0.0
        except (ValueError, TypeError, IndexError, ArithmeticError):
            direct = True
        return {"y": ("u",) if direct else ()}

    def sizes(self, p, in_widths):
        w = in_widths.get("u") or 1
        order = len(self.coefficients(p)[1]) - 1
        return Sizes({"y": w}, discrete=w * (1 + order))  # held outputs, then w x order states

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def sample_output(self, e: Emit):
        b, a = self.coefficients(e.p)
        w, order = len(e.y["y"]), len(a) - 1
        u = broadcast_names(e.u["u"], w)
        lines = []
        for j in range(w):
            states = e.m[w + j * order:w + (j + 1) * order]
            lines.append(f"{e.m[j]} = " + _combo([(b[0], u[j])] + [(1.0, s) for s in states[:1]]))
        return {"y": lines}

    def sample_update(self, e: Emit):
        b, a = self.coefficients(e.p)
        w, order = len(e.y["y"]), len(a) - 1
        u = broadcast_names(e.u["u"], w)
        lines = []
        for j in range(w):
            y, states = e.m[j], e.m[w + j * order:w + (j + 1) * order]
            for i in range(order):  # in increasing i: s_i reads the old s_(i+1)
                nxt = [(1.0, states[i + 1])] if i + 1 < order else []
                lines.append(f"{states[i]} = " + _combo(
                    [(b[i + 1], u[j])] + nxt + [(-a[i + 1], y)]))
        return lines


class DiscreteFilter(_Filter):
    """An IIR or FIR filter b(z^-1)/a(z^-1), coefficients in ascending powers of z^-1.

    Simulink's Discrete Filter, MATLAB's filter(b, a, u): num = [1, 2], den = [1, -0.5] is
    (1 + 2 z^-1)/(1 - 0.5 z^-1), i.e. y(k) = u(k) + 2 u(k-1) + 0.5 y(k-1).

    Any lengths (the shorter is padded with zeros); den[0] must not be 0 and divides all
    coefficients. The output reads the input directly at a hit only when num[0] != 0.
    Zero initial states; elementwise on vectors.
    """

    name = "DiscreteFilter"
    params = (Param("num", "vector", 1.0, "numerator coefficients, ascending powers of z^-1"),
              Param("den", "vector", [1.0, 0.5], "denominator coefficients, ascending powers of "
                    "z^-1 (den[0] != 0)"),
              SAMPLE_TIME)

    def _padded(self, num, den, p):
        n = max(len(num), len(den))
        num, den = (np.concatenate([v, np.zeros(n - len(v))]) for v in (num, den))
        return (num / den[0]).tolist(), (den / den[0]).tolist()


class DiscreteTransferFcn(DiscreteFilter):
    """A discrete transfer function num/den, by default in ascending powers of z^-1.

    num = [0, 1], den = [1, -0.5] is z^-1/(1 - 0.5 z^-1), i.e. y(k) = u(k-1) + 0.5 y(k-1).

    With `powers` = "z" the coefficients are in descending powers of z, as Simulink's
    Discrete Transfer Fcn reads them: num = [1], den = [1, -0.5] is 1/(z - 0.5), the same
    system. The transfer function must be proper (it may not need future inputs): in z^-1
    the leading denominator coefficient den[0] must not be 0; in z the numerator's degree
    (leading zeros ignored) may not exceed the denominator's. The output reads the input
    directly at a hit only when the z^-1 numerator's first coefficient is not 0; otherwise
    it breaks algebraic loops like a Unit Delay. Coefficients are divided by the leading
    denominator coefficient. Zero initial states; elementwise on vectors.
    """

    name = "DiscreteTransferFcn"
    params = (Param("num", "vector", [0.0, 1.0], "numerator coefficients (see powers)"),
              Param("den", "vector", [1.0, -0.5], "denominator coefficients (see powers)"),
              Param("powers", "choice", "z^-1", "ascending powers of z^-1, or descending "
                    "powers of z (Simulink's Discrete Transfer Fcn)", choices=("z^-1", "z")),
              SAMPLE_TIME)

    def check(self, p):
        den = _vector(p, "den") if np.asarray(p.den).ndim <= 1 else None
        if den is not None and len(den) and den[0] == 0.0 and not np.isnan(den).any():
            return ("parameter 'den': improper transfer function, the leading coefficient "
                    "den[0] is zero (the output would need future inputs)")
        problem = _shape_problem(p)
        if problem or p.powers != "z":
            return problem
        num, den = _vector(p, "num"), _vector(p, "den")
        nonzero = np.flatnonzero(num)
        degree = len(num) - 1 - int(nonzero[0]) if len(nonzero) else 0
        if degree > len(den) - 1:
            return (f"parameter 'num': improper transfer function, the numerator has degree "
                    f"{degree} but the denominator 'den' only {len(den) - 1} (it would need "
                    f"future inputs; multiply by z^-{degree - len(den) + 1})")
        return None

    def _padded(self, num, den, p):
        if p.powers == "z^-1":
            return super()._padded(num, den, p)
        nonzero = np.flatnonzero(num)
        num = num[nonzero[0]:] if len(nonzero) else np.zeros(1)
        b = np.concatenate([np.zeros(len(den) - len(num)), num]) / den[0]
        return b.tolist(), (den / den[0]).tolist()


class DiscreteStateSpace(BlockType):
    """A discrete state-space model x(k+1) = A x(k) + B u(k), y(k) = C x(k) + D u(k), x(0) = x0.

    A is n x n, B n x m, C p x n, D p x m (a scalar 0 is the zero matrix); the input has
    width m, the output width p. The output reads the input directly at a hit only when D
    has a nonzero entry. Held between hits (0.0 before the first hit, with an offset).
    """

    name = "DiscreteStateSpace"
    category = "Discrete"
    discrete = True
    params = (
        Param("A", "vector", 1.0, "state matrix, n x n (nested lists; a scalar for 1 x 1)",
              table=True),
        Param("B", "vector", 1.0, "input matrix, n x m", table=True),
        Param("C", "vector", 1.0, "output matrix, p x n", table=True),
        Param("D", "vector", 0.0, "feedthrough matrix, p x m (a scalar 0: zero matrix)",
              table=True),
        Param("x0", "vector", 0.0, "initial state (length n, or a scalar for all)"),
        SAMPLE_TIME,
    )
    inputs = (Port("u", "input, width m"),)
    outputs = (Port("y", "output, width p"),)
    _continuous = StateSpace()  # the same matrices, checks and feedthrough rule

    def check(self, p):
        return self._continuous.check(p)

    def feedthrough(self, p):
        return self._continuous.feedthrough(p)

    def sizes(self, p, in_widths):
        A, B, C, _ = StateSpace.matrices(p)
        w = in_widths.get("u")
        if w is not None and w != B.shape[1]:
            raise ValueError(f"the input has width {w} but B has {B.shape[1]} columns")
        return Sizes({"y": C.shape[0]}, discrete=C.shape[0] + A.shape[0])  # held y, state

    def initial_discrete(self, p, n):
        states = StateSpace.matrices(p)[0].shape[0]
        return [0.0] * (n - states) + broadcast(p.x0, states)

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def sample_output(self, e: Emit):
        _, _, C, D = StateSpace.matrices(e.p)
        held, x = e.m[:C.shape[0]], e.m[C.shape[0]:]
        return {"y": [f"{h} = " + _combo([*zip(C[i], x), *zip(D[i], e.u["u"])])
                      for i, h in enumerate(held)]}

    def sample_update(self, e: Emit):
        A, B, C, _ = StateSpace.matrices(e.p)
        x = e.m[C.shape[0]:]
        if not x:
            return []
        new = [_combo([*zip(A[i], x), *zip(B[i], e.u["u"])]) for i in range(len(x))]
        return [f"{', '.join(x)} = {', '.join(f'({v})' for v in new)}"]  # all at once


BLOCK_TYPES = (DiscreteTransferFcn, DiscreteFilter, DiscreteStateSpace)
