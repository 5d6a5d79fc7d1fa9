"""Large generated functions are compiled on their first call (`compiler.lazy_compile`):
the stub must give exactly the function's results, keep its line numbers (errors name the
block), and bind to the globals of the model it runs for (`with_params`)."""
import numpy as np
import pytest
from builders import block, diagram

import blocksim
from blocksim.compiler import lazy_compile
from blocksim.errors import CompileError, SimulationError


@pytest.fixture
def all_lazy(monkeypatch):
    """Every generated function of two lines or more compiled on its first call."""
    monkeypatch.setattr(lazy_compile, "LAZY_LINES", 2)


def gain_chain(n=12, k="k"):
    blocks = [block("c", "Clock")] + [block(f"g{i}", "Gain", k=k) for i in range(n)]
    blocks += [block("y", "Output")]
    wires = [("c.y", "g0.u")] + [(f"g{i}.y", f"g{i + 1}.u") for i in range(n - 1)]
    wires += [(f"g{n - 1}.y", "y.u")]
    return diagram(blocks, wires, parameters={"k": 1.5}, stop=1.0)


def test_module_text_stubs_only_long_functions_and_keeps_line_numbers():
    source = "def small(a):\n    return a\n\ndef big(a, b):\n    c = a\n    d = b\n" \
             "    return c + d\n\ndef after(a):\n    return a\n"
    text, lines, spans = lazy_compile.module_text(source, min_lines=5)
    assert spans == {"big": (3, 8)}
    assert lines == source.split("\n")
    out = text.split("\n")
    assert len(out) == len(lines) and out[8] == "def after(a):"  # later lines unmoved
    assert out[4] == f"    return {lazy_compile.HELPER}.bound('big', globals())(a, b)"
    assert lazy_compile.module_text(source, min_lines=50)[0] == source


def test_lazy_functions_give_the_eager_results(all_lazy):
    eager_model = None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lazy_compile, "LAZY_LINES", 10 ** 9)
        eager_model = blocksim.compile(gain_chain())
    model = blocksim.compile(gain_chain())
    assert model.code == eager_model.code
    assert lazy_compile.HELPER in model.functions["outputs"].__globals__
    assert lazy_compile.HELPER not in eager_model.functions["outputs"].__globals__
    args = (0.25, np.zeros(0), np.array(model.m0), np.zeros(0))
    assert model.functions["outputs"](*args) == eager_model.functions["outputs"](*args)
    a, b = blocksim.simulate(model), blocksim.simulate(eager_model)
    assert np.array_equal(a.time, b.time) and np.array_equal(a["y"], b["y"])


def test_a_lazy_function_failing_names_its_block(all_lazy):
    d = diagram([block("c", "Clock"), block("f", "Expression", formula="1 / (u - u)"),
                 block("y", "Output")], [("c.y", "f.u"), ("f.y", "y.u")], stop=1.0)
    model = blocksim.compile(d)
    with pytest.raises(ZeroDivisionError) as info:
        model.functions["outputs"](0.0, np.zeros(0), np.array(model.m0), np.zeros(0))
    assert model.block_of_exception(info.value) == "f"
    with pytest.raises(SimulationError, match="block 'f'"):
        blocksim.simulate(model)


def test_a_lazy_function_reads_the_globals_of_its_own_model(all_lazy):
    model = blocksim.compile(gain_chain(n=3))
    args = (2.0, np.zeros(0), np.array(model.m0), np.zeros(0))
    before = model.functions["outputs"](*args)  # compiled and bound for `model` first
    other = model.with_params({"k": 2.0})
    assert other.functions["outputs"](*args)[-1] == 2.0 * 2.0 ** 3
    assert model.functions["outputs"](*args) == before == [2.0, 3.0, 4.5, 6.75]
    third = model.with_params({"k": -1.0})  # never called before binding
    assert third.functions["outputs"](*args)[-1] == -2.0


def test_a_function_that_does_not_compile_is_a_compile_error_when_first_called():
    source = "def broken(a):\n    return (a\n\n"
    text, lines, spans = lazy_compile.module_text(source, min_lines=2)
    functions = lazy_compile.LazyFunctions(lines, spans, "<test>")
    namespace = {lazy_compile.HELPER: functions}
    exec(compile(text, "<test>", "exec"), namespace)
    with pytest.raises(CompileError, match="'broken' does not compile"):
        namespace["broken"](1)
