"""Time limits for a block of code run in the main thread.

The limit that matters is CPU time (ITIMER_PROF): it does not fire early on a machine that
other jobs keep busy. Code that blocks without using the CPU (a FIFO with no writer) is
caught by a wall-clock limit, a few times longer. Both timers repeat every half second
until the block ends, so an exception swallowed somewhere (a `__del__`, a gc callback, a
bare `except`) is raised again.
"""
from __future__ import annotations

import contextlib
import signal
from typing import Iterator

WALL_FACTOR = 3.0


class TimeLimit(BaseException):
    """The block used up its time (a BaseException: `except Exception` cannot swallow it)."""


@contextlib.contextmanager
def time_limit(cpu_seconds: float, exc: type[BaseException] = TimeLimit,
               wall_seconds: float | None = None) -> Iterator[None]:
    armed = True

    def expire(signum, frame):
        if armed:
            raise exc()

    wall = wall_seconds if wall_seconds is not None else WALL_FACTOR * cpu_seconds
    old_prof = signal.signal(signal.SIGPROF, expire)
    old_alarm = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds, 0.5)
    signal.setitimer(signal.ITIMER_REAL, wall, 0.5)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_prof)
        signal.signal(signal.SIGALRM, old_alarm)
