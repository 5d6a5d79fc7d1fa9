"""Safe file access: atomic writes, and reads that cannot hang or exhaust memory.

Diagrams, results, event logs and pictures all go through `atomic_write`, so a user never
loses the previous good file to a failed save, and temporary files that a killed process
left behind are removed by the next save of the same file. `read_regular_file` and
`open_regular_file` refuse FIFOs and devices (which would block or never end) and files
beyond a size limit, before reading them.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
from pathlib import Path
from typing import IO, BinaryIO, Callable, Iterator

log = logging.getLogger(__name__)

# `.<name>.<pid>.<8 hex>.tmp`: the temporary file of one save, named after its process.
_TMP_SUFFIX = re.compile(r"\.(\d+)\.[0-9a-f]{8}\.tmp")


class NotARegularFile(OSError):
    """A path that is a directory, FIFO, socket or device: reading it could block forever."""

    def __init__(self, path: str, kind: str):
        super().__init__(f"{path} is {kind}")
        self.kind = kind


class FileTooLarge(OSError):
    """A file larger than the caller's limit."""


@contextlib.contextmanager
def open_regular_file(path: str | os.PathLike, limit: int) -> Iterator[BinaryIO]:
    """A regular file of at most `limit` bytes, opened for reading (binary).

    The file is opened without blocking (a FIFO with no writer would block `open` itself)
    and checked to be a regular file, and its size against `limit`, before anything is
    read: a file too large is refused at once, not after reading it. A caller that reads
    it whole still reads at most limit + 1 bytes (a file may grow while it is read).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(os.fspath(path), _kind(info.st_mode))
        if info.st_size > limit:
            raise FileTooLarge(_too_large(path, limit))
        fh = os.fdopen(fd, "rb")
        fd = -1  # closed by the file object
    finally:
        if fd >= 0:
            os.close(fd)
    with fh:
        yield fh


def read_regular_file(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (`open_regular_file`)."""
    with open_regular_file(path, limit) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(_too_large(path, limit))
    return data


def why_unreadable(exc: OSError | ValueError, limit: int) -> str:
    """Why `read_regular_file` failed, as the end of a one-line message about the file:
    "is a FIFO (named pipe)", "is larger than 4 MiB", "does not exist", ..."""
    if isinstance(exc, NotARegularFile):
        return f"is {exc.kind}"
    if isinstance(exc, FileTooLarge):
        size = f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit} bytes"
        return f"is larger than {size}"
    if isinstance(exc, FileNotFoundError):
        return "does not exist"
    if isinstance(exc, PermissionError):
        return "cannot be read: permission denied"
    return f"cannot be read: {getattr(exc, 'strerror', None) or exc}"  # (ValueError: a NUL)


def _too_large(path: str | os.PathLike, limit: int) -> str:
    return f"{os.fspath(path)} is larger than {limit} bytes"


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def atomic_write(path: str | os.PathLike, write: Callable[[IO], None], binary: bool = False) -> None:
    """Call `write(handle)` on a temporary file beside `path`, then rename it over `path`.

    The data is flushed and fsynced before the rename, the target's permissions are kept,
    and saving through a symlink rewrites the file it points to. On any failure the
    temporary file is removed and the old file is untouched; OSError and ValueError
    (a NUL byte in the path) propagate to the caller, who names the file. A target that is
    a device, FIFO or socket (`--out /dev/null`, `/dev/stdout`) is written to in place:
    replacing it would put a regular file where the device was.
    """
    opts = {} if binary else {"encoding": "utf-8", "newline": "\n"}
    try:
        info: os.stat_result | None = os.stat(path)  # through symlinks (/dev/stdout)
    except FileNotFoundError:
        info = None  # a new file: the umask decides its mode, as for any other file
    if info is not None and not stat.S_ISREG(info.st_mode):
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", os.fspath(path))
        with open(path, "wb" if binary else "w", **opts) as fh:
            write(fh)
        return
    target = Path(os.path.realpath(path))
    mode = stat.S_IMODE(info.st_mode) if info is not None else None
    remove_stale_temporaries(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
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


def remove_stale_temporaries(target: Path) -> int:
    """Remove the temporary files of earlier saves of `target` whose process is gone.

    A save killed between creating its temporary file and the rename (kill -9, power loss)
    leaves `.<name>.<pid>.<hex>.tmp` behind; the next save of the same file cleans up.
    Files of processes still alive (a save in progress elsewhere) are left alone.
    Returns how many were removed; best effort, never raises.
    """
    prefix = f".{target.name}"
    removed = 0
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if not name.startswith(prefix):
            continue
        match = _TMP_SUFFIX.fullmatch(name, len(prefix))
        if match is None or _process_alive(int(match.group(1))):
            continue
        try:
            os.unlink(entry.path)
            removed += 1
        except OSError:
            pass
    if removed:
        log.info("removed %d temporary file(s) left by interrupted saves of %s", removed, target)
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process (or not a pid we can ask about): keep it
    return True


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
