"""Atomic file writes: a crash or full disk mid-write never leaves a half-written file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, IO


def atomic_write(path: str | os.PathLike, write: Callable[[IO], None], binary: bool = False) -> None:
    """Call `write(handle)` on a temporary file beside `path`, then rename it over `path`."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8",
                                                                          "newline": ""})) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
