"""Triggered and enabled subsystems in the editor: from the palette, opened, given ports
inside, wired to their trigger or enable port on the top edge, parametrised, run; saved
files run the same headless; grouping, validation and pictures know them."""
import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from editor_helpers import (  # noqa: E402
    block_point,
    click,
    drag,
    open_window,
    palette_drop,
    port_point,
    run_in_editor,
    snapshot,
)
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

import blocksim  # noqa: E402
from blocksim.diagram.format import diagram_from_dict, load_diagram  # noqa: E402
from blocksim.gui.document import validation  # noqa: E402
from blocksim.gui.canvas.portinfo import port_info  # noqa: E402

SUB = "triggeredsubsystem1"


def drop(window, type_name: str, fx: float, fy: float) -> str:
    """Drop a block type from the palette at a fraction of the viewport; its new id."""
    viewport = window.canvas.view.viewport()
    size = viewport.size()
    assert window.panels.palette.item_for(type_name) is not None
    palette_drop(viewport, QPoint(int(fx * size.width()), int(fy * size.height())), type_name)
    return window.canvas.scene.selected_block_ids()[0]


def wire(window, src: str, dst: str) -> None:
    """Drag from output port `src` ("block.port") to input port `dst`."""
    canvas = window.canvas
    before = len(canvas.doc.level(canvas.level).wires)
    (a, out), (b, into) = src.split("."), dst.split(".")
    drag(canvas.view.viewport(), port_point(canvas, a, "out", out),
         port_point(canvas, b, "in", into))
    assert len(canvas.doc.level(canvas.level).wires) == before + 1, f"{src} -> {dst}"


def test_triggered_subsystem_built_and_run_in_the_editor(env, qtbot, tmp_path):
    window = open_window(qtbot)
    canvas, doc = window.canvas, window.doc
    viewport = canvas.view.viewport()
    assert window.panels.palette.item_for("EnabledSubsystem") is not None
    assert drop(window, "Pulse", 0.15, 0.2) == "pulse1"
    assert drop(window, "Clock", 0.15, 0.6) == "clock1"
    assert drop(window, "TriggeredSubsystem", 0.45, 0.5) == SUB
    assert drop(window, "Output", 0.8, 0.5) == "output1"
    assert doc.diagram.block(SUB).subsystem.blocks == []  # an empty inside, as a Subsystem

    # double-click opens it; inside, an Inport wired to an Outport
    QTest.mouseDClick(viewport, Qt.LeftButton, Qt.NoModifier, block_point(canvas, SUB))
    qtbot.waitUntil(lambda: canvas.level == (SUB,))
    assert [b.text() for b in canvas.breadcrumb.buttons] == ["untitled"]
    assert drop(window, "Inport", 0.3, 0.5) == "inport1"
    assert drop(window, "Outport", 0.7, 0.5) == "outport1"
    wire(window, "inport1.y", "outport1.u")
    canvas.breadcrumb.buttons[0].click()
    assert canvas.level == ()

    # outside: its ports are the Inport and Outport, and the trigger on the top edge
    item = canvas.scene.blocks[SUB]
    assert item.info.inputs == ("inport1", "trigger") and item.info.top == ("trigger",)
    assert item.info.outputs == ("outport1",)
    x, y, w, h = item.placement.rect
    (tx, ty), direction = item.port_position("in", "trigger")
    assert (tx, ty) == (x + w / 2, y) and direction == (0.0, -1.0)
    assert item._controls is not None  # the trigger symbol under it
    wire(window, "pulse1.y", f"{SUB}.trigger")
    wire(window, "clock1.y", f"{SUB}.inport1")
    wire(window, f"{SUB}.outport1", "output1.u")

    # its parameter in the inspector: both edges
    click(viewport, block_point(canvas, SUB))
    inspector = window.panels.inspector
    assert inspector.block_id() == SUB and set(inspector.fields) == {"edge"}
    combo = inspector.fields["edge"].widget
    combo.setFocus()
    QTest.keyClicks(combo, "either")
    assert combo.currentText() == "either"  # applied on selection, no Apply button
    assert inspector.error_text() == "" and doc.diagram.block(SUB).params == {"edge": "either"}
    assert validation.check_diagram(doc.diagram) == []

    # run from the editor; the saved file run headless gives the same
    results = run_in_editor(window, qtbot)
    assert results.status == "finished"
    path = tmp_path / "sampler.json"
    assert window.files.save_to(path)
    headless = blocksim.simulate(load_diagram(path))
    np.testing.assert_array_equal(headless.time, results.time)
    np.testing.assert_array_equal(headless["output1"], results["output1"])
    assert headless.events == results.events
    # the clock sampled at each edge of the pulse (0.5, 1, 1.5, ...; none at the start)
    t, y = results.time, results["output1"]
    for when, value in ((0.25, 0.0), (0.75, 0.5), (1.25, 1.0), (2.75, 2.5)):
        assert y[np.searchsorted(t, when)] == pytest.approx(value, abs=1e-9)
    assert snapshot(load_diagram(path)) == snapshot(doc.diagram)
    assert env == []


