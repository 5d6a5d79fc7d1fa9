"""Size and memory budgets: checked before anything large is allocated, each error naming the
block and parameter, the block and port, or the setting to change."""
import time

import numpy as np
import pytest
from builders import block, diagram

from blocksim.compiler import compile_diagram, limits
from blocksim.compiler.flatten import flatten
from blocksim.errors import CompileError
from blocksim.diagram.model import Block, Diagram


def error(d, **settings) -> CompileError:
    start = time.perf_counter()
    with pytest.raises(CompileError) as info:
        compile_diagram(d, settings=d.simulation.replaced(**settings))
    assert time.perf_counter() - start < 5  # refused before anything large is built
    assert "\n" not in str(info.value)
    return info.value


def test_a_width_over_the_limit_names_block_port_and_parameter():
    d = diagram([block("c", "Constant", value="ones(60000)"), block("g", "Gain", k=2.0),
                 block("y", "Output")], [("c.y", "g.u"), ("g.y", "y.u")])
    err = error(d)
    assert (err.block, err.port) == ("c", "y")
    assert err.detail == ("output 'y' needs 60000 elements (parameter 'value' has 60000 "
                          "elements); the diagram needs 120000 signal and state elements in "
                          "all, over the limit of 100000: use narrower signals or fewer blocks")


def test_widths_that_add_up_are_caught_before_code_generation():
    d = diagram([block("c", "Constant", value="ones(90000)"), block("m", "Mux", inputs=1000),
                 block("y", "Output")],
                [("c.y", f"m.u{i + 1}") for i in range(1000)] + [("m.y", "y.u")])
    err = error(d)
    assert (err.block, err.port) == ("m", "y")
    assert "output 'y' needs 90000000 elements; the diagram needs 90090000" in err.detail


def test_a_long_vector_parameter_is_refused_before_the_block_sees_it():
    d = diagram([block("c", "Constant"), block("i", "Integrator", x0="zeros(1e7)"),
                 block("y", "Output")], [("c.y", "i.u"), ("i.y", "y.u")])
    err = error(d)
    assert err.block == "i"
    assert err.detail == ("parameter 'x0' has 10000000 elements (at most 100000 for a "
                          "signal's width)")


def test_tables_have_their_own_limit():
    def lookup(n):
        return diagram([block("t", "Clock"), block("lk", "LookupTable1D",
                                                   breakpoints=f"linspace(0, 1, {n})",
                                                   table=f"zeros({n})"),
                        block("y", "Output")], [("t.y", "lk.u"), ("lk.y", "y.u")])
    assert compile_diagram(lookup(200_000)).n_zc == 2
    err = error(lookup(2_000_000))
    assert (err.block, err.detail) == ("lk", "parameter 'breakpoints' has 2000000 elements "
                                             "(at most 1000000 for a table)")


def logged(width=1, **simulation):
    return diagram([block("c", "Constant", value=f"ones({width})"), block("y", "Output")],
                   [("c.y", "y.u")], **simulation)


def test_output_rows_times_columns_over_the_budget_names_the_setting():
    err = error(logged(), stop=1.0, output_interval=1e-9)
    assert err.block is None
    assert err.detail == ("simulation setting 'output_interval' = 1e-09: the run would log "
                          "about 1e+09 rows of 2 columns, 14.9 GiB of results (at most 1 GiB): "
                          "use a larger output interval, a shorter run or fewer logged signals")
    err = error(logged(2000), stop=1.0, output_interval=1e-5)
    assert "the run would log about 1e+05 rows of 2001 columns, 1.49 GiB of results" in err.detail


def test_results_within_the_budget_compile():
    model = compile_diagram(logged(), settings=logged().simulation.replaced(
        stop=1.0, output_interval=1e-7))  # 1e7 rows of 2 columns: 153 MiB
    assert model.logged[0].name == "y"


def test_time_events_count_towards_the_run():
    d = diagram([block("p", "Pulse", period=1e-12), block("y", "Output")], [("p.y", "y.u")])
    err = error(d, stop=10.0)
    assert err.block == "p"
    assert err.detail == ("it makes about 2e+13 time events between 0 and 10 (at most 1e+08 in "
                          "a run): use a longer period or a shorter run")
    d = diagram([block("p", "Pulse", period=1e-6), block("y", "Output")], [("p.y", "y.u")])
    err = error(d, stop=10.0)
    assert err.block == "p"
    assert err.detail.startswith("its 2e+07 time events between 0 and 10 make about 4e+07 rows "
                                 "of results, 2.98 GiB (at most 1 GiB)")
    d = diagram([block("p", "Pulse", period=1e-3), block("y", "Output")], [("p.y", "y.u")])
    assert compile_diagram(d, settings=d.simulation.replaced(stop=10.0)).time_events


