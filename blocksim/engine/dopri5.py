"""Our own Dormand-Prince 5(4) stepper: one accepted step per call, with dense output.

scipy's RK45 costs far more per step than the model evaluations of a block diagram (input
wrapping, dense-output objects built per call, a restart object per event). This stepper
keeps the same method, error norm and step-size control (Hairer, Norsett and Wanner,
"Solving ODEs I", II.4 and II.6; FSAL, 4th-order continuous extension), but stores only
arrays, evaluates dense output with one Horner scheme, and is restarted for almost nothing.
The same coefficients drive the compiled loop of the numba backend (`native/kernel.py`).

Stiffness is tested as in Hairer's code (`stiffness.py`, shared with dop853): with y6, k6
the sixth stage's argument and value and y7, k7 the new state and its derivative (both at
t + h), h*lambda is estimated as h * ||k7 - k6|| / ||y7 - y6||, against 3.25, the edge of
DOPRI5's stability region on the negative real axis.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from blocksim.engine.steppers import StepFailure, Stepper
from blocksim.engine.stiffness import (LIMITS, STIFF_EVERY, STIFF_NEGATIVE,  # noqa: F401
                                       STIFF_POSITIVE, Stiff, StiffnessTest)

Rhs = Callable[[float, np.ndarray], np.ndarray]

# Butcher tableau of DOPRI5 (the 7th stage is the FSAL evaluation at the new point).
C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
A = np.array([
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [1 / 5, 0.0, 0.0, 0.0, 0.0, 0.0],
    [3 / 40, 9 / 40, 0.0, 0.0, 0.0, 0.0],
    [44 / 45, -56 / 15, 32 / 9, 0.0, 0.0, 0.0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0.0, 0.0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0.0],
])
B = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84])
# Error estimate: difference of the 5th- and 4th-order weights (7 stages, FSAL included).
E = np.array([71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40])
# Dense output (Hairer's CONTD5): weights of the 4th-order continuous extension.
D = np.array([-12715105075 / 11282082432, 0.0, 87487479700 / 32700410799,
              -10690763975 / 1880347072, 701980252875 / 199316789632,
              -1453857185 / 822651844, 69997945 / 29380423])

_A_ROWS = [np.ascontiguousarray(A[s, :s]) for s in range(6)]  # stage s: weights of K[:s]
# The nodes as Python floats: t + c * h in float arithmetic, not through numpy scalars.
_C_FLOATS = tuple(C.tolist())

SAFETY, MIN_FACTOR, MAX_FACTOR = 0.9, 0.2, 10.0
# A step that would end within this many ulps of the bound ends on it: t + (t_bound - t)
# can round to one ulp short, and the step left then (2.2e-16 s at t = 1.5) would be a
# degenerate one, passed on as the next segment's first step.
BOUND_ULPS = 4
ERROR_EXPONENT = -1 / 5  # 1 / (order of the embedded error estimate + 1)
RTOL_FLOOR = 100 * np.finfo(float).eps  # as scipy: a smaller rtol cannot be honoured
SMALL = 12  # up to this many states, dense output is evaluated in float arithmetic
STIFF_LIMIT = LIMITS["dopri5"]  # h*lambda at the edge of the stability region


def rms(v: np.ndarray, count: int | None = None) -> float:
    """Root mean square over `count` elements (the states under error control; v is 0
    for the others), all of v by default."""
    n = v.size if count is None else count
    return float(np.sqrt(np.dot(v, v) / n)) if n else 0.0


def controlled(atol: "float | np.ndarray", size: int) -> int:
    """How many states the error control looks at (inf atol: a state it ignores)."""
    return size if np.ndim(atol) == 0 else int(np.count_nonzero(np.isfinite(atol)))


def initial_step(fun: Rhs, t0: float, x0: np.ndarray, f0: np.ndarray, span: float,
                 rtol: float, atol: "float | np.ndarray", max_step: float) -> float:
    """Hairer's starting step (II.4): a guess from |x| and |f|, checked by one Euler step."""
    if span <= 0 or x0.size == 0:
        return max(span, 0.0)
    scale = atol + np.abs(x0) * rtol
    count = controlled(atol, x0.size)
    d0, d1 = rms(x0 / scale, count), rms(f0 / scale, count)
    if not (math.isfinite(d0) and math.isfinite(d1)):
        return math.nan  # a state or derivative not finite: the first step says so
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span)
    f1 = np.asarray(fun(t0 + h0, x0 + h0 * f0), dtype=float)
    d2 = rms((f1 - f0) / scale, count) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1 / 5)
    return min(100 * h0, h1, span, max_step)


