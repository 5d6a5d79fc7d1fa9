"""The Analysis menu's entry points: one Linearize and one Operating Point dialog per window,
raised when asked again (a second one would only compute the same thing twice)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from blocksim.gui.analysis.linearize_dialog import open_linearize_dialog
from blocksim.gui.analysis.operating_dialog import open_operating_point_dialog

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

OPENERS = {"linearize": open_linearize_dialog, "operating_point": open_operating_point_dialog}


def open_analysis(window: "MainWindow", which: str):
    """Show the window's `which` dialog ("linearize" or "operating_point"), computing afresh."""
    attribute = f"{which}_dialog"
    dialog = getattr(window, attribute, None)
    try:
        alive = dialog is not None and dialog.isVisible()
    except RuntimeError:  # closed: Qt deleted it (WA_DeleteOnClose)
        alive = False
    if alive:
        dialog.raise_()
        dialog.activateWindow()
        dialog.compute()
        return dialog
    return OPENERS[which](window)
