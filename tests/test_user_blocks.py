"""Blocks written in Python (blocksim.UserBlock): ModiaMath's bouncing ball and
SimpleStateEvents as one user block each, against closed forms computed here; both
backends agree, with a compilable user block inside numba's compiled loop and one numba
cannot compile through the fallback, named in the notice."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from both_backends import HAS_NUMBA, run_both
from builders import block, diagram
from modia_user_blocks import registered
from references import modia_ball_impacts
from scipy.optimize import brentq

import blocksim
from blocksim.engine import notices
from blocksim.user import Discrete

H0, E, G, V_SMALL = 1.0, 0.7, 9.81, 0.01


@pytest.fixture(scope="module", autouse=True)
def user_types():
    with registered():
        yield


def ball_diagram(**settings):
    blocks = [block("ball", "ModiaBall", h0=H0, e=E, g=G, v_small=V_SMALL),
              block("h", "Output"), block("v", "Output")]
    options = dict(stop=3.0, solver="dopri5", rtol=1e-12, atol=1e-12, output_interval=0.01)
    return diagram(blocks, [("ball.h", "h.u"), ("ball.v", "v.u")], **{**options, **settings})


def test_ball_eighteen_impacts_at_the_closed_form_instants_then_rest():
    expected = modia_ball_impacts(H0, E, G, V_SMALL)
    assert len(expected) == 18
    r = run_both(ball_diagram())
    resets = [e.time for e in r.events if e.block == "ball" and e.kind == "reset"]
    assert len(resets) == 18
    assert resets[0] == pytest.approx(0.451523640986, abs=1e-12)
    np.testing.assert_allclose(resets, expected, rtol=0, atol=1e-9)
    for k, t in enumerate(resets):  # left and right limits: -v_k, then e v_k (last: 0)
        before, after = r["v"][np.flatnonzero(r.time == t)]
        assert before == pytest.approx(-G * expected[0] * E ** k, rel=1e-8)
        assert after == (0.0 if k == 17 else pytest.approx(-E * before, rel=1e-12))
    rest = r.time > expected[-1]
    assert rest.any() and np.all(r["v"][rest] == 0.0)
    assert np.all(np.abs(r["h"][rest]) <= 1e-12)
    assert [e.kind for e in r.events if e.block == "ball"][-1] == "reset"


@pytest.mark.skipif(not HAS_NUMBA, reason="needs numba")
def test_ball_runs_inside_the_compiled_loop():
    model = blocksim.compile(ball_diagram())
    r = blocksim.simulate(model, backend="numba")
    native = model.derived["native"]
    assert native.events and native.timed
    assert r.stats["python_events"] == 0 and r.stats["events"] == 18


# ----- SimpleStateEvents: m s'' + d s' + k s = f, f = 0 while s > 0, else fMax -----
M, K, D, F_MAX, S0 = 1.0, 1.0, 0.1, 1.5, 2.0
SIGMA = D / (2.0 * M)
OMEGA = math.sqrt(K / M - SIGMA ** 2)


def free_motion(t0: float, s0: float, v0: float, f: float):
    """s(t), v(t) of the linear ODE with constant force f from (t0, s0, v0)."""
    a = s0 - f / K
    b = (v0 + SIGMA * a) / OMEGA

    def s(t):
        tau = t - t0
        return f / K + math.exp(-SIGMA * tau) * (a * math.cos(OMEGA * tau) + b * math.sin(OMEGA * tau))

    def v(t):
        tau = t - t0
        c, sn = math.cos(OMEGA * tau), math.sin(OMEGA * tau)
        return math.exp(-SIGMA * tau) * ((OMEGA * b - SIGMA * a) * c - (SIGMA * b + OMEGA * a) * sn)
    return s, v


def state_events_closed_form(stop: float) -> tuple[list[float], float, float]:
    """Event instants (roots of the piecewise closed form, bracketed on a fine grid and
    refined by brentq) and s, v at `stop`."""
    t0, s0, v0, events = 0.0, S0, 0.0, []
    while True:
        s, v = free_motion(t0, s0, v0, 0.0 if s0 > 0.0 or (s0 == 0.0 and v0 > 0.0) else F_MAX)
        grid = np.linspace(t0, stop, 20001)[1:]
        values = np.array([s(t) for t in grid])
        first = np.flatnonzero(np.sign(values) != np.sign(values[0]))
        if not len(first):
            return events, s(stop), v(stop)
        lo = t0 if first[0] == 0 else grid[first[0] - 1]
        t_event = brentq(s, max(lo, t0 + 1e-9), grid[first[0]], xtol=1e-15, rtol=1e-15)
        events.append(t_event)
        t0, s0, v0 = t_event, 0.0, v(t_event)


def test_simple_state_events_against_the_closed_form():
    events, s10, v10 = state_events_closed_form(10.0)
    assert len(events) == 4
    blocks = [block("sse", "SimpleStateEvents"), block("s", "Output"), block("v", "Output"),
              block("f", "Output")]
    d = diagram(blocks, [("sse.s", "s.u"), ("sse.v", "v.u"), ("sse.f", "f.u")], stop=10.0,
                solver="dopri5", rtol=1e-12, atol=1e-12, output_interval=0.05)
    r = run_both(d, atol=1e-9)
    switches = [e.time for e in r.events if e.block == "sse" and e.kind == "mode"]
    np.testing.assert_allclose(switches, events, rtol=0, atol=1e-8)
    assert r["s"][-1] == pytest.approx(s10, abs=1e-8)
    assert r["v"][-1] == pytest.approx(v10, abs=1e-8)
    # f is latched: fMax exactly on the time steps where the mode says s <= 0
    first = np.flatnonzero(r.time == switches[0])
    assert list(r["f"][first]) == [0.0, F_MAX]


def test_a_block_numba_cannot_compile_runs_its_events_in_python(caplog):
    blocks = [block("decay", "PythonOnlyDecay", period=0.5), block("y", "Output")]
    d = diagram(blocks, [("decay.y", "y.u")], stop=2.2, solver="dopri5", rtol=1e-12,
                atol=1e-14, output_interval=0.1)
    notices.forget()
    with caplog.at_level(logging.INFO, logger=notices.LOGGER):
        r = run_both(d, events_compiled=False, atol=1e-12)
    notices.forget()
    times = [e.time for e in r.events if e.kind == "reset"]
    assert times == [0.5, 1.0, 1.5, 2.0]
    np.testing.assert_allclose(r["y"][-1], math.exp(-2.2) * 0.5 ** 4, rtol=1e-10)
    if HAS_NUMBA:
        assert any("block 'decay' (PythonOnlyDecay)" in rec.getMessage()
                   for rec in caplog.records), [rec.getMessage() for rec in caplog.records]


def test_bad_parameter_and_widths_name_the_block():
    d = diagram([block("ball", "ModiaBall", g=float("inf")), block("h", "Output")],
                [("ball.h", "h.u")])
    with pytest.raises(blocksim.BlocksimError, match="ball"):
        blocksim.compile(d)


def test_describe_shows_states_and_crossings():
    from modia_user_blocks import ModiaBall
    text = ModiaBall.describe()
    assert "States: h, v" in text and "impact (rising)" in text and "[m/s^2]" in text


def test_declaration_errors_are_type_errors_naming_the_class():
    from blocksim.blocktypes.blockspec import Param
    from blocksim.user import Crossing, State, UserBlock
    with pytest.raises(TypeError, match="Wrong.*direction"):
        type("Wrong", (UserBlock,), {"name": "Wrong", "crossings": (Crossing("c", "up"),)})
    with pytest.raises(TypeError, match="Text.*kind text"):
        type("Text", (UserBlock,), {"name": "Text", "params": (Param("f", "text", "x"),)})
    with pytest.raises(TypeError, match="Late.*'x' starts at 'x0', which is no parameter"):
        type("Late", (UserBlock,), {"name": "Late", "states": (State("x", "x0"),)})
    # a base class without a name declares nothing: its subclasses do
    base = type("Base", (UserBlock,), {"crossings": (Crossing("c", "up"),)})
    assert not base.name


def test_clock_and_terminate_in_the_compiled_loop():
    d = diagram([block("c", "Countdown", period=0.3, ticks=4), block("n", "Output")],
                [("c.n", "n.u")], stop=5.0, output_interval=0.5)
    r = run_both(d)  # events (time events included) settled in the compiled loop
    ticks = [e.time for e in r.events if e.kind == "mode"]
    np.testing.assert_allclose(ticks, [0.3, 0.6, 0.9, 1.2], rtol=0, atol=1e-15)
    assert [e.kind for e in r.events][-1] == "stop" and r.time[-1] == ticks[-1]
    assert list(r["n"][r.time == 0.6]) == [1.0, 2.0]  # left and right limits
    assert r["n"][-1] == 4.0
    if HAS_NUMBA:
        model = blocksim.compile(d)
        assert blocksim.simulate(model, backend="numba").stats["python_events"] == 0
        assert model.derived["native"].timed


def test_user_blocks_are_listed_and_described_by_the_cli(capsys):
    from blocksim.cli.main import main
    assert main(["blocks"]) == 0
    assert "ModiaBall" in capsys.readouterr().out
    assert main(["describe", "SimpleStateEvents"]) == 0
    text = capsys.readouterr().out
    assert "fMax" in text and "Crossings: s (either)" in text


def _user_type(name, der, states=("x",)):
    from blocksim.blocktypes.blockspec import Port
    from blocksim.user import State, UserBlock
    return type(name, (UserBlock,), {
        "name": name, "outputs": (Port("y"),), "states": tuple(State(s, 1.0) for s in states),
        "feedthrough_outputs": False, "out": staticmethod(lambda t, x, d, u, p: (x[0],)),
        "der": staticmethod(der)})


def test_a_result_of_the_wrong_shape_is_a_compile_error_naming_block_and_function():
    from blocksim.blocktypes import registry
    bad = _user_type("ShortDer", lambda t, x, d, u, p: (1.0,), states=("a", "b"))
    registry.register(bad, source="tests")
    try:
        d = diagram([block("s", "ShortDer"), block("y", "Output")], [("s.y", "y.u")])
        with pytest.raises(blocksim.CompileError, match=r"block 's'.*der\(\) must return a "
                                                       r"tuple of 2 numbers, got \(1.0,\)"):
            blocksim.compile(d)
    finally:
        registry.unregister(bad.name)


def test_an_exception_in_user_code_fails_the_run_naming_the_block():
    from blocksim.blocktypes import registry

    def der(t, x, d, u, p):
        if t > 0.5:
            return {}["missing"]
        return (-x[0],)
    bad = _user_type("RaisesLater", der)
    registry.register(bad, source="tests")
    try:
        d = diagram([block("r", "RaisesLater"), block("y", "Output")], [("r.y", "y.u")],
                    stop=1.0)
        with pytest.raises(blocksim.SimulationError) as info:
            blocksim.simulate(d)
        text = str(info.value)
        assert "'r'" in text and "RaisesLater.der raised KeyError" in text
        assert "\n" not in text
    finally:
        registry.unregister(bad.name)


def test_a_changed_function_changes_the_numba_module_text():
    """numba's disk cache does not follow callees: the module text carries a digest of
    each user function's code, so an edited function is never run from stale machine code."""
    from blocksim.user import functions

    def one(t, x, d, u, p):
        return (-x[0],)

    def two(t, x, d, u, p):
        return (-2.0 * x[0],)

    def one_again(t, x, d, u, p):
        return (-x[0],)
    assert functions.fingerprint(one) != functions.fingerprint(two)
    assert functions.fingerprint(one) == functions.fingerprint(one_again)


def test_start_computes_initial_values_from_the_parameters():
    from blocksim.blocktypes import registry
    from blocksim.blocktypes.blockspec import Param

    def start(x, d, p):
        return ((math.sqrt(2.0 * p.energy),), (1.0,))  # speed from a kinetic energy
    kind = type("Launch", (_user_type("LaunchBase", lambda t, x, d, u, p: (0.0,)),), {
        "name": "Launch", "params": (Param("energy", default=2.0, unit="J"),),
        "discrete_states": (Discrete("launched", 0.0),), "start": staticmethod(start)})
    registry.register(kind, source="tests")
    try:
        d = diagram([block("l", "Launch", energy=8.0), block("y", "Output")], [("l.y", "y.u")],
                    stop=1.0)
        model = blocksim.compile(d)
        assert list(model.x0) == [4.0] and list(model.m0) == [1.0]
        bad = diagram([block("l", "Launch", energy=-1.0), block("y", "Output")],
                      [("l.y", "y.u")])
        with pytest.raises(blocksim.CompileError, match="block 'l'.*start\\(\\) raised ValueError"):
            blocksim.compile(bad)
    finally:
        registry.unregister(kind.name)
