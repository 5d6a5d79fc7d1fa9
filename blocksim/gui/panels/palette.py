"""The block palette: every registered block type, grouped by category, searchable, and
draggable onto the canvas.

It is built from the registry and the types' own declarations (category, doc, describe),
so a third-party block library shows up here without any editor change.
"""
from __future__ import annotations

import html
import inspect
from dataclasses import dataclass

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

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import BlockType
from blocksim.gui.panels.forms import muted_label

BLOCK_MIME = "application/x-blocksim-block"
"""Drag-and-drop mime type; the data is the block type name in UTF-8."""

_TYPE_ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True)
class _Entry:
    """One block type as the palette lists and searches it."""

    name: str
    category: str
    text: str  # category and documentation, case-folded, for the search
    tooltip: str


def match_rank(entry: _Entry, words: tuple[str, ...]) -> int | None:
    """How well a type matches search words (lower is better), None if it does not:
    0 its name starts with the first word and has all of them, 1 its name has them all,
    2 name, category and documentation together have them all."""
    name = entry.name.casefold()
    if all(word in name for word in words):
        return 0 if name.startswith(words[0]) else 1
    if all(word in name or word in entry.text for word in words):
        return 2
    return None


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
        self._entries = []
        for block_type in registry.all_types(declared=True).values():
            text = block_type.describe()
            self._entries.append(_Entry(block_type.name, block_type.category,
                                        f"{block_type.category}\n{text}".casefold(),
                                        f"<pre>{html.escape(text.rstrip())}</pre>"))
        self._entries.sort(key=lambda e: (e.category.casefold(), e.name.casefold()))
        self._shown_words = None
        self.set_filter(self.search.text())

    def set_filter(self, text: str) -> None:
        """Without search words: every type, grouped by category. With words: the types
        whose name, category or documentation has every word, as one list ranked by
        `match_rank` (names starting with the words, names containing them, then the rest)."""
        words = tuple(text.casefold().split())
        if words != self._shown_words:
            self._shown_words = words
            self.tree.clear()
            if words:
                ranked = sorted((rank, e.name.casefold(), e) for e in self._entries
                                if (rank := match_rank(e, words)) is not None)
                for _rank, _key, entry in ranked:
                    self._item(self.tree, entry, with_category=True)
            else:
                self._show_grouped()
        if self.search.text() != text:
            self.search.setText(text)

    def _show_grouped(self) -> None:
        group = None
        for entry in self._entries:
            if group is None or group.text(0) != entry.category:
                group = QTreeWidgetItem(self.tree, [entry.category])
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
            self._item(group, entry)
        self.tree.expandAll()

    @staticmethod
    def _item(parent, entry: "_Entry", with_category: bool = False) -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [entry.name])
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                      | Qt.ItemFlag.ItemIsDragEnabled)
        item.setData(0, _TYPE_ROLE, entry.name)
        item.setToolTip(0, entry.tooltip)
        if with_category:
            item.setStatusTip(0, entry.category)
        return item

    def _all_items(self) -> list[QTreeWidgetItem]:
        """Block entries as shown (a category's children, or the ranked list), in order."""
        items = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top.data(0, _TYPE_ROLE):
                items.append(top)
            else:
                items += [top.child(j) for j in range(top.childCount())]
        return items

    def visible_types(self) -> list[str]:
        """Names of the block types the current filter shows, in the order shown."""
        return [item.data(0, _TYPE_ROLE) for item in self._all_items() if not item.isHidden()]

    def item_for(self, type_name: str) -> QTreeWidgetItem | None:
        """The tree entry of a block type (None if the search hides it)."""
        for item in self._all_items():
            if item.data(0, _TYPE_ROLE) == type_name:
                return item
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
