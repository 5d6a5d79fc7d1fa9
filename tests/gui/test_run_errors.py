"""Issue 13: a failed Run lands in Diagnostics with block and port filled in, outlines the
block and, for an algebraic loop, every wire of the cycle; no modal box. Validate (F7) marks
the loop's wires too."""
import pytest

pytest.importorskip("PySide6")

from editor_helpers import lag_diagram  # noqa: E402

from blocksim.diagram.format import save_diagram  # noqa: E402
from blocksim.diagram.model import Block, PortRef, Wire  # noqa: E402


def _loop_window(qtbot, tmp_path, diagram):
    from blocksim.gui.window import app

    path = tmp_path / "loop.json"
    save_diagram(diagram, path)
    window = app.create_window(str(path))
    qtbot.addWidget(window)
    return window


def _run_and_fail(window, qtbot):
    with qtbot.waitSignal(window.sim.runner.failed, timeout=20000):
        window.actions_.run.trigger()
    assert window.sim.runner.wait(5000)


def _lag_with_algebraic_loop():
    """The lag loop with its integrator replaced by a Gain: sum -> g -> fb -> sum is an
    algebraic loop (step and y stay outside it)."""
    diagram = lag_diagram()
    diagram.blocks = [b if b.id != "integ" else Block("integ", "Gain", {"k": 2})
                      for b in diagram.blocks]
    return diagram


def test_an_algebraic_loop_from_run_is_listed_and_every_wire_of_it_marked(
        qtbot, tmp_path, env):
    window = _loop_window(qtbot, tmp_path, _lag_with_algebraic_loop())
    _run_and_fail(window, qtbot)
    assert env == []  # no modal box
    rows = window.panels.diagnostics.row_texts()
    assert len(rows) == 1 and rows[0][0].startswith("algebraic loop:")
    assert rows[0][1] in {"sum", "integ", "fb"}  # the block column is filled in
    scene = window.canvas.scene
    assert scene.marked_blocks == {"sum", "integ", "fb"}
    assert scene.marked_wires == {"sum.y->integ.u", "integ.y->fb.u", "fb.y->sum.u2"}
    marked_items = {f"{w.wire.src}->{w.wire.dst}" for w in scene.wires if w.marked}
    assert marked_items == scene.marked_wires  # drawn red, not only remembered
    assert not any(scene.blocks[b].marked for b in ("step", "y"))
    assert "Simulation failed" in window.statusBar().currentMessage()
    assert window.panels.docks["diagnostics"].isVisibleTo(window)


def test_validate_marks_the_loop_too_and_a_good_run_clears_the_failure(qtbot, tmp_path, env):
    window = _loop_window(qtbot, tmp_path, _lag_with_algebraic_loop())
    window.actions_.validate.trigger()
    assert window.canvas.scene.marked_wires == {"sum.y->integ.u", "integ.y->fb.u",
                                                "fb.y->sum.u2"}
    _run_and_fail(window, qtbot)
    window.canvas.scene.select_only(["fb"])
    window.actions_.delete.trigger()  # breaks the loop (sum.u2 is then unconnected)
    from blocksim.gui.document.commands import AddItems

    doc = window.doc
    doc.push(AddItems(doc, (), [Block("zero", "Constant", {"value": 0})],
                      [Wire(PortRef("zero", "y"), PortRef("sum", "u2"))]))
    with qtbot.waitSignal(window.sim.runner.finished, timeout=20000):
        window.actions_.run.trigger()
    assert window.panels.diagnostics.is_ok()
    assert window.canvas.scene.marked_blocks == set() and window.canvas.scene.marked_wires == set()


def test_an_unconnected_input_names_block_and_port(qtbot, tmp_path, env):
    diagram = lag_diagram()
    diagram.wires = [w for w in diagram.wires if str(w.dst) != "sum.u2"]
    window = _loop_window(qtbot, tmp_path, diagram)
    _run_and_fail(window, qtbot)
    assert env == []
    [(message, block, port)] = window.panels.diagnostics.row_texts()
    assert (block, port) == ("sum", "u2")
    assert window.canvas.scene.marked_blocks == {"sum"}


def test_a_failure_during_the_run_names_its_block_and_time(qtbot, tmp_path, env):
    """An Expression that divides by zero at t = 1: the run fails there, in that block, and
    the results so far stay."""
    diagram = lag_diagram()
    diagram.blocks.append(Block("bad", "Expression", {"formula": "1 / (1 - u)"}))
    diagram.blocks.append(Block("clock", "Clock"))
    diagram.blocks.append(Block("out2", "Output"))
    diagram.wires += [Wire(PortRef("clock", "y"), PortRef("bad", "u")),
                      Wire(PortRef("bad", "y"), PortRef("out2", "u"))]
    window = _loop_window(qtbot, tmp_path, diagram)
    _run_and_fail(window, qtbot)
    assert env == []
    [(message, block, _port)] = window.panels.diagnostics.row_texts()
    assert block == "bad" and "at t = " in message
    assert window.canvas.scene.marked_blocks == {"bad"}
    assert window.sim.scopes.results is not None  # what was computed before is kept


