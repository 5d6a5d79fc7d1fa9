"""The diagram model: plain Python objects that the file format reads and writes.

It holds semantics (blocks, parameters, wires) and, apart, the editor's layout; it knows
nothing about compiling, simulating or Qt. The editor changes it only through undo commands.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT_NAME = "blocksim"
FORMAT_VERSION = 1

SOLVERS = ("dopri5", "dop853", "radau", "bdf", "euler", "rk4")
BACKENDS = ("python", "numba", "c")


@dataclass
class SimulationSettings:
    """What a run needs besides the diagram: the Modelica experiment annotation, plus solver."""

    start: float = 0.0
    stop: float = 10.0
    solver: str = "dopri5"
    rtol: float = 1e-6
    atol: float = 1e-8
    max_step: float = math.inf
    output_interval: float | None = None
    step: float | None = None  # fixed step size for euler/rk4
    # "python", "numba" or "c" (dopri5 segments in a compiled loop, like Simulink's accelerator
    # mode); None: the BLOCKSIM_BACKEND environment variable, else "python".
    backend: str | None = None

    @property
    def resolved_backend(self) -> str:
        return self.backend or os.environ.get("BLOCKSIM_BACKEND") or "python"

    def replaced(self, **changes: Any) -> "SimulationSettings":
        """A copy with the given fields changed (None values are ignored)."""
        values = dict(self.__dict__)
        values.update({k: v for k, v in changes.items() if v is not None})
        return SimulationSettings(**values)


@dataclass
class PortRef:
    """One end of a wire: a block id and one of its port names."""

    block: str
    port: str

    @classmethod
    def parse(cls, text: str) -> "PortRef":
        block, sep, port = text.rpartition(".")
        if not sep or not block or not port:
            raise ValueError(f"'{text}' is not of the form 'block.port'")
        return cls(block, port)

    def __str__(self) -> str:
        return f"{self.block}.{self.port}"


# Linear analysis marks a wire may carry (docs/format.md, docs/analysis.md): the signal its
# source port drives is a linearization input (a perturbation added there), an output (a
# measurement), or a place where the loop is opened. They mean nothing to a run.
ANALYSIS_ROLES = ("input", "output", "open")


@dataclass
class Wire:
    """A connection from an output port to an input port; `points` are editor bends and
    `name` an optional signal label the editor shows beside the wire (no meaning to a run).
    `analysis` holds linear analysis marks (ANALYSIS_ROLES, in that order) for the signal of
    its source port; like the name, they mean nothing to a run."""

    src: PortRef
    dst: PortRef
    points: list[tuple[float, float]] = field(default_factory=list)
    name: str = ""
    analysis: tuple[str, ...] = ()


@dataclass
class Block:
    """A block instance: a stable user-visible id, its type name and its parameter values.

    Parameter values are numbers, lists, or strings (expressions over the diagram parameters,
    or text for text-valued parameters). A Subsystem block carries its nested diagram.
    """

    id: str
    type: str
    params: dict[str, Any] = field(default_factory=dict)
    layout: dict[str, Any] | None = None
    subsystem: "Diagram | None" = None


@dataclass
class Diagram:
    """A block diagram: the one mutable model object, plus where it was loaded from."""

    blocks: list[Block] = field(default_factory=list)
    wires: list[Wire] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    simulation: SimulationSettings = field(default_factory=SimulationSettings)
    path: Path | None = None
    description: str = ""
    # Python files of user block types (relative to the diagram's folder), imported only
    # when trusted (blocksim.user.trust).
    python: list[str] = field(default_factory=list)
    # Physical component types the diagram declares itself: plain declarations (name,
    # connectors, parameters, variables, equations in the safe expression language), so a
    # diagram from someone else can bring its own components and still run no code
    # (blocksim.physical.declared turns them into types; docs/physical.md).
    components: list[dict[str, Any]] = field(default_factory=list)

    def block(self, block_id: str) -> Block:
        """The block with this id (KeyError if there is none)."""
        for blk in self.blocks:
            if blk.id == block_id:
                return blk
        raise KeyError(block_id)

    @property
    def source(self) -> str:
        """How messages name this diagram: its file, or '<diagram>'."""
        return str(self.path) if self.path else "<diagram>"
