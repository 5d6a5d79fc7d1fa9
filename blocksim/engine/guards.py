"""Run guards: the budgets and checks that turn a run which would spin, or would quietly
produce garbage, into a clear message naming the block and what to change.

- Settings are the compiler's to check (`blocksim.compiler.check_run`, which `Simulator`
  calls for settings given to it directly): finite, positive, above the time resolution,
  within the step and memory budgets.
- Progress (every WINDOW restarts of the integration, i.e. per event): a run whose events
  come closer than the event horizon (far below anything the model resolves: time does not
  advance) fails at once; one whose event rate, sustained over STRIKES windows in a row,
  projects at least MAX_EVENTS events by the stop time (the events so far plus the rest of
  the run at the rate of the last window) fails early, after STRIKES * WINDOW events, as
  does one that passes MAX_EVENTS. A projection that lands on the budget counts as reaching
  it: rem(t, 1e-6) over 1 s projects exactly 1e6 events, each window alike, which would
  take minutes to run out. No sensible model comes near: the ball has ~300 events, a 1 kHz
  pulse train over 100 s 200,000. Both backends share this guard: the compiled loop of the
  numba backend returns to Python when the restarts reach `ProgressGuard.due`.
  A storm that accelerates (crossings of a level by a state growing exponentially: the
  events come faster in proportion to their number) passes the budget only after its rate
  has grown for tens of windows, long after it is plain that it never ends. Such a storm is
  projected by the power law of its pace (seconds per event) against the event count,
  pace ~ N**e, fitted over the windows since a third of the events so far (`accelerating`;
  e = -1 for exponential growth, -1/2 for a linear chirp, clamped at -1). The projection is
  exact for a chirp of any polynomial order and for an exponential storm, and only used
  where the pace fell in every one of those windows, and not faster than N**ZENO_EXPONENT
  (a bouncing ball's geometric sequence, which ends at its Zeno point); it fails a run
  whose projected time to the budget is under a quarter of the time left, ACCEL_STRIKES
  windows in a row.
- Stiffness on dopri5 and dop853: the budget STIFF_STEPS of `stiffness.StiffnessTest`.

Each budget can be changed for a process by an environment variable BLOCKSIM_<NAME> set
before it starts (e.g. BLOCKSIM_MAX_EVENTS=10000000); messages say so.
"""
from __future__ import annotations

import bisect
import math
import os
from collections import Counter
from typing import Sequence

import numpy as np

from blocksim.compiler.compiled import CompiledModel
from blocksim.engine import derived

MAX_EVENTS = 1_000_000  # events in one run
STIFF_STEPS = 1_000_000  # steps left to the stop time once a system is found stiff
STIFF_STEPS_PYTHON = 100_000  # the same on the Python loop, where a step costs ~30x more
WINDOW = 500  # restarts between two progress checks
STRIKES = 6  # windows in a row whose event rate projects beyond MAX_EVENTS
ACCEL_STRIKES = 3  # windows in a row whose accelerating pace reaches MAX_EVENTS early
ACCEL_MARGIN = 4.0  # ... within 1/ACCEL_MARGIN of the time left
# A pace falling faster than N**ZENO_EXPONENT is taken for a geometric sequence (a ball
# bouncing to rest: pace ~ q**N, whose fitted exponent N*ln(q) grows without bound), not a
# storm: its events accumulate at a point the event horizon resolves (the ball rests).
ZENO_EXPONENT = -2.5


# The environment's overrides, read once (a run should not pay for reading it).
_OVERRIDES = {key[len("BLOCKSIM_"):]: value for key, value in os.environ.items()
              if key.startswith("BLOCKSIM_MAX_") or key == "BLOCKSIM_STIFF_STEPS"}


def stiff_budget(compiled: bool) -> int:
    """Steps left that a stiff run may still take on an explicit solver: about ten seconds
    of CPU on either loop (BLOCKSIM_STIFF_STEPS sets both)."""
    if _OVERRIDES.get("STIFF_STEPS"):
        return budget("STIFF_STEPS")
    return STIFF_STEPS if compiled else STIFF_STEPS_PYTHON


def budget(name: str) -> int:
    """The budget `name` of this module (e.g. "MAX_EVENTS"), or the value of the
    environment variable BLOCKSIM_<name> when it is a positive number."""
    text = _OVERRIDES.get(name)
    if text:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if value > 0:
            return int(min(value, 1e18))
    return globals()[name]


