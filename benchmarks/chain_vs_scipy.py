"""The 100-lag chain on the python backend against the hand-written vectorised scipy RK45,
interleaved in one process, with where blocksim's time goes.

    python benchmarks/chain_vs_scipy.py [--rounds 15] [--n 100]

Each round times every case once (CPU time of this process, `time.process_time`, over a
few calls), so a machine whose load changes affects all cases alike; the report gives
medians over the rounds and the median of the per-round ratios, with their range. Cases:
blocksim `simulate` and scipy `solve_ivp` with 2 lags logged (scipy: final state only) and
with every lag logged (scipy: every lag at the 501 grid times, t_eval), and, to show where
blocksim's time goes, the bare DOPRI5 steps of the same run (`Dopri5Stepper` from the same
start with the run's right-hand side) and that many derivative calls alone. Every blocksim
and scipy result is checked against the exact solution first.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chain  # noqa: E402

import blocksim  # noqa: E402
from blocksim.engine.dopri5 import Dopri5Stepper  # noqa: E402
from blocksim.engine.simulator import RunState, Simulator  # noqa: E402

CALLS = 5  # calls per case per round (a run takes milliseconds)


def bare_steps(model):
    """(function stepping the run's DOPRI5 steps alone, steps, derivative calls, function
    making that many derivative calls alone)."""
    sim = Simulator(model, model.settings.replaced(backend="python"))
    st = RunState(model.settings.start, model.x0.copy(), model.m0.copy(),
                  np.zeros(model.n_zc))
    sim._event(st, init=True)  # the Step block's output settled at t = 0, as in a run
    rhs, s = sim._rhs(st), model.settings

    def stepping() -> tuple[int, int]:
        stepper = Dopri5Stepper(rhs, s.start, st.x, s.stop, s.rtol, model.state_atol(s.atol),
                                s.max_step, None)
        steps = 0
        while stepper.t < s.stop:
            stepper.step()
            steps += 1
        return steps, stepper.evals

    steps, evals = stepping()
    x = st.x + 0.5

    def derivs() -> None:
        for _ in range(evals):
            rhs(0.5, x)
    return stepping, steps, evals, derivs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--n", type=int, default=100)
    args = parser.parse_args()
    n = args.n
    grid = np.linspace(0.0, chain.T_END, 501)
    exact = chain.exact(n, grid)
    two, every = (blocksim.compile(chain.diagram(n, log_all=a)) for a in (False, True))
    stepping, steps, evals, derivs = bare_steps(two)
    for model in (two, every):
        error = chain.error(blocksim.simulate(model, backend="python"), n)
        assert error < 1e-5, f"blocksim error {error}"
    assert np.max(np.abs(chain.scipy_vectorised(n) - exact[-1])) < 1e-5
    assert np.max(np.abs(chain.scipy_vectorised(n, grid=grid) - exact)) < 1e-5
    cases = {
        "blocksim, 2 logged": lambda: blocksim.simulate(two, backend="python"),
        "scipy, 2 logged": lambda: chain.scipy_vectorised(n),
        "blocksim, all logged": lambda: blocksim.simulate(every, backend="python"),
        "scipy, all logged": lambda: chain.scipy_vectorised(n, grid=grid),
        "bare DOPRI5 steps": stepping,
        "derivative calls alone": derivs,
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            started = time.process_time()
            for _ in range(CALLS):
                fn()
            times[name].append((time.process_time() - started) / CALLS)
    median = {name: statistics.median(v) for name, v in times.items()}
    print(f"{n}-lag chain, {args.rounds} interleaved rounds of {CALLS} calls, CPU time per "
          f"call: median [fastest - slowest round]")
    for name, values in times.items():
        print(f"  {name:24s} {median[name] * 1e6:8.0f} us  [{min(values) * 1e6:.0f} - "
              f"{max(values) * 1e6:.0f}]")
    for label in ("2 logged", "all logged"):
        ratios = [s / b for s, b in zip(times[f"scipy, {label}"], times[f"blocksim, {label}"])]
        print(f"  scipy / blocksim, {label}: {statistics.median(ratios):.2f}x per round "
              f"[{min(ratios):.2f} - {max(ratios):.2f}] (target 1.5x)")
    per_step = (median["bare DOPRI5 steps"] - median["derivative calls alone"]) / steps
    print(f"  {steps} steps, {evals} derivative calls: {per_step * 1e6:.1f} us per step in "
          f"the stepper's own arithmetic, {median['derivative calls alone'] / evals * 1e6:.2f}"
          f" us per derivative call; outside the steps (set-up, grid, results) "
          f"{(median['blocksim, 2 logged'] - median['bare DOPRI5 steps']) * 1e6:.0f} us per "
          f"run with 2 logged")


if __name__ == "__main__":
    main()
