"""Discrete blocks: outputs that change only at their sample hits, held in between.

Each declares a `sample_time` ([period, offset] or a period; -1 inherits the input's rate).
At a hit, outputs come from the discrete states before the update and the inputs at that
instant (the right limit: a step at the same instant is already taken), then the states
update (`BlockType.sample_output` / `sample_update`); between hits the outputs are held.
"""
from __future__ import annotations

from blocksim.blockspec import SAMPLE_TIME, BlockType, Emit, Param, Port, Sizes, broadcast, size_of


def _width(p, in_widths, port: str, *params: str) -> int:
    """The common width of an input and vector parameters (each 1 or n)."""
    sizes = [in_widths.get(port) or 1] + [size_of(p[name]) for name in params]
    n = max(sizes)
    for name, size in zip((f"input '{port}'",) + params, sizes):
        if size not in (1, n):
            raise ValueError(f"{name} has {size} elements where 1 or {n} are needed")
    return n


class UnitDelay(BlockType):
    """Delay the input by one sample: y(k) = u(k-1), z^-1.

    At hit k the output becomes the input sampled at hit k-1 (`initial` at the first hit)
    and is held until the next hit; the output never reads the current input, so a Unit
    Delay breaks an algebraic loop of discrete blocks. Works elementwise on vectors.
    """

    name = "UnitDelay"
    category = "Discrete"
    discrete = True
    params = (Param("initial", "vector", 0.0, "output until the first sample has passed"),
              SAMPLE_TIME)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "the input one sample earlier"),)

    def feedthrough(self, p):
        return {"y": ()}

    def sizes(self, p, in_widths):
        n = _width(p, in_widths, "u", "initial")
        return Sizes({"y": n}, discrete=2 * n)  # held outputs, then the delayed samples

    def initial_discrete(self, p, n):
        return broadcast(p.initial, n // 2) * 2

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def sample_output(self, e: Emit):
        n = len(e.m) // 2
        return {"y": [f"{held} = {state}" for held, state in zip(e.m[:n], e.m[n:])]}

    def sample_update(self, e: Emit):
        n = len(e.m) // 2
        u = broadcast_names(e.u["u"], n)
        return [f"{state} = {v}" for state, v in zip(e.m[n:], u)]


class ZeroOrderHold(BlockType):
    """Sample the input at each hit and hold it until the next: y(t) = u(t_k), t_k <= t < t_k+1.

    The sample is the input's value at the hit after everything else at that instant has
    happened (a step at t_k is already taken, as in Simulink and bdsim). `initial` is the
    output before the first hit (when the offset is not 0). Works elementwise on vectors.
    """

    name = "ZeroOrderHold"
    category = "Discrete"
    discrete = True
    params = (SAMPLE_TIME, Param("initial", "vector", 0.0, "output before the first hit"))
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "the input at the last hit"),)

    def sizes(self, p, in_widths):
        n = _width(p, in_widths, "u", "initial")
        return Sizes({"y": n}, discrete=n)

    def initial_discrete(self, p, n):
        return broadcast(p.initial, n)

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def sample_output(self, e: Emit):
        u = broadcast_names(e.u["u"], len(e.m))
        return {"y": [f"{m} = {v}" for m, v in zip(e.m, u)]}


def broadcast_names(names: list[str], n: int) -> list[str]:
    """An input's element expressions expanded to n elements (a scalar input widens)."""
    return names * n if len(names) == 1 else list(names)


BLOCK_TYPES = (UnitDelay, ZeroOrderHold)
