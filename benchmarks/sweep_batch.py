"""Per-run cost of a numba sweep's batch: many runs in one compiled call (the batch loop,
blocksim.engine.native.batch) against one Simulator per run (the per-run path).

    python benchmarks/sweep_batch.py [--n 2000] [--batch 256] [--rounds 5]

The bouncing ball's Monte Carlo (diagrams/bouncing_ball.json, 30 s runs, mu ~ uniform(0.5,
0.95), v0 ~ normal(0, 1); metrics the time of rest and the number of bounces), run in this
process through `worker.run_batch` in batches as a pool worker gets them, both paths in
turn in each round (interleaved: a busy machine slows both alike; the process's CPU time
is reported beside the wall time, as it depends less on what else runs), after an
untimed warm-up of each. Both include everything a worker does per run: the parameter vector
(`with_params`), the simulation, the Results and the metrics. Reports the median over the
rounds of the milliseconds a run (wall and CPU), and checks that both paths give the same rows.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from blocksim.api.facade import load  # noqa: E402
from blocksim.sweeps import worker  # noqa: E402
from blocksim.sweeps.metrics import parse_metrics  # noqa: E402

BALL = ROOT / "diagrams" / "bouncing_ball.json"
METRICS = ["time:ball.lower limit:1", "count:ball.reset"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="runs per round and path")
    parser.add_argument("--batch", type=int, default=256, help="runs per batch")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    diagram = load(BALL)
    job = worker.Job("sweep-batch-benchmark", diagram, {},
                     diagram.simulation.replaced(backend="numba"), ("mu", "v0"),
                     tuple(parse_metrics(METRICS)))
    rng = np.random.default_rng(1)
    runs = [(i, (float(rng.uniform(0.5, 0.95)), float(rng.normal(0, 1))))
            for i in range(args.n)]
    batches = [runs[i:i + args.batch] for i in range(0, len(runs), args.batch)]
    batched = worker.batch_runner

    def sweep(use_batch: bool) -> tuple[float, float, list]:
        worker.batch_runner = batched if use_batch else (lambda job: None)
        try:
            started, cpu = time.perf_counter(), time.process_time()
            rows = [row for batch in batches for row in worker.run_batch(job, batch)]
            return time.perf_counter() - started, time.process_time() - cpu, rows
        finally:
            worker.batch_runner = batched

    sweep(True)  # warm-up: the model, its numba functions, the batch loop
    sweep(False)
    wall: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    same = True
    for _ in range(args.rounds):
        rows = {}
        for use_batch in (True, False):
            seconds, cpu_seconds, rows[use_batch] = sweep(use_batch)
            wall[use_batch].append(1e3 * seconds / args.n)
            cpu[use_batch].append(1e3 * cpu_seconds / args.n)
        same = same and [(r.status, r.metrics) for r in rows[True]] == [
            (r.status, r.metrics) for r in rows[False]]
    print(f"ball Monte Carlo, {args.n} runs of 30 s in batches of {args.batch}, "
          f"{args.rounds} interleaved rounds, one process; ms a run, median (rounds):")
    for name, use_batch in (("per-run path", False), ("batch loop", True)):
        print(f"  {name:13s} wall {statistics.median(wall[use_batch]):7.3f} "
              f"({', '.join(f'{t:.2f}' for t in wall[use_batch])})  CPU "
              f"{statistics.median(cpu[use_batch]):7.3f} "
              f"({', '.join(f'{t:.2f}' for t in cpu[use_batch])})")
    ratio = statistics.median(wall[False]) / statistics.median(wall[True])
    ratio_cpu = statistics.median(cpu[False]) / statistics.median(cpu[True])
    print(f"  per-run / batch: wall {ratio:.2f}x, CPU {ratio_cpu:.2f}x; same rows: {same}")


if __name__ == "__main__":
    main()
