"""The fast paths: our DOPRI5 stepper, derived functions, the numba backend, the benchmark.

The numba backend must compute what the Python path computes: same steps, same located
events (to roundoff), same rows. Tests that need numba are skipped without it.
"""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate
from scipy.special import gammainc

import blocksim
import references as ref
from helper_blocks import helper_lookup_registered
from builders import benchmark_script, block, diagram
from blocksim.compiler import dataflow
from blocksim.engine import derived
from blocksim.engine.dopri5 import Dopri5Stepper
from blocksim.engine.simulator import Simulator
from blocksim.errors import CompileError, SimulationError

ROOT = Path(__file__).resolve().parents[1]
DIAGRAMS = ROOT / "diagrams"
HAS_NUMBA = importlib.util.find_spec("numba") is not None
needs_numba = pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")


def lag_chain(n: int, **sim):
    blocks = [block("step", "Step", time=0.0)]
    blocks += [block(f"lag{k}", "TransferFunction", num=1.0, den=[1.0, 1.0]) for k in range(n)]
    blocks += [block("first", "Output"), block("y", "Output")]
    wires = [("step.y", "lag0.u"), ("lag0.y", "first.u"), (f"lag{n - 1}.y", "y.u")]
    wires += [(f"lag{k}.y", f"lag{k + 1}.u") for k in range(n - 1)]
    return diagram(blocks, wires, stop=10.0, rtol=1e-8, atol=1e-10, **sim)


# ---------------------------------------------------------------- the stepper
def run_stepper(fun, x0, t_end, rtol=1e-10, atol=1e-12):
    stepper = Dopri5Stepper(fun, 0.0, np.array(x0, float), t_end, rtol, atol, math.inf, None)
    while stepper.t < t_end:
        stepper.step()
    return stepper


def test_dopri5_matches_the_exact_solution_and_scipy():
    def osc(t, x):
        return np.array([x[1], -x[0]])

    stepper = run_stepper(osc, [1.0, 0.0], 10.0)
    assert np.allclose(stepper.x, [math.cos(10), -math.sin(10)], atol=1e-9)
    sol = integrate.solve_ivp(osc, (0, 10), [1.0, 0.0], method="RK45", rtol=1e-10, atol=1e-12)
    assert np.allclose(stepper.x, sol.y[:, -1], atol=1e-9)


def test_dopri5_dense_output_is_accurate_inside_a_step():
    stepper = Dopri5Stepper(lambda t, x: -x, 0.0, np.array([1.0]), 2.0, 1e-6, 1e-9, math.inf,
                            None)
    stepper.step()
    t0, t1 = stepper.t_old, stepper.t
    for s in (0.0, 0.25, 0.5, 0.9, 1.0):
        t = t0 + s * (t1 - t0)
        assert stepper.dense(t)[0] == pytest.approx(math.exp(-t), abs=1e-6)
    assert stepper.dense(t1)[0] == stepper.x[0]


def test_dopri5_rejects_steps_and_lands_on_the_bound():
    # A fast transient after a huge first step: the step must be rejected and shrunk.
    stepper = Dopri5Stepper(lambda t, x: -50.0 * x, 0.0, np.array([1.0]), 1.0, 1e-8, 1e-12,
                            math.inf, 0.5)
    stepper.step()
    assert stepper.t < 0.5
    while stepper.t < 1.0:
        stepper.step()
    assert stepper.t == 1.0 and stepper.x[0] == pytest.approx(math.exp(-50.0), rel=1e-5)


def test_dense_batch_gives_the_rows_of_dense_output():
    from blocksim.engine.dense_batch import DenseBatch

    def osc(t, x):
        return np.array([x[1], -x[0], -0.5 * x[2]])

    stepper = Dopri5Stepper(osc, 0.0, np.array([1.0, 0.0, 2.0]), 20.0, 1e-8, 1e-10, math.inf,
                            None)
    interval = 0.0625  # several grid points per step; 20.0 is one of them exactly
    batch, expected, k = DenseBatch([2, 0, 2], 3, 0.0, interval), [], 1
    while stepper.t < 20.0:
        stepper.step()
        last = int(stepper.t / interval)
        if last >= k:
            batch.add(stepper, k, last)
            expected += [stepper.dense(j * interval)[[2, 0, 2]] for j in range(k, last + 1)]
            k = last + 1
    times, rows = batch.take()
    assert len(batch) == 0
    np.testing.assert_array_equal(times, np.arange(1, k) * interval)
    np.testing.assert_allclose(rows, np.array(expected), rtol=1e-14, atol=1e-15)
    assert rows[-1].tolist() == stepper.x[[2, 0, 2]].tolist()  # exactly the state at the end


