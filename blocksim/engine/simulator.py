"""The hybrid simulation loop: continuous steps, located state events, exact time events,
and event iteration until every block has settled.

The engine owns all mutable state of a run: time, continuous state x, discrete state m and
the latched zero-crossing signs z. Blocks' modes read z, so they cannot change during a
continuous step; at an event the signs are re-read just after the event instant (a probe
one "event horizon" later along the flow), which is what lets a state that sits exactly
on a guard (Math 003) stay put instead of chattering.

The continuous segments between events run in `segment.py` (Python, any solver) or in the
compiled loop of the numba backend (`native/`, dopri5), which also settles events, time
events and sample hits included, when it can; this module runs the restarts, the start and
time events, and the events the compiled loop hands back (settled by `event_iteration.py`),
and it is the reference for what the compiled code does. The blocks' next time event
comes from the generated `next_time` (their `BlockType.next_time` code) on both backends.

A run that cannot end well ends early with a SimulationError carrying the results so far:
settings no run can honour, events that stop time from advancing or that would exceed the
event budget, a stiff system on dopri5 or dop853 with too many steps ahead (`guards.py`,
`stiffness.py`). What a run survives is reported once as a warning (`Results.warnings`, and
the logger "blocksim.engine" once the run has survived it, `warnings_held.py`: a failure
that repeats a warning supersedes it): a stiff system on dopri5 or dop853, a logged signal
that becomes NaN or infinite (`nonfinite.py`; an error with `strict=True`). numpy's
floating-point warnings are silenced during a run: these checks report such values instead,
naming the block. Ctrl-C raises SimulationInterrupted with the results so far (status
"interrupted").
"""
from __future__ import annotations

import dataclasses
import logging
import math
import sys
import time as clock
import weakref
from dataclasses import dataclass
from typing import Callable

import numpy as np

from blocksim.compiler.compiled import CompiledModel
from blocksim.engine import after_run, derived, failports, guards, history, \
    nonfinite, run_plan, sessions
from blocksim.engine.arithmetic import describe_arithmetic
from blocksim.engine.event_iteration import EventIteration
from blocksim.engine.stiffness import StiffnessTest
from blocksim.engine.warnings_held import NONFINITE, STIFF, HeldWarnings
from blocksim.engine.notices import notice
from blocksim.engine.hits import HitSchedule
from blocksim.engine.results import Event, Recorder, Results
from blocksim.engine.segment import PythonLoop, Segment
from blocksim.errors import SimulationError, SimulationInterrupted
from blocksim.diagram.model import SimulationSettings

log = logging.getLogger(__name__)

# Wall time between two calls of `should_stop`: a Stop answered within a few frames, at a
# cost that no run notices even when steps take microseconds.
POLL_INTERVAL = 0.01
STOP_MESSAGE = "interrupted by the user"
INTERRUPT_MESSAGE = "interrupted (Ctrl-C)"


@dataclass
class RunState:
    """The mutable part of a run."""

    t: float
    x: np.ndarray
    m: np.ndarray
    z: np.ndarray


def _native_loop(model: CompiledModel, sim: "Simulator"):
    """The compiled loop for the numba backend, or None (Python path, `sim.in_python`
    says why) if unavailable."""
    s = sim.settings
    if model.run_sessions:
        sim.in_python("backend numba: a diagram with an FMU block runs in Python (the FMU's "
                      "functions are C calls through ctypes, which compiled code cannot make)")
        return None
    if s.solver != "dopri5":
        sim.in_python(f"backend numba: it runs solver dopri5 only; solver '{s.solver}' runs "
                      f"in Python")
        return None
    if not model.n_states:
        sim.in_python("backend numba: a diagram without continuous states runs in Python")
        return None
    native = sys.modules.get("blocksim.engine.native.loop")
    if native is None:
        native, why = _import_native_loop()
        if native is None:
            sim.in_python(why)
            return None
    return native.NativeLoop.for_model(model, sim)


def _import_native_loop():
    """(`native.loop`, None), compiled on first use (saying so while it compiles), or
    (None, why) if numba is missing or broken: the run goes on in Python, which the
    caller says once (`Simulator.in_python`: a notice and the run's warnings)."""
    try:
        import numba  # noqa: F401  (first: a missing numba is not "compiling")
        from blocksim.engine.native import cache, heartbeat

        cache.refresh()  # before the kernels load from numba's cache
        if cache.kernels_cached():
            from blocksim.engine.native import loop
            return loop, None
        what = "compiling the numba backend"
        notice(f"{what}, once per machine; this takes about {cache.COMPILE_SECONDS} s "
               f"(longer on a busy machine)")
        started = clock.perf_counter()
        with heartbeat.compiling(what):
            from blocksim.engine.native import loop  # imports the kernel: numba compiles it
        notice(f"numba backend compiled in {clock.perf_counter() - started:.1f} s")
        return loop, None
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == "numba":
            return None, ("backend numba: numba is not installed (pip install "
                          "'blocksim[fast]'); running in Python")
        return None, f"backend numba: numba cannot be loaded ({exc}); running in Python"


