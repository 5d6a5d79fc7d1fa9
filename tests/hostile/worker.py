"""A worker process: runs the hostile cases that arrive (pickled) on stdin, under a memory limit.

Protocol (one JSON object per line on the original stdout): {"start": id} before a case,
{"done": outcome} after it. After a case that ran out of memory, or whose alarm could only
interrupt it late (it was stuck in C code), the worker exits and the supervisor continues
with a fresh process; a case stopped by its alarm in Python code leaves nothing behind. Run by hostile.supervisor; not meant to be run by hand.
"""
from __future__ import annotations

import json
import os
import pickle
import resource
import shutil
import sys
import tempfile
from pathlib import Path


def main() -> int:
    limit = int(os.environ.get("HOSTILE_MEMORY_MB", "3072")) << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    cases = pickle.load(sys.stdin.buffer)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # a case reading /dev/stdin sees an empty file
    os.dup2(devnull, 1)

    from hostile.harness import run_case

    import blocksim.cli.main  # noqa: F401  (imported once, before the first case's clock starts)

    workroot = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        for case in cases:
            proto.write(json.dumps({"start": case.id}) + "\n")
            outcome = run_case(case, workroot)
            proto.write(json.dumps({"done": outcome}) + "\n")
            if outcome.get("exit") == "memory" or outcome.get("rss_mb", 0) > 1024 or (
                    outcome.get("exit") == "timeout" and outcome["elapsed"] > 4 * case.budget):
                break  # out of memory, a big heap, or stopped late (in C code): start afresh
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
