"""The diagram settings editor: the diagram's named parameters and its simulation settings.

Values are checked by the same code that loads a file and starts a run; nothing is emitted
unless everything is valid, and the diagram itself is never touched (the core makes undo
commands of the signals). Every edit applies as it is made (a choice at once, a number on
Enter or when its field loses the focus, a table cell when it is committed), one undo step
each, so a choice made here is what Save writes.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from blocksim.expressions import language as expressions
from blocksim.diagram.model import BACKENDS
from blocksim.engine.steppers import FIXED
from blocksim.errors import ExpressionError
from blocksim.gui.document import validation
from blocksim.gui.panels.forms import (ErrorLine, PanelComboBox, code_font, mark_invalid,
                                      muted_label)
from blocksim.gui.document.values import UNSET, text_to_value, value_to_text
from blocksim.diagram.model import SOLVERS, Diagram, SimulationSettings

# field -> (label, tooltip, placeholder when empty; None: a value is required)
_NUMBER_FIELDS: dict[str, tuple[str, str, str | None]] = {
    "start": ("Start [s]", "start time", None),
    "stop": ("Stop [s]", "stop time", None),
    "rtol": ("rtol", "relative error tolerance of adaptive solvers", None),
    "atol": ("atol", "absolute error tolerance of adaptive solvers", None),
    "max_step": ("Max step [s]", "largest step an adaptive solver may take", "no limit"),
    "output_interval": ("Output interval [s]", "spacing of the results grid (events add rows)",
                        "auto: (stop - start) / 500"),
    "step": ("Fixed step [s]", f"step size of the fixed-step solvers ({', '.join(FIXED)})",
             "needed by " + ", ".join(FIXED)),
}


class DiagramSettingsEditor(QWidget):
    """Diagram parameters (a name/value table) and simulation settings, applied on change."""

    parametersEdited = Signal(dict)
    settingsEdited = Signal(object)  # a SimulationSettings

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._diagram: Diagram | None = None
        self._loading = False  # showing the diagram: the widgets' change signals are not edits

        self.table = QTableWidget(0, 2, self)
        self.table.setHorizontalHeaderLabels(["Name", "Value"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.table.setMinimumHeight(7 * (self.fontMetrics().height() + 10))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setFont(code_font())
        self.table.setToolTip("Named values that block parameters (and other parameters) may "
                              "use in expressions; a value may be an expression itself.")
        add, remove = QPushButton("Add", self), QPushButton("Remove", self)
        add.clicked.connect(lambda: self.add_parameter())
        remove.clicked.connect(self.remove_selected)
        self.table.itemChanged.connect(lambda _item: self._edited())
        table_buttons = QHBoxLayout()
        table_buttons.addWidget(add)
        table_buttons.addWidget(remove)
        table_buttons.addStretch(1)
        params_box = QGroupBox("Diagram parameters", self)
        params_layout = QVBoxLayout(params_box)
        params_layout.addWidget(self.table)
        params_layout.addLayout(table_buttons)

        self.solver = PanelComboBox(self)
        self.solver.addItems(list(SOLVERS))
        self.solver.setToolTip("dopri5/dop853: adaptive explicit; radau/bdf: stiff; "
                               "euler/rk4: fixed step, crossings act at step ends")
        self.solver.currentTextChanged.connect(self._solver_changed)
        self.solver.currentIndexChanged.connect(lambda _index: self._edited())
        self.backend = _backend_box(self)
        self.backend.currentIndexChanged.connect(lambda _index: self._edited())
        self.number_edits: dict[str, QLineEdit] = {}
        sim_box = QGroupBox("Simulation", self)
        form = QFormLayout(sim_box)
        for key, (label, tip, placeholder) in _NUMBER_FIELDS.items():
            edit = QLineEdit(self)
            edit.setFont(code_font())
            edit.setToolTip(tip)
            edit.setPlaceholderText(placeholder or "required")
            edit.editingFinished.connect(self._edited)
            self.number_edits[key] = edit
            if key == "rtol":
                form.addRow("Solver", self.solver)
            form.addRow(label, edit)
        form.addRow("Backend", self.backend)

        self.error = ErrorLine(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(params_box, 1)
        layout.addWidget(sim_box)
        layout.addWidget(self.error)
        self.empty = muted_label("No diagram.", self)
        layout.addWidget(self.empty)
        self.setEnabled(False)

    # ----- public API -----
    def show_diagram(self, diagram: Diagram) -> None:
        """Show the parameters and settings of `diagram` (the top level)."""
        self._diagram = diagram
        self.setEnabled(True)
        self.empty.hide()
        self._reload()

    def add_parameter(self, name: str = "", value: str = "") -> None:
        """Append a row (empty by default) and start editing its name."""
        row = self.table.rowCount()
        loading, self._loading = self._loading, True
        try:
            self.table.insertRow(row)
            self.table.setItem(row, 0, QTableWidgetItem(name))
            self.table.setItem(row, 1, QTableWidgetItem(value))
        finally:
            self._loading = loading
        if not name:
            self.table.setCurrentCell(row, 0)
            self.table.editItem(self.table.item(row, 0))

    def remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows:
            self.table.removeRow(row)
        if rows:
            self._edited()

    def error_text(self) -> str:
        return self.error.text() if self.error.isVisible() else ""

    def apply(self) -> bool:
        """Validate everything; emit what changed only if all of it is valid."""
        if self._diagram is None:
            return False
        for edit in self.number_edits.values():
            mark_invalid(edit, False)
        try:
            parameters = self._read_parameters()
            settings = self._read_settings()
        except ValueError as exc:
            self.error.show_message(str(exc))
            return False
        problem = validation.check_parameters(parameters)
        if problem is None:
            problem = validation.check_settings(settings)
            if problem:
                self._mark_settings_field(problem)
        self.error.show_message(problem or "")
        if problem:
            return False
        if parameters != self._diagram.parameters:
            self.parametersEdited.emit(parameters)
        if settings != self._diagram.simulation:
            self.settingsEdited.emit(settings)
        return True

    def _edited(self) -> None:
        """One widget's edit is complete: apply the form (unless it is being filled in)."""
        if not self._loading:
            self.apply()

    # ----- reading the form -----
    def _read_parameters(self) -> dict[str, Any]:
        parameters: dict[str, Any] = {}
        for row in range(self.table.rowCount()):
            name = _cell(self.table, row, 0)
            text = _cell(self.table, row, 1)
            if not name and not text:
                continue
            if not name:
                raise ValueError(f"parameter in row {row + 1} has no name")
            if name in parameters:
                raise ValueError(f"parameter '{name}' is defined twice")
            value = text_to_value(text)
            if value is UNSET:
                raise ValueError(f"parameter '{name}' has no value")
            parameters[name] = value
        return parameters

    def _read_settings(self) -> SimulationSettings:
        values: dict[str, Any] = {"solver": self.solver.currentText(),
                                  "backend": self.backend.currentData()}
        for key, edit in self.number_edits.items():
            label, _tip, placeholder = _NUMBER_FIELDS[key]
            text = edit.text().strip()
            if not text:
                if placeholder is None:
                    mark_invalid(edit, True, "required")
                    raise ValueError(f"{label}: a value is required")
                values[key] = math.inf if key == "max_step" else None
                continue
            try:
                number = np.asarray(expressions.evaluate(text), dtype=float)
                if number.size != 1:
                    raise ExpressionError(f"'{text}' is not one number")
            except ExpressionError as exc:
                mark_invalid(edit, True, str(exc))
                raise ValueError(f"{label}: {exc}") from None
            values[key] = float(number.ravel()[0])
        # Fields this form does not show are kept as they are.
        return dataclasses.replace(self._diagram.simulation, **values)

    def _mark_settings_field(self, problem: str) -> None:
        for key, edit in self.number_edits.items():
            if re.search(rf"\b{key}\b", problem):
                mark_invalid(edit, True, problem)

    # ----- showing -----
    def _reload(self) -> None:
        diagram = self._diagram
        if diagram is None:
            return
        self._loading = True
        try:
            self._show(diagram)
        finally:
            self._loading = False

    def _show(self, diagram: Diagram) -> None:
        self.table.setRowCount(0)
        for name, value in diagram.parameters.items():
            self.add_parameter(name, value_to_text(value))
        sim = diagram.simulation
        self.solver.setCurrentText(sim.solver)
        _show_backend(self.backend, sim.backend)
        for key, edit in self.number_edits.items():
            value = getattr(sim, key)
            empty = value is None or (key == "max_step" and math.isinf(value))
            edit.setText("" if empty else value_to_text(value))
            mark_invalid(edit, False)
        self.error.clear_message()
        self._solver_changed(sim.solver)

    def _solver_changed(self, solver: str) -> None:
        fixed = solver in FIXED
        for key in ("rtol", "atol", "max_step"):
            self.number_edits[key].setEnabled(not fixed)
        self.number_edits["step"].setPlaceholderText(
            "required by " + solver if fixed else "used only by " + ", ".join(FIXED))


