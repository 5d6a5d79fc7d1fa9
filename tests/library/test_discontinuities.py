"""Saturation, Abs, Sign, CompareToConstant, HitCrossing and Relay against analytic values.

Sine and cosine inputs come from a harmonic oscillator of two integrators solved at tight
tolerances (about 1e-12 error), so event times can be checked against asin/acos to 1e-9.
"""
import math

import numpy as np
import pytest
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def oscillator(blocks, wires, **settings):
    """A diagram with `sin.y` = sin t and `cos.y` = cos t, plus the given blocks and wires."""
    base = [block("sin", "Integrator", x0=0.0), block("cos", "Integrator", x0=1.0),
            block("neg", "Gain", k=-1.0)]
    loop = [("cos.y", "sin.u"), ("sin.y", "neg.u"), ("neg.y", "cos.u")]
    return diagram(base + blocks, loop + wires, **{**TIGHT, **settings})


def event_times(r, block_id, kind=None):
    return np.array([e.time for e in r.events_of(kind, block_id)])


def away_from(r, times, eps=1e-6):
    """Row mask of samples not at (or within eps of) any of the given event times."""
    return np.all(np.abs(r.time[:, None] - np.asarray(times)[None, :]) > eps, axis=1)


# ----- Saturation -----

def test_saturation_clips_a_sine_exactly_with_events_at_the_analytic_crossings():
    lo, hi = -0.5, 0.8
    r = blocksim.simulate(
        oscillator([block("s", "Saturation", lower=lo, upper=hi), block("y", "Output")],
                   [("sin.y", "s.u"), ("s.y", "y.u")], stop=7.0, output_interval=0.05))
    assert np.max(np.abs(r["y"] - np.clip(np.sin(r.time), lo, hi))) < 1e-10
    # Once the region is latched the output is the limit itself; only a left limit at an
    # event (the first float past the crossing) may overshoot, by roundoff.
    assert np.any(r["y"] == hi) and np.any(r["y"] == lo)
    assert hi <= r["y"].max() < hi + 1e-15 and lo - 1e-15 < r["y"].min() <= lo
    expected = [math.asin(hi), math.pi - math.asin(hi), math.pi + math.asin(-lo),
                2 * math.pi - math.asin(-lo)]
    np.testing.assert_allclose(event_times(r, "s"), expected, rtol=0, atol=1e-9)
    # Continuous at the limits: the left and right limits at each event agree.
    for t in expected:
        rows = np.flatnonzero(r.time == event_times(r, "s")[expected.index(t)])
        assert len(rows) == 2
        assert abs(r["y"][rows[0]] - r["y"][rows[1]]) < 1e-12


def test_saturation_vector_limits_widen_a_scalar_input():
    r = blocksim.simulate(
        diagram([block("c", "Constant", value=0.3),
                 block("s", "Saturation", lower=[-1.0, 0.5, -math.inf], upper=[1.0, 2.0, 0.2]),
                 block("y", "Output")],
                [("c.y", "s.u"), ("s.y", "y.u")], stop=1.0, output_interval=0.5))
    np.testing.assert_array_equal(r["y"][-1], [0.3, 0.5, 0.2])


def test_saturation_with_lower_above_upper_is_refused_naming_the_block():
    d = diagram([block("c", "Constant"), block("sat", "Saturation", lower=2.0, upper=1.0)],
                [("c.y", "sat.u")])
    with pytest.raises(CompileError, match="above upper") as exc:
        blocksim.simulate(d)
    assert exc.value.block == "sat"


# ----- Abs and Sign -----

