"""operating_point (trim) and steady_state: conditions, held values, sampled fixed points,
modes, initial values, and the failures (no point, no convergence, nothing to solve)."""
import copy

import numpy as np
import pytest

import blocksim
from blocksim.analysis import AnalysisError, OperatingPointError
from builders import DIAGRAMS, block, diagram


def square(saturate=None):
    """x' = -x^2 + u with u a top-level Inport (through a Saturation if asked)."""
    blocks = [block("u", "Inport"), block("f", "Expression", inputs="x, u",
                                           formula="-x**2 + u"),
              block("x", "Integrator", x0=0.5), block("y", "Output")]
    wires = [("f.y", "x.u"), ("x.y", "f.x"), ("x.y", "y.u")]
    if saturate is None:
        wires.append(("u.y", "f.u"))
    else:
        blocks.append(block("sat", "Saturation", lower=-saturate, upper=saturate))
        wires += [("u.y", "sat.u"), ("sat.y", "f.u")]
    return diagram(blocks, wires, stop=1.0)


def test_held_input_gives_the_state():
    op = blocksim.operating_point(square(), inputs={"u": 4.0})
    assert op.states["x"] == pytest.approx(2.0, abs=1e-12)
    assert op.inputs == {"u": 4.0} and op.converged
    assert op.x.tolist() == [op.states["x"]]


def test_output_condition_frees_the_input():
    op = blocksim.operating_point(square(), outputs={"y": 3.0})
    assert op.inputs["u"] == pytest.approx(9.0, abs=1e-10)
    assert op.outputs["y"] == pytest.approx(3.0, abs=1e-12)
    assert "output y" in op.residuals


def test_held_state_and_derivative_targets():
    op = blocksim.operating_point(square(), states={"x": 2.0}, derivatives={"x": 1.0})
    assert op.inputs["u"] == pytest.approx(5.0, abs=1e-10)  # -4 + u = 1


def test_no_operating_point_names_the_condition_and_keeps_the_best_point():
    with pytest.raises(OperatingPointError) as info:
        blocksim.operating_point(square(), inputs={"u": -1.0})  # -x^2 - 1 = 0: none
    message = str(info.value)
    assert "\n" not in message and "'d x/dt' is off by" in message
    point = info.value.point
    assert not point.converged and abs(point.residuals["d x/dt"]) >= 1.0 - 1e-9
    assert "does not hold" in point.report()
    unchecked = blocksim.operating_point(square(), inputs={"u": -1.0}, check=False)
    assert not unchecked.converged


def test_saturation_mode_is_settled_at_the_solution():
    # asking for x = 3 needs u = 9, beyond the limit 5: no point, found with the
    # saturation latched at its limit (its gain 0), which the report shows
    with pytest.raises(OperatingPointError) as info:
        blocksim.operating_point(square(saturate=5.0), outputs={"y": 3.0})
    assert info.value.point.modes["sat"] in ("-+", "+-")
    inside = blocksim.operating_point(square(saturate=5.0), outputs={"y": 2.0})
    assert inside.inputs["u"] == pytest.approx(4.0, abs=1e-10)
    assert inside.modes["sat"] == "++"


def test_sampled_fixed_point():
    d = blocksim.load(DIAGRAMS / "pi_1khz.json")
    op = blocksim.operating_point(d)
    assert op.states["plant"] == pytest.approx(1.0, abs=1e-12)
    assert op.outputs["u"] == pytest.approx(1.0, abs=1e-12)
    assert op.discrete["pi.d[3]"] == 0.0  # the first-hit flag cleared
    assert any(name.endswith("(fixed point)") for name in op.residuals)
    assert op.initial_value_changes(d) == [("pi", "initial_integrator",
                                            pytest.approx(1.0, abs=1e-12))]
    assert op.unwritten == ["plant"]  # a TransferFunction starts at rest


def test_apply_to_writes_initial_values_and_a_run_stays_there():
    d = blocksim.load(DIAGRAMS / "dc_motor_pid.json")
    op = blocksim.operating_point(d)
    changed = copy.deepcopy(d)
    made = op.apply_to(changed)
    assert ("speed", "x0", pytest.approx(50.0)) in made
    assert op.initial_value_changes(d) == made and d.block("speed").params.get("x0", 0) == 0
    run = blocksim.simulate(changed, stop_time=4.0)  # before the first set-point step
    assert np.max(np.abs(run["w"] - 50.0)) < 1e-9


def test_steady_state_by_simulation():
    d = blocksim.load(DIAGRAMS / "pid_trim_square.json")
    point = blocksim.steady_state(d)
    assert point.method == "simulation" and point.converged
    assert point.states["plant"] == pytest.approx(1.0, abs=1e-8)
    with pytest.raises(OperatingPointError, match="has not settled by t = 1"):
        blocksim.steady_state(d, stop_time=1.0)
    # its result is a good guess for trim
    trimmed = blocksim.operating_point(d, guess=point)
    assert trimmed.states["pid[0]"] == pytest.approx(1.0, abs=1e-12)


def test_a_model_with_no_states_has_no_operating_point_to_find():
    d = diagram([block("c", "Constant"), block("y", "Output")], [("c.y", "y.u")], stop=1.0)
    with pytest.raises(AnalysisError, match="no states, no inputs"):
        blocksim.operating_point(d)


def test_unknown_names_are_one_clear_line():
    with pytest.raises(AnalysisError, match=r"unknown state 'z' \(the model's states: x\)"):
        blocksim.operating_point(square(), states={"z": 1.0})
    with pytest.raises(AnalysisError, match="unknown input"):
        blocksim.operating_point(square(), inputs={"v": 1.0})
    with pytest.raises(AnalysisError, match="unknown analysis point 'yy'.*did you mean 'y'"):
        blocksim.operating_point(square(), outputs={"yy": 1.0})


def test_compiled_model_from_a_file_is_read_again_with_its_parameters():
    model = blocksim.compile(blocksim.load(DIAGRAMS / "pid_trim_square.json"),
                             params={"setpoint": 2.0})
    op = blocksim.operating_point(model)
    assert op.states["plant"] == pytest.approx(2.0, abs=1e-12)
    built = blocksim.compile(diagram([block("c", "Constant"), block("i", "Integrator")],
                                     [("c.y", "i.u")], stop=1.0))
    with pytest.raises(AnalysisError, match="pass its Diagram"):
        blocksim.operating_point(built)


def test_a_formula_failing_at_the_guess_names_its_block():
    d = diagram([block("f", "Expression", inputs="x", formula="-log(x)"),
                 block("x", "Integrator", x0=-1.0), block("y", "Output")],
                [("x.y", "f.x"), ("f.y", "x.u"), ("x.y", "y.u")], stop=1.0)
    with pytest.raises(AnalysisError) as info:
        blocksim.operating_point(d)
    assert "block 'f'" in str(info.value) and "\n" not in str(info.value)


def test_an_operating_point_of_another_model_is_refused():
    op = blocksim.operating_point(square(), inputs={"u": 4.0})
    other = blocksim.load(DIAGRAMS / "dc_motor_pid.json")
    with pytest.raises(AnalysisError, match="unknown state of this operating point 'x'"):
        blocksim.linearize(other, ["setpoint"], ["w"], at=op)
