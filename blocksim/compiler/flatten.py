"""Flattening: subsystems dissolved into one list of block instances and one wiring map.

Block ids become paths ("part2/relation1"); Inport/Outport blocks are resolved into direct
connections, so later stages never see hierarchy. Parameters are resolved here too, because
a block's ports may depend on them (Sum's signs).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from blocksim import expressions, registry
from blocksim.blockspec import BlockType, Param, ParamValues
from blocksim.errors import CompileError, ExpressionError
from blocksim.model import Diagram

Endpoint = tuple[str, str]  # (block path, port name)

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


@dataclass
class FlatDiagram:
    blocks: list[FlatBlock]
    drivers: dict[Endpoint, Endpoint]  # input endpoint -> output endpoint driving it
    source: str


def resolve_param(prm: Param, raw: Any, names: Mapping[str, Any], where: str) -> Any:
    """Turn a file value into the value a block sees, checking kind, choices and bounds."""
    kind = prm.kind
    try:
        if kind in ("text", "signs"):
            if not isinstance(raw, str):
                raise CompileError(f"parameter '{prm.name}' must be text, got {raw!r}")
            return raw
        if kind == "choice":
            if raw not in prm.choices:
                raise CompileError(f"parameter '{prm.name}' is {raw!r}; "
                                   f"choose one of {', '.join(map(repr, prm.choices))}")
            return raw
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            value = expressions.evaluate(raw, names)
            return bool(np.asarray(value).ravel()[0]) if np.size(value) else False
        if (type(raw) is float or (type(raw) is int and abs(raw) < _FLOAT_RANGE)) \
                and kind in ("scalar", "vector"):
            return _plain_number(prm, float(raw), raw)  # most parameters: no numpy needed
        value = expressions.evaluate(raw, names)
    except ExpressionError as exc:
        raise CompileError(f"parameter '{prm.name}': {exc}") from None
    arr = np.asarray(value, dtype=float)
    if kind in ("scalar", "int"):
        if arr.size != 1:
            raise CompileError(f"parameter '{prm.name}' must be one number, got {raw!r}")
        value = float(arr.ravel()[0])
        if kind == "int":
            if value != int(value):
                raise CompileError(f"parameter '{prm.name}' must be a whole number, got {raw!r}")
            value = int(value)
    elif kind == "vector":
        if arr.size == 0:
            raise CompileError(f"parameter '{prm.name}' is empty")
        value = float(arr) if arr.ndim == 0 else arr  # tables may be 2-D: blocks check shapes
    if np.any(np.isnan(arr)):
        raise CompileError(f"parameter '{prm.name}' is not a number: {raw!r}")
    if prm.low is not None and np.any(arr < prm.low):
        raise CompileError(f"parameter '{prm.name}' = {raw!r} is below its minimum {prm.low}")
    if prm.high is not None and np.any(arr > prm.high):
        raise CompileError(f"parameter '{prm.name}' = {raw!r} is above its maximum {prm.high}")
    return value


_FLOAT_RANGE = 2 ** 1023  # ints below this convert to float without overflow


def _plain_number(prm: Param, value: float, raw: Any) -> float:
    """`resolve_param` of a number for a scalar or vector parameter: the same checks."""
    if value != value:
        raise CompileError(f"parameter '{prm.name}' is not a number: {raw!r}")
    if prm.low is not None and value < prm.low:
        raise CompileError(f"parameter '{prm.name}' = {raw!r} is below its minimum {prm.low}")
    if prm.high is not None and value > prm.high:
        raise CompileError(f"parameter '{prm.name}' = {raw!r} is above its maximum {prm.high}")
    return value


def _params_for(block_type: type[BlockType], raw: Mapping[str, Any], names: Mapping[str, Any],
                path: str) -> ParamValues:
    declared = {prm.name: prm for prm in block_type.params}
    unknown = sorted(set(raw) - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise CompileError(f"unknown parameter '{unknown[0]}' (parameters of "
                           f"{block_type.name}: {known})", block=path)
    values = {}
    for name, prm in declared.items():
        if name in raw:
            value = raw[name]
        elif prm.required:
            raise CompileError(f"missing parameter '{name}'", block=path)
        else:
            value = prm.default
        try:
            values[name] = resolve_param(prm, value, names, path)
        except CompileError as exc:
            raise CompileError(exc.detail, block=path) from None
    return ParamValues(values, names=names)


class _Flattener:
    def __init__(self, source: str):
        self.source = source
        self.blocks: list[FlatBlock] = []
        self.wires: dict[Endpoint, Endpoint] = {}
        self.aliases: set[str] = set()  # paths of Inport/Outport blocks to dissolve

    def error(self, message: str, block: str | None = None, port: str | None = None):
        return CompileError(message, block=block, port=port, file=self.source)

    def add(self, diagram: Diagram, names: Mapping[str, Any], prefix: str) -> dict[str, dict]:
        """Flatten one level; returns {block id: {"in": {port: endpoint}, "out": {...}}}."""
        ports: dict[str, dict[str, dict[str, Endpoint]]] = {}
        for blk in diagram.blocks:
            path = prefix + blk.id
            block_type = registry.get(blk.type)
            if block_type is None:
                raise self.error(f"unknown block type '{blk.type}' (see `blocksim blocks`)",
                                 block=path)
            if blk.type == "Subsystem":
                if blk.subsystem is None:
                    raise self.error("a Subsystem needs a nested 'diagram'", block=path)
                if blk.params:
                    raise self.error(f"a Subsystem takes no parameters, got "
                                     f"{', '.join(blk.params)}", block=path)
                inner_names = dict(names)
                if blk.subsystem.parameters:
                    try:
                        inner_names.update(expressions.resolve_parameters(
                            {**{k: v for k, v in names.items()}, **blk.subsystem.parameters},
                            source=path))
                    except ExpressionError as exc:
                        raise self.error(str(exc), block=path) from None
                inner = self.add(blk.subsystem, inner_names, path + "/")
                ports[blk.id] = self._subsystem_ports(blk.subsystem, inner, path)
                continue
            try:
                p = _params_for(block_type, blk.params, names, path)
                impl = block_type()
                problem = impl.check(p)
                inputs = [port.name for port in impl.input_ports(p)]
                outputs = [port.name for port in impl.output_ports(p)]
                feed = {k: tuple(v) for k, v in impl.feedthrough(p).items()}
            except CompileError as exc:
                raise CompileError(exc.detail, block=exc.block or path, file=self.source) from None
            if problem:
                raise self.error(problem, block=path)
            if blk.type == "Inport":
                inputs = [_IN_HIDDEN]
                feed = {"y": (_IN_HIDDEN,)}
                self.aliases.add(path)
            elif blk.type == "Outport":
                outputs = [_OUT_HIDDEN]
                feed = {_OUT_HIDDEN: ("u",)}
                self.aliases.add(path)
            self.blocks.append(FlatBlock(path, block_type, impl, p, inputs, outputs, feed))
            ports[blk.id] = {"in": {n: (path, n) for n in inputs if n != _IN_HIDDEN},
                             "out": {n: (path, n) for n in outputs if n != _OUT_HIDDEN}}
        for wire in diagram.wires:
            label = f"wire {wire.src} -> {wire.dst}"
            src_block, dst_block = ports.get(wire.src.block), ports.get(wire.dst.block)
            if src_block is None:
                raise self.error(f"{label}: there is no block '{wire.src.block}'",
                                 block=prefix + wire.src.block)
            if dst_block is None:
                raise self.error(f"{label}: there is no block '{wire.dst.block}'",
                                 block=prefix + wire.dst.block)
            src = src_block["out"].get(wire.src.port)
            if src is None:
                raise self.error(f"{label}: no output port '{wire.src.port}' (outputs: "
                                 f"{', '.join(src_block['out']) or 'none'})",
                                 block=prefix + wire.src.block, port=wire.src.port)
            dst = dst_block["in"].get(wire.dst.port)
            if dst is None:
                raise self.error(f"{label}: no input port '{wire.dst.port}' (inputs: "
                                 f"{', '.join(dst_block['in']) or 'none'})",
                                 block=prefix + wire.dst.block, port=wire.dst.port)
            if dst in self.wires:
                raise self.error(f"input is driven twice (by {self._name(self.wires[dst])} and "
                                 f"{prefix}{wire.src})", block=dst[0], port=dst[1])
            self.wires[dst] = src
        return ports

    @staticmethod
    def _name(endpoint: Endpoint) -> str:
        return f"{endpoint[0]}.{endpoint[1]}"

    def _subsystem_ports(self, diagram: Diagram, inner: dict, path: str) -> dict:
        def ordered(kind: str) -> list[str]:
            found = [(int(b.params.get("index", 0) or 0), i, b.id)
                     for i, b in enumerate(diagram.blocks) if b.type == kind]
            return [bid for _, _, bid in sorted(found, key=lambda t: (t[0] == 0, t[0], t[1]))]

        ins = {bid: (f"{path}/{bid}", _IN_HIDDEN) for bid in ordered("Inport")}
        outs = {bid: (f"{path}/{bid}", _OUT_HIDDEN) for bid in ordered("Outport")}
        return {"in": ins, "out": outs}

    def resolve_aliases(self) -> FlatDiagram:
        """Replace every path through an Inport/Outport by a direct connection."""
        alias_out = {}
        for blk in self.blocks:
            if blk.path in self.aliases:
                if blk.block_type.name == "Inport":
                    alias_out[(blk.path, "y")] = (blk.path, _IN_HIDDEN)
                else:
                    alias_out[(blk.path, _OUT_HIDDEN)] = (blk.path, "u")

        def origin(endpoint: Endpoint, dst: Endpoint) -> Endpoint:
            seen = set()
            while endpoint in alias_out:
                if endpoint in seen:
                    raise self.error("subsystem ports form a loop with no block in it",
                                     block=endpoint[0])
                seen.add(endpoint)
                hidden_in = alias_out[endpoint]
                if hidden_in not in self.wires:
                    path = hidden_in[0]
                    raise self.error(f"the {'Inport' if hidden_in[1] == _IN_HIDDEN else 'Outport'}"
                                     f" '{path}' has no signal (input '{dst[0]}.{dst[1]}' needs"
                                     f" it)", block=path)
                endpoint = self.wires[hidden_in]
            return endpoint

        drivers = {}
        for dst, src in self.wires.items():
            if dst[0] in self.aliases:
                continue
            drivers[dst] = origin(src, dst)
        blocks = [b for b in self.blocks if b.path not in self.aliases]
        return FlatDiagram(blocks, drivers, self.source)


def flatten(diagram: Diagram, overrides: Mapping[str, Any] | None = None) -> FlatDiagram:
    """Resolve parameters and flatten subsystems; CompileError names file, block and port."""
    source = diagram.source
    try:
        names = expressions.resolve_parameters(diagram.parameters, overrides or {}, source=source)
    except ExpressionError as exc:
        raise CompileError(str(exc), file=source) from None
    flattener = _Flattener(source)
    flattener.add(diagram, names, "")
    return flattener.resolve_aliases()
