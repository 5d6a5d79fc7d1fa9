"""Solvers behind one narrow interface: take a step, interpolate inside it.

Adaptive solvers wrap scipy's OdeSolver classes (DOP853, Radau, BDF), which give error
control and dense output; dopri5 has its own stepper (`dopri5.py`, on the same interface),
and the fixed-step Euler and RK4 are ours. The engine restarts a stepper after every
event, so a stepper never has to know about discontinuities.
"""
from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np

Rhs = Callable[[float, np.ndarray], np.ndarray]

ADAPTIVE = {"dopri5": "RK45", "dop853": "DOP853", "radau": "Radau", "bdf": "BDF"}
"""Each adaptive solver's scipy OdeSolver class, by name: scipy.integrate is imported only
when one is made (a third of a second that a dopri5 run never needs)."""
FIXED = ("euler", "rk4")
# What scipy's solvers raise from their own arithmetic: the LU of a Jacobian holding
# infinities or NaNs (ValueError), a singular sparse factor (RuntimeError), ...
SOLVER_FAULTS = (ArithmeticError, ValueError, RuntimeError, np.linalg.LinAlgError)


class StepFailure(Exception):
    """The solver cannot continue (step size underflow, non-finite values, stiffness);
    `state` is the index of the state at fault, when the solver knows it, `probe` a (t, x)
    inside the failed step where the derivative was not finite, when known."""

    def __init__(self, message: str, state: int | None = None,
                 probe: tuple[float, np.ndarray] | None = None):
        super().__init__(message)
        self.state = state
        self.probe = probe


class Stepper:
    """One integration segment from (t, x) towards t_bound, stepped by `step()`."""

    t: float
    t_old: float
    x: np.ndarray
    locates_events = True
    last_step: float | None = None

    def step(self) -> None:
        raise NotImplementedError

    def dense(self, t: float) -> np.ndarray:
        raise NotImplementedError

    def dense_list(self, t: float) -> list[float]:
        """`dense(t)` as a list of floats (what event location hands the model)."""
        return self.dense(t).tolist()

    def dense_rows(self, ts: list[float], columns: list[int]) -> np.ndarray:
        """Some states (`columns`) at several times of the last step: one row per time."""
        return np.array([self.dense(t)[columns] for t in ts]).reshape(len(ts), len(columns))

    @property
    def nfev(self) -> int:
        return 0


def _norm_over_controlled(rtol: float, atol: "float | np.ndarray"
                          ) -> tuple[float, "float | np.ndarray"]:
    """scipy's error norm averages over every state; with states out of error control
    (inf atol) the tolerances are scaled so that it averages over the others, as
    dopri5's does."""
    if np.ndim(atol) == 0:
        return rtol, atol
    count = int(np.count_nonzero(np.isfinite(atol)))
    if count in (0, np.size(atol)):
        return rtol, atol
    factor = math.sqrt(count / np.size(atol))
    return rtol * factor, np.asarray(atol) * factor


def _solver_class(name: str) -> type:
    """scipy's OdeSolver class behind the adaptive solver `name`."""
    from scipy import integrate

    return getattr(integrate, ADAPTIVE[name])


