"""Runs the editor's example test many times, each in a fresh pytest process, and counts
hangs and failures: the check for intermittent editor-run deadlocks (not part of CI).

    python benchmarks/editor_runs.py                 # 200 runs of tests/gui/test_examples_in_editor.py
    python benchmarks/editor_runs.py --runs 20 --timeout 120 --logs /tmp/runs

A run that outlives --timeout counts as a hang: it is sent SIGABRT first, so faulthandler
(enabled by pytest) prints every thread's stack into its log, then killed. The logs of
hangs and failures are kept in --logs; passing runs leave nothing behind.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/gui/test_examples_in_editor.py"


def run_once(test: str, timeout: float, log: Path) -> tuple[str, float]:
    """One pytest process; returns ("passed" | "failed" | "hang", seconds)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test]
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGABRT)  # faulthandler dumps every thread's stack
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            return "hang", time.perf_counter() - started
    return ("passed" if code == 0 else "failed"), time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=240.0,
                        help="seconds after which a run counts as hung (a run takes ~20 s)")
    parser.add_argument("--test", default=TEST, help="the pytest target to repeat")
    parser.add_argument("--logs", type=Path, default=None,
                        help="folder for the logs of hangs and failures (default: a temp dir)")
    args = parser.parse_args(argv)
    logs = args.logs or Path(tempfile.mkdtemp(prefix="editor_runs_"))
    logs.mkdir(parents=True, exist_ok=True)
    counts = {"passed": 0, "failed": 0, "hang": 0}
    times: list[float] = []
    began = time.perf_counter()
    for k in range(1, args.runs + 1):
        log = logs / f"run{k:04d}.log"
        outcome, seconds = run_once(args.test, args.timeout, log)
        counts[outcome] += 1
        times.append(seconds)
        if outcome == "passed":
            log.unlink()
        print(f"run {k}/{args.runs}: {outcome} in {seconds:.1f} s "
              f"(passed {counts['passed']}, failed {counts['failed']}, hung {counts['hang']})"
              + ("" if outcome == "passed" else f"; log: {log}"), flush=True)
    total = time.perf_counter() - began
    print(f"\n{args.runs} runs of {args.test} in {total / 60:.1f} min: "
          f"{counts['passed']} passed, {counts['failed']} failed, {counts['hang']} hung; "
          f"per run median {statistics.median(times):.1f} s, max {max(times):.1f} s"
          + (f"; logs in {logs}" if counts["failed"] or counts["hang"] else ""))
    return 0 if counts["failed"] == counts["hang"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
