"""The physical examples on the numba backend: the same events at the same instants and
the same values as the Python backend (tests/both_backends.py), events settled in the
compiled loop. Few cases: numba compiles each model once (the first ever run also
compiles the engine's loop, about half a minute)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import blocksim
import references as ref
from blocksim.api.builder import DiagramBuilder
from blocksim.errors import SimulationError
from both_backends import HAS_NUMBA, run_both
from builders import DIAGRAMS

pytestmark = pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")

PHYSICAL = DIAGRAMS / "physical"


def test_c21_ideal_diode_on_both_backends():
    r = run_both(blocksim.load(PHYSICAL / "c21_diode_ideal.json"))
    switches = [e.time for e in r.events if e.block == "D"]
    assert len(switches) == ref.DIODE_SWITCH_COUNT
    for number, t_ref in ref.DIODE_SWITCHES.items():
        assert abs(switches[number - 1] - t_ref) < 1e-11


def test_c21_piecewise_linear_diode_on_both_backends():
    model = blocksim.compile(blocksim.load(PHYSICAL / "c21_diode_pwl.json"), {"N": 3})
    r = run_both(model)
    k = np.flatnonzero(np.abs(r.time - 2.2e-6) < 1e-15)
    assert len(k) == 1 and abs(r["iD"][k[0]] - ref.PWL_ID_AT_2_2US[3]) < 1e-6 * ref.PWL_ID_AT_2_2US[3]


def test_ball_on_a_hardstop_on_both_backends():
    # 130 impacts before the accumulation point amplify the backends' different roundoff
    # (both_backends.py): 2e-12 in v near the end, so a looser atol
    r = run_both(blocksim.load(PHYSICAL / "c21_ball_hardstop.json"), atol=1e-10)
    impacts = [e.time for e in r.events if e.kind == "impact"]
    assert len(impacts) > 100
    assert [e.kind for e in r.events if e.block == "floor"][-1] == "rest"
    assert r["x"][-1] == 0.0 and r["v"][-1] == 0.0


def test_c21_shockley_diode_runs_compiled():
    # Newton's method inside the network's generated code compiles too: only its failure
    # report is Python's (numba sees the unknowns become NaN, see test below)
    model = blocksim.compile(blocksim.load(PHYSICAL / "c21_diode_shockley.json"))
    run_both(model)
    assert not any("Python" in w for w in blocksim.simulate(model, backend="numba").warnings)


def test_cartesian_pendulum_switching_its_states_runs_compiled():
    # a damped Newton iteration over two unknowns and a structure per choice of states
    model = blocksim.compile(blocksim.load(PHYSICAL / "c21_pendulum_cartesian.json"))
    py = blocksim.simulate(model)
    nb = blocksim.simulate(model, backend="numba")
    assert not any("Python" in w for w in nb.warnings)
    assert [(e.block, e.kind) for e in nb.events] == [(e.block, e.kind) for e in py.events]
    assert {("network", "state"), ("pendulum", "slack"), ("pendulum", "taut")} <= {
        (e.block, e.kind) for e in py.events}
    np.testing.assert_allclose([e.time for e in nb.events], [e.time for e in py.events],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(nb.time, py.time, rtol=0, atol=1e-12)
    for name in ("x", "y", "omega", "taut"):
        np.testing.assert_allclose(nb[name], py[name], rtol=1e-12, atol=1e-12, err_msg=name)
    # the logged phi is wrapped by mod(phi, 2*pi) - pi: where it is a multiple of 2*pi,
    # roundoff of 1e-16 puts it on either side of the wrap, -pi or pi, the same angle
    turned = np.angle(np.exp(1j * (nb["phi"] - py["phi"])))
    assert np.max(np.abs(turned)) < 1e-12


def _with_fold(stop: float) -> DiagramBuilder:
    """A diagram declaring Fold, a two-terminal component whose law v = i^2 has no
    solution once its voltage is negative: there the Newton iteration must fail, naming
    the component (its current starts on the positive branch)."""
    d = DiagramBuilder(stop=stop, rtol=1e-9, atol=1e-12, output_interval=1e-3)
    d.component({"name": "Fold", "connectors": [{"name": "p", "domain": "electrical"},
                                                 {"name": "n", "domain": "electrical"}],
                 "variables": [{"name": "v"}, {"name": "i", "start": 1.0}],
                 "equations": ["v = p.v - n.v", "0 = p.i + n.i", "i = p.i", "v = i*i"]})
    return d


def _fold() -> DiagramBuilder:
    """A source whose voltage falls below zero at t = 7/12 across Fold, in parallel with
    an RC branch."""
    d = _with_fold(1.0)
    src = d.add("SineVoltage", id="V", amplitude=1.0, f=1.0, offset=0.5)
    fold, r = d.add("Fold", id="fold"), d.add("Resistor", id="R", R=1.0)
    c, g, cs = d.add("Capacitor", id="C", C=0.1), d.add("Ground", id="g"), d.add(
        "CurrentSensor", id="cs")
    d.connect(src.p, cs.p)
    d.connect(cs.n, fold.p, r.p)
    d.connect(r.n, c.p)
    d.connect(c.n, fold.n, src.n, g.p)
    cs.i >> d.add("Output", id="i").u
    return d


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_newton_iteration_that_fails_names_the_component_on_both_backends(backend):
    # numba cannot raise: the failed unknowns become NaN, the loop hands the grid row over
    # to Python, which raises the same message (one output interval later at most)
    model = _fold().compile()
    with pytest.raises(SimulationError, match="the equations of fold did not converge") as err:
        blocksim.simulate(model, backend=backend)
    assert 7 / 12 <= err.value.time <= 7 / 12 + 1e-3 + 1e-12
    kept = err.value.results
    assert kept is not None and 0.58 < kept.time[-1] <= err.value.time
    # up to there: the law's positive branch (its start value) plus the RC branch's current
    rc = solve_ivp(lambda t, vc: (_source(t) - vc) / (1.0 * 0.1), (0.0, kept.time[-1]), [0.0],
                   rtol=1e-12, atol=1e-14, dense_output=True)
    fine = kept.time < 0.58
    t = kept.time[fine]
    expected = np.sqrt(_source(t)) + (_source(t) - rc.sol(t)[0]) / 1.0
    np.testing.assert_allclose(kept["i"][fine], expected, rtol=1e-7, atol=1e-9)


def _source(t):
    return 0.5 + np.sin(2 * np.pi * t)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_newton_iteration_failing_inside_a_derivative_names_the_component(backend):
    # the same component charging a capacitor: the iteration is part of the state's
    # derivative, where numba's NaN makes the compiled step fail and Python retries it
    d = _with_fold(3.0)
    src = d.add("SineVoltage", id="V", amplitude=1.0, f=1.0, offset=0.5)
    fold, c, g = d.add("Fold", id="fold"), d.add("Capacitor", id="C", C=1.0), d.add(
        "Ground", id="g")
    vs = d.add("VoltageSensor", id="vs")
    d.connect(src.p, fold.p)
    d.connect(fold.n, c.p, vs.p)
    d.connect(c.n, src.n, g.p, vs.n)
    vs.v >> d.add("Output", id="vC").u
    with pytest.raises(SimulationError, match="the equations of fold did not converge") as err:
        blocksim.simulate(d.compile(), backend=backend)
    # the run fails at its last state before the fold's voltage V - vC reaches zero,
    # vC' = sqrt(V - vC) / C integrated by scipy to that point
    stop = lambda t, vc: _source(t) - vc[0]  # noqa: E731 (solve_ivp reads its attributes)
    stop.terminal, stop.direction = True, -1
    ref = solve_ivp(lambda t, vc: [np.sqrt(max(_source(t) - vc[0], 0.0))], (0.0, 3.0), [0.0],
                    rtol=1e-12, atol=1e-14, events=stop)
    t_fold = ref.t_events[0][0]
    assert t_fold - 5e-4 < err.value.time <= t_fold + 1e-9
    assert err.value.results.time[-1] <= err.value.time
