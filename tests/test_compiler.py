"""Compiler checks: every wiring or parameter mistake is a CompileError naming block and port."""
import pytest

from builders import block, diagram
import blocksim
from blocksim.compiler import compile_diagram
from blocksim.errors import CompileError


def lag(**changes):
    blocks = {"src": block("src", "Step", time=1.0), "sum": block("sum", "Sum", signs="+-"),
              "k": block("k", "Gain", k="1/tau"), "int": block("int", "Integrator"),
              "y": block("y", "Output")}
    wires = [("src.y", "sum.u1"), ("int.y", "sum.u2"), ("sum.y", "k.u"), ("k.y", "int.u"),
             ("int.y", "y.u")]
    for key, value in changes.items():
        if value is None:
            blocks.pop(key, None)
        else:
            blocks[key] = value
    return blocks, wires


def compile_error(blocks, wires, parameters=None) -> CompileError:
    d = diagram(list(blocks.values()) if isinstance(blocks, dict) else blocks, wires,
                parameters if parameters is not None else {"tau": 2.0})
    with pytest.raises(CompileError) as info:
        compile_diagram(d)
    return info.value


def test_valid_lag_compiles_with_one_state_and_one_log():
    blocks, wires = lag()
    model = compile_diagram(diagram(list(blocks.values()), wires, {"tau": 2.0}))
    assert model.n_states == 1
    assert [s.name for s in model.logged] == ["y"]
    assert model.block_ids == ("src", "sum", "k", "int", "y")


def test_unknown_block_type_names_block():
    blocks, wires = lag(k=block("k", "Gian", k=2))
    err = compile_error(blocks, wires)
    assert err.block == "k" and "unknown block type 'Gian'" in str(err)


def test_misspelled_port_names_block_port_and_known_ports():
    blocks, wires = lag()
    wires = [("src.y", "sum.u1"), ("int.y", "sum.u2"), ("sum.y", "k.uu"), ("k.y", "int.u"),
             ("int.y", "y.u")]
    err = compile_error(blocks, wires)
    assert err.block == "k" and err.port == "uu"
    assert "no input port 'uu'" in str(err) and "inputs: u" in str(err)


def test_wire_to_missing_block():
    blocks, wires = lag()
    err = compile_error(blocks, wires + [("nothere.y", "y.u")])
    assert "no block 'nothere'" in str(err)


def test_missing_wire_is_unconnected_input():
    blocks, wires = lag()
    err = compile_error(blocks, [w for w in wires if w[1] != "k.u"])
    assert (err.block, err.port) == ("k", "u") and "not connected" in str(err)


def test_doubly_driven_input():
    blocks, wires = lag()
    err = compile_error(blocks, wires + [("src.y", "k.u")])
    assert (err.block, err.port) == ("k", "u") and "driven twice" in str(err)


def test_unknown_parameter_lists_known_ones():
    blocks, wires = lag(k=block("k", "Gain", gain=2))
    err = compile_error(blocks, wires)
    assert err.block == "k" and "unknown parameter 'gain'" in str(err) and "k" in str(err)


def test_bad_choice_parameter():
    blocks, wires = lag(sum=block("sum", "Sum", signs="+*"))
    err = compile_error(blocks, wires)
    assert err.block == "sum" and "'+*'" in str(err)


def test_expression_calling_code_is_refused_with_block_named():
    blocks, wires = lag(k=block("k", "Gain", k="__import__('os').system('true')"))
    err = compile_error(blocks, wires)
    assert err.block == "k" and "parameter 'k'" in str(err)


def test_unknown_name_in_parameter_expression():
    blocks, wires = lag()
    err = compile_error(blocks, wires, parameters={})
    assert err.block == "k" and "tau" in str(err)


def test_integrator_initial_value_outside_limits():
    blocks, wires = lag(int=block("int", "Integrator", x0=2.0, upper=1.0))
    err = compile_error(blocks, wires)
    assert err.block == "int" and "outside the limits" in str(err)


