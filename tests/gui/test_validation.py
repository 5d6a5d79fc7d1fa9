"""Diagram checks through the real compiler, and the problems panel that shows them."""
import copy

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt

import blocksim
from blocksim.diagram.examples import examples_dir
from blocksim.gui.panels.diagnostics import OK_TEXT, DiagnosticsPanel
from blocksim.gui.document.validation import Diagnostic, check_diagram
from blocksim.diagram.model import Block, Diagram, PortRef, Wire

BALL = examples_dir() / "bouncing_ball.json"


@pytest.fixture
def ball():
    return blocksim.load(BALL)


def without_wire(diagram, dst):
    diagram = copy.deepcopy(diagram)
    diagram.wires = [w for w in diagram.wires if str(w.dst) != dst]
    return diagram


def test_a_valid_diagram_has_no_problems(ball):
    assert check_diagram(ball) == []


def test_unconnected_input_names_block_and_port(ball):
    assert check_diagram(without_wire(ball, "drag.u")) == [
        Diagnostic("input 'u' is not connected", "drag", "u")]


def test_problems_inside_a_subsystem_name_the_block_path():
    inner = Diagram(blocks=[Block("in1", "Inport"), Block("gain", "Gain"),
                            Block("out1", "Outport")],
                    wires=[Wire(PortRef("gain", "y"), PortRef("out1", "u"))])
    outer = Diagram(blocks=[Block("src", "Constant"), Block("sub", "Subsystem", subsystem=inner),
                            Block("y", "Output")],
                    wires=[Wire(PortRef("src", "y"), PortRef("sub", "in1")),
                           Wire(PortRef("sub", "out1"), PortRef("y", "u"))])
    [diag] = check_diagram(outer)
    assert (diag.block, diag.port, diag.severity) == ("sub/gain", "u", "error")


def test_wire_to_a_missing_port_names_the_wire(ball):
    ball.wires.append(Wire(PortRef("gravity", "y"), PortRef("drag", "nope")))
    [diag] = check_diagram(ball)
    assert (diag.block, diag.port, diag.wire) == ("drag", "nope", "gravity.y -> drag.nope")


def test_parameter_settings_and_file_level_problems(ball):
    bad_param = copy.deepcopy(ball)
    bad_param.block("drag").params["k"] = "-beta * nothing"
    [diag] = check_diagram(bad_param)
    assert diag.block == "drag" and "nothing" in diag.message
    bad_stop = copy.deepcopy(ball)
    bad_stop.simulation.stop = -1
    [diag] = check_diagram(bad_stop)
    assert diag.block is None and "stop time" in diag.message
    duplicate = copy.deepcopy(ball)
    duplicate.blocks.append(Block("drag", "Gain"))  # only the file format checks this
    [diag] = check_diagram(duplicate)
    assert "duplicate block id 'drag'" in diag.message


def test_nothing_recorded_is_a_warning():
    diagram = Diagram(blocks=[Block("c", "Constant")])
    [diag] = check_diagram(diagram)
    assert diag.severity == "warning" and "Scope" in diag.message


@pytest.fixture
def panel(qtbot):
    widget = DiagnosticsPanel()
    qtbot.addWidget(widget)
    widget.resize(600, 160)
    widget.show()
    return widget


def test_panel_lists_problems_and_locates_them(panel, ball, qtbot):
    panel.show_diagnostics(check_diagram(without_wire(ball, "drag.u")) +
                           [Diagnostic("just a note", None, severity="warning")])
    assert panel.row_texts() == [("input 'u' is not connected", "drag", "u"),
                                 ("just a note", "", "")]
    assert not panel.is_ok()
    first = panel.list.topLevelItem(0)
    panel.list.setCurrentItem(first)
    with qtbot.waitSignal(panel.locateRequested, timeout=1000) as blocker:
        qtbot.keyClick(panel.list, Qt.Key.Key_Return)
    assert blocker.args == ["drag", "u"]
    panel.list.setCurrentItem(panel.list.topLevelItem(1))  # no block: nothing to locate
    with qtbot.assertNotEmitted(panel.locateRequested):
        qtbot.keyClick(panel.list, Qt.Key.Key_Return)


def test_panel_ok_state(panel, qtbot):
    panel.show_diagnostics([])
    assert panel.is_ok() and panel.row_texts() == [(OK_TEXT, "", "")]
    panel.list.setCurrentItem(panel.list.topLevelItem(0))
    with qtbot.assertNotEmitted(panel.locateRequested):
        qtbot.keyClick(panel.list, Qt.Key.Key_Return)
