"""Simulation > Sweep…: the dialog driven through its widgets, checked against
blocksim.sweep run directly; Cancel, failed runs in the plot, the overlay of picked runs,
and bad input said in the dialog with the CLI's message."""
import math

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from shiboken6 import delete, isValid

import blocksim
from blocksim.errors import BlocksimError
from blocksim.gui.document.commands import SetSimulation
from blocksim.gui.sweep.dialog import SweepDialog, open_sweep_dialog
from blocksim.gui.sweep.spec import SweepRequest, SweptParameter
from blocksim.sweeps.plan import make_plan

from editor_helpers import type_text

WAIT_MS = 60_000


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return a == b


def _rows(table) -> list[list]:
    return [list(table.rows[i]) for i in sorted(table.rows)]


def _assert_same_rows(shown, direct) -> None:
    assert sorted(shown.rows) == sorted(direct.rows)
    for i in direct.rows:
        assert all(_same(a, b) for a, b in zip(shown.rows[i], direct.rows[i])), i


def _fill(dialog: SweepDialog, kind: str, texts, metrics, workers: int = 1) -> None:
    """Fill the first parameter row and the metrics as a user would (typing)."""
    row = dialog.form.rows[0]
    row.kind.setCurrentText(kind)
    for edit, text in zip(row.fields, texts):
        type_text(edit, text)
    for spec in metrics:
        edit = dialog.form.metric_edit.lineEdit()
        type_text(edit, spec)
        QTest.keyClick(edit, Qt.Key_Return)
    dialog.form.workers.setValue(workers)


def _start_and_wait(qtbot, dialog: SweepDialog) -> None:
    qtbot.mouseClick(dialog.start_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not dialog.runner.is_running(), timeout=WAIT_MS)


@pytest.fixture
def dialog(qtbot, window):
    """The sweep dialog of the lag window, opened from the Simulation menu."""
    window.actions_.sweep.trigger()
    found = window.findChild(SweepDialog, "sweep-dialog")
    assert found is not None and found.isVisible()
    yield found
    if isValid(found):  # (a test may have closed it: it deletes itself on close)
        found.close()


def test_grid_sweep_of_unsaved_edits_matches_blocksim_sweep(qtbot, window, dialog):
    # An unsaved edit (stop 1 s instead of the file's 2 s) is what the sweep runs.
    settings = window.doc.diagram.simulation.replaced(stop=1.0)
    window.doc.push(SetSimulation(window.doc, settings))
    assert window.doc.dirty
    assert [r.name.currentText() for r in dialog.form.rows] == ["tau"]
    _fill(dialog, "grid", ("0.2", "1", "4"), ["final:y", "at:y:0.75"])
    _start_and_wait(qtbot, dialog)
    direct = blocksim.sweep(window.doc.diagram, grid={"tau": "0.2:1:4"},
                            metrics=["final:y", "at:y:0.75"], workers=1)
    shown = dialog.table
    assert shown.columns == ("tau", "status", "final:y", "at:y:0.75", "message")
    _assert_same_rows(shown, direct)
    from_file = blocksim.sweep(blocksim.load(window.doc.path), grid={"tau": "0.2:1:4"},
                               metrics=["final:y"], workers=1)
    assert from_file.column("final:y") != shown.column("final:y")  # not the file's 2 s
    # The table widget shows the same rows, and the plot the chosen metric.
    table = dialog.run_table
    assert table.rowCount() == 4
    assert [table.item(r, 1).text() for r in range(4)] == ["finished"] * 4
    assert float(table.item(3, 2).text()) == pytest.approx(shown.rows[3][2], rel=1e-5)
    dialog.metric_plot.y_choice.setCurrentText("at:y:0.75")
    runs, x, y, good = dialog.metric_plot.data()
    assert list(x) == shown.column("tau") and list(y) == shown.column("at:y:0.75")
    assert good.all()
    px, py = dialog.metric_plot.good.getData()
    assert list(px) == list(x) and list(py) == list(y)
    assert "4 finished" in dialog.message.text()


def test_monte_carlo_sweep_matches_blocksim_sweep(qtbot, window, dialog):
    _fill(dialog, "normal", ("0.5", "0.05"), ["final:y"])
    dialog.form.n.setValue(5)
    dialog.form.seed.setValue(7)
    _start_and_wait(qtbot, dialog)
    direct = blocksim.sweep(window.doc.diagram, draws={"tau": "normal(0.5,0.05)"}, n=5,
                            seed=7, metrics=["final:y"], workers=1)
    assert len(dialog.table) == 5
    _assert_same_rows(dialog.table, direct)


