"""dopri5's stiffness detection (Hairer and Wanner's test): a warning once per run naming
radau/bdf, and an early failure when the steps still needed exceed the budget."""
import importlib.util
import logging
import time

import numpy as np
import pytest
from builders import DIAGRAMS, block, diagram

import blocksim
from blocksim.engine import dopri5
from blocksim.engine.dopri5 import Stiff, StiffnessTest
from blocksim.errors import SimulationError

HAS_NUMBA = importlib.util.find_spec("numba") is not None
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    not HAS_NUMBA, reason="numba is not installed"))]


def decay(rate, **sim):
    """x' = -rate * x, x(0) = 1."""
    blocks = [block("k", "Gain", k=-rate), block("i", "Integrator", x0=1.0), block("y", "Output")]
    return diagram(blocks, [("i.y", "k.u"), ("k.y", "i.u"), ("i.y", "y.u")], **sim)


def timed_failure(d, backend):
    """(the SimulationError, seconds) of a run that must fail; the numba functions are
    compiled first (a short run), so only the run is timed."""
    blocksim.simulate(d, backend=backend, stop_time=1e-6)
    started = time.perf_counter()
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(d, backend=backend)
    return info.value, time.perf_counter() - started


def test_the_test_counts_as_hairers_code():
    test = StiffnessTest(stop=1.0, budget=1e9)
    k6, y6, y7 = np.zeros(2), np.zeros(2), np.array([1.0, 0.0])
    stiff, mild = np.array([-4.0, 0.0]), np.array([-1.0, 0.0])  # h*lambda 4 and 1 at h = 1
    for _ in range(14):
        test.test(0.0, 1.0, k6, stiff, y6, y7)
    assert test.positive == 14 and test.detected is None
    for _ in range(5):
        test.test(0.0, 1.0, k6, mild, y6, y7)
    assert test.positive == 14  # five negatives in a row do not reset the count ...
    test.test(0.5, 1.0, k6, stiff, y6, y7)
    assert test.positive == 15 and test.detected == 0.5 and test.state == 0
    for _ in range(6):
        test.test(0.6, 1.0, k6, mild, y6, y7)
    assert test.positive == 0 and test.detected == 0.5  # ... six do; detected stays
    with pytest.raises(Stiff, match="radau or bdf"):
        StiffnessTest(stop=1e7, budget=1e6).check_budget(0.0, 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_stiff_system_on_dopri5_fails_early_naming_radau_and_bdf(backend, caplog):
    # lambda = 1e6 over 10 s: about 3e6 steps held small by stability alone.
    d = decay(1e6, stop=10.0, output_interval=1e-4, atol=1e-12)
    with caplog.at_level(logging.WARNING, logger="blocksim.engine"):
        err, seconds = timed_failure(d, backend)
    assert seconds < 3.0
    assert "stiff" in str(err) and "radau or bdf" in str(err) and err.block == "i"
    assert err.time < 0.05  # found after about STIFF_EVERY steps of a few microseconds
    results = err.results
    assert results.status == "failed" and 0.0 < results.time[-1] <= err.time + 1e-12
    np.testing.assert_allclose(results["y"], np.exp(-1e6 * results.time), atol=1e-11)
    (warning,) = results.warnings
    assert "looks stiff" in warning and "'i'" in warning and "radau or bdf" in warning
    # The failure says it again: the warning is in the results, not on the log.
    assert [r for r in caplog.records if "stiff" in r.getMessage()] == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fast_transfer_function_fails_early_instead_of_never_finishing(backend):
    blocks = [block("c", "Constant", value=1.0),
              block("tf", "TransferFunction", num=1.0, den=[2.0, 1e9]), block("y", "Output")]
    d = diagram(blocks, [("c.y", "tf.u"), ("tf.y", "y.u")], stop=0.1, output_interval=1e-6,
                atol=1e-16)
    err, seconds = timed_failure(d, backend)
    assert seconds < 3.0
    assert err.block == "tf" and "use solver radau or bdf" in str(err)
    results = err.results  # y -> 1e-9 within some 1e-8 s
    assert len(results.time) > 3 and results["y"][-1] == pytest.approx(1e-9, rel=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mildly_stiff_run_finishes_with_one_warning(backend, caplog):
    # lambda = 1e4 over 2 s: some 6,000 steps, within the budget.
    with caplog.at_level(logging.WARNING, logger="blocksim.engine"):
        r = blocksim.simulate(decay(1e4, stop=2.0), backend=backend)
    assert r.status == "finished" and r.stats["steps"] > dopri5.STIFF_EVERY
    (warning,) = r.warnings
    assert "looks stiff" in warning and "radau" in warning
    logged = [r.getMessage() for r in caplog.records if "stiff" in r.getMessage()]
    assert logged == [f"<diagram>: {warning}"]  # once, naming the model
    assert abs(r["y"][-1]) < 1e-7  # at dopri5's stability limit: noise of about atol


def test_the_same_system_on_radau_does_not_warn():
    r = blocksim.simulate(decay(1e6, stop=10.0, solver="radau"))
    assert r.status == "finished" and r.warnings == () and r.stats["steps"] < 1000


@pytest.mark.parametrize("name, backend", [
    ("bouncing_ball.json", "python"), ("math003.json", "python"),
    ("rotating_pendulum.json", "python"),
    pytest.param("bouncing_ball.json", "numba", marks=pytest.mark.skipif(
        not HAS_NUMBA, reason="numba is not installed"))])
def test_the_benchmark_diagrams_do_not_look_stiff(name, backend):
    r = blocksim.simulate(blocksim.load(DIAGRAMS / name), backend=backend)
    assert r.warnings == () and r.status in ("finished", "stopped")


def test_the_budget_is_the_steps_left_at_the_present_step_size():
    test = StiffnessTest(stop=10.0, budget=1000)
    test.detected = 0.0
    test.check_budget(9.0, 1e-3)  # 1000 steps left: within
    with pytest.raises(Stiff, match="some 1e\\+03 more"):
        test.check_budget(8.999, 1e-3)
