"""Ending a run from outside: `should_stop` is asked inside long stretches without events.

A run with no event has a single integration segment; the engine still asks should_stop
every few milliseconds of wall time and returns the results so far, on both backends.
"""
import importlib.util
import time

import numpy as np
import pytest

import blocksim
from builders import block, diagram

HAS_NUMBA = importlib.util.find_spec("numba") is not None


def endless_oscillator():
    """x'' = -x at tight tolerances over 1e6 s: hours of work, and not a single event."""
    blocks = [block("k", "Gain", k=-1.0), block("v", "Integrator", x0=0.0),
              block("x", "Integrator", x0=1.0), block("y", "Output")]
    wires = [("x.y", "k.u"), ("k.y", "v.u"), ("v.y", "x.u"), ("x.y", "y.u")]
    return diagram(blocks, wires, stop=1e6, rtol=1e-12, atol=1e-12, output_interval=0.1)


@pytest.mark.parametrize("backend", [
    "python", pytest.param("numba", marks=pytest.mark.skipif(not HAS_NUMBA,
                                                             reason="numba is not installed"))])
def test_should_stop_ends_an_event_free_run(backend):
    model = blocksim.compile(endless_oscillator())
    blocksim.simulate(model, backend=backend, stop_time=1.0)  # compile the numba functions
    asked = []
    deadline = time.perf_counter() + 0.3

    def should_stop():
        asked.append(time.perf_counter())
        return asked[-1] > deadline

    started = time.perf_counter()
    r = blocksim.simulate(model, backend=backend, should_stop=should_stop)
    assert time.perf_counter() - started < 5.0
    assert r.status == "stopped" and r.message == "interrupted by the user"
    assert r.events[-1].kind == "interrupted" and r.events[-1].time <= r.time[-1] + 0.1
    assert 0.0 < r.time[-1] < 1e6 and r.stats["restarts"] == 1
    assert len(asked) >= 3  # asked again and again inside the one segment
    # What was computed before the stop is right.
    np.testing.assert_allclose(r["y"], np.cos(r.time), atol=1e-8)


def test_should_stop_is_asked_at_most_every_few_milliseconds():
    model = blocksim.compile(endless_oscillator())
    asked = []
    blocksim.simulate(model, stop_time=200.0, should_stop=lambda: asked.append(1) is not None)
    r = blocksim.simulate(model, stop_time=200.0)
    assert r.status == "finished"
    assert 1 <= len(asked) < r.stats["steps"] / 10  # not once per step


@pytest.mark.parametrize("backend", [
    "python", pytest.param("numba", marks=pytest.mark.skipif(not HAS_NUMBA,
                                                             reason="numba is not installed"))])
def test_a_run_stopped_at_once_still_has_its_start(backend):
    # Stop asked before anything ran: the start is settled and recorded all the same.
    model = blocksim.compile(endless_oscillator())
    r = blocksim.simulate(model, backend=backend, should_stop=lambda: True)
    assert r.status == "stopped"
    assert r.time[0] == 0.0 and r["y"][0] == 1.0
