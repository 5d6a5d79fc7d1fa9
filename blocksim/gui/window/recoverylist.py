"""The recovery question when several editors left unsaved work: one dialog, not one per file.

Each piece is a checked line; "Recover Checked" opens the checked ones and deletes the rest,
"Later" (also Escape or closing the dialog) keeps all of them for the next start, so nothing is
lost by dismissing it.
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QListWidget, QListWidgetItem,
                               QVBoxLayout, QWidget)


class RecoveryList(QDialog):
    """Checkable list of autosaved work; `choices()` is what the user checked."""

    def __init__(self, parent: QWidget | None, descriptions: Sequence[str]):
        super().__init__(parent)
        self.setWindowTitle("Recover unsaved work")
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"blocksim stopped {len(descriptions)} times with unsaved changes. The checked "
            "work opens again (each in its own window); unchecked work is deleted.\n"
            "Later keeps all of it for the next start.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.items = QListWidget()
        for text in descriptions:
            item = QListWidgetItem(text)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.items.addItem(item)
        layout.addWidget(self.items)
        buttons = QDialogButtonBox()
        self.recover_button = buttons.addButton("Recover Checked",
                                                QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton("Later", QDialogButtonBox.ButtonRole.RejectRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.recover_button.setDefault(True)
        layout.addWidget(buttons)
        self.resize(560, 120 + 24 * min(len(descriptions), 12))

    def choices(self) -> list[bool]:
        return [self.items.item(i).checkState() == Qt.CheckState.Checked
                for i in range(self.items.count())]
