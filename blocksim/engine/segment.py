"""The Python path of a continuous segment: steps, output grid and located crossings.

A segment runs from a restart to the next located crossing or to its bound (the stop time
or a time event). The numba backend runs the same contract in compiled code
(`native.NativeLoop.segment`); `Simulator` only sees the `Segment` either returns.

Small models (a few states and zero crossings, like most hybrid benchmarks) spend their
time in per-call overhead, not in arithmetic: their zero crossings are evaluated on Python
lists, by list variants of the generated functions (`derived.list_function`), and event
location evaluates one zero crossing alone (`derived.zc_component`). When the logged signals
are states, the output grid of many steps is interpolated in one pass (`DenseBatch`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from blocksim.engine import derived, events as ev_mod, guard_poly
from blocksim.engine.dense_batch import DenseBatch
from blocksim.engine.dop853 import Dop853Stepper
from blocksim.engine.dopri5 import Dopri5Stepper
from blocksim.engine.warnings_held import repeated_warning
from blocksim.errors import SimulationError
from blocksim.engine.steppers import (FIXED, AdaptiveStepper, FixedStepper, NoStateStepper,
                                      StepFailure)

if TYPE_CHECKING:
    from blocksim.engine.simulator import RunState, Simulator

IMPLICIT = ("radau", "bdf")  # scipy's implicit solvers: the Jacobian's sparsity helps them
# Radau's collocation polynomial is too coarse to locate on: crossings are located on states
# integrated to each trial time. Not bdf's: such a trial integration is a fresh BDF from
# order 1, less accurate than the running solver's interpolant (on the ball at rtol 1e-10 it
# put impacts 7x further off the closed form than scipy's own BDF locating on it).
ACCURATE_LOCATION = ("radau",)
# bdf restarts at order 1: a first step sized for the order the last segment reached would
# be accepted with a far larger error; scipy's own initial step suits order 1.
OWN_FIRST_STEP = ("bdf",)
SMALL = 16  # up to this many states and zero crossings, event-time values stay in lists
BATCH_STEPS = 256  # steps whose grid rows are interpolated together (see DenseBatch)
FEW_FIRED = 3  # more crossings fired in a step: ordered by estimate, checked all at once
NARROW_RETRY = 16  # events between tries of a narrow bracket that failed (`_refine`)


@dataclass
class Segment:
    """How an integration segment ended: a located crossing (t, x, [(block, kind)]) or its
    bound (a time event there if `time_event`), with the grid index and step size reached."""

    hit: tuple[float, np.ndarray, list[tuple[int, str]]] | None
    time_event: bool
    k_grid: int
    last_step: float | None
    nfev: int
    interrupted: bool = False  # should_stop said so: st holds the last step reached
    stopped: bool = False  # a Stop block ended the run at an event (compiled events)
    # The blocks' next time event when the bound was set, if the compiled loop set it: a
    # time event at the bound is a block's (counted as an event) if this is not after it.
    t_source: float | None = None


class PythonLoop:
    """Segments stepped in Python by the chosen solver."""

    def __init__(self, sim: "Simulator"):
        model = sim.model
        self.sim = sim
        self.small = sim._small  # event-time values in lists (the module docstring)
        self.zc_list = derived.list_function(model, "zc") if self.small else None
        self.direction = model.zc_direction.tolist()
        # The directions as `events.fired` takes them: None when every crossing counts both.
        self.directions = model.zc_direction if model.zc_direction.any() else None
        self.selection = derived.observed_states(model)
        self.reads_states = derived.zc_reads_states(model) if model.n_zc else None
        self.narrow_skips = 0  # events until `_refine` tries a narrow bracket again
        # (t, zero crossings at t) where the next step may start (`_start_values`).
        self.start_values: tuple[float, "list[float] | np.ndarray"] | None = None

    def segment(self, st: "RunState", t_bound: float, t_time: float,
                first_step: float | None, k_grid: int, n_grid: int) -> Segment:
        """Integrate from st towards t_bound, recording the grid, until a located crossing
        (st stays at the segment's last step start) or t_bound (st there, signs latched)."""
        self.start_values = self.sim.after_values
        try:
            stepper = self._stepper(st, t_bound, first_step)
        except StepFailure as exc:  # an implicit solver's first Jacobian, not finite
            raise self._failure(exc, st, st.t, st.x) from None
        sim = self.sim
        batch = (DenseBatch(self.selection, sim.model.n_states, sim.settings.start,
                            sim.interval)
                 if self.selection is not None and isinstance(stepper, Dopri5Stepper)
                 else None)
        try:
            return self._steps(stepper, batch, st, t_bound, t_time, k_grid, n_grid)
        finally:
            self._flush(batch)

    def _failure(self, exc: StepFailure, st: "RunState", t: float, x: np.ndarray
                 ) -> SimulationError:
        """The run's error for a solver failure after the last good state (t, x): the
        block of the state at fault, else the first block with a non-finite value where
        the failed step found one (`StepFailure.probe`), or at (t, x)."""
        sim = self.sim
        model = sim.model
        block, port = None, None
        if exc.state is not None:
            block = model.block_ids[model.state_owner[exc.state]]
        else:
            if exc.probe is not None:
                block, port = sim._nonfinite_origin(st, *exc.probe)
            if block is None:
                block, port = sim._nonfinite_origin(st, t, x)
        return sim._fail(f"{exc} (solver {sim.settings.solver})", t, block,
                         repeated_warning(exc), port)

    def _flush(self, batch: DenseBatch | None) -> None:
        if batch:
            self.sim._add_rows(*batch.take())

    def _steps(self, stepper, batch: DenseBatch | None, st: "RunState", t_bound: float,
               t_time: float, k_grid: int, n_grid: int) -> Segment:
        sim = self.sim
        s, n_zc = sim.settings, sim.model.n_zc
        while True:
            try:
                stepper.step()
                sim.stats["steps"] += 1
                t_new = stepper.t
                # Locating a crossing may integrate again (`AdaptiveStepper.solve_to`).
                hit, s_new = self._crossings(st, stepper) if n_zc else (None, None)
            except StepFailure as exc:
                self._flush(batch)  # the results handed with the error include the grid
                raise self._failure(exc, st, stepper.t, stepper.x) from None
            t_end = hit[0] if hit else t_new
            time_event = not hit and t_new >= t_bound and t_bound == t_time
            # Grid points up to the step end; one at an event instant is the event's rows.
            k_end = self._last_grid_point(k_grid, n_grid, t_end, bool(hit or time_event))
            if k_end >= k_grid:
                if batch is not None:
                    batch.add(stepper, k_grid, k_end)
                    if len(batch) >= BATCH_STEPS:
                        self._flush(batch)
                else:
                    self._grid(s.start + np.arange(k_grid, k_end + 1) * sim.interval,
                               stepper, st)
                k_grid = k_end + 1
            if hit:
                return Segment(hit, False, k_grid, stepper.last_step, stepper.nfev)
            # No event: silently latch signs that changed in unwatched directions.
            st.t, st.x = t_new, stepper.x.copy()
            if n_zc:
                st.z[:] = s_new  # in place: the running stepper's rhs reads this array
            if sim.sessions is not None and sim.sessions.hooks and self._step_event(st):
                return Segment(None, True, k_grid, stepper.last_step, stepper.nfev)
            if sim.progress:
                self._flush(batch)  # progress may look at the rows so far (live plots)
                sim.progress(st.t)
            if st.t >= t_bound:
                return Segment(None, time_event, k_grid, stepper.last_step, stepper.nfev)
            if sim._interrupted():
                return Segment(None, False, k_grid, stepper.last_step, stepper.nfev, True)

    def _step_event(self, st: "RunState") -> bool:
        """Whether a block asks for an event at the end of the step just accepted (an
        FMU's completedIntegratorStep), the model's outputs evaluated there first."""
        sim = self.sim
        sim._outputs(st.t, st.x, st.m, st.z)
        return sim.sessions.step_done(st.t, st.x)

    def _last_grid_point(self, k: int, n_grid: int, t_end: float, at_event: bool) -> int:
        """The last grid index k_end in [k - 1, n_grid] whose time start + k_end * interval
        lies up to t_end, short of it by 4 ulp at an event (a grid point within roundoff of
        an event is the event's two rows). From an estimate, corrected by the exact test."""
        start, interval = self.sim.settings.start, self.sim.interval
        # The test, written out in both loops (once per step: no closure made per call).
        limit = t_end - 4 * math.ulp(t_end) if at_event else math.inf
        k_end = min(n_grid, max(k - 1, int((t_end - start) / interval) + 1))
        while k_end >= k:
            tg = start + k_end * interval
            if not (tg > t_end or tg >= limit):
                break
            k_end -= 1
        while k_end < n_grid:
            tg = start + (k_end + 1) * interval
            if tg > t_end or tg >= limit:
                break
            k_end += 1
        return k_end

    def _grid(self, grid: np.ndarray, stepper, st: "RunState") -> None:
        """The output grid inside the last step: a block of rows at once when the logged
        signals are states, else one `observe` per point."""
        sim = self.sim
        if self.selection is not None:
            sim._add_rows(grid, stepper.dense_rows(grid, self.selection))
            return
        times = grid.tolist()
        many = getattr(stepper, "dense_many", None)
        states = many(times) if many else [stepper.dense(tg) for tg in times]
        for tg, xg in zip(times, states):
            sim._grid_row(tg, xg, st)

    def _stepper(self, st: "RunState", t_bound: float, first_step: float | None):
        sim = self.sim
        s = sim.settings
        rhs = sim._rhs(st)
        if s.solver in FIXED:
            return FixedStepper(s.solver, rhs, st.t, st.x, t_bound, s.step, s.start)
        if sim.model.n_states == 0:
            return NoStateStepper(st.t, t_bound, sim.interval)
        atol = sim.model.state_atol(s.atol)  # per state where blocks declare it
        if s.solver == "dopri5":
            return Dopri5Stepper(rhs, st.t, st.x, t_bound, s.rtol, atol, s.max_step, first_step,
                                 sim.stiffness)
        if s.solver == "dop853":
            return Dop853Stepper(rhs, st.t, st.x, t_bound, s.rtol, atol, s.max_step,
                                 first_step, sim.stiffness)
        sparsity = derived.jac_sparsity(sim.model) if s.solver in IMPLICIT else None
        if s.solver in OWN_FIRST_STEP:
            first_step = None
        return AdaptiveStepper(s.solver, rhs, st.t, st.x, t_bound, s.rtol, atol, s.max_step,
                               first_step, sparsity)

    def _values(self, st: "RunState", t: float, x: "np.ndarray | list[float]"
                ) -> "list[float] | np.ndarray":
        """Every zero crossing at (t, x) with the latched modes and signs: a list for small
        models (x a list or an array), else an array."""
        if self.small:
            x_ = x if isinstance(x, list) else x.tolist()
            try:
                return self.zc_list(t, x_, st.m.tolist(), st.z.tolist())
            except (ArithmeticError, ValueError):
                self.sim._zc(t, np.array(x_), st.m, st.z)  # the same failure, naming the block
                raise
        return np.asarray(self.sim._zc(t, x, st.m, st.z), dtype=float)

    def _signs_at_end(self, st: "RunState", stepper
                      ) -> tuple[list[int], np.ndarray, "list[float] | np.ndarray"]:
        """(crossings that fired in a watched direction, signs at the step end, values)."""
        g = self._values(st, stepper.t, stepper.x)
        if self.small:
            signs = [ev_mod.sign(v) for v in g]
            fired = [i for i, (old, new, d) in enumerate(zip(st.z.tolist(), signs,
                                                             self.direction))
                     if new != old and (d == 0.0 or (d > 0.0) == (new > old))]
            return fired, np.array(signs), g
        signs = np.sign(g)
        return ev_mod.fired(st.z, signs, self.directions).tolist(), signs, g

    def _start_values(self, st: "RunState", stepper, known: tuple | None
                      ) -> "list[float] | np.ndarray":
        """The zero crossings at the step's start, for the estimates of `_by_estimate`:
        those known there (the last step's end, or the signs' probe one horizon after the
        event the segment starts at), else evaluated. Only the order in which crossings
        are tried depends on them, not which one is found earliest."""
        if known is not None and known[0] == stepper.t_old:
            return known[1]
        return self._values(st, stepper.t_old, stepper.x_old)

    def _crossings(self, st: "RunState", stepper):
        """((event time, state there, [(block, kind)]) of the first crossing in the step or
        None, signs at the step end).

        Only the earliest crossing is located, at a cost that does not grow with the number
        that fired: the first (by index; of many, the one whose linear estimate from all
        values at the step's ends comes first) is located, the others are evaluated at that
        instant (many: all at once), and only one whose sign has already changed there is
        located too (a tie, or a curved guard that its estimate put later). Ties go to the
        lowest index, as when every one was located.
        """
        model = self.sim.model
        idx, s_new, g_new = self._signs_at_end(st, stepper)
        known, self.start_values = self.start_values, (stepper.t, g_new)  # at the next start
        if not idx:
            return None, s_new
        t_new, t_old = stepper.t, stepper.t_old
        if not stepper.locates_events:
            return (t_new, stepper.x.copy(), [(model.zc_owner[idx[0]], "state")]), s_new
        m_, z_ = st.m.tolist(), st.z.tolist()
        scratch = stepper.x.tolist()  # states a guard reads are interpolated into it
        many = len(idx) > FEW_FIRED  # else: index order, each checked alone at the earliest
        if many:
            idx = self._by_estimate(idx, self._start_values(st, stepper, known), g_new, st.z)
            prepare = getattr(stepper, "prepare_dense", None)
            if prepare is not None:
                prepare()  # the whole state is interpolated at the earliest crossing below
        guard = functools.partial(self._guard, st, stepper, m_=m_, z_=z_, scratch=scratch)
        best_i = idx[0]
        best_t = ev_mod.locate(*guard(best_i, z_[best_i], t_old, t_new), float(g_new[best_i]))
        x_best, rest = None, idx[1:]
        if many:
            x_best = stepper.dense(best_t)
            at_best = self._values(st, best_t, x_best.tolist() if self.small else x_best)
            if isinstance(at_best, np.ndarray):
                rest_ = np.array(rest, dtype=int)
                rest = rest_[np.sign(at_best[rest_]) != st.z[rest_]].tolist()
            else:
                rest = [i for i in rest if ev_mod.sign(at_best[i]) != z_[i]]
        for i in rest:
            g, *where = guard(i, z_[i], t_old, best_t)
            if ev_mod.sign(g(best_t)) == z_[i]:
                continue  # crosses after the earliest crossing found so far
            before = math.nextafter(best_t, -math.inf)
            if before <= t_old or ev_mod.sign(g(before)) == z_[i]:
                t_i = best_t  # changes sign there too (a tie: the same guard value)
            else:
                t_i = ev_mod.locate(g, *where)
            if t_i < best_t or (t_i == best_t and i < best_i):
                best_t, best_i, x_best = t_i, i, None
        located = [(model.zc_owner[best_i], "state")]
        if self.sim.settings.solver in ACCURATE_LOCATION and isinstance(stepper, AdaptiveStepper):
            if self.reads_states[best_i]:
                best_t = self._refine(st, stepper, best_i, best_t)
            return (best_t, stepper.solve_to(best_t), located), s_new
        return (best_t, stepper.dense(best_t) if x_best is None else x_best, located), s_new

    def _guard(self, st: "RunState", stepper, i: int, z_i: float, t0: float, t1: float,
               m_: list, z_: list, scratch: list[float]) -> tuple:
        """`events.locate`'s arguments for crossing i in (t0, t1]: g_i(t) on the step's
        dense output, interpolating only the states it reads when the stepper can (dopri5;
        then with an estimate from the guard as a polynomial, `guard_poly`), all of them
        otherwise."""
        model = self.sim.model
        g_i = derived.zc_component(model, i)
        columns = derived.zc_component_states(model, i)
        dense_into = getattr(stepper, "dense_into", None)
        estimate = None
        if columns is not None and dense_into is not None:
            rows = stepper.column_rows(columns)

            def states(t: float) -> list[float]:
                dense_into(t, columns, rows, scratch)
                return scratch

            if columns:
                estimate = guard_poly.estimator(
                    stepper.t_old, stepper.t, rows, columns,
                    lambda t, x_: g_i(t, x_, m_, z_))
        else:
            states = stepper.dense_list
        zc, m, z = self.sim._zc, st.m, st.z

        def g(t: float) -> float:
            try:
                return g_i(t, states(t), m_, z_)
            except (ArithmeticError, ValueError):
                zc(t, stepper.dense(t), m, z)  # the same failure, naming the block
                raise
        return g, z_i, t0, t1, estimate

    @staticmethod
    def _by_estimate(idx: list[int], g_old: "list[float] | np.ndarray",
                     g_new: "list[float] | np.ndarray", z: np.ndarray) -> list[int]:
        """The fired crossings, earliest linear estimate of their crossing time first (as
        fractions of the step), ties by index. One whose value at the step's start is not
        of its latched sign (zero after a reset onto its guard: it left and came back) has
        no estimate from the ends and goes last, as one that cannot be estimated. Values
        in arrays (large models) are ordered by numpy, at a cost that hardly grows with
        the number that fired."""
        if isinstance(g_old, np.ndarray):
            fired = np.array(idx, dtype=int)
            g0, g1 = g_old[fired], np.asarray(g_new, dtype=float)[fired]
            fraction = g0 / (g0 - g1)  # as below (a run ignores numpy's warnings)
            fraction = np.where((np.sign(g0) == z[fired]) & (fraction >= 0.0)
                                & (fraction <= 1.0), fraction, 2.0)  # NaN: 2.0
            return fired[np.argsort(fraction, kind="stable")].tolist()
        z_ = z.tolist()

        def key(i: int) -> tuple[float, int]:
            g0, g1 = g_old[i], float(g_new[i])
            if ev_mod.sign(g0) != z_[i]:
                return 2.0, i
            fraction = g0 / (g0 - g1)  # g0 and g1 differ in sign: no division by zero
            return (fraction if 0.0 <= fraction <= 1.0 else 2.0), i  # NaN: last
        return sorted(idx, key=key)

    def _refine(self, st: "RunState", stepper, i: int, t_est: float) -> float:
        """Re-locate crossing i on states integrated to each trial time (implicit solvers)."""
        zc, m, z = self.sim._zc, st.m, st.z

        def g(t: float) -> float:
            return zc(t, stepper.solve_to(t), m, z)[i]

        def changed(t: float) -> bool:
            return ev_mod.sign(g(t)) != z[i]

        # A bracket around the dense output's estimate that the integrated states confirm:
        # a few ulps wide where the dense output is good (a handful of trial integrations,
        # each a solver start, then locate the crossing), else 1e-3 of the step, else it.
        # Where the narrow bracket failed at the last event it is not tried again for a
        # while (an estimate that was off is off again: two trial integrations saved).
        lo, hi = stepper.t_old, stepper.t
        self.narrow_skips -= 1
        widths = [(hi - lo) * 1e-3]
        if self.narrow_skips <= 0:
            widths.insert(0, 64.0 * math.ulp(t_est))
        for width in widths:
            a, b = max(lo, t_est - width), min(hi, t_est + width)
            if changed(b) and not changed(a):
                return ev_mod.locate(g, z[i], a, b)
            if len(widths) == 2 and width == widths[0]:
                self.narrow_skips = NARROW_RETRY
        return ev_mod.locate(g, z[i], lo, hi)
