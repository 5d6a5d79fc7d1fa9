"""Large networks (a 100-stage RC ladder, a 50-mass spring chain) against scipy's
solve_ivp of the same equations written by hand (rtol 1e-12): within 1e-8.

The models and references are those of benchmarks/physical.py, which measures their
compile times (a speed target, so not here)."""
import numpy as np
import pytest

import blocksim
from builders import benchmark_script


@pytest.fixture(scope="module")
def bench():
    with benchmark_script("physical.py", "physical_bench") as module:
        yield module


def test_a_100_stage_rc_ladder_matches_solve_ivp(bench):
    n = 100
    model = bench.ladder(n).compile()
    assert len(model.x0) == n  # one state per capacitor, nothing else
    r = blocksim.simulate(model)
    reference = bench.ladder_reference(n, r.time)
    for k in bench.probes(n):
        assert np.max(np.abs(r[f"v{k}"] - reference[:, k])) < 1e-8, k
    assert r[f"v{n - 1}"][-1] > 1e-3  # the far end has moved


def test_a_50_mass_spring_chain_matches_solve_ivp(bench):
    n = 50
    model = bench.chain(n).compile()
    assert len(model.x0) == 2 * n  # a position and a velocity per mass
    r = blocksim.simulate(model)
    reference = bench.chain_reference(n, r.time)
    for k in bench.probes(n):
        assert np.max(np.abs(r[f"x{k}"] - reference[:, k])) < 1e-8, k
    assert r[f"x{n - 1}"][-1] > 0.1  # the force has stretched the chain
