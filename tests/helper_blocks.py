"""A block type whose event code calls a Python helper, as a third-party block may: the
library's own blocks all write their event code out, so tests of the numba backend's
fallback (events handled in Python, and the notice naming the block) use this one."""
from __future__ import annotations

import contextlib
from typing import Iterator

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import Emit
from blocksim.blocks.lookup import LookupTable1D


class HelperLookup(LookupTable1D):
    """LookupTable1D whose segment search calls the table's Python methods at events."""

    name = "HelperLookup"

    def update(self, e: Emit):
        table = self._table(e.p)
        relocate, slots = e.const(table.relocate), e.const(table.slots)
        m, u = e.m, e.u["u"]
        var, lines = f"_k{e.index}", []
        for k in range(len(e.y["y"])):
            b = 6 * k
            uk = u[k] if len(u) > 1 else u[0]
            zn_lo, zn_hi = e.zn[2 * k], e.zn[2 * k + 1]
            lines += [f"if {m[b]} < 0.0 or {zn_lo} < 0.0 or {zn_hi} <= 0.0:",
                      f"    {var} = {relocate}({m[b]}, {uk}, {zn_lo}, {zn_hi})",
                      f"    if {var} != {m[b]}:",
                      f"        {', '.join(m[b:b + 6])} = {slots}({var})",
                      "        if init: changed = True",
                      f"        else: {e.event('segment')}"]
        return lines


@contextlib.contextmanager
def helper_lookup_registered() -> Iterator[None]:
    """HelperLookup in the registry for the duration."""
    registry.register(HelperLookup, source="tests")
    try:
        yield
    finally:
        registry._types().pop(HelperLookup.name, None)
