"""What the Linearize dialog plots (blocksim.gui.analysis.response, on the library's
blocksim.analysis.response), against python-control on continuous and sampled models:
frequency response, step response, zeros, DC gain; the minimal pair, a zero transfer."""
import math

import numpy as np
import pytest

from blocksim.gui.analysis import response
from blocksim.gui.analysis.response import LinearModel

control = pytest.importorskip("control")

SYSTEMS = {
    "third-order lag": control.ss(control.tf([4], [1, 3, 3, 1])),
    "lead with a zero": control.ss(control.tf([10, 10], [0.1, 1.3, 3.2, 2])),
    "lightly damped": control.ss(control.tf([1, 0.5], [1, 0.2, 4])),
    "sampled": control.c2d(control.ss(control.tf([10, 10], [0.1, 1.3, 3.2, 2])), 0.05),
}


@pytest.mark.parametrize("name", SYSTEMS)
def test_frequency_step_zeros_and_gain_agree_with_python_control(name):
    system = SYSTEMS[name]
    model = LinearModel.from_system(system)
    assert model.discrete == (name == "sampled")
    w = response.frequency_grid(model)
    expected = control.frequency_response(system, w).complex
    assert np.allclose(response.evaluate(model, w)[0, 0], expected, rtol=1e-10, atol=1e-12)
    t, y = response.step(model)
    assert np.allclose(y[0, 0], control.step_response(system, T=t).outputs, atol=1e-10)
    assert np.allclose(np.sort_complex(response.zeros(model)),
                       np.sort_complex(control.zeros(system)), atol=1e-8)
    assert response.dc_gain(model)[0, 0] == pytest.approx(control.dcgain(system), rel=1e-10)


def test_a_zero_transfer_has_no_margins_and_a_loop_has_the_librarys():
    model = LinearModel.from_system(SYSTEMS["third-order lag"])
    assert response.margins(model).gain_margin_db == pytest.approx(20 * math.log10(2),
                                                                   rel=1e-4)
    silent = LinearModel(model.A, model.B, np.zeros_like(model.C), model.D)
    assert response.margins(silent) is None


def test_a_step_response_is_shown_until_it_settles():
    slow = LinearModel.from_system(control.ss(control.tf([1], [1, 3, 3, 1])))
    t, y = response.step(slow)
    assert abs(y[0, 0, -1] - 1) <= 0.02


def test_names_come_from_python_control_or_default():
    named = control.ss([[-1]], [[1]], [[1]], [[0]], inputs=["volts"], outputs=["speed"],
                       states=["w"])
    model = LinearModel.from_system(named)
    assert (model.states, model.inputs, model.outputs) == (["w"], ["volts"], ["speed"])
    gain = LinearModel.from_system(type("Plain", (), {"A": np.zeros((0, 0)), "B": np.zeros((0, 1)),
                                                       "C": np.zeros((1, 0)), "D": [[2.0]]})())
    assert gain.states == [] and gain.inputs == ["u[0]"] and gain.outputs == ["y[0]"]
    assert response.poles(gain).size == 0 and response.step(gain)[1][0, 0, -1] == 2.0


def test_a_zero_transfer_is_recognised_and_has_no_zeros():
    zero = LinearModel(np.array([[-1.0, 2.0], [0.0, -3.0]]), np.array([[1.0], [0.0]]),
                       np.array([[0.0, 1.0]]), np.zeros((1, 1)))  # the input never reaches y
    assert response.is_zero(zero) and response.zeros(zero).size == 0
    tiny = LinearModel(zero.A, np.array([[0.0], [1e-6]]), zero.C, zero.D)
    assert not response.is_zero(tiny)


def test_the_minimal_pair_drops_modes_the_input_does_not_reach_or_the_output_does_not_see():
    plant = control.ss(control.tf([10], [1, 2, 10]))
    hidden = control.append(plant, control.ss([[-0.0]], [[1.0]], [[1.0]], [[0.0]]))
    model = LinearModel.from_system(hidden).pair(0, 0)  # an integrator on the side
    reduced = response.minimal(model)
    assert reduced.A.shape == (2, 2)
    assert np.allclose(np.sort_complex(response.poles(reduced)),
                       np.sort_complex(control.poles(plant)), rtol=1e-12)
    assert response.dc_gain(reduced)[0, 0] == pytest.approx(1.0, rel=1e-12)
    w = np.logspace(-2, 2, 30)
    assert np.allclose(response.evaluate(reduced, w), response.evaluate(model, w), rtol=1e-12)


def test_zeros_are_as_many_as_the_numerator_has():
    # (s + 2)(s + 30) / (s (s + 1)(s + 100)(s + 1000)): two zeros, two at infinity
    system = control.ss(control.tf([1, 32, 60], [1, 1101, 101100, 100000, 0]))
    model = response.minimal(LinearModel.from_system(system).pair(0, 0))
    assert np.allclose(np.sort(response.zeros(model).real), [-30, -2], rtol=1e-8)
    assert response.relative_degree(model) == 2
    assert math.isinf(response.dc_gain(model)[0, 0])  # the integrator, after the transform
