"""Rules the importer follows where Simulink decides something implicitly: inherited rates
under a fixed-step solver, the automatic fixed step, sampled sources, commented-out blocks,
the built-in defaults of a file that saves none, Discrete Zero-Pole multiplied out."""
from __future__ import annotations

import numpy as np
import pytest

import blocksim
from slx_fixtures import B, L, Model, mdl_text, slx_bytes


def _import(tmp_path, model: Model, form: str = "slx"):
    path = tmp_path / f"m.{form}"
    if form == "slx":
        path.write_bytes(slx_bytes(model))
    else:
        path.write_text(mdl_text(model))
    return blocksim.import_simulink(path)


def test_inherited_rate_under_fixed_step_runs_at_the_step(tmp_path):
    model = Model([B("Clock", "t", 1), B("UnitDelay", "z", 2, {"SampleTime": "-1"}),
                   B("Outport", "y", 3, {"Port": "1"})],
                  [L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1"))],
                  config={"SolverName": "ode4", "SolverType": "Fixed-step", "FixedStep": "0.25",
                          "StopTime": "1"})
    result = _import(tmp_path, model)
    assert result.diagram.block("z").params["sample_time"] == 0.25
    entry = next(e for e in result.report.entries if e.block_id == "z")
    assert "fixed step 0.25" in entry.note
    res = blocksim.simulate(result.diagram)
    assert res["y"][-1] == pytest.approx(0.75)  # the clock one step earlier


def test_auto_fixed_step_is_the_fastest_sample_time(tmp_path):
    model = Model([B("Sin", "s", 1, {"SampleTime": "0.05"}), B("Outport", "y", 2, {"Port": "1"})],
                  [L(1, "out:1", (2, "in:1"))],
                  config={"SolverName": "ode1", "SolverType": "Fixed-step", "StopTime": "10"})
    result = _import(tmp_path, model, "mdl")
    settings = result.diagram.simulation
    assert (settings.solver, settings.step) == ("euler", 0.05)
    res = blocksim.simulate(result.diagram)  # a sampled sine: held between hits of 0.05
    for t in (0.07, 0.12, 3.33):  # sin(t) at 1 rad/s (Simulink's default), held at its hits
        k = np.searchsorted(res.time, t)
        assert res["y"][k] == pytest.approx(np.sin(np.floor(t / 0.05 + 1e-9) * 0.05), abs=1e-12)


def test_commented_blocks_are_dropped_and_newer_defaults_apply(tmp_path):
    model = Model([B("Constant", "c", 1), B("Gain", "g", 2, {"Commented": "on", "Gain": "5"}),
                   B("Gain", "h", 3), B("Outport", "y", 4, {"Port": "1"})],
                  [L(1, "out:1", (2, "in:1"), (3, "in:1")), L(3, "out:1", (4, "in:1"))],
                  config={"StopTime": "1"})
    result = _import(tmp_path, model)  # no defaults saved: Constant 1, Gain 1 (Simulink's)
    assert [e.status for e in result.report.entries if e.path == "g"] == ["skipped"]
    assert "g" not in {b.id for b in result.diagram.blocks}
    assert blocksim.simulate(result.diagram)["y"][-1] == 1.0


def test_discrete_zero_pole_is_multiplied_out(tmp_path):
    model = Model([B("Step", "s", 1, {"Time": "0"}),
                   B("DiscreteZeroPole", "zp", 2, {"Zeros": "[0.5]", "Poles": "[0.2 0.4]",
                                                   "Gain": "2", "SampleTime": "0.1"}),
                   B("Outport", "y", 3, {"Port": "1"})],
                  [L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1"))],
                  config={"StopTime": "1"})
    result = _import(tmp_path, model)
    block = result.diagram.block("zp")
    assert block.params["num"] == [2.0, -1.0]
    assert block.params["den"] == pytest.approx([1.0, -0.6, 0.08])
    assert block.params["powers"] == "z"


def test_an_inport_named_enable_in_an_enabled_subsystem_is_renamed(tmp_path):
    inner = Model([B("Inport", "enable", 21, {"Port": "1"}), B("EnablePort", "Enable", 22),
                   B("Gain", "g", 23, {"Gain": "3"}), B("Outport", "out", 24, {"Port": "1"})],
                  [L(21, "out:1", (23, "in:1")), L(23, "out:1", (24, "in:1"))])
    model = Model([B("Constant", "c", 1, {"Value": "2"}), B("Step", "on", 2, {"Time": "0.5"}),
                   B("SubSystem", "sub", 3, system=inner), B("Outport", "y", 4, {"Port": "1"})],
                  [L(1, "out:1", (3, "in:1")), L(2, "out:1", (3, "enable")),
                   L(3, "out:1", (4, "in:1"))], config={"StopTime": "1"})
    result = _import(tmp_path, model)
    sub = result.diagram.block("sub")
    assert {b.id for b in sub.subsystem.blocks} == {"enable_2", "g", "out"}
    res = blocksim.simulate(result.diagram)
    assert res["y"][0] == 0.0 and res["y"][-1] == 6.0


def test_scoped_goto_reaches_a_sibling_subsystem_through_its_visibility_block(tmp_path):
    sender = Model([B("Constant", "c", 11, {"Value": "4"}),
                    B("Goto", "g", 12, {"GotoTag": "speed", "TagVisibility": "scoped"})],
                   [L(11, "out:1", (12, "in:1"))])
    reader = Model([B("From", "f", 21, {"GotoTag": "speed"}), B("Outport", "o", 22, {"Port": "1"})],
                   [L(21, "out:1", (22, "in:1"))])
    model = Model([B("GotoTagVisibility", "vis", 1, {"GotoTag": "speed"}),
                   B("SubSystem", "A", 2, system=sender), B("SubSystem", "B", 3, system=reader),
                   B("Outport", "y", 4, {"Port": "1"})], [L(3, "out:1", (4, "in:1"))],
                  config={"StopTime": "1"})
    result = _import(tmp_path, model, "mdl")
    assert blocksim.simulate(result.diagram)["y"][-1] == 4.0
    assert [e.status for e in result.report.entries if e.path == "vis"] == ["skipped"]


def test_values_blocksim_cannot_take_become_parameters_to_set(tmp_path):
    model = Model([B("Constant", "c", 1, {"Value": "1+2i"}), B("Gain", "g", 2, {"Gain": "[1 2; 3]"}),
                   B("Outport", "y", 3, {"Port": "1"})],
                  [L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1"))], config={"StopTime": "1"})
    result = _import(tmp_path, model)
    assert result.diagram.parameters["c_Value"] == "" and "c_Value" in result.report.to_set
    assert result.diagram.parameters["g_Gain"] == ""
    with pytest.raises(blocksim.BlocksimError, match="--set w=1/0"):
        blocksim.import_simulink(tmp_path / "m.slx", overrides={"w": "1/0"})


def test_mask_with_plain_initialization_becomes_subsystem_parameters(tmp_path):
    inner = Model([B("Inport", "u", 21, {"Port": "1"}), B("Gain", "g", 22, {"Gain": "k2"}),
                   B("Outport", "y", 23, {"Port": "1"})],
                  [L(21, "out:1", (22, "in:1")), L(22, "out:1", (23, "in:1"))])
    masked = B("SubSystem", "scaled", 2, {"MaskInitialization": "k2 = 2*k; % doubled",
                                          "MaskVariables": "k=@1;", "MaskValueString": "1.5"},
               system=inner)
    coded = B("SubSystem", "coded", 3, {"MaskInitialization": "k2 = 2*k; plot(1)",
                                        "MaskVariables": "k=@1;", "MaskValueString": "1"},
              system=inner)
    model = Model([B("Constant", "c", 1, {"Value": "2"}), masked, coded,
                   B("Outport", "y", 4, {"Port": "1"}), B("Terminator", "t", 5)],
                  [L(1, "out:1", (2, "in:1"), (3, "in:1")), L(2, "out:1", (4, "in:1")),
                   L(3, "out:1", (5, "in:1"))], config={"StopTime": "1"})
    result = _import(tmp_path, model, "mdl")
    assert result.diagram.block("scaled").subsystem.parameters == {"k": 1.5, "k2": "2 * k"}
    status = {e.path: e.status for e in result.report.entries}
    assert status["scaled"] == "note" and status["coded"] == "placeholder"
    assert "plot(1)" in next(e.note for e in result.report.entries if e.path == "coded")
    result.diagram.blocks = [b for b in result.diagram.blocks if b.id != "coded"]
    result.diagram.wires = [w for w in result.diagram.wires if "coded" not in str(w.dst)]
    assert blocksim.simulate(result.diagram)["y"][-1] == 6.0


def test_switch_and_saturation_at_a_discrete_rate_act_within_the_hit(tmp_path):
    """Step (at 0.2) -> ZOH 0.1 -> Saturation 0.5 -> Unit Delay: Simulink's delay holds the
    clipped 0.5 from t = 0.3 on; a Switch on the held step picks its new input at the hit."""
    model = Model([B("Step", "s", 1, {"Time": "0.2"}),
                   B("ZeroOrderHold", "zoh", 2, {"SampleTime": "0.1"}),
                   B("Saturate", "sat", 3, {"UpperLimit": "0.5", "LowerLimit": "-0.5"}),
                   B("UnitDelay", "delay", 4, {"SampleTime": "0.1"}),
                   B("Constant", "a", 5, {"Value": "7"}), B("Constant", "b", 6, {"Value": "9"}),
                   B("Switch", "sw", 7, {"Criteria": "u2 > Threshold", "Threshold": "0.25"}),
                   B("UnitDelay", "delay2", 8, {"SampleTime": "0.1"}),
                   B("Outport", "y", 9, {"Port": "1"}), B("Outport", "y2", 10, {"Port": "2"})],
                  [L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1"), (7, "in:2")),
                   L(3, "out:1", (4, "in:1")), L(4, "out:1", (9, "in:1")),
                   L(5, "out:1", (7, "in:1")), L(6, "out:1", (7, "in:3")),
                   L(7, "out:1", (8, "in:1")), L(8, "out:1", (10, "in:1"))],
                  config={"StopTime": "0.5"})
    result = _import(tmp_path, model)
    assert result.diagram.block("sat").type == "Expression"
    assert result.diagram.block("sw").params["formula"] == "u1 if u2 > 0.25 else u3"
    res = blocksim.simulate(result.diagram, output_interval=0.05)
    at = {round(t, 3): (y, y2) for t, y, y2 in zip(res.time, res["y"], res["y2"])}
    assert at[0.35] == (0.5, 7.0)   # the hit at 0.2 saw the clipped value and the new branch
    assert at[0.25] == (0.0, 9.0)


def test_dead_zone_and_comparison_at_a_discrete_rate(tmp_path):
    model = Model([B("Step", "s", 1, {"Time": "0.2", "After": "-2"}),
                   B("ZeroOrderHold", "zoh", 2, {"SampleTime": "0.1"}),
                   B("DeadZone", "dz", 3, {"LowerValue": "-0.5", "UpperValue": "0.5"}),
                   B("Abs", "abs", 4), B("Constant", "c", 5, {"Value": "1"}),
                   B("RelationalOperator", "rel", 6, {"Operator": ">"}),
                   B("UnitDelay", "d1", 7, {"SampleTime": "0.1"}),
                   B("UnitDelay", "d2", 8, {"SampleTime": "0.1"}),
                   B("Outport", "y", 9, {"Port": "1"}), B("Outport", "y2", 10, {"Port": "2"})],
                  [L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1")),
                   L(3, "out:1", (4, "in:1")), L(4, "out:1", (6, "in:1"), (7, "in:1")),
                   L(5, "out:1", (6, "in:2")), L(6, "out:1", (8, "in:1")),
                   L(7, "out:1", (9, "in:1")), L(8, "out:1", (10, "in:1"))],
                  config={"StopTime": "0.5"})
    result = _import(tmp_path, model, "mdl")
    assert {result.diagram.block(b).type for b in ("dz", "abs", "rel")} == {"Expression"}
    res = blocksim.simulate(result.diagram, output_interval=0.05)
    at = {round(t, 3): (y, y2) for t, y, y2 in zip(res.time, res["y"], res["y2"])}
    assert at[0.35] == (1.5, 1.0) and at[0.25] == (0.0, 0.0)


def test_model_workspace_data_part_gives_variables(tmp_path):
    """R2019b on: simulink/modelWorkspace.mxarray, MAT records of one unnamed struct whose
    fields are the variables (written here from scipy's MAT-file, as Simulink frames it)."""
    import io

    import scipy.io
    buf = io.BytesIO()
    scipy.io.savemat(buf, {"ws": {"Kp": 2.5, "v": np.array([1.0, 2.0])}})
    mat = buf.getvalue()
    unnamed = bytearray(mat[128:])
    assert unnamed[40:48] == b"\x01\x00\x02\x00ws\x00\x00"
    unnamed[40:48] = b"\x01\x00\x00\x00\x00\x00\x00\x00"
    mxarray = mat[124:128] + bytes(4) + bytes(unnamed)
    model = Model([B("Constant", "c", 1, {"Value": "Kp*v(2)"}), B("Outport", "y", 2, {"Port": "1"})],
                  [L(1, "out:1", (2, "in:1"))], config={"StopTime": "1"})
    path = tmp_path / "ws.slx"
    path.write_bytes(slx_bytes(model, extra={"simulink/modelWorkspace.mxarray": mxarray}))
    result = blocksim.import_simulink(path)
    assert result.report.workspace == {"Kp": "model workspace", "v": "model workspace"}
    assert blocksim.simulate(result.diagram)["y"][-1] == 5.0
    path.write_bytes(slx_bytes(model, extra={"simulink/modelworkspace.mat": mat}))  # before R2019b
    assert blocksim.import_simulink(path).diagram.parameters["Kp"] == 2.5


def test_to_workspace_keeps_its_variable_name_over_a_block_of_that_name(tmp_path):
    model = Model([B("Step", "r", 1), B("ToWorkspace", "To Workspace", 2, {"VariableName": "r"})],
                  [L(1, "out:1", (2, "in:1"))], config={"StopTime": "2"})
    result = _import(tmp_path, model)
    assert {(b.id, b.type) for b in result.diagram.blocks} == {("r_2", "Step"), ("r", "Output")}
    assert blocksim.simulate(result.diagram)["r"][-1] == 1.0


def test_rotated_and_flipped_blocks_keep_their_drawn_box(tmp_path):
    model = Model([B("Gain", "down", 1, {"BlockRotation": "90"}, (100, 40, 130, 100)),
                   B("Gain", "back", 2, {"BlockMirror": "on"}, (200, 40, 260, 70)),
                   B("Gain", "old", 3, {"Orientation": "up"}, (300, 40, 330, 100))], [],
                  config={"StopTime": "1"})
    blocks = {b.id: b.layout for b in _import(tmp_path, model).diagram.blocks if b.layout}
    assert blocks["down"]["rotation"] == 90 and (blocks["down"]["width"],
                                                 blocks["down"]["height"]) == (90, 45)
    assert blocks["back"]["flip"] is True and "rotation" not in blocks["back"]
    assert blocks["old"]["rotation"] == 270


def test_a_stiff_model_gets_radau_with_the_reason(tmp_path):
    model = Model([B("Step", "s", 1, {"Time": "0"}),
                   B("TransferFcn", "fast", 2, {"Denominator": "[1e-5 1]"}),
                   B("TransferFcn", "slow", 3, {"Denominator": "[1 1]"}),
                   B("Outport", "y", 4, {"Port": "1"})],
                  [L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1")),
                   L(3, "out:1", (4, "in:1"))],
                  config={"SolverName": "VariableStepAuto", "StopTime": "20"})
    result = _import(tmp_path, model)
    assert result.diagram.simulation.solver == "radau"
    assert any("mode decaying at 1e+05/s" in line for line in result.report.solver)
    res = blocksim.simulate(result.diagram, rtol=1e-8, atol=1e-10)
    assert res["y"][-1] == pytest.approx(1 - np.exp(-20), abs=1e-6)
    model.blocks[1].params["Denominator"] = "[0.1 1]"  # not stiff: dopri5 stays
    assert _import(tmp_path, model).diagram.simulation.solver == "dopri5"


def test_algebraic_loops_are_closed_by_a_constraint(tmp_path):
    """y = 3 (u - y) (linear) and, inside a subsystem, w = u - w^3 (nonlinear): Simulink
    solves both; the import closes each with an AlgebraicConstraint."""
    from scipy.optimize import brentq
    inner = Model([B("Inport", "u", 21, {"Port": "1"}), B("Sum", "e", 22, {"Inputs": "+-"}),
                   B("Fcn", "cube", 23, {"Expr": "u^3"}), B("Outport", "w", 24, {"Port": "1"})],
                  [L(21, "out:1", (22, "in:1")), L(22, "out:1", (23, "in:1"), (24, "in:1")),
                   L(23, "out:1", (22, "in:2"))])
    model = Model([B("Sin", "u", 1), B("Sum", "s", 2, {"Inputs": "+-"}),
                   B("Gain", "k", 3, {"Gain": "3"}), B("SubSystem", "cubic", 4, system=inner),
                   B("Outport", "y", 5, {"Port": "1"}), B("Outport", "w", 6, {"Port": "2"})],
                  [L(1, "out:1", (2, "in:1"), (4, "in:1")), L(2, "out:1", (3, "in:1")),
                   L(3, "out:1", (2, "in:2"), (5, "in:1")), L(4, "out:1", (6, "in:1"))],
                  config={"StopTime": "3", "RelTol": "1e-10", "AbsTol": "1e-12"})
    result = _import(tmp_path, model)
    assert sum("algebraic loop" in w for w in result.report.warnings) == 2
    res = blocksim.simulate(result.diagram, output_interval=0.1)
    u = np.sin(res.time)
    assert np.max(np.abs(res["y"] - 0.75 * u)) < 1e-10
    exact = np.array([brentq(lambda w, a=a: w + w ** 3 - a, -2, 2, xtol=1e-14) for a in u])
    assert np.max(np.abs(res["w"] - exact)) < 1e-9


def test_integer_delay_of_n_samples_is_a_chain(tmp_path):
    link = B("Reference", "Integer Delay", 2, {"SourceBlock": "simulink/Discrete/Integer Delay",
                                               "NumDelays": "3", "vinit": "-1",
                                               "SampleTime": "0.5"})
    model = Model([B("Clock", "t", 1), link, B("Outport", "y", 3, {"Port": "1"})],
                  [L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1"))],
                  config={"StopTime": "3"}, )
    result = _import(tmp_path, model, "mdl")
    res = blocksim.simulate(result.diagram, output_interval=0.25)
    at = dict(zip(np.round(res.time, 3), res["y"]))
    assert at[1.25] == -1.0 and at[1.75] == 0.0 and at[2.75] == 1.0  # t three hits before
