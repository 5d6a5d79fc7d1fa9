"""TransportDelay and VariableTransportDelay against closed forms and independent
method-of-steps references, on both backends (`run_both`: the numba run settles every
event in the compiled loop and agrees with the Python run to rounding).

The acceptance diagrams: `diagrams/dde_delay.json` (x' = -x(t - 1) against its exact
piecewise-polynomial solution, the derivative's kinks at t = 1, 2, 3 as events) and
`diagrams/pathsim_antiwindup_pid.json` (PathSim's anti-windup PID with Delay(2) against
scipy's DOP853 by the method of steps).
"""
import math

import numpy as np
import pytest
from both_backends import HAS_CC, HAS_NUMBA, SIN, run_both
from builders import DIAGRAMS, block, diagram
from delay_references import AntiWindupReference, dde_exact
from scipy.optimize import brentq

import blocksim
from blocksim.errors import CompileError, SimulationError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def left_rows(times: np.ndarray) -> np.ndarray:
    """Which rows are an event's left limit (the first of two rows at one instant)."""
    left = np.zeros(len(times), dtype=bool)
    left[:-1] = times[:-1] == times[1:]
    return left


def breakpoints(r, block_id="d"):
    return [e.time for e in r.events_of(block=block_id) if e.kind == "breakpoint"]


# ----- the acceptance diagrams -----

def test_dde_matches_the_method_of_steps_and_its_kinks_are_events():
    r = run_both(blocksim.load(DIAGRAMS / "dde_delay.json"))
    assert r.status == "finished" and r.time[-1] == 10.0
    np.testing.assert_allclose(r["x"], dde_exact(r.time), rtol=0, atol=1e-9)
    # The kink at t = 0 (x' jumps from 0 to -1) re-appears each delay later, one
    # derivative smoother, until the solver's order makes it harmless.
    assert breakpoints(r, "delay") == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert {1.0, 2.0, 3.0} <= {e.time for e in r.events}


@pytest.mark.parametrize("solver, options, tolerance", [
    ("dop853", {}, 1e-9),
    ("radau", {"rtol": 1e-9, "atol": 1e-11}, 1e-7),
    ("rk4", {"step": 0.01}, 1e-9),
])
def test_dde_on_the_other_solvers(solver, options, tolerance):
    r = blocksim.simulate(blocksim.load(DIAGRAMS / "dde_delay.json"), solver=solver, **options)
    np.testing.assert_allclose(r["x"], dde_exact(r.time), rtol=0, atol=tolerance)
    assert breakpoints(r, "delay") == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_pathsim_antiwindup_pid_matches_the_method_of_steps():
    r = run_both(blocksim.load(DIAGRAMS / "pathsim_antiwindup_pid.json"), atol=1e-9)
    ref = AntiWindupReference()
    x, pid = ref.signals(r.time, left_rows(r.time))
    np.testing.assert_allclose(r["x"], x, rtol=0, atol=1e-8)
    np.testing.assert_allclose(r["pid"], pid, rtol=0, atol=1e-8)
    located = [e.time for e in r.events if e.kind == "state"]
    np.testing.assert_allclose(located, ref.switches, rtol=0, atol=1e-8)
    # Each switch and setpoint step re-appears after the delay.
    found = breakpoints(r, "delay")
    for t in ref.switches + [10.0, 100.0]:
        assert any(abs(b - (t + 2.0)) < 1e-9 for b in found), t


# ----- TransportDelay -----

def delayed(blocks, wires, **settings):
    """`d` a TransportDelay fed by the blocks, logged as y; an integrator of its input
    gives the numba backend a state to run."""
    base = [block("watch", "Integrator"), block("y", "Output")]
    return diagram(base + blocks, [("d.y", "y.u"), ("d.y", "watch.u")] + wires,
                   **{**TIGHT, "output_interval": 0.01, **settings})


def test_a_delayed_sine_is_the_sine_shifted():
    tau = 0.75
    d = delayed([block("s", "Sine", frequency=SIN, amplitude=[1.0, 2.0]),
                 block("d", "TransportDelay", delay=tau, initial_output=[0.5, -1.0])],
                [("s.y", "d.u")], stop=6.0)
    r = run_both(d)
    t = r.time
    after = t >= tau
    expected = np.where(after[:, None], np.sin(t - tau)[:, None] * [1.0, 2.0], [0.5, -1.0])
    expected[left_rows(t) & (t == tau)] = [0.5, -1.0]  # the left limit at the breakpoint
    np.testing.assert_allclose(np.asarray(r["y"]).reshape(len(t), 2), expected, rtol=0,
                               atol=1e-9)
    assert breakpoints(r) == [tau]  # the start (initial output -> input), once


