"""The Data Inspector in the editor: every run's logged signals listed per run, ticked on to
plot two runs of the bouncing ball together (mu 0.9, then 0.7), the oldest run dropped
after five; and the run history and signal names underneath it (plain Python)."""
import shutil

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from blocksim.engine import Results
from blocksim.diagram.examples import examples_dir
from blocksim.gui.document.commands import SetDiagramParameters
from blocksim.gui.scopes.data_inspector import DataInspector
from blocksim.gui.scopes.history import RunHistory, changed_parameters, distinguishing
from blocksim.gui.scopes.traces import logged_drivers, scope_traces
from blocksim.diagram.model import Block, Diagram, PortRef, Wire

from editor_helpers import run_in_editor


@pytest.fixture
def ball_window(qtbot, tmp_path, env):
    from blocksim.gui.window import app

    path = tmp_path / "ball.json"
    shutil.copy(examples_dir() / "bouncing_ball.json", path)
    window = app.create_window(str(path))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def set_mu(window, mu: float) -> None:
    """The command the Diagram panel pushes when a parameter is edited."""
    params = dict(window.doc.diagram.parameters, mu=mu)
    window.doc.push(SetDiagramParameters(window.doc, (), params))


def test_two_runs_compared_in_the_data_inspector(ball_window, qtbot):
    window = ball_window
    docks = window.panels.docks
    assert not docks["data_inspector"].isVisible()  # until asked for
    window.actions_.data_inspector.trigger()  # Simulation > Data Inspector
    inspector = window.panels.data_inspector
    assert docks["data_inspector"].isVisible() and inspector.plot is not None
    assert docks["scopes"] in window.tabifiedDockWidgets(docks["data_inspector"])
    assert inspector.hint.isVisible() and inspector.tree.topLevelItemCount() == 0
    first = run_in_editor(window, qtbot)
    set_mu(window, 0.7)
    second = run_in_editor(window, qtbot)
    tree = inspector.tree
    assert tree.topLevelItemCount() == 2
    newest, oldest = tree.topLevelItem(0), tree.topLevelItem(1)
    # the diagram, and what changed since run 1
    assert newest.text(0).startswith("Run 2: ball · mu = 0.7")
    assert oldest.text(0).startswith("Run 1: ball") and "mu" not in oldest.text(0)
    assert newest.isExpanded() and not oldest.isExpanded()
    assert inspector.hint.isVisible() and "Tick" in inspector.hint.text()
    names = [newest.child(k).text(0) for k in range(newest.childCount())]
    assert names == ["x  (ball.x)", "v  (ball.dx)"]  # logged id, and the signal feeding it
    # Tick x of run 2 with the mouse on its check box, and x of run 1 as a click would.
    # The list stays where it is under the pointer while boxes are ticked and unticked
    # (once the layout has settled: a hidden hint line moved it up a row).
    def click_and_settle(point):
        QTest.mouseClick(tree.viewport(), Qt.LeftButton, Qt.NoModifier, point)
        qtbot.wait(30)  # the posted layout requests run

    def list_at():
        return tree.viewport().mapTo(window, tree.viewport().rect().topLeft())

    item = newest.child(0)
    where = list_at()
    rect = tree.visualItemRect(item)
    box = rect.topLeft() + type(rect.topLeft())(tree.indentation() // 2 + 6, rect.height() // 2)
    click_and_settle(box)
    assert inspector.plotted() == [(2, "x")]
    assert list_at() == where and tree.visualItemRect(item) == rect
    click_and_settle(box)  # off, and on again
    assert inspector.plotted() == [] and tree.visualItemRect(item) == rect
    assert list_at() == where
    click_and_settle(box)
    inspector.set_checked(1, "x")
    assert inspector.plotted() == [(2, "x"), (1, "x")] and oldest.isExpanded()
    assert inspector.hint.isVisible() and "Cursors" in inspector.hint.text()
    assert inspector.legend.isVisible()
    curves = inspector.curves
    np.testing.assert_array_equal(curves[(2, "x")].getData()[1], second["x"])
    np.testing.assert_array_equal(curves[(1, "x")].getData()[1], first["x"])
    np.testing.assert_array_equal(curves[(1, "x")].getData()[0], first.time)
    colors = {c.opts["pen"].color().name() for c in curves.values()}
    assert len(colors) == 2  # told apart
    legend = [label.text for _, label in inspector.legend.items]
    assert legend == ["Run 2: ball.x (mu = 0.7)", "Run 1: ball.x (mu = 0.9)"]
    # The second run bounces lower: after the first impact its apex is mu^2 lower.
    assert np.max(second["x"][second.time > 2]) < np.max(first["x"][first.time > 2])
    # Cursors read both runs, each on its own rows: at the first impact of run 1 (x = 0,
    # closed form t = sqrt(2 x0 / g)) and a bit later.
    QTest.mouseClick(inspector.cursor_button, Qt.LeftButton)
    assert inspector.cursors.shown and inspector.readout.isVisible()
    impact = float(first.time[np.argmin(first["x"][first.time < 3])])
    inspector.cursors.place(impact, impact + 0.5)
    reading = inspector.cursor_reading()
    assert reading.names == ("Run 2: x", "Run 1: x")
    assert reading.y1[1] == pytest.approx(0.0, abs=1e-9)
    assert reading.y2[0] == pytest.approx(np.interp(impact + 0.5, second.time, second["x"]),
                                          abs=1e-9)
    assert reading.dy[1] == pytest.approx(reading.y2[1] - reading.y1[1])
    assert "Run 1: x" in inspector.readout.text()
    inspector.set_checked(2, "x", False)
    assert inspector.plotted() == [(1, "x")]
    assert inspector.cursor_reading().names == ("Run 1: x",)
    QTest.mouseClick(inspector.cursor_button, Qt.LeftButton)
    assert not inspector.cursors.shown and not inspector.readout.isVisible()
    assert [label.text for _, label in inspector.legend.items] == ["Run 1: ball.x"]


def test_only_the_last_runs_are_kept(qtbot):
    history = RunHistory(limit=2)
    inspector = DataInspector(history)
    qtbot.addWidget(inspector)
    time = np.linspace(0.0, 1.0, 11)
    for k in range(3):
        results = Results(time, {"y": time * k})
        inspector.add_run(history.add(results, {"k": k}))
        if k == 1:
            inspector.set_checked(1, "y")
            inspector.set_checked(2, "y")
    titles = [inspector.tree.topLevelItem(i).text(0) for i in range(2)]
    assert titles == ["Run 3 · k = 2 · 1 signals", "Run 2 · k = 1 · 1 signals"]
    assert inspector.plotted() == [(2, "y")]  # run 1's curve went with its run
    with pytest.raises(KeyError, match="run 1"):
        inspector.set_checked(1, "y")
    QTest.mouseClick(inspector.clear_button, Qt.LeftButton)
    assert inspector.plotted() == [] and inspector.tree.topLevelItemCount() == 0
    assert list(history.runs) == []


def test_runs_of_two_diagrams_are_named_by_their_diagrams(qtbot):
    history = RunHistory()
    inspector = DataInspector(history)
    qtbot.addWidget(inspector)
    time = np.linspace(0.0, 1.0, 11)
    for diagram, k in (("zoh_loop", 1.0), ("pi_1khz", 2.0)):
        inspector.add_run(history.add(Results(time, {"y": k * time}), {"k": k},
                                      diagram=diagram))
    titles = [inspector.tree.topLevelItem(i).text(0) for i in range(2)]
    assert titles == ["Run 2: pi_1khz · k = 2 · 1 signals", "Run 1: zoh_loop · 1 signals"]
    inspector.show()
    inspector.set_checked(1, "y")
    assert [label.text for _, label in inspector.legend.items] == ["Run 1: y"]
    inspector.set_checked(2, "y")
    assert [label.text for _, label in inspector.legend.items] == ["Run 1 (zoh_loop): y",
                                                                  "Run 2 (pi_1khz): y"]


def test_an_example_run_in_the_editor_is_named_by_the_example(env, qtbot):
    from blocksim.gui.scopes.panel import diagram_name
    from blocksim.gui.window import app

    window = app.create_window(None)
    qtbot.addWidget(window)
    assert diagram_name(window.doc.diagram) == "untitled"
    next(a for a in window.examples_menu.actions() if a.text() == "zoh_loop").trigger()
    assert window.doc.path is None  # an untitled copy, still named by its example
    assert diagram_name(window.doc.diagram) == "zoh_loop"


def test_changed_parameters_and_signal_names():
    assert changed_parameters(None, {"mu": 0.9}) == ""
    assert changed_parameters({"mu": 0.9, "g": 9.81}, {"mu": 0.7, "g": 9.81}) == "mu = 0.7"
    history = RunHistory()
    runs = [history.add(Results(np.zeros(1), {}), {"mu": mu, "g": 9.81}) for mu in (0.9, 0.7)]
    assert distinguishing(runs) == {1: "mu = 0.9", 2: "mu = 0.7"}
    assert distinguishing(runs[:1]) == {1: ""}
    diagram = Diagram(
        blocks=[Block("a", "Sine"), Block("b", "Constant", {"value": [1.0, 2.0]}),
                Block("s", "Scope", {"inputs": 2, "units": "V"})],
        wires=[Wire(PortRef("a", "y"), PortRef("s", "u")),
               Wire(PortRef("b", "y"), PortRef("s", "u2"))])
    drivers = ("a.y", "b.y[0]", "b.y[1]")
    traces = scope_traces(diagram, "s", drivers)
    assert traces.labels == drivers and traces.units == "V"
    assert traces.y_label("s") == "s"
    diagram.wires[1].name = "pair"  # a signal label (a wire's optional name)
    assert scope_traces(diagram, "s", drivers).labels == ("a.y", "pair[0]", "pair[1]")
    # Both inputs fed by the same vector: each input's elements are told apart.
    both = ("b.y[0]", "b.y[1]", "b.y[0]", "b.y[1]")
    assert scope_traces(diagram, "s", both).labels == ("b.y[0]", "b.y[1]", "pair[0]", "pair[1]")
    assert scope_traces(diagram, "nowhere/s", ("a.y",)).labels == ("a.y",)

    class Logged:
        def __init__(self, name, indices):
            self.name, self.indices = name, indices

    assert logged_drivers(["p.y", "q.y[0]", "q.y[1]"], [Logged("s", (0, 2))]) == {
        "s": ("p.y", "q.y[1]")}
