"""Flattening: subsystems dissolved into one list of block instances and one wiring map.

Block ids become paths ("part2/relation1"); Inport/Outport blocks, and Goto/From pairs
(`tags`), are resolved into direct connections, so later stages never see hierarchy.
Parameters are resolved here too, because a block's ports may depend on them (Sum's
signs); each level's scope shares the values of the levels around it (no copy per level),
and one budget counts every value kept (`budget`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from blocksim.expressions import language as expressions

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import BlockType, ParamValues
from blocksim.compiler import conditional, limits
from blocksim.compiler.budget import ParameterBudget
from blocksim.compiler.faults import call_block
from blocksim.compiler.params import params_for, resolve_param
from blocksim.compiler.tags import Tagged, Tags
from blocksim.errors import CompileError, ExpressionError, shown
from blocksim.diagram.model import Diagram

__all__ = ["Endpoint", "FlatBlock", "FlatDiagram", "check_blocks", "flatten",
           "resolve_param"]

Endpoint = tuple[str, str]  # (block path, port name)

CONNECTION_PORT = "ConnectionPort"  # a subsystem's physical port (blocks/physical_ports.py)
_IN_HIDDEN = "__in"  # input of an Inport, driven from outside its subsystem
_OUT_HIDDEN = "__out"  # output of an Outport, seen outside its subsystem


@dataclass
class FlatBlock:
    """One block instance after flattening, with resolved parameters and ports."""

    path: str
    block_type: type[BlockType]
    impl: BlockType
    p: ParamValues
    inputs: list[str]
    outputs: list[str]
    feedthrough: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Conditional subsystems around the block (their gates' paths): the enabled ones it is
    # in (outermost first), and the innermost triggered one.
    gates: tuple[str, ...] = ()
    trigger: str | None = None
    # A Merge's sources: per input, the output hold of the conditional subsystem driving it.
    watch: tuple[str, ...] = ()
    # For new parameter values (`compiler.runtime`): the file's parameters (a copy), the
    # subsystem level whose names they see ("" the diagram's), and whether the block's
    # values come from the file's parameters as declared (not so for the gates and holds
    # of conditional subsystems, which take those of the subsystem and its Outports).
    raw: Mapping[str, Any] = field(default_factory=dict)
    level: str = ""
    declared: bool = True
    # The same object for blocks of the same type, parameter values and ports as resolved
    # here (`_same_key`), None for a block unlike any other: code generation writes the
    # code of such twins once (`code_reuse`).
    twin: object = None


@dataclass
class Level:
    """One level's parameter scope: its enclosing level, its own parameters as in the
    file (a copy) and the names its blocks see."""

    parent: str | None
    parameters: Mapping[str, Any]
    names: Mapping[str, Any]


@dataclass
class FlatDiagram:
    blocks: list[FlatBlock]
    drivers: dict[Endpoint, Endpoint]  # input endpoint -> output endpoint driving it
    source: str
    # The parameter scopes by level path ("" the diagram), and the blocks dissolved into
    # wires (subsystem ports, Goto/From), whose parameters shape the structure.
    levels: dict[str, Level] = field(default_factory=dict)
    dissolved: list[FlatBlock] = field(default_factory=list)
    folder: str | None = None
    # Physical connections (undirected, between connectors of components and the
    # ConnectionPorts of subsystems), which `blocksim.physical.assemble` turns into
    # networks of equations.
    connections: list[tuple[Endpoint, Endpoint]] = field(default_factory=list)


class _Flattener:
    def __init__(self, source: str, folder: str | None = None,
                 local_types: Mapping[str, type[BlockType]] | None = None):
        self.source = source
        # Component types the diagram declares itself (`blocksim.physical.declared`).
        self.local_types = local_types or {}
        self.folder = folder  # the diagram file's folder (see ParamValues.folder)
        self.blocks: list[FlatBlock] = []
        self.wires: dict[Endpoint, Endpoint] = {}
        self.aliases: set[str] = set()  # paths of Inport/Outport/Goto/From blocks to dissolve
        self.tags = Tags()
        self.budget = ParameterBudget(source)
        # The endpoints a user sees for the hidden ports of subsystem port blocks:
        # ("sub/u", "__in") is input 'u' of block 'sub', ("sub/y", "__out") its output 'y'.
        self.shown: dict[Endpoint, Endpoint] = {}
        # The conditional subsystems around the level being added (see FlatBlock).
        self.gates: tuple[str, ...] = ()
        self.trigger: str | None = None
        self.levels: dict[str, Level] = {}
        # Library blocks by type, parameters as in the file and scope (`_same_key`): their
        # resolved values, ports and feedthrough. Large diagrams repeat a few blocks many
        # times; resolving and checking each again was most of flattening them.
        self.same: dict[tuple, tuple] = {}
        self.connections: list[tuple[Endpoint, Endpoint]] = []

    def error(self, message: str, block: str | None = None, port: str | None = None):
        return CompileError(message, block=block, port=port, file=self.source)

    def scope(self, parameters: Mapping[str, Any], names: Mapping[str, Any], path: str,
              overrides: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """The names a level sees: its own parameters over the enclosing ones, which are
        shared, not copied (a level of 20 arrays costs nothing more per nesting level)."""
        parent = None if path == "" else path.rpartition("/")[0]
        if not parameters and not overrides:
            self.levels[path] = Level(parent, {}, names)
            return names
        where = "subsystem parameter '{}'" if path else "diagram parameter '{}'"

        def charge(name: str, value: Any) -> None:
            self.budget.charge(value, where.format(name), block=path or None)

        try:
            own = expressions.resolve_parameters(parameters, overrides, scope=names,
                                                 on_value=charge)
        except ExpressionError as exc:
            raise self.error(str(exc), block=path or None) from None
        scope = MappingProxyType({**names, **own})
        self.levels[path] = Level(parent, dict(parameters), scope)
        return scope

    def add(self, diagram: Diagram, names: Mapping[str, Any], prefix: str,
            depth: int = 0) -> dict[str, dict]:
        """Flatten one level; returns {block id: {"in": {port: endpoint}, "out": {...}}}."""
        ports: dict[str, dict[str, dict[str, Endpoint]]] = {}
        for blk in diagram.blocks:
            path = prefix + blk.id
            block_type = self.local_types.get(blk.type) or registry.get(blk.type)
            if block_type is None:
                raise self.error(f"unknown block type '{shown(blk.type)}' (see `blocksim blocks`)",
                                 block=path)
            if getattr(block_type, "has_diagram", False):
                if blk.subsystem is None:
                    raise self.error(f"a {blk.type} needs a nested 'diagram'", block=path)
                if blk.type == "Subsystem" and blk.params:
                    raise self.error(f"a Subsystem takes no parameters, got "
                                     f"{', '.join(blk.params)}", block=path)
                if depth >= limits.MAX_NESTING:
                    raise self.error(f"subsystems are nested more than {limits.MAX_NESTING} "
                                     f"levels deep", block=path)
                if blk.type == "Subsystem":
                    inner_names = self.scope(blk.subsystem.parameters, names, path)
                    inner = self.add(blk.subsystem, inner_names, path + "/", depth + 1)
                    ports[blk.id] = self._subsystem_ports(blk.subsystem, inner, path)
                    ports[blk.id]["phys"] = _connection_ports(blk.subsystem, inner, path)
                else:
                    ports[blk.id] = conditional.add(self, blk, block_type, names, path, depth)
                continue
            key = _same_key(block_type, blk.params, names)
            same = self.same.get(key) if key is not None else None
            if same is not None and same[0] is names:  # like a block before: same values, ports
                _, values, inputs, outputs, feed = twin = same
                p = ParamValues(values, names=names, folder=self.folder)
                impl = block_type()
                inputs, outputs, feed = list(inputs), list(outputs), dict(feed)
            else:
                try:
                    p = params_for(block_type, blk.params, names, path, self.budget,
                                   self.folder)
                    impl = block_type()
                    problem = call_block(impl.check, p)
                    inputs = [port.name for port in call_block(impl.input_ports, p)]
                    outputs = [port.name for port in call_block(impl.output_ports, p)]
                    feed = {k: tuple(v) for k, v in call_block(impl.feedthrough, p).items()}
                except CompileError as exc:
                    raise CompileError(exc.detail, block=exc.block or path,
                                       file=self.source) from None
                if problem:
                    raise self.error(problem, block=path)
                twin = None
                if key is not None and _shareable(p):
                    self.same[key] = twin = (names, p.as_dict(), tuple(inputs),
                                             tuple(outputs), dict(feed))
            for kind, found in (("inputs", inputs), ("outputs", outputs)):
                if len(found) > limits.MAX_PORTS:
                    raise self.error(f"{len(found)} {kind} (at most {limits.MAX_PORTS})",
                                     block=path)
            if blk.type == "Inport":
                inputs = [_IN_HIDDEN]
                feed = {"y": (_IN_HIDDEN,)}
                self.aliases.add(path)
            elif blk.type == "Outport":
                outputs = [_OUT_HIDDEN]
                feed = {_OUT_HIDDEN: ("u",)}
                self.aliases.add(path)
            elif blk.type in ("Goto", "From"):  # wired to each other once all levels are in
                tagged = Tagged(path, prefix, p.tag, p.get("visibility", "local"),
                                (self.gates, self.trigger))
                if blk.type == "From":
                    inputs, feed = [_IN_HIDDEN], {"y": (_IN_HIDDEN,)}
                    self.tags.froms.append(tagged)
                else:
                    self.tags.gotos.append(tagged)
                self.aliases.add(path)
            connectors = call_block(impl.connector_ports, p) if hasattr(
                impl, "connector_ports") else ()
            if blk.type == CONNECTION_PORT:  # a subsystem's physical port: only a junction
                self.aliases.add(path)
            self.blocks.append(FlatBlock(path, block_type, impl, p, inputs, outputs, feed,
                                         self.gates, self.trigger, raw=dict(blk.params),
                                         level=prefix[:-1], twin=twin))
            ports[blk.id] = {"in": {n: (path, n) for n in inputs if n != _IN_HIDDEN},
                             "out": {n: (path, n) for n in outputs if n != _OUT_HIDDEN},
                             "phys": {c.name: ((path, c.name), c.domain) for c in connectors}}
        for wire in diagram.wires:
            src_block, dst_block = ports.get(wire.src.block), ports.get(wire.dst.block)
            if src_block is None:
                raise self.error(f"{_label(wire)}: there is no block "
                                 f"'{shown(wire.src.block)}'",
                                 block=prefix + wire.src.block)
            if dst_block is None:
                raise self.error(f"{_label(wire)}: there is no block "
                                 f"'{shown(wire.dst.block)}'",
                                 block=prefix + wire.dst.block)
            if self._physical(wire, src_block, dst_block, prefix):
                continue
            src = src_block["out"].get(wire.src.port)
            if src is None:
                raise self.error(f"{_label(wire)}: no output port '{shown(wire.src.port)}' "
                                 f"(outputs: {', '.join(src_block['out']) or 'none'})",
                                 block=prefix + wire.src.block, port=wire.src.port)
            dst = dst_block["in"].get(wire.dst.port)
            if dst is None:
                raise self.error(f"{_label(wire)}: no input port '{shown(wire.dst.port)}' "
                                 f"(inputs: {', '.join(dst_block['in']) or 'none'})",
                                 block=prefix + wire.dst.block, port=wire.dst.port)
            if dst in self.wires:
                raise self.error(f"input is driven twice (by {self._name(self.wires[dst])} and "
                                 f"{shown(prefix + str(wire.src))})", block=prefix + wire.dst.block,
                                 port=wire.dst.port)
            self.wires[dst] = src
        return ports

    def _physical(self, wire: Any, src_block: dict, dst_block: dict, prefix: str) -> bool:
        """Record a wire between two physical ports as a connection (True); refuse one
        between a physical and a signal port, or between two domains."""
        src = src_block.get("phys", {}).get(wire.src.port)
        dst = dst_block.get("phys", {}).get(wire.dst.port)
        if src is None and dst is None:
            return False
        if src is None or dst is None:
            phys, other = (wire.src, wire.dst) if src is not None else (wire.dst, wire.src)
            raise self.error(f"{_label(wire)}: '{shown(phys)}' is a physical port and "
                             f"'{shown(other)}' is not one: a physical port connects only to "
                             f"physical ports of its domain (use a sensor or a source to "
                             f"turn it into a signal)", block=prefix + other.block,
                             port=other.port)
        if src[1] != dst[1]:
            raise self.error(f"{_label(wire)}: connects the {src[1]} port "
                             f"'{shown(wire.src)}' to the {dst[1]} port '{shown(wire.dst)}' "
                             f"(a connection joins ports of one domain)",
                             block=prefix + wire.src.block, port=wire.src.port)
        self.connections.append((src[0], dst[0]))
        return True

    def _name(self, endpoint: Endpoint) -> str:
        """An endpoint as the file names it ('sub.y', not the hidden 'sub/y.__out')."""
        block, port = self.shown.get(endpoint, endpoint)
        return f"{block}.{port}"

    def _subsystem_ports(self, diagram: Diagram, inner: dict, path: str) -> dict:
        def ordered(kind: str) -> list[str]:
            found = [(int(b.params.get("index", 0) or 0), i, b.id)
                     for i, b in enumerate(diagram.blocks) if b.type == kind]
            return [bid for _, _, bid in sorted(found, key=lambda t: (t[0] == 0, t[0], t[1]))]

        ins = {bid: (f"{path}/{bid}", _IN_HIDDEN) for bid in ordered("Inport")}
        outs = {bid: (f"{path}/{bid}", _OUT_HIDDEN) for bid in ordered("Outport")}
        for bid, endpoint in (*ins.items(), *outs.items()):
            self.shown[endpoint] = (path, bid)
        return {"in": ins, "out": outs}

    def resolve_aliases(self) -> FlatDiagram:
        """Replace every path through an Inport/Outport or a Goto/From by a direct
        connection."""
        for goto in self.tags.gotos:
            if (goto.path, "u") not in self.wires:
                raise self.error("input 'u' is not connected", block=goto.path, port="u")
        for frm, goto in self.tags.resolve(self.error).items():
            self.wires[(frm, _IN_HIDDEN)] = (goto, _OUT_HIDDEN)
        alias_out, kinds = {}, {}
        for blk in self.blocks:
            if blk.path in self.aliases and blk.block_type.name != CONNECTION_PORT:
                kinds[blk.path] = blk.block_type.name
                if blk.block_type.name in ("Inport", "From"):
                    alias_out[(blk.path, "y")] = (blk.path, _IN_HIDDEN)
                else:
                    alias_out[(blk.path, _OUT_HIDDEN)] = (blk.path, "u")

        def origin(endpoint: Endpoint, dst: Endpoint) -> Endpoint:
            seen = set()
            while endpoint in alias_out:
                if endpoint in seen:
                    raise self.error("subsystem ports or Goto/From tags form a loop with no "
                                     "block in it", block=endpoint[0])
                seen.add(endpoint)
                hidden_in = alias_out[endpoint]
                if hidden_in not in self.wires:
                    path = hidden_in[0]
                    raise self.error(f"the {kinds[path]} '{path}' has no signal (input "
                                     f"'{dst[0]}.{dst[1]}' needs it)", block=path)
                endpoint = self.wires[hidden_in]
            return endpoint

        drivers = {}
        for dst, src in self.wires.items():
            if dst[0] in self.aliases:
                continue
            drivers[dst] = origin(src, dst)
        blocks = [b for b in self.blocks if b.path not in self.aliases]
        dissolved = [b for b in self.blocks if b.path in self.aliases]
        return FlatDiagram(blocks, drivers, self.source, self.levels, dissolved, self.folder,
                           self.connections)


def _declared_types(diagram: Diagram) -> Mapping[str, type[BlockType]]:
    """The component types the diagram file declares (none: nothing imported)."""
    if not diagram.components:
        return {}
    from blocksim.physical.declared import diagram_types
    return diagram_types(diagram)


def _connection_ports(diagram: Diagram, inner: dict, path: str) -> dict:
    """A subsystem's physical ports: its ConnectionPort blocks, by id."""
    return {b.id: inner[b.id]["phys"]["p"] for b in diagram.blocks if b.type == CONNECTION_PORT}


