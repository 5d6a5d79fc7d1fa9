"""What a worker does: compile a sweep's model once, then run batches of parameter sets.

Every run ends as a row, whatever happens to it: `finished` or `stopped` (a Stop block) with
its metrics, `failed` (the simulation failed: Zeno, step underflow, NaN with strict),
`invalid` (the diagram refuses the values, e.g. a negative where it needs a positive),
`error` (anything else, with the exception's type). Only a stop asked by the sweep itself
(Ctrl-C) ends a batch early, and the runs it cut are not reported, so a resumed sweep
runs them again.
"""
from __future__ import annotations

import logging
import math
import signal
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from blocksim.engine import Results, Simulator
from blocksim.errors import BlocksimError, SimulationError, SimulationInterrupted
from blocksim.model import Diagram, SimulationSettings
from blocksim.sweeps.metrics import Metric
from blocksim.sweeps.models import ModelSource

log = logging.getLogger(__name__)


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
    """The rows of a batch of (index, values), in order; stops early when asked to."""
    rows = []
    for index, values in batch:
        if _stop is not None and _stop():
            break
        row = run_one(job, index, values, _stop)
        if row is None:
            break
        rows.append(row)
    return rows


def start_pool_worker(job: Job, stop: Any) -> None:
    """A pool process's initializer: the job (sent once), the sweep's stop flag (an
    Event), and Ctrl-C left to the parent (which stops the sweep through the flag)."""
    global _job, _stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _job, _stop = job, stop.is_set
    try:
        source_for(job)  # compile now: every batch of this process reuses it
    except BlocksimError:
        pass  # the parent compiled it too and reports; each run will say it again


def run_pool_batch(batch: Sequence[tuple[int, Sequence[float]]]) -> list[Row]:
    """run_batch of the job this pool process was started with."""
    assert _job is not None, "start_pool_worker was not called"
    return run_batch(_job, batch)
