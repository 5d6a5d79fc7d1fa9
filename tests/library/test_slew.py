"""RateLimiter and Backlash against hand-derived piecewise answers for sine and ramp inputs:
switching instants within 1e-12, values to rounding, on both backends.

The sine inputs are Sine blocks (exact functions of t) with their derivative, a cosine, on
the `du` port; ramps and steps come from FromTable (exact piecewise-linear functions of
t, their kinks time events).
"""
import math

import numpy as np
import pytest
from both_backends import SIN, run_both
from builders import block, diagram
from scipy.optimize import brentq

import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}
EXACT = 1e-12


def switches(r, block_id="b"):
    """(time, kind) of the block's own event entries (not the located crossings)."""
    return [(e.time, e.kind) for e in r.events_of(block=block_id) if e.kind != "state"]


def assert_switches(r, expected, atol=EXACT):
    found = switches(r)
    assert [kind for _, kind in found] == [kind for _, kind in expected]
    np.testing.assert_allclose([t for t, _ in found], [t for t, _ in expected], rtol=0,
                               atol=atol)


def sine_with_derivative(blocks, wires, amplitude=1.0, **settings):
    """`s.y` = amplitude sin t, `c.y` = amplitude cos t (its derivative), `y` logs `b.y`;
    an integrator of the input keeps the solver's steps on the sine's time scale (and
    gives the numba backend a state to run)."""
    base = [block("s", "Sine", frequency=SIN, amplitude=amplitude),
            block("c", "Sine", frequency=SIN, amplitude=amplitude, phase=math.pi / 2),
            block("watch", "Integrator"), block("y", "Output")]
    return diagram(base + blocks, [("s.y", "b.u"), ("c.y", "b.du"), ("b.y", "y.u"),
                                   ("s.y", "watch.u")] + wires,
                   **{**TIGHT, "output_interval": 0.01, **settings})


def table(times, values):
    return block("u", "FromTable", times=times, values=values)


# ----- RateLimiter: a sine -----

def rate_limited_sine(rise, fall, stop):
    """The ideal rate limiter's response to u = sin t from y(0) = 0, by hand: it follows u
    while rise >= cos t >= fall; limiting starts where cos t leaves that range (closed
    forms) and ends where u meets the ramp y (the root of sin t - ramp, bracketed on a fine
    grid and solved to 1e-15). Returns the switches and y on a time array."""
    events, pieces = [], []  # pieces: (start, rate or None, anchor time, anchor value)

    def start_limit(t, rate):
        events.append((t, "rising limit" if rate > 0 else "falling limit"))
        pieces.append((t, rate, t, math.sin(t)))

    t = 0.0
    pieces.append((0.0, None, 0.0, 0.0))
    if math.cos(0.0) > rise:
        start_limit(0.0, rise)
    while t < stop:
        _, rate, t0, y0 = pieces[-1]
        if rate is None:  # following: the next onset of limiting
            periods = range(int(stop / (2 * math.pi)) + 2)
            onsets = [(2 * math.pi * (k + 1) - math.acos(rise), rise) for k in periods
                      if rise < 1.0]
            onsets += [(2 * math.pi * k + math.acos(fall), fall) for k in periods
                       if fall > -1.0]
            t, rate = min((o for o in onsets if o[0] > t), key=lambda o: o[0],
                          default=(math.inf, None))
            if t < stop:
                start_limit(t, rate)
            continue
        def gap(s, y0=y0, rate=rate, t0=t0):
            return math.sin(s) - (y0 + rate * (s - t0))

        grid = np.arange(t + 1e-6, stop + 1.0, 1e-3)
        sign = np.sign([gap(s) for s in grid])
        if np.all(sign == sign[0]):
            break
        k = int(np.flatnonzero(sign != sign[0])[0])
        t = brentq(gap, grid[k - 1], grid[k], xtol=1e-15, rtol=1e-15)
        if t >= stop:
            break
        events.append((t, "follow"))
        pieces.append((t, None, t, 0.0))
        if math.cos(t) > rise or math.cos(t) < fall:
            start_limit(t, rise if math.cos(t) > rise else fall)

    def y(times):
        out = np.sin(times)
        for start, rate, t0, y0 in pieces:
            if rate is not None:
                after = times >= start
                out[after] = y0 + rate * (times[after] - t0)
            else:
                after = times >= start
                out[after] = np.sin(times[after])
        return out
    return events, y


