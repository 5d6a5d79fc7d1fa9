"""Per-state absolute tolerances: the Integrators' `atol` parameter and user blocks'
State(nominal=, atol=, error_control=) give the solvers (dopri5 and dop853 of our own,
scipy's, the numba loop) one absolute tolerance per state; inf leaves a state out of the
error control."""
from __future__ import annotations

import math

import numpy as np
import pytest
from both_backends import run_both
from builders import block, diagram

import blocksim
from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import Param, Port
from blocksim.user import State, UserBlock


def decay(atol_x=0.0, with_angle=False, angle_atol=float("inf"), **settings):
    """x' = -x from 1; optionally an angle theta' = 50 + 40 cos(30 x) riding along."""
    blocks = [block("x", "Integrator", x0=1.0, atol=atol_x), block("k", "Gain", k=-1.0),
              block("y", "Output")]
    wires = [("x.y", "k.u"), ("k.y", "x.u"), ("x.y", "y.u")]
    if with_angle:
        blocks += [block("w", "Expression", formula="50 + 40*cos(30*u)"),
                   block("theta", "Integrator", atol=angle_atol), block("a", "Output")]
        wires += [("x.y", "w.u"), ("w.y", "theta.u"), ("theta.y", "a.u")]
    options = dict(stop=20.0, solver="dopri5", rtol=1e-6, atol=1e-6, output_interval=1.0)
    return diagram(blocks, wires, **{**options, **settings})


def test_the_model_carries_one_tolerance_per_state():
    model = blocksim.compile(decay(atol_x=1e-12, with_angle=True, angle_atol=float("inf")))
    np.testing.assert_array_equal(model.state_atol(1e-6), [1e-12, np.inf])
    np.testing.assert_array_equal(model.state_atol(1e-3), [1e-12, np.inf])
    assert blocksim.compile(decay()).state_tolerance is None  # the scalar path unchanged


@pytest.mark.parametrize("solver", ["dopri5", "dop853", "radau", "bdf"])
def test_a_state_out_of_error_control_does_not_set_the_steps(solver):
    alone = blocksim.simulate(blocksim.compile(decay(solver=solver)))
    free = blocksim.simulate(blocksim.compile(decay(with_angle=True, solver=solver)))
    watched = blocksim.simulate(blocksim.compile(decay(with_angle=True, angle_atol=0.0,
                                                       solver=solver)))
    assert free.stats["steps"] == alone.stats["steps"]  # theta's error is not looked at
    assert watched.stats["steps"] > alone.stats["steps"]
    # the same steps, to rounding (scipy's are scaled tolerances): far below the run's 1e-6
    np.testing.assert_allclose(free["y"], alone["y"], rtol=1e-9, atol=1e-12)


def test_a_tight_state_atol_resolves_a_small_state():
    exact = math.exp(-20.0)  # 2e-9: far below the run's atol of 1e-6
    loose = blocksim.simulate(blocksim.compile(decay()))
    tight = run_both(decay(atol_x=1e-15))
    assert abs(loose["y"][-1] - exact) > 1e-3 * exact  # what a shared atol gives
    assert abs(tight["y"][-1] - exact) < 1e-4 * exact


def test_no_error_control_on_both_backends():
    run_both(decay(with_angle=True), atol=1e-9)


class Pendulum(UserBlock):
    """A pendulum whose angle may grow without bound (nominal 10), its energy integral out
    of error control: theta'' = -sin(theta)."""

    name = "TolerancePendulum"
    params = (Param("theta0", default=3.0),)
    outputs = (Port("theta"),)
    states = (State("theta", start="theta0", nominal=10.0), State("omega", atol=1e-9),
              State("work", error_control=False))
    feedthrough_outputs = False

    @staticmethod
    def out(t, x, d, u, p):
        return (x[0],)

    @staticmethod
    def der(t, x, d, u, p):
        return (x[1], -math.sin(x[0]), x[1] * x[1])


def test_user_block_states_declare_nominal_atol_and_no_error_control():
    registry.register(Pendulum, source="tests")
    try:
        d = diagram([block("p", "TolerancePendulum"), block("y", "Output")], [("p.theta", "y.u")],
                    stop=5.0, rtol=1e-8, atol=1e-7, output_interval=0.5)
        model = blocksim.compile(d)
        np.testing.assert_array_equal(model.state_atol(1e-7), [1e-6, 1e-9, np.inf])
        run_both(d, atol=1e-9)
    finally:
        registry.unregister(Pendulum.name)


@pytest.mark.parametrize("value, message", [(-1.0, "atol"), ([1e-6, 1e-6, 1e-6], "atol")])
def test_bad_atol_names_block_and_parameter(value, message):
    d = diagram([block("x", "Integrator", x0=[1.0, 2.0], atol=value), block("y", "Output")],
                [("x.y", "y.u"), ("x.y", "x.u")])
    with pytest.raises(blocksim.CompileError, match=f"block 'x'.*{message}"):
        blocksim.compile(d)
