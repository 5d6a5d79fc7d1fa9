"""Small shared pieces of the side-panel forms: the inline error line, field highlighting and
a combo box the mouse wheel scrolls past, so every panel behaves the same way."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QWheelEvent
from PySide6.QtWidgets import QComboBox, QLabel, QSizePolicy, QWidget

ERROR_COLOR = "#b3261e"
MUTED_COLOR = "#5f6368"
_INVALID_STYLE = f"border: 1px solid {ERROR_COLOR}; border-radius: 2px; background: #fdecea;"


class ErrorLine(QLabel):
    """A red, word-wrapped message under a form; hidden while there is nothing to say."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setStyleSheet(f"color: {ERROR_COLOR}; padding: 4px 2px;")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.hide()

    def show_message(self, message: str) -> None:
        self.setText(message)
        self.setVisible(bool(message))

    def clear_message(self) -> None:
        self.show_message("")


class PanelComboBox(QComboBox):
    """A combo box in a scrolled side panel: the wheel changes its value only once it has
    focus (clicked or tabbed to); otherwise the wheel scrolls the panel. A plain QComboBox
    takes the wheel as it passes under the pointer, and scrolling the panel silently
    changed a setting (the backend, a block's choice) into an undoable edit."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # (not WheelFocus: no focus by wheel)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 (Qt's name)
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()  # to the panel's scroll area


def mark_invalid(widget: QWidget, invalid: bool, why: str = "") -> None:
    """Outline a field in red (with the reason as tooltip), or restore it."""
    if invalid:
        if widget.property("_tip") is None:
            widget.setProperty("_tip", widget.toolTip())
        widget.setStyleSheet(_INVALID_STYLE)
        widget.setToolTip(why)
    elif widget.property("_tip") is not None:
        widget.setStyleSheet("")
        widget.setToolTip(widget.property("_tip"))
        widget.setProperty("_tip", None)


def muted_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A grey, wrapped explanatory line."""
    label = QLabel(text, parent)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {MUTED_COLOR};")
    return label


def code_font() -> QFont:
    """The fixed-pitch font expressions are edited in."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
