"""A TransportDelay of a sampled signal: the delayed jumps of a hold come back exactly on
the hits they coincide with (the breakpoints are counted in the clock's ticks, as the hits
are), so a delay of one period between two holds of that period is a UnitDelay, on both
backends."""
from fractions import Fraction

import numpy as np
import pytest
from both_backends import run_both
from builders import block, diagram

import blocksim
from blocksim.compiler.rates import Clock, as_fraction, delay_grid


def one_period_late(period, delays, stop):
    """Clock -> ZOH(T) -> TransportDelays (in series) -> ZOH(T), logged as `late`, beside
    Clock -> ZOH(T) -> UnitDelay(T), logged as `unit`; an integrator of the delayed signal
    gives the numba backend a state to run in its compiled loop."""
    names = [f"d{i}" for i in range(len(delays))]
    blocks = [block("clock", "Clock"), block("h1", "ZeroOrderHold", sample_time=period),
              *[block(n, "TransportDelay", delay=tau) for n, tau in zip(names, delays)],
              block("h2", "ZeroOrderHold", sample_time=period),
              block("ud", "UnitDelay", sample_time=period), block("watch", "Integrator"),
              block("late", "Output"), block("unit", "Output")]
    chain = ["h1"] + names + ["h2"]
    wires = [("clock.y", "h1.u"), ("h1.y", "ud.u"), ("h2.y", "late.u"), ("ud.y", "unit.u"),
             (f"{names[-1]}.y", "watch.u")]
    wires += [(f"{a}.y", f"{b}.u") for a, b in zip(chain, chain[1:])]
    return diagram(blocks, wires, stop=stop)


def hit_times(period, stop):
    """The hits of `period` up to `stop`, each the double nearest k * period as written."""
    step = as_fraction(period)
    return [float(k * step) for k in range(int(Fraction(stop) / step) + 1)]


@pytest.mark.parametrize("period", [0.1, 0.01, 0.3, 1 / 3, 0.25])
def test_a_delay_of_one_period_between_two_holds_is_a_unit_delay(period):
    # t_k + T in floating point is an ulp after hit k + 1 at 25 of the 199 hits of 0.1 s
    # (the first at 0.3), 17 of 0.01 s, 20 of 0.3 s, 42 of 1/3 s; the breakpoint then came
    # after the hold had sampled, which saw the value one period older
    stop = 2.0 if period == 0.01 else 20.0
    r = run_both(one_period_late(period, [period], stop))
    np.testing.assert_array_equal(r["late"], r["unit"])
    hits = hit_times(period, stop)
    delayed = sorted({e.time for e in r.events_of("breakpoint", "d0")})
    assert delayed == hits[1:]  # each hit's jump, one period later: on the next hit


def test_delays_in_series_that_add_up_to_a_period_land_on_its_hits():
    r = run_both(one_period_late(0.1, [0.05, 0.05], 20.0))
    np.testing.assert_array_equal(r["late"], r["unit"])
    hits = set(hit_times(0.1, 20.0))
    second = {e.time for e in r.events_of("breakpoint", "d1")}
    assert {t for t in second if t in hits} == hits - {0.0}


def test_the_grid_of_a_delay_holds_the_clock_and_the_delay():
    assert delay_grid(Clock(1, 10), 0.1) == (1, 10, 1)  # one tick
    assert delay_grid(Clock(1, 10), 0.05) == (1, 20, 1)  # a finer grid: both fit
    assert delay_grid(Clock(1, 3), 0.5) == (1, 6, 3)
    assert delay_grid(None, 0.25) == (1, 4, 1)  # no clock: the delay's own
    # 0.1 + 0.2 is no short fraction: its binary value, too fine a grid for doubles
    assert delay_grid(Clock(1, 10), 0.1 + 0.2) is None


def test_a_hold_delayed_onto_the_hits_of_another_rate():
    """h1 at 0.2 s, delayed 0.6 s, sampled by h2 at 0.3 s (the clock: 0.1 s): hit k of h2
    sees h1's value of its last hit at or before 0.3 k - 0.6, also where h1's jump comes
    back exactly then (every 0.6 s)."""
    blocks = [block("clock", "Clock"), block("h1", "ZeroOrderHold", sample_time=0.2),
              block("d", "TransportDelay", delay=0.6),
              block("h2", "ZeroOrderHold", sample_time=0.3), block("watch", "Integrator"),
              block("y", "Output")]
    wires = [("clock.y", "h1.u"), ("h1.y", "d.u"), ("d.y", "h2.u"), ("h2.y", "y.u"),
             ("d.y", "watch.u")]
    r = run_both(diagram(blocks, wires, stop=12.0))
    last = np.append(r.time[:-1] != r.time[1:], True)  # each instant's right limit
    seen = dict(zip(r.time[last].tolist(), r["y"][last].tolist()))
    for k in range(2, 41):
        held = (3 * k - 6) // 2  # h1's last hit (in 0.2 s) at or before 0.3 k - 0.6
        assert seen[float(Fraction(3 * k, 10))] == float(Fraction(held, 5)), k
