"""The editor of a file parameter (`Param.suffixes`: FromFile's signal file, an FMU's
.fmu): its text, as for any text parameter, and a button that picks the file, written
relative to the diagram's folder when it lies inside it (as the block resolves it)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QToolButton, QWidget

from blocksim.blocktypes.blockspec import Param
from blocksim.gui.panels.param_fields import LineField, tooltip


def relative_to(path: str, folder: Path | None) -> str:
    """`path` as the parameter stores it: relative to `folder` when inside it."""
    if folder is None:
        return path
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(folder)).as_posix()
    except ValueError:
        return path


class FileField(LineField):
    """A text field with a "…" button opening a file chooser filtered by the suffixes."""

    def __init__(self, prm: Param, parent: QWidget | None = None, folder: Path | None = None):
        super().__init__(prm, parent)
        self.folder = folder
        self.on_chosen: Callable[[str], Any] | None = None  # (the editor asks about trust)
        box = QWidget(parent)
        layout = QHBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.edit.setParent(box)
        layout.addWidget(self.edit, 1)
        self.button = QToolButton(box)
        self.button.setText("…")
        self.button.setToolTip(f"Choose the {prm.name} ({', '.join(prm.suffixes)})")
        layout.addWidget(self.button)
        self.button.clicked.connect(self.browse)
        self.widget = box
        box.setToolTip(tooltip(prm))

    def file_filter(self) -> str:
        patterns = " ".join(f"*{suffix}" for suffix in self.prm.suffixes)
        return f"{patterns[2:].upper() or 'Files'} ({patterns});;All files (*)" \
            if len(self.prm.suffixes) == 1 else f"Files ({patterns});;All files (*)"

    def browse(self) -> None:
        start = str(self.folder) if self.folder is not None else os.getcwd()
        path, _ = QFileDialog.getOpenFileName(self.widget, f"Choose the {self.prm.name}",
                                              start, self.file_filter())
        if path:
            self.choose(path)

    def choose(self, path: str) -> None:
        """Put a chosen file in the field, as if typed and confirmed."""
        self.edit.setText(relative_to(path, self.folder))
        if self.on_chosen is not None:
            self.on_chosen(path)
        self.edit.editingFinished.emit()
