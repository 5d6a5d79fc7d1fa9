"""Analysis > Operating Point: the diagram's trimmed operating point (blocksim.operating_point)
as a table of states, inputs, outputs and discrete states with the residuals, and "Write as
Initial Values", which puts them into the blocks' initial-value parameters as ONE undo step.

The trim runs in a worker thread on a copy of the diagram taken when asked. One that does not
converge is said in a message box and shown with its residuals; its values cannot be written.
"""
from __future__ import annotations

import copy
import logging
from html import escape
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDialog, QHBoxLayout,
                               QHeaderView, QLabel,
                               QPlainTextEdit, QProgressBar, QPushButton, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout)

from blocksim.errors import BlocksimError
from blocksim.gui.analysis import core
from blocksim.gui.analysis.background import AnalysisTask
from blocksim.gui.document.commands import Composite, SetParams
from blocksim.gui.window import dialogs

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

log = logging.getLogger(__name__)

METHODS = {"trim": "Trim: solve for where the derivatives vanish",
           "steady": "Steady state: simulate to the stop time and take where it is"}
SECTIONS = (("states", "state"), ("discrete", "discrete state"), ("inputs", "input"),
            ("outputs", "output"), ("residuals", "residual"))
BAD = QColor("#C00000")


def rows_of(point: Any) -> list[tuple[str, str, str]]:
    """(kind, name, value) rows of an OperatingPoint's named values, section by section."""
    rows = []
    for attribute, kind in SECTIONS:
        values = getattr(point, attribute, None)
        if values is None:
            continue
        items = values.items() if isinstance(values, Mapping) else (
            (f"[{i}]", v) for i, v in enumerate(np.atleast_1d(np.asarray(values))))
        for name, value in items:
            rows.append((kind, str(name), _value(value)))
    return rows


def _value(value: Any) -> str:
    array = np.asarray(value)
    if array.ndim == 0:
        try:
            return f"{float(array):.10g}"
        except (TypeError, ValueError):
            return str(value)
    return "[" + ", ".join(f"{float(v):.10g}" for v in array.ravel()) + "]"


def initial_value_edits(window: "MainWindow", point: Any) -> Composite | None:
    """The undo step writing `point` as the diagram's initial values: one SetParams per block
    whose parameters change (blocks in subsystems by their slash-qualified ids), or None
    when nothing would change."""
    doc = window.doc
    if hasattr(point, "initial_value_changes"):  # what apply_to would do, nothing done
        changes = point.initial_value_changes(doc.diagram)
    else:  # on a copy: the document changes only through the undo stack
        changes = point.apply_to(copy.deepcopy(doc.diagram))
    by_block: dict[str, dict[str, Any]] = {}
    for block_id, parameter, value in changes:
        value = value.tolist() if hasattr(value, "tolist") else value
        by_block.setdefault(str(block_id), {})[str(parameter)] = value
    parts = []
    for qualified, new in by_block.items():
        *path, block_id = qualified.split("/")
        level = tuple(path)
        params = dict(doc.level(level).block(block_id).params)
        if all(params.get(k) == v for k, v in new.items()):
            continue
        params.update(new)
        parts.append(SetParams(doc, level, block_id, params))
    if not parts:
        return None
    return Composite(f"Write the operating point as initial values ({len(parts)} "
                     f"block{'s' * (len(parts) != 1)})", parts)