def _backend_box(parent: QWidget) -> QComboBox:
    """The backend choice: the default (None in the file: $BLOCKSIM_BACKEND, else python) or
    one of the simulator's backends; numba without numba, or c without a C compiler, is
    marked, since the run then falls back to Python (with a warning) rather than failing."""
    box = PanelComboBox(parent)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(10)  # long item texts must not widen the whole panel
    box.addItem("default", None)
    missing = {"numba": None if importlib.util.find_spec("numba") else "not installed",
               "c": None if _has_c_compiler() else "no C compiler"}
    for name in BACKENDS:
        why = missing.get(name)
        box.addItem(f"{name} ({why}: runs in Python)" if why else name, name)
    box.setToolTip("How the model runs: python (generated Python code), numba (dopri5 "
                   "segments in a compiled loop; needs numba) or c (dopri5 and radau in "
                   "generated C, compiled once per model by the system C compiler, about a "
                   "second, then cached; the fastest for long runs and sweeps). "
                   "default: $BLOCKSIM_BACKEND if set, else python.")
    return box


def _has_c_compiler() -> bool:
    from blocksim.ccode.cc import NoCompiler, compiler

    try:
        compiler()
    except NoCompiler:
        return False
    return True


def _show_backend(box: QComboBox, backend: str | None) -> None:
    """Select `backend`; a name this version does not know is shown as it is, so that
    Apply keeps it and the run reports it."""
    index = box.findData(backend)
    if index < 0:
        box.addItem(f"{backend} (unknown)", backend)
        index = box.count() - 1
    box.setCurrentIndex(index)


def _cell(table: QTableWidget, row: int, column: int) -> str:
    item = table.item(row, column)
    return item.text().strip() if item is not None else ""
