"""TransferFunction and StateSpace against closed-form responses; parameter checks."""
import math

import numpy as np
import pytest
from builders import block, diagram

import blocksim
from blocksim.expressions import param_slots
from blocksim.blocktypes.blockspec import lit
from blocksim.compiler.compiled import compile_diagram
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-11, "atol": 1e-12}


def response(system, value=1.0, stop=5.0, **settings):
    """Response `y` of a system block `t` to a constant input switched on at t = 0."""
    return blocksim.simulate(
        diagram([block("c", "Constant", value=value), system, block("y", "Output")],
                [("c.y", "t.u"), ("t.y", "y.u")], stop=stop, output_interval=0.25,
                **{**TIGHT, **settings}))


def test_first_order_step_response():
    r = response(block("t", "TransferFunction", num=[1.0], den=[1.0, 1.0]))
    np.testing.assert_allclose(r["y"], 1.0 - np.exp(-r.time), rtol=0, atol=1e-8)


def test_second_order_step_response():
    wn, zeta = 2.0, 0.3
    r = response(block("t", "TransferFunction", num=[wn ** 2],
                       den=[1.0, 2 * zeta * wn, wn ** 2]), stop=8.0)
    wd = wn * math.sqrt(1 - zeta ** 2)
    t = r.time
    exact = 1 - np.exp(-zeta * wn * t) / math.sqrt(1 - zeta ** 2) * np.sin(wd * t + math.acos(zeta))
    np.testing.assert_allclose(r["y"], exact, rtol=0, atol=1e-8)
    assert r["y"].max() > 1.3  # it really overshoots (by exp(-pi zeta / sqrt(1 - zeta^2)))


def test_scaled_coefficients_and_leading_zeros_in_num():
    # 0 s + 3 over 2 s + 2 is 1.5 / (s + 1): strictly proper despite len(num) == len(den).
    r = response(block("t", "TransferFunction", num=[0.0, 3.0], den=[2.0, 2.0]))
    np.testing.assert_allclose(r["y"], 1.5 * (1.0 - np.exp(-r.time)), rtol=0, atol=1e-8)


def test_biproper_transfer_function_has_direct_feedthrough():
    # (s + 2) / (s + 1) = 1 + 1 / (s + 1): the step response jumps to 1 at once.
    r = response(block("t", "TransferFunction", num=[1.0, 2.0], den=[1.0, 1.0]))
    np.testing.assert_allclose(r["y"], 2.0 - np.exp(-r.time), rtol=0, atol=1e-8)
    assert r["y"][0] == 1.0


def test_transfer_function_is_elementwise_and_a_pure_gain_has_no_states():
    r = response(block("t", "TransferFunction", num=[1.0], den=[1.0, 1.0]), value=[1.0, -2.0])
    np.testing.assert_allclose(r["y"], np.outer(1.0 - np.exp(-r.time), [1.0, -2.0]),
                               rtol=0, atol=2e-8)
    r = response(block("t", "TransferFunction", num=3.0, den=2.0), value=4.0)
    np.testing.assert_array_equal(r["y"], 6.0)


def feedback(system):
    """The system with its output fed back negatively to its input: u = -y."""
    return diagram([system, block("g", "Gain", k=-1.0), block("y", "Output")],
                   [("t.y", "g.u"), ("g.y", "t.u"), ("t.y", "y.u")],
                   stop=3.0, output_interval=0.25, **TIGHT)


def test_feedthrough_follows_the_degrees():
    # Strictly proper in a loop: fine; biproper (s / (s + 1)) in a loop: an algebraic loop.
    compile_diagram(feedback(block("t", "TransferFunction", num=[1.0], den=[1.0, 1.0])))
    with pytest.raises(CompileError, match="algebraic loop"):
        compile_diagram(feedback(block("t", "TransferFunction", num=[1.0, 0.0],
                                       den=[1.0, 1.0])))


