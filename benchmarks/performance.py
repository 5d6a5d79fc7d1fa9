"""Time blocksim side by side with bdsim, PathSim and a hand-written compiled loop.

    python benchmarks/performance.py [--quick] [--out docs/performance.md]
                                     [--backends python numba c] [--peer-max-blocks 1000]

Cases: the 100-lag chain; the chain at 10 to 10,000 blocks (growth with size, load and
compile time); the bouncing ball to its accumulation point (cost per bounce); a sampled PI
controller at 1 kHz over 1e6 hits (`blocksim run` in a new process, per backend); EUROSIM
C5 at rtol 1e-10 and 1e-14; load + compile of every example diagram; issue 15's sweeps
(`--only sweep`: benchmarks/sweep.py, about 5 minutes on a quiet machine); a cProfile of single
warm runs, where the Python side's time goes (`--only profile`: benchmarks/run_profile.py).
Every run is checked against its reference (exact lag-chain solution, closed-form bounce
times, the sampled loop's exact recursion, C5 reference values) and every target of issues 5,
14 and 15 is reported as met or not. Peers that are not installed (`pip install -e ".[bench]"`) are skipped with a
message. Times are the best of a few repeats (the sampled PI: medians of runs of the two
backends in turn), all measured in this one run on this machine.
"""
from __future__ import annotations

import argparse
import datetime
import logging
import math
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))  # measure this checkout, wherever blocksim is installed from
import c_costs  # noqa: E402
import chain  # noqa: E402
import numba_costs  # noqa: E402
import run_profile  # noqa: E402
import sweep as sweep_bench  # noqa: E402
import speed_cases  # noqa: E402
import peers  # noqa: E402
import references as ref  # noqa: E402
from bench_suite import Suite, best_of, fmt_time, ratio  # noqa: E402

import blocksim  # noqa: E402
from blocksim.diagram.format import save_diagram  # noqa: E402

log = logging.getLogger("benchmarks.performance")
DIAGRAMS = ROOT / "diagrams"


def numba_ready(suite: Suite) -> bool:
    return "numba" in suite.backends


def run_blocksim(model, backend: str, repeats: int, **options) -> tuple[float, Any]:
    return best_of(lambda: blocksim.simulate(model, backend=backend, **options), repeats)


# ---------------------------------------------------------------- the lag chain
def reference_loop(n: int, repeats: int) -> tuple[float | None, float]:
    """(best time, error of the last lag) of the hand-written numba loop, or None."""
    try:
        import reference_loop as rl
    except ImportError as exc:
        log.warning("hand-written numba loop skipped: %s", exc)
        return None, float("nan")
    rl.lag_chain(n, chain.T_END, chain.RTOL, chain.ATOL, 500)  # compile (cached)
    wall, (t, y, _) = best_of(
        lambda: rl.lag_chain(n, chain.T_END, chain.RTOL, chain.ATOL, 500), repeats * 20)
    return wall, float(np.max(np.abs(y - chain.exact(n, t)[:, n - 1])))


def peer_chain(suite: Suite, name: str, fn, n: int, repeats: int) -> tuple[float | None, float]:
    try:
        runs = [fn(n, chain.T_END, chain.RTOL, chain.ATOL) for _ in range(repeats)]
    except peers.PeerMissing as exc:
        message = f"{exc}: skipped (pip install -e \".[bench]\")"
        if message not in suite.skipped:
            suite.skipped.append(message)
            log.warning(message)
        return None, float("nan")
    best = min(r.run for r in runs)
    err = float(np.max(np.abs(runs[-1].final - chain.exact(n, chain.T_END)[0])))
    return best, err


