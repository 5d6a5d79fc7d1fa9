"""The scopes: one live plot per Scope or XYGraph block of a diagram (subsystems included,
named by the path the compiler logs them under), fed by a SimulationRunner, plus exports
and the history of the last few runs that the Data Inspector lists.

A diagram with no Scope or XYGraph but with Output blocks gets one plot per Output block
instead, and the header says so: a Run always shows something where the user looks (9 of
the 20 examples log their signals with Output blocks only).

The views live in `scope_area()`, a widget the editor core puts in a dock: as tabs, or side
by side ("Side by side" in its header) to read two scopes at once.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QTabWidget, QToolButton, QVBoxLayout, QWidget

from blocksim.engine import Results
from blocksim.gui.panels.forms import muted_label
from blocksim.gui.scopes.history import RunHistory, RunRecord
from blocksim.gui.scopes.plot import ScopeView, event_instants
from blocksim.gui.scopes.runner import SimulationRunner, Snapshot
from blocksim.gui.scopes.tools import file_stem
from blocksim.gui.scopes.traces import ScopeTraces, scope_traces
from blocksim.gui.scopes.xy_plot import XYView
from blocksim.diagram.model import Diagram

log = logging.getLogger(__name__)

SCOPE_TYPE = "Scope"
XY_TYPE = "XYGraph"  # plotted as y against x
OUTPUT_TYPE = "Output"  # plotted as a Scope when the diagram has no Scope or XYGraph
VIEWS = {SCOPE_TYPE: ScopeView, XY_TYPE: XYView, OUTPUT_TYPE: ScopeView}
_NO_SCOPES = ("Nothing to plot: this diagram has no Scope or Output blocks. Add a Scope to "
              "plot a signal while the simulation runs.")
OUTPUTS_NOTE = "no Scope blocks: plotting the Output blocks"
_NOT_RUN = "Not run yet: Run the simulation to plot this diagram's scopes."


def blocks_of(diagram: Diagram, types: tuple[str, ...], prefix: str = "") -> dict[str, str]:
    """{path: type} of every block of those types, in diagram order; "sub/scope" inside
    subsystem "sub"."""
    found: dict[str, str] = {}
    for blk in diagram.blocks:
        if blk.type in types:
            found[prefix + blk.id] = blk.type
        elif blk.subsystem is not None:
            found.update(blocks_of(blk.subsystem, types, f"{prefix}{blk.id}/"))
    return found


def plotted_blocks(diagram: Diagram, prefix: str = "") -> dict[str, str]:
    """{path: type} of the blocks a run plots: every Scope and XYGraph block, or, in a
    diagram with none, every Output block."""
    return (blocks_of(diagram, (SCOPE_TYPE, XY_TYPE), prefix)
            or blocks_of(diagram, (OUTPUT_TYPE,), prefix))


def scope_paths(diagram: Diagram, prefix: str = "") -> list[str]:
    """Paths of every plotted block (Scope, XYGraph), in diagram order."""
    return list(plotted_blocks(diagram, prefix))


def diagram_name(diagram: Diagram | None) -> str:
    """How a run names its diagram: the file's stem (an example opened as an untitled copy
    keeps its example's file, so "bouncing_ball"), or "untitled"."""
    path = getattr(diagram, "path", None)
    return Path(path).stem if path else "untitled"


def column_labels(traces: dict[str, ScopeTraces]) -> dict[str, str]:
    """{results column name: signal label} for the logged signals with known labels."""
    labels = {}
    for path, trace in traces.items():
        if len(trace.labels) == 1:
            labels[path] = trace.labels[0]
        else:
            labels.update({f"{path}[{k}]": label for k, label in enumerate(trace.labels)})
    return labels


