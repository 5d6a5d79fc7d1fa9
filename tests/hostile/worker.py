"""A worker process: runs the hostile cases that arrive (pickled) on stdin, under a memory limit.

Protocol (one JSON object per line on the original stdout): {"start": id} before a case,
{"done": outcome} after it. After a case that timed out or ran out of memory the worker
exits, so that the supervisor continues with a fresh process (a case interrupted half-way
may leave module state behind). Run by hostile.supervisor; not meant to be run by hand.
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

    import blocksim.cli  # noqa: F401  (imported once, before the first case's clock starts)

    workroot = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        for case in cases:
            proto.write(json.dumps({"start": case.id}) + "\n")
            outcome = run_case(case, workroot)
            proto.write(json.dumps({"done": outcome}) + "\n")
            if outcome.get("exit") in ("timeout", "memory"):
                break
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
