"""What the editor draws for a block: its port names and a short glyph, without Qt.

Port counts can depend on parameters (Sum signs, Mux inputs, Expression names), so the
block type's own `input_ports`/`output_ports` are asked with leniently resolved parameters:
a value that does not resolve (an unknown name while the user is typing) falls back to the
default, so the canvas always has something sensible to draw.
"""
from __future__ import annotations

import logging
import math
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from blocksim.expressions import language as expressions

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import ParamValues
from blocksim.gui.canvas import symbols
from blocksim.gui.canvas.geometry import WIDE_TYPES, Placement, default_size, placement
from blocksim.diagram.model import Block, Diagram

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PortInfo:
    """The ports a block shows, in order, and the little texts drawn beside them.

    `physical` are its physical ports (connectors, of the domains in `domains`): they take
    no direction, so a wire at one may be either end. A block with physical ports lays all
    its ports out on its four edges explicitly (`edges`); others keep the signal layout:
    inputs left (top ones on the top edge), outputs right.
    """

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    input_marks: tuple[str, ...] = ()  # e.g. Sum signs; empty: show port names if useful
    known: bool = True  # False for an unregistered block type
    top: tuple[str, ...] = ()  # inputs drawn on the top edge (a trigger or enable port)
    physical: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()  # the domain of each physical port
    edges: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (edge, its ports) when physical

    @property
    def side_inputs(self) -> tuple[str, ...]:
        """The ports on the left edge (the inputs but the top ones, for a signal block)."""
        if self.edges:
            return self.edge("in")
        return tuple(p for p in self.inputs if p not in self.top) if self.top else self.inputs

    @property
    def right(self) -> tuple[str, ...]:
        """The ports on the right edge."""
        return self.edge("out") if self.edges else self.outputs

    def edge(self, name: str) -> tuple[str, ...]:
        """The ports on one edge ("in": left, "out": right, "top", "bottom")."""
        if not self.edges:
            return {"in": self.side_inputs, "out": self.outputs, "top": self.top}.get(name, ())
        return dict(self.edges).get(name, ())

    def kind_of(self, name: str, default: str = "in") -> str:
        """"phys" for a physical port, else "in" or "out" (`default` when the name is
        both or neither)."""
        if name in self.physical:
            return "phys"
        is_in, is_out = name in self.inputs, name in self.outputs
        return "out" if is_out and not is_in else "in" if is_in and not is_out else default

    def domain_of(self, name: str) -> str | None:
        """The domain of a physical port, None for a signal port."""
        return self.domains[self.physical.index(name)] if name in self.physical else None

    def ports(self, kind: str) -> tuple[str, ...]:
        """The ports of one kind: "in", "out" or "phys"."""
        return {"in": self.inputs, "out": self.outputs, "phys": self.physical}.get(kind, ())

    def slot(self, kind: str, name: str) -> tuple[str, int, int] | None:
        """Where port `name` (of kind "in", "out" or "phys") sits: its edge ("in", "out",
        "top", "bottom"), its index on that edge and how many ports the edge has; None if
        there is no such port."""
        if self.edges:
            if name not in self.ports(kind):
                return None
            for edge, ports in self.edges:
                if name in ports:
                    return edge, ports.index(name), len(ports)
            return None
        if kind == "out":
            ports, edge = self.outputs, "out"
        elif kind == "phys":
            return None
        elif name in self.top:
            ports, edge = self.top, "top"
        else:
            ports, edge = self.side_inputs, "in"
        if name not in ports:
            return None
        return edge, ports.index(name), len(ports)


