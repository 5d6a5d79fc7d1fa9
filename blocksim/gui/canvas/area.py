"""The editing area: a breadcrumb bar over the diagram view, and subsystem navigation.

Double-clicking a subsystem (any block with a nested diagram) opens its inside in the same view; the breadcrumb (top ▸ part2)
leads back up. Edits at any depth go to the one document undo stack.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from blocksim.gui.document.document import DiagramDocument, Level
from blocksim.gui.canvas.editing import Editor
from blocksim.gui.canvas.ratecolors import SampleTimeColors, SampleTimeLegend
from blocksim.gui.canvas.scene import DiagramScene
from blocksim.gui.canvas.view import DiagramView


class Breadcrumb(QWidget):
    """Buttons for each level from the top diagram down to the one shown."""

    levelClicked = Signal(tuple)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(6, 2, 6, 2)
        self._layout.setSpacing(2)
        self.buttons: list[QToolButton] = []

    def show_level(self, top_name: str, level: Level) -> None:
        while self._layout.count():
            widget = self._layout.takeAt(0).widget()
            if widget is not None:
                widget.hide()
                widget.setParent(None)
                widget.deleteLater()
        self.buttons = []
        names = [top_name] + list(level)
        for depth, name in enumerate(names):
            if depth:
                self._layout.addWidget(QLabel("▸", self))
            if depth == len(names) - 1:  # where we are: plain bold text
                here = QLabel(f"<b>{html.escape(name)}</b>", self)
                self._layout.addWidget(here)
                continue
            button = QToolButton(self)
            button.setText(name)
            button.setAutoRaise(True)
            target = tuple(level[:depth])
            button.clicked.connect(lambda _=False, t=target: self.levelClicked.emit(t))
            self._layout.addWidget(button)
            self.buttons.append(button)
        self._layout.addStretch(1)


class Canvas(QWidget):
    """Breadcrumb, sample-time legend, view, scene and edit operations of one document."""

    levelChanged = Signal(tuple)

    def __init__(self, doc: DiagramDocument, parent: QWidget | None = None):
        super().__init__(parent)
        self.doc = doc
        self.scene = DiagramScene(doc, self)
        self.view = DiagramView(self.scene, self)
        self.editor = Editor(self.scene, self)
        self.breadcrumb = Breadcrumb(self)
        self.legend = SampleTimeLegend(self)
        self.sample_times = SampleTimeColors(doc, self._show_rates, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.breadcrumb)
        layout.addWidget(self.legend)
        layout.addWidget(self.view, 1)
        self.scene.levelChanged.connect(self._level_changed)
        self.scene.openRequested.connect(self._open_later)
        self.breadcrumb.levelClicked.connect(self.go_to)
        doc.titleChanged.connect(self._refresh_breadcrumb)
        doc.reset.connect(self._document_reset)
        self._refresh_breadcrumb()

    @property
    def level(self) -> Level:
        return self.scene.level

    # ----- sample-time colours -----
    def set_sample_time_colors(self, on: bool) -> None:
        """Colour blocks and wires by their resolved sample time, with a legend (or not)."""
        self.legend.setVisible(on)
        self.sample_times.set_enabled(on)
        if on and self.sample_times.busy():
            self.legend.show_rates(None, pending=True)

    def _show_rates(self, rates) -> None:
        self.scene.set_sample_times(rates)
        self.legend.show_rates(rates, self.sample_times.problem)

    def open_subsystem(self, block_id: str) -> None:
        """Show the inside of a subsystem block (any with a nested diagram) of this level."""
        level = self.scene.level + (block_id,)
        if self.doc.has_level(level):
            self.go_to(level)

    def _open_later(self, block_id: str) -> None:
        # after the double-click has been handled: its items are replaced by the inside
        QTimer.singleShot(0, lambda: self.open_subsystem(block_id))

    def go_up(self) -> None:
        if self.scene.level:
            child = self.scene.level[-1]
            self.go_to(self.scene.level[:-1])
            self.scene.select_only([child])

    def go_to(self, level: Level) -> None:
        if tuple(level) != self.scene.level:
            self.scene.set_level(tuple(level))
            self.view.fit()

    def locate(self, path: str, wire_key: str | None = None) -> bool:
        """Show and select a block given by its path ("sub/inner/id"); False if not found."""
        parts = [p for p in path.split("/") if p]
        if not parts:
            return False
        level, block_id = tuple(parts[:-1]), parts[-1]
        if not self.doc.has_level(level):
            return False
        self.go_to(level)
        item = self.scene.blocks.get(block_id)
        if item is None:
            return False
        self.scene.select_only([block_id], [wire_key] if wire_key else [])
        self.view.centerOn(item)
        return True

    def _document_reset(self) -> None:
        QTimer.singleShot(0, self.view.fit)  # once the new items have their final geometry

    def _level_changed(self, level: Level) -> None:
        self._refresh_breadcrumb()
        self.levelChanged.emit(level)

    def _refresh_breadcrumb(self) -> None:
        name = self.doc.path.stem if self.doc.path else "untitled"
        self.breadcrumb.show_level(name, self.scene.level)
        self.breadcrumb.setVisible(True)

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key_Backspace and self.scene.level:
            self.go_up()
            return
        super().keyPressEvent(event)
