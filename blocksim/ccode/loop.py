"""The C backend (`backend="c"`): a dopri5 or radau run with its events in generated C, in
process.

The model's functions are translated to C (`ccode.translate`), compiled once per model and
solver with the system C compiler together with blocksim's DOPRI5 or Radau IIA, event
location and event handling (`runtime/bs_cs.c`, `bs_radau.c`, `bs_core.c`, `bs_segment.c`)
for this machine's CPU (`cc.NATIVE_FLAGS`),
cached on disk (`ccode.cc`) and loaded with ctypes. A plain run is one call into C from
its start to its stop time: the start, located crossings, time events and sample hits are
settled in C with the semantics of `Simulator._event`, their rows and event log entries
written as Python writes them. C returns only for what Python must do: progress, Ctrl-C
and the progress guard (every STEPS steps, or with a full buffer), an event it leaves to
Python (one that fails or does not settle, a Zeno point: Python settles it with its own
messages), a failure. Input histories (transport delays) are kept in C as in Python
(`runtime/bs_history.c`): each accepted step recorded from its dense output, each event
marked, m handed back and forth with the rings in it. Not handled in C (the run says why
and goes on in Python): another solver than dopri5 and radau, no continuous state, code C
cannot take, no C compiler. The stiffness test of the explicit solvers is not run in C.

What does not change between runs is made once: the C instance and its buffers, bound to
it once (`_Instance`, pooled per model structure and solver in `model.shared`; a run holds one only
during its calls into C, so runs in threads or inside a progress callback each take their
own), and the call's constants, parameter slots and atol per model and settings
(`_Prepared`, in the run plan). A run's own Python is then its `Simulator`, copying x, m
and z in and out, and its results; or, for a plain run that one call settles, not even the
`Simulator` (`fast_run`, which hands anything else over to it: `CLoop.handed`).
"""
from __future__ import annotations

import ctypes
import logging
import math
import time
from typing import TYPE_CHECKING

import numpy as np

from blocksim.engine.results import logged_events
from blocksim.engine.segment import Segment
from blocksim.errors import BlocksimError

if TYPE_CHECKING:
    from blocksim.compiler.compiled import CompiledModel
    from blocksim.diagram.model import SimulationSettings
    from blocksim.engine.run_plan import RunPlan
    from blocksim.engine.simulator import RunState, Simulator

log = logging.getLogger(__name__)

BOUND, CROSSING, YIELD, FAILED, SETTLED, STOPPED, START = 0, 1, 2, 3, 4, 5, 6
FP_T, FP_BOUND, FP_BOUND_IS_EVENT, FP_FIRST_STEP, FP_RTOL, FP_MAX_STEP, FP_START, \
    FP_INTERVAL, FP_EVENT_T, FP_LAST_STEP, FP_HORIZON, FP_STOP, FP_ZENO_SPAN, \
    FP_SOURCE_T, FP_ATOL = range(15)
IP_K_GRID, IP_N_GRID, IP_RESUME, IP_ROWS, IP_HIT, IP_NFEV, IP_STEPS, IP_MAX_STEPS, \
    IP_EVENTS_ON, IP_N_LOG, IP_EVENTS, IP_RESTARTS, IP_HITS, IP_GUARD_LEFT, \
    IP_ZENO_EVENTS, IP_START, IP_NONFINITE = range(17)
N_FPAR, N_IPAR = 15, 17
LOG = 4096  # event log entries per call
ROWS = 4096  # output rows per call
STEPS = 20000  # steps per call before Python looks at progress and Ctrl-C
SHARED = "c_library"  # model.shared: the compiled library of the structure (or why not)
POOL = "c_instances"  # model.shared: C instances no run holds now (`_Instance`), per solver
KEPT = 4  # instances kept in a pool

