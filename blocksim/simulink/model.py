"""What the readers make of a Simulink file, whatever its format: systems of blocks with
their saved parameters and the connections between their ports.

The .slx/XML reader and the classic .mdl reader both build these, so the mapping onto
blocksim blocks (`blocksim.simulink.convert`) knows one shape only. Values stay the text
Simulink saved; nothing is evaluated here.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SlEnd:
    """One end of a connection: a block (by name, unique in its system) and a port:
    kind "in"/"out" with a 1-based index, or "enable", "trigger", "ifaction", "reset",
    "state" (index 1)."""

    block: str
    kind: str
    index: int = 1


@dataclass
class SlConnection:
    src: SlEnd
    dst: SlEnd
    name: str = ""  # the signal's name, if the line has one (bus element names)


@dataclass
class SlBlock:
    """A block: its BlockType, its name, and the parameters saved with it (a library link's
    instance data merged in); `system` for a subsystem; `position` [left, top, right,
    bottom] in Simulink's pixels."""

    type: str
    name: str
    sid: str = ""
    params: dict[str, str] = field(default_factory=dict)
    system: "SlSystem | None" = None
    position: tuple[float, float, float, float] | None = None
    mask: dict[str, str] = field(default_factory=dict)     # MaskInitialization, MaskType...
    mask_values: dict[str, str] = field(default_factory=dict)  # mask parameter name -> value

    @property
    def source_block(self) -> str:
        """A library link's source ("simulink/Continuous/PID Controller"), newlines as spaces."""
        return " ".join(self.params.get("SourceBlock", "").replace("\\n", " ").split())


@dataclass
class SlSystem:
    name: str
    blocks: list[SlBlock] = field(default_factory=list)
    connections: list[SlConnection] = field(default_factory=list)

    def block(self, name: str) -> SlBlock | None:
        return next((b for b in self.blocks if b.name == name), None)


@dataclass
class SlModel:
    """A whole model: the root system, block parameter defaults by BlockType (the file's
    BlockParameterDefaults / bddefaults.xml), the solver settings found in its
    configuration set, its callbacks (InitFcn, PreLoadFcn, ...) and model-workspace code."""

    name: str
    format: str
    release: str
    root: SlSystem
    defaults: dict[str, dict[str, str]] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    callbacks: dict[str, str] = field(default_factory=dict)
    workspace_code: str = ""
    stateflow: bool = False
    workspace_data: tuple[str, bytes] | None = None  # (part name, MAT bytes) of the model workspace


# What the solver pane is made of, under the names of every release (6.x to R2024+).
CONFIG_NAMES = ("StartTime", "StopTime", "Solver", "SolverName", "SolverType", "RelTol",
                "AbsTol", "FixedStep", "MaxStep", "SolverMode")
CALLBACK_NAMES = ("PreLoadFcn", "PostLoadFcn", "InitFcn", "StartFcn")


def parse_position(text: str) -> tuple[float, float, float, float] | None:
    """'[135, 50, 165, 80]' as four numbers, or None."""
    try:
        values = [float(v) for v in text.strip().strip("[]").replace(";", ",").split(",")]
    except ValueError:
        return None
    return tuple(values) if len(values) == 4 else None  # type: ignore[return-value]
