"""Run, Stop, Validate and exports: ties the toolbar to the runner, scopes and diagnostics.

The panels themselves (runner, scopes, diagnostics, validation) live in their own modules;
this only connects them to the open document and the canvas, and reports in the status bar.
If a panel module is missing, the actions say so instead of failing.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from blocksim.gui.document import validation
from blocksim.gui.scopes.panel import ScopeManager
from blocksim.gui.scopes.runner import SimulationRunner
from blocksim.gui.window import dialogs
from blocksim.diagram.model import Diagram

if TYPE_CHECKING:
    from blocksim.gui.window.mainwindow import MainWindow

log = logging.getLogger(__name__)


class SimulationControl(QObject):
    """The Simulation menu's behaviour for one window."""

    def __init__(self, window: "MainWindow"):
        super().__init__(window)
        self.window = window
        self.runner = SimulationRunner(self)
        self.scopes = ScopeManager(window)
        self.diagnostics_panel = None  # set by the window once the dock exists
        self.diagnostics: list = []
        self._run_failed = False  # the diagnostics shown are a run's failure
        # Files the user let a diagram's blocks write outside its folder, by diagram file,
        # while this window is open (asked once: `dialogs.allowed_after_asking`).
        self.allowed_writes: dict[str, set[str]] = {}
        if self.runner is not None:
            self.runner.progressChanged.connect(self._progress)
            self.runner.finished.connect(self._finished)
            self.runner.failed.connect(self._failed)

    # ----- run -----
    def run(self) -> None:
        if self.runner is None:
            dialogs.message(self.window, "Run", "The simulation runner is not available.")
            return
        if self.runner.is_running():
            return
        diagram = self.window.doc.diagram
        if self._run_failed:  # the last run's failure is not this run's
            self._run_failed = False
            self._show([], raise_panel=False)
        if self.scopes is not None:
            self.scopes.attach(self.runner, diagram)
            self.window.show_scopes()
        self._running(True)
        self.window.statusBar().showMessage("Simulating…")
        allowed = sorted(self.allowed_writes.get(diagram.source, ()))
        try:
            self.runner.start(diagram, allow_write=allowed)
        except Exception as exc:
            self._running(False)
            dialogs.message(self.window, "Cannot run", str(exc))

    def stop(self) -> None:
        if self.runner is not None:
            self.runner.stop()

    def _progress(self, fraction: float) -> None:
        self.window.progress.setValue(int(max(0.0, min(fraction, 1.0)) * 1000))

    def _finished(self, results: Any) -> None:
        self._running(False)
        status = getattr(results, "status", "done")
        rows = len(getattr(results, "time", ()))
        events = len(getattr(results, "events", ()))
        wrote = "".join(f"; {block} wrote {what}" for block, what in
                        getattr(results, "written", ()))  # (ToFile: where, really)
        self.window.statusBar().showMessage(
            f"Simulation {status}: {rows} rows, {events} events{wrote}")

    def _failed(self, message: str, partial: Any) -> None:
        """A run that could not start or ended early: the problem goes to Diagnostics with
        its block and port, outlined on the canvas (an algebraic loop: all its wires), and
        the status bar says so; no modal box, the results so far stay in the scopes."""
        self._running(False)
        error = getattr(self.runner, "error", None)
        allowed = self.allowed_writes.setdefault(self.window.doc.diagram.source, set())
        if dialogs.allowed_after_asking(self.window, error, allowed):
            self.run()  # again, now with the files the user allowed
            return
        found = validation.diagnostic_of(error) if error is not None else \
            validation.Diagnostic(message, None)
        self._show([found])
        self._run_failed = True
        where = (f" in {found.block}" + (f", port {found.port}" if found.port else "")
                 if found.block else "")
        self.window.statusBar().showMessage(f"Simulation failed{where}: {found.message}")
        shown = "/".join(self.window.canvas.level)
        if found.block and found.block.rpartition("/")[0] != shown:  # on another level:
            self.window.canvas.locate(found.block)  # show it there
            self.refresh_marks()

    def _running(self, running: bool) -> None:
        actions = self.window.actions_
        actions.run.setEnabled(not running)
        actions.stop.setEnabled(running)
        self.window.progress_action.setVisible(running)  # not the widget: see build_menus
        self.window.progress.setValue(0)

    # ----- validate -----
    def validate(self) -> list:
        """Check the diagram; problems go to the diagnostics panel and are outlined."""
        diagram = self.window.doc.diagram
        found = validation.check_diagram(
            diagram, allow_write=sorted(self.allowed_writes.get(diagram.source, ())))
        self._show(found)
        self.window.statusBar().showMessage(
            "No problems found" if not found else f"{len(found)} problem(s) found")
        return found

    def _show(self, found: list, raise_panel: bool = True) -> None:
        self.diagnostics = list(found)
        self._run_failed = False
        if self.diagnostics_panel is not None:
            self.diagnostics_panel.show_diagnostics(self.diagnostics)
            if raise_panel:
                self.window.show_diagnostics()
        self.refresh_marks()

    def refresh_marks(self) -> None:
        """Outline the blocks and wires of the shown level that the diagnostics name, and
        ring the ports they name."""
        scene = self.window.canvas.scene
        level = "/".join(scene.level)
        blocks, wires, ports = set(), set(), {}
        for diag in self.diagnostics:
            if diag.cycle and self.window.doc.has_level(scene.level):
                loop_blocks, loop_wires = cycle_marks(
                    self.window.doc.level(scene.level), scene.level, diag.cycle)
                blocks |= loop_blocks
                wires |= loop_wires
            path = getattr(diag, "block", None) or ""
            parent, _, block_id = path.rpartition("/")
            if not block_id or parent != level:
                continue
            blocks.add(block_id)
            if getattr(diag, "port", None):
                ports.setdefault(block_id, set()).add(diag.port)
            wire = getattr(diag, "wire", None)
            if wire:
                wires.add(wire.replace(" ", ""))
        scene.set_marks(blocks, wires, ports)

    def locate(self, path: str, port: str = "") -> None:
        """Show the block a diagnostic names (opening its subsystem) and select it."""
        if not self.window.canvas.locate(path):
            self.window.statusBar().showMessage(f"'{path}' is not in the diagram any more")
        self.refresh_marks()

    # ----- exports -----
    def export_results(self) -> None:
        if self.scopes is None or getattr(self.scopes, "results", None) is None:
            dialogs.message(self.window, "Export results", "Run the simulation first.")
            return
        path = dialogs.save_path(self.window, "results.csv",
                                 "Results (*.csv *.npz);;All files (*)")
        if path:
            self._export(lambda: self.scopes.export_results(path))

    def export_images(self) -> None:
        if self.scopes is None or not getattr(self.scopes, "views", None):
            dialogs.message(self.window, "Export scope images", "There are no scopes to export.")
            return
        folder = dialogs.folder_path(self.window, "Folder for the scope images")
        if folder:
            self._export(lambda: self.scopes.export_images(folder))

    def _export(self, write) -> None:
        try:
            written = write()
        except Exception as exc:
            dialogs.message(self.window, "Export failed", str(exc))
            return
        count = len(written) if isinstance(written, (list, tuple)) else 1
        self.window.statusBar().showMessage(f"Exported {count} file(s)")



