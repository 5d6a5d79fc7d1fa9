"""What a worker does: compile a sweep's model once, then run batches of parameter sets.

Every run ends as a row, whatever happens to it: `finished` or `stopped` (a Stop block) with
its metrics, `failed` (the simulation failed: Zeno, step underflow, NaN with strict),
`invalid` (the diagram refuses the values, e.g. a negative where it needs a positive),
`error` (anything else, with the exception's type). Only a stop asked by the sweep itself
(Ctrl-C) ends a batch early, and the runs it cut are not reported, so a resumed sweep
runs them again.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from blocksim.engine import Results, Simulator
from blocksim.engine.notices import notice
from blocksim.errors import BlocksimError, SimulationError, SimulationInterrupted
from blocksim.diagram.model import Diagram, SimulationSettings
from blocksim.sweeps.metrics import Metric
from blocksim.sweeps.models import ModelSource

log = logging.getLogger(__name__)

BATCH_MODULE = "blocksim.engine.native.batch"
BATCH_COMPILE_SECONDS = 10  # compiling it (12.8 s measured on a busy 2-core machine)
BATCH_CHUNK = 32  # runs whose models are made, then run, together (`_run_batched`)


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to run the runs of one sweep (sent once per worker)."""

    key: str  # unique per sweep (Dask scatters the job under it)
    diagram: Diagram
    fixed: Mapping[str, Any]
    settings: SimulationSettings
    names: tuple[str, ...]
    metrics: tuple[Metric, ...]
    keep_signals: bool = False
    strict: bool = False
    # A worker's compiled model is reused while this matches: sweeps on Dask of one
    # diagram, overrides and settings share it (`api._model_key`); else `key`.
    model_key: str = ""


@dataclass
class Row:
    """One run's outcome: its index, status, message, metric values (and results if kept)."""

    index: int
    status: str
    message: str
    metrics: tuple[float, ...]
    results: Results | None = field(default=None, repr=False)


# Per thread (a Dask worker may run tasks in threads, and a model's runs are not meant to
# share it): the model source of the last job. Per process: the pool's job and stop flag.
_local = threading.local()
_job: Job | None = None
_stop: Callable[[], bool] | None = None


def source_for(job: Job) -> ModelSource:
    """The job's compiled model source, built once per process (the last job's kept)."""
    key, source = getattr(_local, "source", (None, None))
    if key != (job.model_key or job.key):
        source = ModelSource(job.diagram, job.fixed, job.settings)
        _local.source = (job.model_key or job.key, source)
    return source


def adopt(job: Job, source: ModelSource) -> None:
    """Runs of `job` in this thread use `source` (the caller compiled it for the job)."""
    _local.source = (job.model_key or job.key, source)


def run_one(job: Job, index: int, values: Sequence[float],
            should_stop: Callable[[], bool] | None = None) -> Row | None:
    """One run as a row; None if the sweep's stop cut it (a Ctrl-C in this process raises
    SimulationInterrupted instead, for the caller to stop on)."""
    nan = (math.nan,) * len(job.metrics)
    try:
        model = source_for(job).model(dict(zip(job.names, values)))
        results = Simulator(model, job.settings, should_stop=should_stop,
                            strict=job.strict).run()
    except SimulationInterrupted:
        raise
    except SimulationError as exc:
        return Row(index, "failed", str(exc), nan,
                   exc.results if job.keep_signals else None)
    except BlocksimError as exc:  # CompileError, ExpressionError: names block and parameter
        return Row(index, "invalid", str(exc), nan)
    except Exception as exc:  # a bug must not end a 100,000-run sweep: a row that says it
        log.debug("run %d raised", index, exc_info=True)
        return Row(index, "error", f"{type(exc).__name__}: {exc}", nan)
    return row_of(job, index, results, should_stop)


def row_of(job: Job, index: int, results: Results,
           should_stop: Callable[[], bool] | None = None) -> Row | None:
    """The row of a run that ended with `results` (finished or stopped); None if the
    sweep's stop cut it."""
    if should_stop is not None and results.status == "stopped" and should_stop():
        return None  # cut by the sweep's stop, not a Stop block: to be run again
    status, message = results.status, results.message or "; ".join(results.warnings)
    metrics = []
    for metric in job.metrics:
        try:
            metrics.append(metric(results))
        except Exception as exc:  # a user metric function that raises: NaN, and said
            metrics.append(math.nan)
            if status != "error":
                status, message = "error", f"metric '{metric.name}': {type(exc).__name__}: {exc}"
    return Row(index, status, message, tuple(metrics), results if job.keep_signals else None)


def run_batch(job: Job, batch: Sequence[tuple[int, Sequence[float]]]) -> list[Row]:
    """The rows of a batch of (index, values), in order; stops early when asked to.

    On the numba backend, the runs that can go through the compiled batch loop
    (`blocksim.engine.native.batch`) run there, many per compiled call; the others, and
    any it hands back, run one by one (`run_one`), with the same results either way."""
    runner = batch_runner(job) if len(batch) > 1 else None
    outcomes = _run_batched(job, batch, runner) if runner is not None else [None] * len(batch)
    rows = []
    for (index, values), outcome in zip(batch, outcomes):
        if _stop is not None and _stop():
            break
        if outcome is _CUT:
            break  # the sweep's stop came first
        row = outcome if outcome is not None else run_one(job, index, values, _stop)
        if row is None:
            break
        rows.append(row)
    return rows


