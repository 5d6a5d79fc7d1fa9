"""Derivative (filtered: closed forms of tau y' + y = u' for ramps, sines and a step;
difference: the quotient at each hit) and ZeroPole (against scipy: the step response of
its state-space realisation, and solve_ivp at tight tolerance for a sine input), on both
backends, and their parameter errors."""
import math

import numpy as np
import pytest
from both_backends import SIN, run_both
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError

scipy_signal = pytest.importorskip("scipy.signal")
from scipy.integrate import solve_ivp  # noqa: E402

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def through(source_blocks, wires_to_u, under_test, stop, **settings):
    """A diagram feeding `src.y` into block `b` (under test), logging b.y as `y`."""
    return diagram(source_blocks + [under_test, block("y", "Output")],
                   wires_to_u + [("src.y", "b.u"), ("b.y", "y.u")], stop=stop,
                   **{**TIGHT, "output_interval": 0.01, **settings})


# ----- Derivative, filtered -----

def test_filtered_derivative_of_a_ramp_is_the_slope_through_a_first_order_lag():
    a, b, tau = 3.0, -1.0, 0.05
    d = through([block("src", "Ramp", slope=a, start=0.0, initial=b)], [],
                block("b", "Derivative", tau=tau), stop=2.0)
    r = run_both(d, atol=1e-10)  # y = (u - x)/tau: the state's roundoff times 1/tau
    np.testing.assert_allclose(r["y"], a * (1.0 - np.exp(-r.time / tau)), rtol=0, atol=1e-9)
    assert r["y"][0] == 0.0  # the state starts at u(0)
    assert abs(r["y"][-1] - a) < 1e-10  # 40 tau later: the slope, to the tolerance / tau


def test_filtered_derivative_of_a_sine_matches_the_closed_form():
    tau = 0.1
    d = through([block("src", "Sine", frequency=SIN)], [], block("b", "Derivative", tau=tau),
                stop=10.0)
    r = run_both(d, atol=1e-10)
    t = r.time
    exact = (np.cos(t) + tau * np.sin(t) - np.exp(-t / tau)) / (1.0 + tau ** 2)
    np.testing.assert_allclose(r["y"], exact, rtol=0, atol=1e-9)
    late = t > 3.0  # the transient gone: amplitude 1/sqrt(1 + tau^2), lag atan(tau)
    np.testing.assert_allclose(r["y"][late], np.cos(t[late] - math.atan(tau)) /
                               math.sqrt(1.0 + tau ** 2), rtol=0, atol=1e-9)


def test_filtered_derivative_of_a_step_is_a_pulse_of_area_the_jump():
    tau, jump = 0.02, 2.0
    d = through([block("src", "Step", time=0.5, before=1.0, after=1.0 + jump),
                 block("watch", "Integrator")], [("src.y", "watch.u")],
                block("b", "Derivative", tau=tau), stop=1.0)
    r = run_both(d, atol=1e-9)
    t, y = r.time, r["y"]
    after = t > 0.5
    np.testing.assert_allclose(y[after], jump / tau * np.exp(-(t[after] - 0.5) / tau),
                               rtol=1e-8, atol=1e-9)
    assert np.all(y[t < 0.5] == 0.0)
    left, right = y[t == 0.5]
    assert left == 0.0 and right == pytest.approx(jump / tau, rel=1e-12)


def test_filtered_derivative_elementwise_on_a_vector():
    d = through([block("src", "Ramp", slope=[1.0, -2.0], start=0.0, initial=[0.0, 5.0])], [],
                block("b", "Derivative", tau=0.01), stop=1.0)
    r = run_both(d, atol=1e-10)
    np.testing.assert_allclose(r["y"][-1], [1.0, -2.0], atol=1e-12)


# ----- Derivative, difference quotient -----

def test_difference_quotient_at_each_hit_and_held_between():
    period = 0.1
    d = through([block("clock", "Clock"), block("src", "Product", ops="**")],
                [("clock.y", "src.u1"), ("clock.y", "src.u2")],
                block("b", "Derivative", sample_time=period), stop=1.0)
    r = run_both(d, events_compiled=False)
    t, y = r.time, r["y"]
    hits = np.round(t / period) * period
    on_hit = np.abs(t - hits) < 1e-12
    k = np.floor(t / period + 1e-9)
    expected = np.where(k >= 1, 2.0 * (k * period) - period, 0.0)  # (t_k^2 - t_{k-1}^2)/T
    # each hit's right limit (and the rows held after it) reads the new quotient
    between = ~on_hit
    np.testing.assert_allclose(y[between], expected[between], rtol=0, atol=1e-13)
    for tk in np.arange(1, 10) * period:
        rows = np.flatnonzero(np.abs(t - tk) < 1e-12)
        assert y[rows[-1]] == pytest.approx(2.0 * tk - period, abs=1e-13)
    assert y[0] == 0.0  # the first hit has no previous sample


