"""The numba backend: the hybrid run in a compiled loop, Python only where it must.

`Simulator` hands each segment (restart to the next time event or the stop time) to
`NativeLoop.segment`, which calls `native.kernel.segment` until the segment ends: there is
no Python call per step or per stage, and the output grid is copied to the recorder once
per call. The model's numba functions come from `native.build` (made once per
structure); this module only drives runs with them. Where numba compiles the model's event functions, events are settled in the
loop too, with the semantics of `Simulator._event` (`native.settle`): located crossings,
the start and, where `sample` and `next_time` compile as well, time events and sample hits
(the rates' schedule on the exact clock travels with each call, `sim.hits`), each next
bound found in the loop. The loop then returns only at the stop time, for progress,
should_stop and the progress guard, to make room in its buffers, or with an event it hands
to Python (an iteration that does not settle, a non-finite value, a Zeno point), which
Python then handles with its usual messages; stats["python_events"] counts those. Every
event of a model whose event code uses Python helpers keeps the Python path, as do the
time events of a model whose `next_time` or `sample` does not compile.

A model whose code the backend cannot translate at all (a Python helper in a block's
continuous code, a formula function it lacks) runs on the Python path with a notice naming
the block (`notices`): the choice of backend never changes what a diagram means.

The loop returns to Python at least every YIELD_UNWATCHED steps and events even when no
one watches the run, so Ctrl-C (seen by Python once the compiled code returns) and the
engine's guards act within a fraction of a second.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from blocksim.compiler.compiled import CompiledModel
from blocksim.compiler.rates import EXACT_INT
from blocksim.engine import failports
from blocksim.engine.native import build, calls, quickload
from blocksim.engine.native import layout as nt
from blocksim.engine.arithmetic import describe_arithmetic
from blocksim.engine.dopri5 import Dopri5Stepper, Stiff
from blocksim.engine.warnings_held import NONFINITE, STIFF
from blocksim.engine.results import logged_events
from blocksim.engine.segment import Segment
from blocksim.engine.steppers import StepFailure

with quickload.deferred():  # the loop from numba's cache, without numba's registries
    from blocksim.engine.native import kernel as nk

if TYPE_CHECKING:
    from blocksim.engine.simulator import RunState, Simulator

log = logging.getLogger(__name__)

YIELD_EVERY = 2000  # steps and events between returns to Python for progress and should_stop
YIELD_WORK = 2_000_000  # ... fewer for large models: about this many values computed between
YIELD_UNWATCHED = 25  # with no progress or should_stop: this many times further apart
EVENT_ROWS = 4096  # output rows for the limits of events settled in one call of the loop
LOG_ENTRIES = 4096  # event log entries one call of the loop can hold
BUFFER_VALUES = 125_000_000  # the output grid of a run is buffered whole: at most 1 GB
RUNS_KEPT = 8  # loop parameters kept per model and settings (`_prepare`)


class NativeLoop:
    """The compiled functions of one model and the buffers of one run."""

    def __init__(self, compiled: build.Compiled, sim: "Simulator"):
        self.c = compiled
        model = sim.model
        watched = sim.progress is not None or sim.should_stop is not None
        stiffness = sim.stiffness
        # What follows from the model and the settings alone is made once per model and
        # settings (`run_plan`; repeated runs of one model pay only copies of it). The
        # key holds what may change between runs of one plan (tests change the budget
        # and the module's constants).
        key = (watched, stiffness and stiffness.budget, YIELD_EVERY, YIELD_WORK,
               YIELD_UNWATCHED, EVENT_ROWS, LOG_ENTRIES)
        runs = sim.plan.native
        prepared = runs.get(key)
        if prepared is None:
            if len(runs) >= RUNS_KEPT:
                runs.clear()
            prepared = runs[key] = _prepare(compiled, sim, watched)
        self.fpar = prepared.fpar.copy()
        self.ipar = prepared.ipar.copy()
        self.sched = prepared.sched.copy()
        self.zdir, self.trig, self.timed = prepared.zdir, prepared.trig, prepared.timed
        self.hit_t = np.empty(len(self.sched))
        self.out_t = np.empty(prepared.rows)
        self.out_y = np.empty((prepared.rows, sim.recorder.width))
        self.x_ev = np.empty(model.n_states)
        self.x_bad = np.empty(model.n_states)
        n_log = LOG_ENTRIES if compiled.events else 1
        self.log_t = np.empty(n_log)
        self.log_b = np.empty(n_log, dtype=np.int64)
        self.log_k = np.empty(n_log, dtype=np.int64)
        sim.stats.setdefault("python_events", 0)
        self.handles_start = prepared.handles_start

    @classmethod
    def for_model(cls, model: CompiledModel, sim: "Simulator") -> "NativeLoop | None":
        """The loop for this model, or None (`Simulator.in_python` says why) if it must
        run in Python."""
        s = sim.settings
        rows = (s.stop - s.start) / sim.interval
        if rows * (sim.recorder.width + 1) > BUFFER_VALUES:
            sim.in_python(f"backend numba: an output grid of {rows:.3g} rows is more than "
                          f"its buffers hold; {model.source} runs in Python")
            return None
        compiled = build.compiled_for(model)
        if compiled is None:
            sim.in_python(model.shared[build.REFUSED])
            return None
        return cls(compiled, sim)

    def segment(self, sim: "Simulator", st: "RunState", t_bound: float, t_time: float,
                first_step: float | None, k_grid: int, n_grid: int,
                t_source: float = math.inf) -> Segment:
        """Integrate from st to t_bound (the first time event t_time, the blocks' own at
        t_source, or the stop time), settling in the loop what it can; when the loop
        settles time events it goes on past them, each next bound found in the loop."""
        c, fpar, ipar = self.c, self.fpar, self.ipar
        calls.begin(fpar, ipar, st.t, t_bound, t_time, t_source, first_step or 0.0, k_grid,
                    self.handles_start)
        self.handles_start = False
        hits = sim.hits
        nfev = 0
        while True:
            # Python may have handled hits since the last call (the loop reads the
            # schedule only when it settles hits itself).
            if hits is not None and self.timed:
                self.sched[:, 2] = hits.k
                self.hit_t[:] = hits.times
            calls.allow_restarts(ipar, sim.guard.due, sim.stats["restarts"], sim.stats["hits"])
            nk.segment(c.addresses, st.x, st.m, st.z, self.zdir, c.zmove, c.zc_owner,
                       c.observed, c.selection, fpar, ipar, self.out_t, self.out_y, self.x_ev,
                       self.x_bad, self.log_t, self.log_b, self.log_k, sim.zeno, self.sched,
                       self.hit_t, self.trig, c.hch, c.hfl, c.hup)
            counts = ipar.tolist()
            if sim.history is not None:
                sim.history.check(st)  # a ring that overflowed in the loop
            if hits is not None and counts[nt.I_HITS]:
                hits.k = self.sched[:, 2].tolist()
                hits.times = self.hit_t.tolist()
                hits.next_time = min(hits.times)
                hits.count += counts[nt.I_HITS]
            self._collect(sim, st, counts)
            nfev += counts[nt.I_NFEV]
            status, k, step = counts[nt.I_STATUS], counts[nt.I_GRID], float(fpar[nt.F_STEP])
            if sim.stiffness is not None and sim.stiffness.detected is None:
                if not math.isnan(fpar[nt.F_STIFF_T]):
                    sim.stiffness.found(float(fpar[nt.F_STIFF_T]), counts[nt.I_STIFF_STATE])
            if status == nt.CROSSING:
                i = counts[nt.I_EVENT]
                hit = (float(fpar[nt.F_EVENT_T]), self.x_ev.copy(),
                       [(sim.model.zc_owner[i], "state")])
                return Segment(hit, False, k, step, nfev)
            st.t = float(fpar[nt.F_T])
            if status == nt.BOUND:  # the bound may be one the loop found
                return Segment(None, bool(calls.at_time_event(fpar)), k, step, nfev,
                               t_source=float(fpar[nt.F_SOURCE_T]))
            if status in (nt.STOPPED, nt.SETTLED_AT_BOUND):
                return Segment(None, False, k, step, nfev, stopped=status == nt.STOPPED)
            if status == nt.START_FOR_PYTHON:
                if sim._event(st, init=True):
                    return Segment(None, False, k, first_step, nfev, stopped=True)
                t_source, t_time, t_bound = sim._next_bound(st)
                fpar[nt.F_BOUND], fpar[nt.F_SOURCE_T] = t_bound, t_source
                fpar[nt.F_TIME_EVENT] = t_bound == t_time
                continue  # the loop cleared I_START
            if status == nt.STUCK:
                raise sim._stuck_time_event(st.t)
            if status == nt.YIELD:
                if sim.progress:
                    sim.progress(st.t)
                if sim._interrupted():
                    return Segment(None, False, k, step, nfev, interrupted=True)
                if sim.stats["restarts"] - sim.stats["hits"] >= sim.guard.due:
                    sim._check_progress(st.t)
                ipar[nt.I_RESUME] = 1
                continue
            if status == nt.STIFF:
                block = sim.model.block_ids[sim.model.state_owner[counts[nt.I_STIFF_STATE]]]
                try:
                    sim.stiffness.check_budget(st.t, step)
                    message = "the system is stiff; use solver radau or bdf"
                except Stiff as exc:
                    message = str(exc)
                raise sim._fail(f"{message} (solver dopri5, numba)", st.t, block, STIFF)
            if status == nt.BAD_CROSSING:
                # The Python function raises where compiled code gave NaN (a domain error):
                # let it, so the run fails with the same message as on the Python backend.
                sim._zc(st.t, st.x, st.m, st.z)
                block, port = _failing_origin(sim, st)
                raise sim._fail("a zero-crossing function became NaN", st.t, block,
                                NONFINITE, port)
            if status == nt.NONFINITE:
                failed = _python_step(sim, st, float(fpar[nt.F_NEXT_STEP]))
                if failed is not None:
                    # Python's functions raise where the compiled ones gave NaN (a math
                    # function outside its domain, a network's equations without a
                    # solution): the failure as the Python backend reports it
                    block, port = failports.exception_origin(sim.model, failed)
                    raise sim._fail(describe_arithmetic(failed), st.t, block, NONFINITE,
                                    port) from None
            message = ("the state became infinite or NaN" if status == nt.NONFINITE
                       else "step size too small (underflow)")
            block, port = _failing_origin(sim, st)
            raise sim._fail(f"{message} (solver {sim.settings.solver}, numba)", st.t, block,
                            NONFINITE if status == nt.NONFINITE else None, port)

    def _collect(self, sim: "Simulator", st: "RunState", counts: list[int]) -> None:
        """Rows, event log and counts of the last call of the loop into the run's records."""
        fpar = self.fpar
        rows, entries = counts[nt.I_ROWS], counts[nt.I_LOG]
        bad_t = float(fpar[nt.F_BAD_T])
        if not math.isnan(bad_t):
            fpar[nt.F_BAD_T] = math.nan
            # Python raises where compiled code gave NaN: a formula failing on the grid
            # (as on the Python path, only one that the logged signals need). The loop
            # went on past that row; a run that fails there keeps only what came before.
            st.t = bad_t
            try:
                sim._observed(bad_t, self.x_bad, st)
            except (ArithmeticError, ValueError):
                self._record(sim, int(np.searchsorted(self.out_t[:rows], bad_t)),
                             int(np.searchsorted(self.log_t[:entries], bad_t)))
                raise
        self._record(sim, rows, entries)
        if not math.isnan(bad_t):
            # Not a domain error: a NaN or an infinity (an overflow) to report. The loop
            # flags the first such grid row of a call; the check reads all of them.
            sim._check_rows(self.out_t[:rows], self.out_y[:rows], (st.t, self.x_bad.copy()))
        stats = sim.stats
        stats["steps"] += counts[nt.I_STEPS]
        stats["events"] += counts[nt.I_EVENTS]
        stats["restarts"] += counts[nt.I_RESTARTS]
        stats["hits"] += counts[nt.I_HITS]

    def _record(self, sim: "Simulator", rows: int, entries: int) -> None:
        """The loop's first `rows` grid rows and `entries` logged events into the results."""
        if rows:
            sim.recorder.add_rows(self.out_t[:rows], self.out_y[:rows])
        if entries:  # in bulk: no Python call per event
            sim.recorder.events.extend(logged_events(
                self.log_t[:entries], self.log_b[:entries], self.log_k[:entries],
                sim.model.block_ids, self.c.kinds))


