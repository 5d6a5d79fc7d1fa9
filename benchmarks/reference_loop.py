"""The compiled limit: a hand-written numba DOPRI5 loop for the lag chain, no framework.

    x_0' = u - x_0,  x_k' = x_{k-1} - x_k  (u = 1 from t = 0), y = x_{n-1}

Same method, error norm, step control and output grid as blocksim's dopri5 (so the same
steps), with the equations written straight into the loop. It is what "close to the
compiled limit" is measured against in `performance.py`.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksim.engine import dopri5

_C, _A, _B, _E, _D = dopri5.C, dopri5.A, dopri5.B, dopri5.E, dopri5.D


@njit(cache=True, inline="always")
def _chain(x, dx):
    dx[0] = 1.0 - x[0]
    for k in range(1, x.size):
        dx[k] = x[k - 1] - x[k]


@njit(cache=True)
def lag_chain(n, t_end, rtol, atol, n_grid):
    """(grid times, y on the grid, steps): the last lag of an n-lag chain, x(0) = 0."""
    x, x_new, xs, f = np.zeros(n), np.empty(n), np.empty(n), np.empty(n)
    K = np.empty((7, n))
    out_t, out_y = np.empty(n_grid + 1), np.empty(n_grid + 1)
    out_t[0], out_y[0] = 0.0, 0.0
    _chain(x, f)
    # Hairer's starting step, as blocksim's.
    d0 = d1 = 0.0
    for j in range(n):
        sc = atol + abs(x[j]) * rtol
        d0 += (x[j] / sc) ** 2
        d1 += (f[j] / sc) ** 2
    d0, d1 = math.sqrt(d0 / n), math.sqrt(d1 / n)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    for j in range(n):
        xs[j] = x[j] + h0 * f[j]
    _chain(xs, x_new)
    d2 = 0.0
    for j in range(n):
        d2 += ((x_new[j] - f[j]) / (atol + abs(x[j]) * rtol)) ** 2
    d2 = math.sqrt(d2 / n) / h0
    h1 = max(1e-6, h0 * 1e-3) if d1 <= 1e-15 and d2 <= 1e-15 else (0.01 / max(d1, d2)) ** 0.2
    h = min(100 * h0, h1, t_end)
    t, k_grid, steps = 0.0, 1, 0
    interval = t_end / n_grid
    while t < t_end:
        rejected = False
        while True:
            t_new = min(t + h, t_end)
            h = t_new - t
            K[0] = f
            for s in range(1, 6):
                for j in range(n):
                    acc = 0.0
                    for r in range(s):
                        acc += _A[s, r] * K[r, j]
                    xs[j] = x[j] + h * acc
                _chain(xs, K[s])
            for j in range(n):
                acc = 0.0
                for r in range(6):
                    acc += _B[r] * K[r, j]
                x_new[j] = x[j] + h * acc
            _chain(x_new, K[6])
            err = 0.0
            for j in range(n):
                e = 0.0
                for r in range(7):
                    e += _E[r] * K[r, j]
                err += (h * e / (atol + max(abs(x[j]), abs(x_new[j])) * rtol)) ** 2
            err = math.sqrt(err / n)
            if err < 1.0:
                factor = 10.0 if err == 0.0 else min(10.0, 0.9 * err ** -0.2)
                h_next = h * (min(1.0, factor) if rejected else factor)
                break
            h *= max(0.2, 0.9 * err ** -0.2)
            rejected = True
        steps += 1
        # Dense output of the last lag on the grid points inside the step.
        j = n - 1
        r0 = x_new[j] - x[j]
        r1 = h * K[0, j] - r0
        r2 = r0 - h * K[6, j] - r1
        d = 0.0
        for r in range(7):
            d += _D[r] * K[r, j]
        r3 = h * d
        while k_grid <= n_grid and k_grid * interval <= t_new:
            tg = k_grid * interval
            s = (tg - t) / h
            s1 = 1.0 - s
            out_t[k_grid] = tg
            out_y[k_grid] = x[j] + s * (r0 + s1 * (r1 + s * (r2 + s1 * r3)))
            k_grid += 1
        t = t_new
        x[:] = x_new
        f[:] = K[6]
        h = h_next
    return out_t, out_y, steps
