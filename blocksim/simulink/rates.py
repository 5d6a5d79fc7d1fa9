"""Passes over an imported diagram that need its resolved sample times, found by compiling it
(blocksim.compiler resolves rates as `blocksim describe DIAGRAM` shows them):

- under a fixed-step solver Simulink runs a discrete block that inherits (-1) from continuous
  blocks at the fixed step; blocksim refuses that inheritance, so those blocks get the step;
- inside a discrete rate, Simulink computes a Switch or a Saturation within the hit, in
  sorted order, so a discrete block downstream sees its new output; blocksim latches their
  modes between events and changes them when the model settles after the hit's outputs and
  updates (docs/semantics.md), so the downstream block would read the old mode's value. At a
  discrete rate their output only changes at hits anyway, so the importer writes them as an
  Expression of the same formula, computed in signal-flow order at each hit like Simulink's.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from blocksim.diagram.model import Block, Diagram
from blocksim.errors import BlocksimError, CompileError
from blocksim.simulink.report import Report


def _compile(diagram: Diagram) -> Any:
    from blocksim.compiler import compile_diagram
    unset = {name: "1" for name, value in diagram.parameters.items() if value == ""}
    return compile_diagram(diagram, unset, diagram.simulation)


def find_block(diagram: Diagram, path: str) -> Block | None:
    *outer, name = path.split("/")
    for part in outer:
        sub = next((b for b in diagram.blocks if b.id == part), None)
        if sub is None or sub.subsystem is None:
            return None
        diagram = sub.subsystem
    return next((b for b in diagram.blocks if b.id == name), None)


def resolve_inherited_rates(diagram: Diagram, report: Report, limit: int = 100) -> None:
    """Give the fixed step to each discrete block whose inherited rate is continuous (each
    compile names one)."""
    step = diagram.simulation.step
    for _ in range(limit):
        try:
            _compile(diagram)
            return
        except CompileError as exc:
            if "would be continuous" not in str(exc) or not exc.block:
                return
            block = find_block(diagram, exc.block)
            if block is None or block.params.get("sample_time") not in (-1, -1.0, "-1"):
                return
            block.params["sample_time"] = step
            report.note_block(exc.block, f"inherits a continuous rate: runs at the fixed step "
                                         f"{step:g} s, as Simulink's fixed-step solver does")
        except BlocksimError:
            return


def _text(value: Any) -> str:
    return f"({value})" if isinstance(value, str) else json.dumps(value)


def _switch(p: dict[str, Any]) -> tuple[str, str] | None:
    test = {"u2 >= a": "u2 >= {a}", "u2 > a": "u2 > {a}", "u2 != 0": "u2 != 0"}.get(
        p.get("criterion", "u2 >= a"))
    if test is None:
        return None
    return f"u1 if {test.format(a=_text(p.get('threshold', 0.0)))} else u3", "u1, u2, u3"


def _saturation(p: dict[str, Any]) -> tuple[str, str]:
    return (f"min(max(u, {_text(p.get('lower', -1.0))}), {_text(p.get('upper', 1.0))})", "u")


def _dead_zone(p: dict[str, Any]) -> tuple[str, str]:
    start, end = _text(p.get("start", -0.5)), _text(p.get("end", 0.5))
    return f"u - {start} if u < {start} else (u - {end} if u > {end} else 0)", "u"


def _minmax(p: dict[str, Any]) -> tuple[str, str] | None:
    n = int(p.get("inputs", 1))
    if n < 2:
        return None  # (over the elements of one vector: not an element-wise formula)
    names = ", ".join(f"u{k + 1}" for k in range(n))
    return f"{p.get('function', 'min')}({names})", names


# block type -> the Expression (formula, inputs) computing the same at a hit; same ports
UNLATCHED: dict[str, Callable[[dict[str, Any]], tuple[str, str] | None]] = {
    "Switch": _switch, "Saturation": _saturation, "DeadZone": _dead_zone, "MinMax": _minmax,
    "Abs": lambda p: ("abs(u)", "u"), "Sign": lambda p: ("sign(u)", "u"),
    "RelationalOperator": lambda p: (f"u1 {p.get('operator', '<')} u2", "u1, u2"),
    "CompareToConstant": lambda p: (f"u {p.get('operator', '<=')} "
                                    f"{_text(p.get('constant', 0.0))}", "u"),
}


def unlatch_discrete(diagram: Diagram, report: Report) -> None:
    """Switches, Saturations, dead zones, comparisons ... that run at a discrete rate become
    Expressions."""
    try:
        model = _compile(diagram)
    except BlocksimError:
        return  # (validate will say why; nothing to resolve)
    for path, kind, rate in zip(model.block_ids, model.block_types, model.block_rates):
        if kind not in UNLATCHED or not rate.discrete:
            continue
        block = find_block(diagram, path)
        made = UNLATCHED[kind](block.params) if block is not None else None
        if made is None:
            continue
        block.type, block.params = "Expression", {"formula": made[0], "inputs": made[1]}
        report.note_block(path, f"at its discrete rate ({rate}): an Expression `{made[0]}`, "
                                "computed within each hit as Simulink does (blocksim latches "
                                f"a {kind}'s mode until the hit has settled)")