def test_generated_code_is_straight_line_with_exact_literals():
    d = diagram([block("c", "Constant"),
                 block("t", "TransferFunction", num=[0.1, 0.0], den=[1.0, 0.0, 3.0]),
                 block("y", "Output")], [("c.y", "t.u"), ("t.y", "y.u")])
    model = compile_diagram(d)
    values = model.functions["deriv"].__globals__  # the parameter slots' values
    code = param_slots.SLOT.sub(lambda slot: lit(values[slot.group(0)]), model.code)
    assert "0.1 * x_[1]" in code          # y = 0.1 x2 (zero terms skipped)
    assert "= s0 - 3.0 * x_[0]" in code   # x2' = u - 3 x1
    assert "np." not in code and "C0" not in code


def test_state_space_double_integrator():
    # x1' = x2, x2' = u; y = [x1, x2 + 0.5 u]; exact solution is a polynomial.
    r = response(block("t", "StateSpace", A=[[0, 1], [0, 0]], B=[[0], [1]],
                       C=[[1, 0], [0, 1]], D=[[0], [0.5]], x0=[1.0, 0.5]), value=2.0, stop=3.0)
    t = r.time
    np.testing.assert_allclose(r["y"][:, 0], 1.0 + 0.5 * t + t ** 2, rtol=1e-12, atol=0)
    np.testing.assert_allclose(r["y"][:, 1], 1.5 + 2.0 * t, rtol=1e-12, atol=0)


def test_state_space_scalar_system_in_a_feedback_loop():
    # D = 0: no feedthrough, so u = -y is no algebraic loop. x' = -x - x = -2x.
    r = blocksim.simulate(feedback(block("t", "StateSpace", A=-1.0, B=1.0, C=1.0, x0=3.0)))
    np.testing.assert_allclose(r["y"], 3.0 * np.exp(-2.0 * r.time), rtol=1e-8, atol=0)
    with pytest.raises(CompileError, match="algebraic loop"):
        compile_diagram(feedback(block("t", "StateSpace", A=-1.0, B=1.0, C=1.0, D=0.5)))


def test_state_space_two_inputs():
    # x' = u1 - u2, y = x: a ramp of slope 2 - 5.
    r = response(block("t", "StateSpace", A=0.0, B=[[1.0, -1.0]], C=1.0), value=[2.0, 5.0],
                 stop=2.0)
    np.testing.assert_allclose(r["y"], -3.0 * r.time, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("system, message", [
    (block("t", "TransferFunction", num=[1.0, 0.0, 0.0], den=[1.0, 1.0]), "improper"),
    (block("t", "TransferFunction", num=[1.0], den=[0.0, 1.0]), "den\\[0\\] is zero"),
    (block("t", "TransferFunction", num=[[1.0]], den=[1.0, 1.0]), "vector"),
    (block("t", "StateSpace", A=[[0, 1], [0, 0]], B=[[1]], C=[[1, 0]]), "B has 1 rows"),
    (block("t", "StateSpace", A=[[0, 1]], B=[[1]], C=[[1]]), "square"),
    (block("t", "StateSpace", A=[[0, 1], [0, 0]], B=[[0], [1]], C=[[1]]), "C has 1 columns"),
    (block("t", "StateSpace", A=1.0, B=1.0, C=[[1.0], [2.0]], D=[[1.0, 2.0]]), "D is 1 x 2"),
    (block("t", "StateSpace", A=1.0, B=1.0, C=1.0, x0=[1.0, 2.0]), "x0 has 2"),
    (block("t", "StateSpace", A=[1.0, 2.0], B=1.0, C=1.0), "'A' is not a matrix"),
    (block("t", "StateSpace", A=1.0, B=[[1.0, 1.0]], C=1.0), "B has 2 columns"),
])
def test_bad_parameters_are_refused_naming_the_block(system, message):
    d = diagram([block("c", "Constant"), system, block("y", "Output")],
                [("c.y", "t.u"), ("t.y", "y.u")])
    with pytest.raises(CompileError, match=message) as exc:
        compile_diagram(d)
    assert exc.value.block == "t"
