"""`blocksim.sweep`: many runs of one diagram, with metrics, on one machine or a cluster."""
from __future__ import annotations

import contextlib
import logging
import os
import uuid
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from blocksim.errors import BlocksimError, shown
from blocksim.diagram.model import Diagram
from blocksim.files import write_rule
from blocksim.files.interrupts import interrupts_deferred
from blocksim.sweeps import executors, files, worker
from blocksim.sweeps.metrics import check_metrics, parse_metrics
from blocksim.sweeps.models import ModelSource
from blocksim.sweeps.plan import Plan, make_plan
from blocksim.sweeps.table import SweepTable
from blocksim.sweeps.worker import Job, Row

log = logging.getLogger(__name__)

KEEP = ("metrics", "signals")


class SweepInterrupted(BlocksimError):
    """A sweep ended by Ctrl-C; `.table` holds every run that finished (also written to
    the output file, if any)."""

    def __init__(self, table: SweepTable):
        self.table = table
        super().__init__(f"interrupted after {len(table)} of {table.total} runs")


def sweep(diagram: Any, *, grid: Mapping[str, Any] | None = None,
          samples: Sequence[Mapping[str, Any]] | Any = None,
          draws: Mapping[str, Any] | None = None, n: int | None = None,
          seed: int | None = None,
          metrics: Iterable[Any] | Mapping[str, Any] | None = None, keep: str = "metrics",
          params: Mapping[str, Any] | None = None, workers: int | None = None,
          client: Any = None, backend: str | None = None, strict: bool = False,
          out: str | os.PathLike | None = None, resume: bool = False,
          batch_size: int | None = None, trust: Any = (), allow_write: Iterable[Any] = (),
          progress: Callable[[SweepTable], None] | None = None,
          **settings: Any) -> SweepTable:
    """Run `diagram` (a path, an example's name as `blocksim examples` lists them, a
    Diagram or a DiagramBuilder) once per parameter set.

    The runs: the rows of `samples` (a list of dicts or a DataFrame) crossed with the
    product of `grid` (name -> list of values, or "START:STOP:N"), each repeated `n` times
    with Monte Carlo `draws` (name -> "normal(MU,SIGMA)" / "uniform(A,B)", reproducible
    from `seed` whatever the workers). `params` are fixed overrides, `settings` simulation
    settings (stop, rtol, ...). `metrics`: spec strings ("final:x", "time:ball.reset:3",
    see blocksim.sweeps.metrics) or functions of Results. `keep="signals"` also keeps each
    run's Results (table.results). `workers` processes (default every core; 1 runs here),
    or `client` a dask.distributed Client. `out` (.csv or .parquet) is written as runs
    finish; with `resume`, the runs already in it are skipped. A run that fails is a row
    with its status and message; Ctrl-C raises SweepInterrupted with the finished rows.

    Each run would write a block's file (ToFile) again: refused (WriteRefused, before any
    run) unless `allow_write` names that file or a folder around it; and, as for
    `simulate`, a diagram from a file writes only inside its folder unless allowed, and
    `out` is never a file the runs read or write (`blocksim.files.write_rule`).
    """
    if batch_size is not None and (int(batch_size) != batch_size or batch_size < 1):
        raise BlocksimError(f"batch_size must be a whole number >= 1, got {batch_size}")
    if keep not in KEEP:
        raise BlocksimError(f"keep must be 'metrics' or 'signals', got {shown(keep)!r}")
    model = _diagram(diagram, trust)
    unknown = sorted(set(settings) - set(vars(model.simulation)))
    if unknown:
        raise BlocksimError(f"sweep: unknown simulation setting {', '.join(unknown)}; "
                            f"known: {', '.join(vars(model.simulation))}")
    run_settings = model.simulation.replaced(backend=backend, **settings)
    plan = make_plan(grid, samples, draws, n, seed)
    _check_names(model, plan.names, params or {})
    parsed = parse_metrics(metrics)
    source = ModelSource(model, params or {}, run_settings)  # a diagram that cannot compile
    check_metrics(parsed, source.base, model.source)  # stops here
    for index in {0, len(plan) - 1} if len(plan) else ():
        source.check(plan.values(index))  # a structural parameter: refused, named
    table_file = [write_rule.output_use("--out", out)] if out is not None else []
    write_rule.check(source.base.files, table_file, allow_write, runs=len(plan))
    if out is not None:
        files.output_format(out)
    table = SweepTable(plan.names, tuple(m.name for m in parsed), total=len(plan))
    twice = sorted({c for c in table.columns if table.columns.count(c) > 1})
    if twice:
        raise BlocksimError(f"two columns would be named {', '.join(map(shown, twice))} "
                            f"(a swept parameter, status, a metric or message): rename one "
                            f"(metrics may be given as {{name: spec}})")
    if out is not None and resume:
        table.resumed = files.resume(table, plan, out)
        log.info("%s: %d of %d runs already done", out, table.resumed, len(plan))
    job = Job(uuid.uuid4().hex, model, dict(params or {}), run_settings, plan.names, parsed,
              keep_signals=keep == "signals", strict=strict,
              model_key=(_model_key(model, params or {}, run_settings) or "")
              if client is not None else "")
    checkpoints = files.Checkpoints(table, out)
    worker.adopt(job, source)  # (runs in this thread need not compile it again)
    try:
        with contextlib.closing(_execute(job, plan, table, workers, client, batch_size)) as done:
            for rows in done:
                for row in rows:
                    _add(table, plan, row)
                checkpoints.changed()
                if progress is not None:
                    progress(table)
    except KeyboardInterrupt:
        table.interrupted = True
    finally:
        checkpoints.dirty = checkpoints.dirty or (out is not None and not os.path.exists(out))
        try:
            with interrupts_deferred():  # an interrupt now comes once the file is whole
                checkpoints.write()
        except KeyboardInterrupt:
            table.interrupted = True
    if table.interrupted:
        raise SweepInterrupted(table)
    return table


