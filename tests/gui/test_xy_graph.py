"""The XYGraph block in the editor: a run fills an XY plot with y against x, the logged
(x, y) columns of the results, event instants marked on the curve."""
import math

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from PySide6.QtWidgets import QWidget

from blocksim.gui.scopes.plot import ScopeView, event_instants
from blocksim.gui.scopes.panel import ScopeManager, scope_paths
from blocksim.gui.scopes.xy_plot import XYView
from blocksim.diagram.model import Block, Diagram, PortRef, SimulationSettings, Wire

SIN = 1.0 / (2.0 * math.pi)  # a Sine block's frequency for sin(t)


def circle_and_wrap() -> Diagram:
    """(cos t, sin t) in XYGraph "circle"; sin t wrapped to 0 above 0.5 against t in XYGraph
    "wrap" (its jumps are events); sin t also in a Scope."""
    blocks = [Block("s", "Sine", {"frequency": SIN}),
              Block("c", "Sine", {"frequency": SIN, "phase": math.pi / 2}),
              Block("clock", "Clock"), Block("w", "WrapToZero", {"threshold": 0.5}),
              Block("watch", "Integrator"),
              Block("circle", "XYGraph"), Block("wrap", "XYGraph"), Block("sine", "Scope")]
    wires = [("c", "y", "circle", "x"), ("s", "y", "circle", "y"), ("s", "y", "w", "u"),
             ("clock", "y", "wrap", "x"), ("w", "y", "wrap", "y"), ("s", "y", "sine", "u"),
             ("s", "y", "watch", "u")]
    return Diagram(blocks=blocks,
                   wires=[Wire(PortRef(a, p), PortRef(b, q)) for a, p, b, q in wires],
                   simulation=SimulationSettings(stop=7.0, output_interval=0.01, rtol=1e-10,
                                                 atol=1e-10))


@pytest.fixture
def scopes(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    manager = ScopeManager(host)
    manager.scope_area().resize(800, 500)
    manager.scope_area().show()
    yield manager


def test_a_run_draws_y_against_x_in_an_xy_plot(runner, scopes, qtbot):
    diagram = circle_and_wrap()
    assert scopes.attach(runner, diagram) == ["circle", "wrap", "sine"]
    assert scope_paths(diagram) == ["circle", "wrap", "sine"]
    assert isinstance(scopes.views["circle"], XYView)
    assert type(scopes.views["sine"]) is ScopeView
    with qtbot.waitSignal(runner.finished, timeout=20000) as blocker:
        runner.start(diagram)
    results = blocker.args[0]
    assert results.status == "finished" and results.time[-1] == 7.0
    t = results.time
    # The logged signal: x then y, as columns circle[0], circle[1].
    assert results["circle"].shape == (len(t), 2)
    np.testing.assert_allclose(results["circle"], np.column_stack([np.cos(t), np.sin(t)]),
                               atol=1e-15)
    view = scopes.views["circle"]
    x, y = view.curve_data()
    np.testing.assert_array_equal(x, results["circle"][:, 0])
    np.testing.assert_array_equal(y, results["circle"][:, 1])
    assert np.allclose(x ** 2 + y ** 2, 1.0)  # a circle: y against x, not against time
    # The axes are named after the signals drawn on them: cosine "c" on x, sine "s" on y.
    assert view.plot.getPlotItem().getAxis("bottom").labelText == "c.y"
    assert view.plot.getPlotItem().getAxis("left").labelText == "s.y"
    # Always y against x: Equal scale offered from the start, and it keeps the circle round.
    assert view.tools.equal.isVisible()
    view.tools.equal.trigger()
    assert view.viewbox.state["aspectLocked"] == 1.0  # (drawn: tests/gui/test_scope_tools.py)
    # The wrapped sine: its jumps are located events, marked on the XY curve at the left
    # limit: 0.5 where u rises past the threshold (about to become 0), 0 where it falls
    # back (about to become 0.5).
    wrap = scopes.views["wrap"]
    instants = event_instants(results.events)
    jumps = sorted([math.asin(0.5), math.pi - math.asin(0.5), 2 * math.pi + math.asin(0.5)])
    assert all(np.min(np.abs(instants - j)) < 1e-12 for j in jumps)
    mx, my = wrap.markers[0].getData()
    at_jump = np.isin(np.round(mx, 9), np.round(jumps, 9))
    assert at_jump.sum() == 3
    np.testing.assert_allclose(my[at_jump], [0.5, 0.0, 0.5], atol=1e-12)
    wx, wy = wrap.curve_data()
    np.testing.assert_array_equal(wx, t)
    np.testing.assert_array_equal(wy, results["wrap"][:, 1])
    assert np.all(wy[(np.sin(t) > 0.5 + 1e-9)] == 0.0)


def test_xy_graph_views_replace_scope_views_when_the_block_type_changes(runner, scopes):
    diagram = circle_and_wrap()
    scopes.attach(runner, diagram)
    diagram.block("circle").type = "Scope"
    diagram.wires = [w for w in diagram.wires if w.dst.block != "circle" or w.dst.port == "x"]
    for w in diagram.wires:
        if w.dst.block == "circle":
            w.dst = PortRef("circle", "u")
    scopes.attach(runner, diagram)
    assert type(scopes.views["circle"]) is ScopeView
