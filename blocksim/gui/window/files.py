"""New, Open, Open Recent, Examples, Save and Save As for the editor's document.

Files go through `blocksim.diagram.format` (atomic saves, the same validation as the command line),
so what the editor saves runs headless unchanged and vice versa. A file that cannot be read
gives a message naming the file and block, never a crash; unsaved changes are never lost
without asking.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QWidget

from blocksim.blocktypes import registry
from blocksim.errors import BlocksimError, DiagramFileError
from blocksim.diagram.examples import example_name, example_paths as examples, examples_dir  # noqa: F401 (menu, tests)
from blocksim.diagram.format import load_diagram, save_diagram
from blocksim.gui.window import dialogs, fmutrust
from blocksim.gui.window.usercode import load_user_code
from blocksim.gui.document.document import DiagramDocument
from blocksim.diagram.model import Diagram

log = logging.getLogger(__name__)

MAX_RECENT = 10
SIMULINK_SUFFIXES = (".slx", ".mdl")  # opened by importing them
ENV_SETTINGS = "BLOCKSIM_SETTINGS"  # an .ini file to use instead of the user's settings


def settings() -> QSettings:
    """The editor's persistent settings (recent files)."""
    if os.environ.get(ENV_SETTINGS):
        return QSettings(os.environ[ENV_SETTINGS], QSettings.IniFormat)
    return QSettings("blocksim", "blocksim")


def unknown_blocks(diagram: Diagram, prefix: str = "") -> list[str]:
    """A message per block whose type is not registered: block 'path': unknown block type."""
    found = []
    for blk in diagram.blocks:
        if blk.subsystem is not None:
            found += unknown_blocks(blk.subsystem, f"{prefix}{blk.id}/")
        elif registry.get(blk.type) is None:
            found.append(f"block '{prefix}{blk.id}': unknown block type '{blk.type}'")
    return found


