"""The block inspector and the diagram settings editor: generated forms that refuse what the
compiler refuses, emit complete values otherwise, and never touch the diagram."""
import copy
import math

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit

import blocksim
from blocksim.diagram.examples import examples_dir
from blocksim.gui.panels.inspector import BlockInspector, DiagramSettingsEditor
from blocksim.diagram.model import Block, Diagram, SimulationSettings

BALL = examples_dir() / "bouncing_ball.json"


@pytest.fixture
def ball():
    """The bouncing ball, plus a limited Integrator "position" (the ball's x and v are one
    SecondOrderIntegrator now) for the tests of the Integrator's form."""
    diagram = blocksim.load(BALL)
    diagram.blocks.append(Block("position", "Integrator", {"x0": "x0", "lower": 0}))
    return diagram


@pytest.fixture
def inspector(qtbot):
    widget = BlockInspector()
    qtbot.addWidget(widget)
    widget.resize(360, 520)
    widget.show()
    return widget


def edit(inspector, name, text):
    field = inspector.fields[name].edit
    field.clear()
    field.setText(text)
    return field


def test_form_is_generated_from_the_declaration(inspector, ball):
    ball.blocks.append(Block("ff", "SRFlipFlop"))
    ball.blocks.append(Block("pulse", "Pulse"))
    inspector.show_block(ball, ball.block("position"))
    fields = inspector.fields
    assert list(fields) == ["x0", "ic_source", "lower", "upper", "atol"]
    assert isinstance(fields["ic_source"].widget, QComboBox)
    assert fields["ic_source"].widget.currentText() == "parameter"
    assert fields["x0"].edit.text() == "x0" and fields["lower"].edit.text() == "0"
    assert fields["upper"].edit.text() == "" and "inf" in fields["upper"].edit.placeholderText()
    assert "upper limit" in fields["upper"].widget.toolTip()
    assert "Integrate the input" in inspector.doc.text()
    assert "x0, v0, g, mu, beta" in inspector.names.text()
    inspector.show_block(ball, ball.block("ff"))
    assert isinstance(inspector.fields["initial"].widget, QCheckBox)
    inspector.show_block(ball, ball.block("pulse"))
    labels = [inspector.form.labelForField(f.widget).text() for f in inspector.fields.values()]
    assert "period [s]" in labels  # units shown


def test_refuses_lower_above_upper_naming_the_parameters(inspector, qtbot):
    diagram = Diagram(blocks=[Block("limit", "Saturation")])
    inspector.show_block(diagram, diagram.blocks[0])
    edit(inspector, "lower", "3")
    edit(inspector, "upper", "1")
    with qtbot.assertNotEmitted(inspector.paramsEdited):
        qtbot.keyClick(inspector.fields["upper"].edit, Qt.Key.Key_Return)
    message = inspector.error_text()
    assert "lower" in message and "upper" in message
    assert inspector.fields["lower"].widget.styleSheet()  # outlined
    assert diagram.blocks[0].params == {}


def test_refuses_a_value_below_the_declared_minimum(inspector, qtbot):
    diagram = Diagram(blocks=[Block("mux", "Mux")])
    inspector.show_block(diagram, diagram.blocks[0])
    edit(inspector, "inputs", "-1")
    with qtbot.assertNotEmitted(inspector.paramsEdited):
        assert inspector.apply() is False
    assert "'inputs'" in inspector.error_text() and "minimum" in inspector.error_text()


def test_refuses_an_unknown_name_and_accepts_a_valid_expression(inspector, ball, qtbot):
    block = ball.block("drag")
    before = copy.deepcopy(ball)
    inspector.show_block(ball, block)
    field = edit(inspector, "k", "-beta * scale")
    with qtbot.assertNotEmitted(inspector.paramsEdited):
        qtbot.keyClick(field, Qt.Key.Key_Return)
    assert "'k'" in inspector.error_text() and "scale" in inspector.error_text()
    field = edit(inspector, "k", "-2 * beta")
    with qtbot.waitSignal(inspector.paramsEdited, timeout=1000) as blocker:
        qtbot.keyClick(field, Qt.Key.Key_Return)
    assert blocker.args == ["drag", {"k": "-2 * beta"}]
    assert inspector.error_text() == ""
    assert ball.block("drag").params == before.block("drag").params  # the core applies it


def test_emits_the_complete_params_dict(inspector, ball, qtbot):
    inspector.show_block(ball, ball.block("position"))
    edit(inspector, "upper", "[20]")
    inspector.fields["ic_source"].widget.setCurrentText("parameter")
    with qtbot.waitSignal(inspector.paramsEdited, timeout=1000) as blocker:
        inspector.apply()
    assert blocker.args == ["position", {"x0": "x0", "lower": 0, "upper": [20]}]
    edit(inspector, "lower", "")  # cleared: back to the declared default
    with qtbot.waitSignal(inspector.paramsEdited, timeout=1000) as blocker:
        inspector.apply()
    assert blocker.args == ["position", {"x0": "x0", "upper": [20]}]


