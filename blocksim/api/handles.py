"""Blocks of a diagram being built in Python (`blocksim.api.builder`): handles whose ports are
attributes, checked against the block declarations when read, and the checks `add` makes.

Port names can depend on parameters (a Sum's signs), so they are worked out from the
parameters a block has at the moment, resolved as the compiler resolves them.
"""
from __future__ import annotations

import difflib
import inspect
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import BlockType, ParamValues
from blocksim.errors import CompileError, shown
from blocksim.diagram.model import Block, Diagram, PortRef

if TYPE_CHECKING:
    from blocksim.api.builder import DiagramBuilder

__all__ = ["BlockHandle", "InPort", "OutPort", "BuildError", "PortNameError"]


class BuildError(CompileError):
    """A mistake made while building a diagram in Python, raised at the call that made it."""


class PortNameError(BuildError, AttributeError):
    """A block has no port of that name (an AttributeError too, so `hasattr` works)."""


def _close(name: str, names: Iterable[str]) -> str:
    """' (did you mean ...?)' for the names closest to `name`, or ''."""
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def _listed(names: Iterable[str]) -> str:
    return ", ".join(names) or "none"


def _block_type(type_name: str, level: "DiagramBuilder | None" = None) -> type[BlockType]:
    """A registered type, or one the diagram being built declares (its components)."""
    block_type = registry.get(type_name) if isinstance(type_name, str) else None
    if block_type is None and level is not None and level.top.model.components:
        from blocksim.physical.declared import diagram_types
        try:
            block_type = diagram_types(level.top.model).get(type_name)
        except CompileError as exc:
            raise BuildError(exc.detail) from None
    if block_type is None:
        raise BuildError(f"unknown block type {shown(type_name)!r}"
                         f"{_close(str(type_name), registry.all_types())} "
                         f"(`blocksim blocks` lists them)")
    return block_type


class _Port:
    """One port of one block in a builder: what `connect` and `>>` take."""

    kind = ""

    def __init__(self, block: "BlockHandle", name: str):
        self.block = block
        self.name = name

    @property
    def ref(self) -> PortRef:
        return PortRef(self.block.id, self.name)

    def __repr__(self) -> str:
        return f"<{self.kind} {self.block.id}.{self.name}>"

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and other.block == self.block
                and other.name == self.name)

    def __hash__(self) -> int:
        return hash((hash(self.block), self.name))


class OutPort(_Port):
    """An output port; `out >> inp` (or `>> (inp1, inp2)`) wires it to inputs."""

    kind = "output"

    def __rshift__(self, other: Any) -> Any:
        return self.block.level._wire_to(self, other)


class InPort(_Port):
    """An input port: the end of exactly one wire."""

    kind = "input"

    def __rshift__(self, other: Any) -> Any:
        raise BuildError(f"{self.block.id}.{self.name} is an input: a wire goes from an "
                         f"output to an input (source.y >> {self.block.id}.{self.name})",
                         block=self.block.path, port=self.name)

    @property
    def source(self) -> OutPort | None:
        """The output wired to this input, or None."""
        for wire in self.block.level.model.wires:
            if wire.dst.block == self.block.id and wire.dst.port == self.name:
                return OutPort(self.block.level[wire.src.block], wire.src.port)
        return None


class PhysicalPort(_Port):
    """A physical port (a component's pin or flange): `a.p >> b.n` (or `connect`) joins
    it to other physical ports of its domain; direction means nothing."""

    kind = "physical"

    def __rshift__(self, other: Any) -> Any:
        return self.block.level._connect_physical(self, other)


