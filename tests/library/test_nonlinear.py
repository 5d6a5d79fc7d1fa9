"""DeadZone, Quantizer, CoulombViscousFriction, Rounding and MinMax against their analytic
responses to sines and ramps: switching instants within 1e-12 of the closed forms (in
fact within a few ulp), values exact between them, on both backends.

The inputs are Sine blocks (exact functions of t). An integrator of the input keeps the
solver's steps on the sine's time scale: a model whose states do not see the input could
take one step over two crossings of a level, which the engine cannot see (the signs are
compared at step ends only); it also gives the numba backend a continuous state to run.
"""
import math

import numpy as np
import pytest
from both_backends import SIN, run_both
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError, SimulationError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}
EXACT = 1e-12  # switching instants against the closed forms


def sine_input(blocks, wires, amplitude=1.0, phase=0.0, **settings):
    """`s.y` = amplitude * sin(t + phase), with an integrator watching it, plus the given
    blocks and wires; `b` is the block under test and `y` logs its output."""
    base = [block("s", "Sine", frequency=SIN, amplitude=amplitude, phase=phase),
            block("watch", "Integrator", x0=0.0), block("y", "Output")]
    return diagram(base + blocks, [("s.y", "watch.u"), ("b.y", "y.u")] + wires,
                   **{**TIGHT, "output_interval": 0.01, **settings})


def crossings(level, amplitude, stop, phase=0.0):
    """The times in (0, stop) at which amplitude * sin(t + phase) crosses level."""
    a = math.asin(level / amplitude)
    times = []
    for k in range(-2, int(stop / (2 * math.pi)) + 2):
        times += [a + 2 * math.pi * k - phase, math.pi - a + 2 * math.pi * k - phase]
    return sorted(t for t in times if 0.0 < t < stop)


def event_times(r, block_id="b", kind=None):
    return np.array([e.time for e in r.events_of(kind, block_id)])


def away_from(r, times, eps=1e-9):
    """Rows not within eps of any of the times nor of the start (the two rows of an event
    are left out; the start row holds the right limit, as every block's does: a sine
    starting at 0 reads there the sign it takes just after)."""
    times = [0.0, *times]
    return np.all(np.abs(r.time[:, None] - np.asarray(times)[None, :]) > eps, axis=1)


def assert_close_to(r, analytic, events):
    """Exact to rounding between events; at an event's left limit (the first float past the
    crossing, still in the old mode) within what u moves in an ulp of t."""
    ok = away_from(r, events)
    assert np.max(np.abs(r["y"][ok] - analytic[ok])) <= 1e-15
    assert np.max(np.abs(r["y"] - analytic)[1:]) < 1e-14


def rows_at(r, t):
    return np.flatnonzero(r.time == t)


def round_half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


# ----- DeadZone -----

def test_dead_zone_of_a_sine_matches_the_analytic_response():
    lo, hi, stop = -0.5, 0.3, 9.5
    r = run_both(sine_input([block("b", "DeadZone", start=lo, end=hi)], [("s.y", "b.u")],
                            stop=stop))
    expected = sorted(crossings(lo, 1.0, stop) + crossings(hi, 1.0, stop))
    assert len(expected) == 6
    np.testing.assert_allclose(event_times(r), expected, rtol=0, atol=EXACT)
    u = np.sin(r.time)
    analytic = np.where(u > hi, u - hi, np.where(u < lo, u - lo, 0.0))
    assert_close_to(r, analytic, expected)
    inside = away_from(r, expected) & (analytic == 0.0)
    assert inside.sum() > 100 and np.all(r["y"][inside] == 0.0)  # exactly 0 in the zone
    for t in event_times(r):  # continuous at the ends: left and right limits agree (the
        left, right = r["y"][rows_at(r, t)]  # left one is past the end by an ulp of t)
        assert abs(left - right) < 4 * math.ulp(t)