def test_initial_value_outside_limits_names_the_edited_field(inspector, ball, qtbot):
    inspector.show_block(ball, ball.block("position"))
    edit(inspector, "lower", "x0 + 1")
    with qtbot.assertNotEmitted(inspector.paramsEdited):
        inspector.apply()
    assert inspector.error_text().startswith("lower")


def test_expressions_see_the_names_of_enclosing_levels(inspector, qtbot):
    inner = Diagram(blocks=[Block("gain", "Gain")], parameters={"k_in": "2 * k_out"})
    outer = Diagram(blocks=[Block("sub", "Subsystem", subsystem=inner)],
                    parameters={"k_out": 3})
    inspector.show_block(inner, inner.blocks[0], parents=[outer])
    edit(inspector, "k", "k_in + k_out")
    with qtbot.waitSignal(inspector.paramsEdited, timeout=1000) as blocker:
        inspector.apply()
    assert blocker.args == ["gain", {"k": "k_in + k_out"}]


def test_rename_refuses_bad_and_used_ids(inspector, ball, qtbot):
    inspector.show_block(ball, ball.block("position"))
    for bad, why in (("1x", "not a valid name"), ("x", "already"), ("a b", "not a valid")):
        inspector.id_edit.setText(bad)
        with qtbot.assertNotEmitted(inspector.renameRequested):
            qtbot.keyClick(inspector.id_edit, Qt.Key.Key_Return)
        assert why in inspector.error_text()
    inspector.id_edit.setText("height")
    with qtbot.waitSignal(inspector.renameRequested, timeout=1000) as blocker:
        qtbot.keyClick(inspector.id_edit, Qt.Key.Key_Return)
    assert blocker.args == ["position", "height"]
    assert inspector.error_text() == ""


@pytest.fixture
def settings_editor(qtbot, ball):
    widget = DiagramSettingsEditor()
    qtbot.addWidget(widget)
    widget.resize(380, 560)
    widget.show()
    widget.show_diagram(ball)
    return widget


def test_settings_editor_emits_simulation_settings(settings_editor, ball, qtbot):
    edits = settings_editor.number_edits
    assert edits["stop"].text() == "30" and edits["max_step"].text() == ""
    edits["stop"].setText("2 * 60")
    settings_editor.solver.setCurrentText("rk4")
    edits["step"].setText("1e-3")
    edits["output_interval"].setText("")
    with qtbot.assertNotEmitted(settings_editor.parametersEdited), \
            qtbot.waitSignal(settings_editor.settingsEdited, timeout=1000) as blocker:
        settings_editor.apply()
    settings = blocker.args[0]
    assert settings == SimulationSettings(start=0.0, stop=120.0, solver="rk4", rtol=1e-10,
                                          atol=1e-10, max_step=math.inf, output_interval=None,
                                          step=1e-3)
    assert ball.simulation.stop == 30  # untouched


def test_settings_editor_refuses_invalid_settings(settings_editor, qtbot):
    edits = settings_editor.number_edits
    edits["rtol"].setText("-1")
    with qtbot.assertNotEmitted(settings_editor.settingsEdited):
        assert settings_editor.apply() is False
    assert "rtol" in settings_editor.error_text()
    edits["rtol"].setText("1e-6")
    edits["stop"].setText("-5")
    with qtbot.assertNotEmitted(settings_editor.settingsEdited):
        assert settings_editor.apply() is False
    assert "stop time" in settings_editor.error_text()
    edits["stop"].setText("10")
    settings_editor.solver.setCurrentText("euler")  # needs a fixed step
    with qtbot.assertNotEmitted(settings_editor.settingsEdited):
        assert settings_editor.apply() is False
    assert "step" in settings_editor.error_text()
    edits["stop"].setText("ten")
    assert settings_editor.apply() is False
    assert "Stop" in settings_editor.error_text()


def test_parameters_table_add_edit_remove(settings_editor, qtbot):
    settings_editor.add_parameter("k", "2 * g")
    with qtbot.waitSignal(settings_editor.parametersEdited, timeout=1000) as blocker:
        assert settings_editor.apply()
    assert blocker.args[0] == {"x0": 10.0, "v0": 0.0, "g": 9.81, "mu": 0.9, "beta": 0.002,
                               "k": "2 * g"}
    settings_editor.add_parameter("k2", "k2 + 1")  # refers to itself
    with qtbot.assertNotEmitted(settings_editor.parametersEdited):
        assert settings_editor.apply() is False
    assert "cycle" in settings_editor.error_text()
    table = settings_editor.table
    table.selectRow(table.rowCount() - 1)
    settings_editor.remove_selected()
    settings_editor.add_parameter("g", "1")
    assert settings_editor.apply() is False
    assert "'g' is defined twice" in settings_editor.error_text()
    table.selectRow(table.rowCount() - 1)
    settings_editor.remove_selected()
    settings_editor.add_parameter("2pi", "6.28")
    assert settings_editor.apply() is False
    assert "2pi" in settings_editor.error_text()


def test_inspector_clear_shows_nothing(inspector, ball):
    inspector.show_block(ball, ball.block("gravity"))
    assert isinstance(inspector.fields["value"].widget, QLineEdit)
    inspector.clear()
    assert inspector.fields == {} and inspector.block_id() == ""
    assert inspector.apply() is False
