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
