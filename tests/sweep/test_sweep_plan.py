"""The runs of a sweep: grid products, given samples, and Monte Carlo draws that depend on
the seed and the run's index only."""
import numpy as np
import pytest

from blocksim.errors import BlocksimError
from blocksim.sweeps.plan import make_plan, parse_distribution, parse_range


def test_a_grid_axis_is_n_points_from_start_to_stop():
    assert parse_range("mu", "0.5:0.9:5") == pytest.approx([0.5, 0.6, 0.7, 0.8, 0.9], abs=1e-15)
    assert parse_range("mu", [1, 2]) == [1.0, 2.0]
    assert parse_range("mu", "3:3:1") == [3.0]


@pytest.mark.parametrize("text", ["0:1", "0:1:0", "0:1:2.5", "a:1:3", "0:inf:3", "0:1:1e9"])
def test_a_bad_grid_axis_is_named(text):
    with pytest.raises(BlocksimError, match="grid 'mu'"):
        parse_range("mu", text)


def test_the_grid_is_the_product_with_the_last_axis_fastest():
    plan = make_plan(grid={"a": [1, 2], "b": "10:30:3"})
    assert plan.names == ("a", "b")
    assert plan.rows == ((1, 10), (1, 20), (1, 30), (2, 10), (2, 20), (2, 30))


def test_samples_are_crossed_with_the_grid():
    plan = make_plan(samples=[{"x0": 1}, {"x0": 2}], grid={"mu": [0.5, 0.6]})
    assert plan.names == ("x0", "mu")
    assert plan.rows == ((1, 0.5), (1, 0.6), (2, 0.5), (2, 0.6))


def test_draws_depend_on_the_seed_and_the_run_index_only():
    small = make_plan(draws={"mu": "uniform(0.5,0.9)", "v0": "normal(0,2)"}, n=10, seed=7)
    large = make_plan(draws={"mu": "uniform(0.5,0.9)", "v0": "normal(0,2)"}, n=50, seed=7)
    other = make_plan(draws={"mu": "uniform(0.5,0.9)", "v0": "normal(0,2)"}, n=10, seed=8)
    assert large.rows[:10] == small.rows
    assert other.rows != small.rows
    mu = np.array([row[0] for row in large.rows])
    assert mu.min() >= 0.5 and mu.max() <= 0.9 and len(set(mu)) == 50
    # runs in blocks of 1024: block 0's generator, SeedSequence(seed, spawn_key=(0,)),
    # draws 1024 values of mu, then 1024 of v0
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(7, spawn_key=(0,))))
    mu, v0 = rng.uniform(0.5, 0.9, 1024), rng.normal(0, 2, 1024)
    assert large.rows[3] == (mu[3], v0[3])


def test_draws_past_a_block_do_not_depend_on_the_number_of_runs():
    a = make_plan(draws={"mu": "uniform(0,1)"}, n=1500, seed=1)
    b = make_plan(draws={"mu": "uniform(0,1)"}, n=3000, seed=1)
    assert a.rows == b.rows[:1500] and len(set(b.rows)) == 3000


def test_draws_per_grid_point():
    plan = make_plan(grid={"x0": [1, 2]}, draws={"mu": "uniform(0,1)"}, n=3, seed=1)
    assert [row[0] for row in plan.rows] == [1, 1, 1, 2, 2, 2]
    assert len({row[1] for row in plan.rows}) == 6


@pytest.mark.parametrize("text, message", [
    ("gauss(0,1)", "expected normal"), ("normal(0)", "expected normal"),
    ("normal(0,-1)", "sigma must be >= 0"), ("uniform(2,1)", "A <= B")])
def test_a_bad_distribution_is_named(text, message):
    with pytest.raises(BlocksimError, match=f"sample 'mu'.*{message}"):
        parse_distribution("mu", text)


def test_draws_need_a_seed_and_names_are_swept_once():
    with pytest.raises(BlocksimError, match="need a seed"):
        make_plan(draws={"mu": "uniform(0,1)"}, n=3)
    with pytest.raises(BlocksimError, match="'mu' is swept twice"):
        make_plan(grid={"mu": [1]}, draws={"mu": "uniform(0,1)"}, n=1, seed=1)
    with pytest.raises(BlocksimError, match="row 1, parameter 'mu': not a number"):
        make_plan(samples=[{"mu": 1}, {"mu": "x"}])
