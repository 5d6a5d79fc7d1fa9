"""Locating state events on a step's dense output, to a few units in the last place.

A zero-crossing function i "fires" in a step when its sign at the step end differs from its
latched sign z_i in a direction it watches. The event instant is the first float at which
the sign has changed: the right end of a bracket that root finding shrinks to adjacent
floats, so the state handed to event handling is already past the crossing.

The compiled loop of the numba backend (`native/locate.py`) runs the same algorithm, step
for step: this is its reference, in plain Python floats (numpy scalars and scipy's root
finder cost more per call than the dozen evaluations of a location).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

EPS4 = 4 * float(np.finfo(float).eps)
BRENT_ITERATIONS = 100
BRACKET_WALK = 12  # doubling steps of one ulp around Brent's estimate


def fired(z: np.ndarray, s_new: np.ndarray, direction: np.ndarray | None) -> np.ndarray:
    """Indices whose sign changed from z to s_new in a watched direction (direction None:
    every crossing watches both)."""
    change = s_new != z
    if not change.any():
        return np.zeros(0, dtype=int)
    if direction is None:
        return np.flatnonzero(change)
    up = s_new > z
    watched = (direction == 0) | ((direction > 0) & up) | ((direction < 0) & ~up)
    return np.flatnonzero(change & watched)


def sign(v: float) -> float:
    """np.sign for a Python float (0.0 and NaN map to themselves)."""
    if v > 0.0:
        return 1.0
    if v < 0.0:
        return -1.0
    return v


def brent_step(xpre: float, xcur: float, xblk: float, fpre: float, fcur: float, fblk: float,
               spre: float, scur: float, xtol: float):
    """One iteration of Brent's method (as scipy's brentq: same steps and stopping rule).

    Returns (done, xpre, xcur, xblk, fpre, fblk, spre, scur): when done, xcur is the root;
    otherwise the caller evaluates g(xcur) as the next fcur. Plain floats only, so the
    numba backend compiles this very function (native/locate.py).
    """
    if fpre != 0.0 and fcur != 0.0 and (fpre < 0.0) != (fcur < 0.0):
        xblk, fblk = xpre, fpre
        spre = scur = xcur - xpre
    if abs(fblk) < abs(fcur):
        xpre, xcur, xblk = xcur, xblk, xcur
        fpre, fcur, fblk = fcur, fblk, fcur
    delta = (xtol + EPS4 * abs(xcur)) / 2.0
    sbis = (xblk - xcur) / 2.0
    if fcur == 0.0 or abs(sbis) < delta:
        return True, xpre, xcur, xblk, fpre, fblk, spre, scur
    if abs(spre) > delta and abs(fcur) < abs(fpre):
        if xpre == xblk:
            stry = -fcur * (xcur - xpre) / (fcur - fpre)
        else:
            dpre = (fpre - fcur) / (xpre - xcur)
            dblk = (fblk - fcur) / (xblk - xcur)
            stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
        if 2.0 * abs(stry) < min(abs(spre), 3.0 * abs(sbis) - delta):
            spre, scur = scur, stry
        else:
            spre, scur = sbis, sbis
    else:
        spre, scur = sbis, sbis
    xpre, fpre = xcur, fcur
    if abs(scur) > delta:
        xcur += scur
    else:
        xcur += delta if sbis > 0.0 else -delta
    return False, xpre, xcur, xblk, fpre, fblk, spre, scur


def brent(g: Callable[[float], float], xa: float, xb: float, fa: float, fb: float) -> float:
    """A root of g in [xa, xb] (g(xa) = fa and g(xb) = fb differ in sign) to about 4 ulp."""
    if fa == 0.0:
        return xa
    if fb == 0.0:
        return xb
    xtol = 4.0 * math.ulp(max(abs(xa), abs(xb)))
    xpre, xcur, fpre, fcur = xa, xb, fa, fb
    xblk = fblk = spre = scur = 0.0
    for _ in range(BRENT_ITERATIONS):
        done, xpre, xcur, xblk, fpre, fblk, spre, scur = brent_step(
            xpre, xcur, xblk, fpre, fcur, fblk, spre, scur, xtol)
        if done:
            return xcur
        fcur = g(xcur)
    return xcur


def locate(g: Callable[[float], float], z: float, t0: float, t1: float,
           estimate: Callable[[float, float], float | None] | None = None,
           g1: float | None = None) -> float:
    """The first float t in (t0, t1] where sign(g(t)) != z, given that it holds at t1.

    Brent's method finds the root of the continuous function when the sign at t0 is the
    latched one (or `estimate(a, b)`, where it gives one: `guard_poly`); bisection on the
    sign test covers the rest (a function leaving zero, or a latched sign that roundoff
    contradicts at t0). Either way the result is made exact by stepping to the first float
    where the sign has changed. g1: g(t1) where the caller knows it.
    """
    z = float(z)
    seen: dict[float, float] = {} if g1 is None else {t1: g1}

    def value(t: float) -> float:  # the walk and the bisection revisit points: remember
        v = seen.get(t)
        if v is None:
            v = seen[t] = float(g(t))
        return v

    def changed(t: float) -> bool:
        return sign(value(t)) != z

    lo, hi = t0, t1
    g1 = value(t1)
    if z != 0.0 and sign(g1) == -z:
        # Brent needs a left end with the latched sign. t0 may sit exactly on the guard
        # (a state just reset onto it, moving away): then look for one inside the step.
        a, ga, found = t0, 0.0, False
        for _ in range(8):
            ga = value(a)
            sa = sign(ga)
            if sa == z:
                found = True
                break
            if sa == -z:
                if a == t0:  # roundoff contradicts the latched sign: bisection below
                    break
                hi, g1 = a, ga
            a = t0 + (hi - t0) / 2.0
        if found:
            root = estimate(a, hi) if estimate is not None else None
            if root is None:
                root = brent(value, a, hi, ga, g1)
            lo, hi = _bracket(changed, root, t0, hi)
    # Bisection on the sign test until the bracket is two adjacent floats.
    if lo > t0 and changed(lo):
        lo = t0
    while True:
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            return hi
        if changed(mid):
            hi = mid
        else:
            lo = mid


def _bracket(changed: Callable[[float], bool], root: float, t0: float, t1: float
             ) -> tuple[float, float]:
    """A small bracket (unchanged, changed) around Brent's estimate of the root.

    Brent stops within a few ulps of the crossing, on either side: walk away from it in
    doubling steps of one ulp until the sign test flips, so the final bisection takes a
    handful of evaluations instead of bisecting the whole step.
    """
    lo, hi = t0, t1
    step = math.ulp(root)
    if changed(root):
        hi = root
        for _ in range(BRACKET_WALK):
            trial = root - step
            if trial <= t0:
                break
            if not changed(trial):
                return trial, hi
            hi = trial
            step *= 2.0
        return lo, hi
    lo = root
    for _ in range(BRACKET_WALK):
        trial = root + step
        if trial >= t1:
            break
        if changed(trial):
            return lo, trial
        lo = trial
        step *= 2.0
    return lo, hi
