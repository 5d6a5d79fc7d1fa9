"""Linear analysis points as a diagram marks them: which signals are linearization inputs,
outputs and loop openings.

A mark is stored on a wire (`Wire.analysis`) but names the signal of the wire's source port:
a port is marked "input" if any wire it drives carries "input", so a branch deleted or added
later does not move the point. Points inside subsystems are named by their slash-qualified
block id ("plant/motor.y"), as messages name blocks.
"""
from __future__ import annotations

from dataclasses import dataclass

from blocksim.diagram.model import ANALYSIS_ROLES, Diagram, PortRef


@dataclass(frozen=True)
class AnalysisPoints:
    """The marked points of a diagram, each a "block.port" name, in wire order."""

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    openings: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.inputs or self.outputs or self.openings)


def port_marks(diagram: Diagram, port: PortRef) -> tuple[str, ...]:
    """The marks of the signal `port` drives at one level (in ANALYSIS_ROLES order)."""
    found = {role for wire in diagram.wires if wire.src == port for role in wire.analysis}
    return tuple(role for role in ANALYSIS_ROLES if role in found)


def analysis_points(diagram: Diagram) -> AnalysisPoints:
    """Every marked point of `diagram` and of its subsystems, at any depth."""
    found: dict[str, list[str]] = {role: [] for role in ANALYSIS_ROLES}
    _collect(diagram, "", found)
    return AnalysisPoints(tuple(found["input"]), tuple(found["output"]), tuple(found["open"]))


def _collect(diagram: Diagram, prefix: str, found: dict[str, list[str]]) -> None:
    for wire in diagram.wires:
        name = f"{prefix}{wire.src}"
        for role in wire.analysis:
            if name not in found[role]:
                found[role].append(name)
    for block in diagram.blocks:
        if block.subsystem is not None:
            _collect(block.subsystem, f"{prefix}{block.id}/", found)
