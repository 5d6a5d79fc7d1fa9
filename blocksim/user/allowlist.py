"""The user's allow-list of trusted Python files: each file's path and the SHA-256 of the
bytes that were trusted.

It is JSON, so a path holding a newline or a tab stays one string and cannot add an entry
(the old "sha256<TAB>path" lines could: a file named "a.py\\n<hash>\\t/x/evil.py" trusted a
second file). It is replaced atomically, and changed only under a lock on a file beside it
with the read, the change and the write all inside the lock, so concurrent `blocksim
trust` calls all keep their entries. It is read only as a regular file of bounded size: a
list that is a FIFO, a device, a directory, not UTF-8 or not this format is one line
naming it and saying how to fix it, never a traceback or a hang.

The list of earlier versions (trusted-python.txt, tab-separated lines) is still read, and
the next `blocksim trust` writes its entries to the JSON list.
"""
from __future__ import annotations

import json
import logging
import os
import re
import stat
import time
from pathlib import Path
from typing import Mapping

from blocksim.errors import DiagramFileError, shown
from blocksim.files.safe import atomic_write, read_regular_file, why_unreadable

log = logging.getLogger(__name__)

ENV = "BLOCKSIM_TRUST_LIST"  # a file to use instead of the user's list
FORMAT = "blocksim-trusted-python"
MAX_BYTES = 8 * 2**20  # some 50,000 entries: anything larger is not a list blocksim wrote
LOCK_SECONDS = 10.0  # a `blocksim trust` waits this long for another one to finish
_DIGEST = re.compile(r"[0-9a-f]{64}")


class AllowListError(DiagramFileError):
    """The allow-list cannot be read, locked or written; the message names it (a
    DiagramFileError: `blocksim.load` of a diagram that needs the list raises it)."""


def location() -> Path:
    """Where the list lives: $BLOCKSIM_TRUST_LIST, else ~/.config/blocksim/."""
    named = os.environ.get(ENV)
    return Path(named) if named else Path.home() / ".config" / "blocksim" / "trusted-python.json"


def _legacy() -> Path | None:
    """The list of earlier versions, read while the JSON list does not exist yet."""
    return None if os.environ.get(ENV) else location().with_name("trusted-python.txt")


def entries() -> dict[str, str]:
    """Every trusted file: resolved path -> SHA-256 (hex); {} if there is no list yet."""
    path = location()
    found = _read(path)
    if found is None:
        legacy = _legacy()
        found = _read(legacy) if legacy is not None else None
    return found or {}


def add(new: Mapping[str, str]) -> Path:
    """Put these paths with these digests on the list (replacing their old digests); the
    list's path. Read, changed and written under the lock, so no concurrent call's entry
    is lost; an unreadable list is left as it is (AllowListError), never overwritten."""
    path = location()
    entries()  # a list that is a device, a FIFO or corrupt: said before any lock file is made
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _error(path, f"its folder cannot be made: {exc.strerror or exc}") from None
    with _locked(path):
        known = entries()
        known.update(new)
        try:
            atomic_write(path, lambda fh: json.dump(
                {"format": FORMAT, "version": 1, "files": dict(sorted(known.items()))},
                fh, indent=1, ensure_ascii=True))
        except (OSError, ValueError) as exc:
            raise _error(path, f"cannot be written: {getattr(exc, 'strerror', None) or exc}"
                         ) from None
    return path


def _read(path: Path) -> dict[str, str] | None:
    """The entries of one list file; None if it does not exist."""
    try:
        raw = read_regular_file(path, MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise _error(path, why_unreadable(exc, MAX_BYTES)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(path, f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                           f"{exc.start})") from None
    if text.lstrip().startswith("{") or not text.strip():
        return _from_json(path, text) if text.strip() else {}
    return _from_lines(path, text)


def _from_json(path: Path, text: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _error(path, f"is not valid JSON ({shown(exc, 120)})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(files, dict):
        raise _error(path, f'is not an allow-list (a JSON object with "format": "{FORMAT}" '
                           f'and "files")')
    for name, digest in files.items():
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise _error(path, f"has an entry for '{shown(name)}' that is not a SHA-256 "
                               f"digest (64 hexadecimal digits)")
    return dict(files)


def _from_lines(path: Path, text: str) -> dict[str, str]:
    """The tab-separated list of earlier versions ("sha256<TAB>path" lines)."""
    found = {}
    for number, line in enumerate(text.splitlines(), 1):
        digest, tab, name = line.partition("\t")
        if not line.strip():
            continue
        if not tab or not name or not _DIGEST.fullmatch(digest):
            raise _error(path, f"line {number} is not 'sha256<TAB>path'")
        found[name] = digest
    return found


class _locked:
    """An exclusive lock on `.<list>.lock` beside the list (fcntl.flock; where that does not
    exist, nothing: one `blocksim trust` at a time is then the user's affair)."""

    def __init__(self, path: Path):
        self.lock = path.with_name(f".{path.name}.lock")
        self.fd = -1

    def __enter__(self) -> "_locked":
        try:
            import fcntl
        except ImportError:
            return self
        try:
            self.fd = os.open(self.lock, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o600)
            if not stat.S_ISREG(os.fstat(self.fd).st_mode):
                raise _lock_error(self.lock, "is not a regular file: remove it")
        except OSError as exc:
            raise _lock_error(self.lock, f"cannot be opened: {exc.strerror or exc}") from None
        except AllowListError:
            os.close(self.fd)
            raise
        deadline = time.monotonic() + LOCK_SECONDS
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise _lock_error(self.lock, f"has been held by another blocksim for "
                                                 f"over {LOCK_SECONDS:g} s; try again") from None
                time.sleep(0.005)
            except OSError as exc:
                os.close(self.fd)
                raise _lock_error(self.lock, f"cannot be locked: {exc.strerror or exc}") from None

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # (releases the lock)


def _error(path: Path, problem: str) -> AllowListError:
    return AllowListError(f"the allow-list of trusted Python files {shown(path)} {problem}; "
                          f"fix or delete it (then `blocksim trust` the files again)")


def _lock_error(lock: Path, problem: str) -> AllowListError:
    return AllowListError(f"the lock file {shown(lock)} of the allow-list of trusted Python "
                          f"files {problem}")
