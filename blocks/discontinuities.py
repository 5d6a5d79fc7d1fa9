"""Discontinuous blocks: their mode is latched during a continuous step and changes only at
a located zero crossing, so error control stays honest and nothing chatters."""
from __future__ import annotations

from blocksim.blockspec import BlockType, Emit, Param, Port, Sizes, broadcast, lit, size_of

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

    def sizes(self, p, in_widths):
        n = max(w or 1 for w in in_widths.values())
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

    def sizes(self, p, in_widths):
        n = max(in_widths.get("u1") or 1, in_widths.get("u3") or 1)
        return Sizes({"y": n}, zero_crossings=max(in_widths.get("u2") or 1, 1))

    def zero_crossing(self, e: Emit):
        fn = SWITCH_CRITERIA[e.p.criterion][0]
        return [f"{g} = " + fn.format(u2=_pick(e.u["u2"], k), a=lit(e.p.threshold))
                for k, g in enumerate(e.g)]

    def output(self, e: Emit):
        test = SWITCH_CRITERIA[e.p.criterion][1]
        return {"y": [f"{y} = ({_pick(e.u['u1'], k)} if {test.format(z=_pick(e.z, k))} "
                      f"else {_pick(e.u['u3'], k)})" for k, y in enumerate(e.y["y"])]}


BLOCK_TYPES = (RelationalOperator, Switch,)