class Dopri5Stepper(Stepper):
    """DOPRI5 with error control from (t0, x0) towards t_bound, one accepted step a call;
    with a `StiffnessTest`, stiffness is tested as in Hairer's code."""

    def __init__(self, fun: Rhs, t0: float, x0: np.ndarray, t_bound: float, rtol: float,
                 atol: "float | np.ndarray", max_step: float, first_step: float | None,
                 stiffness: StiffnessTest | None = None):
        self.fun = fun
        self.stiffness = stiffness
        self.t = self.t_old = float(t0)
        self.x = self.x_old = np.array(x0, dtype=float)
        self.t_bound = float(t_bound)
        self._snap = self.t_bound - BOUND_ULPS * math.ulp(self.t_bound)  # see BOUND_ULPS
        self.rtol, self.atol = max(rtol, RTOL_FLOOR), atol
        self._count = controlled(atol, self.x.size)
        self.max_step = max_step
        self.f = np.asarray(fun(self.t, self.x), dtype=float)
        self.evals = 1
        span = self.t_bound - self.t
        # A first step below the time resolution (the previous segment's last step, cut
        # short by a time event one ulp ahead) is no guide: start afresh instead.
        if first_step is not None and first_step >= 10 * math.ulp(self.t):
            self.h = min(first_step, span, max_step)
        else:
            self.h = initial_step(self._counted, self.t, self.x, self.f, span, self.rtol,
                                  atol, max_step)
        self.K = np.empty((7, self.x.size))
        self._K_heads = [self.K[:s] for s in range(7)]  # views, made once
        self._abs_x = np.abs(self.x)
        self._rcont: np.ndarray | None = None

    def _counted(self, t: float, x: np.ndarray) -> np.ndarray:
        self.evals += 1
        return np.asarray(self.fun(t, x), dtype=float)

    def step(self) -> None:
        # In-place numpy operations where they give the same numbers: a step of a small or
        # vectorised model costs more in numpy calls than in arithmetic.
        t, x, f, K, heads = self.t, self.x, self.f, self.K, self._K_heads
        fun = self.fun
        min_step = 10 * abs(math.nextafter(t, math.inf) - t)
        h = min(self.h, self.max_step)
        rejected = finite = False
        while True:
            t_new = t + h
            if t_new >= self._snap:
                t_new = self.t_bound  # a last step to the bound may be shorter than min_step
            elif not h >= min_step:  # NaN included: it must never loop
                raise StepFailure("the state became infinite or NaN" if (not finite
                                  and rejected) or h != h else "step size too small (underflow)")
            h = t_new - t
            K[0] = f
            for s in range(1, 6):
                xs = np.dot(_A_ROWS[s], heads[s])
                xs *= h
                xs += x
                K[s] = fun(t + _C_FLOATS[s] * h, xs)
            x_new = np.dot(B, heads[6])
            x_new *= h
            x_new += x
            f_new = np.asarray(fun(t_new, x_new), dtype=float)
            K[6] = f_new
            self.evals += 6
            abs_new = np.abs(x_new)
            scale = np.maximum(self._abs_x, abs_new)
            scale *= self.rtol
            scale += self.atol
            v = np.dot(E, K)
            v *= h
            v /= scale
            err = math.sqrt(float(np.dot(v, v)) / self._count) if self._count else 0.0
            finite = math.isfinite(err)
            if err < 1.0:
                factor = MAX_FACTOR if err == 0 else min(MAX_FACTOR, SAFETY * err ** ERROR_EXPONENT)
                if rejected:
                    factor = min(1.0, factor)
                self.h = h * factor
                break
            h *= max(MIN_FACTOR, SAFETY * err ** ERROR_EXPONENT) if finite else MIN_FACTOR
            rejected = True
        stiffness = self.stiffness
        if stiffness is not None:
            stiffness.accepted += 1  # `StiffnessTest.due`, written out (once per step)
            if stiffness.positive or not stiffness.accepted % STIFF_EVERY:
                stiffness.test(t, h, K[5], K[6], xs, x_new)  # xs: the sixth stage's argument
        self.t_old, self.x_old = t, x
        self.t, self.x, self.f = t_new, x_new, f_new
        self._abs_x = abs_new
        self.last_step = h
        self._rcont = None

    def _coefficients(self, columns: list[int] | None = None) -> np.ndarray:
        """Hairer's CONTD5 coefficients of the last step (4 rows, one per power), for all
        states or only some."""
        h = self.t - self.t_old
        x0, x1, K = self.x_old, self.x, self.K
        if columns is not None:
            x0, x1, K = x0[columns], x1[columns], K[:, columns]
        r = np.empty((4, x0.size))
        r[0] = x1 - x0
        r[1] = h * K[0] - r[0]
        r[2] = r[0] - h * K[6] - r[1]
        r[3] = h * (D @ K)
        return r

    def _rc(self) -> tuple[np.ndarray | None, list[tuple[float, ...]] | None]:
        """The step's dense-output coefficients: for small systems only as rows of Python
        floats (event location evaluates here a few times per event: plain float
        arithmetic beats five numpy operations on tiny arrays), else as an array."""
        if self._rcont is None:
            if self.x.size > SMALL:
                self._rcont = (self._coefficients(), None)
            else:  # `_coefficients`' arithmetic on floats: one numpy call instead of nine
                h = self.t - self.t_old
                x0, k0, k6 = self.x_old.tolist(), self.K[0].tolist(), self.K[6].tolist()
                r0 = [b - a for a, b in zip(x0, self.x.tolist())]
                r1 = [h * k - a for k, a in zip(k0, r0)]
                r2 = [a - h * k - b for a, k, b in zip(r0, k6, r1)]
                r3 = [h * v for v in (D @ self.K).tolist()]
                self._rcont = (None, list(zip(x0, r0, r1, r2, r3)))  # no array: unused
        return self._rcont

    def dense(self, t: float) -> np.ndarray:
        if t == self.t:
            return self.x.copy()
        h = self.t - self.t_old
        if h <= 0:
            return self.x.copy()
        r, rows = self._rc()
        s = (t - self.t_old) / h
        s1 = 1.0 - s
        if rows is not None:
            return np.array([x0 + s * (a + s1 * (b + s * (c + s1 * d)))
                             for x0, a, b, c, d in rows])
        return self.x_old + s * (r[0] + s1 * (r[1] + s * (r[2] + s1 * r[3])))

    def dense_list(self, t: float) -> list[float]:
        """`dense(t)` as Python floats (the same arithmetic)."""
        h = self.t - self.t_old
        if t == self.t or h <= 0:
            return self.x.tolist()
        r, rows = self._rc()
        if rows is None:
            return self.dense(t).tolist()
        s = (t - self.t_old) / h
        s1 = 1.0 - s
        return [x0 + s * (a + s1 * (b + s * (c + s1 * d))) for x0, a, b, c, d in rows]

    def prepare_dense(self) -> None:
        """Compute the coefficients of every state now: for a caller that will need the
        whole state (`column_rows` then slices them instead of computing its own)."""
        self._rc()

    def column_rows(self, columns: "tuple[int, ...]") -> list[tuple[float, ...]]:
        """For some states, (x0, a, b, c, d, x1) of the last step as Python floats: what
        `dense_into` evaluates (event location reads only the states a guard reads)."""
        cols = list(columns)
        if self._rcont is None and self.x.size > SMALL:  # only these states' coefficients
            r = self._coefficients(cols).tolist()
        else:
            r, rows = self._rc()
            if rows is not None:
                return [rows[k] + (x1,) for k, x1 in zip(cols, self.x[cols].tolist())]
            r = r[:, cols].tolist()
        return list(zip(self.x_old[cols].tolist(), *r, self.x[cols].tolist()))

    def dense_into(self, t: float, columns: "tuple[int, ...]", rows: list[tuple[float, ...]],
                   out: list[float]) -> None:
        """`dense(t)` of the states `columns` (rows from `column_rows`) written into the
        list `out` at their indices: the same arithmetic, element by element."""
        h = self.t - self.t_old
        if t == self.t or h <= 0:
            for k, row in zip(columns, rows):
                out[k] = row[5]
            return
        s = (t - self.t_old) / h
        s1 = 1.0 - s
        for k, (x0, a, b, c, d, _) in zip(columns, rows):
            out[k] = x0 + s * (a + s1 * (b + s * (c + s1 * d)))

    def dense_many(self, ts: list[float]) -> list[np.ndarray]:
        """Dense output at several times of the last step at once (the output grid)."""
        if len(ts) < 3 or self.x.size <= SMALL:
            return [self.dense(t) for t in ts]
        r = self._rc()[0]
        s = (np.asarray(ts) - self.t_old)[:, None] / (self.t - self.t_old)
        s1 = 1.0 - s
        rows = self.x_old + s * (r[0] + s1 * (r[1] + s * (r[2] + s1 * r[3])))
        return [self.x.copy() if t == self.t else row for t, row in zip(ts, rows)]

    def dense_rows(self, ts: list[float], columns: list[int]) -> np.ndarray:
        """Some states at several times of the last step, vectorised over both (the output
        grid of a model that logs states): the same arithmetic as `dense`."""
        t_arr = np.asarray(ts, dtype=float)
        if self.t - self.t_old <= 0:
            return np.tile(self.x[columns], (len(ts), 1))
        r = (self._rcont[0][:, columns] if self._rcont and self._rcont[0] is not None
             else self._coefficients(columns))
        s = ((t_arr - self.t_old) / (self.t - self.t_old))[:, None]
        s1 = 1.0 - s
        rows = self.x_old[columns] + s * (r[0] + s1 * (r[1] + s * (r[2] + s1 * r[3])))
        at_end = t_arr == self.t
        if at_end.any():
            rows[at_end] = self.x[columns]
        return rows

    @property
    def nfev(self) -> int:
        return self.evals
