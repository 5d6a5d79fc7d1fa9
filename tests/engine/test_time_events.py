"""Time events of blocks: the generated `next_time(t, m)` (the blocks' `next_time` code, which
both backends use) agrees with their Python `next_time_event`, and the numba backend settles
the time events of Step, Ramp, Pulse and FromTable in its compiled loop, as Python does."""
import importlib.util
import math

import numpy as np
import pytest

import blocksim
from blocksim.compiler import compile_diagram
from builders import block, diagram

needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="numba is not installed")

SOURCES = [
    ("Step", dict(time=0.7)),
    ("Step", dict(time=-1.0)),
    ("Ramp", dict(start=0.3, slope=2.0)),
    ("Pulse", dict(period=0.3, width=40.0, delay=0.1)),
    ("Pulse", dict(period=1 / 3, width=50.0, delay=-0.25)),
    ("Pulse", dict(period=1e-3, width=12.5)),
    ("FromTable", dict(times=[0.0, 0.5, 0.5, 1.0, 2.5], values=[0.0, 1.0, 2.0, 0.0, 3.0])),
    ("FromTable", dict(times=[0.2, 0.4], values=[[1.0, 2.0], [3.0, 4.0]])),
]


def source_model(kind, params):
    blocks = [block("s", kind, **params), block("y", "Output")]
    return compile_diagram(diagram(blocks, [("s.y", "y.u")], stop=3.0))


def times_to_try(model):
    """Random times, and every time event of the run exactly, one ulp before and after."""
    src = model.time_events[0]
    found, t = [], -2.0
    while len(found) < 50:
        t = src.next_after(t)
        if not math.isfinite(t) or t > 3.0:
            break
        found.append(t)
    around = [u for t in found for u in (math.nextafter(t, -math.inf), t,
                                         math.nextafter(t, math.inf))]
    rng = np.random.default_rng(7)
    return sorted(around + rng.uniform(-2.0, 3.5, 200).tolist())


def settled_at(model, t):
    """The discrete states after the start's event iteration at t (as a run from t has)."""
    m = model.m0.copy()
    update = model.functions["update"]
    x, z = model.x0.copy(), np.zeros(model.n_zc)
    for _ in range(10):
        if not update(t, x, m, z, z, True, []):
            return m
    raise AssertionError("the update did not settle")


@pytest.mark.parametrize("kind, params", SOURCES)
def test_generated_next_time_agrees_with_next_time_event(kind, params):
    model = source_model(kind, params)
    src = model.time_events[0]
    next_time = model.functions["next_time"]
    for t in times_to_try(model):
        m = settled_at(model, t)
        assert next_time(t, m) == src.next_after(t), t
    # ... and so after each time event of a run, from the state settled at the one before.
    t, m = -2.0, settled_at(model, -2.0)
    update, x, z = model.functions["update"], model.x0.copy(), np.zeros(0)
    for _ in range(40):
        t_next = next_time(t, m)
        if not t_next <= 3.0:
            break
        t = t_next
        while update(t, x, m, z, z, False, []):
            pass
        assert next_time(t, m) == src.next_after(t) > t


def sources_in_a_loop():
    """Every time-event source into a continuous plant, a Stop-free run of 3 s."""
    blocks = [block("step", "Step", time=0.7), block("ramp", "Ramp", start=0.3, slope=-0.5),
              block("pulse", "Pulse", period=0.3, width=40.0, delay=0.1),
              block("table", "FromTable", times=[0.0, 0.5, 0.5, 1.0, 2.5],
                    values=[0.0, 1.0, 2.0, 0.0, 3.0]),
              block("sum", "Sum", signs="++++-"),
              block("plant", "TransferFunction", num=[1.0], den=[0.2, 1.0]),
              block("y", "Output"), block("u", "Output")]
    wires = [("step.y", "sum.u1"), ("ramp.y", "sum.u2"), ("pulse.y", "sum.u3"),
             ("table.y", "sum.u4"), ("plant.y", "sum.u5"), ("sum.y", "plant.u"),
             ("plant.y", "y.u"), ("sum.y", "u.u")]
    return diagram(blocks, wires, stop=3.0, rtol=1e-10, atol=1e-12, output_interval=0.05)


@needs_numba
@pytest.mark.parametrize("start", [0.0, 0.5, 0.55])
def test_time_events_settle_in_the_compiled_loop_as_in_python(start):
    model = blocksim.compile(sources_in_a_loop())
    py = blocksim.simulate(model, backend="python", start_time=start)
    nb = blocksim.simulate(model, backend="numba", start_time=start)
    assert model.derived["native"].timed and nb.stats["python_events"] == 0
    assert [(e.block, e.kind) for e in nb.events] == [(e.block, e.kind) for e in py.events]
    assert [e.time for e in nb.events] == [e.time for e in py.events]
    assert np.array_equal(nb.time, py.time)
    for name in py.signals:
        assert np.max(np.abs(nb[name] - py[name])) <= 1e-12, name
    for key in ("steps", "events", "restarts"):
        assert nb.stats[key] == py.stats[key], key
    kinds = {e.kind for e in py.events}
    assert {"rise", "fall", "breakpoint"} <= kinds and py.stats["events"] > 15
