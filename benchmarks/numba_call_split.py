"""Where one short run on the numba backend spends its time (issue 14: within 1.5x of the
hand-written loop, per call, all Python set-up included).

The 100-lag chain (34 steps, 501 grid rows), per call, CPU time of this process, medians
of interleaved rounds: `blocksim.simulate(model, backend="numba")`, `Simulator(...)`
alone, the compiled loop's call inside it (timed around `native.kernel.segment`), and the
hand-written numba loop (`reference_loop`). Then the cost of numba's dispatch of the
loop's 25 arguments: a call that returns at once (bound = start) through the dispatcher
and through its compiled entry point (`overloads[signature].entry_point`, no type
resolution), against the Python around it (the parameter copies alone).

    python benchmarks/numba_call_split.py [--rounds 9]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chain  # noqa: E402
import reference_loop as rl  # noqa: E402

import blocksim  # noqa: E402
from blocksim.engine.native import kernel as nk  # noqa: E402
from blocksim.engine.native import layout as nt  # noqa: E402
from blocksim.engine.simulator import Simulator  # noqa: E402

N = 100


def per_call(fn: Callable[[], object], calls: int) -> float:
    """CPU microseconds per call of fn."""
    started = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - started) / calls * 1e6


def split(rounds: int) -> dict[str, list[float]]:
    model = blocksim.compile(chain.diagram(N))
    result = blocksim.simulate(model, backend="numba")
    assert chain.error(result, N) < 1e-5, chain.error(result, N)  # the run is right
    settings = model.settings.replaced(backend="numba")
    hand = lambda: rl.lag_chain(N, chain.T_END, chain.RTOL, chain.ATOL, 500)  # noqa: E731
    hand()
    real, spent = nk.segment, [0.0]

    def timed(*args):
        started = time.process_time()
        real(*args)
        spent[0] += time.process_time() - started

    rows: dict[str, list[float]] = {k: [] for k in (
        "simulate", "Simulator(...)", "the loop's call", "the hand loop")}
    for _ in range(rounds):
        rows["simulate"].append(per_call(lambda: blocksim.simulate(model, backend="numba"),
                                         200))
        rows["Simulator(...)"].append(per_call(lambda: Simulator(model, settings), 200))
        nk.segment, spent[0] = timed, 0.0
        try:
            per_call(lambda: blocksim.simulate(model, backend="numba"), 200)
        finally:
            nk.segment = real
        rows["the loop's call"].append(spent[0] / 200 * 1e6)
        rows["the hand loop"].append(per_call(hand, 200))
    return rows


def dispatch(rounds: int) -> dict[str, list[float]]:
    model = blocksim.compile(chain.diagram(N))
    sim = Simulator(model, model.settings.replaced(backend="numba"))
    loop, c = sim.native, sim.native.c
    fpar0, ipar0 = loop.fpar.copy(), loop.ipar.copy()
    fpar0[nt.F_T] = fpar0[nt.F_BOUND] = model.settings.start  # returns at once
    x, m, z = model.x0.copy(), model.m0.copy(), np.zeros(model.n_zc)
    entry = nk.segment.overloads[nk.segment.signatures[0]].entry_point

    def call(fn):
        def one():
            loop.fpar[:] = fpar0
            loop.ipar[:] = ipar0
            if fn is not None:
                fn(c.addresses, x, m, z, loop.zdir, c.zmove, c.zc_owner, c.observed,
                   c.selection, loop.fpar, loop.ipar, loop.out_t, loop.out_y, loop.x_ev,
                   loop.x_bad, loop.log_t, loop.log_b, loop.log_k, sim.zeno, loop.sched,
                   loop.hit_t, loop.trig, c.hch, c.hfl, c.hup)
        return one

    call(nk.segment)()
    assert loop.ipar[nt.I_STEPS] == 0  # nothing integrated: the call is all overhead
    rows: dict[str, list[float]] = {k: [] for k in (
        "empty call, dispatcher", "empty call, entry point", "its parameter copies")}
    for _ in range(rounds):
        rows["empty call, dispatcher"].append(per_call(call(nk.segment), 5000))
        rows["empty call, entry point"].append(per_call(call(entry), 5000))
        rows["its parameter copies"].append(per_call(call(None), 5000))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    for rows in (split(args.rounds), dispatch(args.rounds)):
        for name, values in rows.items():
            print(f"{name:26s} {statistics.median(values):8.1f} µs  "
                  f"[{min(values):.1f} .. {max(values):.1f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
