"""The side panels in docks, and their signals turned into undo commands.

Palette (left), inspector and diagram settings (right, as two tabs: stacked, they left the
inspector a few lines), diagnostics and scopes (bottom, tabbed). The panels never touch the
model: each edit they report becomes one command on the document's undo stack, and they
are refreshed from the model after changes.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QWidget

from blocksim.gui.window import dialogs
from blocksim.gui.document.commands import (
    RenameBlock,
    SetDiagramParameters,
    SetParams,
    SetSimulation,
)
from blocksim.gui.panels.diagnostics import DiagnosticsPanel
from blocksim.gui.panels.inspector import BlockInspector, DiagramSettingsEditor
from blocksim.gui.panels.palette import BlockPalette
from blocksim.gui.scopes.data_inspector import DataInspector

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

log = logging.getLogger(__name__)

RIGHT_WIDTH = 340  # the inspector's forms read without a horizontal scroll bar
LEFT_WIDTH = 230  # the palette's category and block names in full


class Panels(QObject):
    """Creates the docks of a main window and keeps them in step with the document."""

    def __init__(self, window: "MainWindow"):
        super().__init__(window)
        self.window = window
        self.doc = window.doc
        self.canvas = window.canvas
        self.docks: dict[str, QDockWidget] = {}
        self.palette = BlockPalette(self.window)
        # a diagram may declare its own component types: the palette lists the open one's
        self.doc.reset.connect(self.palette.refresh)
        self.inspector = BlockInspector(self.window)
        self.settings = DiagramSettingsEditor(self.window)
        self.diagnostics = DiagnosticsPanel(self.window)
        self._shown_block: tuple | None = None
        self._shown_settings: tuple | None = None
        self._dock("palette", "Blocks", self.palette, Qt.LeftDockWidgetArea)
        self._dock("inspector", "Block", _scrolling(self.inspector), Qt.RightDockWidgetArea)
        self._dock("settings", "Diagram", _scrolling(self.settings), Qt.RightDockWidgetArea)
        self._dock("diagnostics", "Diagnostics", self.diagnostics, Qt.BottomDockWidgetArea)
        scopes = window.sim.scopes
        self._dock("scopes", "Scopes", scopes.scope_area() if scopes else None,
                   Qt.BottomDockWidgetArea)
        self.data_inspector = DataInspector(scopes.history, self.window) if scopes else None
        if self.data_inspector is not None:
            scopes.runRecorded.connect(self.data_inspector.add_run)
        self._dock("data_inspector", "Data Inspector", self.data_inspector,
                   Qt.BottomDockWidgetArea)
        if "inspector" in self.docks and "settings" in self.docks:
            # Tabs, not a stack: a block's documentation and parameters need the height.
            window.tabifyDockWidget(self.docks["inspector"], self.docks["settings"])
            self.docks["settings"].raise_()  # nothing is selected yet
        widths = {"palette": LEFT_WIDTH, "inspector": RIGHT_WIDTH, "settings": RIGHT_WIDTH}
        sides = [k for k in widths if k in self.docks]
        if sides:  # both sides at once: sizing one alone takes the room from the other
            window.resizeDocks([self.docks[k] for k in sides], [widths[k] for k in sides],
                               Qt.Horizontal)
        if "diagnostics" in self.docks and "scopes" in self.docks:
            window.tabifyDockWidget(self.docks["diagnostics"], self.docks["scopes"])
            if "data_inspector" in self.docks:  # a tab beside the scopes, once asked for
                window.tabifyDockWidget(self.docks["scopes"], self.docks["data_inspector"])
                self.docks["data_inspector"].hide()
            self.docks["diagnostics"].raise_()
        self._connect()

    def _dock(self, key: str, title: str, widget: QWidget | None, area) -> None:
        if widget is None:
            return
        dock = QDockWidget(title, self.window)
        dock.setObjectName(f"dock-{key}")
        dock.setWidget(widget)
        self.window.addDockWidget(area, dock)
        self.docks[key] = dock
        self.window.panels_menu.addAction(dock.toggleViewAction())

    def _connect(self) -> None:
        scene, doc = self.canvas.scene, self.doc
        if self.palette is not None:
            self.palette.blockActivated.connect(self._add_at_centre)
        scene.selectionChanged.connect(self.refresh_inspector)
        scene.blockActivated.connect(self._edit_block)
        self.canvas.levelChanged.connect(self._level_changed)
        doc.changed.connect(self._model_changed)
        doc.reset.connect(self._document_reset)
        if self.inspector is not None:
            self.inspector.paramsEdited.connect(self._params_edited)
            self.inspector.renameRequested.connect(self._rename)
        if self.settings is not None:
            self.settings.parametersEdited.connect(self._parameters_edited)
            self.settings.settingsEdited.connect(self._settings_edited)
            self.refresh_settings(force=True)
        if self.diagnostics is not None:
            self.window.sim.diagnostics_panel = self.diagnostics
            self.diagnostics.locateRequested.connect(self.window.sim.locate)

    def _edit_block(self, block_id: str) -> None:
        """A double-click on a block: its inspector in front, the keyboard in its id field
        (then Tab through its parameters), as a block dialog opens in Simulink."""
        if self.inspector is None:
            return
        self.canvas.scene.select_only([block_id])
        self.refresh_inspector()
        if "inspector" in self.docks:
            self.docks["inspector"].raise_()
        self.inspector.start_editing()

    def _level_changed(self, _level: tuple) -> None:
        self.refresh_inspector()
        self.window.sim.refresh_marks()

    def _model_changed(self, _level: tuple) -> None:
        self.refresh_inspector()
        self.refresh_settings()

    def _document_reset(self) -> None:
        self.refresh_inspector()
        self.refresh_settings(force=True)
        self.window.sim.diagnostics = []
        if self.window.sim.scopes is not None:  # the previous diagram's plots are not this one's
            self.window.sim.scopes.clear()
        if self.diagnostics is not None:
            self.diagnostics.show_diagnostics([])

    def _parameters_edited(self, params: dict) -> None:
        if params != self.doc.diagram.parameters:
            self.doc.push(SetDiagramParameters(self.doc, (), params))

    def _settings_edited(self, settings) -> None:
        if settings != self.doc.diagram.simulation:
            self.doc.push(SetSimulation(self.doc, settings))

    # ----- palette -----
    def _add_at_centre(self, type_name: str) -> None:
        view = self.canvas.view
        centre = view.mapToScene(view.viewport().rect().center())
        self.canvas.editor.add_block(type_name, centre)

    # ----- inspector -----
    def refresh_inspector(self) -> None:
        """Show the one selected block, or nothing."""
        if self.inspector is None:
            return
        level = self.canvas.level
        ids = self.canvas.scene.selected_block_ids()
        if len(ids) != 1 or not self.doc.has_level(level):
            if self._shown_block is not None:
                self.inspector.clear()
                self._shown_block = None
            return
        diagram = self.doc.level(level)
        block = diagram.block(ids[0])
        state = (level, block.id, repr(block.params), block.type)
        if state == self._shown_block:
            return  # unchanged: keep whatever the user is typing
        parents = [self.doc.level(level[:i]) for i in range(len(level))]
        self.inspector.show_block(diagram, block, parents)
        if self._shown_block is None or self._shown_block[:2] != state[:2]:
            self.show_dock("inspector")  # a newly selected block: bring its tab forward
        self._shown_block = state

    def show_dock(self, key: str) -> None:
        """Make a panel visible and, if it shares a tab group, the current tab."""
        dock = self.docks.get(key)
        if dock is not None:
            dock.show()
            dock.raise_()

    def _params_edited(self, block_id: str, params: dict[str, Any]) -> None:
        level = self.canvas.level
        try:
            current = self.doc.level(level).block(block_id).params
        except KeyError:
            return
        if current != params:
            self.doc.push(SetParams(self.doc, level, block_id, params))

    def _rename(self, old: str, new: str) -> None:
        if old == new:
            return
        try:
            command = RenameBlock(self.doc, self.canvas.level, old, new)
        except (ValueError, KeyError) as exc:
            dialogs.message(self.window, "Cannot rename", str(exc))
            return
        self.doc.push(command)
        self.canvas.scene.select_only([new])

    # ----- diagram settings -----
    def refresh_settings(self, force: bool = False) -> None:
        if self.settings is None:
            return
        diagram = self.doc.diagram
        state = (repr(diagram.parameters), repr(diagram.simulation))
        if force or state != self._shown_settings:
            self.settings.show_diagram(diagram)
            self._shown_settings = state


def _scrolling(panel: QWidget | None) -> QWidget | None:
    """The panel in a scroll area: a tall form must not set the height of the whole right
    side, or the bottom docks (the scopes) get squeezed to a strip."""
    if panel is None:
        return None
    area = QScrollArea()
    area.setWidget(panel)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.NoFrame)
    return area
