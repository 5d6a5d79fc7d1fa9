"""Continuous blocks: integrators (plain, limited, resettable) and linear systems."""
from __future__ import annotations

import numpy as np

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, ParamValues, Port, Sizes, broadcast, lit, size_of

_EDGES = ("rising", "falling", "either")


def _edge_condition(edge: str, old: str, new: str) -> str:
    """Simulink trigger semantics on latched signs: rising is - -> 0/+ or 0 -> +."""
    rising = f"(({old} < 0.0 and {new} >= 0.0) or ({old} == 0.0 and {new} > 0.0))"
    falling = f"(({old} > 0.0 and {new} <= 0.0) or ({old} == 0.0 and {new} < 0.0))"
    return {"rising": rising, "falling": falling, "either": f"({rising} or {falling})"}[edge]


ATOL = Param("atol", "vector", 0.0, "absolute tolerance of the state(s) in the solver's "
             "error control, one value or one per element: 0 takes the run's atol; inf "
             "leaves the state out of the error control (an ever-growing angle)",
             unit="as the state", low=0.0, allow_inf=True)


def state_tolerances(p: ParamValues, n: int) -> list[tuple[float, float]] | None:
    """The `atol` parameter as (absolute tolerance or nan, nominal 1) per state."""
    values = broadcast(p.atol, n)
    if not any(values):
        return None
    return [(a if a > 0.0 else float("nan"), 1.0) for a in values]


class Integrator(BlockType):
    """Integrate the input: y = x, x' = u.

    With finite `lower`/`upper` limits the state stops exactly at a limit (located as an
    event) and stays there while the input pushes outwards; the `sat` output is -1 at the
    lower limit, +1 at the upper one and 0 in between. With `ic_source` = "input" the
    initial value is read from the `x0` input at the start time.
    """

    name = "Integrator"
    category = "Continuous"
    event_kinds = (
        EventKind("lower limit", "the state reached `lower` and is held there while the input"
                                 " pushes down"),
        EventKind("upper limit", "the state reached `upper` and is held there while the input"
                                 " pushes up"),
        EventKind("leave limit", "the input turned back: the state leaves the limit it was "
                                 "held at"),
    )
    params = (
        Param("x0", "vector", 0.0, "initial value (its length sets the width)"),
        Param("ic_source", "choice", "parameter", "where the initial value comes from",
              choices=("parameter", "input")),
        Param("lower", "vector", float("-inf"), "lower limit (-inf: none)", allow_inf=True),
        Param("upper", "vector", float("inf"), "upper limit (inf: none)", allow_inf=True),
        ATOL,
    )
    inputs = (Port("u", "derivative"), Port("x0", "initial value (ic_source = input)"))
    outputs = (Port("y", "state"), Port("sat", "-1 at lower limit, +1 at upper, else 0"))

    @staticmethod
    def limited(p: ParamValues) -> bool:
        """Whether any limit is finite (then the block has modes and a `sat` output)."""
        return bool(np.any(np.asarray(p.lower) > -np.inf) or np.any(np.asarray(p.upper) < np.inf))

    def input_ports(self, p):
        return self.inputs if p.ic_source == "input" else self.inputs[:1]

    def output_ports(self, p):
        return self.outputs if self.limited(p) else self.outputs[:1]

    def feedthrough(self, p):
        return {port.name: () for port in self.output_ports(p)}

    def check(self, p):
        n = size_of(p.x0)
        for name in ("lower", "upper", "atol"):
            if size_of(p[name]) not in (1, n):
                return f"'{name}' has {size_of(p[name])} elements but x0 has {n}"
        lo, hi = broadcast(p.lower, n), broadcast(p.upper, n)
        if any(a > b for a, b in zip(lo, hi)):
            return f"lower limit {p.lower} is above upper limit {p.upper}"
        if p.ic_source == "parameter":
            if any(not a <= v <= b for v, a, b in zip(broadcast(p.x0, n), lo, hi)):
                return f"initial value {p.x0} lies outside the limits [{p.lower}, {p.upper}]"
        return None

    def sizes(self, p, in_widths):
        n = size_of(p.x0)
        if p.ic_source == "input" and in_widths.get("x0"):
            n = max(n, in_widths["x0"])
        lim = self.limited(p)
        outs = {"y": n, "sat": n} if lim else {"y": n}
        return Sizes(outs, states=n, discrete=n if lim else 0, zero_crossings=n if lim else 0)

    def state_tolerances(self, p, n):
        return state_tolerances(p, n)

    def initial_states(self, p, n):
        return broadcast(p.x0, n) if size_of(p.x0) in (1, n) else [0.0] * n

    def output(self, e: Emit):
        out = {"y": [f"{y} = {x}" for y, x in zip(e.y["y"], e.x)]}
        if "sat" in e.y:
            out["sat"] = [f"{s} = {m}" for s, m in zip(e.y["sat"], e.m)]
        return out

    def derivative(self, e: Emit):
        u = e.u["u"]
        uk = [u[k] if len(u) > 1 else u[0] for k in range(len(e.x))]
        if not e.m:
            return [f"{d} = {v}" for d, v in zip(e.dx, uk)]
        return [f"{d} = ({v} if {m} == 0.0 else 0.0)" for d, v, m in zip(e.dx, uk, e.m)]

    def zero_crossing(self, e: Emit):
        n = len(e.x)
        lo, hi = broadcast(e.p.lower, n), broadcast(e.p.upper, n)
        u = e.u["u"]
        lines = []
        for k in range(n):
            uk = u[k] if len(u) > 1 else u[0]
            free = f"min({e.x[k]} - {lit(lo[k])}, {lit(hi[k])} - {e.x[k]})"
            lines.append(f"{e.g[k]} = ({free} if {e.m[k]} == 0.0 else "
                         f"({uk} if {e.m[k]} < 0.0 else -({uk})))")
        return lines

    def update(self, e: Emit):
        n = len(e.x)
        lines = []
        if e.p.ic_source == "input":
            x0 = e.u["x0"]
            lines += [f"if init: {e.x[k]} = {x0[k] if len(x0) > 1 else x0[0]}" for k in range(n)]
        if not e.m:
            return lines
        lo, hi = broadcast(e.p.lower, n), broadcast(e.p.upper, n)
        u = e.u["u"]
        for k in range(n):
            x, m, zn = e.x[k], e.m[k], e.zn[k]
            uk = u[k] if len(u) > 1 else u[0]
            lo_k, hi_k = lit(lo[k]), lit(hi[k])
            # A limit holds only while the input does not point back inside: just after
            # leaving, the state still sits on the limit but the input has turned.
            lines += [
                f"if {m} == 0.0 and {zn} <= 0.0:",
                f"    if {x} - {lo_k} <= {hi_k} - {x}:",
                f"        if {uk} <= 0.0 or {x} < {lo_k}:",
                f"            {x} = {lo_k}; {m} = -1.0; {e.event('lower limit')}",
                f"    elif {uk} >= 0.0 or {x} > {hi_k}:",
                f"        {x} = {hi_k}; {m} = 1.0; {e.event('upper limit')}",
                f"elif {m} != 0.0 and {zn} > 0.0:",
                f"    {m} = 0.0; {e.event('leave limit')}",
            ]
        return lines


