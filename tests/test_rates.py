"""Sample times: parsing, the common clock, exact hit times and inherited rates."""
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from blocksim.compiler.rates import Clock, as_fraction, combine, hit_time, next_hit, resolve
from blocksim.blocktypes.sampletime import (CONSTANT_TIME, CONTINUOUS_TIME, INHERITED_TIME, SampleTime,
                                 parse_sample_time)


def d(period, offset=0.0):
    return SampleTime("discrete", period, offset)


@pytest.mark.parametrize("value, expected", [
    (0.1, d(0.1)), ([0.5, 0.25], d(0.5, 0.25)), (-1, INHERITED_TIME),
    (float("inf"), CONSTANT_TIME), ([2, 0], d(2.0)),
])
def test_parse(value, expected):
    assert parse_sample_time(value) == expected


@pytest.mark.parametrize("value, message", [
    (-0.5, "period must be > 0"), ([0.1, 0.1], "0 <= offset < period"),
    ([0.1, -0.01], "0 <= offset < period"), (0, "period of 0"), (float("nan"), "NaN"),
    ([1, 2, 3], "period or [period, offset]"),
])
def test_refused(value, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_sample_time(value)


def test_continuous_only_where_allowed():
    assert parse_sample_time(0, allow_continuous=True) == CONTINUOUS_TIME


def test_decimal_values_are_read_as_written():
    assert as_fraction(0.1) == Fraction(1, 10)
    assert as_fraction(1e-3) == Fraction(1, 1000)
    assert as_fraction(1 / 3) == Fraction(1, 3)
    assert as_fraction(2.5e-7) == Fraction(1, 4_000_000)


def test_hits_of_several_rates_coincide_to_the_bit():
    clock = Clock.for_times([d(0.1), d(0.3), d(0.25, 0.05)])
    fast, slow, odd = clock.rate(d(0.1)), clock.rate(d(0.3)), clock.rate(d(0.25, 0.05))
    assert (clock.p, clock.q) == (1, 20)
    for k in range(1000):
        assert hit_time(slow, clock, k) == hit_time(fast, clock, 3 * k)
        assert hit_time(slow, clock, k) == float(Fraction(3, 10) * k)  # not 3 * 0.1 = 0.30...04
    assert hit_time(odd, clock, 1) == 0.3 == hit_time(slow, clock, 1)


def test_hits_stay_on_the_grid_after_a_million_periods():
    clock = Clock.for_times([d(0.1)])
    rate = clock.rate(d(0.1))
    assert hit_time(rate, clock, 10 ** 6) == 100000.0
    assert hit_time(rate, clock, 10 ** 6 + 1) == float(Fraction(1000001, 10))
    accumulated = 0.0
    for _ in range(10 ** 6):
        accumulated += 0.1
    assert accumulated != 100000.0  # what adding T up would have given


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10 ** 6), st.integers(0, 10 ** 7))
def test_hit_times_are_the_correctly_rounded_integer_formula(den, k):
    period = 1.0 / den if den % 3 else 0.001 * den
    clock = Clock.for_times([d(period)])
    rate = clock.rate(d(period))
    exact = as_fraction(period) * k
    assert hit_time(rate, clock, k) == float(exact)


@settings(max_examples=300, deadline=None)
@given(st.floats(-5, 1e4, allow_nan=False))
def test_next_hit_is_the_first_strictly_after(t):
    clock = Clock.for_times([d(0.1), d(0.25, 0.05)])
    for rate in (clock.rate(d(0.1)), clock.rate(d(0.25, 0.05))):
        k = next_hit(rate, clock, t)
        assert hit_time(rate, clock, k) > t
        assert k == 0 or hit_time(rate, clock, k - 1) <= t


def test_combine():
    assert combine([d(0.1), CONSTANT_TIME]) == d(0.1)
    assert combine([d(0.1), CONTINUOUS_TIME]) == CONTINUOUS_TIME
    assert combine([CONSTANT_TIME, CONSTANT_TIME]) == CONSTANT_TIME
    assert combine([d(0.1), d(0.2)]) == d(0.1)  # the fastest holds all hits
    assert combine([d(0.2), d(0.2, 0.1)]) == d(0.1)  # interleaved: the base rate
    assert combine([d(0.5), d(1 / 3)]) == d(1 / 6)
    assert combine([]) == INHERITED_TIME


def test_resolve_through_a_feedback_loop():
    declared = {"delay": d(0.1), "gain": INHERITED_TIME, "sum": INHERITED_TIME,
                "src": CONSTANT_TIME, "scope": INHERITED_TIME, "alone": INHERITED_TIME,
                "plant": CONTINUOUS_TIME, "mix": INHERITED_TIME}
    inputs = {"gain": ["delay"], "sum": ["src", "gain"], "delay": ["sum"], "scope": ["sum"],
              "mix": ["plant", "gain"]}
    rates = resolve(declared, inputs)
    assert rates["gain"] == rates["sum"] == rates["scope"] == d(0.1)
    assert rates["alone"] == CONTINUOUS_TIME and rates["mix"] == CONTINUOUS_TIME