@pytest.mark.parametrize("rise, fall", [(0.5, -0.5), (0.8, -0.6), (0.3, -0.95), (2.0, -0.1)])
def test_rate_limiter_of_a_sine_matches_the_hand_derived_answer(rise, fall):
    # Over three periods: limiting from the start (cos 0 > rise) or from an onset, catches
    # that follow, catches where u moves faster the other way (limiting again at once).
    stop = 20.0
    r = run_both(sine_with_derivative(
        [block("b", "RateLimiter", rising=rise, falling=fall)], [], stop=stop))
    expected, y = rate_limited_sine(rise, fall, stop)
    assert len(expected) >= 6
    assert_switches(r, expected)
    assert np.max(np.abs(r["y"] - y(r.time.copy()))) < 1e-13


def test_rate_limiter_on_a_fixed_step_solver_switches_once_per_instant():
    # rk4 locates nothing: a catch is seen at the step end, u already past y by O(h). It
    # is still a catch (u did not jump), so the modes change as they should, within a step.
    rise, fall, h = 0.8, -0.6, 1e-3
    r = blocksim.simulate(sine_with_derivative(
        [block("b", "RateLimiter", rising=rise, falling=fall)], [], stop=20.0, solver="rk4",
        step=h))
    expected, y = rate_limited_sine(rise, fall, 20.0)
    assert_switches(r, expected, atol=h)
    assert np.max(np.abs(r["y"] - y(r.time.copy()))) < h


def test_rate_limiter_of_a_slow_sine_follows_it():
    # |du/dt| = 0.4 stays within the rates: the output is the input, with no event.
    r = run_both(sine_with_derivative([block("b", "RateLimiter", rising=0.5, falling=-0.5)],
                                      [], amplitude=0.4, stop=10.0))
    assert switches(r) == []
    np.testing.assert_array_equal(r["y"], 0.4 * np.sin(r.time))


# ----- RateLimiter: ramps and steps -----

def test_rate_limiter_of_ramps_switches_at_exact_instants():
    # u: 0 until 1, rising at 2/s to 2 at t = 2, held, falling at 3/s from t = 4 to -1 at
    # t = 5; du the matching steps. With rates +-1: limited up from 1 (y = t - 1) to the
    # catch at 3, following, limited down from 4 (y = 2 - (t - 4)) to the catch at 7.
    d = diagram([table([0.0, 1.0, 2.0, 4.0, 5.0], [0.0, 0.0, 2.0, 2.0, -1.0]),
                 block("du", "FromTable", times=[1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 5.0, 5.0],
                       values=[0.0, 2.0, 2.0, 0.0, 0.0, -3.0, -3.0, 0.0]),
                 block("b", "RateLimiter", rising=1.0, falling=-1.0), block("y", "Output")],
                [("u.y", "b.u"), ("du.y", "b.du"), ("b.y", "y.u")], stop=8.0,
                output_interval=0.01, **TIGHT)
    r = run_both(d)
    assert_switches(r, [(1.0, "rising limit"), (3.0, "follow"), (4.0, "falling limit"),
                        (7.0, "follow")], atol=1e-14)
    t = r.time
    expected = np.interp(t, [0.0, 1.0, 3.0, 4.0, 7.0, 8.0], [0.0, 0.0, 2.0, 2.0, -1.0, -1.0])
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-13)


def test_rate_limiter_of_steps_without_a_derivative_port():
    # derivative = zero: u jumps 0 -> 2 at 1 and 2 -> -1 at 4; rising 1, falling -0.5.
    d = diagram([table([1.0, 1.0, 4.0, 4.0], [0.0, 2.0, 2.0, -1.0]),
                 block("b", "RateLimiter", rising=1.0, falling=-0.5, derivative="zero"),
                 block("i", "Integrator"), block("y", "Output")],
                [("u.y", "b.u"), ("b.y", "y.u"), ("b.y", "i.u")], stop=11.0,
                output_interval=0.01, **TIGHT)
    r = run_both(d)
    assert_switches(r, [(1.0, "rising limit"), (3.0, "follow"), (4.0, "falling limit"),
                        (10.0, "follow")], atol=1e-14)
    expected = np.interp(r.time, [0.0, 1.0, 3.0, 4.0, 10.0, 11.0], [0.0, 0.0, 2.0, 2.0, -1.0, -1.0])
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-13)
    # The jump is followed at the limit rate: its left and right limits are equal.
    left, right = r["y"][np.flatnonzero(r.time == 4.0)[:2]]
    assert left == right == 2.0


