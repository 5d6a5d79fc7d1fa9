"""Monte Carlo of the bouncing ball through `blocksim.sweep`: 1 against 2 local workers,
the local pool against a Dask LocalCluster (2 worker processes), and the per-run overhead
of a sweep on the Python backend; `case_sweep` reports them in docs/performance.md
(`python benchmarks/performance.py --only sweep`, with the new-mu ratio of
benchmarks/runtime_params.py).

    python benchmarks/sweep.py [--n 10000] [--python-n 200] [--no-dask]

The issue's targets (docs/performance.md): 10,000 runs of diagrams/bouncing_ball.json
(mu ~ uniform(0.5, 0.95), v0 ~ normal(0, 1), 30 s each; metrics the time of rest and the
number of bounces) on 2 cores with numba in under 30 s, 2 workers >= 1.7x faster than 1,
Dask within 25 % of the local pool with bit-identical metrics, and a Python-backend sweep's
overhead (everything but the simulation) under 1 ms a run. A worker compiles the model once
and gives each run its values with `with_params` (no compilation). Wall times are of one
sweep each, timed in this process after an untimed warm-up sweep (a few hundred runs), so
every configuration finds numba's compiled loop and the model's functions cached on disk;
each configuration's fresh worker processes still load them (counted).

Dask is timed twice against the local pool (the mean of its 2-worker sweeps just before
and after the Dask ones): (a) a fresh LocalCluster whose start (worker processes spawned,
blocksim and numba imported) is inside the timed sweep, and (b) a cluster already running,
as a real one is: long-lived workers that have run another sweep of the ball (another
seed) and so hold its compiled model.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import blocksim  # noqa: E402
from blocksim.sweeps import models, worker  # noqa: E402

BALL = ROOT / "diagrams" / "bouncing_ball.json"
DRAWS = {"mu": "uniform(0.5,0.95)", "v0": "normal(0,1)"}
METRICS = ["time:ball.lower limit:1", "count:ball.reset"]
WARM_UP_RUNS = 200  # the untimed sweeps before the timed ones (disk caches, a cluster's model)


def timed_sweep(n: int, seed: int, **options) -> tuple[float, blocksim.SweepTable]:
    started = time.perf_counter()
    table = blocksim.sweep(BALL, draws=DRAWS, n=n, seed=seed, metrics=METRICS, **options)
    return time.perf_counter() - started, table


def same_bits(a: blocksim.SweepTable, b: blocksim.SweepTable) -> bool:
    def key(table):
        return [tuple(repr(v) for v in table.rows[i]) for i in sorted(table.rows)]
    return key(a) == key(b)


def numba_cases(n: int, seed: int, dask: bool) -> dict[str, Any]:
    """Wall seconds of the sweep per configuration, and whether its metrics are the bits
    of the 1-worker run's (keys one, two, dask_fresh, dask_running; same_*)."""
    print(f"numba backend, {n} runs of the ball (30 s each, mu and v0 drawn):")
    # Warm-up, untimed: the compiled loop and the model's functions into numba's disk
    # cache, so that no configuration below pays for compilations another one made.
    started = time.perf_counter()
    timed_sweep(min(n, WARM_UP_RUNS), seed + 1, backend="numba", workers=2)
    print(f"  warm-up (the compiled loop and the model's functions into numba's disk cache): "
          f"{time.perf_counter() - started:.1f} s")
    # 2 workers first: their processes, forked from this one, must not inherit models this
    # process loaded in an earlier timing (each configuration loads its models itself)
    found: dict[str, Any] = {}
    found["two"], two = timed_sweep(n, seed, backend="numba", workers=2)
    on_dask = _on_dask(n, seed) if dask else {}
    if on_dask:  # the pool again after Dask: a load that changed meanwhile shows
        found["two_after"], _ = timed_sweep(n, seed, backend="numba", workers=2)
    found["pool"] = (found["two"] + found.get("two_after", found["two"])) / 2
    found["one"], one = timed_sweep(n, seed, backend="numba", workers=1)
    found["counts"] = one.counts()
    found["same_two"] = same_bits(one, two)
    print(f"  local, 1 worker:   {found['one']:8.2f} s  ({1e3 * found['one'] / n:.1f} ms a "
          f"run)  {found['counts']}")
    print(f"  local, 2 workers:  {found['two']:8.2f} s  ({found['one'] / found['two']:.2f}x "
          f"the 1-worker run; target >= 1.7x); same bits: {found['same_two']}")
    if on_dask:
        print(f"  local, 2 workers again after the Dask sweeps: {found['two_after']:8.2f} s "
              f"(the pool: their mean {found['pool']:.2f} s)")
    for variant, what in (("dask_fresh", "(a) fresh LocalCluster, its start included"),
                          ("dask_running", "(b) running cluster, after another sweep")):
        if variant in on_dask:
            wall, table = on_dask[variant]
            found[variant], found[f"same_{variant}"] = wall, same_bits(one, table)
            print(f"  dask {what}: {wall:8.2f} s  (overhead over the local pool "
                  f"{100 * (wall / found['pool'] - 1):+.0f} %, target < 25 %); same bits: "
                  f"{found[f'same_{variant}']}")
    return found


def _on_dask(n: int, seed: int) -> dict[str, tuple[float, blocksim.SweepTable]]:
    try:
        import distributed
    except ImportError:
        print("  dask: not installed (pip install 'blocksim[dask]')")
        return {}
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)  # its shutdown chatter
    started = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as client:
        _, fresh = timed_sweep(n, seed, backend="numba", client=client)
        fresh_wall = time.perf_counter() - started
        timed_sweep(min(n, WARM_UP_RUNS), seed + 2, backend="numba", client=client)
        running = timed_sweep(n, seed, backend="numba", client=client)
    cluster.close()
    return {"dask_fresh": (fresh_wall, fresh), "dask_running": running}


