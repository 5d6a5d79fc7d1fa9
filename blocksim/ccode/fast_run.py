"""A plain run on backend c with no Simulator: one call into C, its rows made Results.

A run of the 100-lag chain is one call into C of about 29 µs; the `Simulator` around it
(its construction, the run loop, the recorder, the results) cost about as long again. A
run that needs no Python between its calls into C (no progress callback, no `should_stop`,
no FMU sessions, no blocks writing files, no input histories) and whose first call settles
it to the stop time needs none of that: `run` looks up what the model and the settings fix
(`FastPlan`, in the run plan), takes a pooled C instance, copies x0, m0 and z0 in, makes the
call, and copies the output rows and the event log into Results, as the Simulator would.

Anything else the call returns (a crossing or time event left to Python, a full buffer, the
steps of one call used up, a start left to Python, a Stop block, a failure, a NaN in a row,
the progress guard due) is handed over: a `Simulator` takes the instance and the call's
status as its C loop's first call (`CLoop.handed`) and goes on from there as ever, so
results, warnings and failures are those of the ordinary run.
"""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from blocksim.ccode import loop
from blocksim.ccode.loop import (BOUND, FP_BOUND, FP_BOUND_IS_EVENT, FP_SOURCE_T, FP_T, IP_EVENTS,
                                 IP_GUARD_LEFT, IP_HITS, IP_K_GRID, IP_N_GRID, IP_N_LOG,
                                 IP_NFEV, IP_NONFINITE, IP_RESTARTS, IP_ROWS, IP_START,
                                 IP_STEPS, SETTLED)
from blocksim.engine import guards, run_plan
from blocksim.engine.hits import HitSchedule
from blocksim.engine.results import Event, Recorder, Results, logged_events
from blocksim.engine.simulator import INTERRUPT_MESSAGE, Simulator
from blocksim.errors import SimulationInterrupted

if TYPE_CHECKING:
    from blocksim.compiler.compiled import CompiledModel
    from blocksim.diagram.model import SimulationSettings

FAST = "c_fast"  # RunPlan.native: this module's FastPlan (False: runs of it take the Simulator)
RUNS = "c_fast_runs"  # CompiledModel.derived: `_Settled` per backend asked for (`simulate`)
FEW_EVENTS = 2  # event log entries made one by one (more: in bulk, `logged_events`)
_NO_EVENTS: tuple = ()
_NO_WARNINGS: tuple = ()


class FastPlan:
    """What a fast run of one model with one set of settings reads, made once: the first
    call's parameters (those `CLoop` would set for the start), the initial state, hit
    schedule and Zeno state, and how the output columns make the signals."""

    def __init__(self, model: "CompiledModel", settings: "SimulationSettings",
                 plan: run_plan.RunPlan):
        prepared = self.prepared = loop.prepared(model, settings, plan)
        self.stop = settings.stop
        self.solver = settings.solver
        self.library_key = loop._key(loop.SHARED, settings.solver)
        self.pool = model.shared.setdefault(loop._key(loop.POOL, settings.solver), [])
        self.kinds = model.shared[loop.SHARED + "_kinds"]
        self.block_ids = model.block_ids
        files = model.files
        self.writes_files = any(use.writes for use in (files.uses if files else ()))
        # The first call as `Simulator._run` makes it: the start left to C, the stop time
        # the bound, one restart counted.
        self.fpar = prepared.fpar.copy()
        self.ipar = prepared.ipar.copy()
        self.fpar[FP_T], self.fpar[FP_BOUND], self.fpar[FP_SOURCE_T] = (
            settings.start, settings.stop, math.inf)
        self.fpar[FP_BOUND_IS_EVENT] = 1.0 if settings.stop == math.inf else 0.0
        self.ipar[IP_K_GRID], self.ipar[IP_N_GRID] = 1, plan.n_grid
        self.ipar[IP_START] = 1
        self.ipar[IP_GUARD_LEFT] = guards.WINDOW - 1
        self.initial = {"x": np.array(model.x0, dtype=float),
                        "m": np.array(model.m0, dtype=float),
                        "z": np.zeros(model.n_zc)}
        hits = HitSchedule(model, settings.start) if model.rates else None
        self.hits = None if hits is None else (np.array(hits.k, dtype=np.longlong),
                                               np.array(hits.times, dtype=float))
        self.zeno = np.array([-math.inf, 0.0, -math.inf]) if model.n_zc else None
        # Per signal: its column (one number a row) or its columns.
        self.columns: list[tuple[str, Any]] = []
        col = 0
        for name, indices in zip(plan.names, plan.indices):
            width = len(indices)
            self.columns.append((name, col if width == 1 else slice(col, col + width)))
            col += width
        self.width = col


