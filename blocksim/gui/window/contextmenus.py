"""Right-click menus on the canvas: for a block, for a wire, and for the empty canvas.

They offer the window's own actions (so shortcuts and enabled states are the same as in the
menu bar) plus what only makes sense at the clicked spot: naming the clicked wire, adding a
block where the mouse is. Right-clicking an unselected item selects it first, as desktop
tools do, so the menu acts on what was clicked.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QMenu

from blocksim.blocktypes import registry
from blocksim.gui.analysis.marking import add_mark_actions
from blocksim.gui.window import dialogs

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow


class ContextMenus:
    """Builds and shows the canvas's context menus for one window."""

    def __init__(self, window: "MainWindow"):
        self.window = window
        self.menu: QMenu | None = None  # the one shown last (tests read it)
        view = window.canvas.view
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self.show_at)

    def show_at(self, point: QPoint) -> QMenu:
        """Pop up the menu for what is under a viewport point (non-blocking)."""
        view = self.window.canvas.view
        self.menu = self.build(view.mapToScene(point))
        self.menu.popup(view.viewport().mapToGlobal(point))
        return self.menu

    def build(self, pos: QPointF) -> QMenu:
        """The menu for a canvas point: the block there, else the wire there, else the canvas."""
        scene = self.window.canvas.scene
        block = scene.block_at(pos)
        if block is not None:
            if not block.isSelected():
                scene.select_only([block.block_id])
            return self._block_menu(block)
        wire = scene.wire_at(pos)
        if wire is not None:
            if not wire.isSelected():
                scene.clearSelection()
                wire.setSelected(True)
            return self._wire_menu(wire.index)
        return self._canvas_menu(pos)

    # ----- the three menus -----
    def _block_menu(self, block) -> QMenu:
        a, w = self.window.actions_, self.window
        menu = QMenu(w)
        menu.setObjectName("block-menu")
        if block.has_diagram:
            menu.addAction(a.open_subsystem)
        menu.addAction("Parameters…", lambda: w.panels.show_dock("inspector"))
        menu.addAction(a.help_block)
        menu.addSeparator()
        menu.addActions([a.cut, a.copy, a.duplicate, a.delete])
        menu.addSeparator()
        menu.addActions([a.rotate, a.rotate_back, a.flip, a.group])
        return menu

    def _wire_menu(self, index: int) -> QMenu:
        w = self.window
        wire = w.doc.level(w.canvas.level).wires[index]
        menu = QMenu(w)
        menu.setObjectName("wire-menu")
        connection = any(item.index == index and item.domain is not None
                         for item in w.canvas.scene.wires)
        if not connection:  # a connection of physical ports carries no signal to name
            menu.addAction("Name Signal…" if not wire.name else "Rename Signal…",
                           lambda: self.ask_wire_name(index))
        if wire.name:
            menu.addAction("Remove Signal Name", lambda: w.canvas.editor.name_wire(index, ""))
        if not connection:  # nor does it have a linear model
            menu.addSeparator()
            add_mark_actions(menu, w, index)
        menu.addSeparator()
        menu.addAction(w.actions_.delete)
        return menu

    def _canvas_menu(self, pos: QPointF) -> QMenu:
        a, w = self.window.actions_, self.window
        menu = QMenu(w)
        menu.setObjectName("canvas-menu")
        menu.addAction(a.paste)
        add = menu.addMenu("Add &Block")
        by_category: dict[str, list[str]] = {}
        for name, block_type in registry.all_types().items():
            by_category.setdefault(block_type.category, []).append(name)
        for category in sorted(by_category, key=str.casefold):
            sub = add.addMenu(category)
            for name in sorted(by_category[category], key=str.casefold):
                sub.addAction(name, lambda n=name: w.canvas.editor.add_block(n, QPointF(pos)))
        menu.addSeparator()
        menu.addActions([a.select_all, a.arrange, a.fit])
        if w.canvas.level:
            menu.addAction(a.go_up)
        return menu

    def ask_wire_name(self, index: int) -> None:
        """Ask for the signal name of wire `index` of the shown level; '' removes it."""
        w = self.window
        wire = w.doc.level(w.canvas.level).wires[index]
        name = dialogs.ask_text(w, "Signal name", f"Name of the signal {wire.src} → {wire.dst}:",
                                wire.name)
        if name is not None:
            w.canvas.editor.name_wire(index, name)
