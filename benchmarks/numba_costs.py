"""What the numba backend costs around its compiled loop (issue 14's numba targets).

Five rows, each checked against a reference: the Python set-up per call of a short run
(the 100-lag chain against the hand-written loop, `reference_loop`), a warm `blocksim run`
of the ball as a whole process on either backend, the first compile of a new 202-block
model's numba functions (the loop itself already compiled; since `native.quickload` this
includes numba installing its registries, which loading the loop no longer does), the
cost per bounce, and the prototype of a loop specialised to the model
(`specialised_kernel`: issue 14's alternative design) on the chain.
Times are CPU seconds of this process or of the child; each is a median of interleaved
rounds, so a busy machine slows both sides of a ratio alike.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import chain

import blocksim

ROOT = Path(__file__).resolve().parents[1]
BALL = ROOT / "diagrams" / "bouncing_ball.json"
RELAYS = 50  # oscillators: 4 * 50 + 2 = 202 blocks


def cpu_per_call(fn: Callable[[], Any], calls: int) -> float:
    """CPU seconds per call of fn over `calls` calls."""
    started = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - started) / calls


def child_cpu(command: list[str]) -> float:
    """CPU seconds (user + system) of a child process run to its end (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def chain_per_call(rounds: int) -> dict[str, float]:
    """Medians of interleaved rounds: blocksim numba per call (all Python set-up included),
    the hand-written loop per call, and their ratio; the run's error against P(k, t)."""
    import reference_loop as rl

    n = 100
    model = blocksim.compile(chain.diagram(n))
    result = blocksim.simulate(model, backend="numba")
    rl.lag_chain(n, chain.T_END, chain.RTOL, chain.ATOL, 500)
    ours, hand = [], []
    for _ in range(rounds):
        ours.append(cpu_per_call(lambda: blocksim.simulate(model, backend="numba"), 50))
        hand.append(cpu_per_call(
            lambda: rl.lag_chain(n, chain.T_END, chain.RTOL, chain.ATOL, 500), 50))
    return {"ours": statistics.median(ours), "hand": statistics.median(hand),
            "ratio": statistics.median(a / b for a, b in zip(ours, hand)),
            "error": chain.error(result, n)}


def ball_processes(rounds: int) -> dict[str, float]:
    """Median CPU of a warm `blocksim run` of the ball per backend, and of the floors."""
    commands = {
        backend: [sys.executable, "-m", "blocksim", "run", str(BALL), "--backend", backend,
                  "-q"] for backend in ("python", "numba")}
    commands["import numpy, scipy.linalg"] = [sys.executable, "-c", "import numpy, scipy.linalg"]
    commands["import numba"] = [sys.executable, "-c", "import numba"]
    child_cpu(commands["numba"])  # warm: numba's caches of the loop and the model
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            cpu[name].append(child_cpu(command))
    return {name: statistics.median(values) for name, values in cpu.items()}


FIRST_COMPILE = """
import json, sys, time
sys.path.insert(0, {bench!r})
import numpy as np
import blocksim, relay_bank
from blocksim.engine.native import build, loop  # the compiled loop: from numba's cache
model = blocksim.compile(relay_bank.diagram({n}))
started = time.process_time()
build.compiled_for(model)
cpu = time.process_time() - started
r = blocksim.simulate(model, backend="numba")
error = 0.0
for k in (0, {n} - 1):
    got = np.array([e.time for e in r.events if e.block == f"r{{k}}" and e.kind in ("on", "off")])
    want = relay_bank.switch_times(k, {n}, model.settings.stop)
    error = max(error, float(np.max(np.abs(got - want))) if len(got) == len(want) else np.inf)
print(json.dumps({{"cpu": cpu, "blocks": len(model.block_ids), "error": error,
                  "events": r.stats["events"], "python_events": r.stats["python_events"]}}))
"""


def first_compile(n: int = RELAYS) -> dict[str, float]:
    """A new model's numba functions compiled in a fresh process with an empty model cache."""
    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run(
            [sys.executable, "-c", FIRST_COMPILE.format(bench=str(ROOT / "benchmarks"), n=n)],
            cwd=ROOT, capture_output=True, text=True, check=True,
            env=dict(os.environ, BLOCKSIM_CACHE_DIR=cache))
    return json.loads(done.stdout.strip().splitlines()[-1])


PER_BOUNCE = """
import json, statistics, sys, time
sys.path.insert(0, {tests!r})
import numpy as np
import blocksim, references as ref
model = blocksim.compile(blocksim.load({ball!r}), params={{"beta": 0}})
result = blocksim.simulate(model, backend="numba")
bounces = np.array([e.time for e in result.events_of("reset", "ball")])
calls = []
for _ in range({calls}):
    started = time.process_time()
    blocksim.simulate(model, backend="numba")
    calls.append(time.process_time() - started)
print(json.dumps({{"best": min(calls) / len(bounces), "median": statistics.median(calls) / len(bounces),
                  "bounces": len(bounces),
                  "error": float(np.max(np.abs(bounces[:100] - ref.ball_bounce_times_no_air(100))))}}))
"""


def ball_per_bounce(rounds: int) -> dict[str, float]:
    """CPU per bounce of the ball (beta = 0) on numba, in a new process that holds only
    this model: the best call (the statistic of the ball case, `performance.case_ball`)
    and the median; error of the first 100 bounce times.

    Each call is timed alone: on a shared machine a call's CPU time itself grows when
    another process shares the core (up to 1.5x here), so a median of rounds measured
    the machine's load more than the code (it read 14.6 µs where the ball case's best
    read 8.1 µs in the same run).
    """
    done = subprocess.run(
        [sys.executable, "-c", PER_BOUNCE.format(tests=str(ROOT / "tests"), ball=str(BALL),
                                                 calls=5 * rounds)],
        cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def specialised_chain() -> dict[str, float]:
    """The specialised-loop prototype (benchmarks/specialised_kernel.py) in a new process:
    its compile time and per-call CPU beside the backend's and the hand loop's."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "specialised_kernel.py")],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def case_numba(suite) -> None:
    """The rows and targets of the numba backend's overheads."""
    if "numba" not in suite.backends:
        return
    rounds = 3 if suite.quick else 15
    c = chain_per_call(rounds)
    p = ball_processes(1 if suite.quick else 5)
    f = first_compile(5 if suite.quick else RELAYS)
    b = ball_per_bounce(rounds)
    k = specialised_chain()
    us = 1e6
    rows = [
        ["100-lag chain, one simulate (all Python set-up)", f"{c['ours'] * us:.0f} µs",
         f"hand-written numba loop {c['hand'] * us:.0f} µs ({c['ratio']:.2f}×)",
         f"{c['error']:.1e}"],
        ["`blocksim run` ball, whole process, numba", f"{p['numba']:.2f} s",
         f"python backend {p['python']:.2f} s; `import numba` {p['import numba']:.2f} s, "
         f"`import numpy, scipy.linalg` {p['import numpy, scipy.linalg']:.2f} s", "exit 0"],
        [f"first compile of a new {f['blocks']}-block model (relay bank)", f"{f['cpu']:.2f} s",
         f"{f['events']} events, {f['python_events']} in Python", f"{f['error']:.1e}"],
        ["ball to rest, per bounce (numba), best call", f"{b['best'] * us:.1f} µs",
         f"{b['bounces']} bounces; median call {b['median'] * us:.1f} µs", f"{b['error']:.1e}"],
        ["100-lag chain, loop specialised to the model (prototype), per call",
         f"{k['specialised'] * us:.0f} µs",
         f"hand-written loop {k['hand'] * us:.0f} µs ({k['specialised'] / k['hand']:.2f}×), "
         f"simulate {k['simulate'] * us:.0f} µs; compiled in {k['compile']:.1f} s",
         f"{k['difference']:.1e} from the backend"]]
    suite.section(
        "numba backend: costs around the compiled loop",
        "CPU time, medians of interleaved rounds. Chain: `blocksim.simulate` of a compiled "
        "model per call against the hand-written loop (benchmarks/reference_loop.py); error "
        "against P(k, t); the specialised loop's error is its largest difference from the "
        "backend's grid values (same steps). Whole process: `blocksim run "
        "diagrams/bouncing_ball.json -q` with warm caches. First compile: `native.build` of "
        "benchmarks/relay_bank.py in a new process with an empty model cache, the loop "
        "loaded from numba's cache (numba's registries installed in the compile); error: "
        "the switching times of the first and last relay against the closed form. Per "
        "bounce: beta = 0, in a new process, each call timed alone: the best call (as the ball "
        "case's best of runs) and the median; error of the first 100 bounce times.",
        ["what", "measured", "compared with", "error"], rows)
    suite.target("numba: 100-lag chain within 1.5× of the hand-written loop, per call",
                 f"{c['ratio']:.2f}×", c["ratio"] <= 1.5)
    suite.target("numba: warm `blocksim run` of the ball faster than the python backend",
                 f"{p['numba']:.2f} s vs {p['python']:.2f} s", p["numba"] < p["python"])
    suite.target("numba: first compile of a new 202-block model under 5 s",
                 f"{f['cpu']:.2f} s", f["cpu"] < 5.0)
    suite.target("numba: under 10 µs per bounce (best call)", f"{b['best'] * us:.1f} µs",
                 b["best"] < 10e-6)
