"""diagrams/pi_1khz.json: a 1 kHz discrete PI around x' = -x + u, against the exact recursion
of the sampled loop at every hit (hit times from the integer formula), on both backends.

CI runs 10 s (10,000 hits) per backend; the full 1000 s (a million hits) is the row of
benchmarks/performance.py, which checks every hit the same way."""
import importlib.util
import math
from fractions import Fraction

import numpy as np
import pytest

import blocksim
from builders import DIAGRAMS

BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="numba is not installed"))]


def recursion(n_hits: int, kp=2.0, ki=5.0, ts=1e-3):
    """y_k, u_k: u_k = Kp e_k + I_k, I_(k+1) = I_k + Ts Ki e_k, e_k = 1 - y_k, and the plant
    x' = -x + u exact over a period with u held."""
    a = math.exp(-ts)
    y = integral = 0.0
    ys, us = np.empty(n_hits), np.empty(n_hits)
    for k in range(n_hits):
        e = 1.0 - y
        u = kp * e + integral
        ys[k], us[k] = y, u
        integral += ts * ki * e
        y = a * y + (1.0 - a) * u
    return ys, us


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_hit_matches_the_sampled_loop(backend):
    stop = 10.0
    r = blocksim.simulate(blocksim.load(DIAGRAMS / "pi_1khz.json"), stop_time=stop,
                          backend=backend)
    n = 10_001
    hits = np.array([float(Fraction(k, 1000)) for k in range(n)])  # the integer formula
    last = {}
    for i, t in enumerate(r.time.tolist()):
        last[t] = i  # the right limit: the last row at a time
    rows = np.array([last[t] for t in hits.tolist()])  # KeyError: a hit off its exact time
    y_ref, u_ref = recursion(n)
    assert np.max(np.abs(r["y"][rows] - y_ref)) < 1e-9
    assert np.max(np.abs(r["u"][rows] - u_ref)) < 1e-9
    assert np.count_nonzero(np.diff(r.time) == 0.0) == n - 1  # every hit but the start twice
