"""Physical networks with Newton blocks on the numba backend against the Python backend:
what a user pays the first time (numba compiling the network's code) and on every later
run.

    python benchmarks/physical_numba.py [--repeats 7] [--cases shockley pendulum]

Each case runs in a new Python process with an empty code cache (BLOCKSIM_CACHE_DIR in a
temporary folder), which times `blocksim.compile`, the first numba run (numba compiling the
generated code, the engine's loop already cached), then `repeats` runs of each backend
interleaved, logging every signal the example logs; medians are printed. The engine's loop
is compiled once per machine before any timing (a warm-up run of another model).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EXAMPLES = ROOT / "diagrams" / "physical"
CASES = {"shockley": ("c21_diode_shockley.json",
                     "C21 RLC circuit, Shockley diode (Newton in 1 unknown)"),
         "pendulum": ("c21_pendulum_cartesian.json",
                      "Cartesian pendulum, states switching (damped Newton in 2 unknowns)")}


def measure_here(case: str, repeats: int) -> dict:
    """Time one case in this process (the code cache is expected empty)."""
    import blocksim

    started = time.perf_counter()
    model = blocksim.compile(blocksim.load(EXAMPLES / CASES[case][0]))
    compiled = time.perf_counter()
    first = blocksim.simulate(model, backend="numba")
    first_run = time.perf_counter() - compiled
    if first.warnings:
        raise SystemExit(f"{case}: {first.warnings}")
    python, numba = [], []
    for _ in range(repeats):
        a = time.perf_counter()
        blocksim.simulate(model)
        b = time.perf_counter()
        blocksim.simulate(model, backend="numba")
        numba.append(time.perf_counter() - b)
        python.append(b - a)
    return {"case": case, "compile": compiled - started, "first_numba": first_run,
            "python": statistics.median(python), "numba": statistics.median(numba)}


def measure(case: str, repeats: int) -> dict:
    """One case in a new process with an empty code cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, BLOCKSIM_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, __file__, "--child", case, "--repeats",
                              str(repeats)], capture_output=True, text=True, env=env,
                             check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure_here(args.child, args.repeats)))
        return 0
    import blocksim  # the engine's loop, compiled once per machine, is not what is measured

    blocksim.simulate(blocksim.compile(blocksim.load(EXAMPLES / "c21_diode_ideal.json")),
                      backend="numba")
    for case in args.cases:
        r = measure(case, args.repeats)
        print(f"{CASES[case][1]}:\n  compile {r['compile']:.2f} s; first numba run "
              f"{r['first_numba']:.2f} s (numba compiling the network's code)\n"
              f"  per run, median of {args.repeats}: Python {r['python'] * 1e3:.1f} ms, "
              f"numba {r['numba'] * 1e3:.2f} ms ({r['python'] / r['numba']:.0f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