def case_chain(suite: Suite) -> None:
    n = 10 if suite.quick else 100
    model = blocksim.compile(chain.diagram(n))
    entries: list[tuple[str, float, str]] = []  # (tool, run time, error)
    times: dict[str, float] = {}
    for backend in suite.backends:
        blocksim.simulate(model, backend=backend)  # compile numba functions (cached)
        wall, res = run_blocksim(model, backend, suite.repeats * 4)
        times[backend] = wall
        entries.append((f"blocksim ({backend})", wall, f"{chain.error(res, n):.1e}"))
    ref_wall, ref_err = reference_loop(n, suite.repeats) if numba_ready(suite) else (None, 0)
    if ref_wall:
        entries.append(("hand-written numba DOPRI5 loop", ref_wall, f"{ref_err:.1e}"))
    sp_wall, sp_final = best_of(lambda: chain.scipy_vectorised(n), suite.repeats)
    entries.append(("scipy RK45, one vectorised right-hand side", sp_wall,
                    f"{np.max(np.abs(sp_final - chain.exact(n, chain.T_END)[0])):.1e}"))
    peer_times = {}
    for name, fn in (("bdsim", peers.bdsim_chain), ("PathSim", peers.pathsim_chain)):
        wall, err = peer_chain(suite, name, fn, n, 1 if suite.quick else 3)
        peer_times[name] = wall
        if wall:
            entries.append((name, wall, f"{err:.1e}"))
    rows = [[tool, fmt_time(wall), ratio(wall, times.get("python")),
             ratio(wall, times.get("numba")), err] for tool, wall, err in entries]
    suite.section(
        f"Lag chain, {n} blocks", f"A unit step into {n} first-order lags 1/(s+1), 0 to 10 s, "
        "rtol 1e-6, atol 1e-8, output grid of 501 points. Run time only (the model is "
        "compiled once beforehand); error: max abs error against the exact solution P(k, t) "
        "(blocksim and the loop: logged lags over the whole grid; peers and scipy: all "
        "lags at t = 10).",
        ["tool", "run time", "time / blocksim (python)", "time / blocksim (numba)",
         "max error"], rows)
    for name, wall in peer_times.items():
        for backend, ours in times.items():
            factor = wall / ours if wall else None
            suite.target(f"{n}-lag chain: blocksim ({backend}) ≥ 100× faster than {name}",
                         f"{factor:,.0f}×" if factor else "peer missing",
                         None if factor is None else factor >= 100)
    if "numba" in times and ref_wall:
        suite.target(f"{n}-lag chain: numba backend within 3× of the hand-written loop",
                     f"{times['numba'] / ref_wall:.2f}×", times["numba"] <= 3 * ref_wall)


# ---------------------------------------------------------------- scaling
def case_scaling(suite: Suite) -> None:
    sizes = [10, 100] if suite.quick else [10, 100, 1000, 10000]
    rows, run_times, compile_times = [], {}, {}
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"chain_{n}.json"
            save_diagram(chain.diagram(n), path)
            started = time.perf_counter()
            model = blocksim.compile(blocksim.load(path))
            compile_times[n] = time.perf_counter() - started
        row = [f"{n:,}", fmt_time(compile_times[n])]
        repeats = suite.repeats if n <= 1000 else 2
        errors = []
        for backend in ("python", "numba"):
            if backend not in suite.backends:
                row += ["—"] if backend == "python" else ["—", "—"]
                continue
            started = time.perf_counter()
            blocksim.simulate(model, backend=backend)
            first = time.perf_counter() - started
            wall, res = run_blocksim(model, backend, repeats)
            run_times[(backend, n)] = wall
            errors.append(chain.error(res, n))
            row += [fmt_time(wall)] + ([fmt_time(first)] if backend == "numba" else [])
        for name, fn in (("bdsim", peers.bdsim_chain), ("PathSim", peers.pathsim_chain)):
            if n > suite.peer_max:
                row.append("skipped")
                continue
            wall, _ = peer_chain(suite, name, fn, n, 1)
            row.append(fmt_time(wall))
        row.append(f"{max(errors):.1e}" if errors else "—")
        rows.append(row)
    header = ["blocks", "load + compile", "blocksim (python)", "blocksim (numba)",
              "numba first run (JIT or cache load)", "bdsim", "PathSim", "blocksim max error"]
    suite.section("Scaling with diagram size",
                  "The same chain at growing size; run times as above. *load + compile*: read "
                  "the JSON file and compile it. *numba first run*: the first simulate of a "
                  "newly compiled model (translating and compiling its functions, or loading "
                  f"them from the on-disk cache). Peers run up to {suite.peer_max:,} blocks.",
                  header, rows)
    lo, hi = sizes[1], sizes[-1]
    for backend in ("python", "numba"):
        if (backend, hi) in run_times and (backend, lo) in run_times:
            growth = run_times[(backend, hi)] / run_times[(backend, lo)]
            suite.target(f"run time grows no worse than linearly, {lo:,} → {hi:,} blocks "
                         f"({backend})", f"{growth:.1f}× for {hi // lo}× the blocks",
                         growth <= hi / lo)
    if 10000 in compile_times:
        suite.target("10,000-block diagram loads and compiles in under 5 s",
                     fmt_time(compile_times[10000]), compile_times[10000] < 5.0)