class _Ports:
    """The inputs or the outputs of a block as attributes (`g.inputs.u`): unambiguous even
    where a port name is also a handle attribute."""

    def __init__(self, block: "BlockHandle", kind: str):
        self._block, self._kind = block, kind

    def _names(self) -> tuple[str, ...]:
        ins, outs = self._block.port_names()
        return ins if self._kind == "input" else outs

    def __getattr__(self, name: str) -> _Port:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._block.port(name, self._kind)

    def __dir__(self) -> list[str]:
        return list(self._names())

    def __iter__(self) -> Iterator[_Port]:
        return (self._block.port(name, self._kind) for name in self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        return f"<{self._kind}s of {self._block.id}: {_listed(self._names())}>"


class BlockHandle:
    """A block of a builder: its ports as attributes (`g.y`, `s.u1`), checked when read.

    `id`, `type`, `params` (read-only copy; change them with `set`), `inputs`, `outputs`;
    a subsystem's contents are built through `inner`. `a >> b` wires the only output of `a`
    to the only input of `b`.
    """

    def __init__(self, level: "DiagramBuilder", block: Block):
        self.level = level
        self.block = block

    @property
    def id(self) -> str:
        return self.block.id

    @property
    def type(self) -> str:
        return self.block.type

    @property
    def path(self) -> str:
        """The block's path from the top diagram ('plant/gain'), as compile errors name it."""
        return "/".join(self.level._path + (self.block.id,))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.block.params)

    @property
    def inputs(self) -> _Ports:
        return _Ports(self, "input")

    @property
    def outputs(self) -> _Ports:
        return _Ports(self, "output")

    @property
    def inner(self) -> "DiagramBuilder":
        """The builder of a subsystem's own diagram (BuildError for other blocks)."""
        if self.block.subsystem is None:
            raise BuildError(f"a {self.type} block has no inner diagram", block=self.path)
        return type(self.level)._level(self.block.subsystem, self.level._path + (self.id,),
                                     self.level)

    def set(self, **params: Any) -> "BlockHandle":
        """Change parameters, checked as `add` checks them."""
        self.block.params.update(_checked_params(_block_type(self.type, self.level), params,
                                                 self.path))
        return self

    def port_names(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(input names, output names) for the parameters the block has now."""
        return _port_names(self.block, self.level)

    def port(self, name: str, kind: str | None = None) -> _Port:
        """The port `name` ("input"/"output" to say which when a name is both)."""
        ins, outs = self.port_names()
        is_in, is_out = name in ins and kind != "output", name in outs and kind != "input"
        if is_in and is_out:
            raise PortNameError(f"'{name}' is both an input and an output: say which "
                                f"({self.id}.inputs.{name} or {self.id}.outputs.{name})",
                                block=self.path, port=name)
        if is_in or is_out:
            return InPort(self, name) if is_in else OutPort(self, name)
        if kind is None and name in _connector_names(self.block, self.level):
            return PhysicalPort(self, name)
        what = kind or "port"
        guess = ("" if self.level._ports_exact(self.block) else
                 "; some parameters do not resolve yet, so these are the ports of their "
                 "defaults: set the diagram parameters first")
        raise PortNameError(f"{self.type} has no {what} '{shown(name)}'"
                            f"{_close(name, ins + outs)} (inputs: {_listed(ins)}; "
                            f"outputs: {_listed(outs)}{guess})", block=self.path, port=name)

    def __eq__(self, other: object) -> bool:
        """Two handles on the same block are equal."""
        return isinstance(other, BlockHandle) and other.block is self.block

    def __hash__(self) -> int:
        return id(self.block)

    def __getattr__(self, name: str) -> "InPort | OutPort":
        if name.startswith("_") or name in ("level", "block"):
            raise AttributeError(name)
        return self.port(name)

    def __dir__(self) -> list[str]:
        ins, outs = self.port_names()
        return sorted(set(super().__dir__()) | set(ins) | set(outs)
                      | set(_connector_names(self.block, self.level)))

    def __rshift__(self, other: Any) -> Any:
        return self.level._wire_to(self._only("output"), other)

    def _only(self, kind: str) -> _Port:
        ins, outs = self.port_names()
        names = ins if kind == "input" else outs
        if len(names) != 1:
            raise BuildError(f"a {self.type} block has {len(names)} {kind}s "
                             f"({_listed(names)}): name the port ({self.id}.PORT)",
                             block=self.path)
        return self.port(names[0], kind)

    def __repr__(self) -> str:
        ins, outs = self.port_names()
        return (f"<{self.type} '{self.path}': inputs {_listed(ins)}; outputs {_listed(outs)}; "
                f"params {self.block.params}>")


class _Factories:
    """`d.new.Gain(k=2)`: one factory per block type, with the type's parameters as its
    signature (so an interactive session completes type names and parameters)."""

    def __init__(self, level: "DiagramBuilder"):
        self._level = level

    def __getattr__(self, type_name: str) -> Any:
        if type_name.startswith("_"):
            raise AttributeError(type_name)
        try:
            block_type = _block_type(type_name, self._level)
        except BuildError as exc:
            raise AttributeError(str(exc)) from None
        level = self._level

        def factory(**params: Any) -> BlockHandle:
            return level.add(type_name, **params)

        factory.__name__ = factory.__qualname__ = type_name
        factory.__doc__ = block_type.describe()
        factory.__signature__ = _signature(block_type)  # type: ignore[attr-defined]
        return factory

    def __dir__(self) -> list[str]:
        return sorted(name for name in registry.all_types() if name.isidentifier())


def _signature(block_type: type[BlockType]) -> inspect.Signature:
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("id", keyword, default=None, annotation="str | None")]
    for prm in block_type.params:
        default = inspect.Parameter.empty if prm.required else prm.default
        params.append(inspect.Parameter(prm.name, keyword, default=default,
                                        annotation=_annotation(prm)))
    return inspect.Signature(params, return_annotation=BlockHandle)


_KIND_TYPES = {"scalar": "float | str", "vector": "float | list[float] | str",
               "int": "int | str", "bool": "bool | str", "text": "str", "signs": "str"}


def _annotation(prm: Any) -> str:
    """The type a parameter takes, as text (a str is an expression over parameters)."""
    if prm.kind == "choice":
        return f"Literal[{', '.join(map(repr, prm.choices))}]"
    return _KIND_TYPES.get(prm.kind, "Any")


def _checked_params(block_type: type[BlockType], params: Mapping[str, Any], where: str
                    ) -> dict[str, Any]:
    """Parameter values after the checks that need no diagram parameters: known names,
    and values that are not expressions resolved as the compiler would (same messages)."""
    from blocksim.compiler.params import resolve_param
    from blocksim.diagram.format import _plain

    declared = {prm.name: prm for prm in block_type.params}
    out: dict[str, Any] = {}
    for name, value in params.items():
        prm = declared.get(name)
        if prm is None:
            raise BuildError(f"{block_type.name} has no parameter '{shown(name)}'"
                             f"{_close(name, declared)} (parameters: {_listed(declared)})",
                             block=where)
        value = _plain(value)
        if not isinstance(value, str) or prm.kind in ("text", "signs", "choice"):
            try:
                resolve_param(prm, value, {}, where)
            except CompileError as exc:
                raise BuildError(exc.detail, block=where) from None
        out[name] = value
    return out


def _lenient(block: Block, block_type: type[BlockType], names: Mapping[str, Any]
             ) -> tuple[ParamValues, bool]:
    """The block's parameters resolved as far as they go, and whether all of them did."""
    from blocksim.compiler.params import resolve_param

    values: dict[str, Any] = {}
    complete = True
    for prm in block_type.params:
        raw = block.params.get(prm.name, None if prm.required else prm.default)
        try:
            values[prm.name] = resolve_param(prm, raw, names, block.id)
        except Exception:
            complete = False
            values[prm.name] = 0.0 if prm.required else prm.default
    return ParamValues(values, names=names), complete


def _subsystem_ports(inner: Diagram) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Inport and Outport ids of a subsystem's diagram, in the compiler's order."""
    def ordered(kind: str) -> tuple[str, ...]:
        found = []
        for i, blk in enumerate(inner.blocks):
            if blk.type == kind:
                index = blk.params.get("index", 0)
                index = int(index) if isinstance(index, (int, float)) else 0
                found.append((index == 0, index, i, blk.id))
        return tuple(bid for *_, bid in sorted(found))
    return ordered("Inport"), ordered("Outport")


def _connector_names(block: Block, level: "DiagramBuilder") -> tuple[str, ...]:
    """The physical ports of a block: a component's connectors, a subsystem's
    ConnectionPort blocks."""
    block_type = _block_type(block.type, level)
    if getattr(block_type, "has_diagram", False):
        inner = block.subsystem or Diagram()
        return tuple(b.id for b in inner.blocks if b.type == "ConnectionPort")
    if not hasattr(block_type, "connector_ports"):
        return ()
    p, _ = _lenient(block, block_type, level.names())
    try:
        return tuple(c.name for c in block_type().connector_ports(p))
    except Exception:  # parameters that do not work together yet: the declared ones
        return tuple(c.name for c in block_type.connectors)


def _port_names(block: Block, level: "DiagramBuilder") -> tuple[tuple[str, ...], tuple[str, ...]]:
    block_type = _block_type(block.type, level)
    if getattr(block_type, "has_diagram", False):
        ins, outs = _subsystem_ports(block.subsystem or Diagram())
        control = tuple(port.name for port in block_type.inputs)
        return ins + control, outs
    p, _ = _lenient(block, block_type, level.names())
    impl = block_type()
    try:
        ins = tuple(port.name for port in impl.input_ports(p))
        outs = tuple(port.name for port in impl.output_ports(p))
    except Exception:  # parameters that do not work together yet: the declared ports
        ins = tuple(port.name for port in block_type.inputs)
        outs = tuple(port.name for port in block_type.outputs)
    return ins, outs