def cycle_marks(diagram: Diagram, level: tuple[str, ...],
                cycle: tuple[tuple[str, str], ...]) -> tuple[set[str], set[str]]:
    """The blocks and wires (as `scene.wire_key`s) of one diagram level that an algebraic
    loop runs through.

    The loop comes in flattened paths ("sub/gain.u"); each end stands for the block of this
    level that contains it. A connection between two blocks of this level marks the wires
    between them (on the named ports where the block is itself at this level: a subsystem's
    own port is not in the flattened path, so every wire between the two is marked). Inside
    a subsystem, a connection that enters from outside marks the Inport wires feeding its
    end, one that leaves marks the wires to Outports (each of them: which port it passes
    is not in the flattened path).
    """
    prefix = "/".join(level) + "/" if level else ""

    def here(end: str) -> tuple[str, str, bool] | None:
        path, _, port = end.rpartition(".")
        if not path.startswith(prefix):
            return None
        block, _, rest = path[len(prefix):].partition("/")
        return block, port, not rest  # the block of this level; its port if it is the end

    types = {blk.id: blk.type for blk in diagram.blocks}

    def matches(ref, end) -> bool:
        if end is None:  # outside this level: through one of its Inports or Outports
            return False
        return ref.block == end[0] and (not end[2] or ref.port == end[1])

    blocks, wires = set(), set()
    for src, dst in cycle:
        a, b = here(src), here(dst)
        for end in (a, b):
            if end is not None:
                blocks.add(end[0])
        if (a is None and b is None) or (a is not None and b is not None and a[0] == b[0]):
            continue
        for wire in diagram.wires:
            enters = a is None and types.get(wire.src.block) == "Inport"
            leaves = b is None and types.get(wire.dst.block) == "Outport"
            if ((enters or matches(wire.src, a)) and (leaves or matches(wire.dst, b))):
                wires.add(f"{wire.src}->{wire.dst}")
                if enters:
                    blocks.add(wire.src.block)
                if leaves:
                    blocks.add(wire.dst.block)
    return blocks, wires
