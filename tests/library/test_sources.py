"""Sine, Pulse, Ramp, Clock and FromTable against analytic values.

Sources without states run on the output grid exactly (no solver error), so their values
are compared to 1e-12; integrals of piecewise sources use tolerances of 1e-12, so the
comparisons use 1e-9. An event instant appears twice in `time`: left limit, then right.
"""
import math

import numpy as np
import pytest
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError

TIGHT = {"rtol": 1e-12, "atol": 1e-12}


def run(source: dict, integrate: int = 0, **settings):
    """Simulate one source block `src`, logged as `y` (and, of width `integrate`, its
    integral as `iy`)."""
    blocks = [source, block("y", "Output")]
    wires = [("src.y", "y.u")]
    if integrate:
        blocks += [block("int", "Integrator", x0=[0.0] * integrate), block("iy", "Output")]
        wires += [("src.y", "int.u"), ("int.y", "iy.u")]
    return blocksim.simulate(diagram(blocks, wires, **{**TIGHT, **settings}))


def rows_at(r, t):
    return np.flatnonzero(r.time == t)


def compile_error(source: dict) -> CompileError:
    with pytest.raises(CompileError) as info:
        run(source, stop=1.0)
    return info.value


# ----- Sine and Clock -----

def test_sine_matches_the_formula_on_the_grid():
    r = run(block("src", "Sine", amplitude=2.0, frequency=0.75, phase=0.4, bias=-0.5),
            stop=3.0, output_interval=0.01)
    expected = 2.0 * np.sin(2 * np.pi * 0.75 * r.time + 0.4) - 0.5
    assert r["y"] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert r.events == ()  # smooth: no events


def test_sine_vector_parameters_give_a_vector_output():
    r = run(block("src", "Sine", amplitude=[1.0, 2.0, 3.0], phase=[0.0, 2 * math.pi / 3, 4 * math.pi / 3]),
            stop=1.0, output_interval=0.1)
    assert r["y"].shape == (len(r.time), 3)
    for k, (a, ph) in enumerate(zip([1.0, 2.0, 3.0], [0.0, 2 * math.pi / 3, 4 * math.pi / 3])):
        assert r["y"][:, k] == pytest.approx(a * np.sin(2 * np.pi * r.time + ph), abs=1e-12)


def test_sine_with_mismatched_vector_parameters_is_a_compile_error():
    err = compile_error(block("src", "Sine", amplitude=[1.0, 2.0], frequency=[1.0, 2.0, 3.0]))
    assert err.block == "src"
    assert "'amplitude' has 2 elements" in str(err)


def test_clock_outputs_time():
    r = run(block("src", "Clock"), start=0.5, stop=2.0, output_interval=0.25)
    assert np.array_equal(r["y"], r.time)
    assert r.time[0] == 0.5 and r.time[-1] == 2.0


# ----- Pulse -----

def pulse_edges(period, width, delay, stop):
    rises = [delay + k * period for k in range(100) if delay + k * period <= stop]
    falls = [t + period * width / 100 for t in rises if t + period * width / 100 <= stop]
    return rises, falls


def test_pulse_edges_are_time_events_with_exact_left_and_right_limits():
    period, width, delay, amp = 0.3, 40.0, 0.1, 2.5
    r = run(block("src", "Pulse", amplitude=amp, period=period, width=width, delay=delay),
            stop=1.5, output_interval=0.05)
    rises, falls = pulse_edges(period, width, delay, 1.5)
    assert [e.time for e in r.events_of("rise", "src")] == pytest.approx(rises, abs=1e-15)
    assert [e.time for e in r.events_of("fall", "src")] == pytest.approx(falls, abs=1e-15)
    for t in r.events_of("rise", "src"):
        rows = rows_at(r, t.time)
        assert len(rows) == 2 and list(r["y"][rows]) == [0.0, amp]
    for t in r.events_of("fall", "src"):
        rows = rows_at(r, t.time)
        assert len(rows) == 2 and list(r["y"][rows]) == [amp, 0.0]
    # Everywhere else the level follows the definition.
    phase = np.mod(r.time - delay, period)
    high = (r.time >= delay) & (phase < period * width / 100)
    events = [e.time for e in r.events]
    away = np.all(np.abs(r.time[:, None] - np.array(events)[None, :]) > 1e-9, axis=1)
    assert np.array_equal(r["y"][away], np.where(high, amp, 0.0)[away])


def test_pulse_integral_is_exact_because_the_solver_lands_on_every_edge():
    period, width, delay = 0.25, 30.0, 0.05
    r = run(block("src", "Pulse", amplitude=[1.0, -2.0], period=period, width=width, delay=delay),
            integrate=2, stop=2.0, output_interval=0.5)
    # Pulses start at 0.05, 0.30, ..., 1.80: eight whole pulses of 0.075 s before t = 2.
    assert r["iy"][-1] == pytest.approx([8 * 0.075, -2 * 8 * 0.075], rel=1e-9)


