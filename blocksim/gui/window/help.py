"""The Help menu's windows: the block reference and the keyboard shortcuts.

The reference is generated from the block declarations, exactly the text `blocksim describe
TYPE` prints (`BlockType.describe`), so the editor and the command line never disagree and a
third-party block library is documented the moment it is loaded. The shortcuts list is read
from the window's own actions, so it cannot go stale either.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from blocksim.blocktypes import registry
from blocksim.gui.panels.forms import code_font

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

# Gestures that are not actions, listed with the keys.
MOUSE_GESTURES = [
    ("Drag from an output port to an input", "connect a wire"),
    ("Drag from a wire", "branch: a new wire from the same output"),
    ("Drag from a connected input", "take that wire's end to another input"),
    ("Shift+drag a wire segment", "move the segment"),
    ("Double-click a block", "edit its parameters (a subsystem: open it)"),
    ("Right-click", "the block's, wire's or canvas's menu"),
    ("Mouse wheel", "zoom"),
]


def reference_text(type_name: str) -> str:
    """A block type's reference, the same text as `blocksim describe TYPE`."""
    block_type = registry.get(type_name)
    if block_type is None:
        return f"'{type_name}' is not a known block type.\n"
    return block_type.describe()


class BlockReference(QDialog):
    """Every block type in a searchable list; the chosen one's reference beside it."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Block Reference — blocksim")
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Filter block types")
        self.search.setClearButtonEnabled(True)
        self.types = QListWidget(self)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setFont(code_font())
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        left = QWidget(self)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.search)
        column.addWidget(self.types)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(left)
        split.addWidget(self.text)
        split.setSizes([210, 700])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.resize(940, 600)  # the describe text is ~90 columns wide
        self.types.currentTextChanged.connect(self._show)
        self.search.textChanged.connect(self._filter)
        self.refresh()

    def refresh(self) -> None:
        """List the registered types again (a block library may have been loaded)."""
        current = self.shown_type()
        self.types.clear()
        self.types.addItems(sorted(registry.all_types(), key=str.casefold))
        self._filter(self.search.text())
        if current:
            self.show_type(current)

    def show_type(self, type_name: str) -> None:
        """Select `type_name` in the list and show its reference."""
        self.search.clear()
        found = self.types.findItems(type_name, Qt.MatchFlag.MatchExactly)
        if found:
            self.types.setCurrentItem(found[0])
        else:
            self.text.setPlainText(reference_text(type_name))

    def shown_type(self) -> str:
        item = self.types.currentItem()
        return item.text() if item is not None else ""

    def _show(self, type_name: str) -> None:
        if type_name:
            self.text.setPlainText(reference_text(type_name))

    def _filter(self, text: str) -> None:
        words = text.casefold().split()
        for i in range(self.types.count()):
            item = self.types.item(i)
            item.setHidden(not all(w in item.text().casefold() for w in words))


def _on_a_keyboard(key: str) -> bool:
    """Whether a shortcut's text names keys every keyboard has: a combination with a
    modifier, F1-F12 or a named key (not the Undo, Copy or F14 keys of some Unix keyboards
    that Qt's platform bindings add)."""
    return "+" in key.rstrip("+") or bool(re.fullmatch(r"F([1-9]|1[0-2])", key)) or key in (
        "Del", "Delete", "Backspace", "Left", "Right", "Up", "Down", "Return", "Enter", "Esc",
        "Home", "End", "PgUp", "PgDown", "Tab", "Space", "Ins")


def shortcut_rows(actions: Iterable[QAction]) -> list[tuple[str, str]]:
    """(keys, what it does) for every action that has a shortcut, menu order."""
    rows, seen = [], set()
    for action in actions:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        keys = [k for k in keys if k and _on_a_keyboard(k)]
        name = action.text().replace("&", "").rstrip("…").strip()
        if not keys or name in seen:
            continue
        seen.add(name)
        rows.append((", ".join(keys), name))
    return rows


class ShortcutList(QDialog):
    """The keyboard shortcuts of the window's actions, then the mouse gestures."""

    def __init__(self, window: "MainWindow"):
        super().__init__(window)
        self.setWindowTitle("Keyboard Shortcuts — blocksim")
        rows = shortcut_rows(_menu_actions(window)) + MOUSE_GESTURES
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setHorizontalHeaderLabels(["Keys", "Does"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (keys, does) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(keys))
            self.table.setItem(row, 1, QTableWidgetItem(does))
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(buttons)
        layout.addLayout(row)
        self.resize(560, 620)

    def rows(self) -> list[tuple[str, str]]:
        return [(self.table.item(r, 0).text(), self.table.item(r, 1).text())
                for r in range(self.table.rowCount())]


def _menu_actions(window: "MainWindow") -> list[QAction]:
    """The actions of the menu bar's menus, in menu order (submenus included)."""
    found: list[QAction] = []

    def walk(menu) -> None:
        for action in menu.actions():
            if action.menu() is not None:
                walk(action.menu())
            elif not action.isSeparator():
                found.append(action)

    for top in window.menuBar().actions():
        if top.menu() is not None:
            walk(top.menu())
    nudges = getattr(window.actions_, "nudges", [])  # canvas-only keys, not in a menu
    return found + list(nudges)


class HelpWindows:
    """Opens (and keeps, non-modal) the help windows of one main window."""

    def __init__(self, window: "MainWindow"):
        self.window = window
        self.reference: BlockReference | None = None
        self.shortcuts: ShortcutList | None = None

    def show_reference(self, type_name: str = "") -> BlockReference:
        """The block reference, on `type_name` if given."""
        if self.reference is None:
            self.reference = BlockReference(self.window)
        else:
            self.reference.refresh()
        if type_name:
            self.reference.show_type(type_name)
        elif not self.reference.shown_type() and self.reference.types.count():
            self.reference.types.setCurrentRow(0)
        self.reference.show()
        self.reference.raise_()
        return self.reference

    def help_on_selection(self) -> BlockReference:
        """F1: the reference of the selected block's type (the list, if none is selected)."""
        scene = self.window.canvas.scene
        ids = scene.selected_block_ids()
        type_name = scene.blocks[ids[0]].block_type if len(ids) == 1 else ""
        return self.show_reference(type_name)

    def show_shortcuts(self) -> ShortcutList:
        if self.shortcuts is None:
            self.shortcuts = ShortcutList(self.window)
        self.shortcuts.show()
        self.shortcuts.raise_()
        return self.shortcuts
