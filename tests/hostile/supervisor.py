"""Run hostile cases in worker processes with a memory limit and a hard per-case deadline.

Each worker (hostile.worker) runs cases in-process with a soft per-case alarm; the supervisor
kills a worker that stays silent past a case's budget plus a grace period (a hang in C code
that no signal handler can interrupt) and records that case as a hang; a worker that dies
(killed, out of memory, a crash in native code) is recorded as a crash of its current case.
Either way the remaining cases continue in a fresh worker.

    cd tests && python -m hostile                 # the whole corpus, summary table
    python -m hostile --only numerics/ --jobs 2   # a part, two workers
    python -m hostile --json out.json --show 3    # machine-readable outcomes, 3 ids per row
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable

TESTS = Path(__file__).resolve().parents[1]
GRACE = float(os.environ.get("HOSTILE_GRACE", "10"))
STARTUP = 180.0


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("BLOCKSIM_BACKEND", None)
    env.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                "QT_QPA_PLATFORM": "offscreen", "PYTHONHASHSEED": "0",
                "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent),
                                               env.get("PYTHONPATH", "")]).rstrip(os.pathsep)})
    return env


def _run_serial(cases: list, report: Callable[[dict[str, Any]], None]) -> None:
    budgets = {case.id: case.budget for case in cases}
    pending = [case.id for case in cases]
    by_id = {case.id: case for case in cases}
    while pending:
        with tempfile.TemporaryFile() as errlog:
            proc = subprocess.Popen([sys.executable, "-m", "hostile.worker"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=errlog, cwd=str(TESTS), env=worker_env())
            proc.stdin.write(pickle.dumps([by_id[case_id] for case_id in pending]))
            proc.stdin.close()
            current, deadline = None, time.monotonic() + STARTUP
            done: set[str] = set()
            stream = proc.stdout
            buffer = b""
            while True:
                wait = deadline - time.monotonic()
                ready = select.select([stream], [], [], max(wait, 0))[0] if wait > 0 else []
                if not ready:
                    proc.kill()
                    proc.wait()
                    if current is None:
                        for case_id in pending:
                            if case_id not in done:
                                report(_synthetic(case_id, "worker", "worker did not start"))
                        pending = []
                    else:
                        report(_synthetic(current, "killed",
                                          "hang: no answer within 3 x the budget + "
                                          f"{GRACE:g} s (killed; not interruptible)"))
                        done.add(current)
                    break
                chunk = os.read(stream.fileno(), 1 << 16)
                if not chunk:
                    code = proc.wait()
                    if current is not None:
                        errlog.seek(0)
                        tail = errlog.read()[-300:].decode("utf-8", "replace")
                        how = (f"signal {signal.Signals(-code).name}" if code < 0
                               else f"exit {code}")
                        report(_synthetic(current, "crash", f"crash: the process died ({how})",
                                          tail))
                        done.add(current)
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    message = json.loads(line)
                    if "start" in message:
                        current = message["start"]
                        deadline = time.monotonic() + 3 * budgets.get(current, 5.0) + GRACE
                    else:
                        outcome = message["done"]
                        report(outcome)
                        done.add(outcome["id"])
                        current, deadline = None, time.monotonic() + GRACE + 60
            stream.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            pending = [case_id for case_id in pending if case_id not in done]


def _synthetic(case_id: str, exit_: str, symptom: str, stderr: str = "") -> dict[str, Any]:
    return {"id": case_id, "category": case_id.split("/")[0], "exit": exit_,
            "symptoms": [symptom], "stderr": stderr, "elapsed": None}


def run(cases: Iterable, jobs: int = 1,
        progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, dict[str, Any]]:
    """Outcomes of the cases (hostile.corpus.Case) by case id."""
    cases = list(cases)
    results: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    def report(outcome: dict[str, Any]) -> None:
        with lock:
            results[outcome["id"]] = outcome
            if progress:
                progress(outcome)

    chunks = [cases[i::jobs] for i in range(max(1, jobs))]
    threads = [threading.Thread(target=_run_serial, args=(chunk, report))
               for chunk in chunks if chunk]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def summary(results: dict[str, dict[str, Any]], show: int = 1) -> str:
    """A table of violations: symptom, category, count, example ids."""
    rows: dict[tuple[str, str], list[str]] = defaultdict(list)
    for case_id, outcome in sorted(results.items()):
        for symptom in outcome.get("symptoms", []):
            rows[(symptom, outcome["category"])].append(case_id)
    failing = sum(1 for o in results.values() if o.get("symptoms"))
    lines = [f"{len(results)} cases, {failing} with violations, "
             f"{sum(len(v) for v in rows.values())} violations"]
    by_symptom: dict[str, int] = defaultdict(int)
    for (symptom, _), ids in rows.items():
        by_symptom[symptom] += len(ids)
    for symptom, count in sorted(by_symptom.items(), key=lambda kv: -kv[1]):
        lines.append(f"{count:5d}  {symptom}")
        for (sym, category), ids in sorted(rows.items()):
            if sym == symptom:
                lines.append(f"         {len(ids):4d} {category:12s} e.g. "
                             + ", ".join(ids[:show]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="case ids starting with this (or a list, "
                        "comma-separated)")
    parser.add_argument("--failed-from", metavar="JSON",
                        help="only the cases with violations in an earlier --json file")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", help="write every outcome to this file")
    parser.add_argument("--show", type=int, default=1, help="example ids per table row")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(TESTS))
    from hostile.corpus import build_corpus

    prefixes = tuple(p for p in args.only.split(",") if p) or ("",)
    cases = [case for case in build_corpus() if case.id.startswith(prefixes)]
    if args.failed_from:
        earlier = json.loads(Path(args.failed_from).read_text())["outcomes"]
        cases = [case for case in cases if earlier.get(case.id, {}).get("symptoms", True)]
    t0 = time.monotonic()

    def progress(outcome: dict[str, Any]) -> None:
        if args.verbose:
            flag = "FAIL" if outcome.get("symptoms") else "ok  "
            elapsed = outcome.get("elapsed")
            took = f"{elapsed:6.2f}s" if isinstance(elapsed, float) else "   ?  "
            print(f"{flag} {took} {outcome['id']}  {'; '.join(outcome.get('symptoms', []))}",
                  flush=True)

    results = run(cases, args.jobs, progress)
    wall = time.monotonic() - t0
    if args.json:
        grouped: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for case_id, outcome in sorted(results.items()):
            for symptom in outcome.get("symptoms", []):
                grouped[symptom][outcome["category"]].append(case_id)
        Path(args.json).write_text(json.dumps(
            {"cases": len(results), "wall_seconds": round(wall, 1),
             "violations": grouped, "outcomes": results}, indent=1, sort_keys=True))
    print(summary(results, args.show))
    slow = sorted((o.get("elapsed") or 0, i) for i, o in results.items())[-5:]
    print(f"wall time {wall:.1f} s; slowest: "
          + ", ".join(f"{i} {t:.1f}s" for t, i in reversed(slow)))
    return 1 if any(o.get("symptoms") for o in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
