"""Sample hits and time events settled in the numba backend's compiled loop: the same rows,
events and counts as the Python backend, every hit on the sampled loop's exact recursion,
and no event handed to Python (stats["python_events"])."""
import importlib.util
import math
from fractions import Fraction

import numpy as np
import pytest

import blocksim
from blocksim.compiler import compile_diagram
from builders import BENCHMARKS, DIAGRAMS, block, diagram

HAS_NUMBA = importlib.util.find_spec("numba") is not None
needs_numba = pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")


def pi_recursion(n_hits: int, ts=1e-3, kp=2.0, ki=5.0):
    """y_k and u_k of benchmarks/discrete_pi.json: the plant x' = -x + u exact over a period
    with u held, u_k = Kp e_k + I_k, I_(k+1) = I_k + Ts Ki e_k, e_k = 1 - y_k."""
    a = math.exp(-ts)
    x = integral = 0.0
    ys, us = [], []
    for _ in range(n_hits):
        e = 1.0 - x
        u = kp * e + integral
        ys.append(x)
        us.append(u)
        integral += ts * ki * e
        x = a * x + (1.0 - a) * u
    return np.array(ys), np.array(us)


def right_limits(results, times):
    """The last row at each time (an event's right limit)."""
    rows = [np.flatnonzero(results.time == t) for t in times]
    assert all(len(r) for r in rows), "a hit has no row"
    return np.array([r[-1] for r in rows])


def same_run(py, nb, atol=1e-12):
    """The numba run as the Python one: rows, event log, counts; no event in Python."""
    assert nb.status == py.status
    assert len(nb.time) == len(py.time) and np.max(np.abs(nb.time - py.time)) <= atol
    for name in py.signals:
        assert np.max(np.abs(nb[name] - py[name]), initial=0) <= atol, name
    assert [(e.block, e.kind) for e in nb.events] == [(e.block, e.kind) for e in py.events]
    assert max((abs(a.time - b.time) for a, b in zip(py.events, nb.events)), default=0) <= atol
    for key in ("steps", "events", "restarts", "hits"):
        assert nb.stats[key] == py.stats[key], key
    assert nb.stats["python_events"] == 0


@pytest.mark.parametrize("backend", ["python", pytest.param("numba", marks=needs_numba)])
def test_discrete_pi_follows_its_exact_recursion_at_every_hit(backend):
    results = blocksim.simulate(blocksim.load(BENCHMARKS / "discrete_pi.json"),
                                backend=backend)
    hits = [float(Fraction(k, 1000)) for k in range(10001)]
    rows = right_limits(results, hits)
    y_ref, u_ref = pi_recursion(10001)
    assert np.max(np.abs(results["y"][rows] - y_ref)) < 1e-9
    assert np.max(np.abs(results["uo"][rows] - u_ref)) < 1e-9
    assert results.stats["hits"] == 10001 and results.stats["events"] == 0
    if backend == "numba":
        assert results.stats["python_events"] == 0


@needs_numba
@pytest.mark.parametrize("path", [BENCHMARKS / "discrete_pi.json", DIAGRAMS / "zoh_loop.json"])
def test_sampled_diagrams_run_in_the_compiled_loop_as_in_python(path):
    model = blocksim.compile(blocksim.load(path), stop=2.0)
    py = blocksim.simulate(model, backend="python")
    nb = blocksim.simulate(model, backend="numba")
    # The same steps, hits and events; values to a few ulps (the Python backend's sums are
    # the host BLAS's, whose AVX-512 kernels round differently: tests/both_backends.py)
    same_run(py, nb, atol=4e-15)
    assert model.derived["native"].timed


def offsets_and_steps():
    """Two rates, one with an offset (its hits at 0.05 + 0.25 k fall on every other hit of
    the fast rate) and a Step at a hit: hits, a block's time event, and both at once."""
    blocks = [block("step", "Step", time=0.3), block("e", "Sum", signs="+-"),
              block("fast", "ZeroOrderHold", sample_time=0.1),
              block("slow", "UnitDelay", sample_time=[0.25, 0.05]),
              block("u", "Sum", signs="++"),
              block("plant", "TransferFunction", num=[1.0], den=[0.5, 1.0]),
              block("y", "Output"), block("uo", "Output")]
    wires = [("step.y", "e.u1"), ("plant.y", "e.u2"), ("e.y", "fast.u"), ("e.y", "slow.u"),
             ("fast.y", "u.u1"), ("slow.y", "u.u2"), ("u.y", "plant.u"), ("plant.y", "y.u"),
             ("u.y", "uo.u")]
    return diagram(blocks, wires, stop=3.0, rtol=1e-10, atol=1e-12, output_interval=0.02)


