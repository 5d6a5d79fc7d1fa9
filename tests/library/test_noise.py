"""RandomNumber and BandLimitedWhiteNoise: the stream against an independent integer
implementation of MRG32k3a and Box-Muller, identical on both backends and run to run,
seeds that differ, and statistics (mean, variance, autocorrelation) within limits set
by the sample size."""
import math

import numpy as np
import pytest
from both_backends import HAS_NUMBA
from builders import block, diagram

import blocksim
from blocks.noise import seed_state
from blocksim.errors import CompileError

M1, M2 = 4294967087, 4294944443


def mrg32k3a(state):
    """L'Ecuyer's MRG32k3a on Python integers (exact by construction): uniforms in (0, 1)."""
    s = [int(v) for v in state]
    while True:
        p1 = (1403580 * s[1] - 810728 * s[0]) % M1
        p2 = (527612 * s[5] - 1370589 * s[3]) % M2
        s = [s[1], s[2], p1, s[4], s[5], p2]
        # times L'Ecuyer's constant norm, about 1 / (m1 + 1), as in his reference code
        yield (p1 - p2 + M1 if p1 <= p2 else p1 - p2) * 2.328306549295727688e-10


def normals(seed, count):
    """Box-Muller, one normal from each pair of uniforms (the block's documented rule)."""
    u = mrg32k3a(seed_state(seed))
    out = []
    for _ in range(count):
        u1, u2 = next(u), next(u)
        out.append(math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2))
    return np.array(out)


def noise_diagram(blk, stop, width=1):
    """The noise block `n` logged as `y` and integrated (a state for the numba backend)."""
    return diagram([blk, block("i", "Integrator", x0=[0.0] * width), block("y", "Output")],
                   [("n.y", "i.u"), ("n.y", "y.u")], stop=stop)


def samples(r, name="y"):
    """The value held after each hit: the first row, then each right limit."""
    right = np.flatnonzero(r.time[1:] == r.time[:-1]) + 1
    return r[name][np.concatenate([[0], right])]


def both(d):
    """The Python run and, where numba is installed, the numba run (with its sample hits
    in the compiled loop), which must be identical to it."""
    model = blocksim.compile(d)
    py = blocksim.simulate(model)
    if HAS_NUMBA:
        nb = blocksim.simulate(model, backend="numba")
        assert model.derived["native"].timed, "sample hits were not compiled"
        np.testing.assert_array_equal(nb.time, py.time)
        np.testing.assert_array_equal(nb["y"], py["y"])
    return py


def test_random_number_is_mrg32k3a_through_box_muller_on_both_backends():
    blk = block("n", "RandomNumber", mean=1.5, variance=4.0, seed=12345, sample_time=0.1)
    r = both(noise_diagram(blk, stop=20.0))
    got = samples(r)
    assert len(got) == 201
    np.testing.assert_array_equal(got, 1.5 + 2.0 * normals(12345, 201))  # the same arithmetic


def test_same_seed_repeats_run_to_run_and_another_seed_differs():
    def run(seed):
        blk = block("n", "RandomNumber", seed=seed, sample_time=0.5)
        return samples(blocksim.simulate(noise_diagram(blk, stop=50.0)))
    first, again, other = run(7), run(7), run(8)
    np.testing.assert_array_equal(first, again)
    assert np.count_nonzero(first == other) == 0


def test_random_number_held_between_hits_with_an_offset():
    blk = block("n", "RandomNumber", seed=3, sample_time=[0.2, 0.05])
    d = noise_diagram(blk, stop=1.0)
    d.simulation.output_interval = 0.01
    r = both(d)
    t, y = r.time, r["y"]
    assert np.all(y[t < 0.05] == 0.0)  # nothing before the first hit
    expected = normals(3, 5)
    for k, hit in enumerate(0.05 + 0.2 * np.arange(5)):
        held = (t > hit + 1e-9) & (t < hit + 0.2 - 1e-9)
        assert held.any() and np.all(y[held] == expected[k])


def test_random_number_statistics():
    n = 20000
    blk = block("n", "RandomNumber", mean=-1.0, variance=2.5, seed=99, sample_time=1.0)
    r = blocksim.simulate(noise_diagram(blk, stop=n - 1.0))
    x = samples(r)
    assert len(x) == n
    # Four standard errors: the mean's sqrt(var / n), the variance's var sqrt(2 / n), an
    # autocorrelation's 1 / sqrt(n).
    assert abs(x.mean() + 1.0) < 4 * math.sqrt(2.5 / n)
    assert abs(x.var() - 2.5) < 4 * 2.5 * math.sqrt(2.0 / n)
    z = (x - x.mean()) / x.std()
    for lag in range(1, 6):
        assert abs(np.mean(z[:-lag] * z[lag:])) < 4 / math.sqrt(n), lag
    # Normal, not just the right moments: the fraction beyond 1 and 2 standard deviations.
    assert abs(np.mean(np.abs(z) > 1.0) - 0.3173) < 0.015
    assert abs(np.mean(np.abs(z) > 2.0) - 0.0455) < 0.006