def plan_of(model: "CompiledModel", settings: "SimulationSettings"
            ) -> "tuple[run_plan.RunPlan, FastPlan | None]":
    """The run plan and, where its runs may take this path, their FastPlan (made once)."""
    plan = run_plan.plan_for(model, settings)
    fast = plan.native.get(FAST)
    if fast is None:
        fast = plan.native[FAST] = _fast_plan(model, settings, plan) or False
    return plan, fast or None


def _fast_plan(model: "CompiledModel", settings: "SimulationSettings",
               plan: run_plan.RunPlan) -> FastPlan | None:
    """A FastPlan, or None where runs need the Simulator from their start."""
    from blocksim.ccode import solver_c

    if (plan.backend != "c" or not solver_c.carried(settings.solver) or not model.n_states
            or model.run_sessions or model.after_run or model.history
            or model.x0.dtype != float or model.m0.dtype != float):
        return None
    if isinstance(loop.library(model, settings.solver), str):
        return None  # (the Simulator says why it runs in Python)
    return FastPlan(model, settings, plan)


def simulate(model: "CompiledModel", backend: str | None, strict: bool) -> Results | None:
    """`blocksim.simulate(model, backend=...)` with no other argument: `run` with the
    model's settings on `backend`, those settings and their plan looked up by the backend
    alone (`_Settled`); None where this path does not take the run (the caller runs it)."""
    runs = model.derived.get(RUNS)
    if runs is None:
        runs = model.derived[RUNS] = {}
    found = runs.get(backend)
    base = model.settings
    if found is None or not found.still(base):
        settings = base.replaced(backend=backend)
        if settings.backend is None:  # (then the environment chooses it, at each run)
            return None
        found = runs[backend] = _Settled(base, settings, plan_of(model, settings)[1])
    fast = found.fast
    if fast is None or fast.writes_files:
        return None
    return _run(model, found.settings, fast, strict)


class _Settled:
    """A model's settings with another backend, and the FastPlan of their runs: kept while
    the model's settings hold the values (and types) they were made from."""

    def __init__(self, base: "SimulationSettings", settings: "SimulationSettings",
                 fast: FastPlan | None):
        self.base, self.settings, self.fast = base, settings, fast
        self.values = tuple(base.__dict__.values())
        self.types = tuple(map(type, self.values))

    def still(self, base: "SimulationSettings") -> bool:
        values = tuple(base.__dict__.values())
        return (base is self.base and values == self.values
                and tuple(map(type, values)) == self.types)


def run(model: "CompiledModel", settings: "SimulationSettings", strict: bool = False
        ) -> Results:
    """Run `model` with `settings` (no progress callback, no should_stop): by one call into
    C where that settles the run, else by a Simulator (module docstring)."""
    fast = plan_of(model, settings)[1]
    if fast is None:
        return Simulator(model, settings, strict=strict).run()
    return _run(model, settings, fast, strict)


