"""Block parameters: finite unless the declaration allows +-inf, never NaN, whole numbers in
range, sizes within the limits; a faulty block type is a CompileError, not a traceback."""
import math

import numpy as np
import pytest
from builders import block, diagram

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import BlockType, Param, Port, Sizes
from blocksim.cli.main import main
from blocksim.compiler import compile_diagram, limits
from blocksim.compiler.flatten import flatten
from blocksim.errors import CompileError


def integ(**params):
    return diagram([block("c", "Constant"), block("int", "Integrator", **params),
                    block("y", "Output")], [("c.y", "int.u"), ("int.y", "y.u")],
                   parameters={"big": 1e300, "v": [1.0, 2.0]})


def error(d) -> CompileError:
    with pytest.raises(CompileError) as info:
        compile_diagram(d)
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize("x0, message", [
    ("-1e999", "parameter 'x0' = '-1e999' is -inf; it must be finite"),
    ("inf", "parameter 'x0' = 'inf' is inf; it must be finite"),
    (math.inf, "parameter 'x0' = inf is inf; it must be finite"),
    (-math.inf, "parameter 'x0' = -inf is -inf; it must be finite"),
    (math.nan, "parameter 'x0' = nan is nan; it must be finite"),
    ("[1, inf]", "parameter 'x0' = '[1, inf]': element 1 is inf; it must be finite"),
    ([0.0, 1.0, math.inf], "parameter 'x0' = [0.0, 1.0, inf]: element 2 is inf; it must be "
                           "finite"),
    ("big * 1e10", "parameter 'x0': overflow (result too large) in 'big * 1e10'"),
    ("inf - inf", "parameter 'x0': math domain error (invalid value) in 'inf - inf'"),
])
def test_infinite_or_nan_initial_value_is_refused(x0, message):
    err = error(integ(x0=x0))
    assert err.block == "int" and err.file == "<diagram>"
    assert str(err) == f"<diagram>, block 'int': {message}"


def test_limits_keep_accepting_infinity_but_never_nan():
    model = compile_diagram(integ(lower="-inf", upper=math.inf, x0=1.0))
    assert model.n_states == 1
    model = compile_diagram(integ(lower=[-math.inf, 0.0], upper="[inf, 1e999]", x0="v * 0"))
    assert model.n_states == 2
    err = error(integ(lower=math.nan))
    assert "parameter 'lower' = nan is nan; it must be a number (+-inf allowed)" in str(err)
    sat = diagram([block("c", "Constant"), block("s", "Saturation", lower="-inf", upper=math.inf),
                   block("y", "Output")], [("c.y", "s.u"), ("s.y", "y.u")])
    assert compile_diagram(sat).n_zc == 2


def test_which_library_parameters_take_infinity():
    """Only limits, where +-inf means 'no limit', and the integrators' state tolerances
    (inf: no error control); every other number must be finite."""
    allowed = {(name, prm.name) for name, t in registry.all_types().items()
               for prm in t.params if prm.allow_inf}
    assert allowed == {("Integrator", "lower"), ("Integrator", "upper"),
                       ("Saturation", "lower"), ("Saturation", "upper"),
                       ("DiscreteIntegrator", "lower"), ("DiscreteIntegrator", "upper"),
                       ("PID", "lower"), ("PID", "upper"),
                       ("SecondOrderIntegrator", "lower"), ("SecondOrderIntegrator", "upper"),
                       ("SecondOrderIntegrator", "dx_lower"),
                       ("SecondOrderIntegrator", "dx_upper"),
                       ("Integrator", "atol"), ("ResetIntegrator", "atol")}
    assert "+-inf allowed" in registry.get("Saturation").describe()


@pytest.mark.parametrize("params, message", [
    ({"value": "inf"}, "block 'c': parameter 'value' = 'inf' is inf; it must be finite"),
    ({"value": "ones(100001)"}, "block 'c': parameter 'value' has 100001 elements (at most "
                                "100000 for a signal's width)"),
])
def test_constant_values(params, message):
    d = diagram([block("c", "Constant", **params), block("y", "Output")], [("c.y", "y.u")])
    assert message in str(error(d))


def mux(inputs):
    return diagram([block("c", "Constant"), block("m", "Mux", inputs=inputs), block("y", "Output")],
                   [("c.y", "m.u1"), ("c.y", "m.u2"), ("m.y", "y.u")], parameters={"n": 2})


