"""The open diagram, its undo stack and its file: what every editor view observes.

The model (`blocksim.diagram.model.Diagram`) stays plain Python; undo commands change it and then
call `notify`, which emits `changed`, so the canvas and the panels redraw from the model
instead of keeping state of their own.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from blocksim.gui.layout.autolayout import layout_diagram
from blocksim.gui.layout.layoutcheck import drop_unusable_layout
from blocksim.gui.canvas.portinfo import scope_names, set_files_folder
from blocksim.gui.canvas.reroute import repair_saved
from blocksim.blocktypes import registry
from blocksim.gui.document.declared import declare_components
from blocksim.gui.window.qtcompat import protect_none
from blocksim.diagram.model import Diagram

log = logging.getLogger(__name__)
protect_none()  # PySide6 6.12 on Python < 3.12 would crash after many calls (see qtcompat)

Level = tuple[str, ...]  # subsystem block ids from the top diagram down


class DiagramDocument(QObject):
    """One open diagram: the model, where it lives on disk and how to undo changes to it."""

    changed = Signal(tuple)  # the level that changed, after every edit, undo and redo
    reset = Signal()  # a different diagram was loaded (New, Open, recovery)
    titleChanged = Signal()  # path or unsaved-changes state

    def __init__(self, diagram: Diagram | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self._key = object()  # what its declared component types are registered under
        self.destroyed.connect(functools.partial(registry.undeclare, self._key))
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.diagram = Diagram()
        self.path: Path | None = None
        self._recovered = False
        self.repaired: list[str] = []  # layout values of the loaded file that were unusable
        self.rerouted: list[str] = []  # wires of the loaded file re-routed (reroute.repair_saved)
        self.load(diagram or Diagram())

    def _clean_changed(self, _clean: bool) -> None:
        self.titleChanged.emit()

    # ----- whole-document changes -----
    def load(self, diagram: Diagram, path: Path | None = None, dirty: bool = False,
             untitled: bool = False) -> None:
        """Show `diagram`, placing blocks that have no position; forgets the undo history.

        Automatic placement happens here, before any undo history exists, so a file without
        layout opens unchanged (not dirty); its layout is written on the next save. So are
        positions that were unusable (not finite, absurdly far): dropped and placed anew.
        Saved wire bends that run through a block or along another net are re-routed; that
        does mark the document unsaved (`rerouted` lists the wires).
        """
        set_files_folder(path or diagram.path)  # (an FMU's ports come from its file)
        declare_components(self._key, diagram)  # its own component types, before drawing
        self.repaired = drop_unusable_layout(diagram)
        for message in self.repaired:
            log.warning("%s: %s", diagram.source, message)
        self.rerouted = repair_saved(diagram)  # wires the file drew through blocks or
        if self.rerouted:  # on other nets: the diagram differs from the file now
            log.warning("%s: %d wire(s) re-routed: saved bends went through a block or "
                        "along another net (%s)", diagram.source, len(self.rerouted),
                        ", ".join(self.rerouted))
        layout_diagram(diagram)
        self.diagram = diagram
        self.path = Path(path) if path else (Path(diagram.path) if diagram.path else None)
        if untitled:  # a copy (of an example): no file yet, though its data files stay
            self.path = None  # where diagram.path says, so it runs as the original does
        self.undo_stack.clear()
        # recovered work, and re-routed wires, count as unsaved until saved
        self._recovered = dirty or bool(self.rerouted)
        self.reset.emit()
        self.titleChanged.emit()

    def mark_saved(self, path: Path) -> None:
        """After a successful save to `path`."""
        self.path = Path(path)
        self.diagram.path = self.path
        set_files_folder(self.path)
        self._recovered = False
        self.undo_stack.setClean()
        self.titleChanged.emit()

    @property
    def dirty(self) -> bool:
        """Whether there are changes since the last save (or load)."""
        return self._recovered or not self.undo_stack.isClean()

    @property
    def title(self) -> str:
        """How the window names this document."""
        return self.path.name if self.path else "untitled"

    # ----- levels -----
    def level(self, path: Level) -> Diagram:
        """The diagram at a subsystem path; KeyError if it does not exist (any more)."""
        diagram = self.diagram
        for block_id in path:
            block = diagram.block(block_id)
            if block.subsystem is None:
                raise KeyError(block_id)
            diagram = block.subsystem
        return diagram

    def has_level(self, path: Level) -> bool:
        try:
            self.level(path)
        except KeyError:
            return False
        return True

    def names(self, path: Level) -> dict[str, Any]:
        """Parameter values visible at a level, for drawing parameter-dependent ports."""
        diagram = self.diagram
        names = scope_names(diagram)
        for block_id in path:
            sub = diagram.block(block_id).subsystem
            if sub is None:
                break
            names = scope_names(sub, names)
            diagram = sub
        return names

    # ----- edits -----
    def push(self, command: QUndoCommand) -> None:
        """Apply an edit through the undo stack (the only way the model changes)."""
        self.undo_stack.push(command)

    def notify(self, level: Level) -> None:
        """Called by commands after they changed the model."""
        self.changed.emit(tuple(level))

