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
from pathlib import Path

import numpy as np

import references as ref
from bench_suite import Suite, fmt_time

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


CASES = {"startup": case_startup}
