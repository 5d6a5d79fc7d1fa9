"""State-event storms end early: the progress guard projects the run's events to the stop
time and fails once the projection reaches the event budget, on both backends.

rem(t, d) over [0, 1] makes one located crossing every d seconds, 1/d in all: with the
budget set to 1/d the projection lands exactly on it (the hostile corpus's rem(t, 1e-6)
over 1 s, scaled down), one event fewer per run stays below it.
"""
import dataclasses
import math
import importlib.util

import pytest
from builders import block, diagram

from blocksim.compiler import compile_diagram
from blocksim.engine import Simulator, guards
from blocksim.errors import SimulationError

HAS_NUMBA = importlib.util.find_spec("numba") is not None
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    not HAS_NUMBA, reason="numba is not installed"))]
BUDGET = 5000


def rem_model(divisor: float, function: str = "rem"):
    blocks = [block("src", "Clock"), block("f", "MathFunction", function=function),
              block("d", "Constant", value=divisor), block("y", "Output")]
    return diagram(blocks, [("src.y", "f.u1"), ("d.y", "f.u2"), ("f.y", "y.u")], stop=1.0)


def run(d, **settings):
    model = compile_diagram(d)
    return Simulator(model, dataclasses.replace(model.settings, **settings)).run()


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(guards, "MAX_EVENTS", BUDGET)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("function", ["rem", "mod"])
def test_a_storm_projected_to_reach_the_budget_fails_early(small_budget, backend, function):
    with pytest.raises(SimulationError) as info:
        run(rem_model(1.0 / BUDGET, function), backend=backend)
    err = info.value
    message = str(err)
    assert "\n" not in message and err.block == "f"
    assert "events every 0.0002 s" in message and "about 5e+03 events" in message
    assert f"budget of {BUDGET} events" in message and "BLOCKSIM_MAX_EVENTS" in message
    assert "events from 'f' (MathFunction)" in message
    # Early, with the results so far: a few windows of events, not the whole budget.
    results = err.results
    assert results.status == "failed" and results.message in message
    located = len(results.events_of("state"))
    assert guards.STRIKES * guards.WINDOW - 1 <= located <= (guards.STRIKES + 1) * guards.WINDOW
    assert results.time[-1] == pytest.approx(err.time) and err.time < 0.7


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_just_under_the_budget_is_not_stopped(small_budget, backend):
    # 4990 located crossings with a budget of 5000: the projection never reaches it.
    r = run(rem_model(1.0 / 4990), backend=backend)
    assert r.status == "finished" and 4980 <= r.stats["events"] <= 4990
    # no warning of the budget (the numba backend says it ran this stateless model in Python)
    assert r.warnings == (() if backend == "python" else (
        "backend numba: a diagram without continuous states runs in Python",))


def test_the_budget_is_raised_by_the_environment(small_budget, monkeypatch):
    monkeypatch.setitem(guards._OVERRIDES, "MAX_EVENTS", "5001")
    assert guards.budget("MAX_EVENTS") == 5001
    r = run(rem_model(1.0 / BUDGET))
    assert r.status == "finished"


def test_a_storm_that_starts_late_is_projected_from_its_own_rate(small_budget):
    # Quiet for 0.9 s, then rem(t, 2e-5): 5000 crossings in the last 0.1 s.
    blocks = [block("src", "Clock"), block("late", "Expression", formula="max(u - 0.9, 0)"),
              block("f", "MathFunction", function="rem"), block("d", "Constant", value=2e-5),
              block("y", "Output")]
    d = diagram(blocks, [("src.y", "late.u"), ("late.y", "f.u1"), ("d.y", "f.u2"),
                         ("f.y", "y.u")], stop=1.0)
    with pytest.raises(SimulationError) as info:
        run(d)
    assert "events every 2e-05 s" in str(info.value) and info.value.time < 0.98


def growth_model(formula: str, stop: float):
    """rem(f(t), 1): one located crossing each time f(t) passes an integer, f(t) - f(0)
    in all; f = exp(t) makes a storm whose rate grows with its count, f = k*t**2 a chirp."""
    blocks = [block("src", "Clock"), block("g", "Expression", formula=formula),
              block("f", "MathFunction", function="rem"), block("d", "Constant", value=1.0),
              block("y", "Output")]
    return diagram(blocks, [("src.y", "g.u"), ("g.y", "f.u1"), ("d.y", "f.u2"),
                            ("f.y", "y.u")], stop=stop)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_accelerating_storm_fails_after_a_few_windows(small_budget, backend):
    # exp(t) over 20 s: 5e8 crossings. Its rate only reaches the constant projection's
    # strikes after 6 windows; the pace's power law (exponential: e = -1) after 3 + 1.
    with pytest.raises(SimulationError) as info:
        run(growth_model("exp(u)", 20.0), backend=backend)
    err = info.value
    assert "events coming ever faster" in str(err) and err.block == "f"
    located = len(err.results.events_of("state"))
    assert located <= (guards.ACCEL_STRIKES + 1) * guards.WINDOW


@pytest.mark.parametrize("formula, stop", [
    ("exp(u)", math.log(4900.0)),  # an exponential storm that ends below the budget
    ("4900 * u * u", 1.0),  # a linear chirp: rate ~ t, 4900 crossings
    ("4900 * u * u * u", 1.0),  # a quadratic chirp
    ("4900 * u ** 6", 1.0),
])
def test_accelerating_runs_below_the_budget_finish(small_budget, formula, stop):
    r = run(growth_model(formula, stop))
    assert r.status == "finished" and 4890 <= r.stats["events"] <= 4900


def test_the_power_law_of_the_pace_is_exact_for_chirps_and_exponential_storms():
    # A chirp N = k t**2 (pace ~ N**-1/2) and a storm N = exp(t) (pace ~ 1/N): from two
    # windows' (count, pace), the time until `left` more events, against the closed form.
    k, t0, t1 = 100.0, 2.0, 5.0
    n0, n1 = k * t0 ** 2, k * t1 ** 2
    reach = guards.accelerating(n0, 1 / (2 * k * t0), n1, 1 / (2 * k * t1), 10_000.0)
    assert reach == pytest.approx(math.sqrt((n1 + 10_000) / k) - t1, rel=1e-12)
    reach = guards.accelerating(math.exp(t0), math.exp(-t0), math.exp(t1), math.exp(-t1), 1e6)
    assert reach == pytest.approx(math.log(math.exp(t1) + 1e6) - t1, rel=1e-12)


def test_a_ball_bouncing_to_rest_is_not_taken_for_an_accelerating_storm():
    # restitution 0.98 without drag: ~2,000 bounces ever faster (pace ~ 0.98**N) up to the
    # Zeno point near t = 141 s, where the limited integrator rests. The pace falls in
    # every window, but geometrically: a power law would have projected the budget.
    from blocksim.diagram.examples import examples_dir
    from blocksim.diagram.format import load_diagram
    d = load_diagram(examples_dir() / "bouncing_ball.json")
    model = compile_diagram(d, {"mu": 0.98, "beta": 0.0})
    r = Simulator(model, dataclasses.replace(model.settings, stop=200.0,
                                             output_interval=1.0)).run()
    assert r.status == "finished" and r.stats["events"] > 4 * guards.WINDOW
