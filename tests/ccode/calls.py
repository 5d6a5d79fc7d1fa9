"""For tests of a run's calls into C: counting them (`bs_api_run`), and a model whose start
no backend can settle (C hands it to Python, which fails it)."""
from __future__ import annotations

import blocksim
from blocksim.ccode import loop
from builders import block, diagram


class Counting:
    """The model's library, counting its `bs_api_run` calls."""

    def __init__(self, lib):
        self.lib, self.calls = lib, 0

    def __getattr__(self, name):
        found = getattr(self.lib, name)
        if name != "bs_api_run":
            return found

        def call(*args):
            self.calls += 1
            return found(*args)
        return call


def counted(model, monkeypatch) -> Counting:
    """Count the model's calls into C for the length of the test (the library is shared
    by the models of its structure: it is put back afterwards)."""
    lib = loop.library(model)
    assert not isinstance(lib, str), lib
    counting = Counting(lib)
    monkeypatch.setitem(model.shared, loop.SHARED, counting)
    return counting


def never_settling_start():
    """x' = +1 if x < 0 else -1 from x = 0: the start's event iteration never settles."""
    blocks = [block("zero", "Constant", value=0.0), block("up", "Constant", value=1.0),
              block("down", "Constant", value=-1.0), block("neg", "RelationalOperator"),
              block("sw", "Switch", criterion="u2 != 0"), block("i", "Integrator", x0=0.0),
              block("x", "Output")]
    wires = [("i.y", "neg.u1"), ("zero.y", "neg.u2"), ("up.y", "sw.u1"), ("neg.y", "sw.u2"),
             ("down.y", "sw.u3"), ("sw.y", "i.u"), ("i.y", "x.u")]
    return blocksim.compile(diagram(blocks, wires, stop=3.0))
