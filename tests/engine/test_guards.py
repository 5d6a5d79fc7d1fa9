"""Runs that used to spin for minutes end within seconds, naming the block or setting.

Settings no run can honour, events closer than the time resolution, an event rate that
would take the run past its event budget: each ends the run early with a one-line
SimulationError, and the results computed so far come with it. Settings are given to the
Simulator directly, past the file and compile checks that refuse most of them earlier.
"""
import dataclasses
import importlib.util
import math
import time
from types import SimpleNamespace

import numpy as np
import pytest
from builders import block, diagram

from blocksim.compiler import compile_diagram
from blocksim.engine import Simulator, guards
from blocksim.engine.dopri5 import Dopri5Stepper
from blocksim.engine.steppers import FixedStepper, NoStateStepper, StepFailure
from blocksim.errors import CompileError, SimulationError

HAS_NUMBA = importlib.util.find_spec("numba") is not None
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    not HAS_NUMBA, reason="numba is not installed"))]


def run(d, **settings):
    """Compile d as it is, then run it with `settings` (unchecked by the file format)."""
    model = compile_diagram(d)
    return Simulator(model, dataclasses.replace(model.settings, **settings)).run()


def failure(d, limit=5.0, **settings) -> SimulationError:
    """The SimulationError of a run that must fail within `limit` seconds."""
    started = time.perf_counter()
    with pytest.raises(SimulationError) as info:
        run(d, **settings)
    assert time.perf_counter() - started < limit
    assert "\n" not in str(info.value)
    return info.value


def lag():
    blocks = [block("c", "Constant", value=1.0),
              block("tf", "TransferFunction", num=1.0, den=[1.0, 1.0]), block("y", "Output")]
    return diagram(blocks, [("c.y", "tf.u"), ("tf.y", "y.u")])


def pulse(period, state=False):
    blocks = [block("p", "Pulse", period=period), block("y", "Output")]
    if state:
        blocks.append(block("i", "Integrator"))
        return diagram(blocks, [("p.y", "i.u"), ("i.y", "y.u")])
    return diagram(blocks, [("p.y", "y.u")])


