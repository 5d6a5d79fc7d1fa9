"""Where a diagram shadows a built-in constant (`e`, `pi`) with a parameter or an Expression
input of the same name: allowed (the diagram's value wins inside it), and worth one note from
`blocksim validate`, since a formula's `e` then no longer means 2.718..."""
from __future__ import annotations

from blocksim.expressions.language import CONSTANTS, SHADOWABLE
from blocksim.diagram.model import Diagram


def shadowed_constants(diagram: Diagram, prefix: str = "") -> dict[str, list[str]]:
    """{constant: [where it is shadowed, in words]} over the diagram and its subsystems."""
    found: dict[str, list[str]] = {}
    for name in diagram.parameters:
        if name in SHADOWABLE:
            where = f"parameter of subsystem '{prefix[:-1]}'" if prefix else "diagram parameter"
            found.setdefault(name, []).append(where)
    for blk in diagram.blocks:
        if blk.type == "Expression":
            inputs = blk.params.get("inputs", "u")
            names = [n.strip() for n in inputs.split(",")] if isinstance(inputs, str) else []
            for name in dict.fromkeys(n for n in names if n in SHADOWABLE):
                found.setdefault(name, []).append(f"input of Expression '{prefix}{blk.id}'")
        if blk.subsystem is not None:
            for name, places in shadowed_constants(blk.subsystem, f"{prefix}{blk.id}/").items():
                found.setdefault(name, []).extend(places)
    return found


def shadowing_notes(diagram: Diagram) -> list[str]:
    """One line per shadowed constant, naming every place that shadows it."""
    return [f"note: '{name}' shadows the built-in constant {name} = {CONSTANTS[name]!r} "
            f"inside this diagram ({', '.join(places)})"
            for name, places in sorted(shadowed_constants(diagram).items())]