def test_a_loop_through_a_subsystem_is_marked_on_both_levels(qtbot, tmp_path, env):
    """sum -> plant (a Subsystem: Inport i -> Gain g -> Outport o) -> sum: at the top the
    wires into and out of the subsystem, inside it the Inport and Outport wires."""
    from blocksim.diagram.format import diagram_from_dict

    diagram = diagram_from_dict({
        "format": "blocksim", "version": 1,
        "blocks": [
            {"id": "c", "type": "Constant"}, {"id": "s", "type": "Sum", "params": {"signs": "+-"}},
            {"id": "plant", "type": "Subsystem", "diagram": {
                "blocks": [{"id": "i", "type": "Inport"}, {"id": "g", "type": "Gain"},
                           {"id": "o", "type": "Outport"}, {"id": "k", "type": "Constant"},
                           {"id": "shown", "type": "Output"}],
                "wires": [{"src": "i.y", "dst": "g.u"}, {"src": "g.y", "dst": "o.u"},
                          {"src": "k.y", "dst": "shown.u"}]}},
            {"id": "y", "type": "Output"}],
        "wires": [{"src": "c.y", "dst": "s.u1"}, {"src": "s.y", "dst": "plant.i"},
                  {"src": "plant.o", "dst": "s.u2"}, {"src": "s.y", "dst": "y.u"}]})
    window = _loop_window(qtbot, tmp_path, diagram)
    _run_and_fail(window, qtbot)
    scene = window.canvas.scene
    assert scene.level == ()  # the loop starts at the top: shown there
    assert scene.marked_blocks == {"s", "plant"}
    assert scene.marked_wires == {"s.y->plant.i", "plant.o->s.u2"}
    window.canvas.open_subsystem("plant")
    qtbot.waitUntil(lambda: scene.level == ("plant",), timeout=2000)
    assert scene.marked_blocks == {"i", "g", "o"}
    assert scene.marked_wires == {"i.y->g.u", "g.y->o.u"}


def test_a_failure_inside_a_subsystem_opens_it_at_the_block(qtbot, tmp_path, env):
    from blocksim.diagram.format import diagram_from_dict

    diagram = diagram_from_dict({
        "format": "blocksim", "version": 1, "simulation": {"stop": 2},
        "blocks": [
            {"id": "clock", "type": "Clock"},
            {"id": "inner", "type": "Subsystem", "diagram": {
                "blocks": [{"id": "u", "type": "Inport"},
                           {"id": "bad", "type": "Expression",
                            "params": {"formula": "1 / (1 - u)"}},
                           {"id": "y", "type": "Outport"}],
                "wires": [{"src": "u.y", "dst": "bad.u"}, {"src": "bad.y", "dst": "y.u"}]}},
            {"id": "out", "type": "Output"}],
        "wires": [{"src": "clock.y", "dst": "inner.u"}, {"src": "inner.y", "dst": "out.u"}]})
    window = _loop_window(qtbot, tmp_path, diagram)
    _run_and_fail(window, qtbot)
    [(message, block, _port)] = window.panels.diagnostics.row_texts()
    assert block == "inner/bad" and "at t = " in message
    assert window.canvas.level == ("inner",)
    assert window.canvas.scene.marked_blocks == {"bad"}
    assert window.canvas.scene.selected_block_ids() == ["bad"]


def _lag_with(block, wires):
    """The lag loop with one more failing block fed by a clock and logged."""
    diagram = lag_diagram()
    diagram.blocks += [block, Block("clock", "Clock"), Block("out2", "Output")]
    diagram.wires += wires
    return diagram


def test_a_run_failure_fills_in_the_port_and_rings_it(qtbot, tmp_path, env):
    """sqrt of a negative number from t = 1 on: the row names block 'bad', port 'y' (the
    output it could not compute) and the time (of the first output row after 1, where it
    failed); the canvas outlines the block and rings that port, not the others."""
    diagram = _lag_with(Block("bad", "Expression", {"formula": "sqrt(1 - u)"}),
                         [Wire(PortRef("clock", "y"), PortRef("bad", "u")),
                          Wire(PortRef("bad", "y"), PortRef("out2", "u"))])
    diagram.simulation.stop = 2.0
    window = _loop_window(qtbot, tmp_path, diagram)
    _run_and_fail(window, qtbot)
    assert env == []
    [(message, block, port)] = window.panels.diagnostics.row_texts()
    assert (block, port) == ("bad", "y")
    error = window.sim.runner.error
    assert message.startswith("a math function outside its domain")
    assert f"(at t = {error.time:.6g} s)" in message and 1.0 < error.time
    assert error.results.time[-1] <= 1.0 and error.time - error.results.time[-1] < 0.2
    assert (error.block, error.port) == ("bad", "y") and "port 'y'" in str(error)
    scene = window.canvas.scene
    assert scene.marked_blocks == {"bad"} and scene.marked_ports == {"bad": {"y"}}
    assert scene.blocks["bad"].marked_ports == {"y"}
    assert not any(item.marked_ports for bid, item in scene.blocks.items() if bid != "bad")
    assert "Simulation failed in bad, port y:" in window.statusBar().currentMessage()


def test_an_algebraic_loop_failing_at_run_time_names_its_unknown(qtbot, tmp_path, env):
    """An AlgebraicConstraint whose residual z^2 + 1 has no root: Newton does not converge
    at t = 0; the row names the constraint and its output z."""
    diagram = _lag_with(Block("solve", "AlgebraicConstraint", {"z0": 0.5}), [])
    diagram.blocks.append(Block("res", "Expression", {"formula": "z**2 + 1", "inputs": "z"}))
    diagram.wires += [Wire(PortRef("solve", "z"), PortRef("res", "z")),
                      Wire(PortRef("res", "y"), PortRef("solve", "f")),
                      Wire(PortRef("solve", "z"), PortRef("out2", "u"))]
    window = _loop_window(qtbot, tmp_path, diagram)
    _run_and_fail(window, qtbot)
    [(message, block, port)] = window.panels.diagnostics.row_texts()
    assert (block, port) == ("solve", "z") and "did not converge" in message
    assert window.canvas.scene.blocks["solve"].marked_ports == {"z"}

