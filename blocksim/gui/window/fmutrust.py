"""FMUs in the editor: their binaries are native code, so the editor asks before it trusts
one, as for Python files of user block types (`usercode`), with the same allow-list
(`blocksim.fmi.trust`).

Asked when a diagram naming FMUs is opened, and when an .fmu is chosen in the inspector;
"Trust" puts exactly the bytes shown (path and SHA-256) on the allow-list. Cancel opens
the diagram all the same: it is drawn (ports from the model description, which is read,
never run) but a run refuses the FMU, saying how to trust it. A trusted FMU runs inside
the editor's process: one that crashes takes the editor with it (docs/fmi.md).
"""
from __future__ import annotations

import logging
from html import escape
from pathlib import Path
from typing import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from blocksim.diagram.model import Diagram
from blocksim.errors import DiagramFileError, shown

log = logging.getLogger(__name__)


def _untrusted(paths: Sequence[str | Path]) -> list[tuple[Path, str, bool]]:
    """(path, SHA-256, changed since trusted) of the existing FMUs not trusted yet."""
    from blocksim.fmi import trust
    from blocksim.user import allowlist

    listed = allowlist.entries()
    found = []
    for given in dict.fromkeys(Path(p) for p in paths):
        path = Path(given).resolve()
        if not path.is_file():
            continue
        digest = trust.digest_of(path, str(given))
        if not trust.is_trusted(path, digest):
            found.append((path, digest, str(path) in listed))
    return found


def ask_about(paths: Sequence[str | Path], parent: QWidget | None, what: str) -> bool:
    """Ask about the FMUs in `paths` not trusted yet; True if all are trusted after it."""
    try:
        untrusted = _untrusted(paths)
    except DiagramFileError as exc:
        QMessageBox.warning(parent, "Cannot read the FMU", str(exc))
        return False
    if not untrusted:
        return True
    if not _confirm(parent, what, untrusted):
        log.info("FMUs not trusted: %s", ", ".join(str(p) for p, _, _ in untrusted))
        return False
    from blocksim.fmi import trust
    from blocksim.user.trust import remember_digests

    for path, _, _ in untrusted:
        trust.trust_now(path)  # for this editor, whatever the list below says
    try:
        remember_digests((path, digest) for path, digest, _ in untrusted)
    except DiagramFileError as exc:
        QMessageBox.warning(parent, "Cannot remember the trusted FMUs",
                            f"{exc}. They are trusted until the editor closes.")
    return True


def ask_for_diagram(parent: QWidget | None, diagram: Diagram) -> bool:
    """On opening a diagram: ask about the FMUs it names (see module)."""
    from blocksim.fmi import trust

    files = [path for _, _, path in trust.fmu_files(diagram)]
    return ask_about(files, parent, escape(shown(diagram.source, 300))) if files else True


def _confirm(parent: QWidget | None, what: str, files: list[tuple[Path, str, bool]]) -> bool:
    box = QMessageBox(QMessageBox.Warning, "Trust FMU?", "", QMessageBox.NoButton, parent)
    box.setTextFormat(Qt.RichText)
    items = "".join(
        f"<li><b>{escape(path.name)}</b>{' (changed since you trusted it)' if changed else ''}"
        f"<br>{escape(shown(path, 300))}<br><tt>SHA-256 {digest}</tt></li>"
        for path, digest, changed in files)
    box.setText(f"{what} names FMUs, whose binaries are native code that runs with your "
                f"permissions when the diagram runs: trust them only if you know where "
                f"they come from.<ul>{items}</ul>Cancel leaves them untrusted: the diagram "
                f"opens, and a run refuses them.")
    trust_button = box.addButton("Trust", QMessageBox.AcceptRole)
    box.addButton(QMessageBox.Cancel)
    box.setDefaultButton(QMessageBox.Cancel)
    box.exec()
    return box.clickedButton() is trust_button