def _label(wire: Any) -> str:
    """A wire as an error message names it."""
    return f"wire {shown(wire.src)} -> {shown(wire.dst)}"


_PLAIN = (str, float, int, bool)
_SHARED_ARRAY_MOST = 64  # elements: larger arrays stay one per block, as the budget counts them


def _same_key(block_type: type[BlockType], raw: Mapping[str, Any],
              names: Mapping[str, Any]) -> tuple | None:
    """What decides a library block's values and ports: its type, its parameters as in the
    file (exact types: 1, 1.0 and True differ) and its scope (the level's names, one
    object per level); None when a value is not plain JSON data or the type is not from
    the library (a user's block type may check more than its parameters)."""
    if not block_type.__module__.startswith("blocksim.blocks."):
        return None
    items = []
    for name, value in raw.items():
        value_key = _plain_key(value)
        if value_key is None:
            return None
        items.append((name, value_key))
    return (block_type, id(names), tuple(items))


def _plain_key(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if kind is list or kind is tuple:
        if all(type(item) is float for item in value):  # coefficients: the common case
            return (kind, float, tuple(value))
        parts = tuple(_plain_key(item) for item in value)
        return None if None in parts else (kind, parts)
    return None


def _shareable(p: ParamValues) -> bool:
    """Values that blocks may share: no array larger than a few coefficients."""
    return all(getattr(value, "size", 0) <= _SHARED_ARRAY_MOST
               for value in p.as_dict().values())


def flatten(diagram: Diagram, overrides: Mapping[str, Any] | None = None) -> FlatDiagram:
    """Resolve parameters and flatten subsystems; CompileError names file, block and port."""
    folder = os.path.dirname(os.path.abspath(diagram.path)) if diagram.path else None
    flattener = _Flattener(diagram.source, folder, _declared_types(diagram))
    names = flattener.scope(diagram.parameters, MappingProxyType({}), "", overrides or {})
    flattener.add(diagram, names, "")
    return flattener.resolve_aliases()


def check_blocks(diagram: Diagram, overrides: Mapping[str, Any] | None = None) -> None:
    """Resolve every block's parameters and run its `check`, connecting nothing: the
    editor's check of one block, which must not ask a lone From for its Goto."""
    folder = os.path.dirname(os.path.abspath(diagram.path)) if diagram.path else None
    flattener = _Flattener(diagram.source, folder, local_types=_declared_types(diagram))
    names = flattener.scope(diagram.parameters, MappingProxyType({}), "", overrides or {})
    flattener.add(diagram, names, "")
