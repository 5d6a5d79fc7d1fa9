"""Prototype for issue 14: one numba loop compiled per model, its derivative called directly.

The numba backend's loop (`blocksim.engine.native.kernel`) is compiled once per machine and
calls a model's functions through their machine addresses, so numba cannot inline them.
This prototype is the alternative the issue names: a DOPRI5 loop made for one model, with
the model's generated `deriv` (the numba backend's own module for it) bound as a constant,
so LLVM sees the derivative inside the loop. It handles what the lag chain needs only (no
events, logged signals that are states): enough to measure the two costs that decide
between the designs, per call and compile time, on the same steps as the real backend
(checked: same number of steps, same grid values to rounding).

    python benchmarks/specialised_kernel.py
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
import chain  # noqa: E402

import blocksim  # noqa: E402
from blocksim.engine import dopri5  # noqa: E402
from blocksim.engine.native import build  # noqa: E402


def specialised_loop(deriv):
    """A DOPRI5 loop with `deriv` (a numba dispatcher, f(t, x, m, z, out, S)) bound in."""
    from numba import njit

    C, A, B, E, D = dopri5.C, dopri5.A, dopri5.B, dopri5.E, dopri5.D
    safety, lo, hi = dopri5.SAFETY, dopri5.MIN_FACTOR, dopri5.MAX_FACTOR
    exponent = dopri5.ERROR_EXPONENT

    @njit(nogil=True)
    def run(x0, m, z, S, atol, rtol, t0, t_end, interval, n_grid, selection):
        n = x0.size
        x, x_new, xs, f = x0.copy(), np.empty(n), np.empty(n), np.empty(n)
        K = np.empty((7, n))
        out_t = np.empty(n_grid + 1)
        out_y = np.empty((n_grid + 1, selection.size))
        out_t[0] = t0
        for j in range(selection.size):
            out_y[0, j] = x[selection[j]]
        deriv(t0, x, m, z, f, S)
        d0 = d1 = 0.0
        for j in range(n):
            sc = atol[j] + abs(x[j]) * rtol
            d0 += (x[j] / sc) ** 2
            d1 += (f[j] / sc) ** 2
        d0, d1 = np.sqrt(d0 / n), np.sqrt(d1 / n)
        h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        h0 = min(h0, t_end - t0)
        for j in range(n):
            xs[j] = x[j] + h0 * f[j]
        deriv(t0 + h0, xs, m, z, x_new, S)
        d2 = 0.0
        for j in range(n):
            d2 += ((x_new[j] - f[j]) / (atol[j] + abs(x[j]) * rtol)) ** 2
        d2 = np.sqrt(d2 / n) / h0
        h1 = (max(1e-6, h0 * 1e-3) if d1 <= 1e-15 and d2 <= 1e-15
              else (0.01 / max(d1, d2)) ** 0.2)
        h = min(100.0 * h0, h1, t_end - t0)
        t, k_grid, steps = t0, 1, 0
        while t < t_end:
            rejected = False
            h_next = h
            while True:
                t_new = min(t + h, t_end)
                h = t_new - t
                for j in range(n):
                    K[0, j] = f[j]
                for s in range(1, 6):
                    for j in range(n):
                        acc = 0.0
                        for r in range(s):
                            acc += A[s, r] * K[r, j]
                        xs[j] = x[j] + h * acc
                    deriv(t + C[s] * h, xs, m, z, K[s], S)
                for j in range(n):
                    acc = 0.0
                    for r in range(6):
                        acc += B[r] * K[r, j]
                    x_new[j] = x[j] + h * acc
                deriv(t_new, x_new, m, z, K[6], S)
                err = 0.0
                for j in range(n):
                    e = 0.0
                    for r in range(7):
                        e += E[r] * K[r, j]
                    err += (h * e / (atol[j] + max(abs(x[j]), abs(x_new[j])) * rtol)) ** 2
                err = np.sqrt(err / n)
                if err < 1.0:
                    factor = hi if err == 0.0 else min(hi, safety * err ** exponent)
                    h_next = h * (min(1.0, factor) if rejected else factor)
                    break
                h *= max(lo, safety * err ** exponent)
                rejected = True
            steps += 1
            while k_grid <= n_grid and t0 + k_grid * interval <= t_new:
                tg = t0 + k_grid * interval
                sg = (tg - t) / h
                sg1 = 1.0 - sg
                out_t[k_grid] = tg
                for q in range(selection.size):
                    j = selection[q]
                    r0 = x_new[j] - x[j]
                    r1 = h * K[0, j] - r0
                    r2 = r0 - h * K[6, j] - r1
                    d = 0.0
                    for r in range(7):
                        d += D[r] * K[r, j]
                    out_y[k_grid, q] = x[j] + sg * (r0 + sg1 * (r1 + sg * (r2 + sg1 * h * d)))
                k_grid += 1
            t = t_new
            for j in range(n):
                x[j] = x_new[j]
                f[j] = K[6, j]
            h = h_next
        return out_t, out_y, steps
    return run


def measure(n: int = 100, rounds: int = 9) -> dict[str, float]:
    """Compile time and per-call CPU of the specialised loop, the backend's loop per
    simulate and the hand-written loop, medians of interleaved rounds; the largest
    difference between the specialised loop's grid values and the backend's."""
    import reference_loop as rl

    from blocksim.engine.simulator import Simulator

    model = blocksim.compile(chain.diagram(n))
    sim = Simulator(model, model.settings.replaced(backend="numba"))
    result = sim.run()
    # The modes after the start's event (the Step block switched on at t = 0): the
    # prototype has no event handling, and nothing else changes them in this run.
    m = sim._state.m.copy()
    compiled = build.compiled_for(model)
    deriv = compiled.dispatchers[0]
    s = model.settings
    slots = model.param_vector()
    S = np.zeros(len(model.signal_names) + slots.size)
    S[len(model.signal_names):] = slots
    n_grid = int(round((s.stop - s.start) / (s.output_interval or (s.stop - s.start) / 500)))
    atol = np.broadcast_to(model.state_atol(s.atol), (model.n_states,)).astype(float)
    args = (np.array(model.x0, dtype=float), m, np.zeros(model.n_zc), S, atol, s.rtol,
            s.start, s.stop, (s.stop - s.start) / n_grid, n_grid, compiled.selection)
    started = time.process_time()
    run = specialised_loop(deriv)
    out_t, out_y, steps = run(*args)
    compile_cpu = time.process_time() - started
    names = [sig.name for sig in model.logged]
    difference = max(float(np.max(np.abs(out_y[:, k] - result[name])))
                     for k, name in enumerate(names))
    rl.lag_chain(n, chain.T_END, chain.RTOL, chain.ATOL, 500)

    def per_call(fn, calls: int = 50) -> float:
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        return (time.process_time() - t0) / calls

    mine, ours, hand = [], [], []
    for _ in range(rounds):
        mine.append(per_call(lambda: run(*args)))
        ours.append(per_call(lambda: blocksim.simulate(model, backend="numba")))
        hand.append(per_call(lambda: rl.lag_chain(n, chain.T_END, chain.RTOL, chain.ATOL,
                                                  500)))
    return {"compile": compile_cpu, "specialised": statistics.median(mine),
            "simulate": statistics.median(ours), "hand": statistics.median(hand),
            "steps": steps, "backend_steps": result.stats["steps"],
            "difference": difference}


if __name__ == "__main__":
    if "--child" in sys.argv:
        print(json.dumps(measure()))
    else:  # a fresh process: the compile time is not helped by anything compiled here
        done = subprocess.run([sys.executable, __file__, "--child"], capture_output=True,
                              text=True, check=True)
        print(done.stdout.strip().splitlines()[-1])
