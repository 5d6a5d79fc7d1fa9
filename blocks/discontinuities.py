"""Discontinuous blocks: their mode is latched during a continuous step and changes only at
a located zero crossing, so error control stays honest and nothing chatters."""
from __future__ import annotations

from math import inf

from .continuous import _EDGES, _edge_condition
from blocksim.blocktypes.blockspec import (BlockType, Emit, EventKind, Param, Port, Sizes, broadcast,
                                          each, elementwise_width, lit, size_of)

# Relation -> (zero-crossing function, test on its latched sign z) for inputs a, b.
RELATIONS = {
    "<": ("{b} - {a}", "{z} > 0.0"),
    "<=": ("{a} - {b}", "{z} <= 0.0"),
    ">": ("{a} - {b}", "{z} > 0.0"),
    ">=": ("{b} - {a}", "{z} <= 0.0"),
    "==": ("{a} - {b}", "{z} == 0.0"),
    "!=": ("{a} - {b}", "{z} != 0.0"),
}


def _pick(seq: list[str], k: int) -> str:
    return seq[k] if len(seq) > 1 else seq[0]


class RelationalOperator(BlockType):
    """Compare u1 with u2 (y = 1.0 if the relation holds, else 0.0), switching at events."""

    name = "RelationalOperator"
    category = "Logic"
    params = (Param("operator", "choice", "<", "relation", choices=tuple(RELATIONS)),)
    inputs = (Port("u1", "left operand"), Port("u2", "right operand"))
    outputs = (Port("y", "1.0 where u1 <op> u2 holds, else 0.0"),)

    def feedthrough(self, p):
        return {"y": ()}  # the output reads the latched sign only, never the live inputs

    def sizes(self, p, in_widths):
        n = elementwise_width(in_widths)  # u1 of 3 against u2 of 2: refused, not an index error
        return Sizes({"y": n}, zero_crossings=n)

    def zero_crossing(self, e: Emit):
        fn = RELATIONS[e.p.operator][0]
        return [f"{g} = " + fn.format(a=_pick(e.u["u1"], k), b=_pick(e.u["u2"], k))
                for k, g in enumerate(e.g)]

    def output(self, e: Emit):
        test = RELATIONS[e.p.operator][1]
        return {"y": [f"{y} = (1.0 if {test.format(z=z)} else 0.0)"
                      for y, z in zip(e.y["y"], e.z)]}


SWITCH_CRITERIA = {
    "u2 >= a": ("{u2} - {a}", "{z} >= 0.0"),
    "u2 > a": ("{u2} - {a}", "{z} > 0.0"),
    "u2 != 0": ("{u2}", "{z} != 0.0"),
}


class Switch(BlockType):
    """Pass u1 where the control u2 meets the criterion, else u3 (latched between events)."""

    name = "Switch"
    category = "Discontinuities"
    params = (
        Param("criterion", "choice", "u2 >= a", "when u1 is passed", choices=tuple(SWITCH_CRITERIA)),
        Param("threshold", "scalar", 0.0, "the threshold a"),
    )
    inputs = (Port("u1", "passed when the criterion holds"), Port("u2", "control"),
              Port("u3", "passed otherwise"))
    outputs = (Port("y", "u1 or u3"),)

    def feedthrough(self, p):
        return {"y": ("u1", "u3")}  # the control u2 acts through its latched sign only

    def sizes(self, p, in_widths):
        n = elementwise_width({port: in_widths.get(port) for port in ("u1", "u3")})
        control = in_widths.get("u2") or 1
        if n > 1 and control not in (1, n):
            raise ValueError(f"the control 'u2' has width {control} where 1 or {n} (the "
                             f"width of 'u1' and 'u3') are needed")
        return Sizes({"y": n}, zero_crossings=control)

    def zero_crossing(self, e: Emit):
        fn = SWITCH_CRITERIA[e.p.criterion][0]
        return [f"{g} = " + fn.format(u2=_pick(e.u["u2"], k), a=lit(e.p.threshold))
                for k, g in enumerate(e.g)]

    def output(self, e: Emit):
        test = SWITCH_CRITERIA[e.p.criterion][1]
        return {"y": [f"{y} = ({_pick(e.u['u1'], k)} if {test.format(z=_pick(e.z, k))} "
                      f"else {_pick(e.u['u3'], k)})" for k, y in enumerate(e.y["y"])]}




