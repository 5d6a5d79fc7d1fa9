"""The Second-Order Integrator: x and dx from ddx in one block, so that a limit on x stops
dx too (a ball at rest on the floor has dx = 0 exactly), with an optional external reset of
dx for impacts with restitution."""
from __future__ import annotations

import numpy as np

from blocksim.blocktypes.blockspec import (BlockType, Emit, EventKind, Param, ParamValues, Port, Sizes, broadcast, lit,
                                size_of)

from .continuous import _EDGES, _edge_condition
from .nonlinear import common_width, pick, shown, sizes_problem

_VECTORS = ("x0", "dx0", "lower", "upper", "dx_lower", "dx_upper")
_INF = float("inf")


def _finite_any(p: ParamValues, low: str, high: str) -> bool:
    lo, hi = p[low], p[high]
    if type(lo) is float and type(hi) is float:  # most limits (a sweep asks again per run)
        return lo > -_INF or hi < _INF
    return bool(np.any(np.asarray(lo) > -_INF) or np.any(np.asarray(hi) < _INF))


class SecondOrderIntegrator(BlockType):
    """Integrate ddx twice: dx' = ddx, x' = dx (Simulink's Second-Order Integrator).

    Limits on x (`lower`, `upper`) stop dx too: where x reaches a limit with dx pointing
    into it (a located event, "lower limit"/"upper limit"), x stays on the limit and dx is
    0 exactly, for as long as ddx pushes into the limit or is 0; it leaves ("leave limit")
    where ddx turns away from the limit, from dx = 0. Limits on dx (`dx_lower`,
    `dx_upper`) hold dx at a limit while ddx pushes outwards, as a limited Integrator does
    ("dx lower limit", "dx upper limit", "dx leave limit"); they must allow dx = 0 where x
    is limited.

    With `reset` set to an edge, an edge of the `reset` input sets dx to the `dx_reset`
    input ("reset"): an impact with restitution is a reset by x itself falling to the
    floor, with dx_reset = -e dx (dx is the value before the reset, so this makes no
    loop). A reset at a limit of x lets x bounce off it when the new dx points away. If
    that new dx is so small that x would be back on the limit within the engine's event
    horizon (bounces accumulating at a Zeno point), x stays on the limit and dx is 0: the
    ball comes to rest.
    """

    name = "SecondOrderIntegrator"
    category = "Continuous"
    event_kinds = (
        EventKind("lower limit", "x reached `lower` (dx set to 0) and is held there"),
        EventKind("upper limit", "x reached `upper` (dx set to 0) and is held there"),
        EventKind("leave limit", "ddx turned away from the limit: x leaves it"),
        EventKind("dx lower limit", "dx reached `dx_lower` and is held there"),
        EventKind("dx upper limit", "dx reached `dx_upper` and is held there"),
        EventKind("dx leave limit", "ddx turned back: dx leaves its limit"),
        EventKind("reset", "an edge of the `reset` input: dx was set to the `dx_reset` input"),
    )
    params = (
        Param("x0", "vector", 0.0, "initial x (its length may set the width)"),
        Param("dx0", "vector", 0.0, "initial dx", unit="unit of x per second"),
        Param("lower", "vector", -_INF, "lower limit of x (-inf: none)", allow_inf=True),
        Param("upper", "vector", _INF, "upper limit of x (inf: none)", allow_inf=True),
        Param("dx_lower", "vector", -_INF, "lower limit of dx (-inf: none; <= 0 where x "
              "is limited)", allow_inf=True),
        Param("dx_upper", "vector", _INF, "upper limit of dx (inf: none; >= 0 where x is "
              "limited)", allow_inf=True),
        Param("reset", "choice", "none", "which edge of the reset input sets dx to dx_reset "
              "(none: no reset ports)", choices=("none", *_EDGES)),
    )
    inputs = (Port("ddx", "second derivative of x"),
              Port("reset", "trigger (reset != none)"),
              Port("dx_reset", "the value dx takes at a reset (reset != none)"))
    outputs = (Port("x", "x"), Port("dx", "dx/dt (0 while x is on a limit)"))

    def input_ports(self, p):
        return self.inputs if p.reset != "none" else self.inputs[:1]

    def feedthrough(self, p):
        return {"x": (), "dx": ()}

    @staticmethod
    def _modes(p) -> bool:
        return (_finite_any(p, "lower", "upper") or _finite_any(p, "dx_lower", "dx_upper")
                or p.reset != "none")

    def check(self, p):
        problem = sizes_problem(p, _VECTORS)
        if problem:
            return problem
        n = max(size_of(p[name]) for name in _VECTORS)
        v = {name: broadcast(p[name], n) for name in _VECTORS}
        for low, high in (("lower", "upper"), ("dx_lower", "dx_upper")):
            if any(a > b for a, b in zip(v[low], v[high])):
                return f"parameter '{low}' ({shown(p[low])}) is above '{high}' ({shown(p[high])})"
        for value, low, high in (("x0", "lower", "upper"), ("dx0", "dx_lower", "dx_upper")):
            if any(not a <= x <= b for x, a, b in zip(v[value], v[low], v[high])):
                return (f"parameter '{value}' ({shown(p[value])}) lies outside "
                        f"['{low}', '{high}'] = [{shown(p[low])}, {shown(p[high])}]")
        for k in range(n):
            limited = v["lower"][k] > -_INF or v["upper"][k] < _INF
            if limited and not v["dx_lower"][k] <= 0.0 <= v["dx_upper"][k]:
                return ("parameters 'dx_lower'/'dx_upper' must allow dx = 0 where x has a "
                        f"limit (x stops there), got [{shown(p.dx_lower)}, {shown(p.dx_upper)}]")
        return None

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, ("ddx",), _VECTORS)
        if p.reset != "none" and (in_widths.get("dx_reset") or 1) not in (1, n):
            raise ValueError(f"input 'dx_reset' has width {in_widths['dx_reset']} where 1 or "
                             f"{n} are needed")
        if p.reset != "none" and (in_widths.get("reset") or 1) != 1:
            raise ValueError(f"input 'reset' has width {in_widths['reset']}; the trigger is "
                             f"one signal")
        modes = self._modes(p)
        zcs = 3 * n + (p.reset != "none") if modes else 0
        return Sizes({"x": n, "dx": n}, states=2 * n, discrete=3 * n if modes else 0,
                     zero_crossings=zcs)

    def zc_directions(self, p, count):
        edge = {"rising": 1, "falling": -1, "either": 0}.get(p.reset)
        return [0] * (count - 1) + [edge] if edge is not None else [0] * count

    def initial_states(self, p, n):
        w = n // 2
        return broadcast(p.x0, w) + broadcast(p.dx0, w)

    def initial_discrete(self, p, n):
        return [0.0] * n

    # ----- names -----
    @staticmethod
    def _n(e: Emit) -> int:
        return len(e.y["x"])

    def _limits(self, e: Emit) -> dict[str, list[str]]:
        n = self._n(e)
        return {name: [lit(v) for v in broadcast(e.p[name], n)]
                for name in ("lower", "upper", "dx_lower", "dx_upper")}

    def _slots(self, e: Emit, k: int) -> tuple[str, str, str]:
        return e.m[3 * k], e.m[3 * k + 1], e.m[3 * k + 2]  # x mode, dx mode, just clamped

    # ----- code -----
    def output(self, e: Emit):
        n = self._n(e)
        return {"x": [f"{y} = {x}" for y, x in zip(e.y["x"], e.x[:n])],
                "dx": [f"{y} = {x}" for y, x in zip(e.y["dx"], e.x[n:])]}

    def derivative(self, e: Emit):
        n = self._n(e)
        lines = []
        for k in range(n):
            ddx, v = pick(e.u["ddx"], k), e.x[n + k]
            if not e.m:
                lines += [f"{e.dx[k]} = {v}", f"{e.dx[n + k]} = {ddx}"]
                continue
            mx, mdx, _ = self._slots(e, k)
            lines += [f"{e.dx[k]} = ({v} if {mx} == 0.0 else 0.0)",
                      f"{e.dx[n + k]} = ({ddx} if {mx} == 0.0 and {mdx} == 0.0 else 0.0)"]
        return lines

    def zero_crossing(self, e: Emit):
        if not e.g:
            return []
        n, lim = self._n(e), self._limits(e)
        lines = []
        for k in range(n):
            x, v, ddx = e.x[k], e.x[n + k], pick(e.u["ddx"], k)
            mx, mdx, mb = self._slots(e, k)
            lo, hi, dlo, dhi = (lim[name][k] for name in ("lower", "upper", "dx_lower", "dx_upper"))
            g_x, g_d, g_v = e.g[3 * k:3 * k + 3]
            lines += [
                f"{g_x} = (min({x} - {lo}, {hi} - {x}) if {mx} == 0.0 else "
                f"({ddx} if {mx} < 0.0 else -({ddx})))",
                f"{g_d} = (1.0 if {mx} != 0.0 else min({v} - {dlo}, {dhi} - {v}) "
                f"if {mdx} == 0.0 else ({ddx} if {mdx} < 0.0 else -({ddx})))",
                # Only in the event after a bounce off a limit: does dx point away from it
                # one horizon later (else x would be back within the horizon: rest)?
                f"{g_v} = ({v} if {mb} < 0.0 else -({v}) if {mb} > 0.0 else 1.0)",
            ]
        if e.p.reset != "none":
            lines.append(f"{e.g[3 * n]} = {e.u['reset'][0]}")
        return lines

    def update(self, e: Emit):
        if not e.m:
            return []
        n, lim = self._n(e), self._limits(e)
        fired, acted = f"_f{e.index}", f"_a{e.index}"
        lines = [f"{fired} = False"]
        if e.p.reset != "none":
            # An edge while x rests on a limit with dx_reset not pointing away does nothing
            # (dx stays 0) and is not logged: x coming to rest on the floor it triggers on
            # reads as a falling edge (+ to 0) once more.
            lines += [f"if not init and {_edge_condition(e.p.reset, e.zo[3 * n], e.zn[3 * n])}:",
                      f"    {fired} = True; {acted} = False"]
            for k in range(n):
                mx, mdx, _ = self._slots(e, k)
                v, r = e.x[n + k], pick(e.u["dx_reset"], k)
                dlo, dhi = lim["dx_lower"][k], lim["dx_upper"][k]
                lines += [f"    if {mx} == 0.0 or ({mx} < 0.0 and {r} > 0.0) or "
                          f"({mx} > 0.0 and {r} < 0.0):",
                          f"        {v} = min(max({r}, {dlo}), {dhi}); {mx} = 0.0; {mdx} = 0.0",
                          f"        {acted} = True"]
            lines.append(f"    if {acted}: {e.event('reset')}")
        for k in range(n):
            lines += self._limit_code(e, k, lim, fired)
        return lines

    def _limit_code(self, e: Emit, k: int, lim: dict[str, list[str]], fired: str) -> list[str]:
        n = self._n(e)
        x, v, ddx = e.x[k], e.x[n + k], pick(e.u["ddx"], k)
        mx, mdx, mb = self._slots(e, k)
        lo, hi, dlo, dhi = (lim[name][k] for name in ("lower", "upper", "dx_lower", "dx_upper"))
        zx, zd, zv = e.zn[3 * k:3 * k + 3]
        stop_low = f"{x} = {lo}; {v} = 0.0; {mx} = -1.0; {mdx} = 0.0; {mb} = 0.0"
        stop_high = f"{x} = {hi}; {v} = 0.0; {mx} = 1.0; {mdx} = 0.0; {mb} = 0.0"
        lines = []
        if lo != "(-inf)" or hi != "inf":
            lines += [
                f"if {mx} == 0.0 and {mb} != 0.0 and not {fired} and {zv} <= 0.0:",
                # bounced off a limit, but back within the horizon: at rest on it
                f"    if {mb} < 0.0:",
                f"        {stop_low}; {e.event('lower limit')}",
                "    else:",
                f"        {stop_high}; {e.event('upper limit')}",
                f"elif {mx} == 0.0 and {zx} <= 0.0:",
                f"    if {x} - {lo} <= {hi} - {x}:",
                f"        if {v} <= 0.0 and not {fired}:",
                f"            {stop_low}; {e.event('lower limit')}",
                f"        elif {x} <= {lo} and {mb} == 0.0:",  # bouncing off: armed
                f"            {x} = {lo}; {mb} = -1.0; changed = True",
                f"    elif {v} >= 0.0 and not {fired}:",
                f"        {stop_high}; {e.event('upper limit')}",
                f"    elif {x} >= {hi} and {mb} == 0.0:",
                f"        {x} = {hi}; {mb} = 1.0; changed = True",
                f"elif {mx} != 0.0 and {zx} > 0.0:",
                f"    {mx} = 0.0; {e.event('leave limit')}",
            ]
        if dlo != "(-inf)" or dhi != "inf":
            lines += [
                f"if {mx} == 0.0 and {mdx} == 0.0 and {zd} <= 0.0:",
                f"    if {v} - {dlo} <= {dhi} - {v}:",
                f"        if {ddx} <= 0.0 or {v} < {dlo}:",
                f"            {v} = {dlo}; {mdx} = -1.0; {e.event('dx lower limit')}",
                f"    elif {ddx} >= 0.0 or {v} > {dhi}:",
                f"        {v} = {dhi}; {mdx} = 1.0; {e.event('dx upper limit')}",
                f"elif {mx} == 0.0 and {mdx} != 0.0 and {zd} > 0.0:",
                f"    {mdx} = 0.0; {e.event('dx leave limit')}",
            ]
        return lines

    def after_event(self, e: Emit):
        n = self._n(e)
        return [f"if {mb} != 0.0: {mb} = 0.0; changed = True"
                for mb in (self._slots(e, k)[2] for k in range(n))] if e.m else []


BLOCK_TYPES = (SecondOrderIntegrator,)
