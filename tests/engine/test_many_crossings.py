"""Event location when many crossings fire in one step of a large model (the Python path
keeps their values in numpy arrays and orders them by estimates from values already known
at the step start): the earliest crossing is still the one found, at the closed-form
instant, on both backends."""
from __future__ import annotations

import random

import numpy as np
from both_backends import run_both
from test_native_fused_events import relay_bank, switch_times

import blocksim
from blocksim.engine import segment
from blocksim.engine.segment import FEW_FIRED, SMALL, PythonLoop

N = 24  # oscillators: more zero crossings than SMALL, so their values are numpy arrays


def test_estimate_order_is_the_same_from_arrays_as_from_lists():
    """The numpy ordering of large models and the Python one of small models agree, ties,
    zeros, NaN and values of the wrong sign at the step start included."""
    rng = random.Random(14)
    choices = [lambda: rng.uniform(-2.0, 2.0), lambda: 0.0, lambda: float("nan")]
    for _ in range(500):
        n = rng.randint(FEW_FIRED + 1, 40)
        z = np.array([rng.choice([-1.0, 0.0, 1.0]) for _ in range(n)])
        g_old = [rng.choice(choices)() for _ in range(n)]
        g_new = [rng.choice(choices)() for _ in range(n)]
        if rng.random() < 0.3:  # equal estimates: ties go to the lowest index
            g_old = [1.0 if zi > 0 else -1.0 for zi in z]
            g_new = [-v for v in g_old]
        fired = [i for i in range(n) if np.sign(g_new[i]) != z[i]]
        from_lists = PythonLoop._by_estimate(fired, g_old, g_new, z)
        with np.errstate(all="ignore"):  # as in a run (NaN divided here on purpose)
            from_arrays = PythonLoop._by_estimate(fired, np.array(g_old), np.array(g_new), z)
        assert from_arrays == from_lists
        assert sorted(from_lists) == fired


def test_a_large_relay_bank_switches_when_the_closed_form_says(monkeypatch):
    """24 relays (97 blocks): each step after an event overshoots many switching times;
    only the earliest is located, on estimates ordered in numpy, and every relay switches
    at its closed-form instants, as on the numba backend."""
    ordered: list[bool] = []
    by_estimate = PythonLoop._by_estimate

    def spy(idx, g_old, g_new, z):
        ordered.append(isinstance(g_old, np.ndarray) and len(idx) > FEW_FIRED)
        return by_estimate(idx, g_old, g_new, z)

    monkeypatch.setattr(segment.PythonLoop, "_by_estimate", staticmethod(spy))
    stop = 4.0
    model = blocksim.compile(relay_bank(N, stop))
    assert model.n_zc > SMALL
    results = run_both(model)
    assert ordered and all(ordered)  # the numpy path ran, with many crossings each time
    for k in range(N):
        got = [e.time for e in results.events if e.block == f"r{k}" and e.kind in ("on", "off")]
        want = switch_times(k, stop)
        assert len(got) == len(want) >= 2
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
