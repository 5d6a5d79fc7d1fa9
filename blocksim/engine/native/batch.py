"""Many runs of one model in one compiled call: a sweep's batch on the numba backend.

A worker of a sweep gives `BatchRunner.run` the models of a batch (one parameter vector
each, all of one structure); a compiled loop over the runs (`_runs`) calls the compiled
loop (`native.kernel.segment`) for each run exactly as `NativeLoop.segment` would from
Python, and appends each run's output rows and event log to shared pools. Python then makes
each run's Results from them as `Simulator` would have (the same rows, events, status and
counts). Only a run that ends without needing Python is kept this way: one that hands an
event to Python, becomes non-finite, stiff, Zeno, fails in any way, trips the progress
guard or outgrows the pools comes back as `PER_RUN`, for the caller to run on the per-run
path from its start, so the results never depend on which path ran them.

The compiled call returns to Python after a bounded number of calls of the loop (sized to
about 0.05 s of work), so a stop request (the sweep's Ctrl-C) is seen within a fraction of a
second; a run in progress then goes on in the next call.
"""
from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numba import njit, types
from numba.core.errors import NumbaExperimentalFeatureWarning

from blocksim.compiler.compiled import CompiledModel, check_run
from blocksim.engine import derived, guards
from blocksim.engine.native import build, calls, quickload
with quickload.deferred():  # the compiled loop from numba's cache, as in loop.py
    from blocksim.engine.native import kernel as nk
from blocksim.engine.native import layout as nt
from blocksim.engine.results import Recorder, Results, logged_events
from blocksim.errors import BlocksimError

if TYPE_CHECKING:
    from blocksim.engine.simulator import Simulator

PER_RUN = "per-run"  # a run for the per-run path (see the module docstring)
CALL_SECONDS = 0.05  # the compiled call is sized to return about this often
POOL_RUNS = 64  # runs whose rows one pool holds (about; a run's rows are copied out)

# Per run, INFO[r, ...]: its state, where its rows and log entries are in the pools, its
# counts, and the status of its last call of the loop.
# S_DUE: the restarts at which Python's progress guard next looks at the run.
(S_STATE, S_ROW0, S_ROWS, S_LOG0, S_LOGS, S_STEPS, S_EVENTS, S_RESTARTS, S_NFEV, S_HITS,
 S_STATUS, S_DUE) = range(12)
N_INFO = 12
# S_STATE values; GUARD: the progress guard is due (Python checks it, then the run goes
# on or ends DONE as its status says, or runs on the per-run path to fail there).
NEW, RUNNING, DONE, FALLBACK, FULL, GUARD = range(6)


# The set-up and reading of one call, as the per-run path's (`native.calls`), inlined.
_begin = njit(inline="always")(calls.begin)
_allow_restarts = njit(inline="always")(calls.allow_restarts)
_run_done = njit(inline="always")(calls.run_done)