def test_rate_limiter_reverses_at_a_jump_across_its_output():
    # Limited up from 0 towards 3 (u jumped at 1); at 2, with y = 1, u jumps down to 0.5:
    # y turns there and falls at the limit rate to meet u at 2.5.
    d = diagram([table([1.0, 1.0, 2.0, 2.0], [0.0, 3.0, 3.0, 0.5]),
                 block("b", "RateLimiter", rising=1.0, falling=-1.0, derivative="zero"),
                 block("i", "Integrator"), block("y", "Output")],
                [("u.y", "b.u"), ("b.y", "y.u"), ("b.y", "i.u")], stop=4.0,
                output_interval=0.01, **TIGHT)
    r = run_both(d)
    assert_switches(r, [(1.0, "rising limit"), (2.0, "falling limit"), (2.5, "follow")],
                    atol=1e-15)
    expected = np.interp(r.time, [0.0, 1.0, 2.0, 2.5, 4.0], [0.0, 0.0, 1.0, 0.5, 0.5])
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-14)


def test_rate_limiter_starts_from_its_initial_output():
    d = diagram([block("k", "Constant", value=[0.0, 1.0]),
                 block("b", "RateLimiter", rising=2.0, falling=[-0.5, -4.0], initial=[1.0, 1.0],
                       derivative="zero"),
                 block("i", "Integrator", x0=[0.0, 0.0]), block("y", "Output")],
                [("k.y", "b.u"), ("b.y", "y.u"), ("b.y", "i.u")], stop=3.0, output_interval=0.5,
                **TIGHT)
    r = run_both(d)
    assert_switches(r, [(0.0, "falling limit"), (2.0, "follow")], atol=1e-15)
    np.testing.assert_allclose(r["y"][:, 0], np.maximum(1.0 - 0.5 * r.time, 0.0), atol=1e-14)
    assert np.all(r["y"][:, 1] == 1.0)  # already at u: nothing to limit


# ----- Backlash -----

def test_backlash_of_a_sine_matches_the_hand_derived_answer():
    # Width 1 (half-width 0.5), y(0) = 0: held until sin t = 0.5 at pi/6, pushed up
    # (y = sin t - 0.5) to the peak at pi/2, held at 0.5 until sin t = 0 at pi, pushed down
    # (y = sin t + 0.5) to the trough at 3 pi/2, held at -0.5 until 2 pi, and so on.
    stop = 10.0
    r = run_both(sine_with_derivative([block("b", "Backlash", width=1.0)], [], stop=stop))
    pi = math.pi
    assert_switches(r, [(pi / 6, "engage"), (pi / 2, "disengage"), (pi, "engage"),
                        (3 * pi / 2, "disengage"), (2 * pi, "engage"),
                        (5 * pi / 2, "disengage"), (3 * pi, "engage")])
    t, u = r.time, np.sin(r.time)
    phase = np.mod(t, 2 * pi)
    expected = np.select(
        [t < pi / 6, phase < pi / 2, phase < pi, phase < 3 * pi / 2, True],
        [0.0, u - 0.5, 0.5, u + 0.5, -0.5])
    expected[(t >= 2 * pi) & (phase < pi / 2)] = (u - 0.5)[(t >= 2 * pi) & (phase < pi / 2)]
    # (an event's left-limit row, an ulp past the instant, may sit across a phase boundary
    # of this formula by roundoff; the output is continuous there)
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-14)


def test_backlash_of_steps_without_a_derivative_port():
    # u jumps 0 -> 2 at 1 (the output is pushed to 1.5 and stays in contact), 2 -> 1.8 at
    # 2 (back inside the band [1, 2]: released), 1.8 -> -1 at 3 (pushed down to -0.5).
    d = diagram([table([1.0, 1.0, 2.0, 2.0, 3.0, 3.0], [0.0, 2.0, 2.0, 1.8, 1.8, -1.0]),
                 block("b", "Backlash", width=1.0, derivative="zero"), block("i", "Integrator"),
                 block("y", "Output")], [("u.y", "b.u"), ("b.y", "y.u"), ("b.y", "i.u")],
                stop=4.0, output_interval=0.25, **TIGHT)
    r = run_both(d)
    assert switches(r) == [(1.0, "engage"), (2.0, "disengage"), (3.0, "engage")]
    t = r.time
    right = np.r_[False, t[1:] == t[:-1]]  # the right limit of an event is its second row
    expected = np.where((t > 3.0) | ((t == 3.0) & right), -0.5,
                        np.where((t > 1.0) | ((t == 1.0) & right), 1.5, 0.0))
    np.testing.assert_array_equal(r["y"], expected)


