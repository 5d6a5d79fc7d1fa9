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

from blocksim import expressions, registry
from blocksim.blockspec import ParamValues
from blocksim.gui.geometry import Placement, default_size, placement
from blocksim.model import Block, Diagram

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PortInfo:
    """The ports a block shows, in order, and the little texts drawn beside them."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    input_marks: tuple[str, ...] = ()  # e.g. Sum signs; empty: show port names if useful
    known: bool = True  # False for an unregistered block type


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


def port_info(block: Block, names: Mapping[str, Any], wires: list | None = None) -> PortInfo:
    """Ports to draw for `block`; for an unknown type, those its wires use."""
    if block.type == "Subsystem":
        ins, outs = subsystem_ports(block.subsystem)
        return PortInfo(ins, outs)
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
NAMED_PORTS = {"Subsystem", "Switch", "ResetIntegrator", "Integrator", "SRFlipFlop",
               "Expression", "MathFunction", "Demux", "StateSpace", "LookupTable1D"}


def port_texts(block_type: str, info: PortInfo) -> tuple[list[str], list[str]]:
    """The text drawn inside the block beside each input and each output port.

    Signs (Sum) or operators (Product) mark inputs; otherwise names are shown for block
    types whose ports differ in meaning, on sides with more than one port (Subsystems and
    unknown types: always).
    """
    always = block_type == "Subsystem" or not info.known
    named = block_type in NAMED_PORTS or always

    def texts(ports: tuple[str, ...]) -> list[str]:
        show = named and (len(ports) > 1 or always)
        return [name if show else "" for name in ports]

    ins = texts(info.inputs)
    if info.input_marks:
        ins = [("−" if m == "-" else m) for m in info.input_marks] + ins[len(info.input_marks):]
    return ins, texts(info.outputs)


def block_placement(block: Block, info: PortInfo, glyph_text: str | None = None) -> Placement:
    """Where the block is and how big, its default size fitting its port names and glyph."""
    ins, outs = port_texts(block.type, info)
    text = glyph(block) if glyph_text is None else glyph_text
    size = default_size(block.type, len(info.inputs), len(info.outputs),
                        max(map(len, ins), default=0), max(map(len, outs), default=0),
                        len(text))
    return placement(block.layout, block.type, len(info.inputs), len(info.outputs), size)


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


_OPERATORS = {"<=": "≤", ">=": "≥", "!=": "≠", "==": "=", "<": "<", ">": ">", "~=": "≠"}

GLYPHS: dict[str, Callable[[Block], str]] = {
    "Integrator": lambda b: "1/s",
    "ResetIntegrator": lambda b: "1/s",
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
    "CompareToConstant": lambda b: (_OPERATORS.get(str(b.params.get("operator", "")), "?")
                                    + " " + _short(b.params.get("constant", 0), "c", 9)),
    "RelationalOperator": lambda b: _OPERATORS.get(str(b.params.get("operator", "<")), "rel"),
    "LogicalOperator": lambda b: str(b.params.get("operator", "AND"))[:5],
    "SRFlipFlop": lambda b: "S-R",
    "Mux": lambda b: "mux",
    "Demux": lambda b: "demux",
    "Output": lambda b: "out",
    "Scope": lambda b: "scope",
    "Stop": lambda b: "STOP",
    "Inport": lambda b: "in",
    "Outport": lambda b: "out",
    "Subsystem": lambda b: "",
}


def glyph(block: Block) -> str:
    """The short text drawn inside the block; the type name for types not in the table."""
    make = GLYPHS.get(block.type)
    if make is None:
        return block.type
    try:
        return make(block)
    except Exception:
        return block.type