def test_progress_sees_the_rows_so_far():
    seen = []
    model = blocksim.compile(lag_chain(3))
    settings = model.settings.replaced(backend="python")  # rows batched per segment there
    sim = Simulator(model, settings, progress=lambda t: seen.append((t, sim.recorder.last_time)))
    sim.run()
    assert len(seen) > 5 and all(t >= last >= t - sim.interval for t, last in seen[1:])


# ---------------------------------------------------------------- derived functions
def test_observe_computes_only_what_is_logged():
    model = blocksim.compile(lag_chain(30))
    text = dataflow.observe_source(derived.functions(model), derived.logged_indices(model))
    assert text.count("\n") < 8  # two logged signals, a few lines; outputs has 30+
    fn = derived.observe(model)
    x = np.linspace(0.0, 1.0, model.n_states)
    full = model.functions["outputs"](1.0, x, model.m0 + 1, np.zeros(model.n_zc))
    assert fn(1.0, x, model.m0 + 1, np.zeros(model.n_zc)) == [full[i] for i in
                                                               derived.logged_indices(model)]


def test_jacobian_sparsity_follows_the_signal_graph():
    model = blocksim.compile(lag_chain(80, solver="radau"))
    entries = set(dataflow.jacobian_sparsity(derived.functions(model)))
    assert entries == {(k, k) for k in range(80)} | {(k, k - 1) for k in range(1, 80)}
    pattern = derived.jac_sparsity(model)
    assert pattern is not None and pattern.nnz == 159


def test_radau_with_sparse_jacobian_solves_the_chain():
    r = blocksim.simulate(blocksim.compile(lag_chain(80, solver="radau")))
    assert np.max(np.abs(r["y"] - gammainc(80, r.time))) < 1e-7
    assert np.max(np.abs(r["first"] - gammainc(1, r.time))) < 1e-7


# ---------------------------------------------------------------- backend selection
def test_unknown_backend_is_an_error():
    with pytest.raises(CompileError, match="'backend' = 'fortran': unknown backend"):
        blocksim.simulate(lag_chain(2), backend="fortran")


def test_backend_round_trips_through_the_file(tmp_path):
    from blocksim.diagram.format import load_diagram, save_diagram

    d = lag_chain(2)
    d.simulation.backend = "numba"
    save_diagram(d, tmp_path / "d.json")
    assert load_diagram(tmp_path / "d.json").simulation.backend == "numba"
    d.simulation.backend = None
    save_diagram(d, tmp_path / "d.json")
    assert "backend" not in (tmp_path / "d.json").read_text()


# ---------------------------------------------------------------- numba against python
def both(model_or_diagram, **options):
    py = blocksim.simulate(model_or_diagram, backend="python", **options)
    nb = blocksim.simulate(model_or_diagram, backend="numba", **options)
    return py, nb


@needs_numba
def test_numba_lag_chain_matches_python_and_the_exact_solution():
    py, nb = both(blocksim.compile(lag_chain(20)))
    assert np.array_equal(py.time, nb.time)
    assert np.max(np.abs(py["y"] - nb["y"])) < 1e-13
    assert np.max(np.abs(nb["first"] - gammainc(1, nb.time))) < 1e-8
    assert py.stats["steps"] == nb.stats["steps"]


@needs_numba
def test_numba_ball_bounce_times_match_the_closed_form():
    py, nb = both(blocksim.load(DIAGRAMS / "bouncing_ball.json"), params={"beta": 0},
                  rtol=1e-10, atol=1e-10)
    t_py = np.array([e.time for e in py.events_of("reset", "ball")])
    t_nb = np.array([e.time for e in nb.events_of("reset", "ball")])
    assert len(t_nb) == len(t_py) >= 100
    assert np.max(np.abs(t_nb[:100] - ref.ball_bounce_times_no_air(100))) < 1e-8
    assert np.max(np.abs(t_nb - t_py)) < 1e-11
    assert [e.kind for e in nb.events] == [e.kind for e in py.events]
    t, x = nb.time, nb["x"]
    assert np.all(x >= -1e-9) and np.all(x[t > ref.BALL_T_INF_NO_AIR + 1e-6] <= 1e-6)


@needs_numba
def test_numba_math003_events_match():
    py, nb = both(blocksim.load(DIAGRAMS / "math003.json"), rtol=1e-6)
    state = [e.time for e in nb.events_of("state")]
    assert np.allclose(state, ref.MATH003_STATE_EVENTS, rtol=0, atol=1e-7)
    assert np.allclose(state, [e.time for e in py.events_of("state")], rtol=0, atol=1e-12)
    assert np.array_equal(py.time, nb.time)
    for name in py.signals:
        assert np.allclose(py[name], nb[name], rtol=0, atol=1e-10), name


