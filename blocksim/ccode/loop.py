"""The C backend (`backend="c"`): continuous segments of dopri5 in generated C, in process.

The model's functions are translated to C (`ccode.translate`), compiled once per model with
the system C compiler together with blocksim's DOPRI5 and event location
(`runtime/bs_cs.c`, `runtime/bs_segment.c`), cached on disk (`ccode.cc`) and loaded with
ctypes. A segment runs in C from a restart to its bound or to the first located crossing,
writing the output grid; the engine settles every event in Python (`Simulator._event`),
as on the Python backend, so events, the event log and failures are the Python backend's.
Not handled in C (the run says why and goes on in Python): another solver than dopri5,
no continuous state, input histories (transport delays), code C cannot take, no C
compiler. The stiffness test of the explicit solvers is not run in C.
"""
from __future__ import annotations

import ctypes
import logging
import math
import time
from typing import TYPE_CHECKING

import numpy as np

from blocksim.engine.segment import Segment
from blocksim.errors import BlocksimError

if TYPE_CHECKING:
    from blocksim.compiler.compiled import CompiledModel
    from blocksim.engine.simulator import RunState, Simulator

log = logging.getLogger(__name__)

BOUND, CROSSING, YIELD, FAILED, SETTLED, STOPPED = 0, 1, 2, 3, 4, 5
FP_T, FP_BOUND, FP_BOUND_IS_EVENT, FP_FIRST_STEP, FP_RTOL, FP_MAX_STEP, FP_START, \
    FP_INTERVAL, FP_EVENT_T, FP_LAST_STEP, FP_HORIZON, FP_STOP, FP_ZENO_SPAN, \
    FP_SOURCE_T = range(14)
IP_K_GRID, IP_N_GRID, IP_RESUME, IP_ROWS, IP_HIT, IP_NFEV, IP_STEPS, IP_MAX_STEPS, \
    IP_EVENTS_ON, IP_N_LOG, IP_EVENTS, IP_RESTARTS, IP_HITS, IP_GUARD_LEFT, \
    IP_ZENO_EVENTS = range(15)
LOG = 4096  # event log entries per call
ROWS = 4096  # output rows per call
STEPS = 20000  # steps per call before Python looks at progress and Ctrl-C
SHARED = "c_library"  # model.shared: the compiled library of the structure (or why not)

def sources(model: "CompiledModel") -> tuple[dict[str, str], tuple[str, ...]]:
    """The C sources of the backend's library for this model, and its event kinds."""
    from blocksim.ccode.model_source import RUNTIME, model_source
    from blocksim.export.description import Variables
    from blocksim.export.fmu import config_source
    from blocksim.export.params import ParamMap

    c = model_source(model, values=False)
    pm = ParamMap((), (), (), (), ())
    config = config_source(model, c, pm, Variables.of(model, pm, [], ""), "backend", "cs")
    main = ("#define BS_API 1\n#define BS_CS 1\n#include <stdio.h>\n#include <stdlib.h>\n"
            '#include "model.c"\n#include "config.c"\n#include "bs_core.c"\n'
            '#include "bs_cs.c"\n#include "bs_segment.c"\n')
    files = {"model.c": c.text, "config.c": config, "backend.c": main}
    for name in ("bs_model.h", "bs_core.c", "bs_cs.c", "bs_segment.c"):
        files[name] = (RUNTIME / name).read_text(encoding="utf-8")
    return files, c.kinds


def library(model: "CompiledModel") -> "ctypes.CDLL | str":
    """The model's compiled library (once per structure; from the disk cache when a
    process compiled it before), or why there is none."""
    found = model.shared.get(SHARED)
    if found is not None:
        return found
    from blocksim.ccode import cc
    from blocksim.engine.notices import notice

    try:
        files, kinds = sources(model)
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
        lib.bs_api_segment.restype = ctypes.c_int
        # Arrays pass as their addresses (ints): ctypes' data_as costs 3 µs an array.
        v = ctypes.c_void_p
        lib.bs_api_segment.argtypes = [v, v, v, v, v, v, v, v, v, v, ctypes.c_longlong, v,
                                       v, v, v, ctypes.c_longlong, v, v, v]
        found = lib
    model.shared[SHARED] = found
    return found