def _runs(segment_at, addresses, zmove, zc_owner, observed, selection, trig, hch, hfl, hup,
          X0, M0, F0, ZDIR, ipar0, sched0, hit_t0, zeno0, XW, MW, FW, Z, IPAR, SCHED, HITT,
          ZENO, INFO, out_t, out_y, x_ev, x_bad, log_t, log_b, log_k, pool_t, pool_y, plog_t,
          plog_b, plog_k, cursor, first, budget, guard_due, t_stop):
    """Runs from `first` on, at most `budget` calls of the loop; returns the first run not
    finished (the one in progress, the one that found the pools full, or the one whose
    progress guard is due).

    Each call is set up as `NativeLoop.segment` sets it up for the run's only segment (the
    loop settles the start, then goes on to the stop time); the call's rows and log
    entries go to the pools at `cursor` (rows, entries). A run ends DONE at the stop time
    or at a Stop block, FALLBACK where the per-run path would have needed Python.
    """
    calls = 0
    r = first
    while r < X0.shape[0] and calls < budget:
        info = INFO[r]
        fpar, ipar = FW[r], IPAR[r]
        if info[S_STATE] == NEW:  # as Simulator.run and its first segment start
            XW[r, :] = X0[r]
            MW[r, :] = M0[r]
            FW[r, :] = F0[r]
            Z[r, :] = 0.0
            IPAR[r, :] = ipar0
            SCHED[r, :, :] = sched0
            HITT[r, :] = hit_t0
            ZENO[r, :] = zeno0
            # The first segment: to the stop time, the start settled in the loop.
            _begin(fpar, ipar, fpar[nt.F_START], t_stop, np.inf, np.inf, 0.0, 1, True)
            info[:] = 0
            info[S_ROW0], info[S_LOG0], info[S_RESTARTS] = cursor[0], cursor[1], 1
            info[S_DUE], info[S_STATE] = guard_due, RUNNING
        if cursor[0] + out_t.size > pool_t.size or cursor[1] + log_t.size > plog_t.size:
            info[S_STATE] = FULL
            break
        _allow_restarts(ipar, info[S_DUE], info[S_RESTARTS], info[S_HITS])
        segment = as_segment_function(segment_at)
        segment(addresses, XW[r], MW[r], Z[r], ZDIR[r], zmove, zc_owner, observed,
                   selection, fpar, ipar, out_t, out_y, x_ev, x_bad, log_t, log_b, log_k,
                   ZENO[r], SCHED[r], HITT[r], trig, hch, hfl, hup)
        calls += 1
        rows, entries = ipar[nt.I_ROWS], ipar[nt.I_LOG]
        for i in range(rows):
            pool_t[cursor[0] + i] = out_t[i]
            pool_y[cursor[0] + i, :] = out_y[i]
        for i in range(entries):
            plog_t[cursor[1] + i] = log_t[i]
            plog_b[cursor[1] + i] = log_b[i]
            plog_k[cursor[1] + i] = log_k[i]
        cursor[0] += rows
        cursor[1] += entries
        info[S_ROWS] += rows
        info[S_LOGS] += entries
        info[S_STEPS] += ipar[nt.I_STEPS]
        info[S_EVENTS] += ipar[nt.I_EVENTS]
        info[S_RESTARTS] += ipar[nt.I_RESTARTS]
        info[S_HITS] += ipar[nt.I_HITS]
        info[S_NFEV] += ipar[nt.I_NFEV]
        status = ipar[nt.I_STATUS]
        info[S_STATUS] = status
        # A grid value Python must look at, or stiffness Python must report: per run.
        python = fpar[nt.F_BAD_T] == fpar[nt.F_BAD_T] or fpar[nt.F_STIFF_T] == fpar[
            nt.F_STIFF_T]
        done = _run_done(status, fpar, t_stop)
        if (done or status == nt.YIELD) and not python and (
                info[S_RESTARTS] - info[S_HITS] >= info[S_DUE]):
            info[S_STATE] = GUARD  # as after a pause or at the end of the segment
            break
        if status == nt.YIELD and not python:
            ipar[nt.I_RESUME] = 1
            continue
        if done and not python:
            info[S_STATE] = DONE
        else:  # its rows are dropped: the per-run path runs it again from its start
            info[S_STATE] = FALLBACK
            cursor[0], cursor[1] = info[S_ROW0], info[S_LOG0]
        r += 1
    return r


_F1, _F2 = types.float64[::1], types.float64[:, ::1]
_I1, _I2, _I3 = types.int64[::1], types.int64[:, ::1], types.int64[:, :, ::1]
# The compiled loop, called through its address (as the model's functions are): linked in
# as a library, it would be optimised again with this function (half a minute).
SEGMENT_SIGNATURE = types.void(*nk.segment.signatures[0])
as_segment_function = nt._caster(types.FunctionType(SEGMENT_SIGNATURE))
# From numba's cache without its registries (`quickload`): their refresh imports
# scipy.linalg and was about 0.7 s of CPU in every new sweep worker (a Dask worker's
# first task, each forked pool worker).
with warnings.catch_warnings(), quickload.deferred():
    warnings.simplefilter("ignore", NumbaExperimentalFeatureWarning)  # as in kernel.py
    runs = njit(types.int64(
        types.int64, _I1, _F1, _I1, _I1, _I1, _I1, _I2, _F2, _I2,  # the loop; the model
        _F2, _F2, _F2, _F2, _I1, _I2, _F1, _F1,  # per run in: X0 .. ZDIR, templates
        _F2, _F2, _F2, _F2, _I2, _I3, _F2, _F2, _I2,  # per run working state, INFO
        _F1, _F2, _F1, _F1, _F1, _I1, _I1,  # one call's buffers
        _F1, _F2, _F1, _I1, _I1, _I1,  # the pools and their cursor
        types.int64, types.int64, types.int64, types.float64),
        cache=True, nogil=True)(_runs)


