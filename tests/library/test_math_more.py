"""Polynomial, MatrixGain, DotProduct and Bias: values against numpy on both backends, and
shapes that cannot work refused before the run, naming the block and the port or
parameter."""
import numpy as np
import pytest
from both_backends import SIN, run_both
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def vector_sine(phases, blocks, wires, **settings):
    """`s.y` = sin(t + phases) (a vector), watched by an integrator; `y` logs `b.y`."""
    base = [block("s", "Sine", frequency=SIN, phase=phases),
            block("watch", "Integrator", x0=[0.0] * len(phases)), block("y", "Output")]
    return diagram(base + blocks, [("s.y", "watch.u"), ("b.y", "y.u")] + wires,
                   **{**TIGHT, "stop": 5.0, "output_interval": 0.05, **settings})


def test_polynomial_is_polyval_of_the_input():
    c = [0.5, -2.0, 0.0, 3.0]
    r = run_both(vector_sine([0.0, 1.0], [block("b", "Polynomial", coefficients=c)],
                             [("s.y", "b.u")]))
    u = np.sin(r.time[:, None] + np.array([0.0, 1.0]))
    np.testing.assert_allclose(r["y"], np.polyval(c, u), rtol=0, atol=1e-15)


def test_polynomial_of_one_coefficient_is_that_constant():
    d = diagram([block("c", "Constant", value=[1.0, 2.0]),
                 block("b", "Polynomial", coefficients=[4.0]), block("y", "Output")],
                [("c.y", "b.u"), ("b.y", "y.u")], stop=1.0)
    np.testing.assert_array_equal(blocksim.simulate(d)["y"], 4.0)


def test_matrix_gain_multiplies_the_input_vector():
    k = [[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]]
    r = run_both(vector_sine([0.0, 1.0], [block("b", "MatrixGain", K=k)], [("s.y", "b.u")]))
    u = np.sin(r.time[:, None] + np.array([0.0, 1.0]))
    assert r["y"].shape == (len(r.time), 3)
    np.testing.assert_allclose(r["y"], u @ np.array(k).T, rtol=0, atol=1e-15)


def test_matrix_gain_of_a_row_is_a_weighted_sum():
    d = diagram([block("c", "Constant", value=[1.0, 2.0, 3.0]),
                 block("b", "MatrixGain", K=[0.5, -1.0, 2.0]), block("y", "Output")],
                [("c.y", "b.u"), ("b.y", "y.u")], stop=1.0)
    np.testing.assert_array_equal(blocksim.simulate(d)["y"], 4.5)


def test_dot_product_of_two_vectors_and_with_a_scalar():
    r = run_both(vector_sine([0.0, 1.0, 2.0],
                             [block("w", "Constant", value=[1.0, -2.0, 0.5]),
                              block("b", "DotProduct"), block("k", "Constant", value=3.0),
                              block("b2", "DotProduct"), block("y2", "Output")],
                             [("s.y", "b.u1"), ("w.y", "b.u2"), ("s.y", "b2.u1"), ("k.y", "b2.u2"),
                              ("b2.y", "y2.u")]))
    u = np.sin(r.time[:, None] + np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(r["y"], u @ np.array([1.0, -2.0, 0.5]), rtol=0, atol=1e-15)
    np.testing.assert_allclose(r["y2"], 3.0 * u.sum(axis=1), rtol=0, atol=1e-14)


def test_bias_adds_a_constant_and_a_vector_bias_widens_a_scalar():
    r = run_both(vector_sine([0.0], [block("b", "Bias", bias=[1.0, -2.5])], [("s.y", "b.u")]))
    u = np.sin(r.time)
    np.testing.assert_array_equal(r["y"], np.column_stack([u + 1.0, u - 2.5]))


@pytest.mark.parametrize("blocks, wires, message", [
    ([block("c", "Constant", value=[1.0, 2.0, 3.0]), block("bad", "MatrixGain", K=[[1.0, 2.0]])],
     [("c.y", "bad.u")], "input 'u' has width 3 but parameter 'K' has 2 columns"),
    ([block("c", "Constant"), block("bad", "MatrixGain", K=[[[1.0]]])], [("c.y", "bad.u")],
     "parameter 'K' must be a matrix"),
    ([block("c", "Constant"), block("bad", "MatrixGain", K=[[1.0, 2.0], [3.0]])],
     [("c.y", "bad.u")], "parameter 'K'"),
    ([block("c", "Constant"), block("bad", "MatrixGain", K=[[1.0, float("inf")]])],
     [("c.y", "bad.u")], "parameter 'K'"),
    ([block("c", "Constant"), block("bad", "Polynomial", coefficients=[[1.0, 2.0], [3.0, 4.0]])],
     [("c.y", "bad.u")], "parameter 'coefficients' must be a vector"),
    ([block("c", "Constant"), block("bad", "Polynomial", coefficients=[1.0, float("nan")])],
     [("c.y", "bad.u")], "parameter 'coefficients'"),
    ([block("a", "Constant", value=[1.0, 2.0]), block("c", "Constant", value=[1.0, 2.0, 3.0]),
      block("bad", "DotProduct")], [("a.y", "bad.u1"), ("c.y", "bad.u2")],
     "input 'u1' has width 2"),
    ([block("c", "Constant", value=[1.0, 2.0, 3.0]), block("bad", "Bias", bias=[1.0, 2.0])],
     [("c.y", "bad.u")], "input 'u' has width 3 but parameter 'bias' has 2"),
    ([block("c", "Constant"), block("bad", "Bias", bias="inf")], [("c.y", "bad.u")],
     "parameter 'bias'"),
])
def test_shapes_and_values_that_cannot_work_are_refused(blocks, wires, message):
    with pytest.raises(CompileError) as info:
        blocksim.compile(diagram(blocks, wires))
    assert info.value.block == "bad" and message in str(info.value)


def test_the_new_blocks_are_listed_with_sensible_categories():
    from blocksim.blocktypes import registry

    types = registry.all_types()
    expected = {"DeadZone": "Discontinuities", "RateLimiter": "Discontinuities",
                "Backlash": "Discontinuities", "Quantizer": "Discontinuities",
                "CoulombViscousFriction": "Discontinuities", "MinMax": "Math",
                "Rounding": "Math", "Polynomial": "Math", "MatrixGain": "Math",
                "DotProduct": "Math", "Bias": "Math"}
    assert {name: types[name].category for name in expected} == expected
    for name, category in expected.items():
        text = types[name].describe()
        assert text.startswith(f"{name} ({category})") and "Inputs:" in text
        assert "Parameters:" in text or name == "DotProduct"
