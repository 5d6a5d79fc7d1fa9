"""Segments between time events: a step that would end within roundoff of its bound ends on
it, so no segment takes (and passes on as the next one's first step) a degenerate step.

The regression: two clocks at 2 Hz and 3 Hz, each resetting an integrator (or sampling a
loop). From t = 4/3 the last step size, 0.16666666666666652, ends one ulp short of 1.5;
the 2.2e-16 s step left was handed to the next segment as its first step, and dopri5
stopped with "step size too small".
"""
import importlib.util
import math

import numpy as np
import pytest

import blocksim
from blocksim.engine.dopri5 import Dopri5Stepper
from builders import block, diagram

BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="numba is not installed"))]


def test_a_step_within_roundoff_of_the_bound_ends_on_it():
    t0, bound, last = 4 / 3, 1.5, 0.16666666666666652
    assert t0 + last == math.nextafter(bound, 0.0)  # one ulp short
    stepper = Dopri5Stepper(lambda t, x: np.zeros(1), t0, np.zeros(1), bound, 1e-6, 1e-9,
                            math.inf, last)
    stepper.step()
    assert stepper.t == bound and stepper.last_step == bound - t0


def clocks(stop=3.0):
    """Two ResetIntegrators with zero input, reset by FromTable clocks at 2 Hz and 3 Hz
    (a jump from 0 to 1 at every k/f)."""
    blocks, wires = [], []
    for name, f in (("a", 2), ("b", 3)):
        times, values = [0.0], [1.0]
        for k in range(1, int(stop * f) + 2):
            times += [k / f, k / f]
            values += [0.0, 1.0]
        blocks += [block(f"clk_{name}", "FromTable", times=times, values=values),
                   block(f"zero_{name}", "Constant", value=0.0),
                   block(f"i_{name}", "ResetIntegrator", edge="rising"),
                   block(f"y_{name}", "Output")]
        wires += [(f"zero_{name}.y", f"i_{name}.u"), (f"clk_{name}.y", f"i_{name}.reset"),
                  (f"zero_{name}.y", f"i_{name}.x0"), (f"i_{name}.y", f"y_{name}.u")]
    return diagram(blocks, wires, stop=stop)


def holds(stop=3.0):
    """Two ZeroOrderHolds at 0.5 s and 1/3 s in a loop around 1/(s + 1)."""
    blocks = [block("r", "Constant", value=1.0), block("e", "Sum", signs="+-"),
              block("ha", "ZeroOrderHold", sample_time=0.5),
              block("hb", "ZeroOrderHold", sample_time=1 / 3),
              block("u", "Sum", signs="++"),
              block("plant", "TransferFunction", num=[1.0], den=[1.0, 1.0]),
              block("y", "Output")]
    wires = [("r.y", "e.u1"), ("plant.y", "e.u2"), ("e.y", "ha.u"), ("e.y", "hb.u"),
             ("ha.y", "u.u1"), ("hb.y", "u.u2"), ("u.y", "plant.u"), ("plant.y", "y.u")]
    return diagram(blocks, wires, stop=stop)


@pytest.fixture
def steps(monkeypatch):
    """The size of every step the Python path takes."""
    taken = []
    step = Dopri5Stepper.step

    def recorded(self):
        step(self)
        taken.append(self.last_step)
    monkeypatch.setattr(Dopri5Stepper, "step", recorded)
    return taken


@pytest.mark.parametrize("make", [clocks, holds])
def test_two_clocks_run_without_a_degenerate_step(make, steps):
    py = blocksim.simulate(make(), backend="python")
    assert py.status == "finished" and min(steps) > 1e-9


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_clocks_reset_at_every_tick(backend):
    r = blocksim.simulate(clocks(stop=30.0), backend=backend)
    assert r.status == "finished"
    resets = {name: [e.time for e in r.events if e.block == f"i_{name}" and e.kind == "reset"]
              for name in ("a", "b")}
    assert resets["a"] == [k / 2 for k in range(1, 61)]
    assert resets["b"] == [k / 3 for k in range(1, 91)]
    assert np.all(r["y_a"] == 0.0) and np.all(r["y_b"] == 0.0)


@pytest.mark.parametrize("make", [clocks, holds])
def test_two_clocks_run_the_same_on_both_backends(make):
    if importlib.util.find_spec("numba") is None:
        pytest.skip("numba is not installed")
    model = blocksim.compile(make(stop=30.0))
    py = blocksim.simulate(model, backend="python")
    nb = blocksim.simulate(model, backend="numba")
    assert nb.status == py.status == "finished" and nb.stats["python_events"] == 0
    for key in ("steps", "events", "restarts", "hits"):
        assert nb.stats[key] == py.stats[key], key
    assert np.array_equal(nb.time, py.time)
    for name in py.signals:
        assert np.max(np.abs(nb[name] - py[name])) <= 1e-12, name

