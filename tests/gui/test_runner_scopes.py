"""The simulation runner (a worker thread with progress, snapshots, Stop) and the scopes."""
import csv
import time

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

import pyqtgraph.exporters
from PySide6.QtCore import QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

import blocksim
from blocksim.diagram.examples import examples_dir
from blocksim.gui.scopes.runner import Snapshot
from blocksim.gui.scopes.plot import event_instants
from blocksim.gui.scopes.panel import ScopeManager, scope_paths
from blocksim.diagram.model import Block, Diagram, PortRef, SimulationSettings, Wire

BALL = examples_dir() / "bouncing_ball.json"


def ball_with_scopes(stop: float) -> Diagram:
    """The bouncing ball with its height in Scope "x" and (x, v) in a vector Scope inside a
    subsystem, so that scope's path is "monitor/state"."""
    diagram = blocksim.load(BALL)
    diagram.simulation.stop = stop
    diagram.block("x").type = "Scope"
    diagram.block("v").type = "Output"  # logged, not plotted
    monitor = Diagram(
        blocks=[Block("x_in", "Inport", {"index": 1}), Block("v_in", "Inport", {"index": 2}),
                Block("xv", "Mux"), Block("state", "Scope")],
        wires=[Wire(PortRef("x_in", "y"), PortRef("xv", "u1")),
               Wire(PortRef("v_in", "y"), PortRef("xv", "u2")),
               Wire(PortRef("xv", "y"), PortRef("state", "u"))])
    diagram.blocks.append(Block("monitor", "Subsystem", subsystem=monitor))
    diagram.wires += [Wire(PortRef("ball", "x"), PortRef("monitor", "x_in")),
                      Wire(PortRef("ball", "dx"), PortRef("monitor", "v_in"))]
    return diagram


def endless_sine() -> Diagram:
    """A run with no events at all, far too long to finish during a test (and within the
    results budget: 1e7 rows)."""
    return Diagram(blocks=[Block("wave", "Sine"), Block("scope", "Scope")],
                   wires=[Wire(PortRef("wave", "y"), PortRef("scope", "u"))],
                   simulation=SimulationSettings(stop=1e5, output_interval=0.01))