def _weakly(sim: "Simulator") -> Callable[[], None]:
    """`sim._warn_stiff` through a weak reference: a Simulator must not be kept alive by a
    reference cycle (its buffers would wait for the cyclic garbage collector)."""
    ref = weakref.ref(sim)

    def call() -> None:
        alive = ref()
        if alive is not None:
            alive._warn_stiff()
    return call


class Simulator(EventIteration):
    """Runs one compiled model with one set of settings; `run()` returns Results."""

    def __init__(self, model: CompiledModel, settings: SimulationSettings | None = None,
                 progress: Callable[[float], None] | None = None,
                 should_stop: Callable[[], bool] | None = None, strict: bool = False):
        """`strict`: a logged signal that becomes NaN or infinite fails the run (else it
        is a warning)."""
        self.model = model
        self.settings = s = settings or model.settings
        # What depends only on the model and the settings (checked there) is made once.
        self.plan = plan = run_plan.plan_for(model, s)
        if plan.max_step is not None:  # the history rings bound the step
            self.settings = s = s.replaced(max_step=plan.max_step)
        self.recorder = Recorder(plan.names, plan.indices)
        self.progress = progress
        self.should_stop = should_stop
        self.strict = strict
        self.reports = HeldWarnings(model.source)
        self.warnings = self.reports.messages  # every warning of the run, in order
        self._logged_check = nonfinite.LoggedCheck(model)
        self._started = clock.perf_counter()
        self._state: RunState | None = None
        self._failed_row: float | None = None  # the grid time whose outputs failed
        self._next_poll = -math.inf
        self._after_done = False  # the blocks' after_run work (ToFile) has been done
        self._written: tuple[tuple[str, str], ...] = ()  # what it wrote (Results.written)
        f = model.functions
        self._deriv, self._zc, self._outputs = f["deriv"], f["zc"], f["outputs"]
        # Functions no block writes code for do nothing: not calling them saves a call
        # per event (pre/after) or per pass of the event iteration (update).
        empty = model.empty
        self._update = None if "update" in empty else f["update"]
        self._pre = None if "pre_event" in empty else f["pre_event"]
        self._after = None if "after_event" in empty else f["after_event"]
        self._observe = plan.observe
        # Zero crossings that move with t or x: only these need the second look-ahead.
        self._zc_moves, self._zc_moves_list = plan.zc_moves, plan.zc_moves_list
        # (t, zero crossings probed one horizon after t) of the last `_signs_after`.
        self.after_values: tuple[float, "list[float] | np.ndarray"] | None = None
        self.native = None
        self.sessions: sessions.OpenSessions | None = None  # blocks' run sessions (FMUs)
        backend = plan.backend  # python or numba: check_run saw to it
        self.horizon = plan.horizon
        self.interval = plan.interval
        self.stats = {"steps": 0, "events": 0, "restarts": 0, "nfev": 0, "hits": 0}
        self.guard = guards.ProgressGuard(s.start, s.stop, self.horizon)
        # Sample hits: scheduled on the model's exact clock, handled as time events.
        self.hits = HitSchedule(model, s.start) if model.rates else None
        self._sample = f["sample"]
        # The blocks' next time event after t, from their settled discrete states.
        self._next_time = f["next_time"] if model.time_events else None
        # Hairer's stiffness test on the explicit solvers (dopri5, dop853); the C loop
        # does not run it (made below where a run on backend c goes to Python).
        self.stiffness = (StiffnessTest(s.stop, guards.stiff_budget(backend == "numba"),
                                        _weakly(self), s.solver)
                          if plan.stiff_test and backend != "c" else None)
        # Zeno detection state, shared with the compiled loop: time of the last located
        # event, how many events in a row came within ZENO_SPAN horizons of the one
        # before, and the time the run of such events began.
        self.zeno = np.array([-math.inf, 0.0, -math.inf])
        self._small = plan.small
        if self._small:  # event-time values in lists: see `segment.py`
            self._deriv_list, self._zc_list = plan.deriv_list, plan.zc_list
        self.event_limits = plan.event_limits
        # Input histories (transport delays), kept in the run's m by the loop in use.
        self.history = history.History(self) if model.history else None
        if backend == "numba":
            self.native = _native_loop(model, self)
        elif backend == "c":  # generated C, compiled once per model (`blocksim.ccode`)
            from blocksim.ccode.loop import c_loop
            self.native = c_loop(model, self)
        loop = history.HistoryLoop if self.history is not None else PythonLoop
        self.loop = loop(self) if self.native is None else None
        if plan.stiff_test and self.native is None:
            if self.stiffness is None:
                self.stiffness = StiffnessTest(s.stop, guards.stiff_budget(compiled=False),
                                               _weakly(self), s.solver)
            self.stiffness.budget = guards.stiff_budget(compiled=False)
        self._deriv_vector = derived.vector_deriv(model) if self.loop is not None else None
        # Derivative lines fixed by the modes, computed once per mode set (`mode_memo`).
        make = (derived.mode_memo_deriv(model)
                if self.loop is not None and self._deriv_vector is None else None)
        self._deriv_memo = make([None, None, None], np) if make is not None else None

    # ----- evaluation helpers -----
    def _rhs(self, st: RunState) -> Callable[[float, np.ndarray], np.ndarray]:
        deriv, m, z, vector = self._deriv, st.m, st.z, self._deriv_vector
        if vector is None:
            vector = self._deriv_memo
        if vector is None:
            def rhs(t: float, x: np.ndarray) -> np.ndarray:
                return np.array(deriv(t, x, m, z))
            return rhs

        def vector_rhs(t: float, x: np.ndarray) -> np.ndarray:
            try:
                return vector(t, x, m, z)
            except (ArithmeticError, ValueError):
                deriv(t, x, m, z)  # the same failure, from lines naming the block
                raise
        return vector_rhs

    def _deriv_array(self, t: float, x: np.ndarray, m: np.ndarray, z: np.ndarray
                     ) -> np.ndarray:
        """`deriv` at (t, x) as a new array; memoised lines where the model has them."""
        memo = self._deriv_memo
        if memo is None:
            return np.array(self._deriv(t, x, m, z))
        try:
            return memo(t, x, m, z)
        except (ArithmeticError, ValueError):
            self._deriv(t, x, m, z)  # the same failure, from lines naming the block
            raise

    def _record(self, st: RunState) -> None:
        self._grid_row(st.t, st.x, st)

    def _interrupted(self) -> bool:
        """Whether should_stop asks to end the run (asked at most every POLL_INTERVAL);
        called once per step or restart, it also logs the warnings held long enough."""
        if self.reports.pending:
            self.reports.release_due()
        if self.should_stop is None:
            return False
        now = clock.perf_counter()
        if now < self._next_poll:
            return False
        self._next_poll = now + POLL_INTERVAL
        return bool(self.should_stop())

    def _results(self, status: str, message: str = "") -> Results:
        self.stats["wall_time"] = clock.perf_counter() - self._started
        results = self.recorder.results(status, message, self.stats, self.warnings)
        if self.model.after_run and not self._after_done:
            self._after_done = True  # once, also when a failure to write fails the run
            written, failures = after_run.run_after(self.model, results)
            self._written = tuple(written)
            if failures and status in ("finished", "stopped"):
                t = float(results.time[-1]) if len(results.time) else self.settings.start
                raise self._fail("; ".join(text for _, text in failures), t, failures[0][0])
            if failures:  # the run's own failure stays the error; this is said besides
                for block, text in failures:
                    log.warning("%s: block '%s': %s", self.model.source, block, text)
                results = dataclasses.replace(results, warnings=results.warnings + tuple(
                    f"block '{block}': {text}" for block, text in failures))
        if self._written:  # (also in the results of a failure to write another file)
            results = dataclasses.replace(results, written=self._written)
        return results

    def _stopped_results(self, st: RunState) -> Results:
        self.recorder.events.append(Event(float(st.t), "", "interrupted"))
        return self._results("stopped", STOP_MESSAGE)

    def _fail(self, message: str, t: float, block: str | None = None,
              repeats: str | None = None, port: str | None = None) -> SimulationError:
        """The error ending the run, with the results so far; `repeats`: the kind of the
        warnings it says again (`warnings_held`), which are then not logged; `port`: the
        block's port the failure concerns (`failports`)."""
        self.reports.supersede(repeats)
        results = self._results("failed", message)
        return SimulationError(message, t, block, results, port)

    def _warn(self, message: str, kind: str) -> None:
        """Report once: in the results' warnings, and on the "blocksim.engine" logger once
        the run has survived it (`warnings_held`)."""
        self.reports.add(message, kind)

    def in_python(self, message: str) -> None:
        """The numba backend asked for runs in Python, for the reason `message`: a notice
        (once per process, on the terminal) and one of this run's warnings (the API's
        `Results.warnings`), not logged again (`HeldWarnings.note`)."""
        notice(message)
        self.reports.note(message)

    def _warn_stiff(self) -> None:
        test = self.stiffness
        block = self.model.block_ids[self.model.state_owner[test.state]]
        self._warn(f"the system looks stiff from t = {test.detected:.6g} (fastest in block "
                   f"'{block}'): {test.solver}'s steps are held small by stability, not "
                   f"accuracy; solvers radau or bdf suit it", STIFF)

    # ----- the run -----
    def run(self) -> Results:
        """Simulate from start to stop; SimulationError (with partial results) on failure,
        SimulationInterrupted on Ctrl-C."""
        st = RunState(self.settings.start, self.model.x0.copy(), self.model.m0.copy(),
                      np.zeros(self.model.n_zc))
        self._state = st
        self._started = clock.perf_counter()
        if self.model.run_sessions:  # (FMUs) opened here, closed whatever the ending
            self.sessions = sessions.OpenSessions(self.model)
            self.sessions.open(self.settings, st.x, st.m)
            try:
                return self._run_checked(st)
            finally:
                self.sessions.close()
        return self._run_checked(st)

    def _run_checked(self, st: RunState) -> Results:
        """`_run`, its failures turned into SimulationError with the results so far."""
        try:
            with np.errstate(all="ignore"):  # each case is reported, naming the block
                return self._run(st)
        except (ArithmeticError, ValueError) as exc:
            # A block's formula failed (log of a negative number, division by zero, ...).
            # It happened at the grid row being logged, else after the last state (st.t).
            block, port = failports.exception_origin(self.model, exc)
            t = self._failed_row if self._failed_row is not None else st.t
            raise self._fail(describe_arithmetic(exc), t, block, NONFINITE, port) from None
        except KeyboardInterrupt as exc:
            # Ctrl-C, or a signal the command line turns into one (its argument names it)
            message = f"interrupted ({exc.args[0]})" if exc.args else INTERRUPT_MESSAGE
            self.recorder.events.append(Event(float(st.t), "", "interrupted"))
            results = self._results("interrupted", message)
            raise SimulationInterrupted(message, st.t, None, results) from None
        finally:
            self.reports.release_all()  # a failure has already logged or dropped its own

    def _run(self, st: RunState) -> Results:
        s, model = self.settings, self.model
        stopped = False
        if model.derived.get("finite_x0") is not model.x0:  # checked once per model
            if not np.isfinite(model.x0).all():
                i = int(np.flatnonzero(~np.isfinite(model.x0))[0])
                raise self._fail(f"initial state {model.x0[i]} is not finite", st.t,
                                 model.block_ids[model.state_owner[i]], NONFINITE)
            model.derived["finite_x0"] = model.x0
        # The start is settled here, or else in the compiled loop's first call: a run is
        # only interrupted after it, so even a stopped run has its start rows.
        start_pending = self.native is not None and self.native.handles_start
        if not start_pending:
            stopped = self._event(st, init=True)
        n_grid = self.plan.n_grid
        k_grid = 1
        first_step = None
        while st.t < s.stop and not stopped:
            if not start_pending and self._interrupted():
                return self._stopped_results(st)
            if start_pending:  # the loop finds the first bound once the start is settled
                t_source, t_time, t_bound = math.inf, math.inf, s.stop
            else:
                t_source, t_time, t_bound = self._next_bound(st)
            start_pending = False
            self.stats["restarts"] += 1
            seg = self._segment(st, t_bound, t_time, t_source, first_step, k_grid, n_grid)
            k_grid, first_step = seg.k_grid, seg.last_step
            self.stats["nfev"] += seg.nfev
            if seg.interrupted:
                return self._stopped_results(st)
            stopped = seg.stopped
            if seg.hit:
                t_ev, x_ev, located = seg.hit
                st.t, st.x = t_ev, x_ev
                self._zeno_check(t_ev, [b for b, _ in located])
                stopped = self._event(st, located=located)
            elif seg.time_event:
                if seg.t_source is not None:  # the loop went on to a bound it found
                    t_source = seg.t_source
                stopped = self._event(st, scheduled=t_source <= st.t)
            while k_grid <= n_grid and s.start + k_grid * self.interval <= st.t + 4 * math.ulp(st.t):
                k_grid += 1  # the event rows stand for a grid point at the event instant
            if self.stats["restarts"] - self.stats["hits"] >= self.guard.due:
                self._check_progress(st.t)
        if not stopped and self.recorder.last_time < s.stop:
            self._record(st)  # the stop time, when the grid does not end on it
        return self._results("stopped" if stopped else "finished")

    def _next_bound(self, st: RunState) -> tuple[float, float, float]:
        """(the blocks' next time event, the next time event or sample hit, the end of the
        next segment: that or the stop time) after st.t, with the discrete states settled
        there; SimulationError if the blocks' next time event does not come after st.t."""
        t_source = self._next_time(st.t, st.m) if self._next_time is not None else math.inf
        if not t_source > st.t:
            raise self._stuck_time_event(st.t)
        t_time = min(t_source, self.hits.next_time) if self.hits else t_source
        return t_source, t_time, min(self.settings.stop, t_time)

    def _check_progress(self, t: float) -> None:
        """End the run if its events keep it from reaching the stop time (`guards`)."""
        # Sample hits are known in advance and held to the compiler's budget: only the
        # other restarts tell whether events crowd the run.
        reason = self.guard.check(t, self.stats["restarts"] - self.stats["hits"],
                                  self.stats["events"])
        if reason is not None:
            message, block = guards.with_culprits(reason, self.recorder.events, self.model)
            raise self._fail(message, t, block)

    def _stuck_time_event(self, t: float) -> SimulationError:
        message, block = guards.stuck_time_event(self.model, t, self._state.m)
        return self._fail(message, t, block)

    def _segment(self, st: RunState, t_bound: float, t_time: float, t_source: float,
                 first_step: float | None, k_grid: int, n_grid: int) -> Segment:
        if self.native is not None:
            return self.native.segment(self, st, t_bound, t_time, first_step, k_grid, n_grid,
                                       t_source)
        return self.loop.segment(st, t_bound, t_time, first_step, k_grid, n_grid)

    def _grid_row(self, t: float, x: np.ndarray, st: RunState) -> None:
        try:
            values = self._observed(t, x, st)
        except (ArithmeticError, ValueError):
            self._failed_row = t
            raise
        self.recorder.add_logged(t, values)
        total = sum(values)
        if total - total != 0.0:  # a NaN or an infinity (or an overflowing sum): look
            self._check_rows(np.array([t]), np.array([values], dtype=float), (t, x))

    def _add_rows(self, times: np.ndarray, rows: np.ndarray,
                  probe: tuple[float, np.ndarray] | None = None) -> None:
        """Rows of logged signals into the results, checked for NaN and infinities;
        `probe` is a (t, x) where the model may be re-evaluated to name the block."""
        self.recorder.add_rows(times, rows)
        total = float(rows.sum())
        if total - total != 0.0:
            self._check_rows(np.asarray(times, dtype=float),
                             np.asarray(rows, dtype=float).reshape(len(times), -1), probe)

    def _check_rows(self, times: np.ndarray, rows: np.ndarray,
                    probe: tuple[float, np.ndarray] | None) -> None:
        """Report each logged signal the first time it holds a NaN or an infinity: a
        warning, or with `strict` a failure (the rows are already in the results)."""
        found = self._logged_check.new(times, rows)
        if not found:
            return
        st = self._state
        t_probe, x_probe = probe if probe is not None else (st.t, st.x)
        source, port = nonfinite.origin_port(self.model, self._outputs, t_probe, x_probe,
                                             st.m, st.z)
        for t, name, value in found:
            message = self._logged_check.message(t, name, value, source)
            if self.strict:
                raise self._fail(message, t, source or name, NONFINITE, port)
            self._warn(message, NONFINITE)

    def _observed(self, t: float, x: np.ndarray, st: RunState) -> list[float]:
        """The logged signals at (t, x); a formula that fails there raises from `outputs`,
        whose lines name the block."""
        try:
            return self._observe(t, x, st.m, st.z)
        except (ArithmeticError, ValueError):
            self._outputs(t, x, st.m, st.z)  # the same failure, from lines naming the block
            raise

    def _nonfinite_origin(self, st: RunState, t: float, x: np.ndarray
                          ) -> tuple[str | None, str | None]:
        """(block, port) of the first output that is not finite at the last good state
        (t, x), else (block, None) of the first derivative that is not; (None, None)."""
        model = self.model
        found = nonfinite.origin_port(model, self._outputs, t, x, st.m, st.z)
        if found[0] is not None:
            return found
        try:
            dx = np.array(self._deriv(t, x, st.m, st.z), dtype=float)
            bad = np.flatnonzero(~np.isfinite(dx))
            if len(bad):
                return model.block_ids[model.state_owner[int(bad[0])]], None
        except (ArithmeticError, ValueError):
            return None, None
        return None, None