def component_edges(type_name: str, inputs: tuple[str, ...], outputs: tuple[str, ...],
                    physical: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Where the ports of a block with physical ports go, as a schematic draws them.

    Two or more connectors: the first half on the left, the rest on the right (a
    resistor's p and n, a spring's flanges), the signals on top (a controlled source's
    input, a sensor's output: turned upright with p on top, as a voltage sensor across an
    element usually is, the output points right, away from the circuit; and the label
    under the block stays clear); with both, outputs at the bottom. One connector:
    opposite its signals (a force's input left, its flange right; a position sensor's
    flange left, its output right); without signals on the edge its symbol names (a
    ground's pin on top).
    """
    edges: dict[str, tuple[str, ...]] = {}
    if len(physical) >= 2:
        half = (len(physical) + 1) // 2
        edges = {"in": physical[:half], "out": physical[half:],
                 "top": inputs or outputs, "bottom": outputs if inputs else ()}
    elif inputs and outputs:
        edges = {"in": inputs, "out": outputs, "top": physical}
    elif inputs:
        edges = {"in": inputs, "out": physical}
    elif outputs:
        edges = {"in": physical, "out": outputs}
    else:
        found = symbols.symbol(type_name)
        side = found.pin if found is not None else "top"
        edges = {{"left": "in", "right": "out"}.get(side, side): physical}
    return tuple((edge, ports) for edge, ports in edges.items() if ports)


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


# The folder the open diagram's relative file parameters are read from (an FMU's ports come
# from its file): the diagram file's, set by the document when it loads or saves one.
_FILES_FOLDER: str | None = None


def set_files_folder(path: Any) -> None:
    """The open diagram is the file `path` (None: not saved): where its files are."""
    global _FILES_FOLDER
    _FILES_FOLDER = str(Path(path).resolve().parent) if path else None


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
    return ParamValues(values, names=names, folder=_FILES_FOLDER)


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
        left, right, domains = subsystem_connection_ports(block.subsystem)
        if not left and not right:
            return PortInfo(tuple(p for p in ins if p not in top) + top, outs, top=top)
        edges = (("in", ins + left), ("out", outs + right), ("top", top))
        return PortInfo(tuple(p for p in ins if p not in top) + top, outs, top=top,
                        physical=left + right, domains=domains,
                        edges=tuple((e, p) for e, p in edges if p))
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
    connectors = _connectors(impl, p)
    if connectors:
        physical = tuple(c.name for c in connectors)
        return PortInfo(ins, outs, physical=physical, domains=tuple(c.domain for c in connectors),
                        edges=component_edges(block.type, ins, outs, physical))
    marks: tuple[str, ...] = ()
    if block.type == "Sum":
        marks = tuple(str(getattr(p, "signs", "")))[: len(ins)]
    elif block.type == "Product":
        marks = tuple("÷" if op == "/" else "×" for op in str(getattr(p, "ops", "")))[: len(ins)]
    return PortInfo(ins, outs, marks)


def _connectors(impl: Any, p: ParamValues) -> tuple:
    """The connectors (physical ports) a block declares for these parameters (none for a
    signal block; the declared ones if the parameters do not give any)."""
    if not hasattr(impl, "connector_ports"):
        return ()
    try:
        return tuple(impl.connector_ports(p))
    except Exception:
        return tuple(getattr(impl, "connectors", ()))


CONNECTION_PORT = "ConnectionPort"  # a subsystem's physical port (blocks/ports.py)


def physical_ports(block: Block, names: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of a block's physical ports, cheaply: a signal block's type is only
    looked up, not asked."""
    if has_diagram(block.type):
        left, right, _ = subsystem_connection_ports(block.subsystem)
        return left + right
    block_type = registry.get(block.type)
    if block_type is None or not hasattr(block_type, "connector_ports"):
        return ()
    return port_info(block, names).physical


def bottom_ports(place: Placement, info: PortInfo) -> list[float]:
    """The canvas x of the ports on the bottom edge of the block as drawn (after its
    rotation): the label under the block moves aside for their wires."""
    found = []
    for kind in ("in", "out", "phys"):
        for name in info.ports(kind):
            slot = info.slot(kind, name)
            if slot is not None:
                (x, _), direction = place.port(*slot)
                if direction[1] > 0.5:  # outwards is downwards
                    found.append(x)
    return found


def subsystem_connection_ports(inner: Diagram | None
                               ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A subsystem's physical ports (its ConnectionPort blocks' ids) on its left and right
    edges, and their domains (left ones first). A port drawn left of the middle of the
    inside goes on the left edge, else on the right, each edge ordered top to bottom, so
    the subsystem's ports sit as the user drew them inside."""
    if inner is None:
        return (), (), ()
    ports = [b for b in inner.blocks if b.type == CONNECTION_PORT]
    if not ports:
        return (), (), ()

    def where(b: Block, key: str) -> float:
        try:
            return float((b.layout or {}).get(key, 0.0))
        except (TypeError, ValueError):
            return 0.0

    xs = [where(b, "x") for b in inner.blocks]
    middle = (min(xs) + max(xs)) / 2
    order = sorted(range(len(ports)), key=lambda i: (where(ports[i], "y"), i))
    left = [ports[i] for i in order if where(ports[i], "x") < middle or len(xs) == 1]
    right = [ports[i] for i in order if ports[i] not in left]
    default = registry.get(CONNECTION_PORT)
    fallback = default.params[0].default if default is not None and default.params else ""
    domains = tuple(str(b.params.get("domain", fallback)) for b in left + right)
    return tuple(b.id for b in left), tuple(b.id for b in right), domains


# Block types whose port names are worth showing (ports that mean different things).
NAMED_PORTS = {"Switch", "ResetIntegrator", "Integrator", "SRFlipFlop",
               "Expression", "MathFunction", "Demux", "StateSpace", "LookupTable1D",
               "SecondOrderIntegrator", "XYGraph", "Trigonometric", "RateLimiter", "Backlash",
               "DotProduct", "MinMax", "MultiportSwitch", "BusCreator", "BusSelector",
               "LookupTableND", "Merge"}
# ... and those whose every port is named, one or many (an FMU's are its variables).
ALWAYS_NAMED_PORTS = {"FMU"}


def port_texts(block_type: str, info: PortInfo) -> tuple[list[str], list[str], list[str]]:
    """The text drawn inside the block beside each input, output and physical port.

    Signs (Sum) or operators (Product) mark inputs; otherwise names are shown for block
    types whose ports differ in meaning, on sides with more than one port (subsystems and
    unknown types: always). Top ports (a trigger or enable) get a symbol, not a name; a
    component's ports none (its symbol shows what they are), a subsystem's physical ports
    their ConnectionPorts' ids.
    """
    always = has_diagram(block_type) or not info.known or block_type in ALWAYS_NAMED_PORTS
    named = (block_type in NAMED_PORTS or always) and not (info.physical and not always)

    def texts(ports: tuple[str, ...]) -> list[str]:
        show = named and (len(ports) > 1 or always)
        return [name if show else "" for name in ports]

    ins = texts(info.inputs)
    if info.top:
        ins = ["" if name in info.top else text for name, text in zip(info.inputs, ins)]
    if info.input_marks:
        ins = [("−" if m == "-" else m) for m in info.input_marks] + ins[len(info.input_marks):]
    return ins, texts(info.outputs), [name if always else "" for name in info.physical]


def block_placement(block: Block, info: PortInfo, glyph_text: str | None = None) -> Placement:
    """Where the block is and how big: a component with a symbol at its symbol's size, any
    other block at the default size fitting its port names and glyph."""
    n_in, n_out = len(info.side_inputs), len(info.right)
    drawn = symbols.symbol(block.type) if info.physical else None
    if drawn is not None:
        return placement(block.layout, block.type, n_in, n_out, drawn.size)
    ins, outs, phys = port_texts(block.type, info)
    text_of = dict(zip(info.physical, phys))
    text_of.update(zip(info.outputs, outs))
    text_of.update(zip(info.inputs, ins))
    left = max((len(text_of.get(p, "")) for p in info.side_inputs), default=0)
    right = max((len(text_of.get(p, "")) for p in info.right), default=0)
    text = glyph(block) if glyph_text is None else glyph_text
    size_type = "Subsystem" if block.type not in WIDE_TYPES and has_diagram(block.type) \
        else block.type
    w, h = default_size(size_type, n_in, n_out, left, right, len(text))
    across = max(len(info.edge("top")), len(info.edge("bottom"))) if info.edges else 0
    if across:  # ports on the top or bottom edge: on grid lines when the width is even
        w = max(w, 20.0 * math.ceil(max(w, 20.0 * (across + 1)) / 20.0))
    return placement(block.layout, size_type, n_in, n_out, (w, h))


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
    (none for subsystems, whose port names fill them, nor for components drawn by their
    symbol)."""
    make = GLYPHS.get(block.type)
    if make is None:
        drawn = has_diagram(block.type) or symbols.symbol(block.type) is not None
        return "" if drawn else block.type
    try:
        return make(block)
    except Exception:
        return block.type