def _widths(p, in_widths, *params: str) -> int:
    """Element count of an elementwise block: the input width and the sizes of vector
    parameters, each either 1 (scalar expansion) or the common width."""
    sizes = [in_widths.get("u") or 1] + [size_of(p[name]) for name in params]
    n = max(sizes)
    for name, size in zip(("input u", *(f"'{name}'" for name in params)), sizes):
        if size not in (1, n):
            raise ValueError(f"{name} has {size} elements where 1 or {n} are needed")
    return n


class Saturation(BlockType):
    """Limit the input to [lower, upper].

    The region (below, inside, above) is latched from two zero crossings, u - lower and
    upper - u, so it changes only at located events and a continuous step never mixes
    regions. Inside, and while a crossing's sign is 0, the input passes through, so the
    output is continuous at the limits (it equals the limit there). Infinite limits add no
    crossings that can fire.
    """

    name = "Saturation"
    category = "Discontinuities"
    params = (
        Param("lower", "vector", -1.0, "lower limit (-inf: none)", allow_inf=True),
        Param("upper", "vector", 1.0, "upper limit (inf: none)", allow_inf=True),
    )
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "u clipped to [lower, upper]"),)

    def check(self, p):
        n = max(size_of(p.lower), size_of(p.upper))
        try:
            lo, hi = broadcast(p.lower, n), broadcast(p.upper, n)
        except ValueError:
            return f"'lower' has {size_of(p.lower)} elements but 'upper' has {size_of(p.upper)}"
        if any(a > b for a, b in zip(lo, hi)):
            return f"lower limit {p.lower} is above upper limit {p.upper}"
        return None

    def sizes(self, p, in_widths):
        n = _widths(p, in_widths, "lower", "upper")
        return Sizes({"y": n}, zero_crossings=2 * n)

    def zero_crossing(self, e: Emit):
        n = len(e.y["y"])
        lo, hi = broadcast(e.p.lower, n), broadcast(e.p.upper, n)
        lines = []
        for k in range(n):
            u = _pick(e.u["u"], k)
            lines.append(f"{e.g[2 * k]} = " + (f"{u} - {lit(lo[k])}" if lo[k] > -inf else "1.0"))
            lines.append(f"{e.g[2 * k + 1]} = " + (f"{lit(hi[k])} - {u}" if hi[k] < inf else "1.0"))
        return lines

    def output(self, e: Emit):
        n = len(e.y["y"])
        lo, hi = broadcast(e.p.lower, n), broadcast(e.p.upper, n)
        return {"y": [f"{y} = ({lit(lo[k])} if {e.z[2 * k]} < 0.0 else {lit(hi[k])} "
                      f"if {e.z[2 * k + 1]} < 0.0 else {_pick(e.u['u'], k)})"
                      for k, y in enumerate(e.y["y"])]}


class _LatchedSignOfInput(BlockType):
    """Shared by Abs and Sign: one zero crossing per element, watching u itself."""

    inputs = (Port("u", "input"),)

    def sizes(self, p, in_widths):
        n = in_widths.get("u") or 1
        return Sizes({"y": n}, zero_crossings=n)

    def zero_crossing(self, e: Emit):
        return each(e.g, "{u}", u=e.u["u"])


class Abs(_LatchedSignOfInput):
    """Absolute value of the input, elementwise.

    The sign of u is latched (one zero crossing per element), so the branch taken (u or
    -u) changes only at a located crossing of zero, where both agree: the output is
    continuous and the solver never integrates across the kink.
    """

    name = "Abs"
    category = "Math"
    outputs = (Port("y", "|u|"),)

    def output(self, e: Emit):
        return {"y": each(e.y["y"], "(-({u}) if {z} < 0.0 else {u})", u=e.u["u"], z=e.z)}


