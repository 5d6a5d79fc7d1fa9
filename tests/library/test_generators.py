"""SignalGenerator, Chirp and RepeatingSequence against independent references (scipy's
waveforms, np.interp of the period, closed-form instants), on both backends with their
time events settled in the compiled loop.

Each wave also feeds an Integrator: its value, against the integral of the reference taken
piece by piece between the closed-form kinks (scipy's quad), shows that the solver never
stepped across a jump or corner.
"""
import math

import numpy as np
import pytest
from both_backends import HAS_NUMBA, run_both
from builders import block, diagram
from scipy import integrate, signal

import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def run_checked(d, **options):
    """run_both, and on numba the time events settled in the compiled loop too."""
    r = run_both(d, **options)
    if HAS_NUMBA:
        model = blocksim.compile(d)
        blocksim.simulate(model, backend="numba", **options)
        assert model.derived["native"].timed, "time events were not compiled"
    return r


def limits(time, ref):
    """The reference on the result rows: an instant given twice is its left limit, then
    its right limit, read just before and just after it (the reference's own roundoff at
    the instant could put it on either side)."""
    left = np.zeros(len(time), dtype=bool)
    left[:-1] = time[:-1] == time[1:]
    right = np.zeros(len(time), dtype=bool)
    right[1:] = left[:-1]
    return np.where(left, ref(time - 1e-13), np.where(right, ref(time + 1e-13), ref(time)))


WAVES = {  # scipy's waveforms, phased to rise through 0 at t = 0 like the sine
    "square": lambda a, f: lambda t: a * signal.square(2 * np.pi * f * t),
    "sawtooth": lambda a, f: lambda t: a * signal.sawtooth(2 * np.pi * f * t + np.pi),
    "triangle": lambda a, f: lambda t: a * signal.sawtooth(2 * np.pi * f * t + np.pi / 2, 0.5),
    "sine": lambda a, f: lambda t: a * np.sin(2 * np.pi * f * t),
}
KINKS = {"square": (2, 0.0), "sawtooth": (1, 0.5), "triangle": (2, 0.25), "sine": (0, 0.0)}


def kinks(waveform, f, start, stop):
    """The closed-form instants of the jumps, resets or corners in (start, stop]."""
    per_period, first = KINKS[waveform]
    if not per_period:
        return np.array([])
    h = 1.0 / (per_period * f)
    k = np.arange(math.floor((start - first / f) / h) - 1, math.ceil((stop - first / f) / h) + 2)
    t = first / f + k * h
    return t[(t > start) & (t <= stop)]


def integral(ref, breaks, times):
    """The integral of ref from 0 to each of `times`, piece by piece between the breaks."""
    points = np.unique(np.concatenate([[0.0], breaks, times]))
    pieces = [integrate.quad(ref, a, b, epsabs=1e-15, epsrel=1e-14)[0]
              for a, b in zip(points[:-1], points[1:])]
    total = np.concatenate([[0.0], np.cumsum(pieces)])
    return np.interp(times, points, total)


def generator(waveform, amplitude, frequency, stop=3.0, **settings):
    n = max(np.size(amplitude), np.size(frequency))
    return diagram([block("g", "SignalGenerator", waveform=waveform, amplitude=amplitude,
                          frequency=frequency),
                    block("i", "Integrator", x0=[0.0] * n), block("y", "Output"),
                    block("area", "Output")],
                   [("g.y", "i.u"), ("g.y", "y.u"), ("i.y", "area.u")],
                   **{**TIGHT, "stop": stop, "output_interval": 0.01, **settings})


@pytest.mark.parametrize("waveform", ["square", "sawtooth", "triangle", "sine"])
def test_signal_generator_matches_scipy_and_switches_at_exact_instants(waveform):
    a, f, stop = 1.5, 1.7, 3.0
    r = run_checked(generator(waveform, a, f, stop))
    ref = WAVES[waveform](a, f)
    np.testing.assert_allclose(r["y"], limits(r.time, ref), rtol=0, atol=1e-11)
    expected = kinks(waveform, f, 0.0, stop)
    found = [e.time for e in r.events_of(block="g")]
    if waveform == "square":  # the rising edge at the start time is logged too
        assert found[0] == 0.0 and r.events_of(block="g")[0].kind == "rise"
        found = found[1:]
        assert [e.kind for e in r.events_of(block="g")[1:3]] == ["fall", "rise"]
    assert len(found) == len(expected) > 0 or waveform == "sine" and not found
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-15)
    # The integral: exact only if no step straddled a kink.
    area = integral(ref, expected, r.time)
    np.testing.assert_allclose(r["area"], area, rtol=0, atol=1e-10)