def c_loop(model: "CompiledModel", sim: "Simulator") -> "CLoop | None":
    """The C loop for this run, or None (`sim.in_python` says why)."""
    s = sim.settings
    if s.solver != "dopri5":
        sim.in_python(f"backend c: it runs solver dopri5 only; solver '{s.solver}' runs in "
                      f"Python")
        return None
    if not model.n_states:
        sim.in_python("backend c: a diagram without continuous states runs in Python")
        return None
    if model.history:
        sim.in_python("backend c: input histories (transport delays) run in Python")
        return None
    lib = library(model)
    if isinstance(lib, str):
        sim.in_python(lib)
        return None
    return CLoop(model, sim, lib)


class CLoop:
    """Segments of one run in the model's C library (the `NativeLoop` contract): events,
    time events and sample hits are settled in C, and handed to Python where C cannot
    (a failing or unsettled event, a full buffer, a Zeno point)."""

    handles_start = False  # the start is settled in Python

    def __init__(self, model: "CompiledModel", sim: "Simulator", lib: ctypes.CDLL):
        from blocksim.engine import derived

        self.lib = lib
        self.handle = ctypes.c_void_p(lib.bs_api_new())
        if not self.handle:
            raise MemoryError("backend c: no memory for the run")
        s = sim.settings
        self.model = model
        self.kinds = model.shared[SHARED + "_kinds"]
        self.P = np.ascontiguousarray(model.param_vector(), dtype=float)
        if self.P.size == 0:
            self.P = np.zeros(1)
        self.atol = np.ascontiguousarray(np.broadcast_to(
            np.asarray(model.state_atol(s.atol), dtype=float), (model.n_states,)))
        self.n_log = len(derived.logged_indices(model))
        self.out_t = np.zeros(ROWS)
        self.out_y = np.zeros((ROWS, max(self.n_log, 1)))
        self.x_ev = np.zeros(max(model.n_states, 1))
        self.log_t = np.zeros(LOG)
        self.log_b = np.zeros(LOG, dtype=np.longlong)
        self.log_k = np.zeros(LOG, dtype=np.longlong)
        n_rates = max(len(model.rates), 1)
        self.hit_k = np.zeros(n_rates, dtype=np.longlong)
        self.hit_t = np.full(n_rates, math.inf)
        self.fpar = np.zeros(14)
        self.ipar = np.zeros(15, dtype=np.longlong)
        passes, zeno_events, zeno_span = sim.event_limits
        self.fpar[FP_RTOL], self.fpar[FP_MAX_STEP] = s.rtol, s.max_step
        self.fpar[FP_START], self.fpar[FP_INTERVAL] = s.start, sim.interval
        self.fpar[FP_HORIZON], self.fpar[FP_STOP] = sim.horizon, s.stop
        self.fpar[FP_ZENO_SPAN] = zeno_span
        self.ipar[IP_MAX_STEPS], self.ipar[IP_ZENO_EVENTS] = STEPS, zeno_events
        self.ipar[IP_EVENTS_ON] = 1  # events settled in C (else every one in Python)
        self._zeno = sim.zeno
        self._fixed = (self.P.ctypes.data, self.fpar.ctypes.data, self.ipar.ctypes.data)
        self._buffers = (self.atol.ctypes.data if self.atol.size else self.x_ev.ctypes.data,
                         self.out_t.ctypes.data, self.out_y.ctypes.data, ROWS,
                         self.x_ev.ctypes.data, self.log_t.ctypes.data,
                         self.log_b.ctypes.data, self.log_k.ctypes.data, LOG,
                         sim.zeno.ctypes.data, self.hit_k.ctypes.data, self.hit_t.ctypes.data)
        self.zc_owner = model.zc_owner
        sim.stats.setdefault("python_events", 0)

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            self.lib.bs_api_free(handle)
            self.handle = None

    def segment(self, sim: "Simulator", st: "RunState", t_bound: float, t_time: float,
                first_step: float | None, k_grid: int, n_grid: int,
                t_source: float = math.inf) -> Segment:
        fpar, ipar = self.fpar, self.ipar
        fpar[FP_T], fpar[FP_BOUND], fpar[FP_SOURCE_T] = st.t, t_bound, t_source
        fpar[FP_BOUND_IS_EVENT] = 1.0 if t_bound == t_time else 0.0
        fpar[FP_FIRST_STEP] = first_step or 0.0
        ipar[IP_K_GRID], ipar[IP_N_GRID], ipar[IP_RESUME] = k_grid, n_grid, 0
        nfev = 0
        for name in ("x", "m", "z"):  # the C code reads and writes them in place
            value = getattr(st, name)
            if not (isinstance(value, np.ndarray) and value.dtype == float
                    and value.flags.c_contiguous and value.size):
                setattr(st, name, np.ascontiguousarray(value, dtype=float))
        x = st.x if st.x.size else np.zeros(1)
        m = st.m if st.m.size else np.zeros(1)
        z = st.z if st.z.size else np.zeros(1)
        hits = sim.hits
        while True:
            if hits is not None:  # Python may have moved the clock on since the last call
                self.hit_k[:len(hits.k)] = hits.k
                self.hit_t[:len(hits.times)] = hits.times
            ipar[IP_GUARD_LEFT] = sim.guard.due - (sim.stats["restarts"] - sim.stats["hits"])
            if sim.zeno is not self._zeno:
                raise RuntimeError("the run's Zeno record was replaced")  # (never: in place)
            status = self.lib.bs_api_segment(self.handle, *self._fixed, x.ctypes.data,
                                             m.ctypes.data, z.ctypes.data, *self._buffers)
            self._collect(sim, st)
            nfev = int(ipar[IP_NFEV])
            k, step = int(ipar[IP_K_GRID]), float(fpar[FP_LAST_STEP])
            if status == CROSSING:
                i = int(ipar[IP_HIT])
                hit = (float(fpar[FP_EVENT_T]), self.x_ev[:self.model.n_states].copy(),
                       [(self.zc_owner[i], "state")])
                return Segment(hit, False, k, step, nfev)
            st.t = float(fpar[FP_T])
            if status == BOUND:  # the stop time, or a time event for Python to settle
                at_event = fpar[FP_BOUND_IS_EVENT] != 0.0 and st.t >= fpar[FP_BOUND]
                return Segment(None, at_event, k, step, nfev,
                               t_source=float(fpar[FP_SOURCE_T]))
            if status in (SETTLED, STOPPED):
                return Segment(None, False, k, step, nfev, stopped=status == STOPPED)
            if status == YIELD:
                if sim.progress:
                    sim.progress(st.t)
                if sim._interrupted():
                    return Segment(None, False, k, step, nfev, interrupted=True)
                if sim.stats["restarts"] - sim.stats["hits"] >= sim.guard.due:
                    sim._check_progress(st.t)
                ipar[IP_RESUME] = 1
                continue
            message = self.lib.bs_api_message(self.handle).decode("utf-8", "replace")
            block, port = sim._nonfinite_origin(st, st.t, st.x)
            raise sim._fail(f"{message or 'failed'} (solver dopri5, c)", st.t, block, None,
                            port)

    def _collect(self, sim: "Simulator", st: "RunState") -> None:
        """Rows, event log, hit schedule and counts of the last call into the run."""
        from blocksim.engine.results import Event

        ipar = self.ipar
        rows, entries = int(ipar[IP_ROWS]), int(ipar[IP_N_LOG])
        if rows:
            sim._add_rows(self.out_t[:rows].copy(), self.out_y[:rows, :self.n_log].copy())
        if entries:
            ids, kinds = self.model.block_ids, self.kinds
            sim.recorder.events.extend(
                Event(t, ids[b], kinds[k]) for t, b, k in zip(
                    self.log_t[:entries].tolist(), self.log_b[:entries].tolist(),
                    self.log_k[:entries].tolist()))
        stats = sim.stats
        stats["steps"] += int(ipar[IP_STEPS])
        stats["events"] += int(ipar[IP_EVENTS])
        stats["restarts"] += int(ipar[IP_RESTARTS])
        n_hits = int(ipar[IP_HITS])
        if n_hits:
            stats["hits"] += n_hits
            hits = sim.hits
            hits.k = self.hit_k[:len(hits.k)].tolist()
            hits.times = self.hit_t[:len(hits.times)].tolist()
            hits.next_time = min(hits.times)
            hits.count += n_hits
