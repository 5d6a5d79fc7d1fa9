"""Discrete blocks: outputs that change only at their sample hits, held in between.

Each declares a `sample_time` ([period, offset] or a period; -1 inherits the input's rate).
At a hit, outputs come from the discrete states before the update and the inputs at that
instant (the right limit: a step at the same instant is already taken), then the states
update (`BlockType.sample_output` / `sample_update`); between hits the outputs are held.
This module has the delays, holds, differences, counters and change detectors, and the
helpers the other discrete modules share (`discrete_linear`, `discrete_integrator`, `pid`).
"""
from __future__ import annotations

import math

from .continuous import _edge_condition
from blocksim.blocktypes.blockspec import (SAMPLE_TIME, BlockType, Emit, Param, Port, Sizes, broadcast, lit,
                                size_of)

# External reset of the discrete integrators (DiscreteIntegrator, PID): Simulink's choices.
RESETS = ("none", "rising", "falling", "either", "level")
RESET_DOC = ("external reset: 'rising', 'falling', 'either' compare the reset input at a hit "
             "with its value at the previous hit (0 before the first), with Simulink's edges "
             "(rising: from < 0 to >= 0, or from 0 to > 0); 'level' resets while it is "
             "nonzero and at the first hit where it is back to zero; 'none' has no reset port")


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


def reset_condition(kind: str, old: str, new: str) -> str:
    """A reset test at a hit: `new` is the reset input now, `old` its value at the last hit.

    Edges follow the continuous library's (Simulink trigger rules); "level" is Simulink's
    level reset of a discrete integrator: nonzero now, or nonzero before and zero now.
    """
    if kind == "level":
        return f"({new} != 0.0 or {old} != 0.0)"
    return _edge_condition(kind, old, new)


def clip_expr(value: str, lower: float, upper: float) -> str:
    """`value` limited to [lower, upper]; infinite limits leave no trace in the code."""
    if lower > -math.inf:
        value = f"max({value}, {lit(lower)})"
    if upper < math.inf:
        value = f"min({value}, {lit(upper)})"
    return value