# ---------------------------------------------------------------- events
def case_ball(suite: Suite) -> None:
    diagram = blocksim.load(DIAGRAMS / "bouncing_ball.json")
    model = blocksim.compile(diagram, params={"beta": 0})
    expected = ref.ball_bounce_times_no_air(100)
    rows, per_bounce = [], {}
    for backend in suite.backends:
        blocksim.simulate(model, backend=backend)
        wall, res = run_blocksim(model, backend, suite.repeats)
        bounces = np.array([e.time for e in res.events_of("reset", "ball")])
        per_bounce[backend] = wall / len(bounces)
        err = float(np.max(np.abs(bounces[:100] - expected))) if len(bounces) >= 100 else np.inf
        rows.append([f"blocksim ({backend})", "30 s (rests at 27.13 s)", str(len(bounces)),
                     f"{res.stats['events']} ({len(res.events)})", fmt_time(wall),
                     fmt_time(per_bounce[backend]), f"{err:.1e}"])
    t_peer = 20.0 if suite.quick else 26.0
    try:
        run = peers.pathsim_ball(t_peer, 1e-10, 1e-10)
        got = np.array(run.events)
        err = float(np.max(np.abs(got - ref.ball_bounce_times_no_air(len(got))))) \
            if len(got) else np.inf
        rows.append(["PathSim", f"{t_peer:g} s (before the accumulation point)", str(len(got)),
                     f"{len(got)} ({len(got)})", fmt_time(run.run),
                     fmt_time(run.run / max(1, len(got))), f"{err:.1e}"])
    except peers.PeerMissing as exc:
        log.warning("%s: skipped", exc)
    suite.section("Bouncing ball to its accumulation point",
                  "ARGESIM C21 ball without air resistance (diagrams/bouncing_ball.json, "
                  "beta = 0), DOPRI5 at rtol = atol = 1e-10. Per bounce: run time / bounces. "
                  "Each bounce is two events: the impact and the apex, which the Abs block "
                  "of the air resistance locates (a real mode change of the block, needed "
                  "when beta > 0). The event log, in parentheses, has three entries per "
                  "bounce: at the impact the located crossing and the SecondOrderIntegrator's "
                  "reset (one event iteration), at the apex the crossing. "
                  "Error: max error of the first 100 bounce times against the closed form "
                  "(PathSim: of its bounces). bdsim has no state-reset events and is not run.",
                  ["tool", "simulated", "bounces", "events (log entries)", "run time",
                   "per bounce", "bounce time error"], rows)
    for backend, limit in (("numba", 50e-6), ("python", 500e-6)):
        if backend in per_bounce:
            suite.target(f"bouncing ball: under {limit * 1e6:.0f} µs per bounce ({backend})",
                         fmt_time(per_bounce[backend]), per_bounce[backend] < limit)


# ---------------------------------------------------------------- sampled PI
PI_DIAGRAM = ROOT / "diagrams" / "pi_1khz.json"  # the diagram: a PID block, a plant TF