def test_signal_generator_vectors_run_each_element_at_its_own_frequency():
    amps, freqs = [1.0, -2.0], [0.9, 2.3]
    r = run_checked(generator("sawtooth", amps, freqs, stop=2.5))
    times = sorted(e.time for e in r.events_of(block="g"))
    expected = sorted(np.concatenate([kinks("sawtooth", f, 0.0, 2.5) for f in freqs]))
    np.testing.assert_allclose(times, expected, rtol=0, atol=1e-15)
    for k, (a, f) in enumerate(zip(amps, freqs)):
        ref = WAVES["sawtooth"](a, f)
        # At an instant where only the other element jumps, both rows are the same value.
        np.testing.assert_allclose(r["y"][:, k], limits(r.time, ref), rtol=0, atol=1e-11)


def test_signal_generator_from_a_start_time_on_an_edge_and_between_edges():
    for start in (0.25, 0.4):  # f = 2: the square's edges are at k / 4
        r = run_checked(generator("square", 1.0, 2.0, stop=1.5, start=start))
        first = r.events_of(block="g")
        expected = kinks("square", 2.0, start - 1e-12, 1.5)
        assert [e.time for e in first] == pytest.approx(list(expected), abs=1e-15)
        np.testing.assert_allclose(r["y"], limits(r.time, WAVES["square"](1.0, 2.0)),
                                   rtol=0, atol=1e-12)


def test_signal_generator_edges_do_not_drift_over_many_periods():
    f, stop = 10.0, 200.0  # 4000 edges at k / 20
    r = blocksim.simulate(generator("square", 1.0, f, stop=stop, output_interval=1.0))
    found = np.array([e.time for e in r.events_of(block="g")])
    k = np.arange(len(found))
    assert len(found) == 2 * f * stop + 1
    np.testing.assert_allclose(found, k / (2 * f), rtol=1e-15, atol=0)


def test_chirp_matches_scipy_linear_chirp():
    f0, target, f1 = 0.2, 5.0, 2.0
    d = diagram([block("c", "Chirp", initial_frequency=f0, target_time=target,
                       target_frequency=f1),
                 block("i", "Integrator"), block("y", "Output")],
                [("c.y", "i.u"), ("c.y", "y.u")], stop=8.0, output_interval=0.01, **TIGHT)
    r = run_both(d)
    # scipy's chirp is a cosine: phi = -90 degrees makes it the sine; past the target time
    # the sweep goes on (f = 3.2 Hz at t = 8).
    ref = signal.chirp(r.time, f0, target, f1, method="linear", phi=-90)
    np.testing.assert_allclose(r["y"], ref, rtol=0, atol=1e-12)


def repeating(times, values, stop, **settings):
    width = np.shape(values)[1] if np.ndim(values) == 2 else 1
    return diagram([block("s", "RepeatingSequence", times=times, values=values),
                    block("i", "Integrator", x0=[0.0] * width), block("y", "Output")],
                   [("s.y", "i.u"), ("s.y", "y.u")],
                   **{**TIGHT, "stop": stop, "output_interval": 0.01, **settings})


def test_repeating_sequence_is_the_period_interpolated_with_exact_breakpoints():
    times, values, stop = [0.0, 0.5, 1.2, 2.0], [0.0, 2.0, -1.0, 1.0], 7.0
    r = run_checked(repeating(times, values, stop))
    period = times[-1]

    def ref(t):
        return np.interp(np.mod(t, period), times, values)
    np.testing.assert_allclose(r["y"], limits(r.time, ref), rtol=0, atol=1e-12)
    expected = [k * period + s for k in range(4) for s in times[:-1]]
    expected = [t for t in expected if t <= stop]
    found = [e.time for e in r.events_of(block="s")]
    assert found == pytest.approx(expected, abs=1e-15) and len(found) == 11


