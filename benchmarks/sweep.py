"""Monte Carlo of the bouncing ball through `blocksim.sweep`: 1 against 2 local workers,
the local pool against a Dask LocalCluster (2 worker processes), and the per-run overhead
of a sweep on the Python backend.

    python benchmarks/sweep.py [--n 10000] [--python-n 200] [--no-dask]

The issue's targets (docs/performance.md): 10,000 runs of diagrams/bouncing_ball.json
(mu ~ uniform(0.5, 0.95), v0 ~ normal(0, 1), 30 s each; metrics the time of rest and the
number of bounces) on 2 cores with numba in under 30 s, 2 workers >= 1.7x faster than 1,
Dask within 25 % of the local pool with bit-identical metrics, and a Python-backend sweep's
overhead (everything but the simulation) under 1 ms a run. A worker compiles the model once
and gives each run its values with `with_params` (no compilation). Wall times are of one
sweep each, timed in this process after an untimed warm-up sweep of the same runs, so every
configuration finds numba's compiled loop and the model's functions cached on disk; each
configuration's fresh worker processes still load them (counted).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import blocksim  # noqa: E402
from blocksim.sweeps import models, worker  # noqa: E402

BALL = ROOT / "diagrams" / "bouncing_ball.json"
DRAWS = {"mu": "uniform(0.5,0.95)", "v0": "normal(0,1)"}
METRICS = ["time:ball.lower limit:1", "count:ball.reset"]


def timed_sweep(n: int, seed: int, **options) -> tuple[float, blocksim.SweepTable]:
    started = time.perf_counter()
    table = blocksim.sweep(BALL, draws=DRAWS, n=n, seed=seed, metrics=METRICS, **options)
    return time.perf_counter() - started, table


def same_bits(a: blocksim.SweepTable, b: blocksim.SweepTable) -> bool:
    def key(table):
        return [tuple(repr(v) for v in table.rows[i]) for i in sorted(table.rows)]
    return key(a) == key(b)


def numba_cases(n: int, seed: int, dask: bool) -> None:
    print(f"numba backend, {n} runs of the ball (30 s each, mu and v0 drawn):")
    # Warm-up, untimed: the compiled loop and the model's functions into numba's disk
    # cache, so that no configuration below pays for compilations another one made.
    started = time.perf_counter()
    blocksim.sweep(BALL, draws=DRAWS, n=n, seed=seed, metrics=METRICS, backend="numba",
                   workers=2)
    print(f"  warm-up (the compiled loop and the model's functions into numba's disk cache): "
          f"{time.perf_counter() - started:.1f} s")
    # 2 workers first: their processes, forked from this one, must not inherit models this
    # process loaded in an earlier timing (each configuration loads its models itself)
    two_s, two = timed_sweep(n, seed, backend="numba", workers=2)
    dask_s, on_dask = _on_dask(n, seed) if dask else (None, None)
    one_s, one = timed_sweep(n, seed, backend="numba", workers=1)
    print(f"  local, 1 worker:   {one_s:8.2f} s  ({1e3 * one_s / n:.1f} ms a run)  "
          f"{one.counts()}")
    print(f"  local, 2 workers:  {two_s:8.2f} s  ({one_s / two_s:.2f}x the 1-worker run; "
          f"target >= 1.7x); same bits: {same_bits(one, two)}")
    if dask_s is not None:
        print(f"  dask LocalCluster(2 processes): {dask_s:8.2f} s  (overhead over the local "
              f"pool {100 * (dask_s / two_s - 1):+.0f} %, target < 25 %); same bits: "
              f"{same_bits(one, on_dask)}")


def _on_dask(n: int, seed: int) -> tuple[float | None, blocksim.SweepTable | None]:
    try:
        import distributed
    except ImportError:
        print("  dask: not installed (pip install 'blocksim[dask]')")
        return None, None
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as client:
        result = timed_sweep(n, seed, backend="numba", client=client)
    cluster.close()
    return result


def python_overhead(n: int, seed: int) -> None:
    """Within one sweep (1 worker, in this process, after a warm-up sweep of one run): its
    CPU time minus the CPU time of the simulations themselves (Simulator construction and
    run) and of making each run's model from its values (`with_params`, counted as
    overhead too). CPU time of this
    process, not wall time: on a shared machine the wall time of every part swells with
    the load, and the difference of two swollen times is noise."""
    spent = {"run": 0.0, "compile": 0.0}

    class TimedSimulator(worker.Simulator):
        def __init__(self, *args, **kwargs):
            self._bench_cpu_started = time.process_time()
            super().__init__(*args, **kwargs)

        def run(self):
            try:
                return super().run()
            finally:
                spent["run"] += time.process_time() - self._bench_cpu_started

    model_for = models.ModelSource.model

    def timed_model(self, values):
        started = time.process_time()
        try:
            return model_for(self, values)
        finally:
            spent["compile"] += time.process_time() - started

    timed_sweep(1, seed + 1, backend="python", workers=1)  # imports, first compilation
    worker.Simulator, models.ModelSource.model = TimedSimulator, timed_model
    try:
        started = time.process_time()
        wall, _ = timed_sweep(n, seed, backend="python", workers=1)
        cpu = time.process_time() - started
    finally:
        worker.Simulator, models.ModelSource.model = TimedSimulator.__base__, model_for
    overhead = 1e3 * (cpu - spent["run"] - spent["compile"]) / n
    values = 1e3 * spent["compile"] / n
    print(f"python backend, {n} runs: sweep {wall:.2f} s wall, {cpu:.2f} s CPU, of which "
          f"simulations (Simulator set-up and run) {spent['run']:.2f} s; each run's values "
          f"made a model (with_params) in {values:.3f} ms, the rest {overhead:.3f} ms CPU a run "
          f"(includes loading and compiling the diagram once): overhead "
          f"{values + overhead:.3f} ms a run (target < 1 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="numba Monte Carlo runs")
    parser.add_argument("--python-n", type=int, default=200, help="python-backend runs")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    python_overhead(args.python_n, args.seed)
    numba_cases(args.n, args.seed, not args.no_dask)


if __name__ == "__main__":
    main()