@dataclass(frozen=True)
class _Prepared:
    """What one model's runs with one set of settings share: the loop's parameter arrays
    (copied per run: the loop writes them) and what never changes during a run."""

    fpar: np.ndarray
    ipar: np.ndarray
    sched: np.ndarray
    zdir: np.ndarray  # read only by the loop: shared by the runs
    trig: np.ndarray  # likewise
    timed: bool
    handles_start: bool
    rows: int


def _prepare(compiled: build.Compiled, sim: "Simulator", watched: bool) -> _Prepared:
    """The loop's parameters for runs of `sim.model` with `sim`'s settings."""
    model, s = sim.model, sim.settings
    n_grid = sim.plan.n_grid
    rows = n_grid + 2 + (EVENT_ROWS if compiled.events else 0)
    # The parameters that stay the same for every call of the loop in this run.
    max_passes, zeno_events, zeno_span = sim.event_limits
    # then atol per state, then the parameter slots (the loop copies them after the
    # signals in its scratch array, where the model's functions read them)
    slots = model.param_vector()
    fpar = np.zeros(nt.N_FPAR + model.n_states + slots.size)
    fpar[nt.F_RTOL], fpar[nt.F_ATOL], fpar[nt.F_MAX_STEP] = s.rtol, s.atol, s.max_step
    fpar[nt.N_FPAR:nt.N_FPAR + model.n_states] = model.state_atol(s.atol)
    fpar[nt.N_FPAR + model.n_states:] = slots
    zdir = np.array(model.zc_direction, dtype=float)  # writable, as typed
    fpar[nt.F_START], fpar[nt.F_INTERVAL] = s.start, sim.interval
    fpar[nt.F_BAD_T], fpar[nt.F_HORIZON], fpar[nt.F_ZENO_SPAN] = (
        math.nan, sim.horizon, zeno_span)
    size = model.n_states + len(model.signal_names)
    pause = min(YIELD_EVERY, max(16, YIELD_WORK // (7 * size + 1)))
    pause *= 1 if watched else YIELD_UNWATCHED
    ipar = np.zeros(nt.N_IPAR, dtype=np.int64)
    ipar[nt.I_N_GRID], ipar[nt.I_EVENT], ipar[nt.I_MAX_STEPS] = n_grid, -1, pause
    ipar[nt.I_EVENTS_ON], ipar[nt.I_STOP_KIND] = compiled.events, compiled.stop_kind
    ipar[nt.I_MAX_PASSES], ipar[nt.I_ZENO_EVENTS] = max_passes, zeno_events
    ipar[nt.I_SIGNALS] = len(model.signal_names)
    kinds = compiled.kinds
    ipar[nt.I_BREAK_KIND] = kinds.index("breakpoint") if "breakpoint" in kinds else -1
    stiffness = sim.stiffness  # dopri5 always: its counts live in ipar/fpar from here
    ipar[nt.I_STIFF_ON] = stiffness is not None
    if stiffness is not None:
        fpar[nt.F_STOP], fpar[nt.F_STIFF_BUDGET] = stiffness.stop, stiffness.budget
    fpar[nt.F_STIFF_T], fpar[nt.F_STOP] = math.nan, s.stop
    # Time events and sample hits are settled in the loop when their functions compile
    # and every hit of the run has an exact time in int64 arithmetic; the loop then
    # finds each next bound itself. The rates' schedule (period and offset in ticks,
    # index of the next hit; its time) is `sim.hits`, copied in and out at each call.
    rates, clock = model.rates, model.clock
    timed = compiled.timed and (not rates or _exact_hits(rates, clock, s))
    # Ticks beyond int64 (a period of 1e300 s) are only ever read by Python (`hits`).
    sched = np.array([[r.period_ticks, r.offset_ticks, 0] if timed else [0] * 3
                      for r in rates], dtype=np.int64).reshape(len(rates), 3)
    trig = np.array(model.trigger_slots, dtype=np.int64)  # triggered rates' flags
    ipar[nt.I_TIMED], ipar[nt.I_HAS_NEXT] = timed, bool(model.time_events)
    if clock is not None and timed:
        ipar[nt.I_CLOCK_P], ipar[nt.I_CLOCK_Q] = clock.p, clock.q
    # With compiled event functions the loop also settles the start of the run (in
    # the first call), unless that needs Python; with time events or sample hits, only
    # if it settles those too (the first bound follows from the start's settled state).
    handles_start = compiled.events and (
        timed or not (rates or model.time_events or model.trigger_slots))
    return _Prepared(fpar, ipar, sched, zdir, trig, timed, handles_start, rows)


def _exact_hits(rates, clock, s) -> bool:
    """Whether every hit up to the stop time has tick * p below 2**53 (`rates.Clock.time`
    divides two exact doubles then; the loop computes hit times only so)."""
    horizon = max(abs(s.start), abs(s.stop))
    last = int(Fraction(horizon) * clock.q / clock.p) + 1
    last += max(r.period_ticks for r in rates) + max(r.offset_ticks for r in rates)
    return last * clock.p < EXACT_INT and clock.q < EXACT_INT


def _python_step(sim: "Simulator", st: "RunState", first_step: float
                 ) -> ArithmeticError | ValueError | None:
    """The failure of the step the compiled loop could not take, retried in Python from
    the last state: the exception its functions raise (None if they do not)."""
    s = sim.settings
    try:  # (the stepper evaluates the derivatives at the last state first)
        Dopri5Stepper(sim._rhs(st), st.t, st.x.copy(), s.stop, s.rtol,
                      sim.model.state_atol(s.atol), s.max_step,
                      first_step if first_step > 0.0 else None, None).step()
    except (ArithmeticError, ValueError) as exc:
        return exc
    except StepFailure:  # NaN without an exception: the compiled loop's report stands
        return None
    return None


def _failing_origin(sim: "Simulator", st: "RunState") -> tuple[str | None, str | None]:
    """Name the block (and port, `failports`) at fault by re-evaluating the Python
    functions at the last state (a domain error there raises where the compiled code
    returned NaN)."""
    try:
        sim._outputs(st.t, st.x, st.m, st.z)
        sim._deriv(st.t, st.x, st.m, st.z)
    except (ArithmeticError, ValueError) as exc:
        return failports.exception_origin(sim.model, exc)
    return sim._nonfinite_origin(st, st.t, st.x)