class ProgressGuard:
    """Ends a run whose events would never let it reach the stop time (module docstring).

    `check` is called whenever the restarts count reaches `due`: once per WINDOW restarts.
    """

    def __init__(self, start: float, stop: float, horizon: float):
        self.stop, self.horizon = stop, horizon
        self.max_events = budget("MAX_EVENTS")
        self.due = WINDOW
        self.mark_t, self.mark_n = start, 0
        self.strikes = 0
        self.pace = PaceHistory()
        self.accel_strikes = 0

    def check(self, t: float, restarts: int, events: int) -> str | None:
        """Why the run cannot go on (None: it can), from the window since the last check."""
        n, dt = restarts - self.mark_n, t - self.mark_t
        self.mark_t, self.mark_n, self.due = t, restarts, restarts + WINDOW
        advice = ("change the parameters of the block(s) making them (a period, a "
                  "hysteresis), shorten the run, or raise the budget (environment variable "
                  "BLOCKSIM_MAX_EVENTS)")
        if events > self.max_events:
            return f"more than {self.max_events} events, the budget of a run; {advice}"
        if n <= 0:
            return None
        if not dt > n * self.horizon:
            return (f"no progress: {n} events within {dt:.3g} s, closer than the time "
                    f"resolution here ({self.horizon:.2g} s)")
        projected = events + (self.stop - t) * n / dt
        # Rounded: a projection of exactly the budget may come out a few ulps below it.
        self.strikes = self.strikes + 1 if projected >= self.max_events - 0.5 else 0
        if self.strikes >= STRIKES:
            return (f"events every {dt / n:.3g} s would make about {projected:.2g} events by "
                    f"the stop time, reaching the budget of {self.max_events} events of a "
                    f"run; {advice}")
        left = self.max_events - events  # events still allowed
        reach = self.pace.add(restarts, n, dt, left)
        early = reach is not None and reach * ACCEL_MARGIN < self.stop - t
        self.accel_strikes = self.accel_strikes + 1 if early else 0
        if self.accel_strikes >= ACCEL_STRIKES:
            return (f"events coming ever faster (now every {dt / n:.3g} s) would reach the "
                    f"budget of {self.max_events} events of a run in about {reach:.2g} s, "
                    f"long before the stop time; {advice}")
        return None


class PaceHistory:
    """The pace (seconds per restart) of each progress window, against the restarts at its
    middle: what `accelerating` fits its power law to (the module docstring)."""

    def __init__(self):
        self.mids: list[float] = []
        self.paces: list[float] = []
        self.falling_since = 0  # the first window of the current run of falling paces

    def add(self, restarts: int, n: int, dt: float, left: int) -> float | None:
        """Record a window of n restarts over dt seconds ending at `restarts`; the time
        the accelerating pace takes to make `left` more events, or None when the pace
        did not fall in every window since a third of the restarts so far."""
        mid, pace = restarts - n / 2.0, dt / n
        if self.paces and not pace < self.paces[-1]:
            self.falling_since = len(self.paces)
        self.mids.append(mid)
        self.paces.append(pace)
        j = bisect.bisect_right(self.mids, mid / 3.0) - 1
        if j < self.falling_since:
            return None
        if math.log(pace / self.paces[j]) / math.log(mid / self.mids[j]) < ZENO_EXPONENT:
            return None  # geometric: a Zeno point, which the event horizon resolves
        return accelerating(self.mids[j], self.paces[j], mid, pace, left)


def accelerating(mid0: float, pace0: float, mid1: float, pace1: float, left: float
                 ) -> float:
    """The time to make `left` more events after event count mid1, where the pace has gone
    from pace0 at mid0 to pace1 at mid1, extrapolated as pace ~ N**e (e clamped to
    [-1, 0]: never faster than exponential growth of the rate, never slowing down)."""
    e = min(0.0, max(-1.0, math.log(pace1 / pace0) / math.log(mid1 / mid0)))
    ratio = (mid1 + left) / mid1
    if e == -1.0:
        return pace1 * mid1 * math.log(ratio)
    return pace1 * mid1 * (ratio ** (e + 1.0) - 1.0) / (e + 1.0)


def with_culprits(reason: str, events: Sequence, model: CompiledModel
                  ) -> tuple[str, str | None]:
    """(message, block) for a run ended by `ProgressGuard`: the reason, and the blocks most
    often in the last WINDOW entries of the event log (most first)."""
    tally = Counter(e.block for e in events[-WINDOW:] if e.block)
    ids = [b for b, _ in tally.most_common(3)]
    if not ids:
        return reason, None
    types = dict(zip(model.block_ids, model.block_types))
    names = ", ".join(f"'{b}' ({types.get(b, '?')})" for b in ids)
    return f"{reason}; events from {names}", ids[0]


def stuck_time_event(model: CompiledModel, t: float, m: np.ndarray
                     ) -> tuple[str, str | None]:
    """(message, block) for a time event that does not come after t: its events are closer
    than the time resolution (or its next time is not a number); m: the discrete states
    settled at t."""
    m_ = m.tolist()
    for block, part in derived.next_time_parts(model):
        t_next = part(t, m_)
        if not t_next > t:
            return (f"the next time event, {t_next!r}, does not come after t = {t!r}: its "
                    f"events are closer than the time resolution here ({math.ulp(t):.2g} s); "
                    f"change its timing", model.block_ids[block])
    return "time events do not advance", None