@needs_numba
@pytest.mark.parametrize("start", [0.0, 0.05, 0.3, 0.31])
def test_rates_with_offsets_and_a_step_match_python(start):
    model = compile_diagram(offsets_and_steps())
    py = blocksim.simulate(model, backend="python", start_time=start)
    nb = blocksim.simulate(model, backend="numba", start_time=start)
    same_run(py, nb)
    assert py.stats["hits"] > 30 and len(py.events_of("step")) == 1


@needs_numba
def test_pausing_the_loop_for_progress_changes_nothing(monkeypatch):
    from blocksim.engine.native import loop as native

    model = compile_diagram(offsets_and_steps())
    plain = blocksim.simulate(model, backend="numba")
    monkeypatch.setattr(native, "YIELD_EVERY", 3)  # pause every few steps, events or hits
    monkeypatch.setattr(native, "EVENT_ROWS", 8)  # and for room in the rows buffer
    seen = []
    paused = blocksim.simulate(model, backend="numba", progress=seen.append)
    assert len(seen) > 50 and seen == sorted(seen)
    same_run(plain, paused, atol=0.0)


@needs_numba
@pytest.mark.parametrize("level, t_stop", [(0.55, 0.6), (-1.0, 0.0)])
def test_a_stop_block_at_a_hit_stops_the_compiled_loop(level, t_stop):
    blocks = [block("c", "Constant", value=1.0), block("i", "Integrator"),
              block("h", "ZeroOrderHold", sample_time=0.1),
              block("stop", "Stop"), block("cmp", "RelationalOperator", operator=">"),
              block("lim", "Constant", value=level), block("y", "Output")]
    wires = [("c.y", "i.u"), ("i.y", "h.u"), ("h.y", "cmp.u1"), ("lim.y", "cmp.u2"),
             ("cmp.y", "stop.u"), ("i.y", "y.u")]
    model = compile_diagram(diagram(blocks, wires, stop=5.0))
    py = blocksim.simulate(model, backend="python")
    nb = blocksim.simulate(model, backend="numba")
    assert py.status == "stopped" and py.time[-1] == t_stop  # at a hit, or at the start
    same_run(py, nb)


def triggered_counter():
    """A Pulse's rising edges (1, 2, 3 s) trigger a subsystem counting them with a UnitDelay
    into a plant, beside a clock rate at 0.25 s holding the plant's output."""
    inner = {"blocks": [{"id": "x", "type": "Inport"}, {"id": "out", "type": "Outport"},
                        {"id": "one", "type": "Constant", "params": {"value": 1.0}},
                        {"id": "s", "type": "Sum", "params": {"signs": "++"}},
                        {"id": "n", "type": "UnitDelay", "params": {"sample_time": -1}}],
             "wires": [{"src": a, "dst": b} for a, b in
                       [("one.y", "s.u1"), ("n.y", "s.u2"), ("s.y", "n.u"), ("s.y", "out.u")]]}
    blocks = [block("ctl", "Pulse", period=1.0, width=50.0), block("clk", "Clock"),
              {"id": "sub", "type": "TriggeredSubsystem", "params": {}, "diagram": inner},
              block("plant", "TransferFunction", num=[1.0], den=[0.3, 1.0]),
              block("h", "ZeroOrderHold", sample_time=0.25),
              block("y", "Output"), block("yh", "Output")]
    wires = [("ctl.y", "sub.trigger"), ("clk.y", "sub.x"), ("sub.out", "plant.u"),
             ("plant.y", "h.u"), ("plant.y", "y.u"), ("h.y", "yh.u")]
    return diagram(blocks, wires, stop=4.0, rtol=1e-10, atol=1e-12, output_interval=0.1)


@needs_numba
def test_triggered_rates_run_in_the_compiled_loop():
    model = blocksim.compile(triggered_counter())
    py = blocksim.simulate(model, backend="python")
    nb = blocksim.simulate(model, backend="numba")
    same_run(py, nb)
    assert model.derived["native"].timed
    assert [e.time for e in py.events_of("trigger")] == [1.0, 2.0, 3.0, 4.0]