def sources(model: "CompiledModel", solver: str = "dopri5"
            ) -> tuple[dict[str, str], tuple[str, ...]]:
    """The C sources of the backend's library for this model and solver, and its event
    kinds."""
    from blocksim.ccode import solver_c
    from blocksim.ccode.model_source import RUNTIME, model_source
    from blocksim.export.description import Variables
    from blocksim.export.fmu import config_source
    from blocksim.export.params import ParamMap

    c = model_source(model, values=False)
    pm = ParamMap((), (), (), (), ())
    config = config_source(model, c, pm, Variables.of(model, pm, [], ""), "backend", "cs")
    main = ("#define BS_API 1\n#define BS_CS 1\n" + solver_c.defines(solver)
            + "#include <stdio.h>\n#include <stdlib.h>\n"
            '#include "model.c"\n#include "config.c"\n#include "bs_core.c"\n'
            '#include "bs_cs.c"\n' + solver_c.after_stepper(model, solver)
            + '#include "bs_segment.c"\n')
    files = {"model.c": c.text, "config.c": config, "backend.c": main}
    runtime = ("bs_model.h", "bs_core.c", "bs_cs.c", "bs_segment.c") + (
        ("bs_history.c",) if model.history else ())
    for name in runtime:
        files[name] = (RUNTIME / name).read_text(encoding="utf-8")
    files.update(solver_c.runtime_files(solver))
    return files, c.kinds


def library(model: "CompiledModel", solver: str = "dopri5") -> "ctypes.CDLL | str":
    """The model's compiled library for `solver` (once per structure; from the disk cache
    when a process compiled it before), or why there is none."""
    shared = _key(SHARED, solver)
    found = model.shared.get(shared)
    if found is not None:
        return found
    from blocksim.ccode import cc
    from blocksim.engine.notices import notice

    try:
        files, kinds = sources(model, solver)
        model.shared[SHARED + "_kinds"] = kinds
        digest_path = None
        started = time.perf_counter()
        try:
            digest_path = cc.cached_library(files, (), (), main="backend.c", probe=True,
                                              native=True)
        except FileNotFoundError:
            notice(f"backend c: compiling {model.source}")
        path = digest_path or cc.cached_library(files, (), (), main="backend.c", native=True)
        if digest_path is None:
            log.info("%s: C library compiled in %.2f s", model.source,
                     time.perf_counter() - started)
        lib = ctypes.CDLL(str(path))
    except BlocksimError as exc:
        found = f"backend c: {exc}; running in Python"
    else:
        lib.bs_api_new.restype = ctypes.c_void_p
        lib.bs_api_free.argtypes = [ctypes.c_void_p]
        lib.bs_api_message.restype = ctypes.c_char_p
        lib.bs_api_message.argtypes = [ctypes.c_void_p]
        # Arrays pass as their addresses (ints): ctypes' data_as costs 3 µs an array.
        v, n = ctypes.c_void_p, ctypes.c_longlong
        lib.bs_api_bind.argtypes = [v, v, v, v, v, v, v, v, n, v, v, v, v, n, v, v, v]
        lib.bs_api_run.restype = ctypes.c_int
        lib.bs_api_run.argtypes = [v, v, v]
        found = lib
    model.shared[shared] = found
    return found


def _key(name: str, solver: str) -> str:
    """The model.shared key of a per-solver thing (a library, its pool of instances)."""
    return name if solver == "dopri5" else f"{name}_{solver}"


def prepared(model: "CompiledModel", settings: "SimulationSettings", plan: "RunPlan"
             ) -> "_Prepared":
    """The call's constants for runs of `model` with `settings` (made once per run plan)."""
    found = plan.native.get(SHARED)
    if found is None:
        found = plan.native[SHARED] = _Prepared(model, settings, plan)
    return found


def c_loop(model: "CompiledModel", sim: "Simulator") -> "CLoop | None":
    """The C loop for this run, or None (`sim.in_python` says why)."""
    from blocksim.ccode import solver_c

    s = sim.settings
    if not solver_c.carried(s.solver):
        sim.in_python(f"backend c: it runs solvers {' and '.join(solver_c.SOLVERS)}; solver "
                      f"'{s.solver}' runs in Python")
        return None
    if not model.n_states:
        sim.in_python("backend c: a diagram without continuous states runs in Python")
        return None
    lib = library(model, s.solver)
    if isinstance(lib, str):
        sim.in_python(lib)
        return None
    return CLoop(model, sim, lib)


