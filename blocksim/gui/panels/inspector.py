"""The block inspector: a form generated from the selected block type's parameter
declaration, which refuses any value the compiler would refuse.

It never changes the diagram: valid edits leave as signals, and the editor core turns them
into undo commands. Edits apply as they are made (a choice or check box at once, a text field
on Enter or when it loses the focus), so nothing typed is lost by clicking elsewhere. `DiagramSettingsEditor` (diagram parameters and simulation settings)
lives in `settings_editor` and is re-exported here.
"""
from __future__ import annotations

import html
import logging
import inspect
import re
from typing import Any, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import BlockType, ParamValues
from blocksim.gui.document import validation
from blocksim.gui.panels.forms import ErrorLine, code_font, mark_invalid, muted_label
from blocksim.gui.panels.param_fields import LineField, ParamField, make_field, tooltip
from blocksim.gui.panels.settings_editor import DiagramSettingsEditor
from blocksim.gui.document.values import UNSET
from blocksim.diagram.model import Block, Diagram

log = logging.getLogger(__name__)

__all__ = ["BlockInspector", "DiagramSettingsEditor"]

_FIXED_ROWS = 3  # id, its error line, a rule; the parameter rows follow


class BlockInspector(QWidget):
    """Id and parameters of one block; each edit is validated, then emitted (one undo step)."""

    paramsEdited = Signal(str, dict)  # block id, the block's complete new params dict
    renameRequested = Signal(str, str)  # old id, new id

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._diagram: Diagram | None = None
        self._block: Block | None = None
        self._block_id = ""
        self._parents: Sequence[Diagram] = ()
        self._params: dict[str, Any] = {}
        self.fields: dict[str, ParamField] = {}

        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.doc = muted_label("", self)
        # always rich text: a doc with no tag would be shown as plain text, entities and all
        self.doc.setTextFormat(Qt.TextFormat.RichText)
        self.id_edit = QLineEdit(self)
        self.id_edit.setFont(code_font())
        self.id_edit.setToolTip("The block id: names its signals, results columns and "
                                "messages (letters, digits and _)")
        self.id_edit.editingFinished.connect(self._rename)
        self.id_error = ErrorLine(self)

        self.form_host = QWidget(self)
        self.form = QFormLayout(self.form_host)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.names = muted_label("", self)
        self.notes = muted_label("", self)  # what the values make of it (an FMU's model)
        self.notes.setTextFormat(Qt.TextFormat.PlainText)
        self.notes.setWordWrap(True)
        self.error = ErrorLine(self)
        self.empty = muted_label("Select a block to see and edit its parameters.", self)

        self.form.addRow("Id", self.id_edit)
        self.form.addRow(self.id_error)
        self.form.addRow(_rule(self.form_host))
        body = QWidget(self)
        column = QVBoxLayout(body)
        column.setContentsMargins(6, 6, 6, 6)
        for widget in (self.title, self.doc):
            column.addWidget(widget)
        column.addWidget(self.form_host)
        column.addWidget(self.notes)
        column.addWidget(self.names)
        column.addWidget(self.error)
        column.addStretch(1)
        self.body = body
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.empty)
        outer.addWidget(scroll, 1)
        self._scroll = scroll
        self.clear()

    # ----- public API -----
    def show_block(self, diagram: Diagram, block: Block, parents: Sequence[Diagram] = ()) -> None:
        """Edit `block` of `diagram`; `parents` are the enclosing levels (outermost first)
        when `diagram` is a subsystem's, so expressions see the same names as in a compile."""
        if block is self._block and diagram is self._diagram and block.params == self._params:
            # The block shown, only renamed (the id field lost focus, say by Tab into a
            # parameter field): rebuilding the form would destroy the field taking the focus
            # and throw away values typed but not applied yet.
            self._block_id = block.id
            if self.id_edit.text() != block.id:
                self.id_edit.setText(block.id)
            return
        self._diagram, self._block, self._block_id = diagram, block, block.id
        self._parents = tuple(parents)
        self._params = dict(block.params)
        block_type = registry.get(block.type)
        category = f" &nbsp;<span style='color:#5f6368'>{html.escape(block_type.category)}</span>" \
            if block_type else " &nbsp;<span style='color:#b3261e'>unknown type</span>"
        self.title.setText(f"<span style='font-size:13pt'><b>{html.escape(block.type)}</b></span>"
                           f"{category}")
        doc = inspect.cleandoc(block_type.doc or block_type.__doc__ or "") if block_type else ""
        self.doc.setText(_doc_html(doc))
        self.doc.setVisible(bool(doc))
        self.id_edit.setText(block.id)
        mark_invalid(self.id_edit, False)
        self.id_error.clear_message()
        self._build_form(block_type.params if block_type else ())
        self._show_names()
        self._show_notes()
        self.empty.hide()
        self._scroll.show()

    def clear(self) -> None:
        """Show nothing (no block selected)."""
        self._diagram = self._block = None
        self._block_id = ""
        self._params = {}
        self._build_form(())
        self.empty.show()
        self._scroll.hide()

    def start_editing(self) -> None:
        """Put the keyboard in the id field, its text selected: type a name, Tab to the
        first parameter (what a double-click on a block offers)."""
        self.id_edit.setFocus(Qt.FocusReason.OtherFocusReason)
        self.id_edit.selectAll()

    def block_id(self) -> str:
        """The id of the block shown ('' if none)."""
        return self._block_id

    def error_text(self) -> str:
        """The message currently refusing an edit ('' if none)."""
        if self.error.isVisible():
            return self.error.text()
        return self.id_error.text() if self.id_error.isVisible() else ""

    def apply(self) -> bool:
        """Validate the form; emit `paramsEdited` if it is valid and changed anything."""
        if self._block is None or self._diagram is None:
            return False
        params = self._edited_params()
        problem = validation.check_block_params(self._diagram, self._block, params,
                                                self._parents)
        self._show_problem(problem)
        if problem:
            return False
        if params != self._params:
            self._params = dict(params)
            for name, field in self.fields.items():
                field.load(params.get(name, UNSET))
            self._show_notes()
            self.paramsEdited.emit(self._block_id, dict(params))
        return True

    # ----- building -----
    def _build_form(self, declared) -> None:
        while self.form.rowCount() > _FIXED_ROWS:
            self.form.removeRow(_FIXED_ROWS)
        self.fields = {}
        for prm in declared:
            field = make_field(prm, self._params.get(prm.name, UNSET), self.form_host,
                               self._folder())
            if prm.suffixes:  # a file chooser: an FMU chosen is asked about (trust)
                field.on_chosen = self._file_chosen
            label = QLabel(f"{prm.name}" + (f" [{prm.unit}]" if prm.unit else ""), self.form_host)
            label.setToolTip(tooltip(prm))
            self.form.addRow(label, field.widget)
            if isinstance(field, LineField):  # Enter or leaving the field
                field.edit.editingFinished.connect(self._field_finished)
            else:  # a choice or a check box: the change is the whole edit
                field.on_change(self._field_finished)
            self.fields[prm.name] = field
        stray = sorted(set(self._params) - {prm.name for prm in declared})
        if stray:  # a value the type does not declare: shown so the refusal makes sense
            self.form.addRow(muted_label(f"Not parameters of this type: {', '.join(stray)}"))
        if not declared:
            self.form.addRow(muted_label("This block type has no parameters."))
        # Tab goes from the id through the parameters in the form's order
        chain = [self.id_edit, *(f.widget for f in self.fields.values())]
        for first, second in zip(chain, chain[1:]):
            QWidget.setTabOrder(first, second)
        self.error.clear_message()

    def _show_notes(self) -> None:
        """The block type's notes on these values (`BlockType.instance_notes`), if any."""
        text = None
        block_type = registry.get(self._block.type) if self._block is not None else None
        if block_type is not None and block_type.instance_notes is not BlockType.instance_notes:
            from blocksim.gui.canvas.portinfo import lenient_params, scope_names

            block = Block(self._block.id, self._block.type, dict(self._params))
            names: dict[str, Any] = {}
            for level in (*self._parents, self._diagram):
                names = scope_names(level, names)
            p = lenient_params(block, names)
            if p is not None:
                p = ParamValues(p.as_dict(), names=p.scope, folder=self._folder_text())
                try:
                    text = block_type().instance_notes(p)
                except Exception:  # a block's bug must not take the inspector down
                    log.debug("instance_notes of %s failed", self._block.type, exc_info=True)
        self.notes.setText(text or "")
        self.notes.setVisible(bool(text))

    def _folder_text(self) -> str | None:
        folder = self._folder()
        return str(folder.resolve()) if folder is not None else None

    def _folder(self):
        """The folder the block's files are relative to: the diagram file's (None: the
        current folder, for a diagram not saved yet)."""
        top = self._parents[0] if self._parents else self._diagram
        path = getattr(top, "path", None)
        return path.parent if path is not None else None

    def _file_chosen(self, path: str) -> None:
        if path.lower().endswith(".fmu"):
            from blocksim.gui.window import fmutrust
            fmutrust.ask_about([path], self, "the chosen FMU")

    def _show_names(self) -> None:
        names = []
        for level in (*self._parents, self._diagram):
            names += [n for n in (level.parameters if level else {}) if n not in names]
        self.names.setText(f"Diagram parameters: {', '.join(names)}" if names else
                           "Values may be expressions (pi, sin(...), ...); this diagram has "
                           "no parameters yet.")
        self.names.setVisible(bool(self.fields))

    # ----- editing -----
    def _edited_params(self) -> dict[str, Any]:
        params = dict(self._params)
        for name, field in self.fields.items():
            value = field.value()
            if value is UNSET:
                params.pop(name, None)
            else:
                params[name] = value
        return params

    def _show_problem(self, problem: str | None) -> None:
        """Outline the fields a refusal is about: those it names, else those just edited."""
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", problem or ""))
        culprits = [n for n in self.fields if n in words]
        if problem and not culprits:
            culprits = [n for n, f in self.fields.items() if f.is_modified()]
            if culprits:  # the type's check did not say which: name what was changed
                problem = f"{', '.join(culprits)}: {problem}"
        for name, field in self.fields.items():
            mark_invalid(field.widget, bool(problem) and name in culprits, problem or "")
        self.error.show_message(problem or "")

    def _field_finished(self) -> None:
        """A field's edit is complete: apply the form if anything in it changed (leaving an
        untouched field, or one refused already, says nothing new)."""
        if any(f.is_modified() for f in self.fields.values()):
            self.apply()

    def _rename(self) -> None:
        new = self.id_edit.text().strip()
        if self._diagram is None or new == self._block_id:
            mark_invalid(self.id_edit, False)
            self.id_error.clear_message()
            return
        problem = validation.check_block_id(self._diagram, self._block_id, new, self._parents)
        mark_invalid(self.id_edit, bool(problem), problem or "")
        self.id_error.show_message(problem or "")
        if problem:
            return
        old, self._block_id = self._block_id, new
        self.renameRequested.emit(old, new)


def _doc_html(doc: str) -> str:
    """A type's doc as rich text: paragraphs kept, `code` in a fixed font."""
    # quote=False: Qt's rich text does not know &#x27;, so "block's" would show the entity
    text = html.escape(doc, quote=False).replace("\n\n", "<br><br>").replace("\n", " ")
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def _rule(parent: QWidget) -> QFrame:
    line = QFrame(parent)
    line.setFrameShape(QFrame.Shape.HLine)
    line.setFrameShadow(QFrame.Shadow.Sunken)
    return line
