"""The Sweep dialog's input side: swept parameter rows, metrics, draws, workers, backend.

It only collects text into a `spec.SweepRequest`; every check is the CLI's (spec.py).
"""
from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QFormLayout, QGridLayout, QHBoxLayout, QLabel,
                               QLineEdit, QListWidget, QPushButton, QSpinBox, QVBoxLayout,
                               QWidget)

from blocksim.gui.sweep.spec import (FIELD_NAMES, GRID, KINDS, DiagramChoices,
                                     SweepRequest, SweptParameter)
from blocksim.diagram.model import BACKENDS
from blocksim.sweeps.executors import default_workers

MAX_ROWS = 6


class ParameterRow:
    """One swept parameter: name, kind and up to three fields (start/stop/N or mu/sigma)."""

    def __init__(self, names: list[str], parent: QWidget):
        self.name = QComboBox(parent)
        self.name.addItems(names)
        self.kind = QComboBox(parent)
        self.kind.addItems(KINDS)
        self.fields = [QLineEdit(parent) for _ in range(3)]
        self.labels = [QLabel(parent) for _ in range(3)]
        self.remove = QPushButton("Remove", parent)
        self.remove.setAutoDefault(False)
        self.filled: tuple[str, ...] = ()  # the defaults put in the fields, while unedited
        self.kind.currentTextChanged.connect(self._kind_changed)
        self._kind_changed(GRID)

    def widgets(self) -> list[QWidget]:
        pairs = [w for pair in zip(self.labels, self.fields) for w in pair]
        return [self.name, self.kind, *pairs, self.remove]

    def _kind_changed(self, kind: str) -> None:
        for edit, name, label in zip(self.fields, self.labels, FIELD_NAMES[kind]):
            edit.setPlaceholderText(label)
            edit.setToolTip(label)
            edit.setVisible(bool(label))
            name.setText(label)
            name.setVisible(bool(label))

    def value(self) -> SweptParameter:
        kind = self.kind.currentText()
        texts = tuple(e.text() for e, label in zip(self.fields, FIELD_NAMES[kind]) if label)
        return SweptParameter(self.name.currentText(), kind, texts)


