"""Periodic autosave of each window's unsaved work, and its recovery after a crash.

Every `interval` seconds, if the document has unsaved changes, it is written (atomically,
through the normal file format) to the autosave folder ($BLOCKSIM_AUTOSAVE_DIR if set, else
the platform's application data folder) under a name of its own window:
`session-<id>.json`, with `session-<id>.info` saying what it is a copy of. Before writing,
the window claims `session-<id>.lock`, a QLockFile that records its process: the lock lives
while the process does, and Qt treats it as stale once that process is gone.

So at start-up, an autosave whose lock can be claimed was left by an editor that did not
stop cleanly, and is offered back; one whose lock is held belongs to a live window (in this
process or another) and is left alone. A clean close or a save removes only the window's
own autosave. Several crashed editors leave several autosaves, offered together (one list)
and each recovered, declined or kept for later on its own.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, QStandardPaths, QTimer
from PySide6.QtWidgets import QWidget

from blocksim.errors import DiagramFileError
from blocksim.files.safe import atomic_write
from blocksim.diagram.format import load_diagram, save_diagram
from blocksim.gui.document.document import DiagramDocument
from blocksim.gui.window.usercode import load_user_code

log = logging.getLogger(__name__)

INTERVAL_S = 30.0
ENV_DIR = "BLOCKSIM_AUTOSAVE_DIR"
PREFIX = "session-"
_sessions = itertools.count(1)


def autosave_dir() -> Path:
    """Where autosaves go."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    base = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation) or str(
        Path.home() / ".blocksim")
    return Path(base) / "autosave"


def _paths(folder: Path, session: str) -> tuple[Path, Path, Path]:
    """The diagram, info and lock files of one session."""
    stem = folder / f"{PREFIX}{session}"
    return stem.with_suffix(".json"), stem.with_suffix(".info"), stem.with_suffix(".lock")


def _claim(lock_path: Path) -> QLockFile | None:
    """The session's lock, if no live process holds it (a dead owner's lock is taken over)."""
    lock = QLockFile(str(lock_path))
    lock.setStaleLockTime(0)  # never stale by age: only when its process is gone
    return lock if lock.tryLock(0) else None


def _remove(*paths: Path) -> None:
    for path in paths:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("cannot remove %s: %s", path, exc)


@dataclass
class Pending:
    """Work left by an editor that did not stop cleanly, claimed by this one while offered."""

    file: Path
    original: Path | None
    saved_at: float
    lock: QLockFile

    @property
    def description(self) -> str:
        name = self.original.name if self.original else "an untitled diagram"
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.saved_at))
        return f"{name}, autosaved {when}"

    def discard(self) -> None:
        """Delete this autosave (declined, or recovered into a window's own)."""
        _remove(self.file, self.file.with_suffix(".info"))
        self.lock.unlock()  # removes the lock file

    def release(self) -> None:
        """Keep the autosave for a later start, letting go of the claim."""
        self.lock.unlock()


class Autosaver(QObject):
    """Writes one window's unsaved document now and then; forgets it after a save."""

    def __init__(self, doc: DiagramDocument, parent: QObject | None = None,
                 interval: float = INTERVAL_S):
        super().__init__(parent)
        self.doc = doc
        self.session = f"{os.getpid()}-{next(_sessions)}-{secrets.token_hex(3)}"
        self._lock: QLockFile | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(int(interval * 1000))
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        doc.titleChanged.connect(self._on_state)

    @property
    def file(self) -> Path:
        return _paths(autosave_dir(), self.session)[0]

    @property
    def info_file(self) -> Path:
        return _paths(autosave_dir(), self.session)[1]

    def tick(self) -> bool:
        """Autosave now if there are unsaved changes; True if a file was written."""
        if not self.doc.dirty:
            return False
        folder = autosave_dir()
        data, info_file, lock_file = _paths(folder, self.session)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if self._lock is None:
                self._lock = _claim(lock_file)
                if self._lock is None:
                    raise OSError(f"cannot lock {lock_file}")
            save_diagram(self.doc.diagram, data)
            info = {"original": str(self.doc.path) if self.doc.path else None,
                    "saved_at": time.time(), "pid": os.getpid()}
            atomic_write(info_file, lambda fh: json.dump(info, fh))
        except (OSError, DiagramFileError) as exc:
            log.warning("autosave failed: %s", exc)
            return False
        log.debug("autosaved to %s", data)
        return True

    def clear(self) -> None:
        """Forget this window's autosave (after a save, or when the user let the changes go);
        other windows' autosaves are never touched."""
        data, info_file, _lock_file = _paths(autosave_dir(), self.session)
        _remove(data, info_file)
        if self._lock is not None:
            self._lock.unlock()
            self._lock = None

    def pending(self) -> list[Pending]:
        """Autosaves of editors that are gone, newest first, each claimed for this window
        until it is recovered, discarded or released. Stale leftovers without a diagram are
        tidied away on the way."""
        folder = autosave_dir()
        if not folder.is_dir():
            return []
        sessions = {p.stem[len(PREFIX):] for p in folder.glob(f"{PREFIX}*")
                    if p.suffix in (".json", ".info", ".lock")}
        sessions.discard(self.session)
        found = []
        for session in sorted(sessions):
            data, info_file, lock_file = _paths(folder, session)
            lock = _claim(lock_file)
            if lock is None:
                continue  # a live window's (or being offered by another editor right now)
            if not data.is_file():
                _remove(info_file)
                lock.unlock()
                continue
            found.append(self._describe(data, info_file, lock))
        return sorted(found, key=lambda p: p.saved_at, reverse=True)

    def recover(self, pending: Pending) -> bool:
        """Load autosaved work as unsaved changes to its original file; it becomes this
        window's own autosave (written at once), and the old one is removed."""
        try:
            diagram = load_diagram(pending.file)
        except DiagramFileError as exc:
            log.warning("cannot recover %s: %s", pending.file, exc)
            return False
        diagram.path = pending.original  # (the Python files it names are found beside it)
        window = self.parent()
        load_user_code(window if isinstance(window, QWidget) else None, diagram)
        self.doc.load(diagram, path=pending.original, dirty=True)
        if self.tick():  # never a moment without an autosave of this work
            pending.discard()
        else:
            pending.release()
        return True

    @staticmethod
    def _describe(data: Path, info_file: Path, lock: QLockFile) -> Pending:
        original, saved_at = None, data.stat().st_mtime
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError, AttributeError):
            info = json.loads(info_file.read_text(encoding="utf-8"))
            original = Path(info["original"]) if info.get("original") else None
            saved_at = float(info.get("saved_at", saved_at))
        return Pending(data, original, saved_at, lock)

    def _on_state(self) -> None:
        if not self.doc.dirty:
            self.clear()
