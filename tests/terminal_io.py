"""Reading what a child process writes to a pseudo-terminal (the CLI's Ctrl-C tests)."""
from __future__ import annotations

import os
import select
import time


def wait_for(fd: int, text: bytes, timeout: float) -> bytes:
    """What the process wrote to the terminal until `text` appeared (or the timeout)."""
    seen, deadline = b"", time.monotonic() + timeout
    while text not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    return seen