def _run(model: "CompiledModel", settings: "SimulationSettings", fast: FastPlan,
         strict: bool) -> Results:
    # (x0 checked finite by a first run through the Simulator, which names the block)
    if model.derived.get("finite_x0") is not model.x0:
        return Simulator(model, settings, strict=strict).run()
    lib = model.shared.get(fast.library_key)
    if lib is None or isinstance(lib, str):
        return Simulator(model, settings, strict=strict).run()
    started = time.perf_counter()
    prepared, pool = fast.prepared, fast.pool
    try:
        c = pool.pop()
    except IndexError:
        c = loop._Instance(lib, model, prepared.n_log)
    c.fpar[:] = fast.fpar
    ipar = c.ipar
    ipar[:] = fast.ipar
    initial = fast.initial
    for name, part in c.state:
        part[:] = initial[name]
    if fast.hits is not None:
        k, times = fast.hits
        c.hit_k[:len(k)] = k
        c.hit_t[:len(times)] = times
    if fast.zeno is not None:
        c.zeno[:] = fast.zeno
    try:
        status = lib.bs_api_run(c.handle, *prepared.addresses)
        counts = ipar.tolist()
        rows = counts[IP_ROWS]
        fpar = c.fpar.tolist()  # (at the stop time: settled, or bounded by it, no event)
        if ((status == SETTLED or status == BOUND and fpar[FP_BOUND_IS_EVENT] == 0.0)
                and rows and not counts[IP_NONFINITE]
                and fpar[FP_T] >= fast.stop and c.out_t[rows - 1] >= fast.stop
                and 1 + counts[IP_RESTARTS] - counts[IP_HITS] < guards.WINDOW):
            results = _results(fast, c, counts, rows, started)
            if len(pool) < loop.KEPT:
                pool.append(c)
            return results
    except BaseException as exc:
        if len(pool) < loop.KEPT:
            pool.append(c)
        if isinstance(exc, KeyboardInterrupt):
            raise _interrupted(model, settings, exc, started) from None
        raise
    return _hand_over(model, settings, strict, c, status, started)


def _hand_over(model: "CompiledModel", settings: "SimulationSettings", strict: bool,
               c: "loop._Instance", status: int, started: float) -> Results:
    """The run of which one call into C is made, on by a Simulator whose C loop takes that
    call as its first (from the same state: nothing is run again)."""
    sim = Simulator(model, settings, strict=strict)
    native = sim.native
    if not isinstance(native, loop.CLoop):  # (cannot be: the plan says C runs it)
        raise RuntimeError("backend c: the run's C loop is missing")
    native.handed = (c, status, started)
    return sim.run()


def _results(fast: FastPlan, c: "loop._Instance", counts: list[int], rows: int,
             started: float) -> Results:
    """The call's rows, event log and counts as the Simulator's Results of the run."""
    time_ = c.out_t[:rows].copy()
    data = c.out_y[:rows]
    signals = {name: data[:, col].copy() for name, col in fast.columns}
    entries = counts[IP_N_LOG]
    if entries > FEW_EVENTS:
        events = tuple(logged_events(c.log_t[:entries], c.log_b[:entries],
                                     c.log_k[:entries], fast.block_ids, fast.kinds))
    elif entries:  # (a few read one by one: half the cost of three slices and lists)
        ids, kinds, log_t, log_b, log_k = fast.block_ids, fast.kinds, c.log_t, c.log_b, c.log_k
        events = tuple([Event(log_t.item(i), ids[log_b.item(i)], kinds[log_k.item(i)])
                        for i in range(entries)])
    else:
        events = _NO_EVENTS
    stats = {"steps": counts[IP_STEPS], "events": counts[IP_EVENTS],
             "restarts": 1 + counts[IP_RESTARTS], "nfev": counts[IP_NFEV],
             "hits": counts[IP_HITS], "python_events": 0,
             "wall_time": time.perf_counter() - started}
    return Results(time_, signals, events, "finished", "", stats, _NO_WARNINGS)


def _interrupted(model: "CompiledModel", settings: "SimulationSettings",
                 exc: KeyboardInterrupt, started: float) -> SimulationInterrupted:
    """Ctrl-C as the Simulator reports it at its first call into C: no rows yet, the
    interruption at the start in the event log."""
    plan = run_plan.plan_for(model, settings)
    message = f"interrupted ({exc.args[0]})" if exc.args else INTERRUPT_MESSAGE
    recorder = Recorder(plan.names, plan.indices)
    recorder.events.append(Event(float(settings.start), "", "interrupted"))
    stats = {"steps": 0, "events": 0, "restarts": 1, "nfev": 0, "hits": 0, "python_events": 0,
             "wall_time": time.perf_counter() - started}
    results = recorder.results("interrupted", message, stats)
    return SimulationInterrupted(message, settings.start, None, results)