def python_overhead(n: int, seed: int) -> dict[str, float]:
    """Within one sweep (1 worker, in this process, after a warm-up sweep of one run): its
    CPU time minus its set-up (loading and compiling the diagram, the checks: until the
    first run starts, reported apart: once a sweep, not per run) and the CPU time of the
    simulations themselves (Simulator construction and run); making each run's model from
    its values (`with_params`) is overhead too, and shown apart. CPU time of this process,
    not wall time: on a shared machine the wall time of every part swells with the load,
    and the difference of two swollen times is noise. Milliseconds a run: with_params,
    rest, overhead (their sum); milliseconds once: setup."""
    spent = {"run": 0.0, "compile": 0.0, "first": None}

    class TimedSimulator(worker.Simulator):
        def __init__(self, *args, **kwargs):
            self._bench_cpu_started = time.process_time()
            if spent["first"] is None:
                spent["first"] = self._bench_cpu_started
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
    setup = spent["first"] - started
    rest = 1e3 * (cpu - setup - spent["run"] - spent["compile"]) / n
    values = 1e3 * spent["compile"] / n
    print(f"python backend, {n} runs: sweep {wall:.2f} s wall, {cpu:.2f} s CPU, of which "
          f"set-up (load, compile, checks: once) {1e3 * setup:.0f} ms and simulations "
          f"(Simulator set-up and run) {spent['run']:.2f} s; each run's values made a model "
          f"(with_params) in {values:.3f} ms, the rest {rest:.3f} ms CPU a run: overhead "
          f"{values + rest:.3f} ms a run (target < 1 ms)")
    return {"with_params": values, "rest": rest, "overhead": values + rest,
            "setup": 1e3 * setup}


def case_sweep(suite) -> None:
    """docs/performance.md's rows of issue 15's targets (about 2.5 minutes)."""
    from bench_suite import fmt_time

    import runtime_params

    quick = suite.quick
    n, python_n = (200, 20) if quick else (10_000, 100)
    rows, ratio = [], None
    if "numba" in suite.backends:
        ratio = runtime_params.new_mu_ratio(3 if quick else 21)
        rows.append(["ball with a new mu against a rerun with the same mu (numba, medians "
                     "of interleaved runs)", f"{ratio:.2f}×"])
        found = numba_cases(n, 2026, dask=True)
        speedup = found["one"] / found["two"]
        rows += [[f"{n:,}-run Monte Carlo, 1 worker", fmt_time(found["one"])],
                 [f"{n:,}-run Monte Carlo, 2 workers (same bits: {found['same_two']})",
                  f"{fmt_time(found['two'])} ({speedup:.2f}× the 1-worker run)"]]
        if "two_after" in found:
            rows.append(["the local pool again after the Dask sweeps (the pool's time below: "
                         "the mean of the two)", fmt_time(found["two_after"])])
        for variant, what in (("dask_fresh", "(a) a fresh LocalCluster, its start timed"),
                              ("dask_running", "(b) a running cluster that swept before")):
            if variant in found:
                rows.append([f"Dask, 2 worker processes, {what} (same bits: "
                             f"{found[f'same_{variant}']})",
                             f"{fmt_time(found[variant])} "
                             f"({100 * (found[variant] / found['pool'] - 1):+.0f} % over the "
                             f"local pool)"])
    py = python_overhead(python_n, 2026)
    rows.append([f"python backend, per-run overhead of a {python_n}-run sweep (CPU; "
                 f"with_params {py['with_params']:.3f} ms, the rest {py['rest']:.3f} ms; "
                 f"once a sweep: load, compile and checks {py['setup']:.0f} ms)",
                 f"{py['overhead']:.3f} ms"])
    suite.section(
        "Sweeps and Monte Carlo (issue 15)",
        f"The bouncing ball with mu ~ uniform(0.5, 0.95) and v0 ~ normal(0, 1), 30 s a "
        f"run, metrics the time of rest and the number of bounces (`benchmarks/sweep.py`). "
        f"Wall times of one sweep each after an untimed warm-up of {WARM_UP_RUNS} runs; "
        f"the Dask variants against the mean of the local pool's 2-worker sweeps before "
        f"and after them (on a shared machine the load changes within minutes); the Python "
        f"overhead is "
        f"CPU time a run beside the simulations (model from values included).",
        ["what", "measured"], rows)
    if ratio is not None:
        suite.target("sweeps: ball with a new mu on numba within 1.5× of a rerun",
                     f"{ratio:.2f}×", ratio <= runtime_params.TARGET_RATIO)
        suite.target(f"sweeps: {n:,}-run Monte Carlo under 30 s on 2 cores (2 workers)",
                     fmt_time(found["two"]), None if quick else found["two"] < 30)
        suite.target("sweeps: 2 workers at least 1.7× faster than 1", f"{speedup:.2f}×",
                     speedup >= 1.7 and found["same_two"])
        for variant, what in (("dask_fresh", "a fresh LocalCluster"),
                              ("dask_running", "a running cluster")):
            if variant in found:
                over = found[variant] / found["pool"] - 1
                suite.target(f"sweeps: Dask ({what}) within 25 % of the local pool, same "
                             f"bits", f"{100 * over:+.0f} %",
                             over < 0.25 and found[f"same_{variant}"])
    suite.target("sweeps: Python-backend overhead under 1 ms a run",
                 f"{py['overhead']:.3f} ms", py["overhead"] < 1.0)


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
