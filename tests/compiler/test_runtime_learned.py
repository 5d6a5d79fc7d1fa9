"""`with_params` asks a block again only what changed values can change (what each of its
methods reads is learned once per model, `compiler.param_reads`), and a model from
`with_params` reuses the engine's functions another model of its structure generated
(`compiler.shared_derived`): many calls on one model, as a sweep makes them, still give
exactly the model and the results of a compile with the values baked in."""
import numpy as np
import pytest
from builders import DIAGRAMS, block, diagram
from test_runtime_params import assert_same_model, assert_same_results

import blocksim
from blocksim.blocktypes.blockspec import ParamValues
from blocksim.compiler import compile_diagram, param_reads
from blocksim.errors import CompileError, StructuralParameterError

BALL = blocksim.load(DIAGRAMS / "bouncing_ball.json")


def test_reads_are_the_parameters_a_method_reads():
    values = ParamValues({"k": 2.0, "j": 3.0, "unused": 1.0}, names={"a": 1.0})
    assert param_reads.reads(lambda p: p.k + p["j"] + p.get("none", 0.0), values) == \
        {"k", "j", "none"}
    assert param_reads.reads(lambda p: p.j if p.k > 5 else 0.0, values) == {"k"}
    # the scope (a formula's names), the folder, the whole mapping: anything
    for method in (lambda p: p.scope["a"], lambda p: p.folder, lambda p: p.as_dict(),
                   lambda p: getattr(p, "scope", None)):
        assert param_reads.reads(method, values) is param_reads.ANY
    assert param_reads.reads(lambda p: 1 / 0, values) is param_reads.ANY  # never skipped


def test_many_values_from_one_model_are_each_the_compile_with_them():
    """A Monte Carlo's worth of calls on one model: the first learns what the blocks read,
    the others skip the rest; each is the compile with its values, bit for bit."""
    base = compile_diagram(BALL)
    rng = np.random.default_rng(15)
    runs = [{"mu": float(rng.uniform(0.5, 0.95)), "v0": float(rng.normal())}
            for _ in range(4)]
    runs += [{"x0": 4.0}, {"mu": 0.6, "g": "9.81 / 2"}, {"beta": 0.01, "v0": -1.0},
             {"mu": 0.9, "v0": 0.0}]  # the last: the base model's own values
    for values in runs:
        assert_same_model(base.with_params(values), compile_diagram(BALL, values))
    new = base.with_params(runs[1])
    assert_same_results(blocksim.simulate(new, stop_time=6.0),
                        blocksim.simulate(compile_diagram(BALL, runs[1]), stop_time=6.0))


def test_a_bad_value_after_good_ones_gets_the_compile_message():
    base = compile_diagram(BALL)
    for v0 in (1.0, -2.0, 0.5):  # the ball's checks learned and passed
        base.with_params({"mu": 0.7, "v0": v0})
    for values in ({"x0": -1.0}, {"x0": "-1", "mu": 0.5}, {"mu": float("nan")}):
        with pytest.raises(CompileError) as compiling:
            compile_diagram(BALL, values)
        with pytest.raises(CompileError) as changing:
            base.with_params(values)
        assert str(changing.value) == str(compiling.value)
        assert changing.value.block in ("ball", "restitution")


def test_a_structural_value_after_others_is_still_refused():
    d = blocksim.load(DIAGRAMS / "pathsim_discrete_pid.json")
    model = compile_diagram(d)
    for kp in (1.5, 2.5):
        assert_same_model(model.with_params({"Kp": kp}), compile_diagram(d, {"Kp": kp}))
    with pytest.raises(StructuralParameterError, match="'Kp'") as info:
        model.with_params({"Kp": 1.0})  # a factor 1 the block leaves out
    assert info.value.block == "pid"
    limited = diagram([block("src", "Constant", value=-1.0),
                       block("int", "Integrator", lower="L"), block("y", "Output")],
                      [("src.y", "int.u"), ("int.y", "y.u")], {"L": -1.0}, stop=2.0)
    model = compile_diagram(limited)
    model.with_params({"L": -2.0})
    with pytest.raises(StructuralParameterError, match="'L'"):
        model.with_params({"L": float("-inf")})  # no limit: no mode, no crossings


def test_a_formula_reading_a_changed_name_is_generated_again():
    """An Expression's formula text does not change with UT, but the numbers it reads do:
    its code methods read the scope, so they are asked again every time."""
    d = blocksim.load(DIAGRAMS / "diode_shockley.json")
    model = compile_diagram(d)
    for ut in (0.03, 0.027):
        assert_same_model(model.with_params({"UT": ut}), compile_diagram(d, {"UT": ut}))


def test_models_of_one_structure_share_the_engines_functions():
    """The second model's list functions, observe and zero crossings are the first's code
    bound to its own values: its results are the compile's, bit for bit."""
    base = compile_diagram(BALL)
    first = base.with_params({"mu": 0.6, "v0": 1.0})
    blocksim.simulate(first, stop_time=3.0)
    second = base.with_params({"mu": 0.8, "v0": -1.0})
    assert_same_results(blocksim.simulate(second, stop_time=3.0),
                        blocksim.simulate(compile_diagram(BALL, {"mu": 0.8, "v0": -1.0}),
                                          stop_time=3.0))
    for key in ("deriv_list", "zc_list", "observe"):
        a, b = first.derived[key], second.derived[key]
        assert a.__code__ is b.__code__, key
        assert b.__globals__ is second.functions["deriv"].__globals__, key
    zc_a, zc_b = first.derived["zc_component"], second.derived["zc_component"]
    assert zc_b and all(zc_b[i].__code__ is zc_a[i].__code__ for i in zc_b)
