"""One editor widget per parameter kind, generated from a block type's `Param` declaration.

A field only turns what the user typed into the value to store; whether that value is
acceptable is decided by the compiler's own resolution (see `validation`).
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QCheckBox, QLineEdit, QWidget

from blocksim.blocktypes.blockspec import Param
from blocksim.gui.panels.forms import PanelComboBox, code_font
from blocksim.gui.document.values import UNSET, text_to_value, value_to_text

_HINTS = {
    "scalar": "a number or an expression over the diagram parameters",
    "vector": "a number, an array such as [1, 2], or an expression",
    "int": "a whole number or an expression",
    "bool": "on or off",
    "choice": "one of the listed choices",
    "text": "text (a formula or names), used as written",
    "signs": "one sign character per input, e.g. +-",
}


def tooltip(prm: Param) -> str:
    """The doc, unit, kind and default of a parameter, for its label and editor."""
    default = "required" if prm.required else f"default {value_to_text(prm.default)}"
    unit = f" [{prm.unit}]" if prm.unit else ""
    bounds = []
    if prm.low is not None:
        bounds.append(f">= {prm.low:g}")
    if prm.high is not None:
        bounds.append(f"<= {prm.high:g}")
    limits = f", {' and '.join(bounds)}" if bounds else ""
    doc = f"{prm.doc}\n" if prm.doc else ""
    return f"{doc}{prm.name}{unit}: {_HINTS.get(prm.kind, prm.kind)}{limits}; {default}"


class ParamField:
    """The editor of one parameter: `widget`, the stored value, and whether it was edited."""

    def __init__(self, prm: Param, widget: QWidget):
        self.prm = prm
        self.widget = widget
        self._original: Any = UNSET
        widget.setToolTip(tooltip(prm))

    def load(self, raw: Any) -> None:
        """Show a stored value (UNSET: the parameter is absent and its default applies)."""
        self._original = raw
        self._show(raw)
        self._shown = self._state()

    def is_modified(self) -> bool:
        return self._state() != self._shown

    def value(self) -> Any:
        """The value to store: the original one if untouched (so 0 stays 0, not 0.0)."""
        return self._original if not self.is_modified() else self._read()

    def on_change(self, callback: Callable[[], None]) -> None:
        raise NotImplementedError

    def _show(self, raw: Any) -> None:
        raise NotImplementedError

    def _state(self) -> Any:
        raise NotImplementedError

    def _read(self) -> Any:
        raise NotImplementedError


class LineField(ParamField):
    """scalar, vector, int, text, signs, and any value written as an expression."""

    def __init__(self, prm: Param, parent: QWidget | None = None):
        edit = QLineEdit(parent)
        edit.setFont(code_font())
        edit.setClearButtonEnabled(False)
        if prm.required:
            edit.setPlaceholderText("required")
        else:
            edit.setPlaceholderText(f"{value_to_text(prm.default)}  (default)")
        super().__init__(prm, edit)
        self.edit = edit

    def on_change(self, callback: Callable[[], None]) -> None:
        self.edit.textChanged.connect(lambda _text: callback())

    def _show(self, raw: Any) -> None:
        self.edit.setText(value_to_text(raw))
        self.edit.setCursorPosition(0)

    def _state(self) -> Any:
        return self.edit.text().strip()

    def _read(self) -> Any:
        if self.prm.kind in ("text", "signs"):
            text = self.edit.text().strip()
            return text if text else UNSET
        return text_to_value(self.edit.text())


class ChoiceField(ParamField):
    """choice: a combo box of the declared choices (a stray file value is shown as is)."""

    def __init__(self, prm: Param, parent: QWidget | None = None):
        combo = PanelComboBox(parent)
        combo.addItems(list(prm.choices))
        super().__init__(prm, combo)
        self.combo = combo

    def on_change(self, callback: Callable[[], None]) -> None:
        self.combo.currentIndexChanged.connect(lambda _index: callback())

    def _show(self, raw: Any) -> None:
        value = self.prm.default if raw is UNSET else raw
        if self.combo.findText(str(value)) < 0:
            self.combo.addItem(str(value))
        self.combo.setCurrentText(str(value))

    def _state(self) -> Any:
        return self.combo.currentText()

    def _read(self) -> Any:
        return self.combo.currentText()


class BoolField(ParamField):
    """bool: a check box."""

    def __init__(self, prm: Param, parent: QWidget | None = None):
        box = QCheckBox(parent)
        super().__init__(prm, box)
        self.box = box

    def on_change(self, callback: Callable[[], None]) -> None:
        self.box.toggled.connect(lambda _on: callback())

    def _show(self, raw: Any) -> None:
        value = self.prm.default if raw is UNSET else raw
        self.box.setChecked(bool(value))

    def _state(self) -> Any:
        return self.box.isChecked()

    def _read(self) -> Any:
        return self.box.isChecked()


def make_field(prm: Param, raw: Any, parent: QWidget | None = None,
               folder: Any = None) -> ParamField:
    """The editor for one parameter, showing its stored value `raw` (or UNSET); a file
    parameter's has a file chooser starting in `folder` (the diagram's)."""
    if prm.suffixes and prm.kind == "text":
        from blocksim.gui.panels.file_field import FileField
        field: ParamField = FileField(prm, parent, folder)
    elif prm.kind == "choice":
        field = ChoiceField(prm, parent)
    elif prm.kind == "bool" and (raw is UNSET or isinstance(raw, bool)):
        field = BoolField(prm, parent)
    else:  # numbers, text, and a bool that the file spells as an expression
        field = LineField(prm, parent)
    field.load(raw)
    return field