def test_difference_quotient_is_exact_for_a_ramp():
    d = through([block("src", "Ramp", slope=-4.0, start=0.0, initial=2.0)], [],
                block("b", "Derivative", sample_time=[0.25, 0.125]), stop=2.0)
    r = run_both(d, events_compiled=False)
    t, y = r.time, r["y"]
    assert np.all(y[t < 0.375 - 1e-12] == 0.0)  # nothing before the second hit
    np.testing.assert_array_equal(y[t > 0.375 + 1e-12], -4.0)


# ----- ZeroPole -----

ZPK = ([-3.0], [-1.0, -2 + 3j, -2 - 3j], 2.0)


def zero_pole(zeros="-3", poles="-1, -2+3j, -2-3j", gain=2.0, src=None, stop=5.0):
    src = src or block("src", "Constant", value=1.0)
    return through([src], [], block("b", "ZeroPole", zeros=zeros, poles=poles, gain=gain),
                   stop=stop)


def test_zero_pole_step_response_matches_scipy():
    r = run_both(zero_pole())
    _, y = scipy_signal.step(scipy_signal.ZerosPolesGain(*ZPK), T=r.time)
    np.testing.assert_allclose(r["y"], y, rtol=0, atol=1e-11)


def test_zero_pole_sine_response_matches_solve_ivp():
    zeros, poles, gain = [-0.5 + 1j, -0.5 - 1j], [-1.0, -0.2 + 2j, -0.2 - 2j, -4.0], 3.0
    d = zero_pole("-0.5+1i, -0.5-1i", "-1, -0.2+2j, -0.2-2j, -4", gain,
                  src=block("src", "Sine", frequency=SIN), stop=8.0)
    r = run_both(d)
    A, B, C, D = scipy_signal.zpk2ss(zeros, poles, gain)
    ref = solve_ivp(lambda t, x: A @ x + B[:, 0] * math.sin(t), (0.0, 8.0),
                    np.zeros(len(poles)), method="DOP853", rtol=1e-13, atol=1e-14,
                    dense_output=True)
    y = (C @ ref.sol(r.time)).ravel() + D[0, 0] * np.sin(r.time)
    np.testing.assert_allclose(r["y"], y, rtol=0, atol=1e-10)


def test_zero_pole_with_as_many_zeros_as_poles_feeds_through():
    # (s + 2)/(s + 1): y = u - e^{-t} for a unit step from 0
    r = run_both(zero_pole(zeros="-2", poles="-1", gain=1.0, stop=3.0))
    np.testing.assert_allclose(r["y"], 2.0 - np.exp(-r.time), rtol=0, atol=1e-10)
    model = blocksim.compile(zero_pole(zeros="-2", poles="-1", gain=1.0))
    assert model.n_states == 1


def test_zero_pole_roots_may_be_formulas_of_diagram_parameters():
    d = diagram([block("src", "Constant", value=1.0),
                 block("b", "ZeroPole", zeros="", poles="-a, -2*a", gain="2*a*a"),
                 block("y", "Output")], [("src.y", "b.u"), ("b.y", "y.u")],
                parameters={"a": 1.5}, stop=6.0, output_interval=0.01, **TIGHT)
    r = run_both(d)
    t, a = r.time, 1.5  # 2a^2/((s + a)(s + 2a)): 1 - 2 e^{-at} + e^{-2at}
    np.testing.assert_allclose(r["y"], 1.0 - 2.0 * np.exp(-a * t) + np.exp(-2 * a * t),
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("params, message", [
    (dict(zeros="-1, -2", poles="-1"), "improper"),
    (dict(poles="-1+2j"), "conjugate pairs"),
    (dict(poles="-1+2j, -1-3j"), "conjugate pairs"),
    (dict(zeros="-1 +", poles="-1"), "parameter 'zeros'"),
    (dict(poles="-1, , -2"), "parameter 'poles': an empty item"),
    (dict(poles="inf"), "parameter 'poles'"),
    (dict(poles="nan"), "parameter 'poles'"),
    (dict(poles="vec"), "is an array"),
    (dict(gain="inf"), "parameter 'gain'"),
])
def test_zero_pole_bad_parameters_name_block_and_parameter(params, message):
    d = diagram([block("c", "Constant"), block("bad", "ZeroPole", **params)], [("c.y", "bad.u")],
                parameters={"vec": [1.0, 2.0]})
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "bad" and message in str(info.value)


@pytest.mark.parametrize("params, message", [
    (dict(tau=0.0), "parameter 'tau' must be > 0"),
    (dict(tau=-1.0), "parameter 'tau' must be > 0"),
    (dict(tau="nan"), "parameter 'tau'"),
    (dict(sample_time=[0.1, 0.2]), "parameter 'sample_time'"),
    (dict(sample_time=-2.0), "parameter 'sample_time'"),
])
def test_derivative_bad_parameters_name_block_and_parameter(params, message):
    d = diagram([block("c", "Constant"), block("bad", "Derivative", **params)], [("c.y", "bad.u")])
    with pytest.raises(CompileError) as info:
        blocksim.compile(d)
    assert info.value.block == "bad" and message in str(info.value)
