"""Event location in compiled code: `events.locate`, step for step, for the numba backend.

The crossing of zero-crossing function i inside a step is located on the step's dense
output (Hairer's continuous extension, coefficients rc), exactly as the Python path does:
Brent's method (as scipy's brentq), a walk of doubling ulps around its estimate, then
bisection on the sign test to the first float at which the sign has changed.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from blocksim.engine import events


@njit(cache=True, nogil=True, inline="always")
def sign(v):
    if v > 0.0:
        return 1.0
    if v < 0.0:
        return -1.0
    return v  # 0.0 or NaN, as np.sign


@njit(cache=True, nogil=True, inline="always")
def ulp(t):
    t = abs(t)
    return np.nextafter(t, np.inf) - t


@njit(cache=True, nogil=True, inline="always")
def dense(t, t0, h, x0, rc, out):
    """Hairer's continuous extension of the step (t0, t0 + h) at t (rc: 4 x n)."""
    s = (t - t0) / h
    s1 = 1.0 - s
    for j in range(x0.size):
        out[j] = x0[j] + s * (rc[0, j] + s1 * (rc[1, j] + s * (rc[2, j] + s1 * rc[3, j])))


@njit(cache=True, nogil=True, inline="always")
def state_at(t, t0, t1, h, x0, x1, rc, out):
    """The state of the step (t0, t1) at t: x1 itself at the step end, else `dense`."""
    if t == t1:
        for j in range(x1.size):
            out[j] = x1[j]
    else:
        dense(t, t0, h, x0, rc, out)


@njit(cache=True, nogil=True, inline="always")
def value_at(zc, i, t, t0, t1, h, x0, x1, rc, m, z, xd, g, S):
    state_at(t, t0, t1, h, x0, x1, rc, xd)
    zc(t, xd, m, z, g, S)
    return g[i]


@njit(cache=True, nogil=True, inline="always")
def changed(zc, i, zi, t, t0, t1, h, x0, x1, rc, m, z, xd, g, S):
    return sign(value_at(zc, i, t, t0, t1, h, x0, x1, rc, m, z, xd, g, S)) != zi


_brent_step = njit(cache=True, nogil=True, inline="always")(events.brent_step)


@njit(cache=True, nogil=True)
def brent(zc, i, xa, xb, fa, fb, t0, t1, h, x0, x1, rc, m, z, xd, g, S):
    """Brent's root finder (`events.brent`) to 4 ulp; the bracket [xa, xb] changes sign.
    Returns (root, g_i there if the last evaluation was there, else NaN: not known)."""
    if fa == 0.0:
        return xa, fa
    if fb == 0.0:
        return xb, fb
    xtol = 4.0 * ulp(max(abs(xa), abs(xb)))
    xpre, xcur, fpre, fcur = xa, xb, fa, fb
    xblk, fblk, spre, scur = 0.0, 0.0, 0.0, 0.0
    for _ in range(events.BRENT_ITERATIONS):
        done, xpre, xnew, xblk, fpre, fblk, spre, scur = _brent_step(
            xpre, xcur, xblk, fpre, fcur, fblk, spre, scur, xtol)
        if done:
            return xnew, (fcur if xnew == xcur else np.nan)
        xcur = xnew
        fcur = value_at(zc, i, xcur, t0, t1, h, x0, x1, rc, m, z, xd, g, S)
    return xcur, fcur


@njit(cache=True, nogil=True)
def locate(zc, i, zi, ta, tb, t0, t1, h, x0, x1, rc, m, z, xd, g, S):
    """The first float in (ta, tb] where sign(g_i) != zi: `events.locate`, compiled.

    (ta, tb) lies in the step (t0, t1) whose dense output (x0, x1, rc) gives the state.
    """
    lo, hi = ta, tb
    g1 = value_at(zc, i, tb, t0, t1, h, x0, x1, rc, m, z, xd, g, S)
    if zi != 0.0 and sign(g1) == -zi:
        a = ta
        found = False
        for _ in range(8):
            ga = value_at(zc, i, a, t0, t1, h, x0, x1, rc, m, z, xd, g, S)
            sa = sign(ga)
            if sa == zi:
                found = True
                break
            if sa == -zi:
                if a == ta:
                    break
                hi = a
                g1 = ga
            a = ta + (hi - ta) / 2.0
        if found:
            root, g_root = brent(zc, i, a, hi, ga, g1, t0, t1, h, x0, x1, rc, m, z, xd, g, S)
            lo = ta
            step = ulp(root)
            if g_root != g_root:  # not known (or NaN: evaluated again, as Python would)
                g_root = value_at(zc, i, root, t0, t1, h, x0, x1, rc, m, z, xd, g, S)
            if sign(g_root) != zi:
                hi = root
                for _ in range(12):
                    trial = root - step
                    if trial <= ta:
                        break
                    if not changed(zc, i, zi, trial, t0, t1, h, x0, x1, rc, m, z, xd, g, S):
                        lo = trial
                        break
                    hi = trial
                    step *= 2.0
            else:
                lo = root
                for _ in range(12):
                    trial = root + step
                    if trial >= hi:
                        break
                    if changed(zc, i, zi, trial, t0, t1, h, x0, x1, rc, m, z, xd, g, S):
                        hi = trial
                        break
                    lo = trial
                    step *= 2.0
    # (`events.locate` checks lo again here: every lo > ta above was found unchanged.)
    while True:
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            return hi
        if changed(zc, i, zi, mid, t0, t1, h, x0, x1, rc, m, z, xd, g, S):
            hi = mid
        else:
            lo = mid