def test_abs_and_sign_of_a_cosine():
    r = blocksim.simulate(
        oscillator([block("a", "Abs"), block("sg", "Sign"), block("ya", "Output"),
                    block("ys", "Output")],
                   [("cos.y", "a.u"), ("cos.y", "sg.u"), ("a.y", "ya.u"), ("sg.y", "ys.u")],
                   stop=5.0, output_interval=0.1))
    crossings = [math.pi / 2, 3 * math.pi / 2]
    # Both blocks cross together; the engine logs the located crossing once.
    located = np.array([e.time for e in r.events])
    np.testing.assert_allclose(located, crossings, rtol=0, atol=1e-9)
    assert np.max(np.abs(r["ya"] - np.abs(np.cos(r.time)))) < 1e-10
    # Negative only in a left limit at an event (first float past the crossing), by roundoff.
    assert np.all(r["ya"] > -1e-15)
    ok = away_from(r, crossings)
    np.testing.assert_array_equal(r["ys"][ok], np.sign(np.cos(r.time[ok])))
    # The Sign output jumps at the event itself: left limit +1, right limit -1.
    for t, jump in zip(located, ([1.0, -1.0], [-1.0, 1.0])):
        rows = np.flatnonzero(r.time == t)
        np.testing.assert_array_equal(r["ys"][rows], jump)


def test_sign_of_zero_is_zero():
    r = blocksim.simulate(
        diagram([block("c", "Constant", value=[-2.0, 0.0, 3.0]), block("sg", "Sign"),
                 block("y", "Output")], [("c.y", "sg.u"), ("sg.y", "y.u")],
                stop=1.0, output_interval=0.5))
    np.testing.assert_array_equal(r["y"], [[-1.0, 0.0, 1.0]] * 3)


# ----- CompareToConstant -----

def test_compare_to_constant_switches_at_the_analytic_crossings():
    r = blocksim.simulate(
        oscillator([block("cmp", "CompareToConstant", operator=">=", constant=0.5),
                    block("y", "Output")], [("cos.y", "cmp.u"), ("cmp.y", "y.u")],
                   stop=7.0, output_interval=0.1))
    crossings = [math.pi / 3, 5 * math.pi / 3]
    np.testing.assert_allclose(event_times(r, "cmp"), crossings, rtol=0, atol=1e-9)
    ok = away_from(r, crossings)
    np.testing.assert_array_equal(r["y"][ok], (np.cos(r.time[ok]) >= 0.5).astype(float))


@pytest.mark.parametrize("op, expected", [
    ("<", [1, 0, 0]), ("<=", [1, 1, 0]), (">", [0, 0, 1]), (">=", [0, 1, 1]),
    ("==", [0, 1, 0]), ("!=", [1, 0, 1]),
])
def test_compare_to_constant_relations(op, expected):
    r = blocksim.simulate(diagram([block("c", "Constant", value=[1.0, 2.0, 3.0]),
                                   block("cmp", "CompareToConstant", operator=op, constant=2.0),
                                   block("y", "Output")], [("c.y", "cmp.u"), ("cmp.y", "y.u")],
                                  stop=1.0, output_interval=1.0))
    np.testing.assert_array_equal(r["y"], [expected] * 2)


# ----- HitCrossing -----

def hit_and_reset(direction, level=0.5, stop=8.0):
    """A ramp (integral of 1) reset to 0 by the HitCrossing pulse on sin t."""
    return blocksim.simulate(
        oscillator(
     [block("h", "HitCrossing", level=level, direction=direction),
      block("one", "Constant", value=1.0), block("zero", "Constant", value=0.0),
      block("ri", "ResetIntegrator", edge="rising"), block("y", "Output")],
     [("sin.y", "h.u"), ("h.y", "ri.reset"), ("one.y", "ri.u"), ("zero.y", "ri.x0"),
      ("ri.y", "y.u")], stop=stop, output_interval=0.25))


