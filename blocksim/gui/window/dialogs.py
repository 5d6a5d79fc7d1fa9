"""Every question and message box the editor shows, in one place.

Code calls these through the module (`dialogs.message(...)`), so a test can replace any of
them with a function that answers at once (`monkeypatch.setattr(dialogs, "message", ...)`)
and nothing ever blocks an offscreen run.
"""
from __future__ import annotations

import logging
from html import escape
from typing import TYPE_CHECKING, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget

from blocksim.errors import shown

if TYPE_CHECKING:
    from blocksim.user.trust import Source

log = logging.getLogger(__name__)

DIAGRAM_FILTER = "blocksim diagrams (*.json);;All files (*)"


def message(parent: QWidget | None, title: str, text: str, level: str = "warning") -> None:
    """Tell the user something (level: information, warning or critical)."""
    log.info("%s: %s", title, text)
    show = {"information": QMessageBox.information, "critical": QMessageBox.critical}.get(
        level, QMessageBox.warning)
    show(parent, title, text)


def ask_unsaved(parent: QWidget | None, name: str) -> str:
    """'save', 'discard' or 'cancel' for a document with unsaved changes."""
    answer = QMessageBox.question(
        parent, "Unsaved changes", f"Save the changes to {name}?",
        QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)
    return {QMessageBox.Save: "save", QMessageBox.Discard: "discard"}.get(answer, "cancel")


def ask_recover(parent: QWidget | None, descriptions: Sequence[str]) -> list[bool] | None:
    """Which autosaved work (of editors that stopped unexpectedly) to restore: one bool per
    description (False: delete it), or None to decide later (all of it kept). One piece is a
    yes/no question; several are one checkable list (`recoverylist`), never a row of boxes."""
    if len(descriptions) == 1:
        answer = QMessageBox.question(
            parent, "Recover unsaved work",
            f"blocksim stopped with unsaved changes ({descriptions[0]}). Recover them?",
            QMessageBox.Yes | QMessageBox.No, QMessageBox.Yes)
        return [answer == QMessageBox.Yes]
    from blocksim.gui.window.recoverylist import RecoveryList

    dialog = RecoveryList(parent, descriptions)
    return dialog.choices() if dialog.exec() == RecoveryList.DialogCode.Accepted else None


def ask_allow_write(parent: QWidget | None, reason: str, paths: Sequence[str]) -> bool:
    """Whether a run may write files the write rule refuses (outside the diagram's folder,
    or once per run of a sweep): `reason` says why it asks, `paths` are the files."""
    answer = QMessageBox.question(
        parent, "Let the diagram write this file?",
        f"{reason}.\n\nA diagram from someone else could overwrite your files this way. "
        f"Let it write:\n\n" + "\n".join(paths),
        QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
    return answer == QMessageBox.Yes


def allowed_after_asking(parent: QWidget | None, error: BaseException | None,
                         allowed: set[str]) -> bool:
    """A run or sweep the write rule refused (`WriteRefused`) for files an allowance can
    let it write, not asked about before: ask (`ask_allow_write`); on yes the files join
    `allowed` and True (run it again with them)."""
    from blocksim.files.write_rule import WriteRefused

    if not isinstance(error, WriteRefused) or not error.allowable \
            or set(error.allowable) <= allowed:  # asked already: the refusal stands
        return False
    reason = f"Block '{error.block}': {error.reason}" if error.block else error.reason
    if not ask_allow_write(parent, reason, error.allowable):
        return False
    allowed.update(error.allowable)
    return True


OPEN_FILTER = ("blocksim diagrams and Simulink models (*.json *.slx *.mdl);;"
               "blocksim diagrams (*.json);;Simulink models (*.slx *.mdl);;All files (*)")


def open_path(parent: QWidget | None, directory: str = "") -> str | None:
    """A diagram file (or a Simulink model, imported) to open, or None."""
    path, _ = QFileDialog.getOpenFileName(parent, "Open diagram", directory, OPEN_FILTER)
    return path or None


def save_path(parent: QWidget | None, suggested: str = "",
              filters: str = DIAGRAM_FILTER) -> str | None:
    """Where to save, or None."""
    path, _ = QFileDialog.getSaveFileName(parent, "Save as", suggested, filters)
    return path or None


def folder_path(parent: QWidget | None, title: str = "Choose a folder") -> str | None:
    """A folder, or None."""
    return QFileDialog.getExistingDirectory(parent, title) or None


def ask_choice(parent: QWidget | None, title: str, label: str,
               items: Sequence[str]) -> str | None:
    """One of `items` (the first preselected), or None if cancelled."""
    answer, ok = QInputDialog.getItem(parent, title, label, list(items), 0, False)
    return answer if ok else None


def ask_text(parent: QWidget | None, title: str, label: str, text: str = "") -> str | None:
    """One line of text from the user (starting as `text`), or None if cancelled."""
    answer, ok = QInputDialog.getText(parent, title, label, text=text)
    return answer if ok else None


def ask_trust(parent: QWidget | None, diagram: str, files: Sequence["Source"]) -> bool:
    """Whether to trust, and so run, the Python files of user block types a diagram names:
    each shown with its path and SHA-256, so the user trusts exactly what they see."""
    box = QMessageBox(QMessageBox.Warning, "Trust Python code?", "", QMessageBox.NoButton,
                      parent)
    box.setTextFormat(Qt.RichText)
    changed = " (changed since you trusted it)"
    items = "".join(
        f"<li><b>{escape(shown(f.name))}</b>{changed if f.changed else ''}<br>"
        f"{escape(shown(f.path, 300))}<br><tt>SHA-256 {f.digest}</tt></li>" for f in files)
    box.setText(
        f"{escape(shown(diagram, 300))} defines block types in Python code. Loading them runs "
        f"that code with your permissions: trust it only if you know where it comes from."
        f"<ul>{items}</ul>Cancel opens the diagram without running anything: those blocks "
        f"are drawn grey and it will not run.")
    trust_button = box.addButton("Trust and load", QMessageBox.AcceptRole)
    box.addButton(QMessageBox.Cancel)
    box.setDefaultButton(QMessageBox.Cancel)
    log.info("asking to trust %s", ", ".join(str(f.path) for f in files))
    box.exec()
    return box.clickedButton() is trust_button
