"""The hybrid simulation loop: continuous steps, located state events, exact time events,
and event iteration until every block has settled.

The engine owns all mutable state of a run: time, continuous state x, discrete state m and
the latched zero-crossing signs z. Blocks' modes read z, so they cannot change during a
continuous step; at an event the signs are re-read just after the event instant (a probe
one "event horizon" later along the flow), which is what lets a state that sits exactly
on a guard (Math 003) stay put instead of chattering.
"""
from __future__ import annotations

import logging
import math
import time as clock
from dataclasses import dataclass
from typing import Callable

import numpy as np

from blocksim.compiler.compiled import CompiledModel
from blocksim.engine import derived, events as ev_mod
from blocksim.engine.dopri5 import Dopri5Stepper
from blocksim.engine.results import Event, Recorder, Results
from blocksim.engine.steppers import (ADAPTIVE, FIXED, AdaptiveStepper, FixedStepper,
                                      NoStateStepper, StepFailure)
from blocksim.errors import SimulationError
from blocksim.model import SimulationSettings

log = logging.getLogger(__name__)

MAX_EVENT_PASSES = 100
BACKENDS = ("python", "numba")
ACCURATE_LOCATION = ("radau", "bdf")  # dense output too coarse: locate on integrated states
# Zeno detection: ZENO_EVENTS consecutive events, each closer than ZENO_SPAN horizons to the
# one before. A guarded model never gets there: a limited integrator whose input would turn
# back within one horizon stays at its limit, so its flights last at least two horizons.
ZENO_EVENTS = 20
ZENO_SPAN = 0.25


@dataclass
class RunState:
    """The mutable part of a run."""

    t: float
    x: np.ndarray
    m: np.ndarray
    z: np.ndarray


def _native_loop(model: CompiledModel, sim: "Simulator"):
    """The compiled loop for the numba backend, or None (Python path) if unavailable."""
    try:
        from blocksim.engine.native import NativeLoop  # imports numba: only when asked
    except ImportError as exc:
        log.warning("numba backend unavailable (%s); running in Python", exc)
        return None
    return NativeLoop.for_model(model, sim)


@dataclass
class Segment:
    """How an integration segment ended: a located crossing (t, x, [(block, kind)]) or its
    bound (a time event there if `time_event`), with the grid index and step size reached."""

    hit: tuple[float, np.ndarray, list[tuple[int, str]]] | None
    time_event: bool
    k_grid: int
    last_step: float | None
    nfev: int


