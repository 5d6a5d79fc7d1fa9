"""The editor's main window: canvas in the centre, panels in docks, menus and toolbar.

It only assembles parts: the document and canvas, file handling, autosave, the panels and
the simulation controls; the actions and menus are built in `actions`.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QLabel, QMainWindow, QWidget

from blocksim.gui.window import dialogs
from blocksim.gui.window.actions import build_actions, build_menus
from blocksim.gui.window.autosave import Autosaver
from blocksim.gui.window.contextmenus import ContextMenus
from blocksim.gui.window.help import HelpWindows
from blocksim.gui.canvas.area import Canvas
from blocksim.gui.panels.docks import Panels
from blocksim.gui.document.document import DiagramDocument
from blocksim.gui.window.files import FileController
from blocksim.gui.window.files import settings as editor_settings
from blocksim.gui.scopes.simcontrol import SimulationControl

log = logging.getLogger(__name__)

SAMPLE_TIME_COLORS = "view/sample_time_colors"  # the setting remembering the View toggle
DESCRIPTION_WIDTH = 360  # pixels of the description's first line in the status bar


class MainWindow(QMainWindow):
    """One window editing one diagram."""

    def __init__(self, parent: QWidget | None = None, autosave_interval: float | None = None):
        super().__init__(parent)
        self.doc = DiagramDocument(parent=self)
        self.canvas = Canvas(self.doc, self)
        self.setCentralWidget(self.canvas)
        self.files = FileController(self, self.doc)
        self.autosaver = Autosaver(self.doc, self, **(
            {"interval": autosave_interval} if autosave_interval else {}))
        self.sim = SimulationControl(self)
        self.help = HelpWindows(self)
        self.actions_ = build_actions(self)
        build_menus(self, self.actions_)
        self.resize(QSize(1280, 800))  # before the panels, which size their docks to fit
        self.panels = Panels(self)
        self.context_menus = ContextMenus(self)
        self.canvas.scene.gestures.notice = self._notice  # why a gesture did nothing
        self.description_label = QLabel(self)  # the diagram's description, first line
        self.description_label.setObjectName("diagram-description")
        self.statusBar().addPermanentWidget(self.description_label)
        self.level_label = QLabel(self)
        self.statusBar().addPermanentWidget(self.level_label)
        self.doc.reset.connect(self._show_description)
        self.doc.titleChanged.connect(self._update_title)
        self.canvas.levelChanged.connect(self._update_level)
        self.canvas.scene.selectionChanged.connect(self._update_actions)
        self._update_title()
        self._update_level(())
        self._update_actions()
        self._show_description()
        self.actions_.sample_time_colors.setChecked(
            editor_settings().value(SAMPLE_TIME_COLORS, False, type=bool))
        self.statusBar().showMessage(
            "Drag blocks from the palette; drag from an output port to an input to wire, "
            "between physical ports (squares) to connect; drag from a wire to branch it; "
            "double-click a block to edit it.", 15000)

    # ----- start-up -----
    def offer_recovery(self, new_window: Callable[[], "MainWindow"] | None = None) -> bool:
        """Offer back, in one question, the work of editors that stopped with unsaved changes.

        The first piece accepted opens here, each further one in `new_window()` (kept for
        the next start if there is none); a declined one is deleted, and only that one;
        "later" keeps them all. True if this window recovered work.
        """
        pending = self.autosaver.pending()
        if not pending:
            return False
        chosen = dialogs.ask_recover(self, [p.description for p in pending])
        if chosen is None:
            for piece in pending:
                piece.release()
            return False
        here = False
        for piece, take in zip(pending, chosen):
            if not take:
                piece.discard()
                continue
            target = self if not here else new_window() if new_window else None
            if target is None:
                piece.release()
            elif target.autosaver.recover(piece):
                target.statusBar().showMessage(f"Recovered {piece.description}", 10000)
                here = True
            else:
                piece.release()
                dialogs.message(self, "Cannot recover unsaved work",
                                f"{piece.file}: the autosaved diagram cannot be read; it is "
                                f"left in {piece.file.parent}.")
        return here

    # ----- reactions -----
    def _update_title(self) -> None:
        mark = "*" if self.doc.dirty else ""
        # the mark is ours: setWindowModified wants a "[*]" in the title and warns without one
        self.setWindowTitle(f"{self.doc.title}{mark} — blocksim")

    def _notice(self, text: str) -> None:
        self.statusBar().showMessage(text, 10000)

    def _show_description(self) -> None:
        """The diagram's description: its first line in the status bar, all of it as that
        line's tooltip (not the canvas's: it would pop up wherever the mouse rests)."""
        text = self.doc.diagram.description.strip()
        first = text.splitlines()[0] if text else ""
        metrics = self.description_label.fontMetrics()  # cut to fit, leaving room for messages
        self.description_label.setText(
            metrics.elidedText(first, Qt.TextElideMode.ElideRight, DESCRIPTION_WIDTH))
        self.description_label.setToolTip(text)
        self.description_label.setVisible(bool(text))

    def _update_level(self, level: tuple) -> None:
        self.level_label.setText(" / ".join(("top",) + tuple(level)))

    def _update_actions(self) -> None:
        ids = self.canvas.scene.selected_block_ids()
        a = self.actions_
        for action in (a.rotate, a.rotate_back, a.flip, a.group, a.duplicate, a.copy, a.cut):
            action.setEnabled(bool(ids))
        a.help_block.setEnabled(len(ids) <= 1)
        wires = self.canvas.scene.selected_wire_indices()
        connections = {item.index for item in self.canvas.scene.wires if item.domain is not None}
        # a connection carries no signal to name
        a.name_signal.setEnabled(len(wires) == 1 and not ids and wires[0] not in connections)
        a.open_subsystem.setEnabled(len(ids) == 1 and self.canvas.scene.blocks[ids[0]]
                                    .has_diagram)

    def set_sample_time_colors(self, on: bool) -> None:
        """View > Sample Time Colors: on or off, remembered for the next start."""
        self.canvas.set_sample_time_colors(on)
        editor_settings().setValue(SAMPLE_TIME_COLORS, bool(on))

    def name_selected_wire(self) -> None:
        """Edit > Name Signal: ask for the name of the one selected wire."""
        wires = self.canvas.scene.selected_wire_indices()
        if len(wires) == 1:
            self.context_menus.ask_wire_name(wires[0])

    def open_selected_subsystem(self) -> None:
        ids = self.canvas.scene.selected_block_ids()
        if len(ids) == 1:
            self.canvas.open_subsystem(ids[0])

    def show_scopes(self) -> None:
        dock = self.panels.docks.get("scopes")
        if dock is not None:
            dock.show()
            dock.raise_()
            wanted = self.height() // 3  # tabbed with the diagnostics it has their few lines,
            if dock.height() < wanted:  # too few for a plot
                self.resizeDocks([dock], [wanted], Qt.Vertical)

    def show_diagnostics(self) -> None:
        dock = self.panels.docks.get("diagnostics")
        if dock is not None:
            dock.show()
            dock.raise_()

    def export_picture(self) -> None:
        """Save the shown level as it is drawn (PNG or SVG)."""
        from blocksim.gui.canvas.render import render_diagram

        stem = self.doc.path.stem if self.doc.path else "diagram"
        path = dialogs.save_path(self, f"{stem}.png", "Pictures (*.png *.svg)")
        if not path:
            return
        if Path(path).suffix.lower() not in (".png", ".svg"):
            path += ".png"
        try:
            render_diagram(self.doc.diagram, path, level=self.canvas.level)
        except Exception as exc:
            dialogs.message(self, "Cannot export picture", str(exc))
            return
        self.statusBar().showMessage(f"Saved {path}", 5000)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.files.maybe_save():
            event.ignore()
            return
        if self.sim.runner is not None and self.sim.runner.is_running():
            self.sim.runner.stop()
            self.sim.runner.wait(3000)
        self.autosaver.clear()
        event.accept()
