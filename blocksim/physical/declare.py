"""How a physical component type is declared: connectors, variables and equations.

A component is a block type (`BlockType`) whose behaviour is a set of equations over its
variables, its connectors' across and through variables (`p.v`, `p.i`), its parameters, its
signal inputs and outputs and `time`; `der(x)` is the time derivative of x and `pre(x)` the
value of x just before an event. The equations are text in blocksim's safe expression
language, so a component declared in a diagram file is as safe as a parameter. Events are
relations (`s < 0` inside an if-expression is latched between events, Modelica-style) and
`When` clauses (reinit a variable, assign a discrete variable, at the instant a condition
becomes true).

A component never writes code itself: the compiler gathers every component of a connected
network into one block (`blocksim.physical.netblock`). The component stays in the flat
diagram as a shell whose signal outputs copy the network's values, so a sensor's output
keeps its name ("uC_sensor.v") and events are logged under the component that caused them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping, Sequence

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, ParamValues, Sizes
from blocksim.physical.domains import domain

NETWORK_INPUT = "__net_"  # hidden input of a shell: the network's value of output port X


@dataclass(frozen=True)
class Connector:
    """A physical port: a connection point of one domain (electrical, translational,
    rotational, thermal) carrying its across and through variables."""

    name: str
    domain: str
    doc: str = ""
    # May be left unconnected: then nothing acts through it (through variable 0), like a
    # mass's free end. A port that is not optional must be connected (a resistor's pin).
    optional: bool = False


@dataclass(frozen=True)
class Variable:
    """A continuous variable of a component.

    start: its value at the start time (a number or an expression over the component's
    parameters) if it becomes a state; `prefer`: choose it as a state where index
    reduction has a choice (Modelica's StateSelect.prefer), e.g. a mass's position and
    velocity rather than a spring's elongation; `fixed`: the start value must hold (a
    compile error if the variable is determined by others instead, or two fixed starts
    of one variable disagree); otherwise a start value of a variable that does not become
    a state is not used.
    """

    name: str
    unit: str = ""
    start: float | str | None = None
    doc: str = ""
    prefer: bool = False
    fixed: bool = False


@dataclass(frozen=True)
class Discrete:
    """A discrete variable (a mode, a flag): it changes only in `When` clauses, so what
    the equations read from it is constant between events."""

    name: str
    start: float | str = 0.0
    doc: str = ""


@dataclass(frozen=True)
class When:
    """At the instant `condition` becomes true: set each variable of `reinit` (a state,
    or a variable tied to one) and each discrete variable of `assign` to the value of its
    expression (`pre(x)` is x before the instant); the events table logs `event` under
    the component."""

    condition: str
    reinit: tuple[tuple[str, str], ...] = ()
    assign: tuple[tuple[str, str], ...] = ()
    event: str = ""
    doc: str = ""  # what the event means, for `describe` and the docs (else the condition)


class Component(BlockType):
    """Base class of physical component declarations (see the module docstring).

    Subclasses set `connectors`, `variables`, `discretes`, `equations` and `whens`, and
    may declare signal `inputs` (read by name in the equations) and `outputs` (unknowns
    of the equations, like variables).
    """

    category = "Physical"
    rate = "continuous"
    connectors: ClassVar[tuple[Connector, ...]] = ()
    variables: ClassVar[tuple[Variable, ...]] = ()
    discretes: ClassVar[tuple[Discrete, ...]] = ()
    equations: ClassVar[tuple[str, ...]] = ()
    whens: ClassVar[tuple[When, ...]] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        """The events a component logs are its when clauses' (declared once, there)."""
        super().__init_subclass__(**kwargs)
        kinds: dict[str, str] = {}
        for w in cls.whens:
            if w.event:
                kinds.setdefault(w.event, w.doc or f"when {w.condition}")
        cls.event_kinds = tuple(EventKind(name, doc) for name, doc in kinds.items())

    # ----- structure, possibly depending on parameters -----
    def connector_ports(self, p: ParamValues) -> Sequence[Connector]:
        return self.connectors

    def component_equations(self, p: ParamValues) -> Sequence[str]:
        return self.equations

    def component_whens(self, p: ParamValues) -> Sequence[When]:
        return self.whens

    def feedthrough(self, p: ParamValues) -> Mapping[str, Sequence[str]]:
        # A shell's output copies the network's value (a hidden input the compiler adds).
        return {port.name: (NETWORK_INPUT + port.name,) for port in self.output_ports(p)}

    def sizes(self, p: ParamValues, in_widths: Mapping[str, int | None]) -> Sizes:
        for port, width in in_widths.items():
            if width not in (None, 1):
                raise ValueError(f"input '{port}' must be scalar, got width {width}")
        return Sizes({port.name: 1 for port in self.output_ports(p)})

    def output(self, e: Emit) -> dict[str, list[str]]:
        return {port: [f"{names[0]} = {e.u[NETWORK_INPUT + port][0]}"]
                for port, names in e.y.items()}

    # ----- documentation -----
    @classmethod
    def describe(cls) -> str:
        text = super().describe().rstrip("\n").split("\n")
        lines = [line for line in text if not line.startswith("Sample time:")]
        if cls.connectors:
            lines.append("Connectors:")
            for c in cls.connectors:
                d = domain(c.domain)
                lines.append(f"  {c.name:12s} {c.domain} ({d.across} [{d.across_unit}], "
                             f"{d.through} [{d.through_unit}]). {c.doc}")
        if cls.variables:
            lines.append("Variables:")
            for v in cls.variables:
                facts = ([f"[{v.unit}]"] if v.unit else []) + (
                    [f"start {v.start}" + (" (fixed)" if v.fixed else "")]
                    if v.start is not None else []) + (["preferred state"] if v.prefer else [])
                lines.append(f"  {v.name:12s} " + (", ".join(facts) + ". " if facts else "")
                             + v.doc)
        if cls.discretes:
            lines.append("Discrete variables:")
            lines += [f"  {d.name:12s} start {d.start}. {d.doc}" for d in cls.discretes]
        if cls.equations:
            lines.append("Equations:")
            lines += [f"  {eq}" for eq in cls.equations]
        for w in cls.whens:
            acts = [f"reinit({v}, {x})" for v, x in w.reinit] + [f"{v} := {x}" for v, x in w.assign]
            lines.append(f"When {w.condition}: {'; '.join(acts)}"
                         + (f" (event '{w.event}')" if w.event else ""))
        return "\n".join(lines) + "\n"

    @classmethod
    def declaration_problem(cls) -> str | None:
        """What is wrong with the declaration itself (names used twice), else None."""
        names: dict[str, str] = {}
        for kind, items in (("parameter", cls.params), ("connector", cls.connectors),
                            ("variable", cls.variables), ("discrete variable", cls.discretes),
                            ("input", cls.inputs), ("output", cls.outputs)):
            for item in items:
                if not item.name.isidentifier():
                    return f"{kind} name {item.name!r} is not an identifier"
                if item.name in names or item.name in ("time", "der", "pre"):
                    return (f"{kind} '{item.name}' has the name of "
                            f"{names.get(item.name, 'a built-in')}")
                names[item.name] = f"a {kind}"
        return None