class ScopeManager(QObject):
    """Opens the scope views of a diagram and keeps them up to date during a run."""

    runRecorded = Signal(object)  # a RunRecord, when a run has ended (see history)

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self._area = QWidget(parent)
        self.status = muted_label("", self._area)
        self.side_by_side = QToolButton(self._area)
        self.side_by_side.setText("Side by side")
        self.side_by_side.setCheckable(True)
        self.side_by_side.setToolTip("Show every scope at once instead of as tabs")
        self.side_by_side.toggled.connect(self._tiling_toggled)
        self.tabs = QTabWidget(self._area)
        self.tabs.setDocumentMode(True)
        self.tiles = QSplitter(Qt.Horizontal, self._area)
        self.tiles.setChildrenCollapsible(False)
        self.placeholder = muted_label(_NOT_RUN, self._area)
        header = QHBoxLayout()
        header.addWidget(self.status, 1)
        header.addWidget(self.side_by_side)
        layout = QVBoxLayout(self._area)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(header)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.tiles, 1)
        layout.addWidget(self.placeholder)
        self.views: dict[str, ScopeView] = {}
        self.results: Results | None = None  # the last complete or partial results
        self.history = RunHistory()
        self.traces: dict[str, ScopeTraces] = {}  # signal labels of the run being shown
        self._diagram: Diagram | None = None
        self._params: dict = {}
        self._latest: Snapshot | Results | None = None
        self._runner: SimulationRunner | None = None
        self._note = ""  # what the header says first (that Output blocks are plotted)
        self._show_placeholder()

    def clear(self) -> None:
        """Forget the plots and results of the previous diagram (New, Open, an example): a
        different diagram must not show another one's curves. The views come back on the
        next Run (`attach`); a run still going is no longer followed."""
        if self._runner is not None:
            for signal, slot in self._connections():
                signal.disconnect(slot)
            self._runner = None
        self._drop_views()
        self.results, self._latest = None, None
        self.traces, self._diagram, self._note = {}, None, ""
        self.history.forget_parameters()  # run titles do not compare different diagrams
        self.status.setText("")
        self.placeholder.setText(_NOT_RUN)
        self._show_placeholder()

    def _drop_views(self) -> None:
        self.tabs.clear()
        for view in self.views.values():
            view.setParent(None)
            view.deleteLater()
        self.views = {}

    def scope_area(self) -> QWidget:
        """The widget holding the views (tabs, one per scope)."""
        return self._area

    def attach(self, runner: SimulationRunner, diagram: Diagram) -> list[str]:
        """Show the scopes of `diagram` and follow `runner`'s next run; returns their paths."""
        if self._runner is not None and self._runner is not runner:
            for signal, slot in self._connections():
                signal.disconnect(slot)
        if self._runner is not runner:
            self._runner = runner
            for signal, slot in self._connections():
                signal.connect(slot)
        kinds = plotted_blocks(diagram)
        paths = list(kinds)
        shown = [(path, type(view)) for path, view in self.views.items()]
        if shown != [(path, VIEWS[kind]) for path, kind in kinds.items()]:
            # keep views (and their zoom, cursors, modes) across runs when unchanged
            self._drop_views()
            for path in paths:
                self.views[path] = VIEWS[kinds[path]](path, self.tabs)
            self._place_views()
        self.results, self._latest = None, None
        self._diagram, self._params = diagram, dict(diagram.parameters)
        self.traces = {}
        for view in self.views.values():
            view.clear()
        self.placeholder.setText(_NO_SCOPES)
        self._show_placeholder()
        self._note = (OUTPUTS_NOTE + " · " if set(kinds.values()) == {OUTPUT_TYPE} else "")
        self.status.setText(self._note.removesuffix(" · "))
        return paths

    def scope_data(self, block_id: str) -> tuple[np.ndarray, np.ndarray]:
        """(time, values) the scope of this path shows (KeyError if there is none)."""
        return self.views[block_id].data()

    def export_results(self, path: str | Path) -> list[Path]:
        """Write the results (.csv or .npz) and the event log as `<stem>_events.csv` beside
        them; returns the files written."""
        if self.results is None:
            raise ValueError("there are no results to export yet: run the simulation first")
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".csv":
            self.results.to_csv(target)
        elif suffix == ".npz":
            self.results.to_npz(target)
        else:
            raise ValueError(f"cannot export results as '{target.suffix}': use .csv or .npz")
        events = target.with_name(f"{target.stem}_events.csv")
        self.results.events_to_csv(events)
        log.info("exported results to %s and %s", target, events)
        return [target, events]

    def export_images(self, folder: str | Path) -> list[Path]:
        """Write one PNG per scope into `folder` (created if needed); returns the files."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for path, view in self.views.items():
            file = out / (file_stem(path) + ".png")
            view.export_png(str(file))
            written.append(file)
        log.info("exported %d scope images to %s", len(written), out)
        return written

    # ----- from the runner -----
    def _connections(self):
        runner = self._runner
        return [(runner.snapshot, self._on_snapshot), (runner.finished, self._on_finished),
                (runner.failed, self._on_failed), (runner.compiled, self._on_compiled)]

    def _on_compiled(self, drivers: dict[str, tuple[str, ...]]) -> None:
        """Name every logged signal's curves after the signals that feed them."""
        if self._diagram is None:
            return
        self.traces = {path: scope_traces(self._diagram, path, names)
                       for path, names in drivers.items()}
        for path, view in self.views.items():
            if path in self.traces:
                view.set_traces(self.traces[path])

    def _record(self, results: Results) -> RunRecord:
        record = self.history.add(results, self._params, column_labels(self.traces),
                                  diagram_name(self._diagram))
        self.runRecorded.emit(record)
        return record

    def _on_snapshot(self, snap: Snapshot) -> None:
        self._show(snap, f"running: {snap.progress:.0%}")

    def _on_finished(self, results: Results) -> None:
        self.results = results
        self._record(results)
        self._show(results, results.status if results.status != "stopped" else
                   f"stopped ({results.message})" if results.message else "stopped")

    def _on_failed(self, message: str, partial: Results | None) -> None:
        if partial is not None:
            self.results = partial
            self._record(partial)
            self._show(partial, f"failed: {message}")
        else:
            self.status.setText(f"{self._note}failed: {message}")

    def _show(self, data: Snapshot | Results, state: str) -> None:
        self._latest = data
        for path, view in self.views.items():
            values = data.signals.get(path)
            if values is None:
                continue
            view.set_data(data.time, values, data.events)
        end = f"t = {data.time[-1]:.6g} s" if len(data.time) else "t = -"
        self.status.setText(f"{self._note}{state} · {end} · "
                            f"{len(event_instants(data.events))} event instants")

    def _tiling_toggled(self, _on: bool) -> None:
        self._place_views()

    def _place_views(self) -> None:
        """The views as tabs, or side by side in a splitter."""
        tiled = self.side_by_side.isChecked()
        current = self.tabs.currentIndex()
        self.tabs.clear()
        for path, view in self.views.items():
            if tiled:
                self.tiles.addWidget(view)
            else:
                self.tabs.addTab(view, path)
            view.show_title(tiled)
            if tiled:  # a tab's page is shown by its tab widget only when it is current
                view.show()
        if tiled and self.views:
            self.tiles.setSizes([1000] * len(self.views))
        elif current >= 0:
            self.tabs.setCurrentIndex(min(current, self.tabs.count() - 1))
        self._show_placeholder()

    def _show_placeholder(self) -> None:
        tiled = self.side_by_side.isChecked()
        self.placeholder.setVisible(not self.views)
        self.tabs.setVisible(bool(self.views) and not tiled)
        self.tiles.setVisible(bool(self.views) and tiled)
