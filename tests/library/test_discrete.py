"""The discrete block library against closed forms and independent recursions: integrators
(methods, limits, resets), transfer functions, filters and state-space models, derivatives,
tapped delays, counters and change detectors; their rates, offsets, vector inputs and the
parameters they refuse."""
import importlib.util
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import signal

import blocksim
from blocksim.compiler import compile_diagram
from blocksim.errors import CompileError
from blocksim.blocktypes.sampletime import SampleTime
from builders import block, diagram

HAS_NUMBA = importlib.util.find_spec("numba") is not None


def run(source, system, stop=2.0, period=None, **settings):
    """`source` -> `system` (block id "b", ports u and y) -> Output "y"."""
    blocks = [source, system, block("y", "Output")]
    wires = [(f"{source['id']}.y", "b.u"), ("b.y", "y.u")]
    return blocksim.simulate(diagram(blocks, wires, stop=stop, **settings))


def at(results, name, times):
    """The right limit (last row) of a logged signal at each time."""
    rows = []
    for t in times:
        found = np.flatnonzero(results.time == t)
        assert len(found), f"no row at t = {t!r}"
        rows.append(found[-1])
    return results[name][rows]


def hits(period, count, offset=0.0):
    """Hit times as the engine computes them (exact decimal fractions, not sums of floats)."""
    p, o = Fraction(period).limit_denominator(1000), Fraction(offset).limit_denominator(1000)
    return [float(o + k * p) for k in range(count)]


def held_between(results, name, times):
    """Between consecutive hits the output is the value set at the earlier hit."""
    values = at(results, name, times)
    for k in range(len(times) - 1):
        inside = (results.time > times[k]) & (results.time < times[k + 1])
        assert np.all(results[name][inside] == values[k])


def error_of(blocks, wires):
    with pytest.raises(CompileError) as info:
        compile_diagram(diagram(blocks, wires))
    return info.value


# ----- DiscreteIntegrator -----

@pytest.mark.parametrize("method, closed_form", [
    # y_k for u = t, K = 2, T = 0.25, initial 1: sums of K T u over earlier (FE), up to
    # current (BE) hits, or of the trapezoids (TR)
    ("forward-euler", lambda k: 1.0 + 2 * 0.25 ** 2 * k * (k - 1) / 2),
    ("backward-euler", lambda k: 1.0 + 2 * 0.25 ** 2 * k * (k + 1) / 2 if k else 1.0),
    ("trapezoidal", lambda k: 1.0 + 2 * 0.25 ** 2 * k * k / 2),
])
def test_integrator_methods_on_a_ramp(method, closed_form):
    r = run(block("c", "Clock"), block("b", "DiscreteIntegrator", K=2.0, method=method,
                                       initial=1.0, sample_time=0.25),
            stop=2.0, output_interval=0.1)
    times = hits(0.25, 9)
    assert list(at(r, "y", times)) == pytest.approx([closed_form(k) for k in range(9)],
                                                    rel=1e-15, abs=1e-15)
    held_between(r, "y", times)