def pi_recursion(n_hits: int, ts: float = 1e-3, kp: float = 2.0, ki: float = 5.0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """y_k and u_k of pi_1khz.json at its hits: the plant x' = -x + u exact over a period
    with u held, u_k = Kp e_k + I_k, I_(k+1) = I_k + Ts Ki e_k, e_k = 1 - y_k."""
    a = math.exp(-ts)
    x = integral = 0.0
    ys, us = np.empty(n_hits), np.empty(n_hits)
    for k in range(n_hits):
        e = 1.0 - x
        u = kp * e + integral
        ys[k], us[k] = x, u
        integral += ts * ki * e
        x = a * x + (1.0 - a) * u
    return ys, us


def cli_run(diagram: Path, backend: str, stop: float, out: Path) -> tuple[float, float]:
    """(wall time of `blocksim run` in a new process, the run time it reports): the first
    from interpreter start to exit (imports, load, compile, the numba functions from their
    cache, the run, writing the results), the second Simulator.run alone."""
    command = [sys.executable, "-m", "blocksim", "run", str(diagram), "--backend", backend,
               "--stop-time", repr(stop), "--out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    found = re.search(r", ([0-9.e+-]+) (s|ms|µs)$", done.stderr.strip().splitlines()[-1])
    if found is None:
        raise RuntimeError(f"no run time in the output of {' '.join(command)}:\n{done.stderr}")
    return wall, float(found.group(1)) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6}[found.group(2)]


def pi_error(out: Path, stop: float) -> tuple[int, float]:
    """(hits, max error of y and u at every hit's right limit against the recursion)."""
    data = np.load(out)
    t, y, u = data["time"], data["signal:y"], data["signal:u"]
    same = np.flatnonzero(t[1:] == t[:-1]) + 1  # the right limit of each hit (left, right)
    rows = np.concatenate([[0], same])  # the start: one row
    n = int(round(stop * 1000)) + 1
    if len(rows) != n or not np.array_equal(t[rows], np.arange(n) / 1000):
        return len(rows), math.inf
    y_ref, u_ref = pi_recursion(n)
    return n, float(max(np.max(np.abs(y[rows] - y_ref)), np.max(np.abs(u[rows] - u_ref))))


def case_pi(suite: Suite) -> None:
    stop = 10.0 if suite.quick else 1000.0
    repeats = 1 if suite.quick else 3
    backends = [b for b in ("python", "numba") if b in suite.backends]
    walls: dict[str, list[float]] = {b: [] for b in backends}
    runs: dict[str, list[float]] = {b: [] for b in backends}
    errors: dict[str, float] = {}
    hits = 0
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:  # untimed: numba's functions for this model into the cache
            cli_run(PI_DIAGRAM, backend, 0.01, Path(tmp) / "warm.npz")
        for _ in range(repeats):  # interleaved: the machine's load falls on both alike
            for backend in backends:
                out = Path(tmp) / f"pi_{backend}.npz"
                wall, run = cli_run(PI_DIAGRAM, backend, stop, out)
                walls[backend].append(wall)
                runs[backend].append(run)
                hits, err = pi_error(out, stop)
                errors[backend] = max(errors.get(backend, 0.0), err)
                log.info("discrete PI (%s): %.2f s, run %.2f s", backend, wall, run)
    wall = {b: float(np.median(v)) for b, v in walls.items()}
    run = {b: float(np.median(v)) for b, v in runs.items()}
    rows = [[f"blocksim ({b})", fmt_time(wall[b]), fmt_time(run[b]), fmt_time(run[b] / hits),
             ratio(wall.get("python"), wall[b]), ratio(run.get("python"), run[b]),
             f"{errors[b]:.1e}"] for b in backends]
    suite.section(
        "Sampled PI controller at 1 kHz",
        f"diagrams/pi_1khz.json to {stop:g} s: {hits:,} sample hits, each settling the "
        "model, sampling (a discrete PID block, Kp = 2, Ki = 5, Ts = 1 ms) and restarting "
        "dopri5 (rtol 1e-10) on the plant 1/(s + 1). *blocksim run*: wall time of `blocksim run --backend ... "
        "--out pi.npz` in a new process (interpreter start, imports, load, compile, the "
        "model's numba functions from their on-disk cache, the run, writing the results); "
        "*run*: the run alone (Simulator.run, as the CLI reports it). Medians of "
        f"{repeats} run(s), the backends in turn, after one untimed run each (which "
        "caches the numba functions of the model; compiling them takes about 2 s, the "
        "loop itself about 30 s once per machine). Error: max error of y and u at every "
        "hit against the loop's exact recursion.",
        ["tool", "blocksim run", "run", "run per hit", "blocksim run: python / this",
         "run: python / this", "error at hits"], rows)
    if "python" in wall and "numba" in wall and not suite.quick:  # targets for 1e6 hits
        for what, times in (("whole `blocksim run`", wall), ("run time alone", run)):
            factor = times["python"] / times["numba"]
            suite.target(f"sampled PI, {hits:,} hits: numba ≥ 20× faster than python "
                         f"({what})", f"{factor:.0f}×", factor >= 20)


# ---------------------------------------------------------------- C5
def case_c5(suite: Suite) -> None:
    diagram = blocksim.load(DIAGRAMS / "c5_two_state.json")
    rows = []
    for tol in ((1e-10,) if suite.quick else (1e-10, 1e-14)):
        model = blocksim.compile(diagram, rtol=tol, atol=tol)
        wall, res = run_blocksim(model, "python", 1 if suite.quick else 3)
        switches = [e.time for e in res.events if e.kind in ("on", "off")]
        err = float(np.max(np.abs(np.subtract(switches, ref.C5_SWITCHES)))) \
            if len(switches) == 5 else np.inf
        rows.append([f"{tol:g}", "blocksim (radau)", fmt_time(wall), str(res.stats["steps"]),
                     f"{err:.1e}", f"{abs(res['y1'][-1] - ref.C5_Y1_END):.1e}"])
    suite.section("EUROSIM C5 (stiff, relay-switched)",
                  "diagrams/c5_two_state.json with Radau (scipy's, restarted at each of the 5 "
                  "switches; the numba backend applies to dopri5 only, so both backends run "
                  "this the same way). Errors against the reference switch times and y1(5). "
                  "The peers are not run: neither locates the switches to better than their "
                  "event tolerance (PathSim 1e-4), far from these tolerances.",
                  ["rtol = atol", "tool", "run time", "steps", "switch time error",
                   "y1(5) error"], rows)


# ---------------------------------------------------------------- compile
def case_compile(suite: Suite) -> None:
    rows = []
    for path in sorted(DIAGRAMS.glob("*.json")):
        wall, model = best_of(lambda: blocksim.compile(blocksim.load(path)), suite.repeats)
        rows.append([path.name, str(len(model.block_ids)), str(model.n_states), fmt_time(wall)])
    suite.section("Load and compile", "Read the JSON file, validate it and compile it to "
                  "generated code (best of a few runs).",
                  ["diagram", "blocks", "states", "load + compile"], rows)


CASES = {"chain": case_chain, "scaling": case_scaling, "ball": case_ball, "pi": case_pi,
         "c5": case_c5, "compile": case_compile, **speed_cases.CASES,
         "numba": numba_costs.case_numba, "sweep": sweep_bench.case_sweep,
         "profile": run_profile.case_profile, "c": c_costs.case_c}


# ---------------------------------------------------------------- output
def document(suite: Suite) -> str:
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    versions = [f"Python {platform.python_version()}", f"numpy {np.__version__}",
                f"scipy {scipy.__version__}", f"blocksim {blocksim.__version__}",
                *_versions("numba", "bdsim", "pathsim")]
    lines = ["# Performance", "",
             "<!-- Generated by `python benchmarks/performance.py`; do not edit by hand. -->",
             "", f"Generated by `python benchmarks/performance.py"
             f"{' --quick' if suite.quick else ''}` on {now}. Do not edit by hand: rerun the "
             "script.", "", f"- Machine: `{platform.platform()}`, {_cpus()}",
             f"- {', '.join(versions)}",
             "- All times in one run on one machine; each is the best of several repeats "
             "(the sampled PI: the median).", ""]
    for message in suite.skipped:
        lines.append(f"- Skipped: {message}")
    lines += ["", "## Targets", "", "| target | measured | met |", "|---|---:|---|"]
    for t in suite.targets:
        mark = "yes" if t.met else ("not measured" if t.met is None else "**no**")
        lines.append(f"| {t.what} | {t.measured} | {mark} |")
    return "\n".join(lines) + "\n\n" + "\n".join(suite.sections)


def _versions(*names: str) -> list[str]:
    from importlib import metadata

    found = []
    for name in names:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} not installed")
    return found


def _cpus() -> str:
    import os

    return f"{os.cpu_count()} CPUs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, one repeat: checks the script, not the speed")
    parser.add_argument("--backends", nargs="+", default=None,
                        choices=("python", "numba", "c"))
    parser.add_argument("--peer-max-blocks", type=int, default=1000,
                        help="largest chain the peers run (they take minutes beyond)")
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), metavar="CASE")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    backends = args.backends or ["python"] + (["numba"] if _has_numba() else []) + ["c"]
    if "numba" not in backends:
        log.warning("numba is not installed: the numba backend and the compiled reference "
                    "loop are skipped (pip install -e \".[fast]\")")
    suite = Suite(args.quick, backends, args.peer_max_blocks)
    for name in args.only or list(CASES):
        log.info("== %s", name)
        CASES[name](suite)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(document(suite), encoding="utf-8")
    log.info("wrote %s", args.out)
    missed = [t.what for t in suite.targets if t.met is False]
    if missed:
        log.warning("targets not met: %s", "; ".join(missed))
    return 0


def _has_numba() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
