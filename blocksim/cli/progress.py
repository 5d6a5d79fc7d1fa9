"""The progress line of `blocksim run` on a terminal: where the run is, how fast, when it ends.

A run's step count is known before it starts only where the settings force it (a fixed or
maximum step, time events, sample hits: those are held to budgets at compile time); an
adaptive solver's steps follow the solution. A stop time of 1e12 on a smooth model is
therefore not refused, and this line is what tells the user, within two seconds, that it
would take years: `simulating: t = 1.44e+04 of 1e+12 (0.0 %), 2.9e+03x real time, about
11 years left`. The rate is measured over the last WINDOW seconds of wall time, so a slow
start (a stiff transient) does not skew the estimate for long.
"""
from __future__ import annotations

import sys
import time
from collections import deque
from typing import TextIO

FIRST = 0.5  # seconds of wall time before the line shows: a short run shows none
EVERY = 0.1  # seconds between two rewrites of the line
SAMPLE = 0.5  # seconds between two samples of (wall time, simulated time)
WINDOW = 10.0  # seconds of wall time the rate is measured over
YEAR = 365.25 * 86400


class RunProgress:
    """The line on stderr, rewritten in place; only on a terminal and unless quiet."""

    def __init__(self, start: float, stop: float, quiet: bool = False,
                 stream: TextIO | None = None):
        self.start, self.stop = start, stop
        self.stream = stream or sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self.t0 = time.monotonic()
        self.last = 0.0
        self.samples: deque[tuple[float, float]] = deque()  # (wall time, simulated time)
        self.width = 0  # of the line shown, to clear it

    def __call__(self, t: float) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not self.samples or now - self.samples[-1][0] >= SAMPLE:
            self.samples.append((now, t))
            while len(self.samples) > 2 and now - self.samples[1][0] >= WINDOW:
                self.samples.popleft()
        if now - self.t0 < FIRST or now - self.last < EVERY:
            return
        self.last = now
        line = self.line(t, now)
        self._write("\r" + line + " " * max(0, self.width - len(line)))
        self.width = max(self.width, len(line))

    def line(self, t: float, now: float) -> str:
        """The text for simulated time t at wall time `now`."""
        frac = (t - self.start) / (self.stop - self.start)
        text = f"simulating: t = {t:.6g} of {self.stop:.6g} ({100 * frac:5.1f} %)"
        rate = self.rate(t, now)
        if rate is not None:
            text += (f", {_speed(rate)} real time, about "
                     f"{duration((self.stop - t) / rate)} left")
        return text

    def rate(self, t: float, now: float) -> float | None:
        """Simulated seconds per second of wall time over the window (None: not yet
        known, or time stands still)."""
        wall, then = self.samples[0]
        if now - wall < 1.0 or not t > then:
            return None
        return (t - then) / (now - wall)

    def done(self) -> None:
        if self.enabled and self.width:
            self._write("\r" + " " * self.width + "\r")
            self.width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except OSError:  # the terminal has gone (closed: SIGHUP follows); the run goes on
            self.enabled = False


def _speed(rate: float) -> str:
    """'2.5x', '1200x', '3e+09x', '0.0031x' (simulated seconds per wall second)."""
    return f"{rate:.0f}x" if 100 <= rate < 1e6 else f"{rate:.2g}x"


def duration(seconds: float) -> str:
    """A wall time for a person: '40 s', '12 min', '5.5 h', '23 days', '11 years'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds < 2 * YEAR:
        return f"{seconds / 86400:.0f} days"
    return f"{seconds / YEAR:.3g} years"