def test_algebraic_loop_is_reported_as_the_cycle():
    blocks = [block("src", "Constant", value=1.0), block("sum1", "Sum", signs="+-"),
              block("gain1", "Gain", k=2.0), block("y", "Output")]
    wires = [("src.y", "sum1.u1"), ("sum1.y", "gain1.u"), ("gain1.y", "sum1.u2"),
             ("sum1.y", "y.u")]
    err = compile_error(blocks, wires)
    text = str(err)
    assert "algebraic loop" in text
    cycle = text.split("algebraic loop: ")[1]
    assert cycle in ("sum1.y -> gain1.u -> gain1.y -> sum1.u2",
                     "gain1.y -> sum1.u2 -> sum1.y -> gain1.u")


def test_state_port_of_reset_integrator_breaks_the_loop():
    # v := -mu * v(before reset): the state output has no feedthrough, so no loop.
    blocks = [block("acc", "Constant", value=-1.0), block("trig", "Constant", value=0.0),
              block("v", "ResetIntegrator"), block("mu", "Gain", k=-0.5), block("y", "Output")]
    wires = [("acc.y", "v.u"), ("trig.y", "v.reset"), ("v.state", "mu.u"), ("mu.y", "v.x0"),
             ("v.y", "y.u")]
    assert compile_diagram(diagram(blocks, wires)).n_states == 1


def test_subsystem_ports_are_flattened_and_errors_use_paths():
    inner = {"blocks": [{"id": "a", "type": "Inport"}, {"id": "g", "type": "Gain",
                                                          "params": {"k": 3}},
                        {"id": "b", "type": "Outport"}],
             "wires": [{"src": "a.y", "dst": "g.u"}, {"src": "g.y", "dst": "b.u"}]}
    blocks = [block("c", "Constant", value=2.0), dict(block("sub", "Subsystem"), diagram=inner),
              block("y", "Output")]
    blocks[1].pop("params")
    r = blocksim.simulate(diagram(blocks, [("c.y", "sub.a"), ("sub.b", "y.u")], stop=1.0))
    assert r["y"][-1] == 6.0
    inner["blocks"][1]["params"] = {"k": "nope"}
    with pytest.raises(CompileError) as info:
        compile_diagram(diagram(blocks, [("c.y", "sub.a"), ("sub.b", "y.u")]))
    assert info.value.block == "sub/g"


def test_generated_code_contains_no_file_text():
    blocks, wires = lag(k=block("k", "Gain", k="1/tau + 0*sqrt(4)"))
    model = compile_diagram(diagram(list(blocks.values()), wires, {"tau": 2.0}))
    assert "tau" not in model.code and "sqrt" not in model.code
    # the gain's value is a parameter slot of the generated module, not text
    slots = {k: v for k, v in model.functions["deriv"].__globals__.items() if k.startswith("_p")}
    assert 0.5 in slots.values() and "0.5" not in model.code


def test_width_mismatch_names_block_and_ports():
    blocks = [block("a", "Constant", value=[1.0, 2.0]), block("b", "Constant", value=[1.0, 2.0, 3.0]),
              block("sum", "Sum", signs="++"), block("y", "Output")]
    err = compile_error(blocks, [("a.y", "sum.u1"), ("b.y", "sum.u2"), ("sum.y", "y.u")])
    assert err.block == "sum" and "'u1' 2" in str(err) and "'u2' 3" in str(err)


