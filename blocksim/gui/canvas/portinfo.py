"""What the editor draws for a block: its port names and a short glyph, without Qt.

Port counts can depend on parameters (Sum signs, Mux inputs, Expression names), so the
block type's own `input_ports`/`output_ports` are asked with leniently resolved parameters:
a value that does not resolve (an unknown name while the user is typing) falls back to the
default, so the canvas always has something sensible to draw.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from blocksim.expressions import language as expressions

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import ParamValues
from blocksim.gui.canvas.geometry import WIDE_TYPES, Placement, default_size, placement
from blocksim.diagram.model import Block, Diagram

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PortInfo:
    """The ports a block shows, in order, and the little texts drawn beside them."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    input_marks: tuple[str, ...] = ()  # e.g. Sum signs; empty: show port names if useful
    known: bool = True  # False for an unregistered block type
    top: tuple[str, ...] = ()  # inputs drawn on the top edge (a trigger or enable port)

    @property
    def side_inputs(self) -> tuple[str, ...]:
        """The inputs on the left edge (all but the top ones)."""
        return tuple(p for p in self.inputs if p not in self.top) if self.top else self.inputs

    def slot(self, kind: str, name: str) -> tuple[str, int, int] | None:
        """Where port `name` ("in" or "out") sits: its edge ("in", "out", "top"), its index
        on that edge and how many ports the edge has; None if there is no such port."""
        if kind == "out":
            ports, edge = self.outputs, "out"
        elif name in self.top:
            ports, edge = self.top, "top"
        else:
            ports, edge = self.side_inputs, "in"
        if name not in ports:
            return None
        return edge, ports.index(name), len(ports)


