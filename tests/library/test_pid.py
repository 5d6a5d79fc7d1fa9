"""The PID block, discrete and continuous, against independent recursions, closed forms and
solve_ivp: the discrete PI acceptance loop, integrator and filter methods, both forms,
saturation, back-calculation and clamping anti-windup (including a sliding point), resets,
rates, offsets, vectors and refused parameters."""
import importlib.util
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import blocksim
from blocksim.compiler import compile_diagram
from blocksim.errors import CompileError
from blocksim.blocktypes.sampletime import CONTINUOUS_TIME, SampleTime
from builders import block, diagram

HAS_NUMBA = importlib.util.find_spec("numba") is not None
TIGHT = dict(rtol=1e-13, atol=1e-14)


def at(results, name, times):
    """The right limit (last row) of a logged signal at each time."""
    index = {}
    for i, t in enumerate(results.time.tolist()):
        index[t] = i
    missing = [t for t in times if t not in index]
    assert not missing, f"no rows at {missing[:3]}"
    return results[name][[index[t] for t in times]]


def hits(period, count, offset=0.0):
    p, o = Fraction(period).limit_denominator(10 ** 6), Fraction(offset).limit_denominator(1000)
    return [float(o + k * p) for k in range(count)]


def closed_loop(pid_params, stop, **settings):
    """r = 1, e = r - y into the PID, plant x' = -x + u, y = x."""
    blocks = [block("r", "Constant", value=1.0), block("err", "Sum", signs="+-"),
              block("pid", "PID", **pid_params), block("plant", "Integrator"),
              block("net", "Sum", signs="+-"), block("y", "Output"), block("u", "Output")]
    wires = [("r.y", "err.u1"), ("plant.y", "err.u2"), ("err.y", "pid.e"), ("pid.u", "net.u1"),
             ("plant.y", "net.u2"), ("net.y", "plant.u"), ("plant.y", "y.u"), ("pid.u", "u.u")]
    return diagram(blocks, wires, stop=stop, **settings)


def open_loop(error_block, pid_params, stop, **settings):
    """The PID driven by a given error signal (block id "e")."""
    blocks = [error_block, block("pid", "PID", **pid_params), block("u", "Output")]
    return diagram(blocks, [("e.y", "pid.e"), ("pid.u", "u.u")], stop=stop, **settings)


def error_step(before=1.0, after=-0.5, time=3.0):
    return block("e", "Step", time=time, before=before, after=after)


# ----- discrete -----

def test_discrete_pi_is_exactly_the_acceptance_recursion():
    """Kp = 2, Ki = 5, Ts = 1e-3, forward Euler: u_k = Kp e_k + I_k, I_(k+1) = I_k + Ts Ki e_k,
    with e_k = 1 - y(t_k) and the plant x' = -x + u exact over a period of constant u."""
    r = blocksim.simulate(closed_loop(dict(P=2.0, I=5.0, sample_time=1e-3), stop=2.0,
                                      output_interval=0.5, **TIGHT))
    n = 2001
    decay = math.exp(-1e-3)
    y, integral, ys, us = 0.0, 0.0, [], []
    for _ in range(n):
        e = 1.0 - y
        u = 2.0 * e + integral
        ys.append(y)
        us.append(u)
        integral = integral + 1e-3 * 5.0 * e
        y = decay * y + (1.0 - decay) * u
    times = hits(1e-3, n)
    assert r.stats["hits"] == n
    assert np.max(np.abs(at(r, "u", times) - us)) < 1e-9
    assert np.max(np.abs(at(r, "y", times) - ys)) < 1e-9
    inside = (r.time > 0.5) & (r.time < 0.5 + 1e-3)  # held between hits
    assert np.all(r["u"][inside] == at(r, "u", [0.5])[0])


def pid_by_output_equations(e, T, P, I, D, N, imethod, fmethod, ic_i=0.0, ic_f=0.0):
    """Simulink's output equations of the two Discrete-Time Integrators inside a parallel
    discrete PID: i(0) = IC, i(n) = i(n-1) + T I e(n-1) (FE), T I e(n) (BE) or T I (e(n) +
    e(n-1))/2 (TR); the same for the filter integrator F of d = N (D e - F)."""
    us, i, f, d = [], ic_i, ic_f, 0.0
    for n, en in enumerate(e):
        if n:
            i += {"forward-euler": T * I * e[n - 1], "backward-euler": T * I * en,
                  "trapezoidal": T * I * (en + e[n - 1]) / 2}[imethod]
            if fmethod == "forward-euler":
                f += T * d
            elif fmethod == "backward-euler":  # F(n) = F(n-1) + T N (D e(n) - F(n))
                f = (f + T * N * D * en) / (1 + T * N)
            else:  # F(n) = F(n-1) + T/2 (d(n) + d(n-1))
                f = (f + T / 2 * d + T / 2 * N * D * en) / (1 + T * N / 2)
        d = N * (D * en - f)
        us.append(P * en + i + d)
    return np.array(us)