class FileController(QObject):
    """File operations on one document, with the window as parent of their dialogs."""

    recentChanged = Signal()
    opened = Signal(str)  # a file was opened or saved under a new name

    def __init__(self, window: QWidget, doc: DiagramDocument):
        super().__init__(window)
        self.window = window
        self.doc = doc
        self.example_name: str | None = None  # the example the untitled document copies

    # ----- unsaved changes -----
    def maybe_save(self) -> bool:
        """True if it is fine to replace the document (saved, discarded, or nothing to save)."""
        if not self.doc.dirty:
            return True
        answer = dialogs.ask_unsaved(self.window, self.doc.title)
        if answer == "save":
            return self.save()
        return answer == "discard"

    # ----- commands -----
    def new(self) -> bool:
        if not self.maybe_save():
            return False
        self.example_name = None
        self.doc.load(Diagram())
        return True

    def open(self) -> bool:
        """Ask for a file and open it."""
        if not self.maybe_save():
            return False
        start = str(self.doc.path.parent) if self.doc.path else str(examples_dir())
        path = dialogs.open_path(self.window, start)
        return self.open_path(path, ask=False) if path else False

    def open_path(self, path: str | os.PathLike[str], ask: bool = True) -> bool:
        """Open `path`; a bad file gives a message and leaves the current document alone."""
        if ask and not self.maybe_save():
            return False
        if Path(path).suffix.lower() in SIMULINK_SUFFIXES:
            return self.open_simulink(path)
        diagram = self._read(path, load_diagram, DiagramFileError, "Cannot open diagram")
        if diagram is None:
            return False
        not_loaded = load_user_code(self.window, diagram)  # before drawing: its blocks are known
        fmutrust.ask_for_diagram(self.window, diagram)
        self.example_name = None
        self.doc.load(diagram, Path(path))
        self.add_recent(Path(path))
        self.opened.emit(str(path))
        repairs = []
        if self.doc.repaired:
            repairs.append(f"{len(self.doc.repaired)} saved position(s) could not be used "
                           f"and were laid out anew ({self.doc.repaired[0]})")
        if self.doc.rerouted:
            repairs.append(f"{len(self.doc.rerouted)} wire(s) re-routed because their saved "
                           f"bends ran through a block or along another net "
                           f"({self.doc.rerouted[0]}); save to keep the repair")
        if repairs:
            self._status(f"{Path(path).name}: {'; '.join(repairs)}")
        unknown = unknown_blocks(diagram)
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        if unknown and not_loaded:  # the user said Cancel, or was told why it failed
            self._status(f"{Path(path).name}: {unknown[0]}{more}: drawn grey, since "
                         f"{not_loaded}; open it again to trust them.")
        elif unknown:  # opened (drawn grey, so it can be looked at), but it will not run
            where = (f"neither blocksim nor the diagram's Python files "
                     f"({', '.join(diagram.python)}) define it" if diagram.python else
                     "the diagram will not run until a block library providing it is installed")
            dialogs.message(self.window, "Unknown block types",
                            f"{path}, {unknown[0]}{more}: drawn grey; {where}.")
        return True

    def _read(self, path: str | os.PathLike[str], read: Callable[[Any], Any],
              expected: type[Exception], title: str) -> Any:
        """`read(path)`, or None after a message box: the expected error's own line, any
        other error with the path (never let a file crash the editor)."""
        try:
            return read(path)
        except expected as exc:
            dialogs.message(self.window, title, str(exc))
        except Exception as exc:
            log.exception("unexpected error reading %s", path)
            dialogs.message(self.window, title, f"{path}: {exc}")
        return None

    def _status(self, text: str) -> None:
        if hasattr(self.window, "statusBar"):
            self.window.statusBar().showMessage(text, 15000)

    def open_simulink(self, path: str | os.PathLike[str]) -> bool:
        """Import a Simulink model (blocksim.simulink) and open the result as a new unsaved
        document: Save asks where to keep it, so the model itself is never overwritten.
        What the import could not map is said in the status bar and the diagram's
        description (the placeholders make `Validate` name them)."""
        from blocksim.simulink.importer import import_simulink
        result = self._read(path, import_simulink, BlocksimError,
                            "Cannot import Simulink model")
        if result is None:
            return False
        diagram, report = result.diagram, result.report
        lines = report.lines()
        diagram.description = "\n".join([diagram.description, *lines])[:20_000]
        self.doc.load(diagram, None, dirty=True, untitled=True)  # new, unsaved
        self.example_name = Path(path).stem  # Save As suggests MODEL.json
        todo = []
        if report.placeholders:
            todo.append(f"{len(report.placeholders)} placeholder(s) to fill in "
                        f"({report.placeholders[0].path})")
        if report.to_set:
            todo.append(f"parameter(s) to set: {', '.join(list(report.to_set)[:5])}")
        self._status(f"Imported {Path(path).name}: {report.summary()}"
                     + (f"; {'; '.join(todo)}" if todo else "") + ". Save As keeps it.")
        return True

    def open_example(self, path: str | os.PathLike[str]) -> bool:
        """Open a shipped example as an untitled copy: Save asks where to put it, so the
        installed file is never overwritten (and it does not go to Open Recent)."""
        if not self.maybe_save():
            return False
        try:
            diagram = load_diagram(path)
        except Exception as exc:  # a broken installation must not crash the editor
            log.exception("cannot open example %s", path)
            dialogs.message(self.window, "Cannot open example", f"{path}: {exc}")
            return False
        # diagram.path stays the example's, so the data and Python files it names are found
        # while it is an untitled copy
        load_user_code(self.window, diagram)
        fmutrust.ask_for_diagram(self.window, diagram)
        self.doc.load(diagram, None, untitled=True)
        self.example_name = Path(path).stem
        if hasattr(self.window, "statusBar"):
            self.window.statusBar().showMessage(
                f"Example {self.example_name} opened as an untitled copy: Save asks where to "
                f"keep it.", 10000)
        return True

    def save(self) -> bool:
        if self.doc.path is None or self._is_example(self.doc.path):
            return self.save_as()
        return self.save_to(self.doc.path)

    def save_as(self) -> bool:
        suggested = str(self.doc.path) if self.doc.path and not self._is_example(
            self.doc.path) else f"{self.example_name or 'untitled'}.json"
        path = dialogs.save_path(self.window, suggested)
        if not path:
            return False
        if not path.lower().endswith(".json"):
            path += ".json"
        return self.save_to(Path(path))

    def save_to(self, path: Path) -> bool:
        """Write the document to `path` (atomically); a failure gives a message."""
        try:
            save_diagram(self.doc.diagram, path)
        except DiagramFileError as exc:
            dialogs.message(self.window, "Cannot save diagram", str(exc))
            return False
        renamed = self.doc.path != Path(path)
        self.example_name = None
        self.doc.mark_saved(Path(path))
        self.add_recent(Path(path))
        if renamed:
            self.opened.emit(str(path))
        log.info("saved %s", path)
        return True

    @staticmethod
    def _is_example(path: Path) -> bool:
        """Examples are opened as templates: saving asks for a new name."""
        try:
            folder = examples_dir().resolve()
            parent = Path(path).resolve().parent
            return parent == folder or parent.parent == folder
        except OSError:
            return False

    # ----- recent files -----
    def recent(self) -> list[str]:
        value = settings().value("recentFiles", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: Path) -> None:
        text = str(Path(path).resolve())
        items = [p for p in self.recent() if p != text]
        items.insert(0, text)
        store = settings()
        store.setValue("recentFiles", items[:MAX_RECENT])
        store.sync()
        self.recentChanged.emit()

    def clear_recent(self) -> None:
        store = settings()
        store.setValue("recentFiles", [])
        store.sync()
        self.recentChanged.emit()