def _segment_address() -> int:
    """The machine address of the compiled loop (`kernel.segment`)."""
    global _SEGMENT_AT
    if _SEGMENT_AT is None:
        from numba.experimental.function_type import _get_wrapper_address

        _SEGMENT_AT = _get_wrapper_address(nk.segment, SEGMENT_SIGNATURE)
    return _SEGMENT_AT


_SEGMENT_AT: int | None = None


class BatchRunner:
    """The runs of one model structure with one set of settings, many per compiled call.

    Made from a template `Simulator` of the structure (`for_simulator`): what the loop's
    parameters are (its `NativeLoop`), where the first segment starts and what the
    progress guard allows; each run only brings its parameter slots, tolerances and
    initial values (`accepts` says whether a model can come).
    """

    def __init__(self, sim: "Simulator"):
        loop = sim.native
        self.c = loop.c
        self.settings = sim.settings
        self.names, self.indices = sim.recorder.names, [sig.indices for sig in sim.model.logged]
        self.width = sim.recorder.width
        self.fpar, self.ipar = loop.fpar.copy(), loop.ipar.copy()
        self.sched = np.ascontiguousarray(loop.sched)
        self.hit_t = np.zeros(len(self.sched))
        if sim.hits is not None and loop.timed:  # as `NativeLoop.segment`'s first call
            self.sched[:, 2] = sim.hits.k
            self.hit_t[:] = sim.hits.times
        self.trig, self.zeno = loop.trig, sim.zeno.copy()
        self.rows, self.log_entries = len(loop.out_t), len(loop.log_t)
        self.guard_due, self.horizon = sim.guard.due, sim.horizon
        self.n_states, self.n_discrete = sim.model.n_states, len(sim.model.m0)
        self.n_zc, self.block_ids = sim.model.n_zc, sim.model.block_ids
        self.budget = 4  # calls of the loop per compiled call, adapted to CALL_SECONDS
        self._scratch: tuple[np.ndarray, ...] = ()  # see `_buffers`
        self._room = (0, 0)  # the rows and log entries its pools hold

    @classmethod
    def for_simulator(cls, sim: "Simulator") -> "BatchRunner | None":
        """A runner for the runs of `sim`'s model structure and settings, or None if its
        runs need Python anyway (events, time events, start or delays in Python, a
        block's after-run work)."""
        loop = sim.native
        if (loop is None or not loop.c.events or not loop.handles_start
                or sim.history is not None or sim.model.after_run):
            return None
        return cls(sim)

    def accepts(self, model: CompiledModel) -> bool:
        """Whether this model (the structure's, with other values) can run here."""
        if build.compiled_for(model) is not self.c or model.after_run or model.history:
            return False
        try:
            check_run(model, self.settings)  # as Simulator does for each run
        except BlocksimError:
            return False
        return bool(np.isfinite(model.x0).all())

    def run(self, models: Sequence[CompiledModel],
            should_stop: Callable[[], bool] | None = None,
            finish: Callable[[int, Results], Any] | None = None) -> list[Any]:
        """Per model (each `accepts`ed), its Results (or what `finish(k, results)` makes
        of them as soon as run k ends: many Results alive at once cost the garbage
        collector more than the runs), PER_RUN for the per-run path, or None for the runs
        not reached before `should_stop` said so."""
        count = len(models)
        outcome: list[Any] = [None] * count
        if not count:
            return outcome
        c, n, nm, nz = self.c, self.n_states, self.n_discrete, self.n_zc
        X0 = np.array([m.x0 for m in models], dtype=float).reshape(count, n)
        M0 = np.array([m.m0 for m in models], dtype=float).reshape(count, nm)
        ZDIR = np.array([m.zc_direction for m in models], dtype=float).reshape(count, nz)
        F0 = np.repeat(self.fpar[None, :], count, axis=0)
        atol, start = self.settings.atol, nt.N_FPAR + n
        for r, model in enumerate(models):
            F0[r, nt.N_FPAR:start] = model.state_atol(atol)
            F0[r, start:] = model.param_vector()
        XW, MW, FW, Z = np.empty_like(X0), np.empty_like(M0), np.empty_like(F0), np.empty(
            (count, nz))
        IPAR = np.empty((count, nt.N_IPAR), dtype=np.int64)
        SCHED = np.empty((count,) + self.sched.shape, dtype=np.int64)
        HITT, ZENO = np.empty((count, self.hit_t.size)), np.empty((count, 3))
        INFO = np.zeros((count, N_INFO), dtype=np.int64)
        (out_t, out_y, x_ev, x_bad, log_t, log_b, log_k, pool_t, pool_y, plog_t, plog_b,
         plog_k) = self._buffers(count)
        cursor = np.zeros(2, dtype=np.int64)
        first = harvested = 0
        checks: dict[int, guards.ProgressGuard] = {}  # runs whose guard was due
        while first < count:
            if should_stop is not None and should_stop():
                break
            started = time.perf_counter()
            nxt = int(runs(_segment_address(), c.addresses, c.zmove, c.zc_owner, c.observed,
                           c.selection, self.trig, c.hch, c.hfl, c.hup, X0, M0, F0, ZDIR,
                           self.ipar, self.sched, self.hit_t, self.zeno, XW, MW, FW, Z, IPAR,
                           SCHED, HITT, ZENO, INFO, out_t, out_y, x_ev, x_bad, log_t, log_b,
                           log_k, pool_t, pool_y, plog_t, plog_b, plog_k, cursor, first,
                           self.budget, self.guard_due, self.settings.stop))
            elapsed = time.perf_counter() - started
            self._adapt(elapsed)
            state = INFO[nxt, S_STATE] if nxt < count else DONE
            if state == GUARD:
                check = checks.setdefault(nxt, guards.ProgressGuard(
                    self.settings.start, self.settings.stop, self.horizon))
                self._check_progress(check, INFO[nxt], IPAR[nxt], FW[nxt], cursor)
                if INFO[nxt, S_STATE] != RUNNING:
                    nxt += 1
            for r in range(harvested, nxt):
                outcome[r] = self._results(models[r], INFO[r], XW[r], MW[r], Z[r], FW[r],
                                           pool_t, pool_y, plog_t, plog_b, plog_k, elapsed)
                if finish is not None and outcome[r] is not PER_RUN:
                    outcome[r] = finish(r, outcome[r])
            harvested = first = nxt
            if state == FULL:
                # Every finished run's rows are copied out: the pools start again; a run
                # that alone fills them runs on the per-run path.
                alone = INFO[nxt, S_ROW0] == 0 and INFO[nxt, S_LOG0] == 0
                cursor[:] = 0
                INFO[nxt, S_STATE] = NEW
                checks.pop(nxt, None)
                if alone:
                    outcome[nxt] = PER_RUN
                    harvested = first = nxt + 1
        return outcome

    def _buffers(self, count: int) -> tuple[np.ndarray, ...]:
        """The loop's output buffers and the pools for a call of `count` runs: room for a
        call of the loop and the rows of about POOL_RUNS runs. Made once per runner and
        reused by its later calls (slices of the size asked, so the loop behaves the same):
        a Dask worker's allocator (MALLOC_TRIM_THRESHOLD_ set by its nanny) hands freed
        memory back to the system at once, and these megabytes page-faulted in again for
        every chunk of runs cost such a sweep 10 to 15 % more CPU (docs/profile.md)."""
        per_run = int(self.ipar[nt.I_N_GRID]) + 2 + 64
        pool_rows = 2 * self.rows + min(count, POOL_RUNS) * per_run
        pool_log = 2 * self.log_entries + min(count, POOL_RUNS) * 256
        if pool_rows > self._room[0] or pool_log > self._room[1]:
            self._room = (pool_rows, pool_log)
            self._scratch = (
                np.empty(self.rows), np.empty((self.rows, self.width)),
                np.empty(self.n_states), np.empty(self.n_states),
                np.empty(self.log_entries), np.empty(self.log_entries, dtype=np.int64),
                np.empty(self.log_entries, dtype=np.int64),
                np.empty(pool_rows), np.empty((pool_rows, self.width)),
                np.empty(pool_log), np.empty(pool_log, dtype=np.int64),
                np.empty(pool_log, dtype=np.int64))
        out = self._scratch
        return out[:7] + (out[7][:pool_rows], out[8][:pool_rows], out[9][:pool_log],
                          out[10][:pool_log], out[11][:pool_log])

    @staticmethod
    def _check_progress(check: guards.ProgressGuard, info: np.ndarray, ipar: np.ndarray,
                        fpar: np.ndarray, cursor: np.ndarray) -> None:
        """Python's progress guard for a run whose check is due (`Simulator`'s
        `_check_progress`): the run goes on, ends DONE, or (a failure) runs per run."""
        reason = check.check(float(fpar[nt.F_T]), int(info[S_RESTARTS] - info[S_HITS]),
                             int(info[S_EVENTS]))
        if reason is not None:  # the per-run path fails it, with its message
            info[S_STATE] = FALLBACK
            cursor[0], cursor[1] = info[S_ROW0], info[S_LOG0]
            return
        info[S_DUE] = check.due
        if info[S_STATUS] == nt.YIELD:
            ipar[nt.I_RESUME] = 1
            info[S_STATE] = RUNNING
        else:
            info[S_STATE] = DONE

    def _adapt(self, elapsed: float) -> None:
        """More or fewer calls of the loop per compiled call, for about CALL_SECONDS."""
        if elapsed < CALL_SECONDS / 3 and self.budget < 1 << 20:
            self.budget *= 2
        elif elapsed > CALL_SECONDS * 1.5 and self.budget > 1:
            self.budget //= 2

    def _results(self, model: CompiledModel, info: np.ndarray, x: np.ndarray, m: np.ndarray,
                 z: np.ndarray, fpar: np.ndarray, pool_t: np.ndarray, pool_y: np.ndarray,
                 plog_t: np.ndarray, plog_b: np.ndarray, plog_k: np.ndarray,
                 elapsed: float) -> Results | str:
        """A finished run's Results, made as `Simulator.run` makes them (PER_RUN if the
        run needs the per-run path after all)."""
        if info[S_STATE] != DONE or info[S_ROWS] == 0:
            return PER_RUN
        r0, rows, e0, entries = (int(v) for v in info[[S_ROW0, S_ROWS, S_LOG0, S_LOGS]])
        recorder = Recorder(self.names, self.indices)
        recorder.add_rows(pool_t[r0:r0 + rows], pool_y[r0:r0 + rows])
        recorder.events = list(logged_events(plog_t[e0:e0 + entries], plog_b[e0:e0 + entries],
                                             plog_k[e0:e0 + entries], self.block_ids,
                                             self.c.kinds))
        stopped = info[S_STATUS] == nt.STOPPED
        t = float(fpar[nt.F_T])
        if not stopped and recorder.last_time < self.settings.stop:
            values = derived.observe(model)(t, x, m, z)  # the stop time, off the grid
            total = sum(values)
            if total - total != 0.0:
                return PER_RUN  # a NaN or an infinity: the per-run path reports it
            recorder.add_logged(t, values)
        stats = {"steps": int(info[S_STEPS]), "events": int(info[S_EVENTS]),
                 "restarts": int(info[S_RESTARTS]), "nfev": int(info[S_NFEV]),
                 "hits": int(info[S_HITS]), "python_events": 0,
                 "wall_time": elapsed}  # the compiled call's, which ran this run and others
        return recorder.results("stopped" if stopped else "finished", "", stats, ())