@pytest.mark.parametrize("imethod, fmethod", [
    ("forward-euler", "forward-euler"), ("backward-euler", "trapezoidal"),
    ("trapezoidal", "backward-euler"),
])
def test_discrete_methods_follow_the_integrator_output_equations(imethod, fmethod):
    T, P, I, D, N = 0.1, 1.5, 2.0, 0.05, 8.0
    params = dict(P=P, I=I, D=D, N=N, sample_time=T, integrator_method=imethod,
                  filter_method=fmethod, initial_integrator=0.25, initial_filter=-0.1)
    r = blocksim.simulate(open_loop(block("e", "Sine", frequency=1 / 1.7), params, stop=3.0))
    times = hits(T, 31)
    e = np.sin(2 * np.pi * np.array(times) / 1.7)
    expected = pid_by_output_equations(e, T, P, I, D, N, imethod, fmethod, 0.25, -0.1)
    np.testing.assert_allclose(at(r, "u", times), expected, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("form, P, D", [("parallel", 0.0, 0.7), ("ideal", 2.0, 0.35)])
def test_a_forward_euler_filter_with_n_one_over_t_is_a_plain_backward_difference(form, P, D):
    """The describe text's recipe: N = 1/T, a forward-euler filter and initial_filter the
    derivative gain times the error before the first hit give d(k) = Kd (e(k) - e(k-1))/T
    exactly (Kd = D, or P D in ideal form), from the first hit on."""
    T, period = 0.1, 1.7
    kd = D * (P if form == "ideal" else 1.0)
    before = math.sin(-2 * math.pi * T / period)
    params = dict(form=form, P=P, I=0.0, D=D, N=1 / T, sample_time=T,
                  filter_method="forward-euler", initial_filter=kd * before)
    r = blocksim.simulate(open_loop(block("e", "Sine", frequency=1 / period), params, stop=3.0))
    times = hits(T, 31)
    e = np.sin(2 * np.pi * np.array(times) / period)
    previous = np.concatenate([[before], e[:-1]])
    expected = P * e + kd * (e - previous) / T
    np.testing.assert_allclose(at(r, "u", times), expected, rtol=0, atol=1e-13)


def test_ideal_form_is_the_parallel_form_with_scaled_gains():
    ideal = dict(form="ideal", P=2.0, I=2.5, D=0.05, N=10.0)
    parallel = dict(P=2.0, I=5.0, D=0.1, N=10.0)
    for extra in (dict(sample_time=0.1), dict()):
        a = blocksim.simulate(closed_loop({**ideal, **extra}, stop=2.0, **TIGHT))
        b = blocksim.simulate(closed_loop({**parallel, **extra}, stop=2.0, **TIGHT))
        np.testing.assert_allclose(a["u"], b["u"], rtol=1e-10, atol=1e-12)


def discrete_open_loop_reference(antiwindup, T=0.5, count=9, kb=2.0):
    """u_k of P = I = 1, upper = 2, forward Euler, e = 1 then -0.5 from t = 3."""
    s, us = 0.0, []
    for k in range(count):
        e = 1.0 if k * T < 3.0 else -0.5
        v = e + s
        u = min(v, 2.0)
        us.append(u)
        if antiwindup == "clamping" and v > 2.0 and e > 0.0:
            continue  # integrator input 0 at a clamped hit
        s += T * e + (T * kb * (u - v) if antiwindup == "back-calculation" else 0.0)
    return us


@pytest.mark.parametrize("antiwindup", ["none", "clamping", "back-calculation"])
def test_discrete_anti_windup(antiwindup):
    r = blocksim.simulate(open_loop(error_step(), dict(P=1.0, I=1.0, upper=2.0, Kb=2.0,
                                                       antiwindup=antiwindup, sample_time=0.5),
                                    stop=4.0))
    expected = discrete_open_loop_reference(antiwindup)
    assert list(at(r, "u", hits(0.5, 9))) == pytest.approx(expected, abs=1e-15)
    assert expected[6] < 2.0 if antiwindup != "none" else expected[6] == 2.0  # windup shows


def test_discrete_clamping_with_a_backward_euler_integrator():
    # BE: i(k) = i(k-1) + T e(k); at t = 1.5 the sum 1.5 + 1 = 2.5 would pass the limit with
    # e > 0, so that hit's integrator input is 0: the integral stays 1 until e turns
    r = blocksim.simulate(open_loop(error_step(), dict(P=1.0, I=1.0, upper=2.0,
                                                       antiwindup="clamping", sample_time=0.5,
                                                       integrator_method="backward-euler"),
                                    stop=4.0))
    assert list(at(r, "u", hits(0.5, 9))) == [1.0, 1.5, 2.0, 2.0, 2.0, 2.0, 0.25, 0.0, -0.25]


def test_discrete_reset_and_offset():
    blocks = [block("e", "Constant", value=1.0), block("trigger", "Step", time=1.0),
              block("pid", "PID", P=0.0, I=1.0, initial_integrator=2.0, external_reset="rising",
                    sample_time=[0.5, 0.25]),
              block("u", "Output")]
    wires = [("e.y", "pid.e"), ("trigger.y", "pid.reset"), ("pid.u", "u.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=2.5, output_interval=0.05))
    assert np.all(r["u"][r.time < 0.25] == 0.0)  # before the first hit
    times = hits(0.5, 5, offset=0.25)  # 0.25, 0.75, 1.25 (reset seen: 1 since t = 1), ...
    assert list(at(r, "u", times)) == [2.0, 2.5, 2.0, 2.5, 3.0]


def test_discrete_vector_pid_is_elementwise():
    r = blocksim.simulate(open_loop(block("e", "Constant", value=[1.0, -2.0]),
                                    dict(P=0.5, I=1.0, sample_time=0.25), stop=1.0))
    times = hits(0.25, 5)
    expected = [[v * (0.5 + 0.25 * k) for v in (1.0, -2.0)] for k in range(5)]
    np.testing.assert_allclose(at(r, "u", times), expected, rtol=1e-15)


# ----- continuous -----

@pytest.mark.parametrize("form", ["parallel", "ideal"])
def test_continuous_pid_matches_solve_ivp(form):
    P, I, D, N = 2.0, 5.0, 0.3, 20.0
    r = blocksim.simulate(closed_loop(dict(form=form, P=P, I=I, D=D, N=N, initial_integrator=0.1,
                                           initial_filter=0.05), stop=3.0,
                                      output_interval=0.05, **TIGHT))
    scale, kp = (P, 1.0) if form == "ideal" else (1.0, P)

    def rhs(t, s):
        x, xi, xf = s
        q = scale * (1.0 - x)
        u = kp * q + xi + N * (D * q - xf)
        return [-x + u, I * q, N * (D * q - xf)]

    ref = solve_ivp(rhs, (0.0, 3.0), [0.0, 0.1, 0.05], method="DOP853", rtol=1e-13,
                    atol=1e-15, dense_output=True).sol(r.time)
    np.testing.assert_allclose(r["y"], ref[0], rtol=1e-12, atol=1e-12)


def test_continuous_saturation_is_event_exact():
    # e = 1: v = 1 + t reaches the limit 2 at t = 1 exactly; after e = -0.5 from t = 3,
    # v = 3 - 0.5 - 0.5 (t - 3) leaves it at t = 4 (no anti-windup: the integral wound up)
    r = blocksim.simulate(open_loop(error_step(), dict(P=1.0, I=1.0, upper=2.0), stop=6.0,
                                    output_interval=0.25, **TIGHT))
    located = [e.time for e in r.events if e.kind == "state"]
    assert located[0] == pytest.approx(1.0, abs=1e-12)
    assert located[-1] == pytest.approx(4.0, abs=1e-12)
    t = r.time
    expected = np.where(t < 3.0, np.minimum(1.0 + t, 2.0), np.minimum(2.5 - 0.5 * (t - 3.0), 2.0))
    after_step = np.flatnonzero(t == 3.0)[-1]  # the right limit at the step
    expected[after_step] = 2.0
    np.testing.assert_allclose(r["u"], expected, rtol=0, atol=1e-12)
    assert r["u"].max() <= 2.0


def test_continuous_clamping_stops_the_integrator_while_saturated():
    r = blocksim.simulate(open_loop(error_step(), dict(P=1.0, I=1.0, upper=2.0,
                                                       antiwindup="clamping"), stop=6.0,
                                    output_interval=0.25, **TIGHT))
    kinds = [(e.kind, e.time) for e in r.events if e.kind in ("clamp", "release")]
    assert [k for k, _ in kinds] == ["clamp", "release"]
    assert kinds[0][1] == pytest.approx(1.0, abs=1e-12) and kinds[1][1] == 3.0
    t = r.time
    # the integral stays 1 while clamped; from t = 3, u = -0.5 + 1 - 0.5 (t - 3)
    expected = np.where(t < 3.0, np.minimum(1.0 + t, 2.0), 0.5 - 0.5 * (t - 3.0))
    expected[np.flatnonzero(t == 3.0)[0]] = 2.0  # the left limit at the step
    np.testing.assert_allclose(r["u"], expected, rtol=0, atol=1e-12)


def test_continuous_back_calculation_bleeds_the_integral():
    # saturated on [1, 3]: xI' = 1 + Kb (2 - (1 + xI)), so xI = 1.5 - 0.5 exp(-2 (t - 1));
    # from t = 3 unsaturated again: u = -0.5 + xI(3) - 0.5 (t - 3)
    r = blocksim.simulate(open_loop(error_step(), dict(P=1.0, I=1.0, upper=2.0, Kb=2.0,
                                                       antiwindup="back-calculation"),
                                    stop=6.0, output_interval=0.25, **TIGHT))
    t = r.time
    integral_at_3 = 1.5 - 0.5 * math.exp(-4.0)
    expected = np.where(t < 3.0, np.minimum(1.0 + t, 2.0),
                        -0.5 + integral_at_3 - 0.5 * (t - 3.0))
    expected[np.flatnonzero(t == 3.0)[0]] = 2.0
    np.testing.assert_allclose(r["u"], expected, rtol=0, atol=1e-11)


def test_clamping_in_a_closed_loop_releases_at_the_analytic_time():
    """P = 2, I = 1, upper = 1.5: saturated and clamped from the start (x = 1.5 (1 - e^-t),
    integral 0) until v = 2 (1 - x) falls to 1.5, at t = ln 1.2; then the linear loop."""
    r = blocksim.simulate(closed_loop(dict(P=2.0, I=1.0, upper=1.5, antiwindup="clamping"),
                                      stop=5.0, output_interval=0.05, **TIGHT))
    kinds = [(e.kind, e.time) for e in r.events if e.kind in ("clamp", "release")]
    t1 = math.log(1.2)
    assert kinds == [("clamp", 0.0), ("release", pytest.approx(t1, abs=1e-12))]

    def rhs(t, s):
        x, xi = s
        return [-x + 2.0 * (1.0 - x) + xi, 1.0 - x]

    after = r.time > t1
    ref = solve_ivp(rhs, (t1, 5.0), [0.25, 0.0], method="DOP853", rtol=1e-13, atol=1e-15,
                    dense_output=True).sol(r.time[after])
    np.testing.assert_allclose(r["y"][after], ref[0], rtol=0, atol=1e-11)
    before = r.time < t1
    np.testing.assert_allclose(r["y"][before], 1.5 * (1 - np.exp(-r.time[before])), atol=1e-12)
    unclamped = blocksim.simulate(closed_loop(dict(P=2.0, I=1.0, upper=1.5), stop=5.0, **TIGHT))
    assert unclamped["y"].max() > r["y"].max() + 0.01  # windup overshoots more


def test_clamping_at_a_sliding_point_does_not_chatter():
    """P = 2, I = 5, upper = 1.5: when v falls back to the limit the running integrator
    pushes it out again (sliding). The block keeps integrating with the output at the limit
    (documented) instead of switching at every step: a handful of events, a settled loop."""
    r = blocksim.simulate(closed_loop(dict(P=2.0, I=5.0, upper=1.5, lower=-0.2,
                                           antiwindup="clamping"), stop=10.0, **TIGHT))
    kinds = [(e.kind, e.time) for e in r.events if e.kind in ("clamp", "release")]
    assert kinds == [("clamp", 0.0), ("release", pytest.approx(math.log(1.2), abs=1e-12))]
    assert r.stats["events"] < 20
    assert np.all(r["u"] <= 1.5) and np.all(r["u"] >= -0.2)
    sliding = (r.time > math.log(1.2)) & (r.time < 1.0)
    assert np.all(r["u"][sliding] == 1.5)  # held at the limit while the integral runs
    assert r["y"][-1] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("edge, expected", [
    # e = 1, P = 0, I = 1, initial 2; the reset input is 1 on [1, 2)
    ("rising", lambda t: 2.0 + np.where(t < 1.0, t, t - 1.0)),
    ("falling", lambda t: 2.0 + np.where(t < 2.0, t, t - 2.0)),
    ("either", lambda t: 2.0 + np.where(t < 1.0, t, np.where(t < 2.0, t - 1.0, t - 2.0))),
    # level: both states held at their initial values while the input is nonzero, so the
    # derivative term reads N (D e - initial_filter) = 50 there
    ("level", lambda t: 2.0 + np.where(t < 1.0, t, np.where(t < 2.0, 50.0, t - 2.0))),
])
def test_continuous_reset(edge, expected):
    blocks = [block("e", "Constant", value=1.0), block("on", "Step", time=1.0),
              block("off", "Step", time=2.0), block("trigger", "Sum", signs="+-"),
              block("pid", "PID", P=0.0, I=1.0, D=0.5, initial_integrator=2.0,
                    external_reset=edge),
              block("u", "Output")]
    wires = [("e.y", "pid.e"), ("on.y", "trigger.u1"), ("off.y", "trigger.u2"),
             ("trigger.y", "pid.reset"), ("pid.u", "u.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=3.0, output_interval=0.125, **TIGHT))
    # the filter of D = 0.5 (N = 100) adds 50 exp(-100 (t - t_reset)): check the integral
    # part where the filter has decayed, and the reset events
    settled = np.array([np.all(np.abs(ts - np.array([0.0, 1.0, 2.0])) > 0.4) for ts in r.time])
    np.testing.assert_allclose(r["u"][settled], expected(r.time[settled]), rtol=0, atol=1e-9)
    fired = [e.time for e in r.events if e.kind == "reset"]
    assert fired == {"rising": [1.0], "falling": [2.0], "either": [1.0, 2.0],
                     "level": [1.0]}[edge]


def test_continuous_vector_pid():
    r = blocksim.simulate(open_loop(block("e", "Constant", value=[1.0, -1.0]),
                                    dict(P=1.0, I=2.0, upper=2.0, lower=-3.0), stop=2.0,
                                    output_interval=0.25, **TIGHT))
    t = r.time[:, None]
    expected = np.clip(np.array([1.0, -1.0]) * (1.0 + 2.0 * t), -3.0, 2.0)
    np.testing.assert_allclose(r["u"], expected, rtol=0, atol=1e-12)


# ----- rates and parameters -----

def test_rates_of_continuous_discrete_and_inherited_pids():
    blocks = [block("c", "Clock"), block("h", "ZeroOrderHold", sample_time=0.2),
              block("a", "PID"), block("b", "PID", sample_time=[0.5, 0.1]),
              block("i", "PID", sample_time=-1),
              block("ya", "Output"), block("yb", "Output"), block("yi", "Output")]
    wires = [("c.y", "a.e"), ("c.y", "b.e"), ("c.y", "h.u"), ("h.y", "i.e"), ("a.u", "ya.u"),
             ("b.u", "yb.u"), ("i.u", "yi.u")]
    model = compile_diagram(diagram(blocks, wires))
    rates = dict(zip(model.block_ids, model.block_rates))
    assert rates["a"] == CONTINUOUS_TIME and model.n_states == 1  # the continuous integrator
    assert rates["b"] == SampleTime("discrete", 0.5, 0.1)
    assert rates["i"] == SampleTime("discrete", 0.2, 0.0)


@pytest.mark.parametrize("params, message", [
    (dict(sample_time=-0.5), "parameter 'sample_time': the period must be > 0"),
    (dict(sample_time=-0.5, P=0.0, external_reset="rising"), "parameter 'sample_time'"),
    (dict(sample_time=[0.5, 0.5]), "0 <= offset < period"),
    (dict(lower=1.0, upper=0.0), "parameter 'lower'"),
    (dict(D=1.0, N=0.0), "parameter 'N'"),
    (dict(antiwindup="conditional"), "parameter 'antiwindup'"),
])
def test_pid_refuses_bad_parameters(params, message):
    with pytest.raises(CompileError) as info:
        compile_diagram(diagram([block("c", "Constant"), block("b", "PID", **params),
                                 block("y", "Output")], [("c.y", "b.e"), ("b.u", "y.u")]))
    assert info.value.block == "b" and message in str(info.value)


@pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed")
def test_clamping_pid_on_the_numba_backend():
    d = closed_loop(dict(P=2.0, I=1.0, D=0.05, upper=1.5, antiwindup="clamping"), stop=3.0,
                    output_interval=0.1, **TIGHT)
    fast, slow = blocksim.simulate(d, backend="numba"), blocksim.simulate(d)
    assert [(e.kind, e.time) for e in fast.events if e.kind != "state"] == \
        [(e.kind, pytest.approx(e.time, abs=1e-12)) for e in slow.events if e.kind != "state"]
    np.testing.assert_allclose(fast["y"], slow["y"], rtol=0, atol=1e-11)
