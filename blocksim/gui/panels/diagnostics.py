"""The problems panel: what `validation.check_diagram` found, or why the last run failed,
one row per problem, and a way to jump to the block (and port) at fault."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from blocksim.gui.document.validation import Diagnostic

_LOCATION_ROLE = Qt.ItemDataRole.UserRole
_ICONS = {"error": QStyle.StandardPixmap.SP_MessageBoxCritical,
          "warning": QStyle.StandardPixmap.SP_MessageBoxWarning}
OK_TEXT = "OK: no problems"


class DiagnosticsPanel(QWidget):
    """A list of diagnostics (message, block, port); activating a row asks to locate it."""

    locateRequested = Signal(str, str)  # block path, port or ""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.list = QTreeWidget(self)
        self.list.setColumnCount(3)
        self.list.setHeaderLabels(["Problem", "Block", "Port"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(False)
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.list.itemActivated.connect(self._activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        self.diagnostics: list[Diagnostic] = []
        self.show_diagnostics([])

    def show_diagnostics(self, diagnostics: list[Diagnostic]) -> None:
        """Replace the list; an empty list shows the OK state."""
        self.diagnostics = list(diagnostics)
        self.list.clear()
        style = self.style()
        if not diagnostics:
            item = QTreeWidgetItem(self.list, [OK_TEXT, "", ""])
            item.setIcon(0, style.standardIcon(QStyle.StandardPixmap.SP_DialogApplyButton))
            item.setForeground(0, QBrush(QColor("#1e7b34")))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            return
        for diag in diagnostics:
            message = diag.message + (f"  (wire {diag.wire})" if diag.wire and
                                      diag.wire not in diag.message else "")
            item = QTreeWidgetItem(self.list, [message, diag.block or "", diag.port or ""])
            item.setIcon(0, style.standardIcon(_ICONS.get(diag.severity,
                                                          QStyle.StandardPixmap.SP_MessageBoxInformation)))
            item.setToolTip(0, f"{diag.severity}: {message}")
            item.setData(0, _LOCATION_ROLE, (diag.block or "", diag.port or ""))

    def is_ok(self) -> bool:
        """Whether the panel shows no problem at all."""
        return not self.diagnostics

    def row_texts(self) -> list[tuple[str, str, str]]:
        """The (message, block, port) texts of every row, as shown."""
        rows = []
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            rows.append((item.text(0), item.text(1), item.text(2)))
        return rows

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        location = item.data(0, _LOCATION_ROLE)
        if location and location[0]:
            self.locateRequested.emit(location[0], location[1])
