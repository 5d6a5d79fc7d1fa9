"""Static nonlinearities with kinks and jumps: Dead Zone, Quantizer, Coulomb and Viscous
Friction. Like Saturation, each keeps its region as a latched mode that changes only at a
located zero crossing, so error control never straddles a kink and a jump happens at the
exact instant the input crosses its threshold.

Also the latched integer band shared with Rounding (`integer_band_code`): compiled code
only (no Python helper), so the numba backend settles these events in its loop.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from blocksim.blocktypes.blockspec import (BlockType, Emit, EventKind, Param, ParamValues, Port, Sizes, broadcast,
                                lit, size_of)


def pick(seq: Sequence[str], k: int) -> str:
    """Element k of an input, a width-1 input expanding."""
    return seq[k] if len(seq) > 1 else seq[0]


def common_width(p: ParamValues, in_widths: Mapping[str, int | None], ports: Sequence[str],
                 params: Sequence[str]) -> int:
    """Element count of an elementwise block: its inputs' widths and its vector parameters'
    sizes, each 1 (expanded) or the common width; ValueError names the one that is not."""
    sizes = [(f"input '{port}'", in_widths.get(port) or 1) for port in ports]
    sizes += [(f"parameter '{name}'", size_of(p[name])) for name in params]
    n = max(size for _, size in sizes)
    for what, size in sizes:
        if size not in (1, n):
            raise ValueError(f"{what} has {size} elements where 1 or {n} are needed")
    return n


def sizes_problem(p: ParamValues, params: Sequence[str]) -> str | None:
    """A message if vector parameters cannot expand to one width, else None."""
    n = max(size_of(p[name]) for name in params)
    for name in params:
        if size_of(p[name]) not in (1, n):
            longest = next(other for other in params if size_of(p[other]) == n)
            return (f"parameter '{name}' has {size_of(p[name])} elements but '{longest}' has "
                    f"{n} (give 1 or {n})")
    return None


def shown(value: object) -> object:
    """A parameter value for a message: an array as a plain list."""
    return value.tolist() if hasattr(value, "tolist") else value


def note_change(e: Emit, kind: str, indent: str = "") -> list[str]:
    """Lines marking a mode change: an event entry, except while the start settles (setting
    a mode up there is no event)."""
    return [f"{indent}if init: changed = True", f"{indent}else: {e.event(kind)}"]


# ----- a latched integer band (Quantizer, Rounding) -----

# rule -> (k from v, band low end, band high end, low end closed, high end closed); band
# ends are in units of the interval, {k} the integer, {v} a plain name. Neighbouring bands
# share their end exactly ((k + 1) - 0.5 == k + 0.5 for every integer k) and exactly one of
# them holds it, so the sign tests of `integer_band_code` cannot ping-pong.
_RULES = {
    "floor": ("_f_floor({v})", "{k}", "{k} + 1.0", "True", "False"),
    "ceil": ("_f_ceil({v})", "{k} - 1.0", "{k}", "False", "True"),
    # MATLAB round: half away from zero, so 0.5 belongs to 1 and -0.5 to -1.
    "round": ("_f_round({v})", "{k} - 0.5", "{k} + 0.5", "{k} > 0.0", "{k} < 0.0"),
    "fix": ("(_f_floor({v}) if {v} >= 0.0 else _f_ceil({v}))",
            "({k} if {k} > 0.0 else {k} - 1.0)", "({k} + 1.0 if {k} >= 0.0 else {k})",
            "{k} > 0.0", "{k} < 0.0"),
}
ROUNDING_RULES = tuple(_RULES)
BAND_SLOTS = 4  # discrete slots per element: k, low end, high end, started
BAND_DIRECTIONS = (-1, -1)  # u - low, high - u: only leaving the band matters


def initial_band(n_slots: int) -> list[float]:
    """Discrete slots before the first update: k = 0, a finite band, not started."""
    return [0.0, -0.5, 0.5, 0.0] * (n_slots // BAND_SLOTS)


def band_zero_crossings(e: Emit, port: str = "u") -> list[str]:
    """u - low and high - u per element: positive inside the latched band."""
    lines = []
    for k in range(len(e.m) // BAND_SLOTS):
        u, lo, hi = pick(e.u[port], k), e.m[BAND_SLOTS * k + 1], e.m[BAND_SLOTS * k + 2]
        lines += [f"{e.g[2 * k]} = {u} - {lo}", f"{e.g[2 * k + 1]} = {hi} - {u}"]
    return lines


class IntegerBand:
    """Mixed into a block whose output is a latched integer band of its input (Quantizer,
    Rounding): BAND_SLOTS discrete slots and two zero crossings (the band's ends) per
    element, the output read from the latched level only (updated at events)."""

    event_kinds = (EventKind("level", "the output moved to another level (the input crossed "
                                      "an end of the current one's interval)"),)

    def feedthrough(self, p):
        return {"y": ()}  # the latched level, updated only at events

    def zc_directions(self, p, count):
        return list(BAND_DIRECTIONS) * (count // 2)

    def initial_discrete(self, p, n):
        return initial_band(n)

    def zero_crossing(self, e: Emit):
        return band_zero_crossings(e)


def integer_band_code(e: Emit, rule: str, intervals: Sequence[float], port: str = "u"
                      ) -> list[str]:
    """Update lines keeping k = rule(u / q) per element as a latched mode.

    The first update (and the first after an enabled subsystem's reset) takes k from u;
    later ones move k by the signs just after the event: at least one step out of the
    side the input left by, further if it jumped (from u itself). A value that roundoff
    put on the wrong side of an end is corrected in the next pass of the event iteration.
    """
    value, low, high, closed_low, closed_high = _RULES[rule]
    v, kn = f"_v{e.index}", f"_k{e.index}"
    lines = []
    for k in range(len(e.m) // BAND_SLOTS):
        kk, lo, hi, started = e.m[BAND_SLOTS * k:BAND_SLOTS * k + BAND_SLOTS]
        zl, zh = e.zn[2 * k], e.zn[2 * k + 1]
        q = intervals[k]
        u = pick(e.u[port], k)
        scale = "" if q == 1.0 else f" * {lit(q)}"
        lines += [
            f"{v} = {u}" + ("" if q == 1.0 else f" / {lit(q)}"),
            f"{v} = {value.format(v=v)}",
            f"if {started} == 0.0:",
            f"    {kn} = ({v} if {v} == {v} else 0.0)",
            f"elif {zh} < 0.0 or ({zh} == 0.0 and not ({closed_high.format(k=kk)})):",
            f"    {kn} = ({v} if {v} > {kk} + 1.0 else {kk} + 1.0)",
            f"elif {zl} < 0.0 or ({zl} == 0.0 and not ({closed_low.format(k=kk)})):",
            f"    {kn} = ({v} if {v} < {kk} - 1.0 else {kk} - 1.0)",
            "else:",
            f"    {kn} = {kk}",
            f"if {started} == 0.0 or {kn} != {kk}:",
            f"    if init or {kn} == {kk}: changed = True",  # a start: no event
            f"    else: {e.event('level')}",
            f"    {kk} = {kn}",
            f"    {lo} = ({low.format(k=kn)}){scale}",
            f"    {hi} = ({high.format(k=kn)}){scale}",
            f"    {started} = 1.0",
        ]
    return lines


# ----- the blocks -----

class DeadZone(BlockType):
    """Zero output inside [start, end]; outside, the input shifted by the nearer end.

    y = u - start below start, 0 in the dead zone, u - end above end (Simulink's Dead
    Zone). The region is latched from two zero crossings, u - start and end - u, so it
    changes only at located events and no step straddles a kink; while a crossing's sign
    is 0 the output is 0, so it is continuous at the ends.
    """

    name = "DeadZone"
    category = "Discontinuities"
    params = (
        Param("start", "vector", -0.5, "lower end of the dead zone (same unit as u)"),
        Param("end", "vector", 0.5, "upper end of the dead zone, >= start"),
    )
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "u - start below start, 0 inside, u - end above end"),)

    def check(self, p):
        problem = sizes_problem(p, ("start", "end"))
        if problem:
            return problem
        n = max(size_of(p.start), size_of(p.end))
        if any(a > b for a, b in zip(broadcast(p.start, n), broadcast(p.end, n))):
            return f"parameter 'end' ({shown(p.end)}) is below 'start' ({shown(p.start)})"
        return None

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, ("u",), ("start", "end"))
        return Sizes({"y": n}, zero_crossings=2 * n)

    def zero_crossing(self, e: Emit):
        n = len(e.y["y"])
        lo, hi = broadcast(e.p.start, n), broadcast(e.p.end, n)
        lines = []
        for k in range(n):
            u = pick(e.u["u"], k)
            lines += [f"{e.g[2 * k]} = {u} - {lit(lo[k])}",
                      f"{e.g[2 * k + 1]} = {lit(hi[k])} - {u}"]
        return lines

    def output(self, e: Emit):
        n = len(e.y["y"])
        lo, hi = broadcast(e.p.start, n), broadcast(e.p.end, n)
        lines = []
        for k, y in enumerate(e.y["y"]):
            u = pick(e.u["u"], k)
            lines.append(f"{y} = ({u} - {lit(lo[k])} if {e.z[2 * k]} < 0.0 else "
                         f"{u} - {lit(hi[k])} if {e.z[2 * k + 1]} < 0.0 else 0.0)")
        return {"y": lines}


class Quantizer(IntegerBand, BlockType):
    """Round the input to a multiple of the quantization interval: y = q * round(u / q).

    round is MATLAB's (half away from zero), as in Simulink's Quantizer. The level k is a
    latched mode: two zero crossings watch the mid-points (k - 1/2) q and (k + 1/2) q, so
    each jump happens exactly where the input crosses a mid-point, the output is constant
    between jumps and no step straddles one.
    """

    name = "Quantizer"
    category = "Discontinuities"
    params = (Param("interval", "vector", 0.5, "quantization interval q, > 0 (same unit as u)"),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "q * round(u / q)"),)

    def check(self, p):
        if any(q <= 0.0 for q in broadcast(p.interval, size_of(p.interval))):
            return f"parameter 'interval' must be > 0, got {shown(p.interval)}"
        return None

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, ("u",), ("interval",))
        return Sizes({"y": n}, discrete=BAND_SLOTS * n, zero_crossings=2 * n)

    def output(self, e: Emit):
        q = broadcast(e.p.interval, len(e.y["y"]))
        return {"y": [f"{y} = {e.m[BAND_SLOTS * k]} * {lit(q[k])}"
                      for k, y in enumerate(e.y["y"])]}

    def update(self, e: Emit):
        return integer_band_code(e, "round", broadcast(e.p.interval, len(e.y["y"])))


class CoulombViscousFriction(BlockType):
    """Coulomb plus viscous friction: y = sign(u) * (gain * |u| + offset).

    The output jumps by 2 * offset where u crosses 0 (at u = 0 it is 0). The sign of u is
    latched (one zero crossing per element), so the jump happens at the located crossing
    and a continuous step never mixes the two branches gain * u +- offset.

    It models sliding friction only. In a loop where u (a velocity) comes to rest while
    the force driving it is below the Coulomb level (|applied force| < offset), the load
    sticks: either sign of u gives a friction that reverses u, and the run fails at that
    instant with an error naming the block and saying so. Sticking needs a stick/slip
    model: the velocity held at 0 while |applied force| <= offset, e.g. its Integrator in
    an EnabledSubsystem enabled while the load slips.
    """

    name = "CoulombViscousFriction"
    category = "Discontinuities"
    params = (
        Param("offset", "vector", 1.0, "Coulomb friction Fc: the jump at u = 0 is 2 Fc "
              "(unit of y, e.g. N)"),
        Param("gain", "vector", 1.0, "viscous friction coefficient Fv: y per unit of u "
              "(e.g. N s/m)"),
    )
    inputs = (Port("u", "input (e.g. a velocity)"),)
    outputs = (Port("y", "sign(u) * (gain * |u| + offset)"),)

    def check(self, p):
        return sizes_problem(p, ("offset", "gain"))

    def unsettled(self, p):
        return ("sticks: its input (a velocity) is at 0 and the force driving it is below "
                "the Coulomb level 'offset', so either sign of the input gives a friction "
                "that reverses it; a CoulombViscousFriction models sliding friction only: "
                "model sticking with a stick/slip model (the velocity held at 0 while "
                "|applied force| <= offset, e.g. its Integrator in an EnabledSubsystem "
                "enabled while the load slips)")

    def sizes(self, p, in_widths):
        n = common_width(p, in_widths, ("u",), ("offset", "gain"))
        return Sizes({"y": n}, zero_crossings=n)

    def zero_crossing(self, e: Emit):
        return [f"{g} = {pick(e.u['u'], k)}" for k, g in enumerate(e.g)]

    def output(self, e: Emit):
        n = len(e.y["y"])
        fc, fv = broadcast(e.p.offset, n), broadcast(e.p.gain, n)
        lines = []
        for k, y in enumerate(e.y["y"]):
            viscous = f"{lit(fv[k])} * {pick(e.u['u'], k)}"
            lines.append(f"{y} = ({viscous} + {lit(fc[k])} if {e.z[k]} > 0.0 else "
                         f"{viscous} - {lit(fc[k])} if {e.z[k]} < 0.0 else {viscous})")
        return {"y": lines}


BLOCK_TYPES = (DeadZone, Quantizer, CoulombViscousFriction,)