class AdaptiveStepper(Stepper):
    """A scipy OdeSolver stepped one accepted step at a time.

    An exception from the model's right-hand side passes through unchanged (the engine
    names the block whose formula failed); one from scipy's own arithmetic, the implicit
    solvers' LU of a Jacobian that overflowed, becomes a StepFailure that says so, as the
    explicit solvers say a non-finite state ("the state became infinite or NaN").
    """

    def __init__(self, name: str, fun: Rhs, t0: float, x0: np.ndarray, t_bound: float,
                 rtol: float, atol: "float | np.ndarray", max_step: float, first_step: float | None,
                 jac_sparsity=None, jacobian=None):
        span = abs(t_bound - t0)
        if first_step is not None:
            first_step = min(first_step, span) if span > 0 else None
            if first_step is not None and first_step <= 0:
                first_step = None
        # Implicit solvers take the Jacobian's sparsity (finite differences by column
        # groups and a sparse LU): what makes stiff solves of large diagrams affordable.
        extra = {"jac_sparsity": jac_sparsity} if jac_sparsity is not None else {}
        if jacobian is not None:
            extra = {"jac": jacobian}
        self._rhs_raised, self._probe = False, None
        rtol_c, atol_c = _norm_over_controlled(rtol, atol)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns when it raises a too-small rtol
            try:
                self.solver = _solver_class(name)(self._watched(fun), t0, x0, t_bound, rtol=rtol_c,
                                             atol=atol_c, max_step=max_step,
                                             first_step=first_step, **extra)
            except SOLVER_FAULTS as exc:
                fault = self._fault(exc, x0)
                if fault is exc:
                    raise
                raise fault from None
        self.t = self.t_old = t0
        self.x = self.x_old = np.array(x0, dtype=float)
        self._dense = None
        self._solved: dict[float, np.ndarray] = {}  # solve_to's states in the last step
        self.settings = (name, fun, rtol, atol, max_step)
        self.jac_sparsity = jac_sparsity

    def solve_to(self, t: float) -> np.ndarray:
        """The state at t in the last step by integrating to it, not by interpolation.

        A fresh solver from the step's start lands on t with full step accuracy; implicit
        solvers' dense output (a collocation or BDF polynomial) is far less accurate.
        """
        if t == self.t:
            return self.x.copy()
        known = self._solved.get(t)
        if known is None:
            name, fun, rtol, atol, max_step = self.settings
            sub = AdaptiveStepper(name, fun, self.t_old, self.x_old, t, rtol, atol, max_step,
                                  t - self.t_old, self.jac_sparsity, self._jacobian())
            while sub.t < t:
                sub.step()
            known = self._solved[t] = sub.x
        return known.copy()

    def _jacobian(self):
        """The Jacobian the running implicit solver holds (None for explicit ones): a
        trial integration inside its last step starts from it instead of estimating its
        own by finite differences, which was most of the cost of locating an event on
        radau and bdf. Newton's iteration still converges to the solver's tolerance (a
        constant Jacobian only makes it take more iterations, or a smaller step)."""
        return getattr(self.solver, "J", None)

    def _watched(self, fun: Rhs) -> Rhs:
        """`fun`, noting when it raises (the model's failure, not scipy's) and the first
        (t, x) of a step where it is not finite (where the failure can name a block)."""
        def rhs(t: float, x: np.ndarray) -> np.ndarray:
            try:
                f = fun(t, x)
            except BaseException:
                self._rhs_raised = True
                raise
            total = f.sum()
            if total - total != 0.0 and self._probe is None:  # a NaN or an infinity
                self._probe = (t, np.array(x, dtype=float))
            return f
        return rhs

    def _fault(self, exc: BaseException, x: np.ndarray) -> BaseException:
        """What to raise for `exc` from scipy: itself if the model's rhs raised it, else a
        StepFailure (non-finite values, or the solver's own message)."""
        if self._rhs_raised:
            return exc
        solver = getattr(self, "solver", None)
        values = [x] + [getattr(solver, name, None) for name in ("y", "f")]
        text = str(exc)
        if ("inf" in text.lower() or "nan" in text.lower()
                or any(v is not None and not np.all(np.isfinite(v)) for v in values)):
            return StepFailure("the state became infinite or NaN", probe=self._probe)
        return StepFailure(f"the solver failed: {text}" if text else "the solver failed",
                           probe=self._probe)

    def step(self) -> None:
        self._rhs_raised, self._probe = False, None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                message = self.solver.step()
            except SOLVER_FAULTS as exc:
                fault = self._fault(exc, self.x)
                if fault is exc:
                    raise
                raise fault from None
        if self.solver.status == "failed":  # (probe: where its last step met a NaN)
            raise StepFailure(message or "the solver failed", probe=self._probe)
        self.t_old, self.t = self.t, self.solver.t
        self.x_old, self.x = self.x, self.solver.y
        self.last_step = self.t - self.t_old
        self._dense = None
        self._solved = {}
        if not np.all(np.isfinite(self.x)):
            raise StepFailure("the state became infinite or NaN")

    def dense(self, t: float) -> np.ndarray:
        if t == self.t:
            return self.x.copy()
        if self._dense is None:
            self._dense = self.solver.dense_output()
        return self._dense(t)

    @property
    def nfev(self) -> int:
        return int(self.solver.nfev)


