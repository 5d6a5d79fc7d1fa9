"""One call of the compiled loop (`native.kernel.segment`): how it is set up and what its
status means, written once for its two callers.

The per-run path (`NativeLoop.segment`, plain Python) and the sweeps' batch loop
(`native.batch`, which compiles these same functions with numba and inlines them) must
set the loop's parameters alike and read its status alike, or a run in a batch would not
be the run `simulate` makes. Plain functions of arrays and numbers, no numba here: the
per-run path calls them without numba's dispatch.
"""
from __future__ import annotations

import numpy as np

from blocksim.engine.native.layout import (
    BOUND, F_BOUND, F_SOURCE_T, F_STEP, F_T, F_TIME_EVENT, I_GRID, I_GUARD_LEFT, I_RESUME,
    I_START, SETTLED_AT_BOUND, STOPPED)


def begin(fpar: np.ndarray, ipar: np.ndarray, t: float, t_bound: float, t_time: float,
          t_source: float, step: float, k_grid: int, start: bool) -> None:
    """Set up a segment from t to t_bound: a time event there if it is t_time (the first
    time event), the blocks' own next at t_source; `step` the last step size (0: none),
    `k_grid` the next grid point, `start` whether the loop settles the run's start first."""
    fpar[F_T] = t
    fpar[F_BOUND] = t_bound
    fpar[F_STEP] = step
    fpar[F_TIME_EVENT] = 1.0 if t_bound == t_time else 0.0
    fpar[F_SOURCE_T] = t_source
    ipar[I_GRID] = k_grid
    ipar[I_RESUME] = 0
    if start:
        ipar[I_START] = 1


def allow_restarts(ipar: np.ndarray, due: int, restarts: int, hits: int) -> None:
    """How many restarts the call may make before the progress guard is due (sample hits,
    known in advance, do not count)."""
    ipar[I_GUARD_LEFT] = due - (restarts - hits)


def at_time_event(fpar: np.ndarray) -> bool:
    """Whether the call that ended at its bound (status BOUND) ended at a time event."""
    return fpar[F_TIME_EVENT] != 0.0 and fpar[F_T] >= fpar[F_BOUND]


def run_done(status: int, fpar: np.ndarray, t_stop: float) -> bool:
    """Whether a call with this status ended the run: a Stop block, or the stop time
    reached with no time event left to settle there (the end of `Simulator._run`)."""
    t = fpar[F_T]  # (`at_time_event` written out: numba inlines only its own functions)
    return status == STOPPED or (status == SETTLED_AT_BOUND and t >= t_stop) or (
        status == BOUND and t >= t_stop and not (fpar[F_TIME_EVENT] != 0.0
                                                 and t >= fpar[F_BOUND]))
