"""Runtime parameters on the numba backend: the model's numba functions are made once per
structure and read the parameter values from the loop's scratch array, so a run with new
values compiles nothing, and its results are those of a compile with those values (and
agree with the Python backend's)."""
import numpy as np
import pytest
from both_backends import HAS_NUMBA, run_both
from builders import DIAGRAMS, block, diagram

import blocksim
from blocksim.compiler import compile_diagram

pytestmark = pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")

BALL = blocksim.load(DIAGRAMS / "bouncing_ball.json")


def same_results(a, b) -> None:
    assert np.array_equal(a.time, b.time)
    for name in a.signals:
        assert np.array_equal(a[name], b[name]), name
    assert [(e.time, e.block, e.kind) for e in a.events] == \
        [(e.time, e.block, e.kind) for e in b.events]


@pytest.fixture
def compiles(monkeypatch):
    """How many times the numba functions of a model are made (translated and loaded)."""
    from blocksim.engine.native import build

    made = []
    real = build.compile_model

    def counting(model):
        made.append(model.source)
        return real(model)

    monkeypatch.setattr(build, "compile_model", counting)
    return made


def test_new_values_compile_nothing(compiles):
    base = compile_diagram(BALL)
    blocksim.simulate(base, backend="numba", stop_time=5.0)
    assert len(compiles) == 1
    for mu in (0.5, 0.7, 0.8):
        model = base.with_params({"mu": mu, "v0": mu})
        run = blocksim.simulate(model, backend="numba", stop_time=5.0)
        assert model.derived["native"] is base.derived["native"]
        assert model.structure_key == base.structure_key
        same_results(run, blocksim.simulate(compile_diagram(BALL, {"mu": mu, "v0": mu}),
                                            backend="numba", stop_time=5.0))
    assert len(compiles) == 1 + 3  # only the three fresh compiles made theirs


def test_fresh_compiles_with_other_values_share_the_module_on_disk():
    """numba's disk cache is keyed by the module's text: the same for any values."""
    a = compile_diagram(BALL)
    b = compile_diagram(BALL, {"mu": 0.3, "g": 1.62})
    blocksim.simulate(a, backend="numba", stop_time=1.0)
    blocksim.simulate(b, backend="numba", stop_time=1.0)
    module = [d.py_func.__module__ for d in a.derived["native"].dispatchers]
    assert module == [d.py_func.__module__ for d in b.derived["native"].dispatchers]


@pytest.mark.parametrize("values", [{"mu": 0.6}, {"x0": 3.0, "g": 3.7}, {"beta": 0.01}])
def test_ball_agrees_with_python(values):
    model = compile_diagram(BALL).with_params(values)
    run_both(model, stop_time=10.0)


def test_time_event_parameters_in_the_compiled_loop():
    d = diagram([block("src", "Step", time="T", after="A"), block("int", "Integrator"),
                 block("y", "Output")], [("src.y", "int.u"), ("int.y", "y.u")],
                {"T": 0.5, "A": 1.0}, stop=2.0)
    base = compile_diagram(d)
    model = base.with_params({"T": 1.25, "A": 3.0})
    run = blocksim.simulate(model, backend="numba")
    assert model.derived["native"].timed and run.stats["python_events"] == 0
    assert [e.time for e in run.events if e.block == "src"] == [1.25]
    same_results(run, blocksim.simulate(compile_diagram(d, {"T": 1.25, "A": 3.0}),
                                        backend="numba"))
    run_both(model)


def test_a_new_table_gets_its_own_kernels():
    """Tables stay arrays baked into the numba module: new table values, new functions."""
    blocks = [block("t", "Clock"), block("lut", "LookupTable1D", breakpoints="bp", table="tab"),
              block("int", "Integrator"), block("y", "Output")]
    d = diagram(blocks, [("t.y", "lut.u"), ("lut.y", "int.u"), ("int.y", "y.u")],
                {"bp": [0.0, 1.0, 2.0], "tab": [0.0, 2.0, 1.0]}, stop=3.0)
    base = compile_diagram(d)
    blocksim.simulate(base, backend="numba")
    model = base.with_params({"tab": [1.0, -1.0, 4.0]})
    assert model.structure_key != base.structure_key
    blocksim.simulate(model, backend="numba")
    assert model.derived["native"] is not base.derived["native"]
    same_results(blocksim.simulate(model, backend="numba"),
                 blocksim.simulate(compile_diagram(d, {"tab": [1.0, -1.0, 4.0]}),
                                   backend="numba"))
    run_both(model)


def test_a_user_block_with_new_values_compiles_nothing(compiles):
    """A Python block's parameters are slots too; its functions stay the same objects."""
    from modia_user_blocks import registered
    from references import modia_ball_impacts

    with registered():
        d = diagram([block("ball", "ModiaBall", h0="h0", e="e", g=9.81, v_small=0.01),
                     block("h", "Output")], [("ball.h", "h.u")], {"h0": 1.0, "e": 0.7},
                    stop=3.0, rtol=1e-12, atol=1e-12)
        base = compile_diagram(d)
        blocksim.simulate(base, backend="numba")
        model = base.with_params({"h0": 2.0, "e": 0.6})
        assert model.structure_key == base.structure_key
        run = blocksim.simulate(model, backend="numba")
        assert len(compiles) == 1 and run.stats["python_events"] == 0
        impacts = [e.time for e in run.events if e.kind == "reset"]
        np.testing.assert_allclose(impacts, modia_ball_impacts(2.0, 0.6, 9.81, 0.01),
                                   rtol=0, atol=1e-9)
        run_both(model)
