"""The sample hits of a run: for each discrete rate the index of its next hit and that hit's
time, on the model's exact clock (`blocksim.compiler.rates`).

Hit k of a rate is always computed from k (never by adding periods up), so after a million
periods the hits are still on the grid, and hits of several rates that fall on one tick are
one instant to the last bit.
"""
from __future__ import annotations

import math

from blocksim.compiler.compiled import CompiledModel
from blocksim.compiler.rates import EXACT_INT, hit_time, next_hit


class HitSchedule:
    """The next hit of every rate of one run (mutable: it belongs to the engine)."""

    def __init__(self, model: CompiledModel, start: float):
        self.clock, self.rates = model.clock, model.rates
        before = math.nextafter(start, -math.inf)  # a hit at the start time counts
        self.k = [next_hit(rate, self.clock, before) for rate in self.rates]
        self.times = [hit_time(rate, self.clock, k) for rate, k in zip(self.rates, self.k)]
        self.next_time = min(self.times, default=math.inf)
        self.count = 0  # hits handled so far (one per instant, whatever the rates)
        # Per rate (offset, period) in ticks, and the clock as doubles: a hit whose tick * p
        # is below 2**53 is one division of two exact doubles (`Clock.time`), done here
        # without the general path's calls.
        self._ticks = [(rate.offset_ticks, rate.period_ticks) for rate in self.rates]
        clock = self.clock
        self._exact = clock is not None and clock.q < EXACT_INT
        # A clock beyond doubles (a period of 1e300 s) takes the general path.
        self._p, self._q = (clock.p, float(clock.q)) if self._exact else (1, 1.0)

    def due(self, t: float) -> list[float] | None:
        """The `hits` argument of the model's `sample` function at time t: 1.0 for each
        rate whose next hit is at (or, by roundoff of the caller, before) t; None if none."""
        if not self.next_time <= t:
            return None
        return [1.0 if ti <= t else 0.0 for ti in self.times]

    def advance(self, hits: list[float]) -> None:
        """Move the rates that just hit to their following hit."""
        for r, flag in enumerate(hits):
            if flag:
                k = self.k[r] = self.k[r] + 1
                offset, period = self._ticks[r]
                num = (offset + k * period) * self._p
                if self._exact and -EXACT_INT < num < EXACT_INT:
                    self.times[r] = float(num) / self._q
                else:
                    self.times[r] = hit_time(self.rates[r], self.clock, k)
        self.next_time = min(self.times)
        self.count += 1