class Sign(_LatchedSignOfInput):
    """The sign of the input, elementwise: -1.0, 0.0 or +1.0.

    The output is the latched sign of u itself, so it jumps only at located zero crossings
    of u (events) and is constant during every continuous step.
    """

    name = "Sign"
    category = "Math"
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "-1, 0 or +1"),)

    def feedthrough(self, p):
        return {"y": ()}  # the latched sign, updated only at events

    def sizes(self, p, in_widths):
        n = in_widths.get("u") or 1
        return Sizes({"y": n}, zero_crossings=n)

    def zero_crossing(self, e: Emit):
        return each(e.g, "{u}", u=e.u["u"])

    def output(self, e: Emit):
        return {"y": [f"{y} = {z}" for y, z in zip(e.y["y"], e.z)]}


class CompareToConstant(BlockType):
    """Compare the input with a constant (y = 1.0 if u <op> constant holds, else 0.0).

    The same relations and latched-sign tests as RelationalOperator, with the constant as
    the right operand: the result changes only at located crossings of the constant.
    """

    name = "CompareToConstant"
    category = "Logic"
    params = (
        Param("operator", "choice", "<=", "relation", choices=tuple(RELATIONS)),
        Param("constant", "vector", 0.0, "the right operand"),
    )
    inputs = (Port("u", "left operand"),)
    outputs = (Port("y", "1.0 where u <op> constant holds, else 0.0"),)

    def feedthrough(self, p):
        return {"y": ()}  # the latched sign, updated only at events

    def sizes(self, p, in_widths):
        n = _widths(p, in_widths, "constant")
        return Sizes({"y": n}, zero_crossings=n)

    def zero_crossing(self, e: Emit):
        fn = RELATIONS[e.p.operator][0]
        c = broadcast(e.p.constant, len(e.g))
        return [f"{g} = " + fn.format(a=_pick(e.u["u"], k), b=lit(c[k]))
                for k, g in enumerate(e.g)]

    def output(self, e: Emit):
        test = RELATIONS[e.p.operator][1]
        return {"y": [f"{y} = (1.0 if {test.format(z=z)} else 0.0)"
                      for y, z in zip(e.y["y"], e.z)]}


_DIRECTIONS = {"rising": 1, "falling": -1, "either": 0}


class HitCrossing(BlockType):
    """Signal the instant the input crosses `level` in the chosen direction.

    The output is 1.0 only during the event at which u - level crosses zero in that
    direction (Simulink edge rules: rising is - to 0/+ or 0 to +) and 0.0 otherwise: the
    pulse is a discrete state set in the event iteration, where blocks triggered by it
    (a ResetIntegrator's reset) see it, and cleared once the event has settled and its
    right limit is recorded (so a logged pulse reads 1.0 in that row: left limit 0.0, right
    limit 1.0, 0.0 after). Crossings in the other direction are not located at all.
    """

    name = "HitCrossing"
    category = "Discontinuities"
    event_kinds = (
        EventKind("hit", "the input crossed `level` in the chosen direction (the output "
                         "pulses 1.0)"),
    )
    params = (
        Param("level", "vector", 0.0, "the level whose crossing is signalled"),
        Param("direction", "choice", "either", "which crossings count", choices=_EDGES),
    )
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "1.0 during the crossing event, else 0.0"),)

    def feedthrough(self, p):
        return {"y": ()}

    def sizes(self, p, in_widths):
        n = _widths(p, in_widths, "level")
        return Sizes({"y": n}, discrete=n, zero_crossings=n)

    def zc_directions(self, p, count):
        return [_DIRECTIONS[p.direction]] * count

    def zero_crossing(self, e: Emit):
        level = broadcast(e.p.level, len(e.g))
        return [f"{g} = {_pick(e.u['u'], k)} - {lit(level[k])}" for k, g in enumerate(e.g)]

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def update(self, e: Emit):
        lines = []
        for m, zo, zn in zip(e.m, e.zo, e.zn):
            fire = _edge_condition(e.p.direction, zo, zn)
            lines += [f"if not init and {m} == 0.0 and {fire}:",
                      f"    {m} = 1.0; {e.event('hit')}"]
        return lines

    def after_event(self, e: Emit):
        return [f"if {m} != 0.0: {m} = 0.0; changed = True" for m in e.m]


