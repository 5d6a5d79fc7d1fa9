"""Periodic autosave of unsaved work, and recovery at the next start after a crash.

Every `interval` seconds, if the document has unsaved changes, it is written (atomically,
through the normal file format) to a file in the autosave folder: $BLOCKSIM_AUTOSAVE_DIR if
set, else the platform's application data folder. A clean exit removes it, so finding one at
start-up means the editor did not stop cleanly and the work can be offered back.
"""
from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QStandardPaths, QTimer

from blocksim.errors import DiagramFileError
from blocksim.fileio import atomic_write
from blocksim.format import load_diagram, save_diagram
from blocksim.gui.document import DiagramDocument

log = logging.getLogger(__name__)

INTERVAL_S = 30.0
ENV_DIR = "BLOCKSIM_AUTOSAVE_DIR"


def autosave_dir() -> Path:
    """Where autosaves go."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    base = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation) or str(
        Path.home() / ".blocksim")
    return Path(base) / "autosave"


@dataclass
class Pending:
    """Work found in the autosave folder: the diagram file and what it was a copy of."""

    file: Path
    original: Path | None
    saved_at: float

    @property
    def description(self) -> str:
        name = self.original.name if self.original else "an untitled diagram"
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.saved_at))
        return f"{name}, autosaved {when}"


class Autosaver(QObject):
    """Writes the document's unsaved state now and then; forgets it after a save."""

    def __init__(self, doc: DiagramDocument, parent: QObject | None = None,
                 interval: float = INTERVAL_S):
        super().__init__(parent)
        self.doc = doc
        self.timer = QTimer(self)
        self.timer.setInterval(int(interval * 1000))
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        doc.titleChanged.connect(self._on_state)

    @property
    def file(self) -> Path:
        return autosave_dir() / "autosave.json"

    @property
    def info_file(self) -> Path:
        return autosave_dir() / "autosave-info.json"

    def tick(self) -> bool:
        """Autosave now if there are unsaved changes; True if a file was written."""
        if not self.doc.dirty:
            return False
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            save_diagram(self.doc.diagram, self.file)
            info = {"original": str(self.doc.path) if self.doc.path else None,
                    "saved_at": time.time()}
            atomic_write(self.info_file, lambda fh: json.dump(info, fh))
        except (OSError, DiagramFileError) as exc:
            log.warning("autosave failed: %s", exc)
            return False
        log.debug("autosaved to %s", self.file)
        return True

    def clear(self) -> None:
        """Forget the autosave (after a save, or when the user let the changes go)."""
        for path in (self.file, self.info_file):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("cannot remove %s: %s", path, exc)

    def pending(self) -> Pending | None:
        """Work left behind by an editor that did not stop cleanly, if any."""
        if not self.file.is_file():
            return None
        original, saved_at = None, self.file.stat().st_mtime
        try:
            info = json.loads(self.info_file.read_text(encoding="utf-8"))
            original = Path(info["original"]) if info.get("original") else None
            saved_at = float(info.get("saved_at", saved_at))
        except (OSError, ValueError, TypeError, KeyError):
            pass
        return Pending(self.file, original, saved_at)

    def recover(self, pending: Pending) -> bool:
        """Load autosaved work as unsaved changes to its original file."""
        try:
            diagram = load_diagram(pending.file)
        except DiagramFileError as exc:
            log.warning("cannot recover %s: %s", pending.file, exc)
            return False
        diagram.path = pending.original
        self.doc.load(diagram, path=pending.original, dirty=True)
        return True

    def _on_state(self) -> None:
        if not self.doc.dirty:
            self.clear()