def test_a_step_reappears_exactly_after_the_delay():
    tau, t_step = 0.6, 1.3
    d = delayed([block("u", "Step", time=t_step, before=-1.0, after=2.0),
                 block("d", "TransportDelay", delay=tau, initial_output=-1.0)],
                [("u.y", "d.u")], stop=4.0)
    r = run_both(d)
    assert breakpoints(r) == [tau, t_step + tau]
    t, y = r.time, r["y"]
    rows = np.flatnonzero(t == t_step + tau)
    assert len(rows) == 2 and y[rows[0]] == -1.0 and y[rows[1]] == 2.0
    np.testing.assert_array_equal(y, np.where(t > t_step + tau, 2.0, -1.0) + np.where(
        (t == t_step + tau) & ~left_rows(t), 3.0, 0.0))


@pytest.mark.parametrize("source, lifted", [
    (block("u", "FromTable", times=[0.0, 1.2, 1.2, 9.0], values=[0.0, 0.0, 1.0, 1.0]), False),
    (block("u", "RepeatingSequence", times=[0.0, 1.2, 1.2, 9.0], values=[0.0, 0.0, 1.0, 1.0]),
     False),
    (block("u", "SignalGenerator", waveform="square", amplitude=-0.5, frequency=1 / 2.4), True),
    (block("u", "Step", time=1.2), False),
], ids=lambda value: value["type"] if isinstance(value, dict) else "")
def test_every_source_jump_reappears_exactly_after_the_delay(source, lifted):
    """A jump from 0 to 1 at t = 1.2 (a table's, a repeating sequence's, a square wave's,
    lifted by 0.5: -0.5 on [0, 1.2), 0.5 on [1.2, 2.4); a Step's), delayed 0.5 s and
    integrated: max(0, t - 1.7) to rounding, the jump a breakpoint at 1.7 (4e-7 off with a
    table before: its jump was not scheduled). The blocks other than a Step log their
    jumps as "breakpoint", as a delay logs its breakpoints: theirs are fresh
    discontinuities all the same."""
    blocks = [source, block("d", "TransportDelay", delay=0.5), block("i", "Integrator"),
              block("y", "Output")]
    wires = [("u.y", "d.u"), ("d.y", "i.u"), ("i.y", "y.u")]
    if lifted:
        blocks.append(block("lift", "Bias", bias=0.5))
        wires = [("u.y", "lift.u"), ("lift.y", "d.u")] + wires[1:]
    r = run_both(diagram(blocks, wires, stop=2.8, output_interval=0.01))
    np.testing.assert_allclose(r["y"], np.maximum(0.0, r.time - 1.7), rtol=0, atol=1e-14)
    assert 1.7 in breakpoints(r)


def test_a_step_at_a_breakpoint_is_scheduled_again():
    """A setpoint step that coincides with a breakpoint of the start is a fresh
    discontinuity: its own breakpoint follows one delay later."""
    d = delayed([block("u", "Step", time=2.0, before=0.0, after=1.0),
                 block("d", "TransportDelay", delay=1.0, initial_output=0.0)],
                [("u.y", "d.u")], stop=6.0)
    r = run_both(d)
    assert 3.0 in breakpoints(r)
    assert r["y"][r.time == 3.5][0] == 1.0


def test_delays_in_series_schedule_what_reaches_them_and_nothing_else():
    """d1 (0.5 s) into d2 (0.25 s): d1's start, where its output leaves the initial
    output, re-appears 0.25 s later at d2's output; the sine into d1 and d3 is smooth, so
    d2's breakpoints reach neither (no event at 0.75 for them)."""
    d = delayed([block("s", "Sine", frequency=SIN, bias=1.0),
                 block("d1", "TransportDelay", delay=0.5, initial_output=-1.0),
                 block("d", "TransportDelay", delay=0.25, initial_output=-2.0),
                 block("d3", "TransportDelay", delay=0.5), block("z", "Output")],
                [("s.y", "d1.u"), ("d1.y", "d.u"), ("s.y", "d3.u"), ("d3.y", "z.u")],
                stop=3.0)
    r = run_both(d)
    assert [(e.time, e.block) for e in r.events] == [(0.25, "d"), (0.5, "d1"), (0.5, "d3"),
                                                     (0.75, "d")]
    t = r.time
    begun = (t > 0.75) | ((t == 0.75) & ~left_rows(t))
    expected = np.where(begun, 1.0 + np.sin(t - 0.75), np.where(t >= 0.25, -1.0, -2.0))
    expected[(t == 0.25) & left_rows(t)] = -2.0
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-9)


