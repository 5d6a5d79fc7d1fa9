"""Atomic file writes: a crash or full disk mid-write never leaves a half-written file.

Diagrams, results and event logs all go through `atomic_write`, so a user never loses the
previous good file to a failed save.
"""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import IO, Callable


def atomic_write(path: str | os.PathLike, write: Callable[[IO], None], binary: bool = False) -> None:
    """Call `write(handle)` on a temporary file beside `path`, then rename it over `path`.

    The data is flushed and fsynced before the rename, the target's permissions are kept,
    and saving through a symlink rewrites the file it points to. On any failure the
    temporary file is removed and the old file is untouched; OSError and ValueError
    (a NUL byte in the path) propagate to the caller, who names the file.
    """
    target = Path(os.path.realpath(path))
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None  # a new file: the umask decides, as for any other file
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        opts = {} if binary else {"encoding": "utf-8", "newline": "\n"}
        with os.fdopen(fd, "wb" if binary else "w", **opts) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(target.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); best effort, skipped where unsupported."""
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