def test_band_limited_white_noise_variance_is_noise_power_over_ts():
    # 100,000 hits: the sample variance's standard error is 0.45 %, so 2 % is 4.5 of them.
    power, ts, n = 0.3, 0.01, 100_000
    blk = block("n", "BandLimitedWhiteNoise", noise_power=power, sample_time=ts, seed=23341)
    d = noise_diagram(blk, stop=(n - 1) * ts)
    d.simulation.output_interval = 1.0
    r = blocksim.simulate(d, backend="numba" if HAS_NUMBA else "python")
    x = samples(r)
    assert len(x) == n
    assert abs(x.var() / (power / ts) - 1.0) < 0.02
    assert abs(x.mean()) < 4 * math.sqrt(power / ts / n)
    np.testing.assert_allclose(x, math.sqrt(power / ts) * normals(23341, n), rtol=1e-14,
                               atol=1e-14)


def test_band_limited_white_noise_vector_draws_its_elements_in_turn():
    blk = block("n", "BandLimitedWhiteNoise", noise_power=[0.1, 0.4], sample_time=0.05, seed=5)
    r = both(noise_diagram(blk, stop=2.0, width=2))
    got = samples(r)
    z = normals(5, 2 * len(got)).reshape(-1, 2)
    np.testing.assert_allclose(got, z * np.sqrt([0.1 / 0.05, 0.4 / 0.05]), rtol=1e-15,
                               atol=1e-15)


def test_two_noise_blocks_keep_their_own_streams():
    d = diagram([block("a", "RandomNumber", seed=1, sample_time=0.1),
                 block("b", "RandomNumber", seed=2, sample_time=0.1),
                 block("s", "Sum", signs="++"), block("i", "Integrator"),
                 block("ya", "Output"), block("yb", "Output"), block("y", "Output")],
                [("a.y", "s.u1"), ("b.y", "s.u2"), ("s.y", "i.u"), ("a.y", "ya.u"),
                 ("b.y", "yb.u"), ("s.y", "y.u")], stop=3.0)
    r = both(d)
    np.testing.assert_array_equal(samples(r, "ya"), normals(1, 31))
    np.testing.assert_array_equal(samples(r, "yb"), normals(2, 31))


def test_seed_state_is_a_valid_generator_state():
    for seed in (0, 1, 23341, 2 ** 53):
        state = seed_state(seed)
        assert all(v == int(v) for v in state)
        assert all(0 <= v < M1 for v in state[:3]) and any(state[:3])
        assert all(0 <= v < M2 for v in state[3:]) and any(state[3:])


@pytest.mark.parametrize("blk, message", [
    (block("n", "RandomNumber", sample_time=-1), "a noise source has no input to inherit"),
    (block("n", "RandomNumber", sample_time=0), "parameter 'sample_time' a period of 0"),
    (block("n", "RandomNumber", sample_time=[0.1, 0.2]), "the offset must satisfy"),
    (block("n", "RandomNumber", variance=-1.0), "parameter 'variance' = -1.0 is below"),
    (block("n", "RandomNumber", mean=[0.0, 1.0], variance=[1.0, 2.0, 3.0]),
     "parameter 'mean' has 2 elements but 'variance' has 3"),
    (block("n", "RandomNumber", seed=-3), "parameter 'seed' = -3 is below"),
    (block("n", "RandomNumber", seed=1.5), "parameter 'seed' must be a whole number"),
    (block("n", "BandLimitedWhiteNoise", noise_power=-0.1), "parameter 'noise_power'"),
    (block("n", "BandLimitedWhiteNoise", sample_time="inf"), "parameter 'sample_time'"),
])
def test_bad_parameters_are_refused_naming_block_and_parameter(blk, message):
    with pytest.raises(CompileError) as info:
        blocksim.compile(diagram([blk, block("y", "Output")], [("n.y", "y.u")]))
    assert info.value.block == "n" and message in str(info.value)


def test_the_noise_blocks_are_described_as_discrete_sources():
    from blocksim.blocktypes import registry

    for name in ("RandomNumber", "BandLimitedWhiteNoise"):
        text = registry.get(name).describe()
        assert text.startswith(f"{name} (Sources)") and "seed" in text and "[s]" in text
