"""A scope an engineer measures with: several inputs with a legend named after the signals,
y label with units, two cursors read against closed forms, the value under the mouse,
time-only wheel zoom, auto range, XY mode, the previous run kept lighter, and exports of
what is shown. Every tool is driven through the scope's own toolbar or mouse events."""
import csv
import math

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

import blocksim
from blocksim.diagram.examples import examples_dir
from blocksim.gui.scopes.cursors import value_at
from blocksim.gui.scopes.panel import ScopeManager
from blocksim.gui.window import dialogs
from blocksim.diagram.model import Block, Diagram, PortRef, SimulationSettings, Wire

G, X0 = 9.81, 10.0
SIN = 1.0 / (2.0 * math.pi)  # a Sine block's frequency for sin(t)


def ball_without_drag(mu: float = 0.9) -> Diagram:
    """The shipped ball with beta = 0: x = x0 - g t^2 / 2 until the first impact at
    sqrt(2 x0 / g), where v jumps from -g t to +mu g t."""
    diagram = blocksim.load(examples_dir() / "bouncing_ball.json")
    diagram.parameters.update(beta=0.0, mu=mu)
    diagram.simulation.stop = 3.0
    return diagram


def waves() -> Diagram:
    """One Scope with two inputs: cos t on u and the vector (sin t, 2) on u2, units m."""
    blocks = [Block("c", "Sine", {"frequency": SIN, "phase": math.pi / 2}),
              Block("s", "Sine", {"frequency": SIN}), Block("two", "Constant", {"value": 2.0}),
              Block("mux", "Mux"), Block("scope", "Scope", {"inputs": 2, "units": "m"})]
    wires = [("c", "y", "scope", "u"), ("s", "y", "mux", "u1"), ("two", "y", "mux", "u2"),
             ("mux", "y", "scope", "u2")]
    return Diagram(blocks=blocks,
                   wires=[Wire(PortRef(a, p), PortRef(b, q)) for a, p, b, q in wires],
                   simulation=SimulationSettings(stop=7.0, output_interval=0.01, rtol=1e-10,
                                                 atol=1e-10))


