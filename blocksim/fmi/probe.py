"""An FMU that crashes as it starts, caught before it can take blocksim down with it.

The FMU runs in the blocksim process (`session`). Its most fragile moment is the start:
loading its library, instantiate, and initialization, where a broken or mismatched binary
usually crashes if it crashes at all. So before a process loads an FMU for the first time,
a forked child does exactly that start, and frees it; a child killed by a signal (a
segmentation fault) makes the run fail with one line naming the FMU, and the binary is
never loaded in blocksim's own process. An FMU that passed is not probed again in that
process (by digest).

Only where fork is safe: on POSIX, with no other Python thread running (the command line,
a script; not the editor, whose runs start from a worker thread: there an FMU that crashes
takes the editor down, as docs/fmi.md says). A crash later in the run is not caught.
"""
from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
import threading
from typing import Callable

log = logging.getLogger(__name__)

_PASSED: set[str] = set()  # digests of FMUs that started in a probe of this process
PROBE_SECONDS = 60.0


def can_probe() -> bool:
    return hasattr(os, "fork") and sys.platform != "darwin" and threading.active_count() == 1


def crashed_at_start(digest: str, start: Callable[[], None]) -> str | None:
    """Run `start` (load, instantiate, initialize, free) in a forked child first; a
    description of how the child died ("a segmentation fault (SIGSEGV)") if it was killed
    by a signal, else None (and the FMU is not probed again in this process)."""
    if digest in _PASSED or not can_probe():
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: start the FMU, say nothing, leave without cleanup handlers
        code = 0
        try:
            faulthandler.disable()  # (a crash here is the expected answer, not news)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            start()
        except BaseException:
            code = 3  # a Python-level failure: the parent's own start says it, in full
        os._exit(code)
    status = _wait(pid)
    if status is None:
        return f"no end within {PROBE_SECONDS:g} s (it hangs as it starts)"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        what = {"SIGSEGV": "a segmentation fault", "SIGBUS": "a bus error",
                "SIGFPE": "an arithmetic fault", "SIGILL": "an illegal instruction",
                "SIGABRT": "an abort"}.get(name, "a fatal signal")
        log.debug("FMU probe killed by %s", name)
        return f"{what} ({name})"
    _PASSED.add(digest)
    return None


def _wait(pid: int) -> int | None:
    """The child's wait status; None (the child killed) if it runs over PROBE_SECONDS."""
    import time

    deadline = time.monotonic() + PROBE_SECONDS
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