class OperatingPointDialog(QDialog):
    """The operating point of one window's diagram."""

    def __init__(self, window: "MainWindow"):
        super().__init__(window)
        self.setObjectName("operating-point-dialog")
        self.setAttribute(Qt.WA_DeleteOnClose)
        self.window_ = window
        self.point: Any = None
        self.task = AnalysisTask(self)
        self.task.finished.connect(self._computed)
        self.task.failed.connect(self._failed)

        self.status = QLabel(self)
        self.status.setObjectName("operating-point-status")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        self.method = QComboBox(self)
        for key, text in METHODS.items():
            self.method.addItem(text, key)
        self.method.currentIndexChanged.connect(lambda _: self.compute())
        choose = QHBoxLayout()
        choose.addWidget(QLabel("Method", self))
        choose.addWidget(self.method, 1)
        choose.addWidget(self.progress)
        top = QVBoxLayout()
        top.addLayout(choose)
        top.addWidget(self.status)

        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["kind", "name", "value"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        self.report = QPlainTextEdit(self)
        self.report.setReadOnly(True)
        self.report.setLineWrapMode(QPlainTextEdit.NoWrap)
        tabs = QTabWidget(self)
        tabs.addTab(self.table, "Values")
        tabs.addTab(self.report, "Report")

        self.recompute_button = QPushButton("Recompute", self)
        self.write_button = QPushButton("Write as Initial Values", self)
        self.write_button.setToolTip("Put the trimmed states into the blocks' initial values "
                                     "(one step of Edit > Undo)")
        close = QPushButton("Close", self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.recompute_button)
        buttons.addWidget(self.write_button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(tabs, 1)
        layout.addLayout(buttons)
        self.resize(620, 560)
        self.recompute_button.clicked.connect(self.compute)
        self.write_button.clicked.connect(self.write_initial_values)
        close.clicked.connect(self.close)
        self._show(None)

    def compute(self) -> bool:
        if self.task.is_running():
            return False
        frozen = copy.deepcopy(self.window_.doc.diagram)  # on the GUI thread: see core
        self.progress.show()
        self.recompute_button.setEnabled(False)
        self.write_button.setEnabled(False)
        method = self.method.currentData()
        self.method.setEnabled(False)
        self.status.setText("Finding the operating point…" if method == "trim" else
                            "Simulating to the stop time…")
        self.task.start(lambda: core.operating_point(frozen, method))
        return True

    def _computed(self, point: Any) -> None:
        self.progress.hide()
        self.method.setEnabled(True)
        self.recompute_button.setEnabled(True)
        self._show(point)
        if not getattr(point, "converged", True):
            dialogs.message(self, "Operating point",
                            "The conditions do not hold: the values found are shown with "
                            "their residuals, and cannot be written as initial values.")

    def _failed(self, message: str) -> None:
        self.progress.hide()
        self.method.setEnabled(True)
        self.recompute_button.setEnabled(True)
        self._show(None)
        self.status.setText(f"Cannot find the operating point: {message}")
        dialogs.message(self, "Cannot find the operating point", message)

    def _show(self, point: Any) -> None:
        self.point = point
        rows = rows_of(point) if point is not None else []
        self.table.setRowCount(len(rows))
        for r, (kind, name, value) in enumerate(rows):
            for c, text in enumerate((kind, name, value)):
                item = QTableWidgetItem(text)
                if kind == "residual":
                    item.setToolTip("what is left of the condition at the point found "
                                    "(0 when it holds exactly)")
                self.table.setItem(r, c, item)
        report = point.report() if point is not None and hasattr(point, "report") else ""
        self.report.setPlainText(str(report))
        converged = point is not None and bool(getattr(point, "converged", True))
        self.write_button.setEnabled(converged and hasattr(point, "apply_to"))
        if point is None:
            return
        worst = getattr(point, "worst", None)
        tolerance = getattr(point, "tolerance", None)
        largest = (f": the largest residual is {abs(worst[1]):.3g} ({worst[0]})"
                   + (f", {'within' if converged else 'above'} the tolerance {tolerance:g}"
                      if tolerance else "")
                   if worst and worst[0] else "")
        if converged:
            found = ("Operating point found" if getattr(point, "method", "trim") == "trim"
                     else "Steady state reached")
            self.status.setText(f"{found}{largest}.")
        else:
            self.status.setText("<span style='color:#C00000'>The conditions do not hold"
                                f"</span>{escape(largest)}. The values found and their "
                                "residuals are below.")
            for r, (kind, _, _) in enumerate(rows):
                if kind == "residual":
                    self.table.item(r, 2).setForeground(BAD)

    def write_initial_values(self) -> None:
        """One undo step putting the operating point into the blocks' initial values."""
        if self.point is None:
            return
        try:
            command = initial_value_edits(self.window_, self.point)
        except KeyError as exc:
            dialogs.message(self, "Cannot write the initial values",
                            f"the operating point names a block the diagram no longer has "
                            f"({exc}); recompute it")
            return
        except BlocksimError as exc:
            dialogs.message(self, "Cannot write the initial values", str(exc))
            return
        except Exception as exc:  # a bug: a message and the log, never a traceback
            log.exception("writing the operating point as initial values failed")
            dialogs.message(self, "Cannot write the initial values",
                            f"internal error: {type(exc).__name__}: {exc}")
            return
        if command is None:
            self.status.setText("The initial values are the operating point already.")
            return
        self.window_.doc.push(command)
        left = list(getattr(self.point, "unwritten", []) or [])
        self.status.setText(f"{command.text()}; Edit > Undo takes it back."
                            + (f" No block parameter starts the state of "
                               f"{', '.join(left)}: a run from the diagram starts those "
                               f"elsewhere." if left else ""))

    def closeEvent(self, event) -> None:
        try:  # a late result has nowhere to go
            self.task.finished.disconnect(self._computed)
            self.task.failed.disconnect(self._failed)
        except (RuntimeError, TypeError):  # closed before: disconnected already
            pass
        super().closeEvent(event)


def open_operating_point_dialog(window: "MainWindow") -> OperatingPointDialog:
    dialog = OperatingPointDialog(window)
    window.operating_point_dialog = dialog
    dialog.show()
    dialog.compute()
    return dialog