def nested(levels: int, count: int, n: int, maker: str = "ones"):
    """`count` diagram parameters of n elements, passed down `levels` subsystem levels, each
    of which renames every one of them (a level of parameters that are all arrays)."""
    inner = {"parameters": {"k": "sum(a0) + 1"},
             "blocks": [{"id": "c", "type": "Constant", "params": {"value": "k"}},
                        {"id": "o", "type": "Outport"}], "wires": [{"src": "c.y", "dst": "o.u"}]}
    for level in range(levels):
        inner = {"parameters": {f"b{level}_{i}": f"a{i}" for i in range(count)},
                 "blocks": [{"id": "s", "type": "Subsystem", "diagram": inner},
                            {"id": "o", "type": "Outport"}],
                 "wires": [{"src": "s.o", "dst": "o.u"}]}
    return diagram([{"id": "top", "type": "Subsystem", "diagram": inner}, block("y", "Output")],
                   [("top.o", "y.u")], parameters={f"a{i}": f"{maker}({n})" for i in range(count)})


def test_nested_scopes_share_values_and_count_them_once(monkeypatch):
    monkeypatch.setattr(limits, "MAX_PARAMETER_BYTES", 1 << 20)
    d = nested(4, 5, 20_000)  # 5 arrays of 160 kB: 800 kB, once, whatever the depth
    model = compile_diagram(d)
    assert model.x0.size == 0 and model.signal_names[0] == "top/s/s/s/s/c.y"
    flat = flatten(d)
    scope = flat.blocks[0].p.scope
    assert scope["b0_3"] is scope["b3_3"] is scope["a3"]  # one array, seen at every level


def test_the_parameter_budget_names_the_parameter_that_breaks_it(monkeypatch):
    monkeypatch.setattr(limits, "MAX_PARAMETER_BYTES", 1 << 20)
    err = error(nested(2, 7, 20_000))
    assert err.block is None
    assert err.detail == ("diagram parameter 'a6' (20000 elements) brings the diagram's "
                          "parameter values to 1.07 MiB, over the limit of 1 MiB: use fewer or "
                          "smaller arrays")
    d = diagram([block("c", "Constant", value="ones(70000) * 2"), block("y", "Output")],
                [("c.y", "y.u")], parameters={"a": "ones(70000)"})
    monkeypatch.setattr(limits, "MAX_PARAMETER_BYTES", 1_000_000)
    err = error(d)
    assert err.block == "c"
    assert err.detail.startswith("parameter 'value' (70000 elements) brings the diagram's "
                                 "parameter values to 1.07 MiB")


def test_subsystems_nested_too_deeply():
    """Built in Python (a file this deep is refused by the loader already)."""
    d = Diagram()
    for _ in range(limits.MAX_NESTING + 1):
        d = Diagram(blocks=[Block("s", "Subsystem", subsystem=d)])
    err = error(d)
    assert err.detail == "subsystems are nested more than 100 levels deep"
    assert err.block == "/".join(["s"] * (limits.MAX_NESTING + 1))


def test_twenty_arrays_of_1e7_over_four_levels_are_refused_quickly():
    """The hostile file: 6 GB with a copy per level before; now the budget stops it at the
    parameter that passes 512 MiB (zeros: the pages are never touched, so the test is light)."""
    err = error(nested(4, 20, 10_000_000, "zeros"))
    assert err.detail.startswith("diagram parameter 'a6' (10000000 elements) brings the "
                                 "diagram's parameter values to 534 MiB, over the limit of "
                                 "512 MiB")
    assert np.isfinite(limits.MAX_PARAMETER_BYTES)


def test_generated_code_over_the_budget_names_the_block_that_writes_most(monkeypatch):
    n = 40
    d = diagram([block("c", "Constant"),
                 block("ss", "StateSpace", A=np.full((n, n), -0.01).tolist(),
                       B=np.ones((n, 1)).tolist(), C=np.ones((1, n)).tolist()),
                 block("y", "Output")], [("c.y", "ss.u"), ("ss.y", "y.u")])
    size = len(compile_diagram(d).code)
    monkeypatch.setattr(limits, "MAX_CODE_BYTES", size - 1)
    err = error(d)
    assert err.block == "ss"
    assert err.detail.startswith(f"the diagram's generated code would be "
                                 f"{limits.size_text(size)} (at most ")
    assert err.detail.endswith("of it: use smaller matrices or narrower signals")


def test_time_events_of_several_blocks_add_up():
    d = diagram([block("p", "Pulse", period=4e-7), block("q", "Pulse", period=3e-7),
                 block("y", "Output"), block("z", "Output")], [("p.y", "y.u"), ("q.y", "z.u")])
    err = error(d, stop=10.0)
    assert err.block == "q"
    assert err.detail.startswith("it makes about 6.67e+07 time events between 0 and 10, "
                                 "1.17e+08 with the other blocks (at most 1e+08 in a run)")
