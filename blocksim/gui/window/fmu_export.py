"""File > Export FMU…: the shown diagram as an FMU (`blocksim.export_fmu`), from the editor."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from blocksim.gui.window import dialogs

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

# What the user picks: (label, FMI version, kind)
CHOICES = (("FMI 2.0, model exchange", 2, "me"), ("FMI 2.0, co-simulation", 2, "cs"),
           ("FMI 3.0, model exchange", 3, "me"), ("FMI 3.0, co-simulation", 3, "cs"))


def export_fmu(window: "MainWindow") -> Path | None:
    """Ask where and which FMI flavour, export the diagram as it is now (also unsaved
    edits); a diagram that cannot be exported gets the one-line reason in a message."""
    from blocksim.errors import BlocksimError
    from blocksim.export.fmu import export_fmu as export

    stem = window.doc.path.stem if window.doc.path else "model"
    label = dialogs.ask_choice(window, "Export FMU", "FMU kind:", [c[0] for c in CHOICES])
    if label is None:
        return None
    _, fmi, kind = next(c for c in CHOICES if c[0] == label)
    path = dialogs.save_path(window, f"{stem}.fmu", "FMUs (*.fmu)")
    if not path:
        return None
    if Path(path).suffix.lower() != ".fmu":
        path += ".fmu"
    diagram = copy.copy(window.doc.diagram)  # (the document's own is changed by commands only)
    if window.doc.path is not None:
        diagram.path = window.doc.path  # names the FMU's model and the messages
    QApplication.setOverrideCursor(Qt.WaitCursor)  # compiling C: about half a second
    try:
        done = export(diagram, path, fmi=fmi, kind=kind)
    except (BlocksimError, OSError) as exc:
        QApplication.restoreOverrideCursor()
        dialogs.message(window, "Cannot export FMU", str(exc))
        return None
    QApplication.restoreOverrideCursor()
    window.statusBar().showMessage(f"Saved {done.path} ({label})", 5000)
    return done.path
