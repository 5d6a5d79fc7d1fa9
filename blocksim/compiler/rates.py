"""Sample times: what each block's rate is, and the exact clock that all discrete rates share.

Every block has a sample time (Simulink's notion): continuous, constant, discrete
`[period, offset]`, or inherited from its inputs. Inherited blocks are resolved here, from
the blocks that drive them, until nothing changes: constant inputs do not count, any
continuous input makes the block continuous, discrete inputs of one rate give that rate,
and discrete inputs of several rates give the fastest of them if its hits contain all the
others', else their common base rate. A block that inherits from nothing (a loop of
inherited blocks, a block without inputs) is continuous.

Hit times are exact. Periods and offsets are read as the short decimal (or simple) fractions
the user wrote (0.1 is 1/10, not the binary double nearest to it), and all discrete rates
count integer ticks of one common base `p/q` seconds: hit k of `[T, o]` is tick
o/base + k*T/base, and its time is the double nearest to tick*p/q, computed from integers,
never by adding T up. Hits of several rates that fall on the same tick are the same instant,
to the last bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Mapping, Sequence

from blocksim.blocktypes.sampletime import (CONSTANT, CONSTANT_TIME, CONTINUOUS, CONTINUOUS_TIME, DISCRETE,
                                 INHERITED, INHERITED_TIME, TRIGGERED, SampleTime)

# Integers up to 2**53 are exact doubles: tick * p and q stay below it so that a hit time
# is one correctly rounded division.
EXACT_INT = 2 ** 53
MAX_DENOMINATOR_DIGITS = 12


def as_fraction(value: float) -> Fraction:
    """The simplest fraction whose nearest double is `value` (0.1 -> 1/10, 1/3 -> 1/3).

    Tries denominators up to 10, 100, ... 10**12; a value none of them reproduces keeps its
    exact binary value.
    """
    for digits in range(1, MAX_DENOMINATOR_DIGITS + 1):
        candidate = Fraction(value).limit_denominator(10 ** digits)
        if float(candidate) == value:
            return candidate
    return Fraction(value)


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    """Greatest common divisor of two non-negative rationals (gcd(0, b) = b)."""
    return Fraction(math.gcd(a.numerator * b.denominator, b.numerator * a.denominator),
                    a.denominator * b.denominator)


@dataclass(frozen=True)
class Rate:
    """One discrete rate on the common clock: hits at ticks offset_ticks + k*period_ticks."""

    period: float
    offset: float
    period_ticks: int
    offset_ticks: int

    @property
    def sample_time(self) -> SampleTime:
        return SampleTime(DISCRETE, self.period, self.offset)


@dataclass(frozen=True)
class Clock:
    """The base tick shared by all discrete rates: `p/q` seconds, p and q coprime."""

    p: int
    q: int

    @classmethod
    def for_times(cls, times: Iterable[SampleTime]) -> "Clock":
        base = Fraction(0)
        for st in times:
            base = _gcd(base, as_fraction(st.period))
            if st.offset:
                base = _gcd(base, as_fraction(st.offset))
        if base == 0:
            base = Fraction(1)
        return cls(base.numerator, base.denominator)

    def ticks(self, value: float) -> int:
        """A period or offset in ticks (exact by construction of the clock)."""
        ticks = as_fraction(value) / Fraction(self.p, self.q)
        if ticks.denominator != 1:
            raise ValueError(f"{value!r} is not a whole number of ticks of {self.p}/{self.q} s")
        return int(ticks)

    def rate(self, st: SampleTime) -> Rate:
        return Rate(st.period, st.offset, self.ticks(st.period), self.ticks(st.offset))

    def time(self, tick: int) -> float:
        """The double nearest to tick * p / q."""
        num = tick * self.p
        if abs(num) < EXACT_INT and self.q < EXACT_INT:
            return float(num) / float(self.q)  # two exact doubles: one rounding
        return num / self.q  # Python's int division is correctly rounded too

    def first_tick_after(self, t: float) -> int:
        """The smallest tick whose time is > t.

        Found from the midpoint between t and the next double (ticks below it round to t
        or less, ticks above it to more), so that a tick far finer than the spacing of
        doubles at t (an offset of 1e-20 s beside a period of 0.1 s) costs no more than a
        coarse one: the loops below take a step or two.
        """
        if not math.isfinite(t):
            raise ValueError(f"no tick after t = {t}")
        up = math.nextafter(t, math.inf)
        mid = (Fraction(t) + Fraction(up)) / 2 if math.isfinite(up) else Fraction(t)
        tick = math.floor(mid * self.q / self.p)
        while self.time(tick) > t:
            tick -= 1
        while self.time(tick) <= t:
            tick += 1
        return tick


def next_hit(rate: Rate, clock: Clock, t: float) -> int:
    """The index k of the first hit of `rate` at a time > t (hit k is tick offset + k*period)."""
    tick = clock.first_tick_after(t)
    k = max(0, -(-(tick - rate.offset_ticks) // rate.period_ticks))
    while k > 0 and clock.time(rate.offset_ticks + (k - 1) * rate.period_ticks) > t:
        k -= 1
    return k


def delay_grid(clock: Clock | None, delay: float) -> tuple[int, int, int] | None:
    """(p, q, d): the coarsest grid of p/q s holding both the clock's ticks and a fixed
    delay of d ticks, with the delay read as the user wrote it (`as_fraction`), as the
    clock reads periods. A discontinuity at tick n re-appears at tick n + d, computed as
    a hit is (`history_ring.later`): a hit's delayed jump falls on the hit a whole number
    of periods later, to the last bit, and delays in series that add up to a period land
    on its hit. None where the grid is too fine for doubles (a delay of pi s)."""
    if not (delay > 0.0 and math.isfinite(delay)):
        return None
    amount = as_fraction(delay)
    tick = _gcd(Fraction(clock.p, clock.q), amount) if clock is not None else amount
    ticks = amount / tick  # a whole number by construction
    if max(tick.numerator, tick.denominator, ticks.numerator) >= EXACT_INT:
        return None
    return tick.numerator, tick.denominator, int(ticks)


def hit_time(rate: Rate, clock: Clock, k: int) -> float:
    """The time of hit k of `rate`."""
    return clock.time(rate.offset_ticks + k * rate.period_ticks)


def combine(times: Sequence[SampleTime]) -> SampleTime:
    """The rate an inherited block takes from the rates of its inputs (module docstring)."""
    kinds = {st.kind for st in times}
    if CONTINUOUS in kinds:
        return CONTINUOUS_TIME
    if TRIGGERED in kinds:  # one trigger's rate, or asynchronous rates mixed: continuous
        triggered = {st for st in times if st.kind == TRIGGERED}
        mixed = len(triggered) > 1 or DISCRETE in kinds
        return CONTINUOUS_TIME if mixed else triggered.pop()
    discrete = sorted({st for st in times if st.discrete}, key=lambda s: (s.period, s.offset))
    if not discrete:
        return CONSTANT_TIME if CONSTANT in kinds else INHERITED_TIME
    if len(discrete) == 1:
        return discrete[0]
    clock = Clock.for_times(discrete)
    rates = [clock.rate(st) for st in discrete]
    for cand in rates:  # the fastest whose hits contain every other rate's hits
        if all(r.period_ticks % cand.period_ticks == 0
               and (r.offset_ticks - cand.offset_ticks) % cand.period_ticks == 0 for r in rates):
            return cand.sample_time
    period = 0
    for r in rates:
        period = math.gcd(period, r.period_ticks)
        period = math.gcd(period, r.offset_ticks - rates[0].offset_ticks)
    offset = rates[0].offset_ticks % period
    base = Fraction(clock.p, clock.q)
    return SampleTime(DISCRETE, float(period * base), float(offset * base))


def resolve(declared: Mapping[str, SampleTime],
            inputs_of: Mapping[str, Sequence[str]]) -> dict[str, SampleTime]:
    """Every block's resolved sample time.

    `declared` holds each block's own sample time (INHERITED for those that take their
    inputs'); `inputs_of` names, for each block, the blocks driving its inputs.
    """
    resolved = dict(declared)
    inherited = [b for b, st in declared.items() if st.kind == INHERITED]
    for _ in range(len(inherited) + 2):
        changed = False
        for block in inherited:
            new = combine([resolved[src] for src in inputs_of.get(block, ())])
            if new != resolved[block]:
                resolved[block] = new
                changed = True
        if not changed:
            break
    for block in inherited:
        if resolved[block].kind == INHERITED:
            resolved[block] = CONTINUOUS_TIME
    return resolved