class FixedStepper(Stepper):
    """Explicit Euler or classical RK4 with a fixed step, shortened only to land on t_bound.

    Events are not located: zero crossings are noticed at step ends, as in a real-time
    target. Between steps the solution is interpolated by cubic Hermite polynomials.
    """

    locates_events = False

    def __init__(self, name: str, fun: Rhs, t0: float, x0: np.ndarray, t_bound: float,
                 h: float, grid_origin: float):
        self.method = name
        self.fun = fun
        self.h = h
        self.origin = grid_origin
        self.t = self.t_old = t0
        self.t_bound = t_bound
        self.x = np.array(x0, dtype=float)
        self.f = np.asarray(fun(t0, self.x), dtype=float)
        self.evals = 1
        self._prev = (t0, self.x, self.f)

    def _next_time(self) -> float:
        # Stay on the grid origin + k*h so a restart after an event keeps the step pattern.
        k = math.floor((self.t - self.origin) / self.h + 1e-9) + 1
        t_next = self.origin + k * self.h
        if t_next - self.t < 1e-9 * self.h:
            t_next += self.h
        return min(t_next, self.t_bound)

    def step(self) -> None:
        t, x, f = self.t, self.x, self.f
        t_new = self._next_time()
        if not t_new > t:
            raise StepFailure(f"step {self.h:.3g} s is below the time resolution at "
                              f"t = {t:.17g}; use a larger step")
        h = t_new - t
        if self.method == "euler":
            x_new = x + h * f
        else:
            k1 = f
            k2 = np.asarray(self.fun(t + h / 2, x + h / 2 * k1))
            k3 = np.asarray(self.fun(t + h / 2, x + h / 2 * k2))
            k4 = np.asarray(self.fun(t + h, x + h * k3))
            x_new = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            self.evals += 3
        if not np.all(np.isfinite(x_new)):
            raise StepFailure("the state became infinite or NaN")
        f_new = np.asarray(self.fun(t_new, x_new), dtype=float)
        self.evals += 1
        self._prev = (t, x, f)
        self.t_old, self.t, self.x, self.f = t, t_new, x_new, f_new
        self.last_step = h

    def dense(self, tq: float) -> np.ndarray:
        t0, x0, f0 = self._prev
        h = self.t - t0
        if h <= 0:
            return self.x.copy()
        s = (tq - t0) / h
        h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
        h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
        return h00 * x0 + h10 * h * f0 + h01 * self.x + h11 * h * self.f

    @property
    def nfev(self) -> int:
        return self.evals


class NoStateStepper(Stepper):
    """For diagrams without continuous states: march over the output grid."""

    locates_events = True
    last_step = None

    def __init__(self, t0: float, t_bound: float, interval: float):
        self.t = self.t_old = t0
        self.t_bound = t_bound
        self.h = interval
        self.x = self.x_old = np.zeros(0)  # no state: the step's start reads it too

    def step(self) -> None:
        t_new = min(self.t + self.h, self.t_bound)
        if not t_new > self.t:
            raise StepFailure(f"output interval {self.h:.3g} s is below the time resolution "
                              f"at t = {self.t:.17g}; use a larger output interval")
        self.t_old, self.t = self.t, t_new

    def dense(self, t: float) -> np.ndarray:
        return self.x

    nfev = 0