def test_enabled_subsystem_ports_params_and_names(window, qtbot):
    canvas, doc = window.canvas, window.doc
    sub = drop(window, "EnabledSubsystem", 0.5, 0.5)
    assert sub == "enabledsubsystem1"
    item = canvas.scene.blocks[sub]
    assert item.info.inputs == ("enable",) and item.info.top == ("enable",)
    assert item.has_diagram and window.actions_.open_subsystem.isEnabled()
    inspector = window.panels.inspector
    assert set(inspector.fields) == {"states_when_enabling", "outputs_when_disabled"}
    window.actions_.open_subsystem.trigger()
    assert canvas.level == (sub,)
    inport = drop(window, "Inport", 0.3, 0.5)
    # an Inport may not take the enable port's name; the inspector says why
    inspector.id_edit.setText("enable")
    inspector.id_edit.editingFinished.emit()
    assert "enable" in inspector.error_text() and doc.level((sub,)).block(inport)
    inspector.id_edit.setText("u")
    inspector.id_edit.editingFinished.emit()
    assert inspector.error_text() == "" and doc.level((sub,)).block("u")
    canvas.go_up()
    assert canvas.scene.blocks[sub].info.inputs == ("u", "enable")
    # a parameter value the compiler refuses is refused on the spot
    block = doc.diagram.block(sub)
    problem = validation.check_block_params(doc.diagram, block,
                                            {"outputs_when_disabled": "forget"})
    assert problem and "outputs_when_disabled" in problem
    assert validation.check_block_params(doc.diagram, block,
                                         {"outputs_when_disabled": "reset"}) is None


CONDITIONAL = {
    "format": "blocksim", "version": 1, "simulation": {"stop": 3.0, "output_interval": 0.05},
    "blocks": [
        {"id": "pulse", "type": "Pulse", "params": {"period": 0.5}},
        {"id": "wave", "type": "Sine"},
        {"id": "sampler", "type": "TriggeredSubsystem", "params": {"edge": "falling"},
         "diagram": {"blocks": [{"id": "x", "type": "Inport"}, {"id": "out", "type": "Outport"}],
                     "wires": [{"src": "x.y", "dst": "out.u"}]}},
        {"id": "gate", "type": "EnabledSubsystem",
         "diagram": {"blocks": [{"id": "x", "type": "Inport"},
                                {"id": "i", "type": "Integrator"},
                                {"id": "out", "type": "Outport"}],
                     "wires": [{"src": "x.y", "dst": "i.u"}, {"src": "i.y", "dst": "out.u"}]}},
        {"id": "y", "type": "Output"}, {"id": "z", "type": "Output"}],
    "wires": [{"src": "pulse.y", "dst": "sampler.trigger"}, {"src": "wave.y", "dst": "sampler.x"},
              {"src": "pulse.y", "dst": "gate.enable"}, {"src": "wave.y", "dst": "gate.x"},
              {"src": "sampler.out", "dst": "y.u"}, {"src": "gate.out", "dst": "z.u"}]}