@pytest.fixture
def scopes(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    manager = ScopeManager(host)
    layout = QVBoxLayout(host)
    layout.addWidget(manager.scope_area())
    host.resize(1000, 500)
    host.show()
    qtbot.waitExposed(host)
    yield manager


def run(scopes, runner, qtbot, diagram, **params):
    """Attach the scopes, run `diagram` to its end and return the results."""
    scopes.attach(runner, diagram)
    runner.start(diagram, params=params or None)
    qtbot.waitUntil(lambda: not runner.is_running(), timeout=20000)  # finished or failed
    qtbot.wait(50)  # the plots take their new ranges when they paint
    results = scopes.results
    assert results is not None and results.status == "finished", scopes.status.text()
    return results


def wheel(widget, point: QPoint, steps: int, modifiers=Qt.NoModifier) -> None:
    """Turn the mouse wheel `steps` notches (positive: zoom in) over a widget point."""
    event = QWheelEvent(QPointF(point), QPointF(widget.mapToGlobal(point)), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.NoButton, modifiers, Qt.NoScrollPhase,
                        False)
    QApplication.sendEvent(widget, event)


def view_point(view, t: float, y: float) -> QPoint:
    """Where (t, y) of the plot is, in the plot widget's viewport pixels."""
    scene = view.viewbox.mapViewToScene(QPointF(t, y))
    return view.plot.mapFromScene(scene)


def test_several_inputs_with_a_legend_named_after_the_signals_and_units(runner, scopes,
                                                                         qtbot):
    diagram = waves()
    diagram.wires[0].name = "cosine"  # a signal label on the wire into u (issue 13)
    results = run(scopes, runner, qtbot, diagram)
    view = scopes.views["scope"]
    t = results.time
    assert results["scope"].shape == (len(t), 3)  # u, then u2's two elements
    np.testing.assert_allclose(results["scope"][:, 0], np.cos(t), atol=1e-9)
    np.testing.assert_allclose(results["scope"][:, 1], np.sin(t), atol=1e-9)
    assert view.names() == ["cosine", "mux.y[0]", "mux.y[1]"]
    assert len(view.curves) == 3 and view.legend is not None and view.legend.isVisible()
    legend = [label.text for _, label in view.legend.items]
    assert legend == ["cosine", "mux.y[0]", "mux.y[1]"]  # no events, no "event" entry
    left = view.plot.getPlotItem().getAxis("left")
    assert left.labelText == "scope" and left.labelUnits == "m"  # several signals: the id
    for k, curve in enumerate(view.curves):
        np.testing.assert_array_equal(curve.getData()[1], results["scope"][:, k])
    # One signal: the y axis takes its name; the port names come from the declaration.
    single = waves()
    single.block("scope").params = {"units": "rad"}
    single.wires = [w for w in single.wires if str(w.dst) != "scope.u2"]
    run(scopes, runner, qtbot, single)
    left = scopes.views["scope"].plot.getPlotItem().getAxis("left")
    assert (left.labelText, left.labelUnits) == ("c.y", "rad")
    assert not scopes.views["scope"].legend.isVisible()


def test_cursors_read_the_closed_form_and_their_differences(runner, scopes, qtbot):
    results = run(scopes, runner, qtbot, ball_without_drag())
    view = scopes.views["x"]
    QTest.mouseClick(view.tools.widgetForAction(view.tools.cursors), Qt.LeftButton)
    assert view.cursors.shown and view.readout.isVisible()
    t1, t2 = 0.505, 1.2345  # off the 0.01 s output grid: interpolated
    view.cursors.place(t1, t2)
    reading = view.cursor_reading()

    def chord(t):
        """x = x0 - g t^2/2 read on the straight line between the rows around t: below
        the parabola by exactly g/2 (t - ta)(tb - t)."""
        k = np.searchsorted(results.time, t)
        ta, tb = results.time[k - 1], results.time[k]
        return X0 - G * t ** 2 / 2 - G / 2 * (t - ta) * (tb - t)

    assert reading.names == ("ball.x",)
    assert reading.y1[0] == pytest.approx(chord(t1), abs=1e-9)  # the run's rtol is 1e-10
    assert reading.y2[0] == pytest.approx(chord(t2), abs=1e-9)
    assert reading.dt == pytest.approx(t2 - t1, abs=1e-12)
    assert reading.dy[0] == pytest.approx(chord(t2) - chord(t1), abs=2e-9)
    tol = G * 0.01 ** 2 / 8  # the chord's largest distance from the parabola
    text = view.readout.text()
    assert "Δ" in text and f"{t2 - t1:.6g}" in text and f"{reading.dy[0]:.6g}" in text
    # Dragging a cursor with the mouse moves it and updates the readout.
    line = view.cursors.lines[0]
    start = view_point(view, t1, 5.0)
    end = view_point(view, 0.8, 5.0)
    QTest.mousePress(view.plot.viewport(), Qt.LeftButton, Qt.NoModifier, start)
    for k in range(1, 5):
        QTest.mouseMove(view.plot.viewport(), start + (end - start) * (k / 4))
    QTest.mouseRelease(view.plot.viewport(), Qt.LeftButton, Qt.NoModifier, end)
    moved = line.value()
    assert abs(moved - 0.8) < 0.05 and view.cursor_reading().t1 == moved
    assert view.cursor_reading().y1[0] == pytest.approx(X0 - G * moved ** 2 / 2, abs=tol)
    # At the impact instant the velocity cursor reads the right limit: +mu g t, not -g t.
    impact = math.sqrt(2 * X0 / G)
    v = scopes.views["v"]
    v.show_cursors(True)
    rows = np.flatnonzero(results.time == results.events_of("reset")[0].time)
    assert len(rows) == 2  # left and right limit
    v.cursors.place(results.time[rows[0]], 2.0)
    assert v.cursor_reading().y1[0] == pytest.approx(0.9 * G * impact, rel=1e-8)
    QTest.mouseClick(view.tools.widgetForAction(view.tools.cursors), Qt.LeftButton)
    assert not view.cursors.shown and not view.readout.isVisible()


def test_hover_shows_the_value_under_the_mouse(runner, scopes, qtbot):
    run(scopes, runner, qtbot, ball_without_drag())
    view = scopes.views["x"]
    point = view_point(view, 0.7, 3.0)
    move = QMouseEvent(QEvent.MouseMove, QPointF(point),
                       QPointF(view.plot.viewport().mapToGlobal(point)), Qt.NoButton,
                       Qt.NoButton, Qt.NoModifier)
    QApplication.sendEvent(view.plot.viewport(), move)
    qtbot.waitUntil(lambda: view.hover.startswith("t = "), timeout=2000)
    t = view.viewbox.mapSceneToView(view.plot.mapToScene(point)).x()
    assert abs(t - 0.7) < 0.02
    shown = float(view.hint.text().split("ball.x = ")[1])
    assert shown == pytest.approx(X0 - G * t ** 2 / 2, rel=1e-5, abs=G * 0.01 ** 2 / 8)
    QApplication.sendEvent(view.plot.viewport(), QEvent(QEvent.Leave))
    assert view.hover == "" and "wheel" in view.hint.text()


def test_wheel_zooms_time_only_and_auto_range_restores(runner, scopes, qtbot):
    run(scopes, runner, qtbot, ball_without_drag())
    view = scopes.views["x"]
    view.auto_range()
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    middle = view_point(view, 1.5, 5.0)
    wheel(view.plot.viewport(), middle, 3)
    (a0, a1), (b0, b1) = view.viewbox.viewRange()
    assert a1 - a0 < 0.95 * (x1 - x0)  # time zoomed in
    assert view.viewbox.autoRangeEnabled()[1]  # y still follows the visible data
    # Ctrl+wheel zooms y only.
    wheel(view.plot.viewport(), middle, 3, Qt.ControlModifier)
    (c0, c1), (d0, d1) = view.viewbox.viewRange()
    assert (c0, c1) == pytest.approx((a0, a1)) and d1 - d0 < 0.95 * (b1 - b0)
    # The wheel over the y axis zooms y.
    box = view.viewbox.sceneBoundingRect()  # the axis's own rectangle spans its grid too
    over_axis = view.plot.mapFromScene(QPointF(box.left() - 15, box.center().y()))
    wheel(view.plot.viewport(), over_axis, -3)
    (e0, e1), (f0, f1) = view.viewbox.viewRange()
    assert (e0, e1) == pytest.approx((c0, c1)) and f1 - f0 > 1.05 * (d1 - d0)
    QTest.mouseClick(view.tools.widgetForAction(view.tools.auto_range), Qt.LeftButton)
    (g0, g1), (h0, h1) = view.viewbox.viewRange()
    assert g0 <= 0.0 and g1 >= 3.0 and h0 <= 0.0 and h1 >= X0


def test_xy_mode_plots_one_signal_against_another(runner, scopes, qtbot):
    results = run(scopes, runner, qtbot, waves())
    view = scopes.views["scope"]
    tools = view.tools
    assert tools.xy.isEnabled()
    QTest.mouseClick(tools.widgetForAction(tools.xy), Qt.LeftButton)
    assert tools.xy.isChecked() and view.x_source == 0
    assert len(view.curves) == 2  # sin t and 2 against cos t
    x, y = view.curves[0].getData()
    np.testing.assert_array_equal(x, results["scope"][:, 0])
    np.testing.assert_array_equal(y, results["scope"][:, 1])
    assert np.allclose(x ** 2 + y ** 2, 1.0, atol=1e-8)  # a circle: not against time
    assert view.plot.getPlotItem().getAxis("bottom").labelText == "c.y"
    assert not tools.cursors.isEnabled() and not view.cursors.shown
    tools.x_choice.setCurrentIndex(1)  # sin t on x
    assert view.plot.getPlotItem().getAxis("bottom").labelText == "mux.y[0]"
    x, y = view.curves[0].getData()
    np.testing.assert_array_equal(x, results["scope"][:, 1])
    np.testing.assert_array_equal(y, results["scope"][:, 0])
    QTest.mouseClick(tools.widgetForAction(tools.xy), Qt.LeftButton)
    assert view.x_source is None and len(view.curves) == 3
    np.testing.assert_array_equal(view.curves[0].getData()[0], results.time)


def test_equal_scale_in_xy_mode_draws_a_unit_as_long_on_both_axes(runner, scopes, qtbot):
    run(scopes, runner, qtbot, waves())
    view = scopes.views["scope"]
    tools = view.tools
    assert not tools.equal.isVisible()  # against time it means nothing
    QTest.mouseClick(tools.widgetForAction(tools.xy), Qt.LeftButton)
    assert tools.equal.isVisible()
    QTest.mouseClick(tools.widgetForAction(tools.equal), Qt.LeftButton)
    QApplication.processEvents()
    x_size, y_size = view.viewbox.viewPixelSize()  # data units per pixel on each axis
    assert x_size == pytest.approx(y_size, rel=1e-6)
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    assert x0 <= -1.0 and x1 >= 1.0 and y0 <= -1.0 and y1 >= 1.0  # the whole circle shows
    QTest.mouseClick(tools.widgetForAction(tools.xy), Qt.LeftButton)  # back to time
    assert not tools.equal.isChecked() and not view.viewbox.state["aspectLocked"]


def test_keep_previous_run_draws_it_lighter(runner, scopes, qtbot):
    first = run(scopes, runner, qtbot, ball_without_drag(mu=0.9))
    view = scopes.views["v"]
    QTest.mouseClick(view.tools.widgetForAction(view.tools.keep), Qt.LeftButton)
    assert view.keep_previous
    second = run(scopes, runner, qtbot, ball_without_drag(), mu=0.7)
    assert scopes.views["v"] is view  # the same scope, kept across runs
    assert len(view.previous_curves) == 1
    t, v = view.previous_curves[0].getData()
    np.testing.assert_array_equal(t, first.time)
    np.testing.assert_array_equal(v, first["v"])
    np.testing.assert_array_equal(view.curves[0].getData()[1], second["v"])
    # After the first impact the runs part: the rebound speed is mu g t_impact.
    impact = math.sqrt(2 * X0 / G)
    after = first.time > impact + 1e-3
    assert first["v"][after][0] > second["v"][after][0]
    assert np.max(second["v"]) == pytest.approx(0.7 * G * impact, rel=1e-8)
    pen = view.previous_curves[0].opts["pen"]
    assert pen.color().alpha() < 128 and view.curves[0].opts["pen"].color().alpha() == 255
    assert [label.text for _, label in view.legend.items][-2:] == ["previous run", "event"]
    QTest.mouseClick(view.tools.widgetForAction(view.tools.keep), Qt.LeftButton)
    assert view.previous_curves == []


def test_exports_of_what_is_shown(runner, scopes, qtbot, tmp_path, monkeypatch):
    results = run(scopes, runner, qtbot, waves())
    view = scopes.views["scope"]
    view.viewbox.setXRange(1.0, 2.0, padding=0)
    view.curves[2].setVisible(False)  # as a click on its legend entry does
    answers = iter([str(tmp_path / "shown.csv"), str(tmp_path / "plot.png"),
                    str(tmp_path / "plot.svg")])
    monkeypatch.setattr(dialogs, "save_path", lambda parent, name, filters: next(answers))
    for action in (view.tools.export_csv, view.tools.export_png, view.tools.export_svg):
        action.trigger()
    rows = list(csv.reader((tmp_path / "shown.csv").open()))
    assert rows[0] == ["time", "c.y", "mux.y[0]"]  # the hidden curve is not exported
    table = np.array(rows[1:], dtype=float)
    inside = (results.time >= 1.0) & (results.time <= 2.0)
    np.testing.assert_array_equal(table[:, 0], results.time[inside])
    np.testing.assert_array_equal(table[:, 1:], results["scope"][inside][:, :2])
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "plot.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "<path" in svg
    # A folder that does not exist: the message names the file, nothing is written.
    messages = []
    monkeypatch.setattr(dialogs, "message", lambda parent, title, text: messages.append(text))
    monkeypatch.setattr(dialogs, "save_path",
                        lambda parent, name, filters: str(tmp_path / "no" / "x.csv"))
    view.tools.export_csv.trigger()
    assert messages and "x.csv" in messages[0] and not (tmp_path / "no").exists()


def test_side_by_side_shows_every_scope_at_once(runner, scopes, qtbot):
    run(scopes, runner, qtbot, ball_without_drag())
    QTest.mouseClick(scopes.side_by_side, Qt.LeftButton)
    assert scopes.tiles.isVisible() and not scopes.tabs.isVisible()
    assert all(view.isVisible() for view in scopes.views.values())
    QTest.mouseClick(scopes.side_by_side, Qt.LeftButton)
    assert scopes.tabs.count() == 2 and scopes.tabs.isVisible()


def test_value_at_interpolates_and_reads_right_limits():
    time = np.array([0.0, 1.0, 1.0, 2.0])
    column = np.array([0.0, 1.0, 5.0, 7.0])  # a jump from 1 to 5 at t = 1
    assert value_at(time, column, 0.25) == 0.25
    assert value_at(time, column, 1.0) == 5.0  # the right limit
    assert value_at(time, column, 1.5) == 6.0
    assert value_at(time, column, 2.0) == 7.0
    assert math.isnan(value_at(time, column, 2.5)) and math.isnan(value_at(time, column, -1))
