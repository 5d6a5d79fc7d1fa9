"""The block palette: every registered block type, grouped by category, searchable, and
draggable onto the canvas.

It is built from the registry and the types' own declarations (category, doc, describe),
so a third-party block library shows up here without any editor change.
"""
from __future__ import annotations

import html
import inspect

from PySide6.QtCore import QByteArray, QMimeData, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from blocksim import registry
from blocksim.blockspec import BlockType
from blocksim.gui.panels.forms import muted_label

BLOCK_MIME = "application/x-blocksim-block"
"""Drag-and-drop mime type; the data is the block type name in UTF-8."""

_TYPE_ROLE = Qt.ItemDataRole.UserRole
_SEARCH_ROLE = Qt.ItemDataRole.UserRole + 1


def block_mime_data(type_name: str) -> QMimeData:
    """The mime data a palette drag carries for one block type."""
    data = QMimeData()
    data.setData(BLOCK_MIME, QByteArray(type_name.encode("utf-8")))
    data.setText(type_name)
    return data


def summary(block_type: type[BlockType]) -> str:
    """The first paragraph of a type's documentation."""
    text = inspect.cleandoc(block_type.doc or block_type.__doc__ or "")
    return text.split("\n\n", 1)[0].replace("\n", " ")


class _BlockTree(QTreeWidget):
    """The tree, whose drags carry BLOCK_MIME data."""

    def mimeTypes(self) -> list[str]:
        return [BLOCK_MIME]

    def mimeData(self, items: list[QTreeWidgetItem]) -> QMimeData:
        names = [item.data(0, _TYPE_ROLE) for item in items if item.data(0, _TYPE_ROLE)]
        return block_mime_data(names[0]) if names else QMimeData()

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.CopyAction


class _SearchField(QLineEdit):
    """The search line; Down moves into the list so the keyboard alone can pick a block."""

    def __init__(self, tree: QTreeWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self._tree = tree

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Down:
            self._tree.setFocus()
            return
        super().keyPressEvent(event)


class BlockPalette(QWidget):
    """Every registered block type by category; double-click, Enter or drag to add one."""

    blockActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.tree = _BlockTree(self)
        self.tree.setHeaderHidden(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setAnimated(False)
        self.tree.itemActivated.connect(self._activated)
        self.tree.currentItemChanged.connect(self._show_summary)
        self.search = _SearchField(self.tree, self)
        self.search.setPlaceholderText("Search blocks (name, category, text)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.set_filter)
        self.search.returnPressed.connect(self._activate_first)
        self.summary = muted_label("", self)
        self.summary.setMinimumHeight(self.summary.fontMetrics().lineSpacing() * 3)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.summary)
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the tree from the registry (after a block library was loaded)."""
        self.tree.clear()
        by_category: dict[str, list[type[BlockType]]] = {}
        for block_type in registry.all_types().values():
            by_category.setdefault(block_type.category, []).append(block_type)
        for category in sorted(by_category, key=str.casefold):
            group = QTreeWidgetItem(self.tree, [category])
            group.setFlags(Qt.ItemFlag.ItemIsEnabled)
            font = group.font(0)
            font.setBold(True)
            group.setFont(0, font)
            for block_type in sorted(by_category[category], key=lambda t: t.name.casefold()):
                item = QTreeWidgetItem(group, [block_type.name])
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                              | Qt.ItemFlag.ItemIsDragEnabled)
                item.setData(0, _TYPE_ROLE, block_type.name)
                text = block_type.describe()
                item.setData(0, _SEARCH_ROLE, f"{block_type.name}\n{category}\n{text}".casefold())
                item.setToolTip(0, f"<pre>{html.escape(text.rstrip())}</pre>")
        self.tree.expandAll()
        self.set_filter(self.search.text())

    def set_filter(self, text: str) -> None:
        """Show only block types whose name, category or documentation has every word."""
        words = text.casefold().split()
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            shown = 0
            for j in range(group.childCount()):
                item = group.child(j)
                match = all(word in item.data(0, _SEARCH_ROLE) for word in words)
                item.setHidden(not match)
                shown += match
            group.setHidden(shown == 0)
            if words and shown:
                group.setExpanded(True)
        if self.search.text() != text:
            self.search.setText(text)

    def visible_types(self) -> list[str]:
        """Names of the block types the current filter shows, in tree order."""
        names = []
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            if group.isHidden():
                continue
            names += [group.child(j).data(0, _TYPE_ROLE) for j in range(group.childCount())
                      if not group.child(j).isHidden()]
        return names

    def item_for(self, type_name: str) -> QTreeWidgetItem | None:
        """The tree entry of a block type."""
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            for j in range(group.childCount()):
                if group.child(j).data(0, _TYPE_ROLE) == type_name:
                    return group.child(j)
        return None

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        name = item.data(0, _TYPE_ROLE)
        if name:
            self.blockActivated.emit(name)

    def _activate_first(self) -> None:
        names = self.visible_types()
        if names:
            self.blockActivated.emit(names[0])

    def _show_summary(self, item: QTreeWidgetItem | None, _previous=None) -> None:
        name = item.data(0, _TYPE_ROLE) if item is not None else None
        block_type = registry.get(name) if name else None
        self.summary.setText(f"<b>{html.escape(name)}</b>: {html.escape(summary(block_type))}"
                             if block_type else "")