def test_integrator_limits_clip_output_and_state_and_report_saturation():
    blocks = [block("c", "Step", time=2.0, before=1.0, after=-1.0),
              block("b", "DiscreteIntegrator", lower=-0.75, upper=1.2, sample_time=0.5),
              block("y", "Output"), block("s", "Output")]
    wires = [("c.y", "b.u"), ("b.y", "y.u"), ("b.sat", "s.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=5.0, output_interval=0.5))
    times = hits(0.5, 11)
    # +0.5 per hit up to the limit 1.2 (the state is clipped: the way down starts at 1.2)
    assert list(at(r, "y", times)) == pytest.approx(
        [0.0, 0.5, 1.0, 1.2, 1.2, 0.7, 0.2, -0.3, -0.75, -0.75, -0.75], abs=1e-15)
    assert list(at(r, "s", times)) == [0, 0, 0, 1, 1, 0, 0, 0, -1, -1, -1]


@pytest.mark.parametrize("edge, resets", [
    # the reset input is 1 on [1, 2) and from 3 on, sampled every 0.5 s
    ("rising", [1.0, 3.0]), ("falling", [2.0]), ("either", [1.0, 2.0, 3.0]),
    ("level", [1.0, 1.5, 2.0, 3.0, 3.5, 4.0]),  # nonzero, or just back to zero
])
def test_integrator_reset_edges_at_hits(edge, resets):
    blocks = [block("on1", "Step", time=1.0), block("off2", "Step", time=2.0),
              block("on3", "Step", time=3.0), block("trigger", "Sum", signs="+-+"),
              block("one", "Constant", value=1.0),
              block("b", "DiscreteIntegrator", initial=10.0, external_reset=edge,
                    sample_time=0.5),
              block("y", "Output")]
    wires = [("on1.y", "trigger.u1"), ("off2.y", "trigger.u2"), ("on3.y", "trigger.u3"),
             ("one.y", "b.u"), ("trigger.y", "b.reset"), ("b.y", "y.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=4.0, output_interval=0.5))
    times = hits(0.5, 9)
    expected, y = [], 10.0
    for t in times:
        y = 10.0 if t in resets or t == 0.0 else y + 0.5  # FE: the output at a reset is IC
        expected.append(y)
    assert list(at(r, "y", times)) == pytest.approx(expected, abs=1e-14)


def test_integrator_has_no_reset_port_without_a_reset_and_a_sat_port_only_with_limits():
    one = [block("c", "Constant"), block("b", "DiscreteIntegrator"), block("y", "Output")]
    with pytest.raises(CompileError, match="sat"):
        compile_diagram(diagram(one + [block("s", "Output")],
                                [("c.y", "b.u"), ("b.y", "y.u"), ("b.sat", "s.u")]))
    with pytest.raises(CompileError, match="reset"):
        compile_diagram(diagram(one, [("c.y", "b.u"), ("c.y", "b.reset"), ("b.y", "y.u")]))


def test_integrator_offset_vector_and_rate():
    blocks = [block("c", "Constant", value=[1.0, -2.0]),
              block("b", "DiscreteIntegrator", initial=[5.0, 0.0], sample_time=[0.5, 0.2]),
              block("y", "Output")]
    d = diagram(blocks, [("c.y", "b.u"), ("b.y", "y.u")], stop=1.5, output_interval=0.1)
    model = compile_diagram(d)
    assert dict(zip(model.block_ids, model.block_rates))["b"] == SampleTime("discrete", 0.5, 0.2)
    r = blocksim.simulate(d)
    before = r.time < 0.2
    assert np.all(r["y"][before] == [5.0, 0.0])  # the initial output before the first hit
    times = hits(0.5, 3, offset=0.2)
    np.testing.assert_allclose(at(r, "y", times), [[5.0, 0.0], [5.5, -1.0], [6.0, -2.0]],
                               rtol=0, atol=1e-15)
    assert len(np.flatnonzero(r.time == 0.2)) == 2  # left and right limit rows at the offset


def test_backward_euler_integrator_reads_its_input_at_the_hit():
    # A backward Euler integrator in a loop with a gain is an algebraic loop; forward Euler
    # is not (its output is the state).
    def loop(method):
        return diagram([block("b", "DiscreteIntegrator", method=method, initial=1.0,
                              sample_time=0.5),
                        block("g", "Gain", k=-1.0), block("y", "Output")],
                       [("b.y", "g.u"), ("g.y", "b.u"), ("b.y", "y.u")], stop=2.0)
    r = blocksim.simulate(loop("forward-euler"))
    assert list(at(r, "y", hits(0.5, 5))) == pytest.approx([1.0, 0.5, 0.25, 0.125, 0.0625])
    with pytest.raises(CompileError, match="algebraic loop"):
        compile_diagram(loop("backward-euler"))


@pytest.mark.parametrize("params, message", [
    (dict(lower=1.0, upper=0.0), "parameter 'lower'"),
    (dict(initial=[0.0, 1.0, 2.0], K=[1.0, 2.0]), "parameter 'K'"),
    (dict(sample_time=-0.5), "the period must be > 0"),
    (dict(sample_time=[0.5, 0.5]), "0 <= offset < period"),
    (dict(method="euler"), "parameter 'method'"),
])
def test_integrator_refuses_bad_parameters(params, message):
    err = error_of([block("c", "Constant"), block("b", "DiscreteIntegrator", **params),
                    block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")])
    assert err.block == "b" and message in str(err)


# ----- DiscreteTransferFcn, DiscreteFilter -----

def test_transfer_fcn_step_response_in_descending_powers_of_z():
    # 1/(z - 0.5): one sample of delay, y_k = 2 (1 - 0.5^k)
    r = run(block("c", "Constant", value=1.0),
            block("b", "DiscreteTransferFcn", num=[1.0], den=[1.0, -0.5], powers="z",
                  sample_time=0.5),
            stop=5.0, output_interval=0.5)
    times = hits(0.5, 11)
    assert list(at(r, "y", times)) == pytest.approx([2 * (1 - 0.5 ** k) for k in range(11)],
                                                    rel=1e-15)
    held_between(r, "y", times)


def sampled_sine(times, period=1.7):
    return np.sin(2 * np.pi * np.asarray(times) / period)


@pytest.mark.parametrize("block_type, num, den, b, a", [
    # biproper transfer function: same lengths, num(z)/den(z) is num(z^-1)/den(z^-1)
    ("DiscreteTransferFcn", [1.0, 0.5, 0.25], [2.0, -0.4, 0.1], [1.0, 0.5, 0.25],
     [2.0, -0.4, 0.1]),
    # strictly proper: z + 3 over z^3 - 0.2 z is z^-2 (1 + 3 z^-1)/(1 - 0.2 z^-2)
    ("DiscreteTransferFcn", [0.0, 1.0, 3.0], [1.0, 0.0, -0.2, 0.0], [0.0, 0.0, 1.0, 3.0],
     [1.0, 0.0, -0.2, 0.0]),
    ("DiscreteFilter", [0.25, 0.5, 0.25], [1.0], [0.25, 0.5, 0.25], [1.0]),  # FIR
    ("DiscreteFilter", [1.0, 2.0], [4.0, -1.0, 0.5], [1.0, 2.0], [4.0, -1.0, 0.5]),
])
def test_filters_match_lfilter_on_a_sampled_sine(block_type, num, den, b, a):
    extra = {"powers": "z"} if block_type == "DiscreteTransferFcn" else {}
    r = run(block("c", "Sine", frequency=1 / 1.7),
            block("b", block_type, num=num, den=den, sample_time=0.1, **extra),
            stop=5.0, output_interval=0.5)
    times = hits(0.1, 51)
    expected = signal.lfilter(b, a, sampled_sine(times))
    np.testing.assert_allclose(at(r, "y", times), expected, rtol=1e-12, atol=1e-14)


def test_transfer_fcn_reads_coefficients_in_z_inverse_or_in_z():
    # [1], [1, -0.5]: 1/(z - 0.5) (a delay) in powers of z, 1/(1 - 0.5 z^-1) in powers of
    # z^-1 (the default, as DiscreteFilter reads them)
    times = hits(1.0, 4)
    in_z = run(block("c", "Constant", value=1.0),
               block("b", "DiscreteTransferFcn", num=1.0, den=[1.0, -0.5], powers="z"),
               stop=3.0)
    in_z_inverse = run(block("c", "Constant", value=1.0),
                       block("b", "DiscreteTransferFcn", num=1.0, den=[1.0, -0.5]), stop=3.0)
    fl = run(block("c", "Constant", value=1.0),
             block("b", "DiscreteFilter", num=1.0, den=[1.0, -0.5]), stop=3.0)
    assert list(at(in_z, "y", times)) == [0.0, 1.0, 1.5, 1.75]
    assert list(at(in_z_inverse, "y", times)) == list(at(fl, "y", times)) == [
        1.0, 1.5, 1.75, 1.875]


@pytest.mark.parametrize("block_type, num, loop", [
    ("DiscreteTransferFcn", [1.0], False), ("DiscreteTransferFcn", [0.0, 1.0], False),
    ("DiscreteTransferFcn", [1.0, 0.0], True), ("DiscreteFilter", [0.0, 1.0], False),
    ("DiscreteFilter", [1.0], True),
])
def test_direct_feedthrough_only_with_a_leading_numerator_coefficient(block_type, num, loop):
    extra = {"powers": "z"} if block_type == "DiscreteTransferFcn" else {}
    d = diagram([block("b", block_type, num=num, den=[1.0, -0.5], **extra),
                 block("g", "Gain", k=0.5),
                 block("y", "Output")], [("b.y", "g.u"), ("g.y", "b.u"), ("b.y", "y.u")])
    if loop:
        with pytest.raises(CompileError, match="algebraic loop"):
            compile_diagram(d)
    else:
        compile_diagram(d)


def test_transfer_fcn_is_elementwise():
    r = run(block("c", "Constant", value=[1.0, -2.0]),
            block("b", "DiscreteTransferFcn", num=[1.0], den=[1.0, -0.5], powers="z",
                  sample_time=0.5),
            stop=2.0)
    expected = [[2 * (1 - 0.5 ** k) * v for v in (1.0, -2.0)] for k in range(5)]
    np.testing.assert_allclose(at(r, "y", hits(0.5, 5)), expected, rtol=1e-15)


@pytest.mark.parametrize("block_type, params, message", [
    ("DiscreteTransferFcn", dict(num=[1.0, 2.0, 3.0], den=[1.0, 0.5], powers="z"),
     "parameter 'num': improper transfer function"),
    ("DiscreteTransferFcn", dict(num=[1.0], den=[0.0, 1.0]),
     "parameter 'den': improper transfer function"),
    ("DiscreteFilter", dict(num=[1.0], den=[0.0, 1.0]), "parameter 'den'"),
    ("DiscreteFilter", dict(num=[[1.0, 2.0]], den=1.0), "parameter 'num'"),
    ("DiscreteTransferFcn", dict(sample_time=[0.1, 0.2]), "0 <= offset < period"),
])
def test_filters_refuse_bad_parameters(block_type, params, message):
    err = error_of([block("c", "Constant"), block("b", block_type, **params),
                    block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")])
    assert err.block == "b" and message in str(err)


def test_improper_numerator_with_leading_zeros_is_proper():
    r = run(block("c", "Constant", value=1.0),
            block("b", "DiscreteTransferFcn", num=[0.0, 0.0, 1.0], den=[1.0, -0.5], powers="z"),
            stop=2.0)
    assert list(at(r, "y", hits(1.0, 3))) == [0.0, 1.0, 1.5]


# ----- DiscreteStateSpace -----

def test_state_space_against_its_recursion():
    A = [[0.5, 0.1], [-0.2, 0.9]]
    B = [[1.0, 0.0], [0.5, 2.0]]
    C = [[1.0, -1.0]]
    D = [[0.0, 0.25]]
    blocks = [block("s", "Sine", frequency=1 / 1.7), block("c", "Constant", value=2.0),
              block("m", "Mux", inputs=2),
              block("b", "DiscreteStateSpace", A=A, B=B, C=C, D=D, x0=[1.0, -1.0],
                    sample_time=0.1),
              block("y", "Output")]
    wires = [("s.y", "m.u1"), ("c.y", "m.u2"), ("m.y", "b.u"), ("b.y", "y.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=3.0, output_interval=0.5))
    times = hits(0.1, 31)
    x, expected = np.array([1.0, -1.0]), []
    for u in zip(sampled_sine(times), [2.0] * len(times)):
        expected.append((np.array(C) @ x + np.array(D) @ u)[0])
        x = np.array(A) @ x + np.array(B) @ u
    np.testing.assert_allclose(at(r, "y", times), expected, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("params, message", [
    (dict(A=[[1.0, 0.0], [0.0, 1.0]], B=[[1.0]], C=[[1.0, 0.0]]), "B has 1 rows"),
    (dict(A=[[1.0, 0.0], [0.0, 1.0]], B=[[1.0], [1.0]], C=[[1.0]]), "C has 1 columns"),
    (dict(A=1.0, B=1.0, C=1.0, D=[[1.0, 2.0]]), "D is 1 x 2"),
    (dict(A=[[1.0, 0.0]], B=1.0, C=1.0), "A must be square"),
    (dict(A=1.0, B=1.0, C=1.0, x0=[1.0, 2.0]), "x0 has 2 elements"),
])
def test_state_space_refuses_wrong_sizes(params, message):
    err = error_of([block("c", "Constant"), block("b", "DiscreteStateSpace", **params),
                    block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")])
    assert err.block == "b" and message in str(err)


def test_state_space_feedthrough_only_with_nonzero_d():
    def loop(D):
        return diagram([block("b", "DiscreteStateSpace", A=0.5, B=1.0, C=1.0, D=D),
                        block("g", "Gain", k=-1.0), block("y", "Output")],
                       [("b.y", "g.u"), ("g.y", "b.u"), ("b.y", "y.u")], stop=3.0)
    r = blocksim.simulate(loop(0.0))  # x(k+1) = 0.5 x - x: x0 = 0 stays 0
    assert np.all(r["y"] == 0.0)
    with pytest.raises(CompileError, match="algebraic loop"):
        compile_diagram(loop(1.0))


# ----- DiscreteDerivative -----

def test_derivative_of_a_sampled_sine_and_its_initial_input():
    r = run(block("c", "Sine", frequency=1 / 1.7, bias=0.5),
            block("b", "DiscreteDerivative", K=3.0, initial=0.25, sample_time=0.1),
            stop=2.0, output_interval=0.5)
    times = hits(0.1, 21)
    u = 0.5 + sampled_sine(times)
    expected = 3.0 * np.diff(np.concatenate([[0.25], u])) / 0.1
    np.testing.assert_allclose(at(r, "y", times), expected, rtol=1e-13, atol=1e-13)
    held_between(r, "y", times)


def test_derivative_is_elementwise_with_vector_gain():
    r = run(block("c", "Clock"), block("b", "DiscreteDerivative", K=[1.0, -2.0],
                                       sample_time=0.25), stop=1.0)
    np.testing.assert_allclose(at(r, "y", hits(0.25, 4)),
                               [[0.0, 0.0], [1.0, -2.0], [1.0, -2.0], [1.0, -2.0]], rtol=1e-15)


# ----- TappedDelay -----

@pytest.mark.parametrize("order, current, expected_at_3", [
    ("oldest", False, [0.0, 1.0, 2.0]), ("newest", False, [2.0, 1.0, 0.0]),
    ("oldest", True, [0.0, 1.0, 2.0, 3.0]), ("newest", True, [3.0, 2.0, 1.0, 0.0]),
])
def test_tapped_delay_orders(order, current, expected_at_3):
    r = run(block("c", "Clock"), block("b", "TappedDelay", delays=3, order=order,
                                       include_current=current, initial=[-3.0, -2.0, -1.0]
                                       if order == "oldest" else [-1.0, -2.0, -3.0]),
            stop=3.0)
    assert list(at(r, "y", [3.0])[0]) == expected_at_3
    first = list(at(r, "y", [0.0])[0])
    delayed = [-3.0, -2.0, -1.0] if order == "oldest" else [-1.0, -2.0, -3.0]
    if current:
        delayed = delayed + [0.0] if order == "oldest" else [0.0] + delayed
    assert first == delayed  # u(-1), u(-2), u(-3) are the initial values at the first hit


def test_tapped_delay_refuses_a_vector_input_and_a_wrong_initial():
    err = error_of([block("c", "Constant", value=[1.0, 2.0]), block("b", "TappedDelay"),
                    block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")])
    assert err.block == "b" and "scalar input" in str(err)
    err = error_of([block("c", "Constant"), block("b", "TappedDelay", delays=3,
                                                   initial=[1.0, 2.0]),
                    block("y", "Output")], [("c.y", "b.u"), ("b.y", "y.u")])
    assert err.block == "b" and "parameter 'initial'" in str(err)


# ----- Counter -----

@pytest.mark.parametrize("params, expected", [
    (dict(upper=2), [0, 1, 2, 0, 1, 2, 0]),
    (dict(upper=3, initial=2), [2, 3, 0, 1, 2, 3, 0]),
    (dict(mode="free-running", bits=2), [0, 1, 2, 3, 0, 1, 2]),
    (dict(mode="free-running", bits=1, initial=1), [1, 0, 1, 0, 1, 0, 1]),
])
def test_counter_counts_and_wraps(params, expected):
    r = blocksim.simulate(diagram([block("b", "Counter", sample_time=0.5, **params),
                                   block("y", "Output")], [("b.y", "y.u")], stop=3.0))
    times = hits(0.5, 7)
    assert list(at(r, "y", times)) == expected
    held_between(r, "y", times)


def test_counter_refuses_an_initial_count_above_its_limit():
    err = error_of([block("b", "Counter", upper=3, initial=4), block("y", "Output")],
                   [("b.y", "y.u")])
    assert err.block == "b" and "parameter 'initial'" in str(err)


# ----- DetectChange -----

@pytest.mark.parametrize("mode, detected", [
    ("rise", [0.0, 2.5]), ("fall", [1.5]), ("change", [0.0, 1.0, 1.5, 2.0, 2.5]),
])
def test_detect_change_modes(mode, detected):
    # u sampled every 0.5 s: 1 (t < 1), 0.5 on [1, 1.5), -1 on [1.5, 2), 0 on [2, 2.5), then 2
    blocks = [block("a", "Step", time=1.0, before=1.0, after=0.5),
              block("b2", "Step", time=1.5, before=0.0, after=-1.5),
              block("c", "Step", time=2.0, before=0.0, after=1.0),
              block("d", "Step", time=2.5, before=0.0, after=2.0),
              block("u", "Sum", signs="++++"),
              block("b", "DetectChange", mode=mode, initial=-1.0, sample_time=0.5),
              block("y", "Output")]
    wires = [("a.y", "u.u1"), ("b2.y", "u.u2"), ("c.y", "u.u3"), ("d.y", "u.u4"),
             ("u.y", "b.u"), ("b.y", "y.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=3.0, output_interval=0.25))
    times = hits(0.5, 7)
    assert list(at(r, "y", times)) == [1.0 if t in detected else 0.0 for t in times]
    held_between(r, "y", times)


def test_detect_change_is_elementwise():
    r = run(block("c", "Constant", value=[1.0, 0.0, -1.0]),
            block("b", "DetectChange", mode="rise", sample_time=0.5), stop=1.0)
    assert at(r, "y", [0.0, 0.5]).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


# ----- every block: rates, offsets -----

# Each block with its defaults behind a hold of a clock at [0.5, 0.2]: its output before the
# first hit, and at the first hit (t = 0.2, where the held input becomes 0.2).
ALL = [
    ("DiscreteIntegrator", 0.0, 0.0),  # the initial value
    ("DiscreteTransferFcn", 0.0, 0.0),  # z^-1/(1 - 0.5 z^-1): strictly proper
    ("DiscreteFilter", 0.0, 0.2),  # 1/(1 + 0.5 z^-1): y(0) = u(0)
    ("DiscreteStateSpace", 0.0, 0.0),  # A = B = C = 1, D = 0: y(0) = x0
    ("DiscreteDerivative", 0.0, 0.4),  # (0.2 - 0) / 0.5
    ("TappedDelay", [0.0] * 4, [0.0] * 4),
    ("Counter", 0.0, 0.0),
    ("DetectChange", 0.0, 1.0),  # 0.2 != 0
]


@pytest.mark.parametrize("block_type, before, first", ALL)
def test_every_block_hits_at_its_offset_and_inherits_a_rate(block_type, before, first):
    takes_input = block_type != "Counter"
    if takes_input:
        blocks = [block("c", "Clock"), block("h", "ZeroOrderHold", sample_time=[0.5, 0.2]),
                  block("b", block_type, sample_time=-1), block("y", "Output")]
        wires = [("c.y", "h.u"), ("h.y", "b.u"), ("b.y", "y.u")]
    else:
        blocks = [block("b", block_type, sample_time=[0.5, 0.2]), block("y", "Output")]
        wires = [("b.y", "y.u")]
    d = diagram(blocks, wires, stop=1.5, output_interval=0.1)
    model = compile_diagram(d)
    assert dict(zip(model.block_ids, model.block_rates))["b"] == SampleTime("discrete", 0.5, 0.2)
    r = blocksim.simulate(d)
    doubled = sorted({t for t in r.time.tolist() if np.count_nonzero(r.time == t) == 2})
    assert doubled == hits(0.5, 3, offset=0.2)  # 0.2, 0.7, 1.2: the first hit at the offset
    rows = np.flatnonzero(r.time == 0.2)
    assert r["y"][r.time < 0.2].tolist() == [before] * int(np.count_nonzero(r.time < 0.2))
    assert r["y"][rows[0]].tolist() == before  # the left limit at the first hit
    assert r["y"][rows[1]] == pytest.approx(first, abs=1e-15)


def test_an_inherited_block_needs_a_discrete_input():
    err = error_of([block("s", "Sine"), block("b", "DiscreteFilter", sample_time=-1),
                    block("y", "Output")], [("s.y", "b.u"), ("b.y", "y.u")])
    assert err.block == "b" and "needs a discrete rate" in str(err)


@pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed")
def test_a_discrete_controller_around_a_continuous_plant_on_the_numba_backend():
    # the plant 1/(s + 1) sampled by a DiscreteTransferFcn controller 0.5 z/(z - 1)
    # (a discrete integral controller, backward Euler form)
    blocks = [block("r", "Constant", value=1.0), block("err", "Sum", signs="+-"),
              block("k", "DiscreteTransferFcn", num=[0.5, 0.0], den=[1.0, -1.0], powers="z",
                    sample_time=0.1),
              block("p", "TransferFunction", num=[1.0], den=[1.0, 1.0]),
              block("y", "Output")]
    wires = [("r.y", "err.u1"), ("p.y", "err.u2"), ("err.y", "k.u"), ("k.y", "p.u"),
             ("p.y", "y.u")]
    d = diagram(blocks, wires, stop=2.0, rtol=1e-12, atol=1e-14, output_interval=0.5)
    fast, slow = blocksim.simulate(d, backend="numba"), blocksim.simulate(d)
    times = hits(0.1, 21)
    a, y, expected = math.exp(-0.1), 0.0, []
    u = 0.0
    for _ in times:  # u_k = u_(k-1) + 0.5 e_k; the plant exact over a period
        expected.append(y)
        u += 0.5 * (1.0 - y)
        y = a * y + (1 - a) * u
    np.testing.assert_allclose(at(fast, "y", times), expected, rtol=0, atol=1e-11)
    np.testing.assert_allclose(at(fast, "y", times), at(slow, "y", times), rtol=0, atol=1e-12)