# ---------------------------------------------------------------- settings
@pytest.mark.parametrize("settings, named", [
    (dict(rtol=math.nan), "'rtol' = nan"),
    (dict(atol=0.0), "'atol' = 0.0"),
    (dict(atol=math.nan), "'atol' = nan"),
    (dict(max_step=math.nan), "'max_step' = nan"),
    (dict(max_step=1e-8, stop=10.0), "'max_step' = 1e-08: a run of 10 s would need 1e+09"),
    (dict(output_interval=1e-20), "'output_interval' = 1e-20: below 100 units of roundoff"),
    (dict(solver="euler", step=1e-20), "'step' = 1e-20: below 100 units of roundoff"),
    (dict(solver="rk4", step=1e-9, stop=10.0), "'step' = 1e-09: a run of 10 s would need 1e+10"),
    (dict(stop=math.inf), "'stop' = inf"),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_settings_given_to_the_simulator_directly_are_checked_too(settings, named, backend):
    # The compiler's checks (`check_run`): the simulator never starts on such settings.
    started = time.perf_counter()
    with pytest.raises(CompileError) as info:
        run(lag(), backend=backend, **settings)
    assert time.perf_counter() - started < 2.0
    assert named in str(info.value) and "\n" not in str(info.value)


def test_the_steppers_never_spin_on_nan_or_a_zero_scale():
    # What the settings check refuses, the steppers survive on their own.
    zero = np.zeros(1)
    cases = ((1e-6, 0.0, zero), (math.nan, 1e-8, zero), (1e-6, 1e-8, np.array([-math.inf])))
    for rtol, atol, x0 in cases:
        with np.errstate(all="ignore"), pytest.raises(StepFailure):
            stepper = Dopri5Stepper(lambda t, x: -x, 0.0, x0, 10.0, rtol, atol, math.inf, None)
            for _ in range(10_000):
                stepper.step()
    fixed = FixedStepper("euler", lambda t, x: -x, 1.0, np.ones(1), 2.0, 1e-20, 0.0)
    with pytest.raises(StepFailure, match="below the time resolution"):
        fixed.step()
    with pytest.raises(StepFailure, match="below the time resolution"):
        NoStateStepper(1.0, 2.0, 1e-20).step()


@pytest.mark.parametrize("feedback", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_infinite_initial_state_fails_at_once_naming_the_integrator(feedback, backend):
    blocks = [block("i", "Integrator", x0=1.0), block("y", "Output")]
    if feedback:
        blocks.append(block("k", "Gain", k=-1.0))
        wires = [("i.y", "k.u"), ("k.y", "i.u")]
    else:
        blocks.append(block("c", "Constant", value=1.0))
        wires = [("c.y", "i.u")]
    model = compile_diagram(diagram(blocks, wires + [("i.y", "y.u")]))
    model = dataclasses.replace(model, x0=np.array([-math.inf]))  # past the compile check
    with pytest.raises(SimulationError) as info:
        Simulator(model, dataclasses.replace(model.settings, backend=backend)).run()
    assert info.value.block == "i" and "-inf" in str(info.value)
    assert info.value.results.status == "failed"


# ---------------------------------------------------------------- progress and events
@pytest.fixture
def uncounted(monkeypatch):
    """The compiler counts the time events of library blocks and refuses runs with too many
    (`check_run`); these tests reach the engine's guard behind it, as a block whose events
    the compiler cannot count would."""
    from blocksim.compiler import budget

    monkeypatch.setattr(budget, "check_results", lambda *args: None)


@pytest.mark.parametrize("state", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_time_events_closer_than_the_resolution_are_no_progress(state, backend, uncounted):
    # Edges every 5e-16 s: from t = 4 on, every time event is one ulp after the last.
    err = failure(pulse(1e-15, state), start=4.0, stop=5.0, backend=backend)
    assert "no progress" in str(err) and err.block == "p" and "(Pulse)" in str(err)
    assert 4.0 < err.time < 4.0 + 1e-9
    assert len(err.results.events_of("rise")) >= guards.WINDOW // 2


def test_a_time_event_that_does_not_advance_fails_at_once_naming_the_block(uncounted):
    model = compile_diagram(pulse(1.0))
    stuck = SimpleNamespace(block=0, next_after=lambda t: t, impl=None, p=None)
    model = dataclasses.replace(model, time_events=(stuck,))
    with pytest.raises(SimulationError) as info:
        Simulator(model).run()
    assert info.value.block == "p" and "does not come after" in str(info.value)
    assert info.value.time == 0.0 and info.value.results.time[0] == 0.0


@pytest.mark.parametrize("state", [False, True])
def test_a_pulse_far_too_fast_for_its_run_fails_early_naming_it(state, uncounted):
    # 1e-9 s period on a 0.1 s run: 2e8 time events. The rate is known after a few
    # thousand; the message says what to change.
    err = failure(pulse(1e-9, state), limit=8.0, stop=0.1)
    assert err.block == "p" and "events every 5e-10 s" in str(err)
    assert "2e+08 events" in str(err) and "BLOCKSIM_MAX_EVENTS" in str(err)
    results = err.results
    assert results.status == "failed" and results.time[-1] == err.time < 1e-5
    edges = len(results.events_of("rise")) + len(results.events_of("fall"))
    assert edges <= guards.STRIKES * guards.WINDOW + 1  # the start's rise included


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_relay_chattering_below_the_resolution_fails_early(backend):
    # x' = +-1 switched by a relay with a hysteresis of 1e-12: an event every 1e-12 s.
    blocks = [block("r", "Relay", on_point=1e-12, off_point=0.0, on_value=-1.0, off_value=1.0),
              block("i", "Integrator", x0=0.0), block("y", "Output")]
    d = diagram(blocks, [("i.y", "r.u"), ("r.y", "i.u"), ("i.y", "y.u")])
    err = failure(d, limit=8.0, backend=backend)
    assert err.block == "r" and "(Relay)" in str(err) and "events every 1e-12 s" in str(err)
    assert np.all(np.abs(err.results["y"]) <= 1e-12 + 1e-20)


def test_the_event_budget_ends_a_run_that_passes_it(monkeypatch):
    monkeypatch.setattr(guards, "MAX_EVENTS", 300)
    monkeypatch.setattr(guards, "WINDOW", 100)
    err = failure(pulse(0.01), stop=10.0)
    assert "more than 300 events" in str(err) and err.block == "p"
    assert 300 < len(err.results.events) <= 401  # checked every WINDOW; the start's rise


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_busy_but_sensible_model_is_not_stopped(backend):
    r = run(pulse(0.002, state=True), stop=2.0, backend=backend)
    assert r.status == "finished" and r.stats["events"] == 2000 and r.warnings == ()
    assert r["y"][-1] == pytest.approx(1.0, abs=1e-9)


# ---------------------------------------------------------------- state-less zero crossings
@pytest.mark.parametrize("solver", ["dopri5", "dop853", "radau", "bdf", "euler", "rk4"])
def test_zero_crossings_without_continuous_state_on_every_solver(solver):
    blocks = [block("r", "Ramp", slope=1.0), block("c", "CompareToConstant", constant=0.5,
                                                           operator=">="),
              block("y", "Output")]
    d = diagram(blocks, [("r.y", "c.u"), ("c.y", "y.u")])
    step = dict(step=0.01) if solver in ("euler", "rk4") else {}
    r = run(d, solver=solver, stop=1.0, output_interval=0.1, **step)
    assert r.status == "finished"
    (hit,) = r.events_of("state")
    if solver in ("euler", "rk4"):  # noticed at the end of a step
        assert hit.time == pytest.approx(0.5, abs=0.01 + 1e-12)
    else:
        assert abs(hit.time - 0.5) <= 4 * math.ulp(0.5)
    assert r["y"][0] == 0.0 and r["y"][-1] == 1.0
    assert np.all(r["y"][r.time < hit.time] == 0.0) and np.all(r["y"][r.time > hit.time] == 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_crossings_without_continuous_state_on_radau_both_backends(backend):
    blocks = [block("r", "Ramp", slope=1.0), block("c", "CompareToConstant", constant=0.5),
              block("y", "Output")]
    d = diagram(blocks, [("r.y", "c.u"), ("c.y", "y.u")])
    r = run(d, solver="radau", stop=1.0, backend=backend)
    assert [e.time for e in r.events_of("state")] == [pytest.approx(0.5, abs=1e-15)]