@pytest.mark.parametrize("inputs, message", [
    ("inf", "parameter 'inputs' = 'inf' is inf; it must be finite"),
    ("1e300", "parameter 'inputs' = '1e300' (= 1e+300) is above its maximum 1000"),
    (2.0 ** 60, "parameter 'inputs' = 1.152921504606847e+18 is above its maximum 1000"),
    ("[n] * 1e9", "parameter 'inputs' = '[n] * 1e9' (= 2e+09) is above its maximum 1000"),
    ("n * 3 / 4", "parameter 'inputs' must be a whole number, got 'n * 3 / 4'"),
    ("[n, n]", "parameter 'inputs' must be one number, got '[n, n]'"),
])
def test_integer_parameters(inputs, message):
    assert message in str(error(mux(inputs)))


def test_integer_parameter_from_an_expression():
    assert compile_diagram(mux("[n] * 1")).signal_names[-2:] == ("m.y[0]", "m.y[1]")


def test_too_many_ports_from_a_text_parameter():
    d = diagram([block("c", "Constant"), block("s", "Sum", signs="+" * 1001), block("y", "Output")],
                [("c.y", "s.u1"), ("s.y", "y.u")])
    assert "parameter 'signs' has 1001 signs, one per port (at most 1000)" in str(error(d))


@pytest.mark.parametrize("initial", [math.nan, "inf", "-1e999"])
def test_bool_parameter_must_be_a_finite_number(initial):
    d = diagram([block("s", "Constant"), block("f", "SRFlipFlop", initial=initial),
                 block("y", "Output")], [("s.y", "f.s"), ("s.y", "f.r"), ("f.q", "y.u")])
    err = error(d)
    assert err.block == "f" and "parameter 'initial' = " in str(err)
    assert str(err).endswith("; it must be finite")


def test_huge_integer_literal_names_the_parameter(tmp_path, capsys):
    text = "1" * 5000
    err = error(integ(x0=text))
    assert err.block == "int"
    assert "parameter 'x0': expression '1111" in str(err)
    assert str(err).endswith("a number has more than 4300 digits")
    path = tmp_path / "d.json"
    path.write_text('{"format": "blocksim", "version": 1, "parameters": {"k": 1}, '
                    '"blocks": [{"id": "c", "type": "Constant", "params": {"value": "k"}}, '
                    '{"id": "y", "type": "Output"}], "wires": [{"src": "c.y", "dst": "y.u"}]}')
    assert main(["validate", str(path), "--set", f"k={text}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"blocksim: {path}: parameter 'k': expression '1111")
    assert err.endswith("a number has more than 4300 digits\n") and err.count("\n") == 1


def test_diagram_parameter_errors_name_the_file_once():
    d = integ(x0="k")
    d.parameters["k"] = "1 +"
    assert str(error(d)).startswith("<diagram>: parameter 'k': expression '1 +': syntax error")


def test_subsystem_parameter_errors_name_the_subsystem_once():
    inner = {"parameters": {"a": "zz"}, "blocks": [{"id": "o", "type": "Outport"}], "wires": []}
    d = diagram([{"id": "sub", "type": "Subsystem", "diagram": inner}], [])
    assert str(error(d)) == "<diagram>, block 'sub': parameter 'a': unknown name 'zz' in 'zz'"


class Faulty(BlockType):
    """A third-party block whose own code fails."""

    name = "FaultyTest"
    params = (Param("k", "scalar", 1.0),)
    inputs = (Port("u"),)
    outputs = (Port("y"),)

    def check(self, p):
        return 1 / (p.k - 1.0) and None

    def sizes(self, p, in_widths):
        return Sizes({"y": int(p.k)}) if p.k > 1 else Sizes({"y": -1})


@pytest.fixture
def faulty(monkeypatch):
    monkeypatch.setattr(registry, "_registry", {**registry.all_types(), Faulty.name: Faulty})


@pytest.mark.parametrize("k, message", [
    (1.0, "block 'f': the block's check() failed: ZeroDivisionError: float division by zero"),
    (0.5, "block 'f': the block type FaultyTest gives output 'y' a size of -1, not a whole "
          "number >= 0"),
])
def test_a_faulty_block_type_is_a_compile_error(faulty, k, message):
    d = diagram([block("c", "Constant"), block("f", "FaultyTest", k=k), block("y", "Output")],
                [("c.y", "f.u"), ("f.y", "y.u")])
    assert message in str(error(d))


def test_parameter_arrays_are_shared_read_only_not_copied():
    d = diagram([block("c", "Constant", value="v"), block("y", "Output")], [("c.y", "y.u")],
                parameters={"v": "linspace(0, 1, 5)"})
    flat = flatten(d)
    value = flat.blocks[0].p.value
    assert isinstance(value, np.ndarray) and not value.flags.writeable
    assert value is flat.blocks[0].p.scope["v"]
    assert limits.MAX_SIGNALS == 100_000