def test_grouping_a_triggered_subsystem_keeps_its_behaviour(window, qtbot):
    from blocksim.diagram.format import diagram_to_dict

    diagram = diagram_from_dict(CONDITIONAL)
    reference = blocksim.simulate(diagram_from_dict(CONDITIONAL))
    window.doc.load(diagram)
    canvas = window.canvas
    canvas.scene.select_only(["pulse", "sampler", "gate"])
    group = canvas.editor.group()  # Ctrl+G makes a plain Subsystem around them
    assert window.doc.diagram.block(group).type == "Subsystem"
    inner = {b.id: b.type for b in window.doc.diagram.block(group).subsystem.blocks}
    assert inner["sampler"] == "TriggeredSubsystem" and inner["gate"] == "EnabledSubsystem"
    grouped = blocksim.simulate(diagram_from_dict(diagram_to_dict(window.doc.diagram)))
    np.testing.assert_array_equal(grouped["y"], reference["y"])
    np.testing.assert_allclose(grouped["z"], reference["z"], rtol=0, atol=1e-9)
    canvas.open_subsystem(group)
    canvas.open_subsystem("sampler")  # a level inside a level
    assert canvas.level == (group, "sampler") and set(canvas.scene.blocks) == {"x", "out"}


def test_automatic_layout_brings_the_trigger_in_from_above(window):
    window.doc.load(diagram_from_dict(CONDITIONAL))  # no positions: laid out on loading
    scene = window.canvas.scene
    for sub, port in (("sampler", "trigger"), ("gate", "enable")):
        item = scene.blocks[sub]
        route = next(w.route for w in scene.wires if str(w.wire.dst) == f"{sub}.{port}")
        (px, py), _ = item.port_position("in", port)
        assert route[-1] == (px, py) and route[-2][0] == px and route[-2][1] < py  # from above
        assert port_info(window.doc.diagram.block(sub), {}).top == (port,)


def test_render_draws_conditional_subsystems(tmp_path):
    from blocksim.cli import main as cli

    path = tmp_path / "conditional.json"
    path.write_text(__import__("json").dumps(CONDITIONAL), encoding="utf-8")
    out = tmp_path / "conditional.png"
    assert cli.main(["render", str(path), "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    inside = tmp_path / "inside.svg"
    assert cli.main(["render", str(path), "--level", "gate", "--out", str(inside)]) == 0
    assert "<svg" in inside.read_text(encoding="utf-8")


def test_validate_names_the_trigger_port_and_blocks_inside(window):
    import copy

    data = copy.deepcopy(CONDITIONAL)
    data["wires"] = [w for w in data["wires"] if w["dst"] != "sampler.trigger"]
    inner = data["blocks"][2]["diagram"]
    inner["blocks"].insert(1, {"id": "i", "type": "Integrator"})
    inner["wires"] = [{"src": "x.y", "dst": "i.u"}, {"src": "i.y", "dst": "out.u"}]
    window.doc.load(diagram_from_dict(data))
    found = window.sim.validate()  # F7
    assert [(d.block, d.port) for d in found] == [("sampler", "trigger")]
    assert "not connected" in found[0].message
    assert window.canvas.scene.blocks["sampler"].marked  # outlined where it is
    window.doc.load(diagram_from_dict({**data, "wires": CONDITIONAL["wires"]}))
    found = window.sim.validate()
    assert [d.block for d in found] == ["sampler/i"]
    assert "TriggeredSubsystem 'sampler'" in found[0].message
    window.sim.locate("sampler/i")  # from the diagnostics panel: opens the subsystem
    assert window.canvas.level == ("sampler",)
    assert window.canvas.scene.selected_block_ids() == ["i"]
    assert window.canvas.scene.blocks["i"].marked
