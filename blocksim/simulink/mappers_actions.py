"""If and Switch Case blocks with their action subsystems, onto blocksim's enabled
subsystems: each branch's condition becomes an Expression that is 1 while that branch is
the one taken (its own condition holds and no earlier one does; the else/default branch
when none does), and the action subsystem it drives becomes an EnabledSubsystem
(`convert.Converter.subsystem`); a Merge after them is blocksim's Merge. Simulink runs an
action subsystem in the step its branch is taken; blocksim enables it at the located
instant its flag becomes 1, which is the same instant for a condition on continuous
signals (the Expression's output jumps there, and the enable input's crossing is
located)."""
from __future__ import annotations

import re

from blocksim.simulink.mapping import BlockContext, Mapped, Mapper, Unmappable, wire
from blocksim.simulink.mexpr import Untranslatable, translate


def _split_top(text: str) -> list[str]:
    """'a, f(b, c), d' -> ['a', 'f(b, c)', 'd'] (commas inside brackets stay)."""
    parts, depth, current = [], 0, []
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _branches(ctx: BlockContext, conditions: list[str], n_inputs: int,
              otherwise: bool) -> Mapped:
    """One Expression per branch (1 while taken), inputs shared through Gain-1 hubs."""
    names = [f"u{k + 1}" for k in range(n_inputs)]
    hubs = [ctx.block_of("Gain", {"k": 1}, f"in{k + 1}") for k in range(n_inputs)]
    mapped = Mapped([], {("in", k + 1): f"{hub.id}.u" for k, hub in enumerate(hubs)})
    flags = conditions + (["otherwise"] if otherwise else [])
    for k, condition in enumerate(flags):
        earlier = " or ".join(f"({c})" for c in conditions[:k])
        if condition == "otherwise":
            formula = f"not ({earlier})" if earlier else "1"
        else:
            formula = f"({condition}) != 0" + (f" and not ({earlier})" if earlier else "")
        branch = ctx.block_of("Expression", {"formula": formula, "inputs": ", ".join(names)},
                              "" if k == 0 else f"branch{k + 1}")
        mapped.blocks.append(branch)
        mapped.outputs[("out", k + 1)] = f"{branch.id}.y"
        for name, hub in zip(names, hubs):
            mapped.wires.append(wire(f"{hub.id}.y", f"{branch.id}.{name}"))
    mapped.blocks += hubs
    ctx.note(f"{len(flags)} branch flag(s) as Expressions; its action subsystems are enabled "
             "subsystems")
    return mapped


def _condition(ctx: BlockContext, text: str, n_inputs: int) -> str:
    try:
        t = translate(text)
    except Untranslatable as exc:
        raise Unmappable(f"condition `{text}` does not translate ({exc})") from None
    inputs = {f"u{k + 1}" for k in range(n_inputs)}
    for name in sorted(t.names - inputs):
        if name not in ctx.scope:
            ctx.converter.unresolved(name, f"{ctx.path} (condition `{text}`)")
    return t.text


def if_block(ctx: BlockContext) -> Mapped:
    n = ctx.int_value("NumInputs", ctx.p("NumInputs", "1"))
    conditions = [ctx.p("IfExpression", "u1 > 0")] + _split_top(ctx.p("ElseIfExpressions", ""))
    return _branches(ctx, [_condition(ctx, c, n) for c in conditions], n,
                     ctx.p("ShowElse", "on") == "on")


def switch_case(ctx: BlockContext) -> Mapped:
    text = ctx.p("CaseConditions", "{1}").strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise Unmappable(f"case conditions `{text}` are not a cell array")
    conditions = []
    for case in _split_top(text[1:-1]):
        values = re.split(r"[\s,]+", case.strip("[] "))
        try:
            numbers = [int(float(v)) for v in values if v]
        except ValueError:
            raise Unmappable(f"case `{case}` is not whole numbers") from None
        value = "(sign(u1) * floor(abs(u1)))"  # Simulink truncates the input to an integer
        conditions.append(" or ".join(f"{value} == {v}" for v in numbers))
    return _branches(ctx, conditions, 1, ctx.p("ShowDefaultCase", "on") == "on")


ACTION_MAPPERS: dict[str, Mapper] = {"If": if_block, "SwitchCase": switch_case}