class Relay(BlockType):
    """Switch between `on_value` and `off_value` with hysteresis.

    The relay turns on when u reaches `on_point` and off when u falls to `off_point`
    (off_point <= on_point). Its state (0 off, 1 on) is discrete and watched by one
    mode-dependent zero crossing: u - on_point while off, u - off_point while on, so only
    the switching that can actually happen is located. At the start, u >= on_point gives
    on, u <= off_point (< on_point) gives off, and in between `initial` decides. With
    off_point == on_point the relay is on at the point itself and turns off below it.
    """

    name = "Relay"
    category = "Discontinuities"
    event_kinds = (
        EventKind("on", "the relay switched on (u reached `on_point`; at the start, where u "
                        "or `initial` says on)"),
        EventKind("off", "the relay switched off (u fell to `off_point`; at the start, where "
                         "u says off)"),
    )
    params = (
        Param("on_point", "vector", 0.0, "input at or above which the relay turns on"),
        Param("off_point", "vector", 0.0, "input at or below which the relay turns off"),
        Param("on_value", "vector", 1.0, "output while on"),
        Param("off_value", "vector", 0.0, "output while off"),
        Param("initial", "choice", "off", "state at the start when u lies between the points",
              choices=("off", "on")),
    )
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "on_value or off_value"),)
    _VECTORS = ("on_point", "off_point", "on_value", "off_value")

    def feedthrough(self, p):
        return {"y": ()}  # the output reads the latched state only

    def check(self, p):
        n = max(size_of(p[name]) for name in self._VECTORS)
        for name in self._VECTORS:
            if size_of(p[name]) not in (1, n):
                return f"'{name}' has {size_of(p[name])} elements where 1 or {n} are needed"
        on, off = broadcast(p.on_point, n), broadcast(p.off_point, n)
        if any(b > a for a, b in zip(on, off)):
            return f"off_point {p.off_point} is above on_point {p.on_point}"
        return None

    def sizes(self, p, in_widths):
        n = _widths(p, in_widths, *self._VECTORS)
        return Sizes({"y": n}, discrete=n, zero_crossings=n)

    def initial_discrete(self, p, n):
        return [1.0 if p.initial == "on" else 0.0] * n

    def zero_crossing(self, e: Emit):
        n = len(e.g)
        on, off = broadcast(e.p.on_point, n), broadcast(e.p.off_point, n)
        return [f"{g} = {_pick(e.u['u'], k)} - ({lit(off[k])} if {e.m[k]} else {lit(on[k])})"
                for k, g in enumerate(e.g)]

    def output(self, e: Emit):
        n = len(e.y["y"])
        on, off = broadcast(e.p.on_value, n), broadcast(e.p.off_value, n)
        return {"y": [f"{y} = ({lit(on[k])} if {e.m[k]} else {lit(off[k])})"
                      for k, y in enumerate(e.y["y"])]}

    def update(self, e: Emit):
        n = len(e.m)
        on, off = broadcast(e.p.on_point, n), broadcast(e.p.off_point, n)
        start = 1.0 if e.p.initial == "on" else 0.0
        lines = []
        for k in range(n):
            m, zn, u = e.m[k], e.zn[k], _pick(e.u["u"], k)
            # At a single switching point the relay is on there: turn off strictly below it.
            off_test = f"{zn} <= 0.0" if off[k] < on[k] else f"{zn} < 0.0"
            init_off = f"{u} <= {lit(off[k])}" if off[k] < on[k] else "False"
            lines += [
                "if init:",
                f"    want = (1.0 if {u} >= {lit(on[k])} else 0.0 if {init_off} else {start})",
                f"    if {m} == 0.0 and want != 0.0:",
                f"        {m} = 1.0; {e.event('on')}",
                f"    elif {m} != 0.0 and want == 0.0:",
                f"        {m} = 0.0; {e.event('off')}",
                f"elif {m} == 0.0 and {zn} >= 0.0:",
                f"    {m} = 1.0; {e.event('on')}",
                f"elif {m} != 0.0 and {off_test}:",
                f"    {m} = 0.0; {e.event('off')}",
            ]
        return lines

BLOCK_TYPES = (RelationalOperator, Switch, Saturation, Abs, Sign, CompareToConstant,
               HitCrossing, Relay,)