def test_two_workers_match_one(qtbot, window, dialog):
    _fill(dialog, "grid", ("0.2", "1", "6"), ["final:y"], workers=2)
    _start_and_wait(qtbot, dialog)
    direct = blocksim.sweep(window.doc.diagram, grid={"tau": "0.2:1:6"},
                            metrics=["final:y"], workers=1)
    _assert_same_rows(dialog.table, direct)


def test_failed_runs_are_rows_and_marked_apart_in_the_plot(qtbot, dialog):
    _fill(dialog, "grid", ("-1", "1", "5"), ["final:y"])  # tau = 0: 1 / tau refused
    _start_and_wait(qtbot, dialog)
    statuses = dialog.table.column("status")
    assert statuses == ["finished", "finished", "invalid", "finished", "finished"]
    assert "division by zero" in dialog.table.rows[2][-1]
    fx, fy = dialog.metric_plot.failed.getData()
    gx, _ = dialog.metric_plot.good.getData()
    assert list(fx) == [0.0] and np.isfinite(fy).all()
    assert 0.0 not in list(gx) and len(gx) == 4
    assert "1 invalid" in dialog.message.text()


@pytest.mark.parametrize("workers", [1, 2])
def test_cancel_stops_and_keeps_the_finished_rows(qtbot, window, dialog, workers):
    _fill(dialog, "grid", ("0.1", "1", "2000"), ["final:y"], workers=workers)
    qtbot.mouseClick(dialog.start_button, Qt.LeftButton)
    assert dialog.cancel_button.isEnabled() and not dialog.start_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 2, timeout=WAIT_MS)
    qtbot.mouseClick(dialog.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not dialog.runner.is_running(), timeout=WAIT_MS)
    table = dialog.table
    assert table.interrupted and 2 <= len(table) < 2000
    if workers == 1:
        assert sorted(table.rows) == list(range(len(table)))  # in order
    plan = make_plan(grid={"tau": "0.1:1:2000"})
    done = [plan.values(i) for i in sorted(table.rows)]
    direct = blocksim.sweep(window.doc.diagram, samples=done, metrics=["final:y"], workers=1)
    assert table.column("final:y") == direct.column("final:y")
    assert "cancelled" in dialog.message.text()
    assert dialog.start_button.isEnabled() and dialog.run_table.rowCount() == len(table)


def test_picked_runs_overlay_their_signal(qtbot, window, dialog):
    _fill(dialog, "grid", ("0.25", "1", "4"), ["final:y"])
    _start_and_wait(qtbot, dialog)
    dialog.overlay.signal.setCurrentText("y")
    dialog.run_table.select_runs([0, 3])
    qtbot.waitUntil(lambda: len(dialog.overlay.curves) == 2, timeout=WAIT_MS)
    labels = [curve.name() for curve in dialog.overlay.curves]
    assert labels == ["tau=0.25", "tau=1"]
    for curve, tau in zip(dialog.overlay.curves, (0.25, 1.0)):
        results = blocksim.simulate(window.doc.diagram, params={"tau": tau})
        t, y = curve.getData()
        np.testing.assert_array_equal(t, results.time)
        np.testing.assert_array_equal(y, results.signals["y"])
    # A click on a point of the metric plot picks that run instead.
    dialog._point_clicked(1, False)
    qtbot.waitUntil(lambda: [c.name() for c in dialog.overlay.curves] == ["tau=0.5"],
                    timeout=WAIT_MS)
    assert list(dialog.metric_plot.chosen.getData()[0]) == [0.5]


@pytest.mark.parametrize("kind, texts, metric, expected", [
    ("grid", ("0", "abc", "3"), "final:y", "stop 'abc' is not a finite number"),
    ("grid", ("0", "1", "2.5"), "final:y", "N a whole number"),
    ("normal", ("0.5", "-1"), "final:y", "sigma must be >= 0"),
    ("grid", ("0.1", "1", "3"), "mean:y", "expected final:SIGNAL"),
    ("grid", ("0.1", "1", "3"), "final:nothing", "no logged signal 'nothing'"),
])
def test_bad_input_is_said_in_the_dialog(qtbot, env, dialog, kind, texts, metric, expected):
    _fill(dialog, kind, texts, [metric])
    _start_and_wait(qtbot, dialog)
    assert expected in dialog.message.text()
    assert dialog.table is None and dialog.start_button.isEnabled() and not env