def test_repeating_sequence_with_a_jump_and_two_columns():
    # A time given twice is a jump; two columns give a vector output.
    times = [0.0, 1.0, 1.0, 3.0]
    values = [[0.0, 5.0], [1.0, 5.0], [4.0, 0.0], [0.0, 1.0]]
    r = run_checked(repeating(times, values, 7.5))
    t = r.time
    left = np.zeros(len(t), dtype=bool)
    left[:-1] = t[:-1] == t[1:]
    phase = np.mod(t, 3.0)
    col0 = np.where(phase < 1.0, phase, 4.0 - 2.0 * (phase - 1.0))
    col1 = np.where(phase < 1.0, 5.0, (phase - 1.0) / 2.0)
    # left limits: before t = 1 + 3k the first piece, before 3k the last one
    at_jump = left & np.isclose(phase, 1.0)
    at_wrap = left & np.isclose(phase, 0.0) & (t > 0)
    col0[at_jump], col1[at_jump] = 1.0, 5.0
    col0[at_wrap], col1[at_wrap] = 0.0, 1.0
    np.testing.assert_allclose(r["y"], np.column_stack([col0, col1]), rtol=0, atol=1e-12)


def test_repeating_sequence_breakpoints_do_not_drift():
    # A 0.1 s period for 1000 s: 20,000 breakpoints, each at k * 0.1 + s from the integer k.
    r = blocksim.simulate(repeating([0.0, 0.03, 0.1], [0.0, 1.0, 0.0], 1000.0,
                                    output_interval=10.0))
    found = np.array([e.time for e in r.events_of(block="s")])
    k = np.arange(len(found)) // 2
    expected = k * 0.1 + np.where(np.arange(len(found)) % 2, 0.03, 0.0)
    assert len(found) == 20001
    np.testing.assert_allclose(found, expected, rtol=2e-16, atol=0)


def test_repeating_sequence_at_negative_times():
    r = run_both(repeating([0.0, 1.0, 2.0], [0.0, 1.0, 0.0], 1.0, start=-3.5))
    ref = signal.sawtooth(np.pi * r.time, 0.5) * 0.5 + 0.5  # a 2 s triangle 0..1..0
    np.testing.assert_allclose(r["y"], ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("blk, message", [
    (block("bad", "SignalGenerator", frequency=0.0), "parameter 'frequency' must be > 0 Hz"),
    (block("bad", "SignalGenerator", frequency=[1.0, -1.0]), "must be > 0 Hz, got -1"),
    (block("bad", "SignalGenerator", amplitude=[1.0, 2.0], frequency=[1.0, 2.0, 3.0]),
     "parameter 'amplitude' has 2 elements but 'frequency' has 3"),
    (block("bad", "SignalGenerator", waveform="noise"), "parameter 'waveform' is 'noise'"),
    (block("bad", "SignalGenerator", amplitude="inf"), "parameter 'amplitude'"),
    (block("bad", "Chirp", target_time=0.0), "parameter 'target_time' must be > 0 s"),
    (block("bad", "RepeatingSequence", times=[1.0, 2.0], values=[0.0, 1.0]),
     "parameter 'times' must start at 0"),
    (block("bad", "RepeatingSequence", times=[0.0, 2.0, 1.0], values=[0.0, 1.0, 2.0]),
     "'times' must be increasing"),
    (block("bad", "RepeatingSequence", times=[0.0, 0.0], values=[0.0, 1.0]),
     "must end at a period > 0"),
    (block("bad", "RepeatingSequence", times=[0.0, 1.0], values=[0.0, 1.0, 2.0]),
     "'values' must have one value per element of 'times'"),
])
def test_bad_parameters_are_refused_naming_block_and_parameter(blk, message):
    with pytest.raises(CompileError) as info:
        blocksim.compile(diagram([blk, block("y", "Output")], [("bad.y", "y.u")]))
    assert info.value.block == "bad" and message in str(info.value)


def test_too_many_edges_are_refused_before_the_run():
    with pytest.raises(CompileError, match="time events"):
        blocksim.compile(generator("square", 1.0, 1e9, stop=1.0))


def test_instants_that_float64_cannot_count_are_refused_before_the_run():
    # 1 MHz at t = 1e10 s: the edges are closer than the spacing of float64 there.
    with pytest.raises(CompileError, match="block 'g'.*parameter 'frequency'.*not exact"):
        blocksim.compile(generator("square", 1.0, 1e6, start=1e10, stop=1e10 + 0.1))
    with pytest.raises(CompileError, match="block 's'.*parameter 'times'.*not exact"):
        blocksim.compile(repeating([0.0, 1e-6], [0.0, 1.0], stop=1e10 + 0.1, start=1e10))


def test_the_generators_are_described_as_sources():
    from blocksim.blocktypes import registry

    for name in ("SignalGenerator", "Chirp", "RepeatingSequence"):
        text = registry.get(name).describe()
        assert text.startswith(f"{name} (Sources)") and "Parameters:" in text
    assert "[Hz]" in registry.get("Chirp").describe()