@pytest.fixture
def scopes(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    manager = ScopeManager(host)
    manager.scope_area().resize(800, 500)
    manager.scope_area().show()
    yield manager  # while `host` (its parent) lives


class Recording:
    """Everything a runner emits, plus proof that the GUI thread's event loop ran."""

    def __init__(self, runner):
        self.progress, self.snapshots, self.ticks = [], [], 0
        runner.progressChanged.connect(self.progress.append)
        runner.snapshot.connect(self.snapshots.append)
        self.timer = QTimer()
        self.timer.timeout.connect(self._tick)
        self.timer.start(5)

    def _tick(self):
        self.ticks += 1


def test_run_in_worker_thread_with_progress_snapshots_and_scopes(runner, scopes, qtbot):
    diagram = ball_with_scopes(stop=30)
    assert scopes.attach(runner, diagram) == ["x", "monitor/state"]
    seen = Recording(runner)
    began = time.perf_counter()
    with qtbot.waitSignal(runner.finished, timeout=20000) as blocker:
        runner.start(diagram, settings=diagram.simulation.replaced(stop=6))
        assert time.perf_counter() - began < 0.5 and runner.is_running()
    results = blocker.args[0]
    assert results.status == "finished" and results.time[-1] == 6 and not runner.is_running()
    assert seen.ticks > 0  # the event loop stayed alive while the worker ran
    assert seen.progress and all(0 <= p <= 1 for p in seen.progress)
    assert seen.progress[-1] == 1.0 and seen.progress == sorted(seen.progress)
    assert seen.snapshots and isinstance(seen.snapshots[0], Snapshot)
    last = seen.snapshots[-1]
    np.testing.assert_array_equal(last.time, results.time)
    np.testing.assert_array_equal(last.columns["monitor/state[1]"], results["monitor/state"][:, 1])
    t, x = scopes.scope_data("x")
    np.testing.assert_array_equal(t, results.time)
    np.testing.assert_array_equal(x, results["x"])
    t, xv = scopes.scope_data("monitor/state")
    assert xv.shape == (len(results.time), 2)
    np.testing.assert_array_equal(xv, results["monitor/state"])
    view = scopes.views["monitor/state"]
    assert view.legend is not None and len(view.curves) == 2
    instants = event_instants(results.events)
    assert len(instants) >= 4  # two impacts, two apexes (|v| has a crossing)
    marked_t, marked_x = view.markers[0].getData()
    np.testing.assert_array_equal(marked_t, instants)
    impacts = [e.time for e in results.events_of("reset")]
    assert np.all(marked_x[np.isin(marked_t, impacts)] < 1e-6)  # the ball is on the floor


def test_stop_ends_a_long_run_with_partial_results(runner, scopes, qtbot):
    scopes.attach(runner, endless_sine())
    seen = Recording(runner)
    runner.start(endless_sine())
    qtbot.waitUntil(lambda: bool(seen.snapshots) and len(seen.snapshots[-1].time) > 10,
                    timeout=5000)
    began = time.perf_counter()
    with qtbot.waitSignal(runner.finished, timeout=5000) as blocker:
        runner.stop()
    assert time.perf_counter() - began < 2
    results = blocker.args[0]
    assert results.status == "stopped" and 0 < results.time[-1] < 1e7
    assert results.events[-1].kind == "interrupted"
    # Stopped long before the end; how far it got depends on the machine (0.0115 once).
    assert seen.ticks > 0 and seen.progress[-1] < 0.5
    t, y = scopes.scope_data("scope")
    np.testing.assert_array_equal(t, results.time)
    np.testing.assert_array_equal(y, results["scope"])
    assert "stopped" in scopes.status.text()


def test_stop_a_run_full_of_events(runner, qtbot):
    diagram = Diagram(blocks=[Block("pulse", "Pulse", {"period": 0.01}), Block("scope", "Scope")],
                      wires=[Wire(PortRef("pulse", "y"), PortRef("scope", "u"))],
                      # 4e5 events: within the event budget, minutes of work
                      simulation=SimulationSettings(stop=2e3, output_interval=0.05))
    seen = Recording(runner)
    runner.start(diagram)
    qtbot.waitUntil(lambda: bool(seen.snapshots) and len(seen.snapshots[-1].events) > 10,
                    timeout=5000)
    with qtbot.waitSignal(runner.finished, timeout=5000) as blocker:
        runner.stop()
    results = blocker.args[0]
    assert results.status == "stopped" and results.time[-1] < 1e3
    assert results.events[-1].kind == "interrupted" and len(results.events) > 10


def test_compile_error_arrives_through_failed(runner, qtbot):
    diagram = blocksim.load(BALL)
    diagram.wires = [w for w in diagram.wires if str(w.dst) != "drag.u"]
    with qtbot.assertNotEmitted(runner.finished), \
            qtbot.waitSignal(runner.failed, timeout=5000) as blocker:
        runner.start(diagram)
    message, partial = blocker.args
    assert "block 'drag' port 'u'" in message and "not connected" in message
    assert partial is None and not runner.is_running()


def test_a_failed_run_delivers_its_partial_results(runner, scopes, qtbot):
    diagram = Diagram(blocks=[Block("t", "Clock"), Block("f", "Expression",
                                                         {"formula": "log(1 - u)"}),
                              Block("scope", "Scope")],
                      wires=[Wire(PortRef("t", "y"), PortRef("f", "u")),
                             Wire(PortRef("f", "y"), PortRef("scope", "u"))],
                      simulation=SimulationSettings(stop=2, output_interval=0.01))
    scopes.attach(runner, diagram)
    with qtbot.waitSignal(runner.failed, timeout=5000) as blocker:
        runner.start(diagram)
    message, partial = blocker.args
    assert "block 'f'" in message
    assert partial is not None and partial.status == "failed" and partial.time[-1] < 2
    np.testing.assert_array_equal(scopes.scope_data("scope")[1], partial["scope"])


def test_exports(runner, scopes, qtbot, tmp_path, monkeypatch):
    diagram = ball_with_scopes(stop=3)
    scopes.attach(runner, diagram)
    with pytest.raises(ValueError, match="no results"):
        scopes.export_results(tmp_path / "r.csv")
    with qtbot.waitSignal(runner.finished, timeout=10000) as blocker:
        runner.start(diagram)
    results = blocker.args[0]
    csv_file, events_file = scopes.export_results(tmp_path / "r.csv")
    header = next(csv.reader(csv_file.open()))
    assert header == ["time", "x", "v", "monitor/state[0]", "monitor/state[1]"]
    rows = list(csv.reader(events_file.open()))
    assert rows[0] == ["time", "block", "kind"] and len(rows) == len(results.events) + 1
    npz_file, _ = scopes.export_results(tmp_path / "r.npz")
    assert np.load(npz_file)["time"].shape == results.time.shape
    with pytest.raises(ValueError, match=".txt"):
        scopes.export_results(tmp_path / "r.txt")
    images = scopes.export_images(tmp_path / "png")
    assert [p.name for p in images] == ["x.png", "monitor_state.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in images)
    # a plot that cannot be drawn keeps the old picture and names the file
    before = images[0].read_bytes()
    with monkeypatch.context() as patch:
        patch.setattr(pyqtgraph.exporters.ImageExporter, "export",
                      lambda self, *a, **k: QImage())
        with pytest.raises(OSError, match="x.png"):
            scopes.export_images(tmp_path / "png")
    assert images[0].read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == ["monitor_state.png",
                                                                    "x.png"]


def test_scope_paths_and_placeholder(scopes, runner):
    assert scope_paths(ball_with_scopes(1)) == ["x", "monitor/state"]  # its Output v is not
    nothing = Diagram(blocks=[Block("wave", "Sine")])
    assert scopes.attach(runner, nothing) == []
    assert not scopes.placeholder.isHidden() and scopes.tabs.isHidden()
    assert "no Scope or Output blocks" in scopes.placeholder.text()


def test_a_diagram_without_scopes_plots_its_output_blocks(scopes, runner, qtbot):
    """No Scope, no XYGraph: each Output block (subsystems included) is plotted as a Scope
    would be, live, and the header says why."""
    diagram = ball_with_scopes(stop=2)
    for path in ("x", "monitor"):
        if path == "monitor":
            diagram.block(path).subsystem.block("state").type = "Output"
        else:
            diagram.block(path).type = "Output"
    assert scopes.attach(runner, diagram) == ["x", "v", "monitor/state"]
    assert scopes.placeholder.isHidden() and scopes.tabs.count() == 3
    assert scopes.status.text() == "no Scope blocks: plotting the Output blocks"
    with qtbot.waitSignal(runner.finished, timeout=20000) as blocker:
        runner.start(diagram)
    results = blocker.args[0]
    for path in ("x", "v", "monitor/state"):
        t, values = scopes.scope_data(path)
        np.testing.assert_array_equal(t, results.time)
        np.testing.assert_array_equal(values, results[path])
    assert scopes.status.text().startswith("no Scope blocks: plotting the Output blocks · "
                                           "finished · t = 2 s")
    with pytest.raises(RuntimeError, match="already running"):
        runner.start(endless_sine())
        runner.start(endless_sine())