@pytest.mark.parametrize("order", [("a", "xy", "b"), ("xy", "a", "b"), ("a", "b", "xy")])
def test_xy_graph_widths_do_not_depend_on_the_order_of_the_blocks(order):
    """Found by the fuzzer: with the source of 'y' after the XYGraph in the file, the first
    pass over the widths took its unknown width for 1 and refused the diagram."""
    blocks = {"a": block("a", "Constant", value=[1.0, 2.0]), "xy": block("xy", "XYGraph"),
              "b": block("b", "Constant", value=[3.0, 4.0])}
    compile_diagram(diagram([blocks[k] for k in order], [("a.y", "xy.x"), ("b.y", "xy.y")]))
    blocks["b"] = block("b", "Constant", value=[3.0, 4.0, 5.0])
    err = compile_error([blocks[k] for k in order], [("a.y", "xy.x"), ("b.y", "xy.y")])
    assert err.block == "xy" and "'x' (width 2) and 'y' (width 3)" in str(err)


@pytest.mark.parametrize("order", [("c", "s", "sum", "mg"), ("s", "sum", "mg", "c")])
def test_widths_do_not_depend_on_the_order_of_the_blocks(order):
    """Found by the fuzzer: with the vector source after the Sum and the MatrixGain in the
    file, the first pass handed the MatrixGain the Sum's width of that pass (1) and the
    diagram was refused; a real mismatch was reported with that width instead of 3."""
    def blocks(value):
        made = {"c": block("c", "Constant", value=value), "s": block("s", "Constant"),
                "sum": block("sum", "Sum"), "mg": block("mg", "MatrixGain", K=[1.0, 2.0])}
        return [made[k] for k in order] + [block("y", "Output")]
    wires = [("c.y", "sum.u1"), ("s.y", "sum.u2"), ("sum.y", "mg.u"), ("mg.y", "y.u")]
    compile_diagram(diagram(blocks([1.0, 2.0]), wires))
    err = compile_error(blocks([1.0, 2.0, 3.0]), wires)
    assert err.block == "mg" and "input 'u' has width 3" in str(err)


def _through_subsystems(extra_wire):
    """Constant -> sub -> sub2 -> Output, plus one wire that drives an input twice."""
    inner = {"blocks": [{"id": "u", "type": "Inport"}, {"id": "g", "type": "Gain"},
                        {"id": "y", "type": "Outport"}],
             "wires": [{"src": "u.y", "dst": "g.u"}, {"src": "g.y", "dst": "y.u"}]}
    blocks = [block("c", "Constant"), {"id": "sub", "type": "Subsystem", "diagram": inner},
              {"id": "sub2", "type": "Subsystem", "diagram": inner}, block("out", "Output")]
    return diagram(blocks, [("c.y", "sub.u"), ("sub.y", "sub2.u"), ("sub2.y", "out.u"),
                            extra_wire])


@pytest.mark.parametrize("extra, where, message", [
    (("sub.y", "out.u"), ("out", "u"), "input is driven twice (by sub2.y and sub.y)"),
    (("c.y", "sub2.u"), ("sub2", "u"), "input is driven twice (by sub.y and c.y)"),
])
def test_fan_in_names_ports_as_the_file_does(extra, where, message):
    with pytest.raises(CompileError) as info:
        compile_diagram(_through_subsystems(extra))
    assert (info.value.block, info.value.port) == where
    assert info.value.detail == message
    assert "__" not in str(info.value)


def test_fan_in_inside_a_subsystem_names_the_inner_path():
    inner = {"blocks": [{"id": "u", "type": "Inport"}, {"id": "g", "type": "Gain"},
                        {"id": "y", "type": "Outport"}],
             "wires": [{"src": "u.y", "dst": "g.u"}, {"src": "g.y", "dst": "y.u"},
                       {"src": "u.y", "dst": "y.u"}]}
    d = diagram([block("c", "Constant"), {"id": "sub", "type": "Subsystem", "diagram": inner},
                 block("out", "Output")], [("c.y", "sub.u"), ("sub.y", "out.u")])
    with pytest.raises(CompileError) as info:
        compile_diagram(d)
    assert str(info.value) == ("<diagram>, block 'sub/y' port 'u': input is driven twice "
                               "(by sub/g.y and sub/u.y)")