class Simulator:
    """Runs one compiled model with one set of settings; `run()` returns Results."""

    def __init__(self, model: CompiledModel, settings: SimulationSettings | None = None,
                 progress: Callable[[float], None] | None = None,
                 should_stop: Callable[[], bool] | None = None):
        self.model = model
        self.settings = s = settings or model.settings
        if s.solver not in ADAPTIVE and s.solver not in FIXED:
            raise SimulationError(f"unknown solver '{s.solver}'; choose one of "
                                  f"{', '.join([*ADAPTIVE, *FIXED])}", s.start)
        if not s.stop > s.start:
            raise SimulationError(f"stop time {s.stop} is not after start time {s.start}", s.start)
        if s.solver in FIXED and not (s.step and s.step > 0):
            raise SimulationError(f"solver '{s.solver}' needs a fixed step size "
                                  f"(simulation.step)", s.start)
        self.progress = progress
        self.should_stop = should_stop
        f = model.functions
        self._deriv, self._zc, self._outputs = f["deriv"], f["zc"], f["outputs"]
        self._update, self._pre, self._after = f["update"], f["pre_event"], f["after_event"]
        self._observe = derived.observe(model)
        self.native = None
        if s.resolved_backend not in BACKENDS:
            raise SimulationError(f"unknown backend '{s.resolved_backend}'; choose one of "
                                  f"{', '.join(BACKENDS)}", s.start)
        scale = max(abs(s.start), abs(s.stop), s.stop - s.start)
        # How far past an event the signs are read: far above the roundoff that event
        # location leaves behind, far below any time scale a model resolves.
        self.horizon = 64 * math.ulp(scale)
        self.recorder = Recorder([sig.name for sig in model.logged],
                                 [sig.indices for sig in model.logged])
        interval = s.output_interval or (s.stop - s.start) / 500
        self.interval = interval
        self.stats = {"steps": 0, "events": 0, "restarts": 0, "nfev": 0}
        self._recent_events: list[float] = []
        if s.resolved_backend == "numba" and s.solver == "dopri5" and model.n_states:
            self.native = _native_loop(model, self)

    # ----- evaluation helpers -----
    def _rhs(self, st: RunState) -> Callable[[float, np.ndarray], np.ndarray]:
        deriv, m, z = self._deriv, st.m, st.z

        def rhs(t: float, x: np.ndarray) -> np.ndarray:
            return np.array(deriv(t, x, m, z))
        return rhs

    def _signs_after(self, st: RunState) -> np.ndarray:
        """Zero-crossing signs one horizon after t, following the flow (forward Euler)."""
        if not self.model.n_zc:
            return st.z
        h = self.horizon
        dx = np.array(self._deriv(st.t, st.x, st.m, st.z)) if self.model.n_states else st.x
        probe_x = st.x + h * dx if self.model.n_states else st.x
        signs = np.sign(np.array(self._zc(st.t + h, probe_x, st.m, st.z), dtype=float))
        if self.model.n_states and not signs.all():
            # Still exactly zero (a state at rest on its guard, e.g. uD = 0 with every
            # derivative 0 at t = 0): one more Euler step sees second-order motion.
            dx2 = np.array(self._deriv(st.t + h, probe_x, st.m, st.z))
            ahead = np.sign(np.array(self._zc(st.t + 2 * h, probe_x + h * dx2, st.m, st.z),
                                     dtype=float))
            signs = np.where(signs == 0, ahead, signs)
        return signs

    def _record(self, st: RunState) -> None:
        self.recorder.add(st.t, self._outputs(st.t, st.x, st.m, st.z))

    def _fail(self, message: str, t: float, block: str | None = None) -> SimulationError:
        results = self.recorder.results("failed", message, self.stats)
        return SimulationError(message, t, block, results)

    # ----- event handling -----
    def _event(self, st: RunState, init: bool = False,
               located: list[tuple[int, str]] | None = None) -> bool:
        """Settle the model at st.t and record its left and right limits.

        Returns True if a Stop block asked to end the run. A located crossing after which
        nothing changes (a refinement of an earlier estimate) leaves no trace.
        """
        model = self.model
        m_before = st.m.copy()
        if not init:
            self._record(st)  # the left limit; dropped again if nothing happens
            self._pre(st.t, st.x, st.m, st.z)
        log_entries: list[tuple[int, str]] = []
        changed_by: list[list[tuple[int, str]]] = []
        for _ in range(MAX_EVENT_PASSES):
            zn = self._signs_after(st)
            entries: list[tuple[int, str]] = []
            changed = self._update(st.t, st.x, st.m, st.z, zn, init, entries)
            flipped = np.flatnonzero(zn != st.z) if model.n_zc else ()
            st.z = zn
            log_entries += entries
            changed_by.append(entries + [(model.zc_owner[i], "switch") for i in flipped])
            if not changed and not len(flipped):
                break
            if not np.all(np.isfinite(st.x)):
                bad = int(np.flatnonzero(~np.isfinite(st.x))[0])
                raise self._fail("a reset made the state infinite or NaN", st.t,
                                 model.block_ids[model.state_owner[bad]])
        else:
            culprits = sorted({model.block_ids[b] for entries in changed_by[-4:] for b, _ in entries})
            raise self._fail(f"event iteration did not settle after {MAX_EVENT_PASSES} passes; "
                             f"still changing: {', '.join(culprits)}", st.t,
                             culprits[0] if culprits else None)
        if self._after(st.t, st.x, st.m, st.z):
            st.z = self._signs_after(st)  # pulses cleared: re-latch without edges
        something = bool(log_entries) or len(changed_by) > 1
        if located and not something:
            self.recorder.drop_last()
            st.m[:] = m_before  # a Memory must not sample at a non-event
            return False
        self._record(st)
        self.stats["events"] += not init
        for block, kind in (located or []) + log_entries:
            self.recorder.events.append(Event(float(st.t), model.block_ids[block], kind))
        return any(kind == "stop" for _, kind in log_entries)

    def _zeno_check(self, t: float, blocks: list[int]) -> None:
        recent = self._recent_events
        recent.append(t)
        if len(recent) > ZENO_EVENTS + 1:
            del recent[0]
        if len(recent) > ZENO_EVENTS and all(
                b - a < ZENO_SPAN * self.horizon for a, b in zip(recent, recent[1:])):
            names = ", ".join(sorted({self.model.block_ids[b] for b in blocks}))
            raise self._fail(
                f"{ZENO_EVENTS} events within {recent[-1] - recent[0]:.3g} s (Zeno behaviour: "
                f"events accumulate at this time; guard the model, e.g. with a limited "
                f"integrator); last events from: {names}", t, names.split(", ")[0])

    # ----- the run -----
    def run(self) -> Results:
        """Simulate from start to stop; SimulationError (with partial results) on failure."""
        st = RunState(self.settings.start, self.model.x0.copy(), self.model.m0.copy(),
                      np.zeros(self.model.n_zc))
        try:
            return self._run(st)
        except (ArithmeticError, ValueError) as exc:
            # A block's formula failed (log of a negative number, division by zero, ...).
            block = self.model.block_of_exception(exc)
            raise self._fail(f"{type(exc).__name__}: {exc}", st.t, block) from None

    def _run(self, st: RunState) -> Results:
        s, model = self.settings, self.model
        started = clock.perf_counter()
        stopped = self._event(st, init=True)
        n_grid = int(math.floor((s.stop - s.start) / self.interval + 1e-9))
        k_grid = 1
        first_step = None
        while st.t < s.stop and not stopped:
            if self.should_stop and self.should_stop():
                self.recorder.events.append(Event(st.t, "", "interrupted"))
                return self.recorder.results("stopped", "interrupted by the user",
                                             self.stats)
            t_time = min((src.next_after(st.t) for src in model.time_events), default=math.inf)
            t_bound = min(s.stop, t_time)
            self.stats["restarts"] += 1
            seg = self._segment(st, t_bound, t_time, first_step, k_grid, n_grid)
            k_grid, first_step = seg.k_grid, seg.last_step
            self.stats["nfev"] += seg.nfev
            if seg.hit:
                t_ev, x_ev, located = seg.hit
                st.t, st.x = t_ev, x_ev
                self._zeno_check(t_ev, [b for b, _ in located])
                stopped = self._event(st, located=located)
            elif seg.time_event:
                stopped = self._event(st)
            while k_grid <= n_grid and s.start + k_grid * self.interval <= st.t + 4 * math.ulp(st.t):
                k_grid += 1  # the event rows stand for a grid point at the event instant
        if not stopped and self.recorder.times[-1] < s.stop:
            self._record(st)  # the stop time, when the grid does not end on it
        self.stats["wall_time"] = clock.perf_counter() - started
        status = "stopped" if stopped else "finished"
        return self.recorder.results(status, "", self.stats)

    def _segment(self, st: RunState, t_bound: float, t_time: float,
                 first_step: float | None, k_grid: int, n_grid: int) -> Segment:
        """Integrate from st towards t_bound, recording the grid, until a located crossing
        (st stays at the segment's last step start) or t_bound (st there, signs latched)."""
        if self.native is not None:
            return self.native.segment(self, st, t_bound, t_time, first_step, k_grid, n_grid)
        s, model = self.settings, self.model
        stepper = self._stepper(st, t_bound, first_step)
        while True:
            try:
                stepper.step()
            except StepFailure as exc:
                block = self._nonfinite_block(st, stepper)
                raise self._fail(f"{exc} (solver {s.solver})", stepper.t, block) from None
            self.stats["steps"] += 1
            t_new = stepper.t
            hit = self._check_crossings(st, stepper)
            t_end = hit[0] if hit else t_new
            time_event = not hit and t_new >= t_bound and t_bound == t_time
            # Grid points up to the step end; one at an event instant is the event's rows.
            grid = []
            while k_grid <= n_grid:
                tg = s.start + k_grid * self.interval
                # A grid point within roundoff of an event is the event's two rows.
                if tg > t_end or (tg >= t_end - 4 * math.ulp(t_end) and (hit or time_event)):
                    break
                grid.append(tg)
                k_grid += 1
            if grid:
                many = getattr(stepper, "dense_many", None)
                states = many(grid) if many else [stepper.dense(tg) for tg in grid]
                for tg, xg in zip(grid, states):
                    self._grid_row(tg, xg, st)
            if hit:
                return Segment(hit, False, k_grid, stepper.last_step, stepper.nfev)
            # No event: silently latch signs that changed in unwatched directions.
            st.t, st.x = t_new, stepper.x.copy()
            if model.n_zc:
                s_new = np.sign(np.array(self._zc(st.t, st.x, st.m, st.z), dtype=float))
                st.z[:] = s_new  # in place: the running stepper's rhs reads this array
            if self.progress:
                self.progress(st.t)
            if st.t >= t_bound:
                return Segment(None, time_event, k_grid, stepper.last_step, stepper.nfev)

    def _grid_row(self, t: float, x: np.ndarray, st: RunState) -> None:
        try:
            values = self._observe(t, x, st.m, st.z)
        except (ArithmeticError, ValueError):
            self._outputs(t, x, st.m, st.z)  # the same failure, from lines naming the block
            raise
        self.recorder.add_logged(t, values)

    def _stepper(self, st: RunState, t_bound: float, first_step: float | None):
        s = self.settings
        rhs = self._rhs(st)
        if s.solver in FIXED:
            return FixedStepper(s.solver, rhs, st.t, st.x, t_bound, s.step, s.start)
        if self.model.n_states == 0:
            return NoStateStepper(st.t, t_bound, self.interval)
        if s.solver == "dopri5":
            return Dopri5Stepper(rhs, st.t, st.x, t_bound, s.rtol, s.atol, s.max_step, first_step)
        sparsity = derived.jac_sparsity(self.model) if s.solver in ("radau", "bdf") else None
        return AdaptiveStepper(s.solver, rhs, st.t, st.x, t_bound, s.rtol, s.atol, s.max_step,
                               first_step, sparsity)

    def _check_crossings(self, st: RunState, stepper):
        """(event time, state there, [(block, kind)]) for the first crossing in the step."""
        model = self.model
        if not model.n_zc:
            return None
        t_new = stepper.t
        g_new = np.array(self._zc(t_new, stepper.x, st.m, st.z), dtype=float)
        s_new = np.sign(g_new)
        idx = ev_mod.fired(st.z, s_new, model.zc_direction)
        if not len(idx):
            return None
        if not stepper.locates_events:
            return t_new, stepper.x.copy(), [(model.zc_owner[i], "state") for i in idx[:1]]
        zc, m, z, dense = self._zc, st.m, st.z, stepper.dense
        best_t, best_i = t_new, -1
        for i in idx:
            def g(t: float, i: int = i) -> float:
                return zc(t, dense(t), m, z)[i]
            if best_i >= 0 and float(np.sign(g(best_t))) == z[i]:
                continue  # crosses after the earliest crossing found so far
            t_i = ev_mod.locate(g, z[i], stepper.t_old, best_t)
            if best_i < 0 or t_i < best_t:
                best_t, best_i = t_i, i
        if self.settings.solver in ACCURATE_LOCATION:
            best_t = self._refine(st, stepper, best_i, best_t)
            return best_t, stepper.solve_to(best_t), [(model.zc_owner[best_i], "state")]
        return best_t, dense(best_t), [(model.zc_owner[best_i], "state")]

    def _refine(self, st: RunState, stepper, i: int, t_est: float) -> float:
        """Re-locate crossing i on states integrated to each trial time (implicit solvers)."""
        zc, m, z = self._zc, st.m, st.z

        def g(t: float) -> float:
            return zc(t, stepper.solve_to(t), m, z)[i]

        def changed(t: float) -> bool:
            return float(np.sign(g(t))) != z[i]

        lo, hi = stepper.t_old, stepper.t
        width = (hi - lo) * 1e-3
        a, b = max(lo, t_est - width), min(hi, t_est + width)
        if changed(a) or not changed(b):
            a, b = lo, hi
        return ev_mod.locate(g, z[i], a, b)

    def _nonfinite_block(self, st: RunState, stepper) -> str | None:
        """The first block whose output or derivative is not finite at the last good state."""
        model = self.model
        try:
            y = np.array(self._outputs(stepper.t, stepper.x, st.m, st.z), dtype=float)
            bad = np.flatnonzero(~np.isfinite(y))
            if len(bad):
                return model.block_of_signal(int(bad[0]))
            dx = np.array(self._deriv(stepper.t, stepper.x, st.m, st.z), dtype=float)
            bad = np.flatnonzero(~np.isfinite(dx))
            if len(bad):
                return model.block_ids[model.state_owner[int(bad[0])]]
        except (ArithmeticError, ValueError):
            return None
        return None
