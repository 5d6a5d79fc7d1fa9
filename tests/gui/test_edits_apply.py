"""Issue 13, edits that apply: every inspector and Diagram-panel edit becomes one undo step as
it is made (a choice on selection, a text field on Enter or focus-out), so clicking the canvas
never reverts it and Save writes what was chosen."""
import json

import pytest

pytest.importorskip("PySide6")

from editor_helpers import block_point, click, lag_diagram, type_text  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from blocksim.diagram.format import save_diagram  # noqa: E402
from blocksim.diagram.model import Block  # noqa: E402


@pytest.fixture
def active(qtbot, tmp_path, env):
    """The lag loop plus an unwired ResetIntegrator `ri`, in an active window (so focus moves
    as it does for a user)."""
    from blocksim.gui.window import app

    diagram = lag_diagram()
    diagram.blocks.append(Block("ri", "ResetIntegrator"))
    path = tmp_path / "lag_ri.json"
    save_diagram(diagram, path)
    window = app.create_window(str(path))
    qtbot.addWidget(window)
    qtbot.waitExposed(window)
    with qtbot.waitActive(window):
        window.activateWindow()
    return window


def empty_canvas_point(window) -> QPoint:
    """A viewport point on no block and no wire (the view's top-left corner)."""
    view = window.canvas.view
    point = QPoint(4, 4)
    assert view.itemAt(point) is None
    return point


def test_a_choice_applies_on_selection_and_a_canvas_click_keeps_it(active):
    doc, canvas = active.doc, active.canvas
    viewport = canvas.view.viewport()
    click(viewport, block_point(canvas, "ri"))
    inspector = active.panels.inspector
    assert inspector.block_id() == "ri"
    assert not hasattr(inspector, "apply_button")  # nothing left to press
    steps = doc.undo_stack.count()
    combo = inspector.fields["edge"].widget
    combo.setFocus()
    QTest.keyClicks(combo, "falling")  # typing picks the choice, as a user does
    assert combo.currentText() == "falling"
    assert doc.diagram.block("ri").params == {"edge": "falling"}
    assert doc.undo_stack.count() == steps + 1  # one undo step
    click(viewport, empty_canvas_point(active))
    assert inspector.block_id() == "" and doc.diagram.block("ri").params == {"edge": "falling"}
    active.actions_.undo.trigger()
    assert doc.diagram.block("ri").params == {}


def test_a_text_field_applies_on_focus_out_and_on_enter(active):
    doc, canvas = active.doc, active.canvas
    viewport = canvas.view.viewport()
    click(viewport, block_point(canvas, "fb"))
    inspector = active.panels.inspector
    steps = doc.undo_stack.count()
    field = inspector.fields["k"].edit
    field.setFocus()
    type_text(field, "3 / tau")
    assert doc.diagram.block("fb").params == {"k": "1 / tau"}  # still typing
    click(viewport, empty_canvas_point(active))  # focus leaves the field: applied
    assert doc.diagram.block("fb").params == {"k": "3 / tau"}
    assert doc.undo_stack.count() == steps + 1
    click(viewport, block_point(canvas, "fb"))
    field = inspector.fields["k"].edit
    field.setFocus()
    type_text(field, "4")
    QTest.keyClick(field, Qt.Key_Return)
    assert doc.diagram.block("fb").params == {"k": 4}
    assert doc.undo_stack.count() == steps + 2
    type_text(field, "nope")  # refused: said so, not applied, nothing reverted
    QTest.keyClick(field, Qt.Key_Return)
    assert "nope" in inspector.error_text() and doc.diagram.block("fb").params == {"k": 4}
    assert doc.undo_stack.count() == steps + 2


def test_solver_choice_applies_and_save_writes_it(active, tmp_path):
    doc, settings = active.doc, active.panels.settings
    assert not hasattr(settings, "apply_button")
    steps = doc.undo_stack.count()
    settings.solver.setFocus()
    QTest.keyClicks(settings.solver, "radau")
    assert settings.solver.currentText() == "radau" and doc.diagram.simulation.solver == "radau"
    assert doc.undo_stack.count() == steps + 1
    stop = settings.number_edits["stop"]
    stop.setFocus()
    type_text(stop, "3.5")
    click(active.canvas.view.viewport(), empty_canvas_point(active))  # focus-out applies
    assert doc.diagram.simulation.stop == 3.5 and doc.undo_stack.count() == steps + 2
    backend = settings.backend
    backend.setCurrentIndex(backend.findData("python"))
    assert doc.diagram.simulation.backend == "python"
    assert doc.undo_stack.count() == steps + 3
    out = tmp_path / "saved.json"
    assert active.files.save_to(out)
    simulation = json.loads(out.read_text())["simulation"]
    assert simulation["solver"] == "radau" and simulation["stop"] == 3.5
    active.actions_.undo.trigger()
    assert doc.diagram.simulation.backend is None and settings.backend.currentData() is None


def test_parameter_table_cells_apply_when_committed(active):
    doc, settings = active.doc, active.panels.settings
    steps = doc.undo_stack.count()
    table = settings.table
    assert table.item(0, 0).text() == "tau"
    table.item(0, 1).setText("0.25")  # tau, as a committed cell edit sets it
    assert doc.diagram.parameters == {"tau": 0.25} and doc.undo_stack.count() == steps + 1
    settings.add_parameter()  # an empty row is not an edit yet
    assert doc.undo_stack.count() == steps + 1
    table.item(1, 0).setText("k")
    assert "no value" in settings.error_text() and "k" not in doc.diagram.parameters
    table.item(1, 1).setText("2 * tau")
    assert doc.diagram.parameters == {"tau": 0.25, "k": "2 * tau"}
    assert settings.error_text() == "" and doc.undo_stack.count() == steps + 2
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == "k")
    table.selectRow(row)
    settings.remove_selected()
    assert doc.diagram.parameters == {"tau": 0.25} and doc.undo_stack.count() == steps + 3