class _Instance:
    """One instance of the model's C state and the arrays it reads and writes, bound to it
    once (`bs_api_bind`): a run holds one during each of its calls into C and hands it
    back to its model's pool (`model.shared`), so a later run makes none of it again."""

    def __init__(self, lib: ctypes.CDLL, model: "CompiledModel", n_log: int):
        handle = lib.bs_api_new()
        if not handle:
            raise MemoryError("backend c: no memory for the run")
        self.lib, self.handle = lib, handle
        self.fpar = np.zeros(N_FPAR)
        self.ipar = np.zeros(N_IPAR, dtype=np.longlong)
        self.x = np.zeros(max(model.n_states, 1))
        self.m = np.zeros(max(len(model.m0), 1))
        self.z = np.zeros(max(model.n_zc, 1))
        self.out_t = np.zeros(ROWS)
        self.out_y = np.zeros((ROWS, max(n_log, 1)))
        self.x_ev = np.zeros(max(model.n_states, 1))
        self.log_t = np.zeros(LOG)
        self.log_b = np.zeros(LOG, dtype=np.longlong)
        self.log_k = np.zeros(LOG, dtype=np.longlong)
        self.zeno = np.zeros(3)
        # the parts of x, m and z the model has: what a run copies in and out
        self.state = tuple((name, getattr(self, name)[:n]) for name, n in (
            ("x", model.n_states), ("m", len(model.m0)), ("z", model.n_zc)) if n)
        n_rates = max(len(model.rates), 1)
        self.hit_k = np.zeros(n_rates, dtype=np.longlong)
        self.hit_t = np.full(n_rates, math.inf)
        lib.bs_api_bind(handle, self.fpar.ctypes.data, self.ipar.ctypes.data,
                        self.x.ctypes.data, self.m.ctypes.data, self.z.ctypes.data,
                        self.out_t.ctypes.data, self.out_y.ctypes.data, ROWS,
                        self.x_ev.ctypes.data, self.log_t.ctypes.data, self.log_b.ctypes.data,
                        self.log_k.ctypes.data, LOG, self.zeno.ctypes.data,
                        self.hit_k.ctypes.data, self.hit_t.ctypes.data)

    def __del__(self):
        handle, self.handle = getattr(self, "handle", None), None
        if handle:
            self.lib.bs_api_free(handle)


class _Prepared:
    """What every run of one model with one set of settings passes to C, made once per
    run plan (`run_plan`): the call's constant parameters, the parameter slots and atol
    (with their addresses), and the sizes the runs read."""

    def __init__(self, model: "CompiledModel", s: "SimulationSettings", plan: "RunPlan"):
        from blocksim.engine import derived

        self.P = np.ascontiguousarray(model.param_vector(), dtype=float)
        if self.P.size == 0:
            self.P = np.zeros(1)
        self.atol = np.ascontiguousarray(np.broadcast_to(
            np.asarray(model.state_atol(s.atol), dtype=float), (max(model.n_states, 1),)))
        self.addresses = (self.P.ctypes.data, self.atol.ctypes.data)
        self.n_log = len(derived.logged_indices(model))
        self.sizes = (model.n_states, len(model.m0), model.n_zc)
        self.fpar = np.zeros(N_FPAR)
        self.ipar = np.zeros(N_IPAR, dtype=np.longlong)
        _, zeno_events, zeno_span = plan.event_limits
        self.fpar[FP_RTOL], self.fpar[FP_MAX_STEP] = s.rtol, s.max_step
        self.fpar[FP_START], self.fpar[FP_INTERVAL] = s.start, plan.interval
        self.fpar[FP_HORIZON], self.fpar[FP_STOP] = plan.horizon, s.stop
        self.fpar[FP_ZENO_SPAN] = zeno_span
        self.fpar[FP_ATOL] = s.atol  # (the input histories' pieces are made to it)
        self.ipar[IP_MAX_STEPS], self.ipar[IP_ZENO_EVENTS] = STEPS, zeno_events
        self.ipar[IP_EVENTS_ON] = 1  # events settled in C (else every one in Python)


