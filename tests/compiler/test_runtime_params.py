"""Runtime parameters (`CompiledModel.with_params`): a compiled model with new values is the
model a compile with those overrides gives (bit for bit, in its values and its results),
a change of structure is refused naming the parameter and the block, and bad values get
the compile's own messages."""
import numpy as np
import pytest
from builders import DIAGRAMS, block, diagram

import blocksim
from blocksim.expressions import param_slots
from blocksim.compiler import compile_diagram
from blocksim.errors import CompileError, StructuralParameterError


def slot_values(model) -> dict:
    names = model.functions["deriv"].__globals__
    return {k: v for k, v in names.items() if param_slots.SLOT.fullmatch(k)}


def assert_same_model(a, b) -> None:
    """The values a run reads are the same: slots, initial values, events' parameters."""
    assert a.code == b.code and a.structure_key == b.structure_key
    assert slot_values(a) == slot_values(b)
    for name in ("x0", "m0", "zc_direction"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert (a.state_tolerance is None) == (b.state_tolerance is None)
    if a.state_tolerance is not None:
        assert np.array_equal(a.state_tolerance, b.state_tolerance, equal_nan=True)
    assert [s.p.as_dict().keys() for s in a.time_events] == \
        [s.p.as_dict().keys() for s in b.time_events]
    for sa, sb in zip(a.time_events, b.time_events):
        for key, value in sa.p.as_dict().items():
            assert np.array_equal(value, sb.p[key]), key


def assert_same_results(a, b) -> None:
    assert np.array_equal(a.time, b.time)
    assert list(a.signals) == list(b.signals)
    for name in a.signals:
        assert np.array_equal(a[name], b[name], equal_nan=True), name
    assert [(e.time, e.block, e.kind) for e in a.events] == \
        [(e.time, e.block, e.kind) for e in b.events]
    assert a.status == b.status


def check_equal_to_compile(d, values, **run):
    base = compile_diagram(d)
    new = base.with_params(values)
    fresh = compile_diagram(d, values)
    assert_same_model(new, fresh)
    assert_same_results(blocksim.simulate(new, **run), blocksim.simulate(fresh, **run))
    return base, new


BALL = blocksim.load(DIAGRAMS / "bouncing_ball.json")


@pytest.mark.parametrize("values", [{"mu": 0.7}, {"v0": 4.0}, {"x0": 2.5}, {"g": "2 * 4.9"},
                                    {"mu": "0.5 + 0.25", "beta": 0.0}])
def test_ball_with_new_values_is_the_compile_with_them(values):
    base, new = check_equal_to_compile(BALL, values, stop_time=8.0)
    assert new.structure_key == base.structure_key
    assert new.functions["deriv"].__code__ is base.functions["deriv"].__code__  # no new code


def test_ball_values_reach_the_run():
    """Not only equal to a compile: the new restitution is the ratio of bounce speeds."""
    model = compile_diagram(BALL).with_params({"mu": 0.5, "beta": 0.0})
    r = blocksim.simulate(model, stop_time=4.0)
    t = [e.time for e in r.events_of("reset")[:3]]
    # without drag, each flight lasts mu times the one before
    assert (t[2] - t[1]) / (t[1] - t[0]) == pytest.approx(0.5, rel=1e-8)
    assert t[0] == pytest.approx(np.sqrt(2 * 10.0 / 9.81), rel=1e-9)


def test_chained_values_and_unchanged_values():
    base = compile_diagram(BALL)
    assert base.with_params({"mu": 0.9}) is base  # the value it has: nothing to change
    chained = base.with_params({"mu": 0.6}).with_params({"v0": 1.0})
    assert_same_model(chained, compile_diagram(BALL, {"mu": 0.6, "v0": 1.0}))
    back = chained.with_params({"mu": 0.9, "v0": 0.0})
    assert slot_values(back) == slot_values(base)
    assert np.array_equal(back.x0, base.x0)


def test_simulate_a_compiled_model_with_params():
    model = compile_diagram(BALL)
    a = blocksim.simulate(model, params={"mu": 0.8}, stop_time=5.0)
    b = blocksim.simulate(BALL, params={"mu": 0.8}, stop_time=5.0)
    assert_same_results(a, b)


@pytest.mark.parametrize("name, values, stop", [
    ("diode_shockley.json", {"IS": 2e-8, "UT": 0.03}, None),  # an Expression's formula
    ("dc_motor_pid.json", {"Kp": 6.0, "Kd": 0.1, "Vmax": 20.0}, 1.0),
    ("gearbox_bus.json", {"m": 1000.0, "torque_map": [[50.0, 140.0, 230.0]] * 5}, 10.0),
    ("math003.json", {"x4_max": 2.0}, None),
    ("zoh_loop.json", {"K": 5.0}, None),
    ("pathsim_discrete_pid.json", {"t_on": 25, "Kp": 2.0}, 40.0),
    ("rotating_pendulum.json", {"omega0": 14.0, "phi0": "pi / 3"}, 2.0),
    ("multi_clock.json", {"f": 0.3}, None),
])
def test_example_diagrams(name, values, stop):
    d = blocksim.load(DIAGRAMS / name)
    run = {"stop_time": stop} if stop else {}
    check_equal_to_compile(d, values, **run)


def lag_with(blk: dict, parameters: dict) -> "blocksim.diagram.model.Diagram":
    return diagram([blk, block("int", "Integrator"), block("y", "Output")],
                   [("src.y", "int.u"), ("int.y", "y.u")], parameters, stop=2.0)


def test_step_time_is_a_time_event_parameter():
    d = lag_with(block("src", "Step", time="T", after="A"), {"T": 0.5, "A": 1.0})
    base, new = check_equal_to_compile(d, {"T": 0.75, "A": -2.0})
    assert new.time_events[0].p.time == 0.75 and base.time_events[0].p.time == 0.5
    r = blocksim.simulate(new)
    assert [e.time for e in r.events if e.block == "src"] == [0.75]
    assert r["y"][-1] == pytest.approx(-2.0 * (2.0 - 0.75), rel=1e-9)


def test_integrator_initial_values():
    d = diagram([block("c", "Constant", value=1.0), block("int", "Integrator", x0="x0"),
                 block("y", "Output")], [("c.y", "int.u"), ("int.y", "y.u")],
                {"x0": [1.0, 2.0]}, stop=1.0)
    _, new = check_equal_to_compile(d, {"x0": "[-1, 5]"})
    assert list(new.x0) == [-1.0, 5.0]
    with pytest.raises(StructuralParameterError, match="'x0'") as info:
        compile_diagram(d).with_params({"x0": [1.0, 2.0, 3.0]})  # its length sets the width
    assert info.value.block == "int"


def test_lookup_table_values():
    blocks = [block("t", "Clock"), block("lut", "LookupTable1D", breakpoints="bp", table="tab"),
              block("y", "Output")]
    d = diagram(blocks, [("t.y", "lut.u"), ("lut.y", "y.u")],
                {"bp": [0.0, 1.0, 2.0], "tab": [0.0, 2.0, 1.0]}, stop=3.0, output_interval=0.25)
    _, new = check_equal_to_compile(d, {"tab": [1.0, -1.0, 4.0], "bp": [0.0, 0.5, 2.5]})
    r = blocksim.simulate(new)
    assert r["y"][list(r.time).index(0.25)] == pytest.approx(0.0)  # halfway from 1 to -1
    with pytest.raises(StructuralParameterError, match="'bp', 'tab'|'tab'"):
        compile_diagram(d).with_params({"bp": [0.0, 1.0, 2.0, 3.0],
                                        "tab": [0.0, 2.0, 1.0, 0.0]})


def test_transfer_function_coefficients():
    d = lag_with(block("src", "Step", time=0.0), {})
    d = diagram([block("src", "Step", time=0.0),
                 block("tf", "TransferFunction", num="[w * w]", den="[1, 2 * z * w, w * w]"),
                 block("y", "Output")], [("src.y", "tf.u"), ("tf.y", "y.u")],
                {"w": 2.0, "z": 0.5}, stop=3.0)
    check_equal_to_compile(d, {"w": 3.0, "z": 0.2})


def test_subsystem_parameters_follow_the_diagram_ones():
    inner = {"parameters": {"k2": "2 * k"},
             "blocks": [{"id": "a", "type": "Inport"},
                        {"id": "g", "type": "Gain", "params": {"k": "k2"}},
                        {"id": "b", "type": "Outport"}],
             "wires": [{"src": "a.y", "dst": "g.u"}, {"src": "g.y", "dst": "b.u"}]}
    blocks = [block("c", "Constant", value=3.0), {"id": "sub", "type": "Subsystem",
                                                   "diagram": inner}, block("y", "Output")]
    d = diagram(blocks, [("c.y", "sub.a"), ("sub.b", "y.u")], {"k": 1.0}, stop=1.0)
    _, new = check_equal_to_compile(d, {"k": 5.0})
    assert blocksim.simulate(new)["y"][-1] == 30.0


def test_enabled_subsystem_reset_values():
    inner = {"blocks": [{"id": "a", "type": "Inport"},
                        {"id": "i", "type": "Integrator", "params": {"x0": "x0"}},
                        {"id": "b", "type": "Outport"}],
             "wires": [{"src": "a.y", "dst": "i.u"}, {"src": "i.y", "dst": "b.u"}]}
    blocks = [block("c", "Constant", value=1.0), block("en", "Sine", frequency=1.0),
              {"id": "sub", "type": "EnabledSubsystem",
               "params": {"states_when_enabling": "reset"}, "diagram": inner},
              block("y", "Output")]
    d = diagram(blocks, [("c.y", "sub.a"), ("en.y", "sub.enable"), ("sub.b", "y.u")],
                {"x0": 1.0}, stop=2.5)
    check_equal_to_compile(d, {"x0": -4.0})


@pytest.mark.parametrize("blk, parameters, values, name", [
    (block("src", "Constant", value="K"), {"K": 2.0}, {"K": "[1, 2, 3]"}, "K"),
    (block("src", "Step", time=0.5, after="A"), {"A": 1.0}, {"A": [1.0, 2.0]}, "A"),
])
def test_a_width_change_is_structural(blk, parameters, values, name):
    model = compile_diagram(lag_with(blk, parameters))
    with pytest.raises(StructuralParameterError) as info:
        model.with_params(values)
    assert f"'{name}'" in str(info.value) and info.value.block == "src"
    assert isinstance(info.value, CompileError)


def test_a_gain_from_scalar_to_vector_is_structural():
    d = diagram([block("c", "Constant", value=1.0), block("g", "Gain", k="k"),
                 block("y", "Output")], [("c.y", "g.u"), ("g.y", "y.u")], {"k": 2.0}, stop=1.0)
    with pytest.raises(StructuralParameterError, match="parameter 'k'.*widths") as info:
        compile_diagram(d).with_params({"k": "[1, 2, 3]"})
    assert info.value.block == "g"
    # over a 3-wide input the output is 3 wide either way: the same code, new values
    d.blocks[0].params["value"] = [1.0, 2.0, 3.0]
    check_equal_to_compile(d, {"k": "[1, 2, 3]"})


def test_a_unit_or_zero_coefficient_that_a_block_leaves_out_is_structural():
    """Linear blocks leave out terms with coefficient 0 and factors 1 (`_combo`): a value
    that makes one appear or vanish changes their code."""
    d = blocksim.load(DIAGRAMS / "pathsim_discrete_pid.json")
    model = compile_diagram(d)
    with pytest.raises(StructuralParameterError, match="'Kp'") as info:
        model.with_params({"Kp": 1.0})
    assert info.value.block == "pid"
    check_equal_to_compile(d, {"Kp": 1.25}, stop_time=30.0)


def test_a_limit_that_appears_is_structural():
    """-inf means no limit: a finite one adds a mode and zero crossings to the code."""
    d = lag_with(block("src", "Constant", value=-1.0), {"L": float("-inf")})
    d.blocks[1].params["lower"] = "L"
    model = compile_diagram(d)
    with pytest.raises(StructuralParameterError, match="'L'") as info:
        model.with_params({"L": 0.0})
    assert info.value.block == "int"


def test_a_sample_time_is_structural():
    d = diagram([block("c", "Sine"), block("z", "ZeroOrderHold", sample_time="Ts"),
                 block("y", "Output")], [("c.y", "z.u"), ("z.y", "y.u")], {"Ts": 0.1}, stop=1.0)
    with pytest.raises(StructuralParameterError, match="'Ts'.*sample time") as info:
        compile_diagram(d).with_params({"Ts": 0.2})
    assert info.value.block == "z"


def test_a_fixed_delay_is_structural():
    model = compile_diagram(blocksim.load(DIAGRAMS / "dde_delay.json"))
    with pytest.raises(StructuralParameterError, match="'tau'"):
        model.with_params({"tau": 2.0})


def test_structure_key():
    d = diagram([block("c", "Constant", value="v"), block("y", "Output")], [("c.y", "y.u")],
                {"v": 1.0}, stop=1.0)
    one, two = compile_diagram(d), compile_diagram(d, {"v": 2.0})
    assert one.structure_key == two.structure_key
    assert compile_diagram(d, {"v": [1.0, 2.0]}).structure_key != one.structure_key


@pytest.mark.parametrize("values", [{"x0": "1/0"}, {"g": "nan"}, {"mu": "mu"}, {"nope": 1.0},
                                    {"v0": "[1, 2"}, {"x0": "sqrt(-1)"}])
def test_bad_values_get_the_compile_messages(values):
    with pytest.raises(CompileError) as compiling:
        compile_diagram(BALL, values)
    with pytest.raises(CompileError) as changing:
        compile_diagram(BALL).with_params(values)
    assert str(changing.value) == str(compiling.value)
    assert not isinstance(changing.value, StructuralParameterError)


def test_a_block_check_gets_the_compile_message():
    d = lag_with(block("src", "Constant", value=1.0), {"lo": 0.0, "hi": 1.0})
    d.blocks[1].params.update(lower="lo", upper="hi", x0=0.5)
    with pytest.raises(CompileError) as compiling:
        compile_diagram(d, {"lo": 2.0})
    with pytest.raises(CompileError) as changing:
        compile_diagram(d).with_params({"lo": 2.0})
    assert str(changing.value) == str(compiling.value)
    assert "lower limit" in str(changing.value)


def test_the_model_a_call_started_from_is_unchanged():
    base = compile_diagram(BALL)
    before = (slot_values(base), base.x0.copy())
    base.with_params({"mu": 0.1, "x0": 1.0})
    assert slot_values(base) == before[0] and np.array_equal(base.x0, before[1])
    with pytest.raises(CompileError):
        base.with_params({"x0": "1/0"})
    assert_same_results(blocksim.simulate(base, stop_time=3.0),
                        blocksim.simulate(compile_diagram(BALL), stop_time=3.0))


def test_state_tolerances():
    d = diagram([block("c", "Sine", frequency=1.0), block("a", "Integrator", atol="A"),
                 block("b", "Integrator"), block("y", "Output")],
                [("c.y", "a.u"), ("a.y", "b.u"), ("b.y", "y.u")], {"A": 1e-8}, stop=2.0,
                atol=1e-6)
    _, new = check_equal_to_compile(d, {"A": 1e-10})
    assert new.state_tolerance[0, 0] == 1e-10 and np.isnan(new.state_tolerance[1, 0])
    check_equal_to_compile(d, {"A": "inf"})  # out of the error control
    # no tolerance declared any more: the run's atol, as a compile without any
    a = blocksim.simulate(compile_diagram(d).with_params({"A": 0.0}))
    assert_same_results(a, blocksim.simulate(compile_diagram(d, {"A": 0.0})))


def test_a_conditional_subsystems_held_output_is_compiled_in():
    inner = {"blocks": [{"id": "a", "type": "Inport"},
                        {"id": "b", "type": "Outport", "params": {"initial": "y0"}}],
             "wires": [{"src": "a.y", "dst": "b.u"}]}
    blocks = [block("c", "Constant", value=1.0), block("en", "Sine", frequency=1.0),
              {"id": "sub", "type": "EnabledSubsystem", "diagram": inner},
              block("y", "Output")]
    d = diagram(blocks, [("c.y", "sub.a"), ("en.y", "sub.enable"), ("sub.b", "y.u")],
                {"y0": 0.0}, stop=1.0)
    with pytest.raises(StructuralParameterError, match="'y0'") as info:
        compile_diagram(d).with_params({"y0": 2.0})
    assert info.value.block.startswith("sub")
