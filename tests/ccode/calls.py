"""Counting a model's calls into its C library (`bs_api_run`), for tests that say how many
calls a run makes."""
from __future__ import annotations

from blocksim.ccode import loop


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