class ResetIntegrator(BlockType):
    """Integrator whose state is set to the `x0` input when the `reset` input has an edge.

    The `state` output carries the state without feedthrough, so a reset value computed
    from it (v := -mu*v) forms no algebraic loop. Between events it equals y; during an
    event it holds the value from just before the event, in every pass of the event
    iteration and in the event's right-limit row (as a HitCrossing's pulse is there), so
    logic reading it at a reset (rebound speed -mu*state below a limit) sees the impact
    speed, never the value just set; it follows y again once the event has settled.
    Edges follow Simulink: rising is negative to zero/positive or zero to positive;
    falling the mirror image.
    """

    name = "ResetIntegrator"
    category = "Continuous"
    event_kinds = (
        EventKind("reset", "an edge of the `reset` input: the state was set to the `x0` input"),
    )
    params = (
        Param("initial", "vector", 0.0, "initial value (its length sets the width)"),
        Param("edge", "choice", "rising", "which trigger edge resets", choices=_EDGES),
        ATOL,
    )
    inputs = (Port("u", "derivative"), Port("reset", "trigger signal"),
              Port("x0", "value taken at a reset"))
    outputs = (Port("y", "integrated value"),
               Port("state", "the value from just before the event, during an event; y "
                             "otherwise"))
    zc_direction = 0

    def feedthrough(self, p):
        return {"y": (), "state": ()}

    def check(self, p):
        if size_of(p.atol) not in (1, size_of(p.initial)):
            return (f"'atol' has {size_of(p.atol)} elements but initial has "
                    f"{size_of(p.initial)}")
        return None

    def sizes(self, p, in_widths):
        n = size_of(p.initial)
        # Discrete slots: the values held during an event, and a flag (1.0 in an event).
        return Sizes({"y": n, "state": n}, states=n, discrete=n + 1, zero_crossings=1)

    def zc_directions(self, p, count):
        return [{"rising": 1, "falling": -1, "either": 0}[p.edge]] * count

    def state_tolerances(self, p, n):
        return state_tolerances(p, n)

    def initial_states(self, p, n):
        return broadcast(p.initial, n)

    def output(self, e: Emit):
        held = e.m[-1]
        return {"y": [f"{y} = {x}" for y, x in zip(e.y["y"], e.x)],
                "state": [f"{y} = {m} if {held} != 0.0 else {x}"
                          for y, m, x in zip(e.y["state"], e.m, e.x)]}

    def pre_event(self, e: Emit):
        return [f"{m} = {x}" for m, x in zip(e.m, e.x)] + [f"{e.m[-1]} = 1.0"]

    def after_event(self, e: Emit):
        # `state` changes now only where a reset moved the state (signs are re-latched).
        moved = " or ".join(f"{m} != {x}" for m, x in zip(e.m, e.x))
        return [f"if {e.m[-1]} != 0.0:", f"    {e.m[-1]} = 0.0",
                f"    if {moved}: changed = True"]

    def derivative(self, e: Emit):
        u = e.u["u"]
        return [f"{d} = {u[k] if len(u) > 1 else u[0]}" for k, d in enumerate(e.dx)]

    def zero_crossing(self, e: Emit):
        return [f"{e.g[0]} = {e.u['reset'][0]}"]

    def update(self, e: Emit):
        x0 = e.u["x0"]
        fire = _edge_condition(e.p.edge, e.zo[0], e.zn[0])
        body = [f"    {x} = {x0[k] if len(x0) > 1 else x0[0]}" for k, x in enumerate(e.x)]
        return [f"if not init and {fire}:", *body, f"    {e.event('reset')}"]


BLOCK_TYPES = (Integrator, ResetIntegrator,)
