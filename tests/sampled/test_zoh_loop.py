"""diagrams/zoh_loop.json (bdsim's eg1_zoh): a 10 Hz zero-order hold in a feedback loop around
0.5/(2s + 1), against the exact recursion of the sampled loop at every hit."""
import importlib.util
import math
from fractions import Fraction

import numpy as np
import pytest

import blocksim
from builders import DIAGRAMS

HAS_NUMBA = importlib.util.find_spec("numba") is not None


def recursion(n_hits: int, period: float = 0.1, gain: float = 10.0):
    """y_k and u_k of the sampled loop: u_k = K (r_k - y_k), the plant exact over a period."""
    a = math.exp(-0.5 * period)
    y, ys, us = 0.0, [], []
    for k in range(n_hits):
        r = 1.0 if Fraction(k, 10) >= 1 else 0.0  # the hold at t = 1 already sees the step
        u = gain * (r - y)
        ys.append(y)
        us.append(u)
        y = a * y + (1 - a) * 0.5 * u
    return np.array(ys), np.array(us)


def right_limits(results, times):
    """The last row at each time (an event's right limit)."""
    rows = [np.flatnonzero(results.time == t) for t in times]
    assert all(len(r) for r in rows), "a hit has no row"
    return np.array([r[-1] for r in rows])


@pytest.mark.parametrize("options", [
    dict(), dict(solver="radau"),
    pytest.param(dict(backend="numba"), marks=pytest.mark.skipif(not HAS_NUMBA,
                                                                reason="numba not installed")),
])
def test_every_hit_matches_the_exact_recursion(options):
    results = blocksim.simulate(blocksim.load(DIAGRAMS / "zoh_loop.json"), **options)
    hits = [float(Fraction(k, 10)) for k in range(51)]
    rows = right_limits(results, hits)
    y_ref, u_ref = recursion(51)
    assert np.max(np.abs(results["y"][rows] - y_ref)) < 1e-9
    assert np.max(np.abs(results["u"][rows] - u_ref)) < 1e-9
    # The hold's output is constant between hits: every row inside (t_k, t_k+1) is u_k.
    u = results["u"]
    for k in range(50):
        inside = (results.time > hits[k]) & (results.time < hits[k + 1])
        assert np.all(u[inside] == u[rows[k]])
    # Left and right limits of the hit at t = 1 are both there: u jumps from 0 to 10.
    at_one = np.flatnonzero(results.time == 1.0)
    assert len(at_one) == 2 and results["u"][at_one[0]] == 0.0 and results["u"][at_one[1]] == 10.0