def _diagram(diagram: Any, trust: Any) -> Diagram:
    if isinstance(diagram, Diagram):
        return diagram
    top = getattr(getattr(diagram, "top", None), "model", None)  # a DiagramBuilder
    if isinstance(top, Diagram):
        return top
    if isinstance(diagram, (str, os.PathLike)):  # a file, or an example's name (as the CLI)
        from blocksim.api.facade import load

        return load(diagram, trust=trust)
    raise BlocksimError(f"sweep needs a diagram file, a Diagram or a DiagramBuilder, got "
                        f"{type(diagram).__name__}")


def _model_key(diagram: Diagram, fixed: Mapping[str, Any], settings: Any) -> str | None:
    """A digest of what a worker compiles (diagram, fixed overrides, settings): a cluster's
    long-lived workers reuse their compiled model, numba's functions loaded, for a later
    sweep of the same model (another seed, other ranges). None where the diagram's Python
    block files could change between sweeps, or it cannot be pickled."""
    import hashlib
    import pickle

    if diagram.python:
        return None
    try:
        text = pickle.dumps((diagram, dict(fixed), settings), protocol=4)
    except Exception:  # (the job cannot travel to Dask either: that fails with its message)
        return None
    return "model-" + hashlib.sha256(text).hexdigest()[:32]


def _check_names(diagram: Diagram, names: Sequence[str], fixed: Mapping[str, Any]) -> None:
    """A swept name the diagram does not have, or one also fixed, refused before any run."""
    known = diagram.parameters
    for name in names:
        if name not in known:
            raise BlocksimError(f"{diagram.source}: cannot sweep unknown parameter "
                                f"'{shown(name)}'; known: {', '.join(sorted(known)) or 'none'}")
        if name in fixed:
            raise BlocksimError(f"parameter '{shown(name)}' is both swept and set (--set)")


def _execute(job: Job, plan: Plan, table: SweepTable, workers: int | None, client: Any,
             batch_size: int | None) -> Iterator[list[Row]]:
    runs = [(i, plan.rows[i]) for i in range(len(plan)) if i not in table.rows]
    if client is not None:
        return executors.run_dask(job, executors.batches(runs, _cluster_size(client),
                                                         batch_size), client)
    count = executors.default_workers() if workers is None else int(workers)
    if count < 1:
        raise BlocksimError(f"workers must be at least 1, got {workers}")
    if count == 1 or len(runs) <= 1:
        return executors.run_here(job, runs)
    work = executors.batches(runs, count, batch_size)
    return executors.run_pool(job, work, min(count, len(work)))


def _cluster_size(client: Any) -> int:
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # an unusual client: batches as for one worker
        return 1


def _add(table: SweepTable, plan: Plan, row: Row) -> None:
    table.rows[row.index] = (*plan.rows[row.index], row.status, *row.metrics, row.message)
    if row.results is not None:
        table.results[row.index] = row.results
