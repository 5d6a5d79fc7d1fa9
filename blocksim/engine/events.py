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
    def changed(t: float) -> bool:
        return float(np.sign(g(t))) != z

    lo, hi = t0, t1
    g0 = g(t0)
    if z != 0.0 and np.sign(g0) == z:
        g1 = g(t1)
        if np.sign(g1) == -z:
            try:
                root = brentq(g, t0, t1, xtol=4 * math.ulp(max(abs(t0), abs(t1))), rtol=4.5e-16)
                lo = max(t0, math.nextafter(root, -math.inf) if root > t0 else t0)
                for _ in range(8):
                    if changed(root):
                        hi = root
                        break
                    lo = root
                    root = math.nextafter(root, math.inf)
                    if root >= t1:
                        break
            except (ValueError, RuntimeError):
                lo, hi = t0, t1
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
