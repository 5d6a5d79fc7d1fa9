"""Locating state events on a step's dense output, to a few units in the last place.

A zero-crossing function i "fires" in a step when its sign at the step end differs from its
latched sign z_i in a direction it watches. The event instant is the first float at which
the sign has changed: the right end of a bracket that root finding shrinks to adjacent
floats, so the state handed to event handling is already past the crossing.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.optimize import brentq


def fired(z: np.ndarray, s_new: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Indices whose sign changed from z to s_new in a watched direction."""
    change = s_new != z
    if not change.any():
        return np.zeros(0, dtype=int)
    up = s_new > z
    watched = (direction == 0) | ((direction > 0) & up) | ((direction < 0) & ~up)
    return np.flatnonzero(change & watched)


def locate(g: Callable[[float], float], z: float, t0: float, t1: float) -> float:
    """The first float t in (t0, t1] where sign(g(t)) != z, given that it holds at t1.

    Brent's method finds the root of the continuous function when the sign at t0 is the
    latched one; bisection on the sign test covers the rest (a function leaving zero, or a
    latched sign that roundoff contradicts at t0). Either way the result is made exact by
    stepping to the first float where the sign has changed.
    """
    raw, seen = g, {}

    def g(t: float) -> float:  # Brent and the bracket revisit their end points: remember
        value = seen.get(t)
        if value is None:
            value = seen[t] = raw(t)
        return value

    def changed(t: float) -> bool:
        return float(np.sign(g(t))) != z

    lo, hi = t0, t1
    if z != 0.0 and np.sign(g(t1)) == -z:
        # Brent needs a left end with the latched sign. t0 may sit exactly on the guard
        # (a state just reset onto it, moving away): then look for one inside the step.
        a: float | None = t0
        for _ in range(8):
            sa = np.sign(g(a))
            if sa == z:
                break
            if sa == -z:
                if a == t0:  # roundoff contradicts the latched sign: bisection below
                    a = None
                    break
                hi = a
            a = t0 + (hi - t0) / 2
        else:
            a = None
        if a is not None:
            try:
                root = brentq(g, a, hi, xtol=4 * math.ulp(max(abs(a), abs(hi))),
                              rtol=4 * np.finfo(float).eps)
                lo, hi = _bracket(changed, root, t0, hi)
            except (ValueError, RuntimeError):
                lo = t0
    # Bisection on the sign test until the bracket is two adjacent floats.
    if changed(lo) and lo > t0:
        lo = t0
    while True:
        mid = lo + (hi - lo) / 2
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
        for _ in range(12):
            trial = root - step
            if trial <= t0:
                return t0, hi
            if not changed(trial):
                return trial, hi
            hi = trial
            step *= 2
        return t0, hi
    lo = root
    for _ in range(12):
        trial = root + step
        if trial >= t1:
            return lo, t1
        if changed(trial):
            return lo, trial
        lo = trial
        step *= 2
    return lo, t1
