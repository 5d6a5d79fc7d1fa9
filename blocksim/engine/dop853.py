"""dop853: scipy's DOP853 stepped one accepted step at a time, with Hairer's stiffness test.

scipy's solver has no stiffness detection; on a stiff system its steps shrink to the edge
of the stability region and a run of a few seconds needs millions of them. DOP853's own
test (`stiffness.py`, the same as dopri5's with DOP853's stages and limit) runs after each
accepted step: its 12th stage is evaluated at t + h from the argument
y12 = y + h * sum(A[11, j] * K[j]), and K[12] = f(t + h, y_new) is scipy's FSAL
evaluation, so h*lambda = h * ||K[12] - K[11]|| / ||y_new - y12|| (Hairer's K4 - K3 over
K5 - Y1). y12 is not kept by scipy: it is recomputed from the step's stages, only on the
steps tested (one in STIFF_EVERY until a test is positive).
"""
from __future__ import annotations

import numpy as np

from blocksim.engine.steppers import AdaptiveStepper, Rhs
from blocksim.engine.stiffness import StiffnessTest

LAST = 11  # index of DOP853's 12th (last) stage; K[LAST + 1] is f at the new state


class Dop853Stepper(AdaptiveStepper):
    """scipy's DOP853 (`AdaptiveStepper`) with a `StiffnessTest` run over its steps."""

    def __init__(self, fun: Rhs, t0: float, x0: np.ndarray, t_bound: float, rtol: float,
                 atol: float, max_step: float, first_step: float | None,
                 stiffness: StiffnessTest | None = None):
        super().__init__("dop853", fun, t0, x0, t_bound, rtol, atol, max_step, first_step)
        self.stiffness = stiffness
        self._a_last = np.ascontiguousarray(self.solver.A[LAST, :LAST])

    def step(self) -> None:
        super().step()
        test = self.stiffness
        if test is None or not test.due():
            return
        solver = self.solver
        h, K = solver.h_previous, solver.K  # the accepted step's size and stages
        y_last = solver.y_old + np.dot(K[:LAST].T, self._a_last) * h
        test.test(self.t_old, h, K[LAST], K[LAST + 1], y_last, self.x)
