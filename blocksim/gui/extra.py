"""Whether the editor's libraries (the `gui` extra: PySide6, pyqtgraph) are installed, checked
before anything that needs them, so a missing extra is one line naming the command that
installs it, not a traceback from deep inside an import.

Imports nothing from Qt until asked; a Qt that is installed but cannot load (a system
library missing) is left to the caller's own message, since installing the extra again
would not help.
"""
from __future__ import annotations

import importlib

from blocksim.errors import BlocksimError

INSTALL = "pip install 'blocksim[gui]'"
# What the extra installs (pyqtgraph's Qt binding is PySide6, whose runtime is shiboken6).
PACKAGES = ("PySide6", "shiboken6", "pyqtgraph")
MODULES = ("PySide6.QtWidgets", "pyqtgraph")


class GuiExtraMissing(BlocksimError, ImportError):
    """The editor's libraries are not installed: a BlocksimError (the CLI prints its line,
    exit status 2) that is also an ImportError (code that treats a picture as optional
    falls back as it does without Qt)."""


def missing_package(exc: ImportError) -> str | None:
    """The package of the gui extra whose absence `exc` reports, or None when `exc` is about
    something else (a system library Qt needs, a module of blocksim itself)."""
    if not isinstance(exc, ModuleNotFoundError):
        return None
    top = (exc.name or "").split(".")[0]
    return top if top in PACKAGES else None


def require(what: str, modules: tuple[str, ...] = MODULES) -> None:
    """Raise GuiExtraMissing, naming `what` needs it and how to install it, unless `modules`
    (by default PySide6's widgets and pyqtgraph, all the editor needs) import."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            package = missing_package(exc)
            if package is None:
                raise
            raise GuiExtraMissing(f"{what} needs the editor's libraries ({package} is not "
                                  f"installed): {INSTALL}") from None