def test_the_history_buffer_overflow_names_the_block():
    d = delayed([block("s", "Sine", frequency=SIN),
                 block("d", "TransportDelay", delay=5.0, buffer_size=8)],
                [("s.y", "d.u")], stop=10.0)
    backends = ["python"] + ["numba"] * HAS_NUMBA + ["c"] * HAS_CC
    for backend in backends:
        with pytest.raises(SimulationError, match="buffer_size") as info:
            blocksim.simulate(d, backend=backend)
        assert info.value.block == "d"
        assert "raise buffer_size" in str(info.value) and "\n" not in str(info.value)


# ----- VariableTransportDelay -----

def variable(tau_blocks, tau_wire, max_delay=1.0, **settings):
    base = [block("s", "Sine", frequency=SIN), block("watch", "Integrator"),
            block("y", "Output"),
            block("d", "VariableTransportDelay", max_delay=max_delay, initial_output=0.25)]
    return diagram(base + tau_blocks, [("s.y", "d.u"), (tau_wire, "d.tau"), ("d.y", "y.u"),
                                       ("s.y", "watch.u")],
                   **{**TIGHT, "output_interval": 0.01, "stop": 6.0, **settings})


def test_a_constant_variable_delay_is_a_transport_delay():
    r = run_both(variable([block("tau", "Constant", value=0.5)], "tau.y"))
    t = r.time
    start = [e.time for e in r.events if e.kind == "state"]
    np.testing.assert_allclose(start, [0.5], rtol=0, atol=1e-12)
    begun = (t > 0.5) | ((t == 0.5) & ~left_rows(t))
    np.testing.assert_allclose(r["y"], np.where(begun, np.sin(t - 0.5), 0.25), rtol=0,
                               atol=1e-9)


def test_a_varying_delay_follows_the_closed_form():
    """tau = 0.5 + 0.25 sin t: y = sin(t - tau(t)) from where t - tau(t) = 0 (a located
    event), clipped at max_delay = 0.6 where tau would exceed it."""
    blocks = [block("tau", "Sine", frequency=SIN, amplitude=0.25, bias=0.5)]
    r = run_both(variable(blocks, "tau.y", max_delay=0.6))
    t = r.time
    tau = np.minimum(0.5 + 0.25 * np.sin(t), 0.6)
    t_start = brentq(lambda s: s - min(0.5 + 0.25 * math.sin(s), 0.6), 0.1, 1.0, xtol=1e-15)
    start = [e.time for e in r.events if e.kind == "state"]
    np.testing.assert_allclose(start[0], t_start, rtol=0, atol=1e-10)
    begun = (t > t_start + 1e-9)
    np.testing.assert_allclose(r["y"][begun], np.sin(t - tau)[begun], rtol=0, atol=1e-8)
    np.testing.assert_array_equal(r["y"][t < t_start - 1e-9], 0.25)


# ----- parameters -----

def test_histories_beyond_their_memory_budget_are_refused_naming_the_block():
    d = diagram([block("c", "Constant", value=[1.0] * 50),
                 block("d", "TransportDelay", buffer_size=1_000_000)], [("c.y", "d.u")])
    with pytest.raises(CompileError, match="lower buffer_size") as info:
        blocksim.compile(d)
    assert info.value.block == "d"


@pytest.mark.parametrize("block_type, params, message", [
    ("TransportDelay", dict(delay=0.0), "parameter 'delay'"),
    ("TransportDelay", dict(delay=-1.0), "parameter 'delay'"),
    ("TransportDelay", dict(delay="inf"), "parameter 'delay'"),
    ("TransportDelay", dict(delay="nan"), "parameter 'delay'"),
    ("TransportDelay", dict(buffer_size=0), "parameter 'buffer_size'"),
    ("TransportDelay", dict(initial_output="nan"), "parameter 'initial_output'"),
    ("VariableTransportDelay", dict(max_delay=-0.5), "parameter 'max_delay'"),
    ("VariableTransportDelay", dict(max_delay="inf"), "parameter 'max_delay'"),
    ("VariableTransportDelay", dict(initial_output=[1.0, 2.0, 3.0]), "where 1 or 3 are needed"),
])
def test_bad_parameters_are_refused_naming_the_block_and_parameter(block_type, params, message):
    wires = [("c.y", "bad.u")] + ([("c.y", "bad.tau")] if block_type.startswith("Var") else [])
    d = diagram([block("c", "Constant", value=[1.0, 2.0]), block("bad", block_type, **params)],
                wires)
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "bad" and message in str(info.value)