def test_backlash_released_by_a_jump_back_holds_where_it_was():
    # u = t, jumping back by 0.8 at t = 2 while it pushes: released at 1.5, the band is
    # [1, 2], u = t - 0.8 reaches its top at 2.8 and pushes again.
    d = diagram([table([0.0, 2.0, 2.0, 4.0], [0.0, 2.0, 1.2, 3.2]),
                 block("du", "Constant", value=1.0), block("b", "Backlash", width=1.0),
                 block("i", "Integrator"), block("y", "Output")],
                [("u.y", "b.u"), ("du.y", "b.du"), ("b.y", "y.u"), ("b.y", "i.u")],
                stop=4.0, output_interval=0.01, **TIGHT)
    r = run_both(d)
    assert_switches(r, [(0.5, "engage"), (2.0, "disengage"), (2.8, "engage")], atol=1e-14)
    expected = np.interp(r.time, [0.0, 0.5, 2.0, 2.8, 4.0], [0.0, 0.0, 1.5, 1.5, 2.7])
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-14)


def test_backlash_starting_outside_its_band_is_pushed_at_the_start():
    d = diagram([block("k", "Constant", value=[2.0, -2.0, 0.2]),
                 block("b", "Backlash", width=[1.0, 2.0, 1.0], derivative="zero"),
                 block("y", "Output")], [("k.y", "b.u"), ("b.y", "y.u")], stop=1.0)
    r = blocksim.simulate(d)
    np.testing.assert_array_equal(r["y"], [[1.5, -1.0, 0.0]] * len(r.time))


def test_backlash_without_a_derivative_follows_a_moving_input_without_chattering():
    # Found by the fuzzer: derivative = "zero" with a ramp (u moves between jumps, which
    # the parameter says it does not). Released at once after each push, the block chattered
    # (events 1e-13 s apart until the event budget). It now stays in contact and follows:
    # y = u - width/2 from where the ramp leaves the band, with one engagement.
    d = diagram([block("u", "Ramp", slope=1.0, start=0.5, initial=0.0),
                 block("b", "Backlash", width=1.0, derivative="zero"), block("i", "Integrator"),
                 block("y", "Output")],
                [("u.y", "b.u"), ("b.y", "y.u"), ("b.y", "i.u")], stop=2.0, output_interval=0.25,
                **TIGHT)
    r = run_both(d)
    assert switches(r) == [(pytest.approx(1.0, abs=1e-12), "engage")]
    np.testing.assert_allclose(r["y"], np.maximum(r.time - 1.0, 0.0), rtol=0, atol=1e-12)


# ----- parameters -----

@pytest.mark.parametrize("block_type, params, message", [
    ("RateLimiter", dict(rising=0.0), "parameter 'rising'"),
    ("RateLimiter", dict(rising=[1.0, -1.0]), "parameter 'rising'"),
    ("RateLimiter", dict(falling=1.0), "parameter 'falling'"),
    ("RateLimiter", dict(falling="-inf"), "parameter 'falling'"),
    ("RateLimiter", dict(initial="nan"), "parameter 'initial'"),
    ("RateLimiter", dict(rising=[1.0, 2.0], initial=[0.0, 0.0, 0.0]), "parameter"),
    ("Backlash", dict(width=-1.0), "parameter 'width'"),
    ("Backlash", dict(width="inf"), "parameter 'width'"),
    ("Backlash", dict(derivative="estimate"), "parameter 'derivative'"),
])
def test_bad_parameters_are_refused_naming_the_block_and_parameter(block_type, params, message):
    d = diagram([block("c", "Constant"), block("bad", block_type, derivative="zero", **params)
                 if "derivative" not in params else block("bad", block_type, **params)],
                [("c.y", "bad.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "bad" and message in str(info.value)


def test_an_unconnected_derivative_port_is_named():
    d = diagram([block("c", "Constant"), block("bad", "RateLimiter")], [("c.y", "bad.u")])
    with pytest.raises(CompileError, match="'du' is not connected") as info:
        blocksim.compile(d)
    assert info.value.block == "bad"
