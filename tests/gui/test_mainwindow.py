"""The main window: panels wired to undo commands, validation marks, a run, the entry point."""
import pytest

pytest.importorskip("PySide6")

from editor_helpers import snapshot  # noqa: E402

from blocksim.gui.window import app  # noqa: E402
from blocksim.gui.document.commands import SetParams  # noqa: E402




def test_window_opens_the_diagram_with_its_panels(window):
    assert window.doc.path.name == "lag.json" and window.windowTitle() == "lag.json — blocksim"
    assert set(window.panels.docks) == {"palette", "inspector", "settings", "diagnostics",
                                        "scopes", "data_inspector"}
    assert set(window.canvas.scene.blocks) == {"step", "sum", "integ", "fb", "y"}


def test_panel_edits_become_undoable_commands(window):
    doc, panels, scene = window.doc, window.panels, window.canvas.scene
    before = snapshot(doc.diagram)
    scene.select_only(["fb"])
    assert panels.inspector.block_id() == "fb"
    panels.inspector.paramsEdited.emit("fb", {"k": "2 / tau"})
    assert doc.diagram.block("fb").params == {"k": "2 / tau"}
    panels.inspector.renameRequested.emit("fb", "feedback")
    assert "feedback" in scene.blocks and scene.selected_block_ids() == ["feedback"]
    panels.settings.parametersEdited.emit({"tau": 0.25})
    panels.settings.settingsEdited.emit(doc.diagram.simulation.replaced(stop=3.0))
    assert doc.diagram.parameters == {"tau": 0.25} and doc.diagram.simulation.stop == 3.0
    assert doc.undo_stack.count() == 4 and window.windowTitle().endswith("* — blocksim")
    for _ in range(4):
        window.actions_.undo.trigger()
    assert snapshot(doc.diagram) == before and not doc.dirty
    panels.palette.blockActivated.emit("Scope")
    assert doc.diagram.blocks[-1].type == "Scope"


def test_validate_outlines_the_faulty_block_and_locates_it(window):
    doc, scene = window.doc, window.canvas.scene
    doc.push(SetParams(doc, (), "sum", {"signs": "+-+"}))  # u3 is not wired
    found = window.sim.validate()
    assert found and found[0].block == "sum"
    assert scene.blocks["sum"].marked and not scene.blocks["integ"].marked
    window.panels.diagnostics.locateRequested.emit("sum", "u3")
    assert scene.selected_block_ids() == ["sum"]


def test_run_reports_progress_and_results(window, qtbot):
    with qtbot.waitSignal(window.sim.runner.finished, timeout=20000):
        window.actions_.run.trigger()
        assert not window.actions_.run.isEnabled() and window.actions_.stop.isEnabled()
    assert window.actions_.run.isEnabled()
    assert "Simulation" in window.statusBar().currentMessage()


def test_entry_point_accepts_argv_none(monkeypatch):
    seen = {}

    def fake_window(diagram=None):
        seen["diagram"] = diagram
        return object()
    monkeypatch.setattr(app, "create_window", fake_window)
    monkeypatch.setattr("sys.argv", ["blocksim-gui", "some.json"])
    from PySide6.QtWidgets import QApplication
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    assert app.main() == 0 and seen["diagram"] == "some.json"