class CLoop:
    """The calls of one run into the model's C library (the `NativeLoop` contract): the
    start, events, time events and sample hits are settled in C, and handed to Python where C
    cannot (a failing or unsettled event, a full buffer, a Zeno point)."""

    def __init__(self, model: "CompiledModel", sim: "Simulator", lib: ctypes.CDLL):
        self.lib = lib
        self.model = model
        self.kinds = model.shared[SHARED + "_kinds"]
        self.prepared = prepared(model, sim.settings, sim.plan)
        self.pool = model.shared.setdefault(_key(POOL, sim.settings.solver), [])
        self.handles_start = True  # the first call settles the start
        # (instance, status, when it began) of a first call made before this run
        # (`fast_run`): its outcome is taken up as this loop's own first call's
        self.handed: tuple[_Instance, int, float] | None = None
        self.zc_owner = model.zc_owner
        sim.stats.setdefault("python_events", 0)

    def segment(self, sim: "Simulator", st: "RunState", t_bound: float, t_time: float,
                first_step: float | None, k_grid: int, n_grid: int,
                t_source: float = math.inf) -> Segment:
        pool, handed = self.pool, self.handed
        if handed is not None:
            instance = handed[0]
        else:
            try:
                instance = pool.pop()
            except IndexError:
                instance = _Instance(self.lib, self.model, self.prepared.n_log)
        try:
            return self._segment(instance, sim, st, t_bound, t_time, first_step, k_grid,
                                 n_grid, t_source)
        finally:
            if len(pool) < KEPT:
                pool.append(instance)

    def _segment(self, c: _Instance, sim: "Simulator", st: "RunState", t_bound: float,
                 t_time: float, first_step: float | None, k_grid: int, n_grid: int,
                 t_source: float) -> Segment:
        prepared = self.prepared
        fpar, ipar = c.fpar, c.ipar
        nx, _, nz = prepared.sizes
        zeno, stats = sim.zeno, sim.stats
        nfev = 0
        handed, self.handed = self.handed, None
        if handed is not None:  # the first call is made: its arrays hold what it did
            self.handles_start = False
            status = handed[1]
            sim._started = min(sim._started, handed[2])  # (the run's wall time includes it)
        else:
            status = None
            self._first_call(c, st, t_bound, t_time, first_step, k_grid, n_grid, t_source)
        while True:
            if status is None:
                status = self._call(c, sim)
            for name, part in c.state:  # (float arrays: `_state_in`)
                getattr(st, name)[:] = part
            if nz:
                zeno[:] = c.zeno
            counts = ipar.tolist()
            self._collect(c, sim, counts)
            if sim.history is not None:
                sim.history.check(st)  # a ring that overflowed, named as on Python
            nfev = counts[IP_NFEV]
            k, step = counts[IP_K_GRID], float(fpar[FP_LAST_STEP])
            if status == CROSSING:
                i = counts[IP_HIT]
                hit = (float(fpar[FP_EVENT_T]), c.x_ev[:nx].copy(),
                       [(self.zc_owner[i], "state")])
                return Segment(hit, False, k, step, nfev)
            st.t = float(fpar[FP_T])
            if status == BOUND:  # the stop time, or a time event for Python to settle
                at_event = fpar[FP_BOUND_IS_EVENT] != 0.0 and st.t >= fpar[FP_BOUND]
                return Segment(None, at_event, k, step, nfev,
                               t_source=float(fpar[FP_SOURCE_T]))
            if status in (SETTLED, STOPPED):
                return Segment(None, False, k, step, nfev, stopped=status == STOPPED)
            if status == START:  # a start C leaves to Python (it fails or does not settle)
                if sim._event(st, init=True):
                    stats["restarts"] -= 1  # (no segment began)
                    return Segment(None, False, k, None, nfev, stopped=True)
                t_source, t_time, t_bound = sim._next_bound(st)
                fpar[FP_T], fpar[FP_BOUND], fpar[FP_SOURCE_T] = st.t, t_bound, t_source
                fpar[FP_BOUND_IS_EVENT] = 1.0 if t_bound == t_time else 0.0
                self._state_in(c, st)
                status = None
                continue
            if status == YIELD:
                if sim.progress:
                    sim.progress(st.t)
                if sim._interrupted():
                    return Segment(None, False, k, step, nfev, interrupted=True)
                if stats["restarts"] - stats["hits"] >= sim.guard.due:
                    sim._check_progress(st.t)
                ipar[IP_RESUME] = 1
                status = None
                continue
            message = self.lib.bs_api_message(c.handle).decode("utf-8", "replace")
            block, port = None, None
            if counts[IP_HIT] == -2:  # (radau) where the failed step met a non-finite value
                block, port = sim._nonfinite_origin(st, float(fpar[FP_EVENT_T]),
                                                    c.x_ev[:nx].copy())
            if block is None:
                block, port = sim._nonfinite_origin(st, st.t, st.x)
            raise sim._fail(f"{message or 'failed'} (solver {sim.settings.solver}, c)", st.t,
                            block, None, port)

    def _first_call(self, c: _Instance, st: "RunState", t_bound: float, t_time: float,
                    first_step: float | None, k_grid: int, n_grid: int,
                    t_source: float) -> None:
        """The call's parameters and the run's state into the instance, for a segment's
        first call."""
        prepared = self.prepared
        fpar, ipar = c.fpar, c.ipar
        fpar[:] = prepared.fpar
        ipar[:] = prepared.ipar
        fpar[FP_T], fpar[FP_BOUND], fpar[FP_SOURCE_T] = st.t, t_bound, t_source
        fpar[FP_BOUND_IS_EVENT] = 1.0 if t_bound == t_time else 0.0
        fpar[FP_FIRST_STEP] = first_step or 0.0
        ipar[IP_K_GRID], ipar[IP_N_GRID] = k_grid, n_grid
        if self.handles_start:
            ipar[IP_START], self.handles_start = 1, False
        self._state_in(c, st)

    def _call(self, c: _Instance, sim: "Simulator") -> int:
        """One call into C, with the run's hit schedule, Zeno state and progress guard."""
        hits = sim.hits
        if hits is not None:  # Python may have moved the clock on since the last call
            c.hit_k[:len(hits.k)] = hits.k
            c.hit_t[:len(hits.times)] = hits.times
        if self.prepared.sizes[2]:
            c.zeno[:] = sim.zeno
        stats = sim.stats
        c.ipar[IP_GUARD_LEFT] = sim.guard.due - (stats["restarts"] - stats["hits"])
        return self.lib.bs_api_run(c.handle, *self.prepared.addresses)

    @staticmethod
    def _state_in(c: _Instance, st: "RunState") -> None:
        """The run's x, m and z into the instance's arrays, which C reads and writes; the
        run's own as float arrays C's results are copied back into."""
        for name, part in c.state:
            value = getattr(st, name)
            if value.dtype != float:
                value = value.astype(float)
                setattr(st, name, value)
            part[:] = value

    def _collect(self, c: _Instance, sim: "Simulator", counts: list[int]) -> None:
        """Rows, event log, hit schedule and counts of the last call into the run."""
        rows, entries = counts[IP_ROWS], counts[IP_N_LOG]
        if rows:  # (copied by the recorder; looked at for NaN only where C saw one)
            add = sim._add_rows if counts[IP_NONFINITE] else sim.recorder.add_rows
            add(c.out_t[:rows], c.out_y[:rows, :self.prepared.n_log])
        if entries:
            sim.recorder.events.extend(logged_events(
                c.log_t[:entries], c.log_b[:entries], c.log_k[:entries],
                self.model.block_ids, self.kinds))
        stats = sim.stats
        stats["steps"] += counts[IP_STEPS]
        stats["events"] += counts[IP_EVENTS]
        stats["restarts"] += counts[IP_RESTARTS]
        n_hits = counts[IP_HITS]
        if n_hits:
            stats["hits"] += n_hits
            hits = sim.hits
            hits.k = c.hit_k[:len(hits.k)].tolist()
            hits.times = c.hit_t[:len(hits.times)].tolist()
            hits.next_time = min(hits.times)
            hits.count += n_hits
