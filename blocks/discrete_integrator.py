"""The Discrete-Time Integrator: forward Euler, backward Euler or trapezoidal accumulation of
its input, with optional limits (and a saturation output) and an external reset."""
from __future__ import annotations

import math

import numpy as np

from .discrete import RESET_DOC, RESETS, _width, broadcast_names, clip_expr, reset_condition
from blocksim.blocktypes.blockspec import SAMPLE_TIME, BlockType, Emit, Param, Port, Sizes, broadcast, lit

# Integration methods: (name, weight c of the current input in the output). The output at
# a hit is y = x + c K T u (FE c = 0, BE c = 1, TR c = 1/2) and the state becomes
# x' = y + (1 - c) K T u: Simulink's equations, x(k+1) = x(k) + K T u(k) for FE.
METHODS = {"forward-euler": 0.0, "backward-euler": 1.0, "trapezoidal": 0.5}
METHOD_DOC = ("'forward-euler' (K T/(z - 1)), 'backward-euler' (K T z/(z - 1)) or "
              "'trapezoidal' (K T/2 (z + 1)/(z - 1))")


class DiscreteIntegrator(BlockType):
    """Discrete-time integration of the input (Simulink's Discrete-Time Integrator).

    With T the sample period, state x and output y at hit k:

    * forward-euler (default): y(k) = x(k), x(k+1) = x(k) + K T u(k) (no direct feedthrough);
    * backward-euler: y(k) = x(k) + K T u(k), x(k+1) = y(k);
    * trapezoidal: y(k) = x(k) + K T/2 u(k), x(k+1) = y(k) + K T/2 u(k).

    At the first hit, and at a hit where the external reset fires, the output is `initial`
    (Simulink's "y(0) = IC") and the state continues from it: x(k+1) = initial + K T u(k)
    (FE), initial (BE), initial + K T/2 u(k) (TR). The reset is detected at hits only, by
    comparing the `reset` input with its value at the previous hit (see `external_reset`).

    With finite `lower`/`upper` limits the output and the state are clipped to them (the
    initial value too), and the `sat` output is +1 while the output is at the upper limit,
    -1 at the lower one, 0 in between. Before the first hit (with an offset) the output is
    `initial` (clipped). Works elementwise on vectors; units: y in units of u times K s.
    """

    name = "DiscreteIntegrator"
    category = "Discrete"
    discrete = True
    params = (
        Param("K", "vector", 1.0, "gain applied to the input"),
        Param("method", "choice", "forward-euler", "integration method: " + METHOD_DOC,
              choices=tuple(METHODS)),
        Param("initial", "vector", 0.0, "initial condition: the output at the first hit and "
              "after a reset"),
        Param("lower", "vector", -math.inf, "lower limit of output and state (-inf: none)",
              allow_inf=True),
        Param("upper", "vector", math.inf, "upper limit of output and state (inf: none)",
              allow_inf=True),
        Param("external_reset", "choice", "none", RESET_DOC, choices=RESETS),
        SAMPLE_TIME,
    )
    inputs = (Port("u", "input"), Port("reset", "reset signal (external_reset not 'none')"))
    outputs = (Port("y", "the integral"),
               Port("sat", "+1 at the upper limit, -1 at the lower, else 0 (with limits)"))
    _VECTORS = ("K", "initial", "lower", "upper")

    @staticmethod
    def limited(p) -> bool:
        return bool(np.any(np.asarray(p.lower) > -np.inf) or np.any(np.asarray(p.upper) < np.inf))

    def input_ports(self, p):
        return self.inputs if p.external_reset != "none" else self.inputs[:1]

    def output_ports(self, p):
        return self.outputs if self.limited(p) else self.outputs[:1]

    def feedthrough(self, p):
        direct = (["u"] if METHODS[p.method] else []) + (
            ["reset"] if p.external_reset != "none" else [])
        return {port.name: tuple(direct) for port in self.output_ports(p)}

    def check(self, p):
        n = max(np.size(p[name]) for name in self._VECTORS)
        for name in self._VECTORS:
            if np.size(p[name]) not in (1, n):
                return f"parameter '{name}' has {np.size(p[name])} elements where 1 or {n} are needed"
        lo, hi = broadcast(p.lower, n), broadcast(p.upper, n)
        if any(a > b for a, b in zip(lo, hi)):
            return f"parameter 'lower' ({p.lower}) is above 'upper' ({p.upper})"
        return None

    def _groups(self, p) -> int:
        """Slot groups of n: held y, [held sat], state x, [previous reset]; then one flag."""
        return 2 + self.limited(p) + (p.external_reset != "none")

    def sizes(self, p, in_widths):
        n = _width(p, in_widths, "u", *self._VECTORS)
        reset = in_widths.get("reset")
        if reset is not None and reset not in (1, n):
            raise ValueError(f"input 'reset' has width {reset} where 1 or {n} are needed")
        outs = {port.name: n for port in self.output_ports(p)}
        return Sizes(outs, discrete=self._groups(p) * n + 1)

    def _slots(self, p, names: list) -> dict[str, list]:
        """The slot names (or initial values) by group: y, sat, x, prev, fresh."""
        n = (len(names) - 1) // self._groups(p)
        groups = ["y"] + (["sat"] if self.limited(p) else []) + ["x"] + (
            ["prev"] if p.external_reset != "none" else [])
        slots = {g: names[i * n:(i + 1) * n] for i, g in enumerate(groups)}
        slots["fresh"] = names[-1]
        return slots

    def initial_discrete(self, p, n):
        width = (n - 1) // self._groups(p)
        lo, hi = broadcast(p.lower, width), broadcast(p.upper, width)
        y0 = [min(max(v, a), b) for v, a, b in zip(broadcast(p.initial, width), lo, hi)]
        values = list(y0)
        if self.limited(p):
            values += [1.0 if v >= b else -1.0 if v <= a else 0.0 for v, a, b in zip(y0, lo, hi)]
        values += y0
        if p.external_reset != "none":
            values += [0.0] * width
        return values + [1.0]  # fresh: the first hit outputs the initial value

    def output(self, e: Emit):
        s = self._slots(e.p, e.m)
        out = {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], s["y"])]}
        if "sat" in e.y:
            out["sat"] = [f"{y} = {m}" for y, m in zip(e.y["sat"], s["sat"])]
        return out

    def sample_output(self, e: Emit):
        p, s = e.p, self._slots(e.p, e.m)
        n = len(s["y"])
        u = broadcast_names(e.u["u"], n)
        kt = [k * e.rate.period * METHODS[p.method] for k in broadcast(p.K, n)]
        x0, lo, hi = broadcast(p.initial, n), broadcast(p.lower, n), broadcast(p.upper, n)
        reset = broadcast_names(e.u["reset"], n) if "prev" in s else None
        lines = []
        for k in range(n):
            value = s["x"][k] if not kt[k] else f"{s['x'][k]} + {lit(kt[k])} * {u[k]}"
            fresh = f"{s['fresh']} != 0.0"
            if reset is not None:
                fresh += " or " + reset_condition(p.external_reset, s["prev"][k], reset[k])
            start = lit(min(max(x0[k], lo[k]), hi[k]))
            lines.append(f"{s['y'][k]} = ({start} if {fresh} else "
                         f"{clip_expr(value, lo[k], hi[k])})")
            if "sat" in s:
                y = s["y"][k]
                lines.append(f"{s['sat'][k]} = (1.0 if {y} >= {lit(hi[k])} else -1.0 if "
                             f"{y} <= {lit(lo[k])} else 0.0)")
        # Both ports set both held values (the same values whichever comes first in the hit).
        return {port: lines for port in e.y}

    def sample_update(self, e: Emit):
        p, s = e.p, self._slots(e.p, e.m)
        n = len(s["y"])
        u = broadcast_names(e.u["u"], n)
        rest = 1.0 - METHODS[p.method]
        kt = [k * e.rate.period * rest for k in broadcast(p.K, n)]
        lo, hi = broadcast(p.lower, n), broadcast(p.upper, n)
        lines = []
        for k in range(n):
            value = s["y"][k] if not kt[k] else f"{s['y'][k]} + {lit(kt[k])} * {u[k]}"
            lines.append(f"{s['x'][k]} = {clip_expr(value, lo[k], hi[k])}")
        if "prev" in s:
            lines += [f"{prev} = {r}" for prev, r in
                      zip(s["prev"], broadcast_names(e.u["reset"], n))]
        return lines + [f"{s['fresh']} = 0.0"]


BLOCK_TYPES = (DiscreteIntegrator,)
