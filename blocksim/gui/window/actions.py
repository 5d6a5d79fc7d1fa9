"""The main window's actions, menus and toolbar, built in one place so the window stays thin.

Each action calls one method of the canvas's editor, the file controller or the simulation
panel; keyboard shortcuts follow the platform's conventions where Qt knows them.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QProgressBar, QToolBar

from blocksim.gui.window import files, fmu_export
from blocksim.gui.window.simtoolbar import SimulationFields

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow


def _action(window: "MainWindow", text: str, slot: Callable, shortcut=None, tip: str = "",
            context=Qt.WindowShortcut) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        keys = shortcut if isinstance(shortcut, list) else [shortcut]
        action.setShortcuts([QKeySequence(k) for k in keys])
        action.setShortcutContext(context)
    if tip:
        action.setStatusTip(tip)
    action.triggered.connect(lambda _checked=False: slot())
    return action


def build_actions(window: "MainWindow") -> SimpleNamespace:
    """Create every action of the window; menus and toolbar are added by `build_menus`."""
    canvas, editor, fc, sim = window.canvas, window.canvas.editor, window.files, window.sim
    view = canvas.view
    canvas_only = Qt.WidgetWithChildrenShortcut
    a = SimpleNamespace()
    a.new = _action(window, "&New", fc.new, QKeySequence.New)
    a.open = _action(window, "&Open…", fc.open, QKeySequence.Open)
    a.save = _action(window, "&Save", fc.save, QKeySequence.Save)
    a.save_as = _action(window, "Save &As…", fc.save_as, QKeySequence.SaveAs)
    a.export_picture = _action(window, "Export &Picture…", window.export_picture,
                               tip="Save the shown diagram level as PNG or SVG")
    a.export_fmu = _action(window, "Export &FMU…", lambda: fmu_export.export_fmu(window),
                           tip="Export the diagram as an FMU (FMI 2.0 or 3.0) with C code")
    a.quit = _action(window, "&Quit", window.close, QKeySequence.Quit)
    a.undo = window.doc.undo_stack.createUndoAction(window, "&Undo")
    a.undo.setShortcuts(QKeySequence.Undo)
    a.redo = window.doc.undo_stack.createRedoAction(window, "&Redo")
    a.redo.setShortcuts(_redo_keys())
    a.cut = _action(window, "Cu&t", editor.cut, QKeySequence.Cut, context=canvas_only)
    a.copy = _action(window, "&Copy", editor.copy, QKeySequence.Copy, context=canvas_only)
    a.paste = _action(window, "&Paste", editor.paste, QKeySequence.Paste, context=canvas_only)
    a.duplicate = _action(window, "&Duplicate", editor.duplicate, "Ctrl+D", context=canvas_only)
    a.delete = _action(window, "De&lete", editor.delete, [QKeySequence.Delete, "Backspace"],
                       context=canvas_only)
    a.select_all = _action(window, "Select &All", editor.select_all, QKeySequence.SelectAll,
                           context=canvas_only)
    a.rotate = _action(window, "&Rotate", editor.rotate, "Ctrl+R", "Turn the selection 90°")
    a.rotate_back = _action(window, "Rotate &Back", lambda: editor.rotate(-1), "Ctrl+Shift+R",
                            "Turn the selection 90° counter-clockwise")
    a.flip = _action(window, "&Flip", editor.flip, "Ctrl+I", "Mirror the selection")
    a.group = _action(window, "&Group into Subsystem", editor.group, "Ctrl+G")
    a.arrange = _action(window, "Arrange &Automatically", editor.auto_arrange, "Ctrl+Shift+L",
                        "Lay out the shown level afresh")
    a.nudges = [_action(window, f"Nudge {name}", lambda dx=dx, dy=dy: editor.nudge(dx, dy), key,
                        context=canvas_only)
                for name, key, dx, dy in (("left", "Left", -10, 0), ("right", "Right", 10, 0),
                                          ("up", "Up", 0, -10), ("down", "Down", 0, 10))]
    a.zoom_in = _action(window, "Zoom &In", view.zoom_in, [QKeySequence.ZoomIn, "Ctrl+="])
    a.zoom_out = _action(window, "Zoom &Out", view.zoom_out, QKeySequence.ZoomOut)
    a.zoom_reset = _action(window, "&Actual Size", view.reset_zoom, "Ctrl+0")
    a.fit = _action(window, "&Fit to View", view.fit, "Ctrl+Shift+F")
    a.open_subsystem = _action(window, "Open &Subsystem", window.open_selected_subsystem,
                               "Ctrl+Down")
    a.go_up = _action(window, "Go &Up a Level", canvas.go_up, "Ctrl+Up")
    a.sample_time_colors = QAction("Sample &Time Colors", window)
    a.sample_time_colors.setCheckable(True)
    a.sample_time_colors.setStatusTip("Colour blocks and wires by their sample time "
                                      "(continuous black, discrete by speed, ...)")
    a.sample_time_colors.toggled.connect(window.set_sample_time_colors)
    a.run = _action(window, "&Run", sim.run, ["Ctrl+Return", "F5"], "Simulate the diagram")
    a.stop = _action(window, "&Stop", sim.stop, "Shift+F5", "Stop the simulation")
    a.stop.setEnabled(False)
    a.validate = _action(window, "&Validate", sim.validate, "F7",
                         "Check the diagram without running it")
    a.sweep = _action(window, "S&weep…", lambda: _open_sweep(window),
                      tip="Run the diagram over ranges of its parameters and plot a metric")
    a.linearize = _action(window, "&Linearize…", lambda: _open_analysis(window, "linearize"),
                          "Ctrl+L", "The linear model between the wires marked as linear "
                          "analysis inputs and outputs: Bode plot, step, poles, margins")
    a.operating_point = _action(window, "&Operating Point…",
                                lambda: _open_analysis(window, "operating_point"),
                                tip="Where the diagram settles (trim); write it as the "
                                    "initial values")
    a.export_results = _action(window, "Export &Results…", sim.export_results)
    a.export_images = _action(window, "Export Scope &Images…", sim.export_images)
    a.name_signal = _action(window, "&Name Signal…", window.name_selected_wire,
                            tip="Label the selected wire with its signal's name")
    helps = window.help
    a.help_block = _action(window, "&Help on Block", helps.help_on_selection,
                           QKeySequence.HelpContents,
                           "The reference of the selected block's type (blocksim describe)")
    a.block_reference = _action(window, "&Block Reference", helps.show_reference,
                                tip="Ports, parameters and documentation of every block type")
    a.shortcuts = _action(window, "&Keyboard Shortcuts", helps.show_shortcuts,
                          tip="Every key and mouse gesture of the editor")
    a.data_inspector = _action(window, "&Data Inspector",
                               lambda: window.panels.show_dock("data_inspector"), "Ctrl+Shift+I",
                               "Compare the logged signals of the last runs")
    for action in [a.cut, a.copy, a.paste, a.duplicate, a.delete, a.select_all] + a.nudges:
        canvas.addAction(action)
    return a


def build_menus(window: "MainWindow", a: SimpleNamespace) -> None:
    """Menus, the Open Recent and Examples submenus, and the toolbar with its progress bar."""
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([a.new, a.open])
    window.recent_menu = QMenu("Open &Recent", window)
    window.examples_menu = QMenu("&Examples", window)
    file_menu.addMenu(window.recent_menu)
    file_menu.addMenu(window.examples_menu)
    file_menu.addSeparator()
    file_menu.addActions([a.save, a.save_as])
    file_menu.addSeparator()
    file_menu.addActions([a.export_picture, a.export_results, a.export_images, a.export_fmu])
    file_menu.addSeparator()
    file_menu.addAction(a.quit)
    edit = bar.addMenu("&Edit")
    edit.addActions([a.undo, a.redo])
    edit.addSeparator()
    edit.addActions([a.cut, a.copy, a.paste, a.duplicate, a.delete, a.select_all])
    edit.addSeparator()
    edit.addActions([a.rotate, a.rotate_back, a.flip, a.group, a.arrange])
    edit.addSeparator()
    edit.addAction(a.name_signal)
    view = bar.addMenu("&View")
    view.addActions([a.zoom_in, a.zoom_out, a.zoom_reset, a.fit])
    view.addSeparator()
    view.addActions([a.open_subsystem, a.go_up])
    view.addSeparator()
    view.addAction(a.sample_time_colors)
    window.panels_menu = view.addMenu("&Panels")
    sim = bar.addMenu("&Simulation")
    sim.addActions([a.run, a.stop, a.validate])
    sim.addSeparator()
    sim.addAction(a.sweep)
    sim.addAction(a.data_inspector)
    analysis = bar.addMenu("&Analysis")
    analysis.addActions([a.linearize, a.operating_point])
    help_menu = bar.addMenu("&Help")
    help_menu.addActions([a.help_block, a.block_reference, a.shortcuts])
    fill_examples(window)
    fill_recent(window)
    window.files.recentChanged.connect(lambda: fill_recent(window))

    tools = QToolBar("Main", window)
    tools.setObjectName("main-toolbar")
    tools.setToolButtonStyle(Qt.ToolButtonTextOnly)
    tools.addActions([a.new, a.open, a.save])
    tools.addSeparator()
    # Fixed-width toolbar twins: the menu's "Undo Set simulation settings" would shift the
    # buttons after it on every edit; the command's name goes to the tooltip instead.
    a.undo_tool = _StackTwin(window, "Undo", window.doc.undo_stack, redo=False)
    a.redo_tool = _StackTwin(window, "Redo", window.doc.undo_stack, redo=True)
    tools.addActions([a.undo_tool, a.redo_tool])
    tools.addSeparator()
    tools.addActions([a.run, a.stop, a.validate])
    window.sim_fields = SimulationFields(window, tools)
    window.progress = QProgressBar(tools)
    window.progress.setRange(0, 1000)
    window.progress.setMaximumWidth(180)
    window.progress.setTextVisible(False)
    # A toolbar shows or hides its widgets through the action addWidget returns; the
    # widget's own setVisible is overridden by it (Qt's QToolBar.addWidget documentation).
    window.progress_action = tools.addWidget(window.progress)
    window.progress_action.setVisible(False)
    tools.addSeparator()
    tools.addActions([a.zoom_in, a.zoom_out, a.fit])
    window.addToolBar(tools)


def _open_sweep(window: "MainWindow") -> None:
    from blocksim.gui.sweep.dialog import open_sweep_dialog  # pyqtgraph's plots, when asked

    open_sweep_dialog(window)


def _open_analysis(window: "MainWindow", which: str) -> None:
    from blocksim.gui.analysis import menu  # pyqtgraph's plots, when asked

    menu.open_analysis(window, which)


def _redo_keys() -> list[QKeySequence]:
    """The platform's redo keys plus both common spellings, Ctrl+Y (Windows habit) and
    Ctrl+Shift+Z, whatever the platform theme offers."""
    keys = list(QKeySequence.keyBindings(QKeySequence.Redo))
    for text in ("Ctrl+Shift+Z", "Ctrl+Y"):
        key = QKeySequence(text)
        if key not in keys:
            keys.append(key)
    return keys


def fill_examples(window: "MainWindow") -> None:
    window.examples_menu.clear()
    found = files.examples()
    for path in found:
        action = window.examples_menu.addAction(files.example_name(path))
        action.setStatusTip(str(path))
        action.triggered.connect(lambda _=False, p=path: window.files.open_example(p))
    window.examples_menu.setEnabled(bool(found))


def fill_recent(window: "MainWindow") -> None:
    window.recent_menu.clear()
    recent = window.files.recent()
    for text in recent:
        action = window.recent_menu.addAction(text)
        action.triggered.connect(lambda _=False, p=text: window.files.open_path(p))
    if recent:
        window.recent_menu.addSeparator()
        window.recent_menu.addAction("Clear List", window.files.clear_recent)
    window.recent_menu.setEnabled(bool(recent))


class _StackTwin(QAction):
    """A toolbar Undo or Redo with a constant label; the command's name is its tooltip.

    It follows the undo stack through bound methods, so Qt drops the connections when the
    window (and with it this action) is destroyed.
    """

    def __init__(self, window, label: str, stack, redo: bool):
        super().__init__(label, window)
        self._label = label
        if redo:
            self.triggered.connect(stack.redo)
            stack.canRedoChanged.connect(self.setEnabled)
            stack.redoTextChanged.connect(self.describe)
            self.setEnabled(stack.canRedo())
            self.describe(stack.redoText())
        else:
            self.triggered.connect(stack.undo)
            stack.canUndoChanged.connect(self.setEnabled)
            stack.undoTextChanged.connect(self.describe)
            self.setEnabled(stack.canUndo())
            self.describe(stack.undoText())

    def describe(self, command: str) -> None:
        self.setToolTip(f"{self._label} {command}".strip())