def test_dead_zone_vector_ends_widen_a_scalar_input():
    d = diagram([block("c", "Constant", value=0.7),
                 block("b", "DeadZone", start=[-1.0, 0.0, 0.7], end=[1.0, 0.5, 0.7]),
                 block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")], stop=1.0)
    np.testing.assert_allclose(blocksim.simulate(d)["y"][-1], [0.0, 0.2, 0.0], atol=1e-16)


# ----- Quantizer -----

def test_quantizer_of_a_sine_jumps_at_the_mid_points():
    q, amp, stop = 0.5, 2.0, 7.0
    r = run_both(sine_input([block("b", "Quantizer", interval=q)], [("s.y", "b.u")],
                            amplitude=amp, stop=stop))
    mids = [(k + 0.5) * q for k in range(-4, 4)]  # +-0.25, +-0.75, +-1.25, +-1.75
    expected = sorted(t for level in mids for t in crossings(level, amp, stop))
    assert len(expected) == 19
    np.testing.assert_allclose(event_times(r, kind="level"), expected, rtol=0, atol=EXACT)
    ok = away_from(r, expected)
    np.testing.assert_array_equal(r["y"][ok], q * round_half_away(amp * np.sin(r.time[ok]) / q))
    for t in event_times(r, kind="level"):  # each jump is one level
        left, right = r["y"][rows_at(r, t)]
        assert abs(left - right) == q


def test_quantizer_of_a_ramp_jumps_at_exact_instants():
    # u = t - 1 on [0, 2]: mid-points of q = 0.25 at t = 1 + (k + 1/2) / 4, exact in binary.
    q = 0.25
    d = diagram([block("r", "Ramp", slope=1.0, start=0.0, initial=-1.0),
                 block("watch", "Integrator"), block("b", "Quantizer", interval=q),
                 block("y", "Output")], [("r.y", "b.u"), ("r.y", "watch.u"), ("b.y", "y.u")],
                stop=2.0, output_interval=0.01, **TIGHT)
    r = run_both(d)
    expected = [1.0 + (k + 0.5) * q for k in range(-4, 4)]
    np.testing.assert_allclose(event_times(r, kind="level"), expected, rtol=0, atol=1e-15)
    ok = away_from(r, expected)
    np.testing.assert_array_equal(r["y"][ok], q * round_half_away((r.time[ok] - 1.0) / q))


@pytest.mark.parametrize("value, expected", [
    (0.25, 0.5), (-0.25, -0.5), (0.75, 1.0), (-0.75, -1.0), (0.1, 0.0), (-0.1, -0.0),
    (1e3 + 0.2, 1e3),
])
def test_quantizer_rounds_half_away_from_zero(value, expected):
    d = diagram([block("c", "Constant", value=value), block("b", "Quantizer", interval=0.5),
                 block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")], stop=1.0)
    r = blocksim.simulate(d)
    np.testing.assert_array_equal(r["y"], expected)
    assert r.events_of("level", "b") == []


# ----- CoulombViscousFriction -----

def test_coulomb_viscous_friction_of_a_sine_jumps_by_twice_the_offset_at_zero():
    fc, fv, stop = 0.5, 2.0, 7.0
    r = run_both(sine_input([block("b", "CoulombViscousFriction", offset=fc, gain=fv)],
                            [("s.y", "b.u")], stop=stop))
    expected = [math.pi, 2 * math.pi]
    np.testing.assert_allclose(event_times(r), expected, rtol=0, atol=EXACT)
    u = np.sin(r.time)
    ok = away_from(r, expected)
    np.testing.assert_allclose(r["y"][ok], (np.sign(u) * (fv * np.abs(u) + fc))[ok], rtol=0,
                               atol=1e-15)
    assert r["y"][0] == fc  # u(0) = 0 rising: the start holds the right limit
    for t, jump in zip(event_times(r), (-2 * fc, 2 * fc)):
        left, right = r["y"][rows_at(r, t)]
        assert right - left == pytest.approx(jump, abs=1e-14)


def test_coulomb_viscous_friction_at_rest_is_zero():
    d = diagram([block("c", "Constant", value=[0.0, 2.0, -1.0]),
                 block("b", "CoulombViscousFriction", offset=[1.0, 1.0, 3.0], gain=0.5),
                 block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")], stop=1.0)
    np.testing.assert_array_equal(blocksim.simulate(d)["y"][-1], [0.0, 2.0, -3.5])


def braked_load(force):
    """A unit mass at v = 1 under a constant force and friction 0.2 v + sign(v):
    v' = force - friction(v)."""
    blocks = [block("F", "Constant", value=force),
              block("friction", "CoulombViscousFriction", offset=1.0, gain=0.2),
              block("net", "Sum", signs="+-"), block("v", "Integrator", x0=1.0),
              block("y", "Output")]
    wires = [("F.y", "net.u1"), ("friction.y", "net.u2"), ("net.y", "v.u"),
             ("v.y", "friction.u"), ("v.y", "y.u")]
    return diagram(blocks, wires, stop=5.0, **TIGHT)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_load_that_comes_to_rest_below_the_coulomb_level_fails_saying_it_sticks(backend):
    """v' = 0.5 - 0.2 v - 1 reaches v = 0 at t = 5 ln 1.4; there the force 0.5 is below the
    Coulomb level 1: either sign of v reverses v. The block models sliding only, and the
    error says so and what to do, naming the block (on the numba backend too, which hands
    the instant to Python)."""
    if backend == "numba":
        pytest.importorskip("numba")
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(braked_load(0.5), backend=backend)
    err = info.value
    assert err.block == "friction" and abs(err.time - 5 * math.log(1.4)) < 1e-9
    assert "still changing: friction; friction sticks: its input (a velocity) is at 0" in str(err)
    assert "below the Coulomb level 'offset'" in str(err) and "stick/slip" in str(err)
    assert err.results.time[-1] <= err.time and err.results["y"][0] == 1.0


def test_a_load_pushed_beyond_the_coulomb_level_slides_through_zero():
    """Force -1.5: v' = -2.5 - 0.2 v reaches v = 0 at t1 = 5 ln 1.08; the force exceeds
    the Coulomb level, so the load goes on, v' = -0.5 - 0.2 v: one located switch."""
    r = run_both(braked_load(-1.5))
    t1 = 5 * math.log(13.5 / 12.5)
    assert [e.time for e in r.events_of(block="friction")] == pytest.approx([t1], abs=1e-12)
    t = r.time
    expected = np.where(t < t1, 13.5 * np.exp(-0.2 * t) - 12.5,
                        2.5 * (np.exp(-0.2 * (t - t1)) - 1.0))
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-10)


# ----- Rounding -----

ROUNDING = {
    "floor": (np.floor, [-2.0, -1.0, 0.0, 1.0, 2.0]),
    "ceil": (np.ceil, [-2.0, -1.0, 0.0, 1.0, 2.0]),
    "round": (round_half_away, [-1.5, -0.5, 0.5, 1.5]),
    "fix": (np.trunc, [-2.0, -1.0, 1.0, 2.0]),  # fix is continuous through 0
}


@pytest.mark.parametrize("function", sorted(ROUNDING))
def test_rounding_of_a_sine_jumps_at_the_analytic_instants(function):
    rule, levels = ROUNDING[function]
    amp, stop = 2.3, 7.0
    r = run_both(sine_input([block("b", "Rounding", function=function)], [("s.y", "b.u")],
                            amplitude=amp, stop=stop))
    expected = sorted(t for level in levels for t in crossings(level, amp, stop))
    np.testing.assert_allclose(event_times(r, kind="level"), expected, rtol=0, atol=EXACT)
    ok = away_from(r, expected)
    np.testing.assert_array_equal(r["y"][ok], rule(amp * np.sin(r.time[ok])))
    for t in event_times(r, kind="level"):
        left, right = r["y"][rows_at(r, t)]
        assert abs(left - right) == 1.0


@pytest.mark.parametrize("function", sorted(ROUNDING))
def test_rounding_of_constants_at_and_between_integers(function):
    values = [-2.5, -1.0, -0.5, -0.4, 0.0, 0.4, 0.5, 1.0, 1.7, 2.5]
    d = diagram([block("c", "Constant", value=values), block("b", "Rounding", function=function),
                 block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")], stop=1.0)
    np.testing.assert_array_equal(blocksim.simulate(d)["y"][-1], ROUNDING[function][0](values))


# ----- MinMax -----

def test_max_of_two_inputs_switches_where_they_cross():
    stop = 7.0
    r = run_both(sine_input([block("c", "Sine", frequency=SIN, phase=math.pi / 2),
                             block("b", "MinMax", function="max", inputs=2)],
                            [("s.y", "b.u1"), ("c.y", "b.u2")], stop=stop))
    expected = [math.pi / 4, 5 * math.pi / 4]
    np.testing.assert_allclose(event_times(r, kind="switch"), expected, rtol=0, atol=EXACT)
    assert_close_to(r, np.maximum(np.sin(r.time), np.cos(r.time)), expected)


def test_min_of_three_inputs_with_a_constant():
    stop = 7.0
    r = run_both(sine_input([block("c", "Sine", frequency=SIN, phase=math.pi / 2),
                             block("k", "Constant", value=0.2),
                             block("b", "MinMax", function="min", inputs=3)],
                            [("s.y", "b.u1"), ("c.y", "b.u2"), ("k.y", "b.u3")], stop=stop))
    # sin is the least from 0 until it rises past 0.2; cos then falls below 0.2, sin
    # below cos at 5 pi/4, and 0.2 is the least again where sin rises past it.
    expected = [math.asin(0.2), math.acos(0.2), 5 * math.pi / 4, 2 * math.pi + math.asin(0.2)]
    np.testing.assert_allclose(event_times(r, kind="switch"), expected, rtol=0, atol=EXACT)
    assert_close_to(r, np.minimum(np.minimum(np.sin(r.time), np.cos(r.time)), 0.2), expected)


def test_max_over_the_elements_of_one_vector():
    phases, stop = [0.0, 2.0, 4.0], 9.0
    d = diagram([block("s", "Sine", frequency=SIN, phase=phases),
                 block("watch", "Integrator", x0=[0.0, 0.0, 0.0]),
                 block("b", "MinMax", function="max"), block("y", "Output")],
                [("s.y", "watch.u"), ("s.y", "b.u"), ("b.y", "y.u")], stop=stop,
                output_interval=0.01, **TIGHT)
    r = run_both(d)
    # sin(t + a) = sin(t + b) where t = pi/2 - (a + b)/2 + k pi; a switch where the two
    # are the largest.
    expected = []
    for i, a in enumerate(phases):
        for b in phases[i + 1:]:
            for k in range(-2, 5):
                t = math.pi / 2 - (a + b) / 2 + k * math.pi
                if 0 < t < stop and math.sin(t + a) >= max(math.sin(t + p) for p in phases) - 1e-12:
                    expected.append(t)
    np.testing.assert_allclose(event_times(r, kind="switch"), sorted(expected), rtol=0,
                               atol=EXACT)
    assert_close_to(r, np.max(np.sin(r.time[:, None] + np.array(phases)[None, :]), axis=1),
                    expected)


def test_min_max_elementwise_with_scalar_expansion_and_ties():
    d = diagram([block("a", "Constant", value=[1.0, 5.0, 2.0]), block("k", "Constant", value=2.0),
                 block("lo", "MinMax", function="min", inputs=2),
                 block("hi", "MinMax", function="max", inputs=2),
                 block("one", "MinMax", function="max"), block("ylo", "Output"),
                 block("yhi", "Output"), block("yone", "Output")],
                [("a.y", "lo.u1"), ("k.y", "lo.u2"), ("a.y", "hi.u1"), ("k.y", "hi.u2"),
                 ("k.y", "one.u"), ("lo.y", "ylo.u"), ("hi.y", "yhi.u"), ("one.y", "yone.u")],
                stop=1.0)
    r = blocksim.simulate(d)
    np.testing.assert_array_equal(r["ylo"][-1], [1.0, 2.0, 2.0])
    np.testing.assert_array_equal(r["yhi"][-1], [2.0, 5.0, 2.0])
    np.testing.assert_array_equal(r["yone"], 2.0)  # one scalar input: itself


# ----- parameters -----

@pytest.mark.parametrize("block_type, params, message", [
    ("DeadZone", dict(start=1.0, end=0.5), "parameter 'end'"),
    ("DeadZone", dict(start=[0.0, 1.0], end=[1.0, 2.0, 3.0]), "parameter 'start'"),
    ("DeadZone", dict(start="inf"), "parameter 'start'"),
    ("Quantizer", dict(interval=0.0), "parameter 'interval'"),
    ("Quantizer", dict(interval=[0.5, -1.0]), "parameter 'interval'"),
    ("Quantizer", dict(interval="nan"), "parameter 'interval'"),
    ("CoulombViscousFriction", dict(offset="inf"), "parameter 'offset'"),
    ("CoulombViscousFriction", dict(offset=[1.0, 2.0], gain=[1.0, 2.0, 3.0]), "parameter"),
    ("Rounding", dict(function="truncate"), "parameter 'function'"),
    ("MinMax", dict(function="mean"), "parameter 'function'"),
])
def test_bad_parameters_are_refused_naming_the_block_and_parameter(block_type, params, message):
    d = diagram([block("c", "Constant"), block("bad", block_type, **params)], [("c.y", "bad.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "bad" and message in str(info.value)


def test_min_max_with_zero_inputs_is_refused():
    d = diagram([block("c", "Constant"), block("bad", "MinMax", inputs=0)], [])
    with pytest.raises(CompileError, match="parameter 'inputs'") as info:
        blocksim.compile(d)
    assert info.value.block == "bad"


def test_min_max_inputs_of_different_widths_are_refused_naming_the_port():
    d = diagram([block("a", "Constant", value=[1.0, 2.0]), block("b3", "Constant", value=[1.0] * 3),
                 block("bad", "MinMax", inputs=2)], [("a.y", "bad.u1"), ("b3.y", "bad.u2")])
    with pytest.raises(CompileError, match="input 'u1' has width 2") as info:
        blocksim.compile(d)
    assert info.value.block == "bad"