class DiscreteDerivative(BlockType):
    """Difference quotient of the input: y(k) = K (u(k) - u(k-1)) / T, T the sample period.

    `initial` is u(-1), the input taken as the previous sample at the first hit (so the
    first output is K (u(0) - initial) / T). The output is held between hits and is 0.0
    before the first hit (an offset). Works elementwise on vectors.
    """

    name = "DiscreteDerivative"
    category = "Discrete"
    discrete = True
    params = (Param("K", "vector", 1.0, "gain"),
              Param("initial", "vector", 0.0, "the input before the first hit, u(-1)"),
              SAMPLE_TIME)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "K (u(k) - u(k-1)) / T, in units of u per second times K"),)

    def sizes(self, p, in_widths):
        n = _width(p, in_widths, "u", "K", "initial")
        return Sizes({"y": n}, discrete=2 * n)  # held outputs, then the previous inputs

    def initial_discrete(self, p, n):
        return [0.0] * (n // 2) + broadcast(p.initial, n // 2)

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def sample_output(self, e: Emit):
        n = len(e.y["y"])
        u, k = broadcast_names(e.u["u"], n), broadcast(e.p.K, n)
        held, prev = e.m[:n], e.m[n:]
        period = lit(e.rate.period)
        return {"y": [f"{h} = {lit(k[i])} * ({u[i]} - {prev[i]}) / {period}"
                      for i, h in enumerate(held)]}

    def sample_update(self, e: Emit):
        n = len(e.y["y"])
        u = broadcast_names(e.u["u"], n)
        return [f"{prev} = {v}" for prev, v in zip(e.m[n:], u)]


class TappedDelay(BlockType):
    """The last N samples of a scalar input as one vector: u(k-1) ... u(k-N).

    `order` "oldest" (Simulink's default) gives [u(k-N), ..., u(k-1)], "newest"
    [u(k-1), ..., u(k-N)]; with `include_current` the input at the hit, u(k), is added at
    the newest end (last for "oldest", first for "newest") and the output reads the input
    directly at the hit. `initial` is the samples before the first hit: one value for all,
    or N values in the order of the output. Held between hits.
    """

    name = "TappedDelay"
    category = "Discrete"
    discrete = True
    params = (Param("delays", "int", 4, "number of delays N", low=1),
              Param("initial", "vector", 0.0, "samples before the first hit (1 or N values, "
                    "in the output's order)"),
              Param("order", "choice", "oldest", "which end of the output vector comes first",
                    choices=("oldest", "newest")),
              Param("include_current", "bool", False, "add the input at the hit to the output"),
              SAMPLE_TIME)
    inputs = (Port("u", "scalar input"),)
    outputs = (Port("y", "the delayed samples (N values, N + 1 with include_current)"),)

    def feedthrough(self, p):
        return {"y": ("u",) if p.include_current else ()}

    def check(self, p):
        if size_of(p.initial) not in (1, p.delays):
            return (f"parameter 'initial' has {size_of(p.initial)} values where 1 or "
                    f"{p.delays} (one per delay) are needed")
        return None

    def sizes(self, p, in_widths):
        if (in_widths.get("u") or 1) != 1:
            raise ValueError(f"input 'u' has width {in_widths['u']}; a TappedDelay takes a "
                             f"scalar input")
        width = p.delays + (1 if p.include_current else 0)
        return Sizes({"y": width}, discrete=width + p.delays)  # held outputs, delay line

    def _delayed(self, p, line: list[str]) -> list[str]:
        """The delay line (newest first) in the output's order."""
        return list(reversed(line)) if p.order == "oldest" else list(line)

    def initial_discrete(self, p, n):
        delays = p.delays
        line_in_order = broadcast(p.initial, delays)  # given in the output's order
        line = self._delayed(p, line_in_order)  # newest first (reversal is its own inverse)
        held = self._delayed(p, line)
        if p.include_current:
            held = held + [0.0] if p.order == "oldest" else [0.0] + held
        return held + line

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def sample_output(self, e: Emit):
        width = len(e.y["y"])
        held, line = e.m[:width], e.m[width:]
        values = self._delayed(e.p, line)
        if e.p.include_current:
            u = e.u["u"][0]
            values = values + [u] if e.p.order == "oldest" else [u] + values
        return {"y": [f"{h} = {v}" for h, v in zip(held, values)]}

    def sample_update(self, e: Emit):
        line = e.m[len(e.y["y"]):]  # newest first: line[0] = u(k-1)
        lines = [f"{line[i]} = {line[i - 1]}" for i in range(len(line) - 1, 0, -1)]
        return lines + [f"{line[0]} = {e.u['u'][0]}"]


class Counter(BlockType):
    """Count the hits, 0, 1, 2, ..., and wrap back to 0 after a limit or at overflow.

    Simulink's Counter Limited and Counter Free-Running in one block.

    `mode` "limited" counts up to `upper` and wraps to 0 at the next hit; "free-running"
    counts up to 2**bits - 1 (an unsigned `bits`-bit counter) and overflows to 0. The
    output at hit k is the count before that hit's increment: `initial` at the first hit
    (and before it, with an offset), then initial + 1, ... Held between hits.
    """

    name = "Counter"
    category = "Discrete"
    discrete = True
    params = (Param("mode", "choice", "limited", "wrap after `upper` (limited) or after "
                    "2**bits - 1 (free-running)", choices=("limited", "free-running")),
              Param("upper", "int", 7, "the largest count (limited)", low=0),
              Param("bits", "int", 16, "counter width in bits (free-running)", low=1, high=53),
              Param("initial", "int", 0, "the count at the first hit", low=0),
              SAMPLE_TIME)
    outputs = (Port("y", "the count"),)

    @staticmethod
    def limit(p) -> int:
        return p.upper if p.mode == "limited" else 2 ** p.bits - 1

    def check(self, p):
        if p.initial > self.limit(p):
            what = "'upper'" if p.mode == "limited" else "2**bits - 1"
            return (f"parameter 'initial' = {p.initial} is above the largest count "
                    f"{self.limit(p)} ({what})")
        return None

    def sizes(self, p, in_widths):
        return Sizes({"y": 1}, discrete=2)  # held output, count

    def initial_discrete(self, p, n):
        return [float(p.initial)] * 2

    def output(self, e: Emit):
        return {"y": [f"{e.y['y'][0]} = {e.m[0]}"]}

    def sample_output(self, e: Emit):
        return {"y": [f"{e.m[0]} = {e.m[1]}"]}

    def sample_update(self, e: Emit):
        count = e.m[1]
        return [f"{count} = ({count} + 1.0 if {count} < {lit(self.limit(e.p))} else 0.0)"]


_CHANGES = {
    "rise": "({u} > 0.0 and {prev} <= 0.0)",  # Simulink's Detect Rise Positive
    "fall": "({u} < 0.0 and {prev} >= 0.0)",  # Detect Fall Negative
    "change": "({u} != {prev})",  # Detect Change
}


class DetectChange(BlockType):
    """1.0 at a hit where the input changed as `mode` asks since the previous hit, else 0.0.

    `mode` "rise": u(k) > 0 and u(k-1) <= 0 (Simulink's Detect Rise Positive); "fall":
    u(k) < 0 and u(k-1) >= 0 (Detect Fall Negative); "change": u(k) != u(k-1) (Detect
    Change). `initial` is u(-1), the previous input at the first hit. The output is held
    until the next hit (0.0 before the first). Works elementwise on vectors.
    """

    name = "DetectChange"
    category = "Discrete"
    discrete = True
    params = (Param("mode", "choice", "change", "what counts as a change",
                    choices=tuple(_CHANGES)),
              Param("initial", "vector", 0.0, "the input before the first hit, u(-1)"),
              SAMPLE_TIME)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "1.0 at a hit with a change, else 0.0"),)

    def sizes(self, p, in_widths):
        n = _width(p, in_widths, "u", "initial")
        return Sizes({"y": n}, discrete=2 * n)  # held outputs, previous inputs

    def initial_discrete(self, p, n):
        return [0.0] * (n // 2) + broadcast(p.initial, n // 2)

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def sample_output(self, e: Emit):
        n = len(e.y["y"])
        u, test = broadcast_names(e.u["u"], n), _CHANGES[e.p.mode]
        return {"y": [f"{e.m[i]} = (1.0 if {test.format(u=u[i], prev=e.m[n + i])} else 0.0)"
                      for i in range(n)]}

    def sample_update(self, e: Emit):
        n = len(e.y["y"])
        u = broadcast_names(e.u["u"], n)
        return [f"{prev} = {v}" for prev, v in zip(e.m[n:], u)]


BLOCK_TYPES = (UnitDelay, ZeroOrderHold, DiscreteDerivative, TappedDelay, Counter, DetectChange)
