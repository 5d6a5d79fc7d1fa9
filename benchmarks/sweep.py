"""Monte Carlo of the bouncing ball through `blocksim.sweep`: 1 against 2 local workers,
the local pool against a Dask LocalCluster (2 worker processes), and the per-run overhead
of a sweep on the Python backend; `case_sweep` reports them in docs/performance.md
(`python benchmarks/performance.py --only sweep`, with the new-mu ratio of
benchmarks/runtime_params.py).

    python benchmarks/sweep.py [--n 10000] [--python-n 200] [--rounds 5] [--no-dask]

The issue's targets (docs/performance.md): 10,000 runs of diagrams/bouncing_ball.json
(mu ~ uniform(0.5, 0.95), v0 ~ normal(0, 1), 30 s each; metrics the time of rest and the
number of bounces) on 2 cores with numba in under 30 s, 2 workers >= 1.7x faster than 1,
Dask within 25 % of the local pool with bit-identical metrics, and a Python-backend sweep's
overhead (everything but the simulation) under 1 ms a run. "The same sweep on a Dask
LocalCluster (2 worker processes, in CI)" is read as a LocalCluster the user started for the
sweep, its construction not counted (TARGET_VARIANT, the fresh cluster); the other variants
are reported beside it, each row saying which reading it is. A worker compiles the model once
and gives each run its values with `with_params` (no compilation). An untimed warm-up sweep
(a few hundred runs) first puts numba's compiled loop and the model's functions in its disk
cache, so no configuration pays for another's compilations.

On a shared machine one sweep's wall time says little (the pool alone moved 30 % between
two sweeps of one run), so the 2-worker pool and the Dask variants (VARIANTS: running
clusters with Dask's default configuration and with the workers' profiler off, and a fresh
cluster) run in interleaved rounds; each is compared with the pool's sweep of its own
round, and medians, ranges and CPU times (workers' and caller's) are printed. Each runs in
a process of its own: a pool started from a process with Dask's threads would start its
workers from a fork server, and a LocalCluster's scheduler and nannies run (and spend CPU)
in the process that made it. The fresh cluster's construction (LocalCluster + Client) is
timed apart from its sweep, and their sum compared with the pool too: the unflattering
number, dominated by starting worker processes (spawn, import distributed, then blocksim
and numba in their first task), which the pool's forked workers do not pay.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
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
# Interleaved rounds of the pool and the Dask variants: on this shared host one round's
# ratio moved by 30 points (+2 % to +51 % in one run), so with 3 a single slow round moved
# the median by 10; 5 rounds are about 4 minutes.
ROUNDS = 5
# Dask's workers sample the stack of the thread running a task every 10 ms (their
# statistical profiler): about 0.3 s of the workers' CPU in a 10,000-run sweep of the ball
# (psutil; 2 %). A cluster kept for sweeps may turn it off; the benchmark measures both.
DASK_QUIET = {"distributed.worker.profile.enabled": False}


def timed_sweep(n: int, seed: int, **options) -> tuple[float, blocksim.SweepTable]:
    started = time.perf_counter()
    table = blocksim.sweep(BALL, draws=DRAWS, n=n, seed=seed, metrics=METRICS, **options)
    return time.perf_counter() - started, table


def digest(table: blocksim.SweepTable) -> str:
    """The bits of a table's rows (the repr of every value), as a short digest."""
    text = repr([tuple(repr(v) for v in table.rows[i]) for i in sorted(table.rows)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def pool_in_child(n: int, seed: int) -> dict[str, Any]:
    """(In a new Python process, `--child pool`) one 2-worker sweep on the local pool,
    after a 1-run sweep in that process (the model's functions loaded, as in a process that
    swept before): its wall time, the CPU time of the process and its workers, the bits."""
    timed_sweep(1, seed + 1, backend="numba", workers=1)
    cpu, children = time.process_time(), _children_cpu()
    wall, table = timed_sweep(n, seed, backend="numba", workers=2)
    here = time.process_time() - cpu
    return {"wall": wall, "cpu": here + _children_cpu() - children, "cpu_here": here,
            "bits": digest(table)}


def _in_child(*args: str) -> dict[str, Any]:
    """One measurement in a new Python process (`--child ...`), its result."""
    with tempfile.TemporaryFile("w+") as errors:
        done = subprocess.run([sys.executable, __file__, *args], stdout=subprocess.PIPE,
                              stderr=errors, text=True, check=False)
        if done.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"benchmark process {args} failed:\n{errors.read()[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


class _ClusterProcess:
    """A running LocalCluster in a process of its own (`--child running`), which sweeps
    when asked: its scheduler's and nannies' CPU time (in that process) is its own, not
    mixed with another cluster's, and this process keeps no Dask threads."""

    def __init__(self, n: int, seed: int, profiler: bool):
        self.errors = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--child", "running", "--n", str(n), "--seed",
             str(seed)] + ([] if profiler else ["--no-profiler"]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors, text=True)
        self._answer()  # warmed up

    def sweep(self, n: int, seed: int) -> dict[str, Any]:
        self.process.stdin.write(f"{n} {seed}\n")
        self.process.stdin.flush()
        return self._answer()

    def _answer(self) -> dict[str, Any]:
        line = self.process.stdout.readline()
        if not line:
            self.errors.seek(0)
            raise RuntimeError(f"the cluster's process failed:\n{self.errors.read()[-3000:]}")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()
        self.errors.close()


def _cluster_child(n: int, seed: int, profiler: bool) -> None:
    """(`--child running`) A warmed running cluster, sweeping `N SEED` read from stdin."""
    cluster, client = _running_cluster(n, seed, profiler)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        count, seed_ = (int(v) for v in line.split())
        print(json.dumps(_dask_round(client, count, seed_)), flush=True)
    client.close()
    cluster.close()


def _process_cpu(processes: list[Any]) -> float:
    return sum(p.cpu_times().user + p.cpu_times().system for p in processes)


def _dask_round(client: Any, n: int, seed: int) -> dict[str, Any]:
    """One sweep on the cluster of `client`: wall time, CPU time of its worker processes
    and of this process (client, scheduler and nannies of a LocalCluster), the bits."""
    import psutil

    workers = [psutil.Process(pid) for pid in client.run(os.getpid).values()]
    cpu, here = _process_cpu(workers), time.process_time()
    wall, table = timed_sweep(n, seed, backend="numba", client=client)
    here = time.process_time() - here
    return {"wall": wall, "cpu": _process_cpu(workers) - cpu + here, "cpu_here": here,
            "bits": digest(table)}


def _local_cluster(profiler: bool = True) -> tuple[Any, Any]:
    """A LocalCluster of 2 worker processes (1 thread each) and its Client; `profiler`
    False turns off the workers' statistical profiler (DASK_QUIET)."""
    import dask
    import distributed

    with dask.config.set({} if profiler else DASK_QUIET):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    return cluster, distributed.Client(cluster)


def _fresh_round(n: int, seed: int) -> dict[str, Any]:
    """A new LocalCluster: its construction (LocalCluster(...) and Client: worker processes
    spawned, distributed imported) timed apart, then one sweep on its just-started workers
    (whose first task imports blocksim and numba and loads the model: in the sweep). As
    in pool_in_child, this process first sweeps once on its own (its model loaded)."""
    timed_sweep(1, seed + 1, backend="numba", workers=1)
    started = time.perf_counter()
    cluster, client = _local_cluster()
    start = time.perf_counter() - started
    try:
        found = _dask_round(client, n, seed)
    finally:
        client.close()
        cluster.close()
    return {**found, "start": start}


def _running_cluster(n: int, seed: int, profiler: bool) -> tuple[Any, Any]:
    """_local_cluster, warmed by a sweep of the ball with another seed (its workers hold
    the compiled model, as a long-lived cluster's)."""
    cluster, client = _local_cluster(profiler)
    timed_sweep(min(n, WARM_UP_RUNS), seed + 2, backend="numba", client=client)
    return cluster, client


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


# name: what it is (the local pool first: the others are compared with it round by round)
VARIANTS = {"two": "local pool, 2 workers",
            "dask_fresh": "Dask, a LocalCluster started for the sweep (the target's reading: "
                          "its construction not counted; the sweep on its just-started "
                          "workers)",
            "dask_running": "Dask, running cluster (swept before), default configuration",
            "dask_quiet": "Dask, running cluster (swept before), workers' profiler off"}
TARGET_VARIANT = "dask_fresh"  # what issue 15's "the same sweep on a Dask LocalCluster" means


def numba_cases(n: int, seed: int, dask: bool, rounds: int = ROUNDS) -> dict[str, Any]:
    """The 1-worker sweep (once, in this process), then `rounds` interleaved rounds of
    the VARIANTS: per variant the medians of wall and CPU seconds (keys as VARIANTS, and
    NAME_cpu), each round's values (NAME_walls, NAME_cpus), overheads over the pool as
    medians of the rounds' ratios (over_NAME, cpu_over_NAME), whether every sweep gave the
    1-worker run's bits (same_NAME); the fresh cluster's construction (dask_start)."""
    print(f"numba backend, {n} runs of the ball (30 s each, mu and v0 drawn), "
          f"{rounds} interleaved rounds:")
    # Warm-up, untimed: the compiled loop and the model's functions into numba's disk
    # cache, so that no configuration below pays for compilations another one made.
    started = time.perf_counter()
    timed_sweep(min(n, WARM_UP_RUNS), seed + 1, backend="numba", workers=2)
    print(f"  warm-up (the compiled loop and the model's functions into numba's disk cache): "
          f"{time.perf_counter() - started:.1f} s")
    found: dict[str, Any] = {}
    found["one"], one = timed_sweep(n, seed, backend="numba", workers=1)
    found["counts"], bits = one.counts(), digest(one)
    print(f"  local, 1 worker (in this process, once): {found['one']:.2f} s "
          f"({1e3 * found['one'] / n:.2f} ms a run)  {found['counts']}")
    # Each sweep in a process of its own (the pool's, the fresh cluster's) or its cluster's
    # (_ClusterProcess): a pool started here would use a fork server if Dask's threads ran
    # here, and a LocalCluster's scheduler and nannies run in the process that made it.
    clusters: list[_ClusterProcess] = []
    options = ("--n", str(n), "--seed", str(seed))
    measures = {"two": functools.partial(_in_child, "--child", "pool", *options)}
    if dask and _has_dask():
        for name, profiler in (("dask_running", True), ("dask_quiet", False)):
            clusters.append(_ClusterProcess(n, seed, profiler))
            measures[name] = functools.partial(clusters[-1].sweep, n, seed)
        measures["dask_fresh"] = functools.partial(_in_child, "--child", "fresh", *options)
    measured: dict[str, list[dict[str, Any]]] = {name: [] for name in measures}
    try:
        for round_ in range(rounds):
            for name, measure in measures.items():
                measured[name].append(measure())
            print(f"  round {round_ + 1}: " + ", ".join(
                f"{name} {m[-1]['wall']:.2f} s" for name, m in measured.items()), flush=True)
    finally:
        for cluster in clusters:
            cluster.close()
    pool = measured["two"]
    for name, runs in measured.items():
        found[f"{name}_walls"] = [r["wall"] for r in runs]
        found[f"{name}_cpus"] = [r["cpu"] for r in runs]
        found[name] = statistics.median(found[f"{name}_walls"])
        found[f"{name}_cpu"] = statistics.median(found[f"{name}_cpus"])
        found[f"same_{name}"] = all(r["bits"] == bits for r in runs)
        found[f"{name}_cpu_here"] = statistics.median(r["cpu_here"] for r in runs)
        line = (f"  {VARIANTS[name]}: {found[name]:.2f} s median (spread "
                f"{_spread(found[f'{name}_walls'])} s), CPU {found[f'{name}_cpu']:.2f} s "
                f"median (spread {_spread(found[f'{name}_cpus'])} s; the calling process's "
                f"{found[f'{name}_cpu_here']:.2f} s)")
        if name != "two":
            walls = [r["wall"] / p["wall"] - 1 for r, p in zip(runs, pool)]
            cpus = [r["cpu"] / p["cpu"] - 1 for r, p in zip(runs, pool)]
            found[f"over_{name}"] = statistics.median(walls)
            found[f"cpu_over_{name}"] = statistics.median(cpus)
            line += (f"; over the pool's sweep of the same round: wall "
                     f"{_percents(walls)}, CPU {_percents(cpus)}")
        print(f"{line}; same bits: {found[f'same_{name}']}")
    found["speedup"] = found["one"] / found["two"]
    print(f"  the pool's 2 workers: {found['speedup']:.2f}x the 1-worker run (target >= 1.7x)")
    if "dask_fresh" in measured:
        fresh = measured["dask_fresh"]
        found["dask_starts"] = [r["start"] for r in fresh]
        found["dask_start"] = statistics.median(found["dask_starts"])
        totals = [r["start"] + r["wall"] for r in fresh]
        found["dask_fresh_total"] = statistics.median(totals)
        found["over_dask_fresh_total"] = statistics.median(
            t / p["wall"] - 1 for t, p in zip(totals, pool))
        print(f"  Dask, fresh cluster's construction (LocalCluster + Client): "
              f"{found['dask_start']:.2f} s median (spread {_spread(found['dask_starts'])} s); "
              f"construction + sweep {found['dask_fresh_total']:.2f} s median, "
              f"{100 * found['over_dask_fresh_total']:+.0f} % over the pool's sweep")
    return found


def _percents(ratios: list[float]) -> str:
    """A median overhead and each round's, as percentages."""
    return (f"{100 * statistics.median(ratios):+.0f} % median "
            f"({', '.join(f'{100 * r:+.0f}' for r in ratios)})")


def _has_dask() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("  dask: not installed (pip install 'blocksim[dask]')")
        return False
    return True


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
    """docs/performance.md's rows of issue 15's targets (about 5 minutes)."""
    from bench_suite import fmt_time

    import runtime_params

    quick = suite.quick
    n, python_n, rounds = (200, 20, 1) if quick else (10_000, 100, ROUNDS)
    rows, ratio = [], None
    if "numba" in suite.backends:
        ratio = runtime_params.new_mu_ratio(3 if quick else 21)
        rows.append(["ball with a new mu against a rerun with the same mu (numba, medians "
                     "of interleaved runs)", f"{ratio:.2f}×"])
        found = numba_cases(n, 2026, dask=True, rounds=rounds)
        rows.append([f"{n:,}-run Monte Carlo, 1 worker (in the calling process, once)",
                     fmt_time(found["one"])])
        for name, what in VARIANTS.items():
            if name not in found:
                continue
            walls = found[f"{name}_walls"]
            text = (f"{fmt_time(found[name])} ({fmt_time(min(walls))}-{fmt_time(max(walls))}"
                    f"; CPU {fmt_time(found[f'{name}_cpu'])})")
            if name == "two":
                text += f", {found['speedup']:.2f}× the 1-worker run"
            else:
                text += (f", {100 * found[f'over_{name}']:+.0f} % over the pool (CPU "
                         f"{100 * found[f'cpu_over_{name}']:+.0f} %)")
            rows.append([f"{n:,}-run Monte Carlo, {what} (same bits: "
                         f"{found[f'same_{name}']})", text])
        if "dask_start" in found:
            rows.append(["Dask, fresh cluster: its construction (LocalCluster(...) + "
                         "Client: 2 worker processes spawned), and construction + sweep",
                         f"{fmt_time(found['dask_start'])}; {fmt_time(found['dask_fresh_total'])}"
                         f", {100 * found['over_dask_fresh_total']:+.0f} % over the pool"])
    py = python_overhead(python_n, 2026)
    rows.append([f"python backend, per-run overhead of a {python_n}-run sweep (CPU; "
                 f"with_params {py['with_params']:.3f} ms, the rest {py['rest']:.3f} ms; "
                 f"once a sweep: load, compile and checks {py['setup']:.0f} ms)",
                 f"{py['overhead']:.3f} ms"])
    suite.section(
        "Sweeps and Monte Carlo (issue 15)",
        f"The bouncing ball with mu ~ uniform(0.5, 0.95) and v0 ~ normal(0, 1), 30 s a "
        f"run, metrics the time of rest and the number of bounces (`benchmarks/sweep.py`), "
        f"after an untimed warm-up of {WARM_UP_RUNS} runs (numba's disk cache). The local "
        f"pool and the Dask variants run in {rounds} interleaved round(s): medians of the "
        f"sweeps' wall times (their range in brackets) and of their CPU time (the workers' "
        f"and the calling process's: the client, and a LocalCluster's scheduler and "
        f"nannies); overheads are medians of each round's ratio to the pool's sweep of that "
        f"round. The pool runs in a new process that swept once before (its forked workers "
        f"inherit the loaded model; each sweep's workers are new). Dask's running clusters "
        f"swept the ball before (their workers hold the compiled model); the fresh cluster "
        f"is made in the round, its construction timed apart, and its sweep includes the "
        f"workers' first tasks importing blocksim and numba and loading the model. The "
        f"Python overhead is CPU time a run beside the simulations (model from values "
        f"included).",
        ["what", "measured"], rows)
    if ratio is not None:
        suite.target("sweeps: ball with a new mu on numba within 1.5× of a rerun",
                     f"{ratio:.2f}×", ratio <= runtime_params.TARGET_RATIO)
        suite.target(f"sweeps: {n:,}-run Monte Carlo under 30 s on 2 cores (2 workers)",
                     fmt_time(found["two"]), None if quick else found["two"] < 30)
        suite.target("sweeps: 2 workers at least 1.7× faster than 1", f"{found['speedup']:.2f}×",
                     found["speedup"] >= 1.7 and found["same_two"])
        # The target's reading first (TARGET_VARIANT); the others are shown as targets too,
        # each saying which reading it is.
        for name, key, what in (
                ("dask_fresh", "over_dask_fresh", "a LocalCluster started for the sweep, its "
                 "construction not counted: the target's reading"),
                ("dask_fresh", "over_dask_fresh_total", "a LocalCluster started for the sweep, "
                 "its construction counted"),
                ("dask_running", "over_dask_running", "a running cluster that swept before"),
                ("dask_quiet", "over_dask_quiet", "a running cluster that swept before, "
                 "workers' profiler off")):
            if key in found:
                suite.target(f"sweeps: Dask ({what}) within 25 % of the local pool, same bits",
                             f"{100 * found[key]:+.0f} % (CPU of the sweep "
                             f"{100 * found[f'cpu_over_{name}']:+.0f} %)",
                             found[key] < 0.25 and found[f"same_{name}"])
    suite.target("sweeps: Python-backend overhead under 1 ms a run",
                 f"{py['overhead']:.3f} ms", py["overhead"] < 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="numba Monte Carlo runs")
    parser.add_argument("--python-n", type=int, default=200, help="python-backend runs")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help="interleaved rounds of the pool and Dask")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--child", choices=["pool", "fresh", "running"],
                        help=argparse.SUPPRESS)  # (one measurement: see numba_cases)
    parser.add_argument("--no-profiler", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        logging.getLogger("distributed").setLevel(logging.ERROR)  # its shutdown chatter
        if args.child == "running":
            _cluster_child(args.n, args.seed, not args.no_profiler)
        else:
            child = pool_in_child if args.child == "pool" else _fresh_round
            print(json.dumps(child(args.n, args.seed)))
        return
    if args.python_n > 0:
        python_overhead(args.python_n, args.seed)
    numba_cases(args.n, args.seed, not args.no_dask, args.rounds)


if __name__ == "__main__":
    main()
