"""Where a sweep's batches run: in this process, a local process pool, or a Dask cluster.

Each executor yields lists of rows as batches finish (in any order) and stops cleanly when
the caller stops iterating on Ctrl-C: the in-process runner stops at once (the run cut by
Ctrl-C is not reported), the pool's workers ignore SIGINT and are told through an Event
(the runs they are in stop within about 10 ms; the rows they finished still come back),
and Dask's pending tasks are cancelled.

The pool forks where the platform can (workers inherit user block types and metric
functions; nothing is pickled but the batches), and spawns elsewhere. A process with other
threads running (the editor's sweep dialog, a notebook) starts its workers from a fork
server instead where the job can travel by pickle: a child forked while another thread held
a lock (logging, numba's compiler, malloc) could wait for it forever.
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Any, Iterator, Sequence

from blocksim.errors import BlocksimError, SimulationInterrupted
from blocksim.sweeps import worker
from blocksim.sweeps.worker import Job, Row

log = logging.getLogger(__name__)

Batch = list[tuple[int, Sequence[float]]]


def batches(runs: Sequence[tuple[int, Sequence[float]]], workers: int,
            size: int | None = None) -> list[Batch]:
    """Runs in batches: about 8 per worker (load balance, progress, little lost to a
    Ctrl-C), at most 256 runs each, unless `size` says."""
    if size is None:
        size = max(1, min(256, -(-len(runs) // (8 * max(workers, 1)))))
    return [list(runs[i:i + size]) for i in range(0, len(runs), size)]


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run_here(job: Job, runs: Sequence[tuple[int, Sequence[float]]]) -> Iterator[list[Row]]:
    """In this process, one run at a time (Ctrl-C raises KeyboardInterrupt after the rows
    finished so far were yielded)."""
    for index, values in runs:
        try:
            row = worker.run_one(job, index, values)
        except SimulationInterrupted:
            raise KeyboardInterrupt from None
        if row is not None:
            yield [row]


def _start_method(job: Job) -> str:
    """fork where it is safe and available, else forkserver or spawn (see module)."""
    import multiprocessing
    import pickle
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" not in methods or sys.platform == "darwin":
        return "spawn"
    if threading.active_count() > 1 and "forkserver" in methods and not job.diagram.python:
        try:
            pickle.dumps(job)
        except Exception:  # a metric function defined in place (a lambda) needs fork
            log.debug("sweep job cannot be pickled: forking although threads run")
            return "fork"
        return "forkserver"
    return "fork"


def run_pool(job: Job, work: list[Batch], workers: int) -> Iterator[list[Row]]:
    """On a local process pool of `workers` processes; on Ctrl-C (KeyboardInterrupt here)
    the workers are stopped, their finished rows yielded, then KeyboardInterrupt raised.
    A worker that gets SIGTERM or SIGHUP (sent to the whole process group by a batch
    scheduler, `timeout` or a closed terminal) stops the sweep the same way, through the
    stop flag (`worker.start_pool_worker`); the batches it or the others lost then are
    not reported (a resumed sweep runs them)."""
    import multiprocessing  # (here: `import blocksim` need not load them)
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    context = multiprocessing.get_context(_start_method(job))
    stop = context.Event()
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=worker.start_pool_worker, initargs=(job, stop))
    pending = {pool.submit(worker.run_pool_batch, batch) for batch in work}
    interrupted = False
    try:
        while pending:
            try:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:
                interrupted = True
                stop.set()
                for future in pending:
                    future.cancel()
                done = wait(pending).done
                pending = set()
            for future in done:
                rows = _rows(future, stopping=interrupted or stop.is_set())
                if rows:
                    yield rows
        interrupted = interrupted or stop.is_set()  # a worker's signal stopped the sweep
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
    if interrupted:
        raise KeyboardInterrupt


def _rows(future: Any, stopping: bool = False) -> list[Row]:
    """A batch's rows; while the sweep stops, none for a batch cancelled or lost with
    its worker (its runs were not finished)."""
    if stopping and (future.cancelled() or future.exception() is not None):
        return []
    try:
        return future.result()
    except Exception as exc:  # a worker process that died (killed, out of memory)
        raise BlocksimError(f"a sweep worker failed: {type(exc).__name__}: {exc}") from None


def run_dask(job: Job, work: list[Batch], client: Any) -> Iterator[list[Row]]:
    """On a Dask distributed cluster: the job scattered once to every worker, one task per
    batch; on Ctrl-C the pending tasks are cancelled.

    A cluster kept for sweeps may turn off its workers' statistical profiler
    (`distributed.worker.profile.enabled: false`): it samples the task's thread every
    10 ms: about 0.3 s of the workers' CPU in a 10,000-run numba sweep of the ball, 2 %
    (docs/profile.md, "Sweeps on Dask").
    """
    from distributed import as_completed

    shared = client.scatter(job, broadcast=True)
    futures = [client.submit(worker.run_batch, shared, batch, pure=False) for batch in work]
    try:
        for future in as_completed(futures):
            yield _rows(future)
    finally:
        client.cancel(futures)
