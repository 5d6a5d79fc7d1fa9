"""Marking wires as linear analysis points from their context menu: one undo step each.

A mark belongs to the signal of the wire's source port (blocksim.diagram.analysis_points), so
the menu shows and changes the marks of that port, on all the wires it drives.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMenu

from blocksim.diagram.analysis_points import port_marks
from blocksim.gui.document.commands import SetAnalysisMarks

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

MENU_TEXTS = {"input": "Linear Analysis &Input",
              "output": "Linear Analysis &Output",
              "open": "&Open Loop Here"}
TIPS = {"input": "Linearize from this signal: a perturbation is added to it",
        "output": "Linearize to this signal: it is measured",
        "open": "Open the loop at this signal for the linearization"}


def add_mark_actions(menu: QMenu, window: "MainWindow", index: int) -> None:
    """The wire context menu's linear analysis entries for wire `index` of the shown level."""
    level = window.canvas.level
    wire = window.doc.level(level).wires[index]
    marks = port_marks(window.doc.level(level), wire.src)
    for role, text in MENU_TEXTS.items():
        action = menu.addAction(text)
        action.setObjectName(f"mark-{role}")
        action.setCheckable(True)
        action.setChecked(role in marks)
        action.setStatusTip(TIPS[role])
        action.toggled.connect(lambda on, r=role: set_mark(window, index, r, on))
    clear = menu.addAction("&Clear Linear Analysis Marks", lambda: clear_marks(window, index))
    clear.setObjectName("mark-clear")
    clear.setEnabled(bool(marks))


def set_mark(window: "MainWindow", index: int, role: str, on: bool) -> None:
    """Add or remove one mark on the signal wire `index` carries."""
    level = window.canvas.level
    diagram = window.doc.level(level)
    port = diagram.wires[index].src
    marks = set(port_marks(diagram, port))
    if (role in marks) == on:
        return
    marks = marks | {role} if on else marks - {role}
    words = {"input": "a linear analysis input", "output": "a linear analysis output",
             "open": "a loop opening"}[role]
    text = f"Mark {port} as {words}" if on else f"Unmark {port} as {words}"
    window.doc.push(SetAnalysisMarks(window.doc, level, port, marks, text))


def clear_marks(window: "MainWindow", index: int) -> None:
    """Remove every linear analysis mark of the signal wire `index` carries."""
    level = window.canvas.level
    diagram = window.doc.level(level)
    port = diagram.wires[index].src
    if port_marks(diagram, port):
        window.doc.push(SetAnalysisMarks(window.doc, level, port, (),
                                         f"Clear the linear analysis marks of {port}"))
