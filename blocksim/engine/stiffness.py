"""Stiffness detection for the explicit solvers dopri5 and dop853, as in Hairer's codes
DOPRI5 and DOP853 (Hairer and Wanner, "Solving ODEs II", IV.2, and the STIFFNESS DETECTION
block of both codes).

After an accepted step from t of size h, with y_s, k_s the last stage's argument and value
and y_new, k_new the new state and its derivative (both at t + h), h*lambda is estimated as
h * ||k_new - k_s|| / ||y_new - y_s||. Above the edge of the method's stability region on
the negative real axis (3.25 for DOPRI5's 7 stages, 6.1 for DOP853's 12: `LIMITS`), the
step size is held by stability, not accuracy. The test runs every STIFF_EVERY accepted
steps, and at every step once one was positive; STIFF_POSITIVE positive tests (six negative
ones in a row start the count again) mean the system is stiff.

`StiffnessTest` keeps this count over a whole run (restarts included) and, once stiffness
is detected, fails the step (`Stiff`) when the steps still needed at the present step size,
(stop - t) / h, exceed its budget: such a run would take minutes on an explicit solver and
milliseconds on radau or bdf.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from blocksim.engine.steppers import StepFailure

# Hairer's NSTIFF, and the counts of positive tests that detect stiffness and of negative
# ones that reset it; the h*lambda limit of each solver.
STIFF_EVERY, STIFF_POSITIVE, STIFF_NEGATIVE = 1000, 15, 6
LIMITS = {"dopri5": 3.25, "dop853": 6.1}


class Stiff(StepFailure):
    """A stiff system whose remaining steps exceed the budget (`StiffnessTest`)."""


class StiffnessTest:
    """Hairer's stiffness detection over a run (the module docstring), shared by every
    segment of the run; the compiled loop of the numba backend (dopri5) keeps the same
    counts in its parameter arrays.

    `detected` is the time stiffness was first detected (None before), `state` the state
    that moved most in the last two stages there (its block is named in the warning).
    """

    __slots__ = ("stop", "budget", "on_detect", "solver", "limit", "accepted", "positive",
                 "negative", "hlamb", "detected", "state")

    def __init__(self, stop: float, budget: float, on_detect: Callable[[], None] | None = None,
                 solver: str = "dopri5"):
        self.stop, self.budget, self.on_detect = stop, budget, on_detect
        self.solver, self.limit = solver, LIMITS[solver]
        self.accepted = self.positive = self.negative = 0
        self.hlamb = 0.0
        self.detected: float | None = None
        self.state = -1

    def due(self) -> bool:
        """Whether the step just accepted is tested (counted here: call once per step)."""
        self.accepted += 1
        return self.positive > 0 or self.accepted % STIFF_EVERY == 0

    def test(self, t: float, h: float, k_s: np.ndarray, k_new: np.ndarray, y_s: np.ndarray,
             y_new: np.ndarray) -> None:
        """Hairer's test on the step from t of size h; `Stiff` if over budget."""
        dk, dy = k_new - k_s, y_new - y_s
        den = float(np.dot(dy, dy))
        if den > 0.0:
            self.hlamb = abs(h) * math.sqrt(float(np.dot(dk, dk)) / den)
        if not self.hlamb > self.limit:
            self.negative += 1
            if self.negative == STIFF_NEGATIVE:
                self.positive = 0
            return
        self.negative = 0
        self.positive += 1
        if self.positive < STIFF_POSITIVE:
            return
        if self.detected is None:
            self.found(t, int(np.argmax(np.abs(dk))))
        self.check_budget(t, h)

    def found(self, t: float, state: int) -> None:
        """Stiffness detected at t (the first time only), `state` moving fastest."""
        if self.detected is None:
            self.detected, self.state = t, state
            if self.on_detect is not None:
                self.on_detect()

    def check_budget(self, t: float, h: float) -> None:
        """`Stiff` if (stop - t) / h, about the steps left at this step size, exceed the
        budget (t: the start of the step of size h)."""
        left = (self.stop - t) / h if h > 0.0 else math.inf
        if left > self.budget:
            since = self.detected if self.detected is not None else t
            raise Stiff(f"the system is stiff: from t = {since:.6g} {self.solver} needs "
                        f"steps of about {h:.3g} s for stability alone (h*lambda > "
                        f"{self.limit}), some {left:.2g} more to the stop time, beyond the "
                        f"budget of {self.budget:.0f}; use solver radau or bdf",
                        state=self.state)
