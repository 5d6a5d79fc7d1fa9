"""Identical blocks get the code of the first of their kind with their own names
(`compiler.code_reuse`): the generated module must be exactly what asking every block
writes, the template must really be used for long runs of twins, and a block whose code
names something of its own besides its slots (its index) must be asked every time."""
import math

import numpy as np
import pytest
from builders import block, diagram

import blocksim
from blocksim.compiler import code_reuse


@pytest.fixture
def asked(monkeypatch):
    """Counts the blocks' code methods actually called while compiling."""
    counter = {"calls": 0}
    original = code_reuse.CodeReuse.code

    def counting(self, key, names, first, ask):
        def ask_counted():
            counter["calls"] += 1
            return ask()
        return original(self, key, names, first, ask_counted)

    monkeypatch.setattr(code_reuse.CodeReuse, "code", counting)
    return counter


def compiled_without_reuse(d, monkeypatch):
    """The model as every block asked for its own code writes it."""
    with monkeypatch.context() as patch:
        patch.setattr(code_reuse.CodeReuse, "code",
                      lambda self, key, names, first, ask: ask())
        return blocksim.compile(d)


def globals_of(model):
    """The parameter slots and array constants the generated code reads, by name."""
    namespace = model.functions["deriv"].__globals__
    return {k: repr(v) for k, v in namespace.items() if k.startswith(("_p", "C"))}


def lag_chain(n: int, den: list[float]):
    blocks = [block("step", "Step", time=0.0)]
    blocks += [block(f"lag{k}", "TransferFunction", num=1.0, den=den) for k in range(n)]
    blocks += [block("y", "Output")]
    wires = [("step.y", "lag0.u")] + [(f"lag{k}.y", f"lag{k + 1}.u") for k in range(n - 1)]
    return diagram(blocks, wires + [(f"lag{n - 1}.y", "y.u")], stop=2.0)


def test_a_chain_of_twins_is_written_once_and_exactly_as_each_block_writes_it(asked,
                                                                             monkeypatch):
    blocksim.compile(lag_chain(10, [1.0, 3.0, 2.0]))
    asked_for_10, asked["calls"] = asked["calls"], 0
    d = lag_chain(40, [1.0, 3.0, 2.0])  # second order: two states, slots in each line
    model = blocksim.compile(d)
    assert asked["calls"] == asked_for_10 < 10  # only the first two lags are asked
    plain = compiled_without_reuse(d, monkeypatch)
    assert model.code == plain.code and model.line_owner == plain.line_owner
    assert globals_of(model) == globals_of(plain)
    res, ref = blocksim.simulate(model), blocksim.simulate(plain)
    assert np.array_equal(res["y"], ref["y"]) and np.array_equal(res.time, ref.time)


def test_twins_of_another_width_or_other_values_get_their_own_code(monkeypatch):
    blocks = [block("c", "Constant", value=[1.0, 2.0]), block("s", "Constant", value=0.5)]
    blocks += [block(f"g{k}", "Gain", k=2.0) for k in range(4)]
    blocks += [block("h", "Gain", k=3.0), block("y1", "Output"), block("y2", "Output")]
    wires = [("c.y", "g0.u"), ("g0.y", "g1.u"), ("g1.y", "y1.u"),  # width 2
             ("s.y", "g2.u"), ("g2.y", "g3.u"), ("g3.y", "h.u"), ("h.y", "y2.u")]  # width 1
    d = diagram(blocks, wires, stop=1.0)
    model, plain = blocksim.compile(d), compiled_without_reuse(d, monkeypatch)
    assert model.code == plain.code and globals_of(model) == globals_of(plain)
    res = blocksim.simulate(model)
    assert res["y1"][-1].tolist() == [4.0, 8.0] and res["y2"][-1] == 6.0


def test_a_block_that_names_its_index_is_asked_each_time(asked, monkeypatch):
    n = 6
    blocks = [block("sine", "Sine", amplitude=3.0, frequency=1.0 / (2.0 * math.pi))]
    blocks += [block(f"q{k}", "Quantizer", interval=0.5) for k in range(n)]
    blocks += [block(f"y{k}", "Output") for k in range(n)]
    wires = [("sine.y", f"q{k}.u") for k in range(n)] + [(f"q{k}.y", f"y{k}.u") for k in range(n)]
    d = diagram(blocks, wires, stop=2.0)
    model = blocksim.compile(d)
    assert asked["calls"] >= n  # each Quantizer's update asked (outputs may be shared)
    plain = compiled_without_reuse(d, monkeypatch)
    assert model.code == plain.code and globals_of(model) == globals_of(plain)
    assert "_k" in model.code  # the per-block latch variable the template cannot rename
    res = blocksim.simulate(model)
    t = res.time
    expected = 0.5 * np.round(3.0 * np.sin(t) / 0.5)
    for k in range(n):
        assert np.array_equal(res[f"y{k}"], res["y0"])
    inside = np.abs(3.0 * np.sin(t) / 0.5 - np.round(3.0 * np.sin(t) / 0.5)) < 0.49
    assert np.array_equal(res["y0"][inside], expected[inside])
