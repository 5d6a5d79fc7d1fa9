"""dop853's stiffness detection (DOP853's own test on scipy's steps): a stiff system fails
early with the message of dopri5's, naming radau and bdf; a mildly stiff one finishes with
one warning; the examples do not look stiff."""
import math

import numpy as np
import pytest
from builders import DIAGRAMS, block, diagram

import blocksim
from blocksim.engine import stiffness
from blocksim.engine.dop853 import Dop853Stepper
from blocksim.engine.stiffness import StiffnessTest
from blocksim.errors import SimulationError


def decay(rate, **sim):
    """x' = -rate * x, x(0) = 1."""
    blocks = [block("k", "Gain", k=-rate), block("i", "Integrator", x0=1.0), block("y", "Output")]
    return diagram(blocks, [("i.y", "k.u"), ("k.y", "i.u"), ("i.y", "y.u")], **sim)


def test_the_estimate_is_h_lambda_on_a_linear_decay():
    # x' = -lambda x: f differences over state differences are exactly lambda.
    lam = 1e6
    test = StiffnessTest(stop=1.0, budget=1e12, solver="dop853")
    stepper = Dop853Stepper(lambda t, x: -lam * x, 0.0, np.ones(1), 1.0, 1e-6, 1e-9, math.inf,
                            None, test)
    for _ in range(stiffness.STIFF_EVERY):
        stepper.step()
    assert test.hlamb == pytest.approx(lam * stepper.last_step, rel=1e-6)
    assert test.hlamb > stiffness.LIMITS["dop853"] and test.positive == 1


def test_a_stiff_system_on_dop853_fails_early_naming_radau_and_bdf():
    # lambda = 1e6 over 10 s: some 1.6e6 steps held small by stability alone.
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(decay(1e6, stop=10.0, output_interval=1e-4, atol=1e-12),
                          solver="dop853")
    err = info.value
    message = str(err)
    assert err.block == "i" and "\n" not in message
    assert "the system is stiff" in message and "dop853 needs steps of about" in message
    assert "h*lambda > 6.1" in message and "use solver radau or bdf (solver dop853)" in message
    assert err.time < 0.05  # after about STIFF_EVERY + STIFF_POSITIVE steps
    results = err.results
    assert results.status == "failed" and 0.0 < results.time[-1] <= err.time + 1e-12
    np.testing.assert_allclose(results["y"], np.exp(-1e6 * results.time), atol=1e-9)
    (warning,) = results.warnings
    assert "looks stiff" in warning and "dop853's steps" in warning and "'i'" in warning


def test_a_fast_transfer_function_on_dop853_fails_early():
    blocks = [block("c", "Constant", value=1.0),
              block("tf", "TransferFunction", num=1.0, den=[2.0, 1e9]), block("y", "Output")]
    d = diagram(blocks, [("c.y", "tf.u"), ("tf.y", "y.u")], stop=0.1, output_interval=1e-6,
                atol=1e-16)
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(d, solver="dop853")
    assert info.value.block == "tf" and "use solver radau or bdf" in str(info.value)


def test_a_mildly_stiff_run_on_dop853_finishes_with_one_warning():
    r = blocksim.simulate(decay(1e4, stop=2.0), solver="dop853")
    assert r.status == "finished" and r.stats["steps"] > stiffness.STIFF_EVERY
    (warning,) = r.warnings
    assert "looks stiff" in warning and "dop853" in warning and "radau" in warning


@pytest.mark.parametrize("name", ["bouncing_ball.json", "math003.json",
                                  "rotating_pendulum.json", "dc_motor_pid.json"])
def test_the_examples_do_not_look_stiff_on_dop853(name):
    r = blocksim.simulate(blocksim.load(DIAGRAMS / name), solver="dop853")
    assert r.warnings == () and r.status in ("finished", "stopped")


def test_the_stiffness_budget_is_ten_times_smaller_on_the_python_loop():
    """Found by the 30-minute fuzzer: lambda = -1e6 over 1 s beside a 10 Hz discrete block
    took 300,000 dopri5 steps (30 s of CPU in Python) inside the 1e6-step budget."""
    from blocksim.engine import guards

    assert guards.stiff_budget(compiled=False) * 10 == guards.stiff_budget(compiled=True)
    import blocksim
    from blocksim.errors import SimulationError
    from builders import diagram

    d = diagram([{"id": "ss", "type": "StateSpace",
                  "params": {"A": [[-3.0]], "B": [[1000.0]], "C": [[-1000.0]], "D": 0.0,
                             "x0": -0.864}},
                 {"id": "z", "type": "UnitDelay", "params": {"sample_time": 0.1}},
                 {"id": "y", "type": "Output"}],
                [("ss.y", "ss.u"), ("ss.y", "z.u"), ("z.y", "y.u")], stop=1.0)
    with pytest.raises(SimulationError, match="stiff"):
        blocksim.simulate(d)
