"""radau and bdf on values that overflow fail as the explicit solvers do: "the state became
infinite or NaN", naming the first block with a non-finite value, never scipy's message of
its LU ("array must not contain infs or NaNs"); a formula that fails in the model still
fails naming its block."""
import dataclasses

import numpy as np
import pytest
from builders import block, diagram

from blocksim.compiler import compile_diagram
from blocksim.engine import Simulator
from blocksim.engine.steppers import AdaptiveStepper, StepFailure
from blocksim.errors import SimulationError


def run(d, **settings):
    model = compile_diagram(d)
    return Simulator(model, dataclasses.replace(model.settings, **settings)).run()


def failure(d, **settings) -> SimulationError:
    with pytest.raises(SimulationError) as info:
        run(d, **settings)
    message = str(info.value)
    assert "\n" not in message and "array must not" not in message
    assert "Error" not in message
    return info.value


def gain_chain():
    """1e200 through four gains of 1e200 into an integrator: inf from the first gain on."""
    blocks = ([block("c", "Constant", value=1e200)]
              + [block(f"g{i}", "Gain", k=1e200) for i in range(4)]
              + [block("i", "Integrator"), block("y", "Output")])
    wires = [("c.y", "g0.u"), ("g0.y", "g1.u"), ("g1.y", "g2.u"), ("g2.y", "g3.u"),
             ("g3.y", "i.u"), ("i.y", "y.u")]
    return diagram(blocks, wires, stop=1.0)


def growth():
    """x' = 1e3 x, x(0) = 1: past the largest double near t = 0.7."""
    blocks = [block("i", "Integrator", x0=1.0), block("g", "Gain", k=1e3), block("y", "Output")]
    return diagram(blocks, [("i.y", "g.u"), ("g.y", "i.u"), ("i.y", "y.u")], stop=10.0)


@pytest.mark.parametrize("solver", ["radau", "bdf", "dopri5"])
def test_an_overflowing_input_names_the_first_block_like_dopri5(solver):
    err = failure(gain_chain(), solver=solver)
    assert f"the state became infinite or NaN (solver {solver})" in str(err)
    assert err.block == "g0" and err.time == 0.0
    assert err.results.status == "failed" and err.results.time[0] == 0.0


@pytest.mark.parametrize("solver", ["radau", "bdf"])
def test_an_exponential_blowup_fails_with_the_results_so_far(solver):
    err = failure(growth(), solver=solver)
    assert f"the state became infinite or NaN (solver {solver})" in str(err)
    assert err.block in (None, "i", "g") and 0.6 < err.time < 0.8
    results = err.results
    assert results.status == "failed" and np.isfinite(results["y"]).all()
    np.testing.assert_allclose(results["y"], np.exp(1e3 * results.time), rtol=1e-2)


@pytest.mark.parametrize("solver", ["radau", "bdf"])
def test_a_formula_failing_in_the_model_still_names_its_block(solver):
    # sqrt of a state that turns negative: the model's own error passes through scipy.
    blocks = [block("c", "Constant", value=-1.0), block("i", "Integrator", x0=1.0),
              block("f", "Expression", formula="sqrt(u)"), block("y", "Output")]
    d = diagram(blocks, [("c.y", "i.u"), ("i.y", "f.u"), ("f.y", "y.u")], stop=2.0)
    err = failure(d, solver=solver)
    assert err.block == "f" and "infinite or NaN" not in str(err)


def test_scipys_own_failure_is_a_step_failure_with_the_point_it_found():
    # The derivative is finite at the start and infinite beyond x = 2: the Jacobian
    # of radau's Newton iteration overflows.
    def rhs(t, x):
        return np.where(x > 2.0, np.inf, 1e3 * x)

    stepper = AdaptiveStepper("radau", rhs, 0.0, np.ones(1), 10.0, 1e-6, 1e-9, np.inf, None)
    with pytest.raises(StepFailure, match="infinite or NaN") as info, \
            np.errstate(all="ignore"):
        for _ in range(1000):
            stepper.step()
    t, x = info.value.probe
    assert x[0] > 2.0 and t > 0.0