_CUT = "cut"  # a run the sweep's stop came before, or cut


def batch_runner(job: Job) -> Any:
    """The compiled batch runner of the job's model in this thread (None: the job's runs
    go one by one: not numba, or the model's runs need Python)."""
    # per compiled model (as source_for) and watched or not (where the loop pauses)
    key = (job.model_key or job.key, _stop is not None)
    found = getattr(_local, "runner", None)
    if found is not None and found[0] == key:
        return found[1]
    runner = None
    if job.settings.resolved_backend == "numba":
        try:
            sim = Simulator(source_for(job).base, job.settings, should_stop=_stop,
                            strict=job.strict)
            if sim.native is not None:
                from blocksim.engine.native import cache, heartbeat

                what = "compiling the numba backend's batch loop for sweeps"
                watch = contextlib.nullcontext()
                if (BATCH_MODULE not in sys.modules
                        and not cache.kernels_cached(stem="batch")):
                    notice(f"{what}, once per machine; this takes about "
                           f"{BATCH_COMPILE_SECONDS} s")
                    watch = heartbeat.compiling(what)
                with watch:
                    from blocksim.engine.native import batch

                runner = batch.BatchRunner.for_simulator(sim)
        except BlocksimError:
            runner = None
    _local.runner = (key, runner)
    return runner


def _run_batched(job: Job, batch: Sequence[tuple[int, Sequence[float]]],
                 runner: Any) -> list[Any]:
    """Per run: its Row from the compiled batch loop, None for the per-run path, or _CUT
    if the sweep's stop came before it ran or cut it. The runs go in chunks of
    BATCH_CHUNK, whose models are made just before they run (a stop is seen between)."""
    from blocksim.engine.native import batch as native_batch

    source = source_for(job)
    outcomes: list[Any] = [None] * len(batch)
    for first in range(0, len(batch), BATCH_CHUNK):
        models, where = [], []
        for k in range(first, min(first + BATCH_CHUNK, len(batch))):
            try:
                model = source.model(dict(zip(job.names, batch[k][1])))
            except Exception:  # the per-run path makes the row that says why
                continue
            if runner.accepts(model):
                models.append(model)
                where.append(k)

        def finish(j: int, results: Results) -> Any:
            row = row_of(job, batch[where[j]][0], results, _stop)
            return _CUT if row is None else row
        try:
            with np.errstate(all="ignore"):  # as in Simulator.run: non-finite values are
                done = runner.run(models, _stop, finish)  # handed to the per-run path
        except KeyboardInterrupt:
            raise SimulationInterrupted("interrupted (Ctrl-C)", math.nan, None,
                                        None) from None
        except Exception:  # a bug of the batch loop must not end the sweep: per run
            log.warning("the numba batch loop failed; these runs go one by one",
                        exc_info=True)
            continue
        for k, outcome in zip(where, done):
            if outcome is None:
                outcomes[k] = _CUT
            elif outcome is not native_batch.PER_RUN:
                outcomes[k] = outcome
        if _stop is not None and _stop():
            outcomes[first + BATCH_CHUNK:] = [_CUT] * len(outcomes[first + BATCH_CHUNK:])
            break
    return outcomes


GRACE_SECONDS = 2.0  # a signalled pool worker ends this long after the signal at most
_signalled = False


def start_pool_worker(job: Job, stop: Any) -> None:
    """A pool process's initializer: the job (sent once), the sweep's stop flag (an
    Event), Ctrl-C left to the parent (which stops the sweep through the flag), and
    SIGTERM or SIGHUP (a batch scheduler's, a closed terminal's, sent to every process of
    the group) raising that flag here (`_stop_sweep`)."""
    global _job, _stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), functools.partial(_stop_sweep, stop))
    _job, _stop = job, lambda: _signalled or stop.is_set()
    try:
        source_for(job)  # compile now: every batch of this process reuses it
    except BlocksimError:
        pass  # the parent compiled it too and reports; each run will say it again


def _stop_sweep(stop: Any, signum: int, frame: Any) -> None:
    """SIGTERM or SIGHUP in a pool worker: its batch stops at once and returns the runs it
    finished, the flag stops the parent and the other workers as Ctrl-C does, and the
    process ends GRACE_SECONDS later whatever happens (the pool also ends a broken pool's
    workers with SIGTERM, and waits for them). The flag is raised from a thread: the
    handler may have interrupted this thread inside the Event's own lock."""
    global _signalled
    if _signalled:
        return
    _signalled = True

    def stop_then_exit() -> None:
        stop.set()
        time.sleep(GRACE_SECONDS)
        os._exit(128 + signum)
    threading.Thread(target=stop_then_exit, daemon=True).start()


def run_pool_batch(batch: Sequence[tuple[int, Sequence[float]]]) -> list[Row]:
    """run_batch of the job this pool process was started with."""
    assert _job is not None, "start_pool_worker was not called"
    return run_batch(_job, batch)