@needs_numba
def test_numba_c5_runs_the_same_way():
    # radau is not compiled: the numba backend leaves it to scipy, with the same result.
    py, nb = both(blocksim.load(DIAGRAMS / "c5_two_state.json"), rtol=1e-10, atol=1e-10)
    switches = [e.time for e in nb.events if e.kind in ("on", "off")]
    assert np.max(np.abs(np.subtract(switches, ref.C5_SWITCHES))) < 1e-8
    assert np.array_equal(py["y1"], nb["y1"])


@needs_numba
def test_numba_failure_names_the_block():
    blocks = [block("c", "Constant", value=-1.0), block("i", "Integrator", x0=1.0),
              block("f", "MathFunction", function="log"), block("x", "Output")]
    d = diagram(blocks, [("c.y", "i.u"), ("i.y", "f.u"), ("f.y", "x.u")], stop=3.0)
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(d, backend="numba")
    assert info.value.block == "f"
    assert info.value.results is not None and len(info.value.results.time) > 1


@needs_numba
def test_cli_backend_option(tmp_path):
    from builders import cli_run

    table, log = cli_run(tmp_path, "bouncing_ball.json", "--backend", "numba", "--set",
                         "beta=0", "--rtol", 1e-10, "--atol", 1e-10)
    bounces = [t for t, block_id, kind in log if kind == "reset"]
    assert np.max(np.abs(np.array(bounces[:100]) - ref.ball_bounce_times_no_air(100))) < 1e-8


def assert_same_run(py, nb, atol=1e-11):
    """The same rows, the same event log (to roundoff in time), the same counts."""
    assert [(e.block, e.kind) for e in nb.events] == [(e.block, e.kind) for e in py.events]
    assert max((abs(a.time - b.time) for a, b in zip(py.events, nb.events)), default=0) <= atol
    assert len(nb.time) == len(py.time) and np.max(np.abs(nb.time - py.time)) <= atol
    for name in py.signals:
        assert np.max(np.abs(nb[name] - py[name]), initial=0) <= 100 * atol, name
    for key in ("steps", "events", "restarts"):
        assert nb.stats[key] == py.stats[key], key
    assert nb.status == py.status


@needs_numba
def test_numba_ball_settles_events_in_the_compiled_loop_as_python_does():
    model = blocksim.compile(blocksim.load(DIAGRAMS / "bouncing_ball.json"), params={"beta": 0},
                             rtol=1e-10, atol=1e-10)
    py, nb = both(model)
    # 2 events per bounce; entries: the impact's crossing and reset, the apex's crossing,
    # and the lower limit where the ball comes to rest (281 impacts, 280 apexes)
    assert nb.stats["events"] == 561 and len(nb.events) == 2 * 281 + 280 + 1
    assert_same_run(py, nb)
    assert model.derived["native"].events  # the loop settled them, not Python


@needs_numba
def test_numba_pauses_for_progress_change_nothing(monkeypatch):
    from blocksim.engine.native import loop as native

    model = blocksim.compile(blocksim.load(DIAGRAMS / "diode_ideal.json"), rtol=1e-10)
    plain = blocksim.simulate(model, backend="numba")
    monkeypatch.setattr(native, "YIELD_EVERY", 7)  # pause after every few steps or events
    seen = []
    paused = blocksim.simulate(model, backend="numba", progress=seen.append)
    assert len(seen) > 100 and seen == sorted(seen)
    assert_same_run(plain, paused, atol=0.0)


@needs_numba
def test_numba_formula_functions_and_stop_block():
    # sin/cos in the pendulum's equations compile to numba (native.formulas); its Stop block
    # ends the run at an event settled in the compiled loop.
    py, nb = both(blocksim.load(DIAGRAMS / "rotating_pendulum.json"))
    assert nb.status == "stopped" and any(e.kind == "stop" for e in nb.events)
    assert_same_run(py, nb, atol=1e-12)


@needs_numba
def test_numba_events_of_python_helpers_stay_in_python():
    # A third-party block whose update calls Python helpers: its events are handled in Python,
    # the continuous segments still run compiled, and the results are the same.
    blocks = [block("pulse", "Pulse", period=0.3, width=0.4), block("i", "Integrator"),
              block("lut", "HelperLookup", breakpoints=[0.0, 0.1, 0.2], table=[0.0, 1.0, 0.0]),
              block("y", "Output")]
    with helper_lookup_registered():
        d = diagram(blocks, [("pulse.y", "i.u"), ("i.y", "lut.u"), ("lut.y", "y.u")],
                    stop=3.0, rtol=1e-10)
        model = blocksim.compile(d)
    py, nb = both(model)
    assert not model.derived["native"].events
    assert_same_run(py, nb, atol=1e-13)