def test_pulse_started_late_and_with_many_periods_is_in_phase():
    # Start inside the 1001st pulse: the block must find its phase without replaying edges.
    period, width, delay = 0.01, 50.0, 0.0
    r = run(block("src", "Pulse", period=period, width=width, delay=delay),
            start=10.002, stop=10.03, output_interval=0.001)
    assert r["y"][0] == 1.0
    assert r.events_of("fall", "src")[0].time == pytest.approx(10.005, abs=1e-12)
    assert r.events_of("rise", "src")[0].time == pytest.approx(10.01, abs=1e-12)
    assert len(r.events_of(None, "src")) == 6


@pytest.mark.parametrize("params, message", [
    ({"period": 0.0}, "period must be a positive"),
    ({"period": -1.0}, "period must be a positive"),
    ({"width": 0.0}, "width must be a percentage"),
    ({"width": 100.0}, "width must be a percentage"),
])
def test_pulse_bad_parameters_are_compile_errors_naming_the_block(params, message):
    err = compile_error(block("src", "Pulse", **params))
    assert err.block == "src" and message in str(err) and "'src'" in str(err)


# ----- Ramp -----

def test_ramp_starts_at_a_time_event_and_integrates_exactly():
    r = run(block("src", "Ramp", slope=[2.0, -1.0], start=0.7, initial=[1.0, 0.5]),
            integrate=2, stop=2.0, output_interval=0.1)
    assert [e.time for e in r.events_of("start", "src")] == [0.7]
    t = r.time
    ramp = np.clip(t - 0.7, 0.0, None)
    assert r["y"][:, 0] == pytest.approx(1.0 + 2.0 * ramp, abs=1e-12)
    assert r["y"][:, 1] == pytest.approx(0.5 - ramp, abs=1e-12)
    # The kink at 0.7 is stepped onto, so the integral is exact up to the tolerance.
    assert r["iy"][:, 0] == pytest.approx(t + ramp**2, rel=1e-9, abs=1e-12)
    assert r["iy"][:, 1] == pytest.approx(0.5 * t - ramp**2 / 2, rel=1e-9, abs=1e-12)


def test_ramp_started_before_the_simulation_is_already_rising():
    r = run(block("src", "Ramp", slope=3.0, start=-1.0, initial=0.0), stop=1.0, output_interval=0.5)
    assert r["y"] == pytest.approx(3.0 * (r.time + 1.0), abs=1e-12)


# ----- FromTable -----

def test_from_table_interpolates_holds_outside_and_makes_every_breakpoint_an_event():
    times, values = [0.5, 1.0, 2.0, 2.5], [1.0, 3.0, -1.0, 0.0]
    r = run(block("src", "FromTable", times=times, values=values), stop=3.0, output_interval=0.05)
    assert r["y"] == pytest.approx(np.interp(r.time, times, values), abs=1e-12)
    assert [e.time for e in r.events_of("breakpoint", "src")] == times
    for t in times:
        assert len(rows_at(r, t)) == 2  # left and right limits


def test_from_table_integral_is_exact_across_the_kinks():
    times, values = [0.0, 0.3, 1.1, 1.7], [0.0, 2.0, -1.0, 4.0]
    r = run(block("src", "FromTable", times=times, values=values), integrate=1,
            stop=2.0, output_interval=0.1)
    # Trapezoids are exact on each segment; the last value is held from 1.7 to 2.0.
    exact = sum((values[i] + values[i + 1]) / 2 * (times[i + 1] - times[i]) for i in range(3))
    exact += values[-1] * (2.0 - times[-1])
    assert r["iy"][-1] == pytest.approx(exact, rel=1e-9)


def test_from_table_matrix_gives_one_column_per_output_and_a_repeated_time_jumps():
    times = [0.0, 1.0, 1.0, 2.0]
    values = [[0.0, 10.0], [1.0, 20.0], [5.0, -1.0], [3.0, 1.0]]
    r = run(block("src", "FromTable", times=times, values=values), stop=2.5, output_interval=0.25)
    assert r["y"].shape[1] == 2
    rows = rows_at(r, 1.0)
    assert len(rows) == 2
    assert r["y"][rows[0]] == pytest.approx([1.0, 20.0], abs=1e-12)  # left limit
    assert r["y"][rows[1]] == pytest.approx([5.0, -1.0], abs=1e-12)  # right limit
    at = np.flatnonzero(r.time == 1.5)
    assert r["y"][at[0]] == pytest.approx([4.0, 0.0], abs=1e-12)
    assert r["y"][-1] == pytest.approx([3.0, 1.0], abs=1e-12)


@pytest.mark.parametrize("times, values, message", [
    ([0.0, 2.0, 1.0], [0.0, 1.0, 2.0], "'times' must be increasing"),
    ([0.0, 1.0, 1.0, 1.0], [0.0, 1.0, 2.0, 3.0], "more than twice"),
    ([0.0, 1.0, 2.0], [0.0, 1.0], "one value per element of 'times' (3)"),
    ([0.0], [1.0], "at least 2 points"),
])
def test_from_table_bad_tables_are_compile_errors_naming_the_block(times, values, message):
    err = compile_error(block("src", "FromTable", times=times, values=values))
    assert err.block == "src" and message in str(err)
