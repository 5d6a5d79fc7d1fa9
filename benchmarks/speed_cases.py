"""Benchmark cases of issue 14 (start-up, logging every signal, per-event cost with diagram
size, the first simulate of 10,000 blocks, bdf's accuracy at events), each checked against
its reference like the cases in performance.py, which runs them (`--only startup` ...)."""
from __future__ import annotations

import csv
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import chain
import references as ref
import relays
from bench_suite import Suite, best_of, fmt_time, ratio

import blocksim
from blocksim.diagram.format import save_diagram

log = logging.getLogger("benchmarks.performance")
ROOT = Path(__file__).resolve().parents[1]
BALL = ROOT / "diagrams" / "bouncing_ball.json"


# ---------------------------------------------------------------- start-up
def process_cpu(command: list[str]) -> tuple[float, subprocess.CompletedProcess | None]:
    """CPU time (user + system) of `command` as a new process, and how it ended. Bytecode
    caching is on, as for a user (a shell that sets PYTHONDONTWRITEBYTECODE would make every
    start recompile blocksim's modules)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    done = subprocess.CompletedProcess(command, os.waitstatus_to_exitcode(status), None, stderr)
    return usage.ru_utime + usage.ru_stime, done


def ball_impacts_error(events_csv: Path) -> float:
    """Max error of the first five impacts of the ball with air resistance (the diagram as
    shipped) against the reference values."""
    with events_csv.open(newline="") as f:
        impacts = [float(row["time"]) for row in csv.DictReader(f)
                   if row["kind"] == "reset" and row["block"] == "ball"]
    if len(impacts) < len(ref.BALL_BOUNCES_AIR):
        return float("inf")
    return float(np.max(np.abs(np.subtract(impacts[:5], ref.BALL_BOUNCES_AIR))))


def case_startup(suite: Suite) -> None:
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.csv"
        commands = {
            "floor: python -c \"import numpy, scipy.linalg\"":
                [python, "-c", "import numpy, scipy.linalg"],
            "blocksim --help": [python, "-m", "blocksim", "--help"],
            "blocksim run diagrams/bouncing_ball.json":
                [python, "-m", "blocksim", "run", str(BALL), "--events", str(events), "-q"],
        }
        for command in commands.values():  # untimed: bytecode caches written
            process_cpu(command)
        times: dict[str, list[float]] = {name: [] for name in commands}
        repeats = 3 if suite.quick else 11
        for _ in range(repeats):  # interleaved: the machine's load falls on all alike
            for name, command in commands.items():
                cpu, done = process_cpu(command)
                if done.returncode != 0:
                    raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
                times[name].append(cpu)
        error = ball_impacts_error(events)
    median = {name: statistics.median(v) for name, v in times.items()}
    rows = [[name, fmt_time(median[name]), fmt_time(min(times[name])),
             f"{error:.1e}" if "run" in name else "—"] for name in commands]
    suite.section(
        "Start-up", "CPU time (user + system) of a new process, median and best of "
        f"{repeats} runs, the commands in turn; bytecode caching on, as for a user. "
        "The run writes the event log; error: its first five impacts against the reference "
        "(ball with air resistance, rtol 1e-10).",
        ["command", "CPU (median)", "CPU (best)", "impact error"], rows)
    run = median["blocksim run diagrams/bouncing_ball.json"]
    suite.target("`blocksim run diagrams/bouncing_ball.json` under 0.6 s of CPU",
                 f"{fmt_time(run)} (floor {fmt_time(median[next(iter(commands))])})",
                 run < 0.6 and error < 1e-8)
    suite.target("`blocksim --help` under 0.3 s of CPU", fmt_time(median["blocksim --help"]),
                 median["blocksim --help"] < 0.3)


# ---------------------------------------------------------------- logging every signal
def case_logging(suite: Suite) -> None:
    n = 10 if suite.quick else 100
    repeats = suite.repeats * 4
    grid = np.linspace(0.0, chain.T_END, 501)
    exact = chain.exact(n, grid)
    rows, times = [], {}
    for label, log_all in (("2 lags logged", False), (f"all {n} lags logged", True)):
        model = blocksim.compile(chain.diagram(n, log_all=log_all))
        blocksim.simulate(model, backend="python")
        wall, res = best_of(lambda: blocksim.simulate(model, backend="python"), repeats)
        times[("blocksim", log_all)] = wall
        rows.append([f"blocksim (python), {label}", fmt_time(wall), "",
                     f"{chain.error(res, n):.1e}"])
        if log_all:  # scipy keeps every lag at the grid (t_eval): what logging all costs it
            wall, ys = best_of(lambda: chain.scipy_vectorised(n, grid=grid), repeats)
            error = float(np.max(np.abs(ys - exact)))
        else:
            wall, final = best_of(lambda: chain.scipy_vectorised(n), repeats)
            error = float(np.max(np.abs(final - exact[-1])))
        times[("scipy", log_all)] = wall
        rows.append([f"scipy RK45, one vectorised right-hand side, {label}", fmt_time(wall),
                     ratio(wall, times[("blocksim", log_all)]), f"{error:.1e}"])
    suite.section(
        f"Logging every signal, {n}-lag chain",
        "The lag chain with its two usual logged lags and with every lag logged (an Output "
        "block on each), python backend, against scipy's RK45 on one vectorised right-hand "
        "side (final state only; with every lag logged, every lag at the 501 grid times, "
        "t_eval). Run time only, best of a few. Error: max abs error against P(k, t) "
        "(blocksim: every logged lag over the grid).",
        ["tool", "run time", "scipy / blocksim", "max error"], rows)
    for log_all, label in ((False, "2 lags logged"), (True, f"all {n} logged")):
        factor = times[("scipy", log_all)] / times[("blocksim", log_all)]
        suite.target(f"{n}-lag chain, {label}: python backend ≥ 1.5× faster than scipy RK45 "
                     "vectorised", f"{factor:.2f}×", factor >= 1.5)


# ---------------------------------------------------------------- cost per event
# Oscillators: stop time (some 700 to 2,200 events; 22, 52, 100 and 202 blocks).
RELAY_RUNS = {7: 100.0, 17: 30.0, 33: 10.0, 67: 4.9}
EVENT_REPEATS = 7  # runs of each size, the sizes in turn (a load change hits all alike)


def case_events(suite: Suite) -> None:
    runs = {2: 20.0, 20: 4.0} if suite.quick else RELAY_RUNS
    models = {n: blocksim.compile(relays.diagram(n, stop)) for n, stop in runs.items()}
    per_event: dict[int, list[float]] = {n: [] for n in runs}
    results = {n: blocksim.simulate(model, backend="python") for n, model in models.items()}
    for _ in range(1 if suite.quick else EVENT_REPEATS):
        for n, model in models.items():
            started = time.process_time()
            results[n] = blocksim.simulate(model, backend="python")
            per_event[n].append((time.process_time() - started) / results[n].stats["events"])
    median = {n: statistics.median(times) for n, times in per_event.items()}
    small, large = min(runs), max(runs)
    rows = []
    for n, stop in runs.items():
        res = results[n]
        rows.append([f"{len(models[n].block_ids)} ({n} relays)", f"{stop:g} s",
                     f"{res.stats['events']:,}", fmt_time(median[n]),
                     f"{min(per_event[n]) * 1e6:.0f}–{max(per_event[n]) * 1e6:.0f} µs",
                     f"{median[n] / median[small]:.2f}×",
                     f"{relays.error(res, n, stop):.1e}"])
    suite.section(
        "Cost per event as a diagram grows",
        "Relay oscillators side by side (benchmarks/relays.py: an integrator, a relay with "
        "hysteresis and a gain each, switching at exactly known times, never two together), "
        "DOPRI5 at rtol = atol = 1e-10, python backend. Per event: CPU time of a run "
        "(process_time) / its events, the median of "
        f"{1 if suite.quick else EVENT_REPEATS} runs of each size taken in turn (range: "
        "the fastest and slowest run). Error: max error of every switching time against "
        "the exact one.",
        ["blocks", "simulated", "events", "per event (median)", "range", "vs smallest",
         "switch time error"], rows)
    growth = median[large] / median[small]
    suite.target(f"python backend: cost per event within 1.5× from {3 * small + 1} to "
                 f"{3 * large + 1} blocks", f"{growth:.2f}×", growth <= 1.5)


# ---------------------------------------------------------------- 10,000 blocks
def case_first_simulate(suite: Suite) -> None:
    n = 1000 if suite.quick else 10000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"chain_{n}.json"
        save_diagram(chain.diagram(n), path)
        started = time.process_time()
        diagram = blocksim.load(path)
        loaded = time.process_time()
        model = blocksim.compile(diagram)
        compiled = time.process_time()
        res = blocksim.simulate(model, backend="python")
        done = time.process_time()
    total = done - started
    suite.section(
        f"{n:,} blocks: load, compile, first simulate",
        f"The lag chain of {n:,} blocks from its JSON file, once each (the first simulate "
        "derives the engine's functions from the generated code), CPU time of this process. "
        "Error: max abs error of the logged lags against P(k, t).",
        ["load", "compile", "first simulate", "total", "max error"],
        [[fmt_time(loaded - started), fmt_time(compiled - loaded), fmt_time(done - compiled),
          fmt_time(total), f"{chain.error(res, n):.1e}"]])
    suite.target(f"{n:,} blocks: load + compile + first simulate under 1.5 s",
                 fmt_time(total), total < 1.5)


# ---------------------------------------------------------------- bdf at events
BDF_STOP = 27.12  # just before the accumulation point (27.129 s)


def scipy_bdf_ball(stop: float) -> np.ndarray:
    """Impact times of the ball without air resistance by scipy's own BDF (solve_ivp, rtol =
    atol = 1e-10), restarted where blocksim restarts: at each impact (v -> -0.9 v, x kept
    from the located state) and at each apex (where the diagram's Abs block switches)."""
    from scipy.integrate import solve_ivp

    def fall(t, y):
        return [y[1], -ref.BALL_G]

    def impact(t, y):
        return y[0]

    def apex(t, y):
        return y[1]

    impact.terminal = apex.terminal = True
    impact.direction = apex.direction = -1
    t, y, rising, impacts = 0.0, [ref.BALL_X0, 0.0], False, []
    while t < stop:
        sol = solve_ivp(fall, (t, stop), y, method="BDF", rtol=1e-10, atol=1e-10,
                        events=[impact, apex] if rising else [impact])
        if sol.status != 1:
            break
        if len(sol.t_events[0]):
            t, (x, v) = sol.t_events[0][0], sol.y_events[0][0]
            impacts.append(t)
            y, rising = [x, -ref.BALL_MU * v], True
        else:
            t, y, rising = sol.t_events[1][0], list(sol.y_events[1][0]), False
    return np.array(impacts)


def case_bdf_ball(suite: Suite) -> None:
    stop = 12.0 if suite.quick else BDF_STOP
    diagram = blocksim.load(BALL)
    runs = {}
    started = time.process_time()
    res = blocksim.simulate(diagram, solver="bdf", rtol=1e-10, atol=1e-10, params={"beta": 0},
                            stop_time=stop)
    runs["blocksim (bdf)"] = (time.process_time() - started,
                              np.array([e.time for e in res.events_of("reset", "ball")]))
    started = time.process_time()
    impacts = scipy_bdf_ball(stop)
    runs["scipy BDF (solve_ivp), the same restarts"] = (time.process_time() - started, impacts)
    rows, worst = [], {}
    for name, (cpu, times) in runs.items():
        error = np.abs(times - ref.ball_bounce_times_no_air(len(times)))
        worst[name] = float(error.max())
        rows.append([name, str(len(times)), f"{error[:10].max():.1e}",
                     f"{error[:30].max():.1e}", f"{worst[name]:.1e}", fmt_time(cpu)])
    suite.section(
        "bdf at events",
        f"The ball without air resistance to {stop:g} s at rtol = atol = 1e-10 on bdf, "
        "against scipy's BDF restarted at the same instants (impacts and apexes). Errors: "
        "max error of the impact times against the closed form, over the first 10, 30 and "
        "all impacts; CPU time of the run.",
        ["solver", "impacts", "error (10)", "error (30)", "error (all)", "CPU"], rows)
    ours, theirs = worst["blocksim (bdf)"], worst[next(reversed(worst))]
    suite.target("bdf at events at least as accurate as scipy's own BDF (ball, rtol 1e-10)",
                 f"{ours:.2e} s vs {theirs:.2e} s", ours <= 1.01 * theirs)


CASES = {"startup": case_startup, "logging": case_logging, "events": case_events,
         "first_simulate": case_first_simulate, "bdf_ball": case_bdf_ball}