@needs_numba
@pytest.mark.parametrize("kind", ["LookupTable1D", "floor", "ceil", "mod", "rem"])
def test_tables_and_integer_parts_settle_their_events_in_the_compiled_loop(kind):
    """LookupTable1D's segment search and MathFunction's floor/ceil/mod/rem integer parts
    are written out as generated code: their events never go to Python, same results."""
    if kind == "LookupTable1D":
        last = block("f", "LookupTable1D", breakpoints=[-1.0, -0.2, 0.1, 0.5, 1.0],
                     table=[1.0, 0.0, 2.0, -1.0, 0.5])
        wires = [("s.y", "f.u"), ("s.y", "g.u")]
    elif kind in ("floor", "ceil"):
        last = block("f", "MathFunction", function=kind)
        wires = [("s.y", "g.u"), ("g.y", "f.u")]
    else:
        last = block("f", "MathFunction", function=kind)
        wires = [("s.y", "g.u"), ("g.y", "f.u1"), ("c.y", "f.u2")]
    blocks = [block("s", "Sine", amplitude=1.0, frequency=0.7), block("g", "Gain", k=3.3),
              block("c", "Constant", value=-0.7), last, block("i", "Integrator"),
              block("y", "Output"), block("yi", "Output")]
    wires += [("f.y", "y.u"), ("f.y", "i.u"), ("i.y", "yi.u")]
    model = blocksim.compile(diagram(blocks, wires, stop=4.0, rtol=1e-10))
    py, nb = both(model)
    assert nb.stats["python_events"] == 0 and len(nb.events) > 4
    assert_same_run(py, nb, atol=1e-12)


@needs_numba
def test_numba_hands_a_zeno_point_to_python():
    blocks = [block("g", "Constant", value=-9.81), block("v", "ResetIntegrator", edge="falling"),
              block("k", "Gain", k=-0.5), block("x", "Integrator", x0=1.0),
              block("y", "Output")]
    wires = [("g.y", "v.u"), ("x.y", "v.reset"), ("v.state", "k.u"), ("k.y", "v.x0"),
             ("v.y", "x.u"), ("x.y", "y.u")]
    d = diagram(blocks, wires, stop=3.0, rtol=1e-10, atol=1e-12)
    with pytest.raises(SimulationError) as python_error:
        blocksim.simulate(d, backend="python")
    with pytest.raises(SimulationError) as numba_error:
        blocksim.simulate(d, backend="numba")
    assert "Zeno" in str(numba_error.value) and numba_error.value.block == "v"
    assert numba_error.value.block == python_error.value.block
    assert abs(numba_error.value.time - python_error.value.time) < 1e-12


# ---------------------------------------------------------------- the benchmark script
def test_performance_script_quick_mode(tmp_path):
    with benchmark_script("performance.py", "benchmark_performance") as module:
        out = tmp_path / "perf.md"
        assert module.main(["--quick", "--only", "chain", "ball", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Generated by `python benchmarks/performance.py --quick`" in text
    assert "## Targets" in text and "## Lag chain, 10 blocks" in text
    assert "| blocksim (python) |" in text


@needs_numba
def test_numba_fails_like_python_when_a_crossing_formula_fails():
    # sqrt(1 - x) with x = t: the guard's formula has no value after t = 1. Python raises
    # there; compiled code gets NaN, and must not carry on with a NaN latched sign (which a
    # crossing watched in one direction only would never leave).
    d = diagram([block("c", "Constant", value=1.0), block("x", "Integrator"),
                 block("root", "Expression", formula="sqrt(1 - x)", inputs="x"),
                 block("guard", "HitCrossing", level=-1.0, direction="falling"),
                 block("out", "Output")],
                [("c.y", "x.u"), ("x.y", "root.x"), ("root.y", "guard.u"), ("x.y", "out.u")],
                stop=3.0)
    errors = []
    for backend in ("python", "numba"):
        with pytest.raises(SimulationError) as info:
            blocksim.simulate(d, backend=backend)
        errors.append(info.value)
    (py, nb) = errors
    assert py.block == nb.block == "root"
    assert py.time < 1.2 and nb.time < 1.2  # the last step ends past t = 1
    assert str(py).split(":")[-1] == str(nb).split(":")[-1]  # the same formula error
    # Both stop at the step whose end has no value: the same rows are kept.
    assert len(py.results.time) == len(nb.results.time)
