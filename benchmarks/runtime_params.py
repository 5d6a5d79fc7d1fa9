"""What a new parameter value costs once a diagram is compiled (runtime parameters).

    python benchmarks/runtime_params.py [--repeats 21]

The bouncing ball (diagrams/bouncing_ball.json, 30 s, about 280 bounces) compiled once:

- numba: a run with a new `mu` (`model.with_params` then `simulate`) against a rerun with
  the same `mu`, interleaved, medians; the target is a ratio within 1.5 (no compilation:
  the model's numba functions read parameters from the loop's scratch array);
- `with_params` alone, per call (best and median of batches; wall and CPU time, the
  latter less disturbed by other processes on a shared machine), for `mu` (one block
  reads it) and `mu` with `v0` (two blocks);
- Python backend: the same two runs, and the per-run overhead of a new value (a run of
  the ball stopped at 1e-9 s: with_params plus everything a run does but integrate).

All in this process, after one warm-up run per backend (the numba compilation, once).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import blocksim  # noqa: E402
from blocksim.compiler import compile_diagram  # noqa: E402

BALL = ROOT / "diagrams" / "bouncing_ball.json"
TARGET_RATIO = 1.5


def interleaved(model, backend: str, repeats: int, **run) -> tuple[float, float]:
    """Median seconds of (a run with a new mu, a rerun with the same mu), interleaved."""
    new, same = [], []
    base_mu = float(model.runtime.names[""]["mu"])
    for k in range(repeats):
        mu = base_mu * (1.0 + 1e-12 * (k + 1))  # a new value, the same bounces: equal work
        started = time.perf_counter()
        blocksim.simulate(model.with_params({"mu": mu}), backend=backend, **run)
        new.append(time.perf_counter() - started)
        started = time.perf_counter()
        blocksim.simulate(model, backend=backend, **run)
        same.append(time.perf_counter() - started)
    return statistics.median(new), statistics.median(same)


def with_params_cost(model, values, clock=time.perf_counter, batches: int = 15,
                     per_batch: int = 200) -> tuple[float, float]:
    """(best, median) seconds of one with_params call with new values (each name's value
    times 1 + a different tiny factor per call), by `clock`."""
    times = []
    count = 0
    for _ in range(batches):
        started = clock()
        for _ in range(per_batch):
            count += 1
            model.with_params({name: v * (1.0 + 1e-9 * count) for name, v in values.items()})
        times.append((clock() - started) / per_batch)
    return min(times), statistics.median(times)


def new_mu_ratio(repeats: int) -> float:
    """The numba ratio of a run with a new mu to a rerun with the same (after a warm-up)."""
    model = compile_diagram(blocksim.load(BALL))
    blocksim.simulate(model, backend="numba")
    new, same = interleaved(model, "numba", repeats)
    return new / same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args(argv)
    model = compile_diagram(blocksim.load(BALL))
    started = time.perf_counter()
    blocksim.simulate(model, backend="numba")  # the warm-up: compiles (or loads) once
    print(f"numba warm-up (compile or load from cache): {time.perf_counter() - started:.3f} s")
    new, same = interleaved(model, "numba", args.repeats)
    ratio = new / same
    print(f"numba, ball 30 s: new mu {new * 1e3:.2f} ms, same mu {same * 1e3:.2f} ms, "
          f"ratio {ratio:.2f} (target <= {TARGET_RATIO})")
    for values in ({"mu": 0.9}, {"mu": 0.9, "v0": 1.0}):
        best, median = with_params_cost(model, values)
        cpu, _ = with_params_cost(model, values, time.process_time)
        print(f"with_params {sorted(values)} per call: wall best {best * 1e6:.0f} us, "
              f"median {median * 1e6:.0f} us; CPU best {cpu * 1e6:.0f} us")
    blocksim.simulate(model)  # warm-up of the Python backend's derived functions
    new_py, same_py = interleaved(model, "python", max(3, args.repeats // 4))
    print(f"python, ball 30 s: new mu {new_py * 1e3:.1f} ms, same mu {same_py * 1e3:.1f} ms")
    new_short, same_short = interleaved(model, "python", args.repeats, stop_time=1e-9)
    print(f"python per-run overhead (run to 1e-9 s): new mu {new_short * 1e3:.3f} ms "
          f"(with_params included), same mu {same_short * 1e3:.3f} ms")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