def test_the_request_uses_the_cli_rules():
    row = SweptParameter("mu", "grid", ("0.5", "0.9", "5"))
    assert row.spec() == "0.5:0.9:5"
    assert SweptParameter("mu", "uniform", ("0", "1")).spec() == "uniform(0,1)"
    request = SweepRequest((row,), ("count:ball.reset",), workers=2)
    assert request.plan == make_plan(grid={"mu": "0.5:0.9:5"})
    assert request.arguments()["grid"] == {"mu": "0.5:0.9:5"}
    assert request.arguments()["batch_size"] == 1  # 5 runs: every worker gets some
    big = SweepRequest((SweptParameter("mu", "grid", ("0", "1", "1000")),), ("final:x",),
                       workers=2)
    assert big.arguments()["batch_size"] == 8  # a Cancel waits for 8 runs at most
    with pytest.raises(BlocksimError, match="swept twice"):
        SweepRequest((row, row), ("final:x",))
    with pytest.raises(BlocksimError, match="add a metric"):
        SweepRequest((row,), ())
    with pytest.raises(BlocksimError, match="is empty"):
        SweptParameter("mu", "grid", ("0.5", "", "5")).spec()


def test_reopened_after_close_is_fresh(qtbot, window, dialog):
    assert open_sweep_dialog(window) is dialog  # open: raised, not a second one
    dialog.close()
    qtbot.waitUntil(lambda: window.findChild(SweepDialog, "sweep-dialog") is None)
    again = open_sweep_dialog(window)
    assert again is not dialog and again.table is None
    again.close()


def test_rows_start_from_the_parameters_values(qtbot, window):
    from blocksim.gui.document.commands import SetDiagramParameters

    window.doc.push(SetDiagramParameters(window.doc, (), {"tau": 0.5, "gain": 2.0}))
    dialog = open_sweep_dialog(window)
    first = dialog.form.rows[0]
    assert first.name.currentText() == "tau"
    assert [e.text() for e in first.fields] == ["0.5", "0.5", "5"]
    second = dialog.form.add_row()
    assert second.name.currentText() == "gain"  # the next one not swept yet
    first.name.setCurrentText("gain")  # fields untouched: the new parameter's value
    assert [e.text() for e in first.fields] == ["2", "2", "5"]
    type_text(first.fields[1], "3")
    first.name.setCurrentText("tau")  # typed over: kept
    assert [e.text() for e in first.fields] == ["2", "3", "5"]
    assert first.labels[2].text() == "N" and first.labels[2].isVisibleTo(dialog)
    first.kind.setCurrentText("uniform")
    assert [lbl.text() for lbl in first.labels[:2]] == ["a", "b"]
    assert not first.fields[2].isVisibleTo(dialog) and dialog.form.seed.isEnabled()
    dialog.close()


def test_a_sweep_under_way_stops_when_its_dialog_is_deleted(qtbot, dialog):
    import threading

    _fill(dialog, "grid", ("0.1", "1", "20000"), ["final:y"])  # minutes if not stopped
    qtbot.mouseClick(dialog.start_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=WAIT_MS)
    delete(dialog)  # as when its window is deleted: no close event, just gone
    qtbot.waitUntil(lambda: not any(t.name == "blocksim-sweep" for t in threading.enumerate()),
                    timeout=WAIT_MS)


def test_a_diagram_without_parameters_is_told_how_to_get_some(qtbot, window):
    from blocksim.gui.document.commands import SetDiagramParameters, SetParams

    window.doc.push(SetParams(window.doc, (), "fb", {"k": 2}))
    window.doc.push(SetDiagramParameters(window.doc, (), {}))
    dialog = open_sweep_dialog(window)
    assert not dialog.form.rows and not dialog.form.add_button.isEnabled()
    assert "no named parameters" in dialog.message.text()
    qtbot.mouseClick(dialog.start_button, Qt.LeftButton)
    assert "add a parameter to sweep" in dialog.message.text()
    dialog.close()