def scope_names(diagram: Diagram, outer: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Resolved parameter values visible in `diagram` (outer names, shadowed by its own)."""
    names = dict(outer or {})
    if not diagram.parameters:
        return names
    try:
        names.update(expressions.resolve_parameters({**names, **diagram.parameters}))
    except Exception:  # an editing state: keep what resolves
        log.debug("diagram parameters do not resolve", exc_info=True)
    return names


def subsystem_ports(inner: Diagram | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Input and output port names of a subsystem, ordered as the compiler orders them."""
    if inner is None:
        return (), ()

    def ordered(kind: str) -> tuple[str, ...]:
        found = []
        for i, blk in enumerate(inner.blocks):
            if blk.type != kind:
                continue
            try:
                index = int(blk.params.get("index", 0) or 0)
            except (TypeError, ValueError):
                index = 0
            found.append((index == 0, index, i, blk.id))
        return tuple(bid for *_, bid in sorted(found))

    return ordered("Inport"), ordered("Outport")


def lenient_params(block: Block, names: Mapping[str, Any]) -> ParamValues | None:
    """The block's parameters resolved as far as possible; None for an unknown type."""
    from blocksim.compiler.flatten import resolve_param  # the compiler's own rules

    block_type = registry.get(block.type)
    if block_type is None:
        return None
    values: dict[str, Any] = {}
    for prm in block_type.params:
        raw = block.params.get(prm.name, None if prm.required else prm.default)
        try:
            values[prm.name] = resolve_param(prm, raw, names, block.id)
        except Exception:
            try:
                values[prm.name] = resolve_param(prm, prm.default, {}, block.id)
            except Exception:
                values[prm.name] = 0.0 if prm.required else prm.default
    return ParamValues(values, names=names)


# The extra input of each conditional subsystem type (blocks/ports.py; the compiler names it
# the same way), drawn on the block's top edge as Simulink does.
CONTROL_PORTS = {"TriggeredSubsystem": "trigger", "EnabledSubsystem": "enable"}


def has_diagram(type_name: str) -> bool:
    """Whether blocks of this type carry a nested diagram (Subsystem, TriggeredSubsystem,
    EnabledSubsystem, ...): they open on double-click and their ports are their Inports'
    and Outports' ids."""
    return bool(getattr(registry.get(type_name), "has_diagram", False))


def control_ports(type_name: str) -> tuple[str, ...]:
    """The inputs a block type with a nested diagram has besides its Inports (its trigger
    or enable port): those the type declares, else the known conditional subsystems'."""
    block_type = registry.get(type_name)
    declared = tuple(port.name for port in getattr(block_type, "inputs", ()))
    if declared:
        return declared
    return (CONTROL_PORTS[type_name],) if type_name in CONTROL_PORTS else ()


def port_info(block: Block, names: Mapping[str, Any], wires: list | None = None) -> PortInfo:
    """Ports to draw for `block`; for an unknown type, those its wires use."""
    if has_diagram(block.type):
        ins, outs = subsystem_ports(block.subsystem)
        top = control_ports(block.type)
        return PortInfo(tuple(p for p in ins if p not in top) + top, outs, top=top)
    block_type = registry.get(block.type)
    if block_type is None:
        ins = tuple(dict.fromkeys(w.dst.port for w in wires or () if w.dst.block == block.id))
        outs = tuple(dict.fromkeys(w.src.port for w in wires or () if w.src.block == block.id))
        return PortInfo(ins, outs, known=False)
    p = lenient_params(block, names)
    impl = block_type()
    try:
        ins = tuple(port.name for port in impl.input_ports(p))
    except Exception:
        ins = tuple(port.name for port in block_type.inputs)
    try:
        outs = tuple(port.name for port in impl.output_ports(p))
    except Exception:
        outs = tuple(port.name for port in block_type.outputs)
    marks: tuple[str, ...] = ()
    if block.type == "Sum":
        marks = tuple(str(getattr(p, "signs", "")))[: len(ins)]
    elif block.type == "Product":
        marks = tuple("÷" if op == "/" else "×" for op in str(getattr(p, "ops", "")))[: len(ins)]
    return PortInfo(ins, outs, marks)


# Block types whose port names are worth showing (ports that mean different things).
NAMED_PORTS = {"Switch", "ResetIntegrator", "Integrator", "SRFlipFlop",
               "Expression", "MathFunction", "Demux", "StateSpace", "LookupTable1D",
               "SecondOrderIntegrator", "XYGraph", "Trigonometric", "RateLimiter", "Backlash",
               "DotProduct", "MinMax", "MultiportSwitch", "BusCreator", "BusSelector",
               "LookupTableND", "Merge"}


def port_texts(block_type: str, info: PortInfo) -> tuple[list[str], list[str]]:
    """The text drawn inside the block beside each input and each output port.

    Signs (Sum) or operators (Product) mark inputs; otherwise names are shown for block
    types whose ports differ in meaning, on sides with more than one port (subsystems and
    unknown types: always). Top ports (a trigger or enable) get a symbol, not a name.
    """
    always = has_diagram(block_type) or not info.known
    named = block_type in NAMED_PORTS or always

    def texts(ports: tuple[str, ...]) -> list[str]:
        show = named and (len(ports) > 1 or always)
        return [name if show else "" for name in ports]

    ins = texts(info.inputs)
    if info.top:
        ins = ["" if name in info.top else text for name, text in zip(info.inputs, ins)]
    if info.input_marks:
        ins = [("−" if m == "-" else m) for m in info.input_marks] + ins[len(info.input_marks):]
    return ins, texts(info.outputs)


def block_placement(block: Block, info: PortInfo, glyph_text: str | None = None) -> Placement:
    """Where the block is and how big, its default size fitting its port names and glyph."""
    ins, outs = port_texts(block.type, info)
    text = glyph(block) if glyph_text is None else glyph_text
    size_type = "Subsystem" if block.type not in WIDE_TYPES and has_diagram(block.type) \
        else block.type
    n_in = len(info.side_inputs)
    size = default_size(size_type, n_in, len(info.outputs), max(map(len, ins), default=0),
                        max(map(len, outs), default=0), len(text))
    return placement(block.layout, size_type, n_in, len(info.outputs), size)


# ---------------------------------------------------------------------------------------------
# Glyphs: the short text drawn inside a block so its kind is seen at a glance


def _short(value: Any, fallback: str, limit: int = 8) -> str:
    """A parameter value as text if it is short enough to read inside a block."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value) if not isinstance(value, (list, dict)) else ""
    text = text.replace(" ", "")
    return text if text and len(text) <= limit else fallback


def _param(block: Block, name: str, fallback: Any) -> Any:
    """A parameter as the compiler sees it: the block's value, else the declared default
    (so a block left at its defaults draws what it computes)."""
    if name in block.params:
        return block.params[name]
    block_type = registry.get(block.type)
    declared = {prm.name: prm for prm in block_type.params} if block_type else {}
    prm = declared.get(name)
    return prm.default if prm is not None and not prm.required else fallback


_OPERATORS = {"<=": "≤", ">=": "≥", "!=": "≠", "==": "=", "<": "<", ">": ">", "~=": "≠"}

GLYPHS: dict[str, Callable[[Block], str]] = {
    "Integrator": lambda b: "1/s",
    "ResetIntegrator": lambda b: "1/s",
    "SecondOrderIntegrator": lambda b: "1/s²",
    "Derivative": lambda b: "du/dt",
    "ZeroPole": lambda b: "k Z(s)/P(s)",
    "Trigonometric": lambda b: _short(b.params.get("function", "sin"), "trig"),
    "WrapToZero": lambda b: "wrap→0",
    "StateSpace": lambda b: "ẋ=Ax+Bu",
    "TransferFunction": lambda b: "N(s)/D(s)",
    "Gain": lambda b: _short(b.params.get("k", 1), "K", 6),
    "Sum": lambda b: "Σ",
    "Product": lambda b: "×" if "/" not in str(b.params.get("ops", "**")) else "×÷",
    "Abs": lambda b: "|u|",
    "Sign": lambda b: "sgn",
    "MathFunction": lambda b: _short(b.params.get("function", "f"), "f(u)"),
    "Expression": lambda b: _short(b.params.get("formula", "u"), "f(u)", 10),
    "Constant": lambda b: _short(b.params.get("value", 1), "C"),
    "Step": lambda b: "step",
    "Sine": lambda b: "sin",
    "Ramp": lambda b: "ramp",
    "Pulse": lambda b: "pulse",
    "Clock": lambda b: "t",
    "FromTable": lambda b: "table",
    "LookupTable1D": lambda b: "y(u)",
    "Saturation": lambda b: "sat",
    "Relay": lambda b: "relay",
    "Switch": lambda b: "switch",
    "HitCrossing": lambda b: "hit " + _short(b.params.get("level", 0), "", 5),
    "Memory": lambda b: "mem",
    "CompareToConstant": lambda b: (_OPERATORS.get(str(_param(b, "operator", "")), "?")
                                    + " " + _short(_param(b, "constant", 0), "c", 9)),
    "RelationalOperator": lambda b: _OPERATORS.get(str(_param(b, "operator", "<")), "rel"),
    "LogicalOperator": lambda b: str(b.params.get("operator", "AND"))[:5],
    "SRFlipFlop": lambda b: "S-R",
    "Mux": lambda b: "mux",
    "Demux": lambda b: "demux",
    "Goto": lambda b: "[" + _short(b.params.get("tag", "A"), "tag", 10) + "]",
    "From": lambda b: "[" + _short(b.params.get("tag", "A"), "tag", 10) + "]",
    "MultiportSwitch": lambda b: "switch",
    "Selector": lambda b: "u[i]",
    "Merge": lambda b: "merge",
    "BusCreator": lambda b: "bus",
    "BusSelector": lambda b: _short(b.params.get("names", "a"), "bus", 10),
    "LookupTableND": lambda b: "y(u1,…)",
    "Output": lambda b: "out",
    "Scope": lambda b: "scope",
    "XYGraph": lambda b: "x-y",
    "Stop": lambda b: "STOP",
    "Inport": lambda b: "in",
    "Outport": lambda b: "out",
}


def glyph(block: Block) -> str:
    """The short text drawn inside the block; the type name for types not in the table
    (none for subsystems: their port names fill them)."""
    make = GLYPHS.get(block.type)
    if make is None:
        return "" if has_diagram(block.type) else block.type
    try:
        return make(block)
    except Exception:
        return block.type