def test_hit_crossing_pulse_resets_an_integrator_exactly_at_the_crossing():
    r = hit_and_reset("rising")
    hits = [math.asin(0.5), 2 * math.pi + math.asin(0.5)]
    np.testing.assert_allclose(event_times(r, "h", "hit"), hits, rtol=0, atol=1e-9)
    resets = event_times(r, "ri", "reset")
    np.testing.assert_array_equal(resets, event_times(r, "h", "hit"))
    # Falling crossings in between are not even located.
    assert len(r.events_of(block="h", kind="state")) == 2
    # The ramp restarts from 0 at each crossing: y = t - (last hit).
    last = np.where(r.time >= resets[1], resets[1], np.where(r.time >= resets[0], resets[0], 0.0))
    after = ~np.isin(r.time, resets)
    np.testing.assert_allclose(r["y"][after], (r.time - last)[after], rtol=0, atol=1e-9)
    rows = np.flatnonzero(r.time == resets[0])
    np.testing.assert_allclose(r["y"][rows], [resets[0], 0.0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_hit_crossing_pulse_is_logged_at_the_right_limit(backend):
    # A Scope on the pulse shows it: 1.0 in the right-limit row of each hit, 0.0 elsewhere.
    pytest.importorskip("numba") if backend == "numba" else None
    r = blocksim.simulate(oscillator([block("h", "HitCrossing", level=0.5, direction="rising"),
                                      block("pulse", "Output")],
                                     [("sin.y", "h.u"), ("h.y", "pulse.u")], stop=8.0,
                                     output_interval=0.25), backend=backend)
    hits = event_times(r, "h", "hit")
    assert len(hits) == 2
    ones = np.flatnonzero(r["pulse"] == 1.0)
    np.testing.assert_array_equal(r.time[ones], hits)
    for row in ones:  # the left limit before it reads 0
        assert r.time[row - 1] == r.time[row] and r["pulse"][row - 1] == 0.0
    assert np.count_nonzero(r["pulse"]) == 2


def test_hit_crossing_directions():
    r = hit_and_reset("falling", stop=7.0)
    np.testing.assert_allclose(event_times(r, "h", "hit"), [math.pi - math.asin(0.5)],
                               rtol=0, atol=1e-9)
    r = hit_and_reset("either", stop=7.0)
    np.testing.assert_allclose(
        event_times(r, "h", "hit"),
        [math.asin(0.5), math.pi - math.asin(0.5), 2 * math.pi + math.asin(0.5)],
        rtol=0, atol=1e-9)
    assert len(event_times(r, "ri", "reset")) == 3


# ----- Relay -----

def test_relay_hysteresis_in_a_feedback_loop_switches_at_exact_times():
    # x' = +1 while off, -1 while on; on at x = 2, off at x = 1: a triangle wave.
    r = blocksim.simulate(
        diagram([block("i", "Integrator", x0=0.0),
                 block("rl", "Relay", on_point=2.0, off_point=1.0, on_value=-1.0,
                       off_value=1.0),
                 block("x", "Output"), block("y", "Output")],
                [("i.y", "rl.u"), ("rl.y", "i.u"), ("i.y", "x.u"), ("rl.y", "y.u")],
                stop=6.5, output_interval=0.5))
    assert [e.kind for e in r.events_of(block="rl") if e.kind != "state"] == \
        ["on", "off", "on", "off", "on"]
    np.testing.assert_allclose(event_times(r, "rl", "on"), [2.0, 4.0, 6.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(event_times(r, "rl", "off"), [3.0, 5.0], rtol=0, atol=1e-12)
    triangle = np.where(r.time <= 2, r.time, 1 + np.abs(((r.time - 2) % 2) - 1))
    np.testing.assert_allclose(r["x"], triangle, rtol=0, atol=1e-12)


def test_relay_with_a_sine_input_eurosim_values():
    r = blocksim.simulate(
        oscillator([block("rl", "Relay", on_point=0.5, off_point=-0.25, on_value=2.0,
                          off_value=1.0), block("y", "Output")],
                   [("sin.y", "rl.u"), ("rl.y", "y.u")], stop=8.0, output_interval=0.1
                   ))
    on = [math.asin(0.5), 2 * math.pi + math.asin(0.5)]
    off = [math.pi + math.asin(0.25)]
    np.testing.assert_allclose(event_times(r, "rl", "on"), on, rtol=0, atol=1e-9)
    np.testing.assert_allclose(event_times(r, "rl", "off"), off, rtol=0, atol=1e-9)
    t = r.time
    expected = np.where(((t > on[0]) & (t < off[0])) | (t > on[1]), 2.0, 1.0)
    ok = away_from(r, on + off)
    np.testing.assert_array_equal(r["y"][ok], expected[ok])


@pytest.mark.parametrize("u, initial, expected", [
    (3.0, "off", 1.0),   # at or above on_point: on
    (2.0, "off", 1.0),
    (0.5, "on", 0.0),    # at or below off_point: off
    (1.0, "on", 0.0),
    (1.5, "on", 1.0),    # in between: the initial state
    (1.5, "off", 0.0),
])
def test_relay_initial_state_rules(u, initial, expected):
    r = blocksim.simulate(
        diagram([block("c", "Constant", value=u),
                 block("rl", "Relay", on_point=2.0, off_point=1.0, initial=initial),
                 block("y", "Output")], [("c.y", "rl.u"), ("rl.y", "y.u")],
                stop=1.0, output_interval=0.5))
    np.testing.assert_array_equal(r["y"], [expected] * 3)


def test_relay_with_equal_points_is_on_at_the_point_and_does_not_chatter():
    # A later event (the step) re-runs the event iteration with u sitting on the point.
    r = blocksim.simulate(
        diagram([block("c", "Constant", value=1.0), block("st", "Step", time=0.5),
                 block("rl", "Relay", on_point=1.0, off_point=1.0), block("y", "Output")],
                [("c.y", "rl.u"), ("rl.y", "y.u")], stop=1.0, output_interval=0.25))
    assert np.all(r["y"] == 1.0)
    assert r.status == "finished"


def test_relay_with_off_point_above_on_point_is_refused_naming_the_block():
    d = diagram([block("c", "Constant"), block("rl", "Relay", on_point=1.0, off_point=2.0)],
                [("c.y", "rl.u")])
    with pytest.raises(CompileError, match="off_point") as exc:
        blocksim.simulate(d)
    assert exc.value.block == "rl"


# ----- widths -----

@pytest.mark.parametrize("kind, widths, message", [
    ("RelationalOperator", {"u1": 3, "u2": 2}, "input widths do not match"),
    ("Switch", {"u1": 3, "u2": 1, "u3": 2}, "input widths do not match"),
    ("Switch", {"u1": 3, "u2": 2, "u3": 3}, "control 'u2' has width 2"),
])
def test_inputs_of_widths_that_do_not_match_are_refused_naming_the_block(kind, widths, message):
    """Found by the fuzzer: widths 3 and 2 compiled to an index error in the generated code
    ("cannot generate code: list index out of range")."""
    sources = [block(f"c{port}", "Constant", value=[1.0] * width)
               for port, width in widths.items()]
    wires = [(f"c{port}.y", f"x.{port}") for port in widths] + [("x.y", "y.u")]
    with pytest.raises(CompileError, match=message) as exc:
        blocksim.compile(diagram(sources + [block("x", kind), block("y", "Output")], wires))
    assert exc.value.block == "x"


def test_a_switch_passes_vectors_with_a_scalar_or_a_matching_control():
    for control in ([1.0], [1.0, -1.0]):
        r = blocksim.simulate(diagram(
            [block("a", "Constant", value=[1.0, 2.0]), block("c", "Constant", value=control),
             block("b", "Constant", value=-5.0), block("s", "Switch"), block("y", "Output")],
            [("a.y", "s.u1"), ("c.y", "s.u2"), ("b.y", "s.u3"), ("s.y", "y.u")], stop=0.1))
        expected = [1.0, 2.0] if len(control) == 1 else [1.0, -5.0]
        assert r["y"][-1].tolist() == expected
