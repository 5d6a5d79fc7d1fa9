"""Our own Dormand-Prince 5(4) stepper: one accepted step per call, with dense output.

scipy's RK45 costs far more per step than the model evaluations of a block diagram (input
wrapping, dense-output objects built per call, a restart object per event). This stepper
keeps the same method, error norm and step-size control (Hairer, Norsett and Wanner,
"Solving ODEs I", II.4 and II.6; FSAL, 4th-order continuous extension), but stores only
arrays, evaluates dense output with one Horner scheme, and is restarted for almost nothing.
The same coefficients drive the compiled loop of the numba backend (`native.py`).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from blocksim.engine.steppers import StepFailure, Stepper

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

SAFETY, MIN_FACTOR, MAX_FACTOR = 0.9, 0.2, 10.0
ERROR_EXPONENT = -1 / 5  # 1 / (order of the embedded error estimate + 1)
RTOL_FLOOR = 100 * np.finfo(float).eps  # as scipy: a smaller rtol cannot be honoured
SMALL = 12  # up to this many states, dense output is evaluated in float arithmetic


def rms(v: np.ndarray) -> float:
    return float(np.sqrt(np.dot(v, v) / v.size)) if v.size else 0.0


def initial_step(fun: Rhs, t0: float, x0: np.ndarray, f0: np.ndarray, span: float,
                 rtol: float, atol: float, max_step: float) -> float:
    """Hairer's starting step (II.4): a guess from |x| and |f|, checked by one Euler step."""
    if span <= 0 or x0.size == 0:
        return max(span, 0.0)
    scale = atol + np.abs(x0) * rtol
    d0, d1 = rms(x0 / scale), rms(f0 / scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span)
    f1 = np.asarray(fun(t0 + h0, x0 + h0 * f0), dtype=float)
    d2 = rms((f1 - f0) / scale) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1 / 5)
    return min(100 * h0, h1, span, max_step)


class Dopri5Stepper(Stepper):
    """DOPRI5 with error control from (t0, x0) towards t_bound, one accepted step a call."""

    def __init__(self, fun: Rhs, t0: float, x0: np.ndarray, t_bound: float, rtol: float,
                 atol: float, max_step: float, first_step: float | None):
        self.fun = fun
        self.t = self.t_old = float(t0)
        self.x = self.x_old = np.array(x0, dtype=float)
        self.t_bound = float(t_bound)
        self.rtol, self.atol = max(rtol, RTOL_FLOOR), atol
        self.max_step = max_step
        self.f = np.asarray(fun(self.t, self.x), dtype=float)
        self.evals = 1
        span = self.t_bound - self.t
        if first_step is not None and first_step > 0:
            self.h = min(first_step, span, max_step)
        else:
            self.h = initial_step(self._counted, self.t, self.x, self.f, span, self.rtol,
                                  atol, max_step)
        self.K = np.empty((7, self.x.size))
        self._rcont: np.ndarray | None = None

    def _counted(self, t: float, x: np.ndarray) -> np.ndarray:
        self.evals += 1
        return np.asarray(self.fun(t, x), dtype=float)

    def step(self) -> None:
        t, x, f, K = self.t, self.x, self.f, self.K
        fun = self.fun
        min_step = 10 * abs(math.nextafter(t, math.inf) - t)
        h = min(self.h, self.max_step)
        rejected = finite = False
        while True:
            if h < min_step:
                raise StepFailure("the state became infinite or NaN" if not finite
                                  and rejected else "step size too small (underflow)")
            t_new = t + h
            if t_new >= self.t_bound:
                t_new = self.t_bound
            h = t_new - t
            K[0] = f
            for s in range(1, 6):
                K[s] = fun(t + C[s] * h, x + h * (A[s, :s] @ K[:s]))
            x_new = x + h * (B @ K[:6])
            f_new = np.asarray(fun(t_new, x_new), dtype=float)
            K[6] = f_new
            self.evals += 6
            scale = self.atol + np.maximum(np.abs(x), np.abs(x_new)) * self.rtol
            err = rms(h * (E @ K) / scale)
            finite = bool(np.isfinite(err))
            if err < 1.0:
                factor = MAX_FACTOR if err == 0 else min(MAX_FACTOR, SAFETY * err ** ERROR_EXPONENT)
                if rejected:
                    factor = min(1.0, factor)
                self.h = h * factor
                break
            h *= max(MIN_FACTOR, SAFETY * err ** ERROR_EXPONENT) if finite else MIN_FACTOR
            rejected = True
        self.t_old, self.x_old = t, x
        self.t, self.x, self.f = t_new, x_new, f_new
        self.last_step = h
        self._rcont = None

    def _coefficients(self) -> np.ndarray:
        """Hairer's CONTD5 coefficients of the last step (4 rows, one per power)."""
        h = self.t - self.t_old
        x0, x1 = self.x_old, self.x
        r = np.empty((4, x0.size))
        r[0] = x1 - x0
        r[1] = h * self.K[0] - r[0]
        r[2] = r[0] - h * self.K[6] - r[1]
        r[3] = h * (D @ self.K)
        return r

    def dense(self, t: float) -> np.ndarray:
        if t == self.t:
            return self.x.copy()
        h = self.t - self.t_old
        if h <= 0:
            return self.x.copy()
        if self._rcont is None:
            r = self._coefficients()
            # Small systems (event location evaluates here dozens of times per event):
            # plain float arithmetic beats five numpy operations on tiny arrays.
            self._rcont = (r, list(zip(self.x_old.tolist(), *r.tolist()))
                           if r.shape[1] <= SMALL else None)
        r, rows = self._rcont
        s = (t - self.t_old) / h
        s1 = 1.0 - s
        if rows is not None:
            return np.array([x0 + s * (a + s1 * (b + s * (c + s1 * d)))
                             for x0, a, b, c, d in rows])
        return self.x_old + s * (r[0] + s1 * (r[1] + s * (r[2] + s1 * r[3])))

    def dense_many(self, ts: list[float]) -> list[np.ndarray]:
        """Dense output at several times of the last step at once (the output grid)."""
        if len(ts) < 3 or self.x.size <= SMALL:
            return [self.dense(t) for t in ts]
        if self._rcont is None:
            self._rcont = (self._coefficients(), None)
        r = self._rcont[0]
        s = (np.asarray(ts) - self.t_old)[:, None] / (self.t - self.t_old)
        s1 = 1.0 - s
        rows = self.x_old + s * (r[0] + s1 * (r[1] + s * (r[2] + s1 * r[3])))
        return [self.x.copy() if t == self.t else row for t, row in zip(ts, rows)]

    def solve_to(self, t: float) -> np.ndarray:
        return self.dense(t)

    @property
    def nfev(self) -> int:
        return self.evals