class SweepForm(QWidget):
    """The fields of one sweep, for the diagram's choices."""

    def __init__(self, choices: DiagramChoices, backend: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.choices = choices
        self.rows: list[ParameterRow] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.grid = QGridLayout()
        for column in (3, 5, 7):  # the fields share the width
            self.grid.setColumnStretch(column, 1)
        for column, title in enumerate(("Parameter", "Varies as")):
            self.grid.addWidget(QLabel(f"<b>{title}</b>", self), 0, column)
        layout.addLayout(self.grid)
        self.add_button = QPushButton("Add Parameter", self)
        self.add_button.clicked.connect(lambda: self.add_row())
        self.add_button.setEnabled(bool(choices.parameters))
        layout.addWidget(self.add_button)

        form = QFormLayout()
        metrics = QHBoxLayout()
        self.metric_list = QListWidget(self)
        self.metric_list.setMaximumHeight(56)
        self.metric_edit = QComboBox(self)
        self.metric_edit.setEditable(True)
        self.metric_edit.addItems(choices.metric_suggestions())
        self.metric_edit.setCurrentText("")
        self.metric_edit.lineEdit().setPlaceholderText(
            "final:SIGNAL, at:SIGNAL:TIME, count:BLOCK.KIND, time:BLOCK.KIND:K")
        self.metric_edit.lineEdit().returnPressed.connect(self.add_metric)
        add_metric = QPushButton("Add", self)
        add_metric.clicked.connect(self.add_metric)
        remove_metric = QPushButton("Remove", self)
        remove_metric.clicked.connect(
            lambda: [self.metric_list.takeItem(self.metric_list.row(i))
                     for i in self.metric_list.selectedItems()])
        metrics.addWidget(self.metric_edit, 1)
        metrics.addWidget(add_metric)
        metrics.addWidget(remove_metric)
        form.addRow("Metric:", metrics)
        form.addRow("", self.metric_list)
        options = QHBoxLayout()
        self.n = QSpinBox(self)
        self.n.setRange(1, 1_000_000)
        self.n.setValue(20)
        self.seed = QSpinBox(self)
        self.seed.setRange(0, 2**31 - 1)
        self.workers = QSpinBox(self)
        self.workers.setRange(1, 256)
        self.workers.setValue(default_workers())
        self.backend = QComboBox(self)
        self.backend.addItems(BACKENDS)
        self.backend.setCurrentText(backend)
        for label, widget in (("Draws n:", self.n), ("Seed:", self.seed),
                              ("Workers:", self.workers), ("Backend:", self.backend)):
            options.addWidget(QLabel(label, self))
            options.addWidget(widget)
        options.addStretch(1)
        form.addRow("Runs:", options)
        layout.addLayout(form)
        self._update_draws()

    def add_row(self, name: str | None = None, kind: str = GRID,
                texts: tuple[str, ...] = ()) -> ParameterRow:
        """A new parameter row (the next parameter not yet swept, unless `name`)."""
        row = ParameterRow(list(self.choices.parameters), self)
        taken = {r.name.currentText() for r in self.rows}
        free = [p for p in self.choices.parameters if p not in taken]
        row.name.setCurrentText(name or (free[0] if free else ""))
        row.kind.setCurrentText(kind)
        row.filled = () if texts else self._defaults(row.name.currentText())
        for edit, text in zip(row.fields, texts or row.filled):
            edit.setText(text)
        row.name.currentTextChanged.connect(lambda name: self._refill(row, name))
        line = len(self.rows) + 1
        for column, widget in enumerate(row.widgets()):
            self.grid.addWidget(widget, line, column)
        row.remove.clicked.connect(lambda: self.remove_row(row))
        row.kind.currentTextChanged.connect(self._update_draws)
        self.rows.append(row)
        self.add_button.setEnabled(len(self.rows) < MAX_ROWS)
        self._update_draws()
        return row

    def _defaults(self, name: str) -> tuple[str, ...]:
        """Grid fields to start from: the parameter's current value, 5 points."""
        value = self.choices.parameters.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (f"{value:g}", f"{value:g}", "5")
        return ()

    def _refill(self, row: ParameterRow, name: str) -> None:
        """Another parameter picked: its value replaces fields still holding a default."""
        texts = tuple(e.text() for e in row.fields)
        if row.kind.currentText() == GRID and (not any(texts) or texts == row.filled):
            row.filled = self._defaults(name)
            for edit, text in zip(row.fields, row.filled):
                edit.setText(text)

    def remove_row(self, row: ParameterRow) -> None:
        self.rows.remove(row)
        for widget in row.widgets():
            self.grid.removeWidget(widget)
            widget.deleteLater()
        self.add_button.setEnabled(True)
        self._update_draws()

    def add_metric(self, spec: str | None = None) -> None:
        text = (spec if isinstance(spec, str) else self.metric_edit.currentText()).strip()
        existing = [self.metric_list.item(i).text() for i in range(self.metric_list.count())]
        if text and text not in existing:
            self.metric_list.addItem(text)
        self.metric_edit.setCurrentText("")

    def metrics(self) -> tuple[str, ...]:
        return tuple(self.metric_list.item(i).text() for i in range(self.metric_list.count()))

    def _update_draws(self) -> None:
        monte_carlo = any(r.kind.currentText() != GRID for r in self.rows)
        self.n.setEnabled(monte_carlo)
        self.seed.setEnabled(monte_carlo)

    def request(self) -> SweepRequest:
        """The sweep asked for (BlocksimError with the CLI's message if a field is bad); a
        metric typed but not added yet counts."""
        if self.metric_edit.currentText().strip():
            self.add_metric()
        return SweepRequest(tuple(r.value() for r in self.rows), self.metrics(),
                            n=self.n.value(), seed=self.seed.value(),
                            workers=self.workers.value(), backend=self.backend.currentText())
