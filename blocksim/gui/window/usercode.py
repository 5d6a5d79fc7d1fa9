"""The Python files of user block types a diagram names, in the editor: run only when
trusted, as on the command line (blocksim.user.trust).

Files on the user's allow-list load at once. For the others the editor asks, naming each
file with its path and SHA-256: "Trust and load" puts exactly those bytes on the allow-list
(`blocksim trust` then knows them too) and runs those same bytes; Cancel opens the diagram
without running anything, its user blocks drawn grey.
"""
from __future__ import annotations

import dataclasses
import logging

from PySide6.QtWidgets import QWidget

from blocksim.diagram.model import Diagram
from blocksim.errors import DiagramFileError
from blocksim.gui.window import dialogs
from blocksim.user import trust

log = logging.getLogger(__name__)

NOT_TRUSTED = "its Python files were not trusted"
FAILED = "its Python files could not be loaded"


def load_user_code(parent: QWidget | None, diagram: Diagram) -> str | None:
    """Run the diagram's Python files (asking about those not trusted yet) and register
    their block types. None when they loaded (or there are none); else why not, for the
    message about the blocks drawn grey."""
    if not diagram.python:
        return None
    try:
        sources = trust.read_sources(diagram)
    except DiagramFileError as exc:  # missing, a FIFO, too large; or the allow-list
        dialogs.message(parent, "Cannot load the diagram's Python blocks", str(exc))
        return FAILED
    untrusted = [source for source in sources if not source.trusted]
    if untrusted:
        if not dialogs.ask_trust(parent, diagram.source, untrusted):
            log.info("%s: Python files not trusted; opened without them", diagram.source)
            return NOT_TRUSTED
        try:
            trust.remember_digests((source.path, source.digest) for source in untrusted)
        except DiagramFileError as exc:  # trusted for now all the same: the user said so
            dialogs.message(parent, "Cannot remember the trusted files",
                            f"{exc}. They are trusted until the editor closes.")
        sources = [dataclasses.replace(source, trusted=True) for source in sources]
    try:
        trust.run_sources(sources, diagram.source)
    except DiagramFileError as exc:  # the user's code failed: one line naming the file
        dialogs.message(parent, "Cannot load the diagram's Python blocks", str(exc))
        return FAILED
    palette = getattr(getattr(parent, "panels", None), "palette", None)
    if palette is not None:
        palette.refresh()  # their block types, to place more of them
    return None
