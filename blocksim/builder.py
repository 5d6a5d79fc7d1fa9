"""Building diagrams in Python: a thin layer over the plain model (`blocksim.model`).

    d = blocksim.DiagramBuilder(stop=10)
    g = d.add("Gain", k=2, id="g")
    d.add("Step", id="s").y >> g.u
    g.y >> d.add("Scope", id="out").u
    d.save("gain.json"); results = d.simulate()

Mistakes are caught where they are made, not only when compiling: an unknown block type or
parameter, a port the block does not have, an input wired twice, each named with the block,
the port and the closest names. Ports and parameters are attributes and signatures built from
the block declarations (`registry`), so an interactive session completes them.
"""
from __future__ import annotations

import difflib
import inspect
import logging
import os
import re
from typing import Any, Iterable, Iterator, Mapping

from blocksim import registry
from blocksim.blockspec import BlockType, ParamValues
from blocksim.errors import CompileError, shown
from blocksim.model import Block, Diagram, PortRef, SimulationSettings, Wire

__all__ = ["DiagramBuilder", "BlockHandle", "InPort", "OutPort", "BuildError",
           "PortNameError"]

log = logging.getLogger(__name__)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SETTINGS = tuple(SimulationSettings.__dataclass_fields__)


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


def _block_type(type_name: str) -> type[BlockType]:
    block_type = registry.get(type_name) if isinstance(type_name, str) else None
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
        return DiagramBuilder._level(self.block.subsystem, self.level._path + (self.id,),
                                     self.level)

    def set(self, **params: Any) -> "BlockHandle":
        """Change parameters, checked as `add` checks them."""
        self.block.params.update(_checked_params(_block_type(self.type), params, self.path))
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

    def __getattr__(self, name: str) -> _Port:
        if name.startswith("_") or name in ("level", "block"):
            raise AttributeError(name)
        return self.port(name)

    def __dir__(self) -> list[str]:
        ins, outs = self.port_names()
        return sorted(set(super().__dir__()) | set(ins) | set(outs))

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
            block_type = _block_type(type_name)
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
    from blocksim.format import _plain

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


def _port_names(block: Block, level: "DiagramBuilder") -> tuple[tuple[str, ...], tuple[str, ...]]:
    block_type = _block_type(block.type)
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


class DiagramBuilder:
    """A diagram built in Python; `model` is the plain `blocksim.model.Diagram` it edits.

    `DiagramBuilder(stop=10, rtol=1e-8, parameters={"g": 9.81})`: keywords are simulation
    settings (`SimulationSettings` fields). `parameters` is the diagram's own dict of
    parameters (names usable in parameter expressions), `simulation` its settings.
    """

    def __init__(self, description: str = "", parameters: Mapping[str, Any] | None = None,
                 **simulation: Any):
        self.model = Diagram(description=description, parameters=dict(parameters or {}))
        self._path: tuple[str, ...] = ()
        self._parent: DiagramBuilder | None = None
        self.set_simulation(**simulation)

    @classmethod
    def _level(cls, model: Diagram, path: tuple[str, ...], parent: "DiagramBuilder"
               ) -> "DiagramBuilder":
        level = cls.__new__(cls)
        level.model, level._path, level._parent = model, path, parent
        return level

    @classmethod
    def wrap(cls, diagram: Diagram) -> "DiagramBuilder":
        """A builder editing an existing model (a loaded file, say) in place."""
        level = cls.__new__(cls)
        level.model, level._path, level._parent = diagram, (), None
        return level

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "DiagramBuilder":
        """A builder on a diagram file (DiagramFileError names the file and block)."""
        from blocksim.format import load_diagram

        return cls.wrap(load_diagram(path))

    # ----- settings and parameters -----
    @property
    def top(self) -> "DiagramBuilder":
        """The builder of the whole diagram (self, unless this is a subsystem's level)."""
        return self if self._parent is None else self._parent.top

    @property
    def parameters(self) -> dict[str, Any]:
        """This level's parameters (live: assign or update them)."""
        return self.model.parameters

    @property
    def simulation(self) -> SimulationSettings:
        return self.top.model.simulation

    @property
    def description(self) -> str:
        return self.top.model.description

    @description.setter
    def description(self, text: str) -> None:
        self.top.model.description = text

    def set_simulation(self, **settings: Any) -> "DiagramBuilder":
        """Change simulation settings (stop, solver, rtol, atol, output_interval, ...)."""
        sim = self.simulation
        for name, value in settings.items():
            if name not in _SETTINGS:
                raise BuildError(f"unknown simulation setting '{shown(name)}'"
                                 f"{_close(name, _SETTINGS)} (settings: {_listed(_SETTINGS)})")
            setattr(sim, name, value)
        return self

    def names(self) -> dict[str, Any]:
        """The parameter values this level sees, resolved as far as they go."""
        from blocksim import expressions

        outer = self._parent.names() if self._parent is not None else {}
        if not self.model.parameters:
            return outer
        try:
            return {**outer, **expressions.resolve_parameters({**outer, **self.parameters})}
        except Exception:  # a parameter that does not resolve yet: validate() says which
            return outer

    # ----- blocks -----
    @property
    def new(self) -> _Factories:
        """Block factories by type name with the type's parameters as keywords:
        `d.new.Gain(k=2, id="g")` is `d.add("Gain", k=2, id="g")`."""
        return _Factories(self)

    def add(self, type_name: str, /, id: str | None = None, **params: Any) -> BlockHandle:
        """Add a block of a registered type; `id` defaults to the type name and a counter
        (gain1, gain2, ...). Subsystem types get an empty inner diagram (see `inner`)."""
        block_type = _block_type(type_name)
        if id is None:
            id = self._fresh_id(type_name.lower())
        self._check_id(id)
        params = _checked_params(block_type, params, "/".join(self._path + (id,)))
        missing = [prm.name for prm in block_type.params if prm.required and prm.name not in params]
        if missing:
            raise BuildError(f"missing parameter '{missing[0]}' of {type_name}",
                             block="/".join(self._path + (id,)))
        inner = Diagram() if getattr(block_type, "has_diagram", False) else None
        block = Block(id=id, type=type_name, params=params, subsystem=inner)
        self.model.blocks.append(block)
        log.debug("added %s %s", type_name, id)
        return BlockHandle(self, block)

    def subsystem(self, id: str | None = None, type_name: str = "Subsystem",
                  parameters: Mapping[str, Any] | None = None, **params: Any) -> BlockHandle:
        """Add a subsystem (or a TriggeredSubsystem, EnabledSubsystem); build its contents
        with `.inner` (its Inport/Outport blocks' ids are its ports)."""
        if not getattr(_block_type(type_name), "has_diagram", False):
            raise BuildError(f"{type_name} is not a subsystem type")
        handle = self.add(type_name, id=id, **params)
        handle.block.subsystem.parameters.update(parameters or {})
        return handle

    def __getitem__(self, block_id: str) -> BlockHandle:
        """The block of this id at this level (BuildError naming close ids otherwise)."""
        for block in self.model.blocks:
            if block.id == block_id:
                return BlockHandle(self, block)
        ids = [b.id for b in self.model.blocks]
        raise BuildError(f"no block '{shown(block_id)}'{_close(block_id, ids)}"
                         + (f" in subsystem '{'/'.join(self._path)}'" if self._path else ""))

    def __iter__(self) -> Iterator[BlockHandle]:
        return (BlockHandle(self, block) for block in self.model.blocks)

    def __len__(self) -> int:
        return len(self.model.blocks)

    def __contains__(self, block_id: object) -> bool:
        return any(block.id == block_id for block in self.model.blocks)

    def _fresh_id(self, stem: str) -> str:
        taken = {b.id for b in self.model.blocks}
        stem = re.sub(r"[^A-Za-z0-9_]", "_", stem) or "block"
        n = 1
        while f"{stem}{n}" in taken:
            n += 1
        return f"{stem}{n}"

    def _check_id(self, block_id: Any) -> None:
        if not isinstance(block_id, str) or not _IDENTIFIER.fullmatch(block_id):
            raise BuildError(f"{shown(block_id)!r} is not a valid block id (letters, digits "
                             f"and _, not starting with a digit)")
        if block_id in self:
            raise BuildError("there is already a block of this id at this level",
                             block="/".join(self._path + (block_id,)))

    def _ports_exact(self, block: Block) -> bool:
        """Whether the port names of `block` are known for sure (its parameters resolve)."""
        block_type = _block_type(block.type)
        if getattr(block_type, "has_diagram", False):
            return True
        return _lenient(block, block_type, self.names())[1]

    # ----- wires -----
    def connect(self, src: OutPort | BlockHandle, *dsts: InPort | BlockHandle) -> list[Wire]:
        """Wire an output (or a block's only output) to one or more inputs."""
        return [self._wire(self._end(src, "output"), self._end(dst, "input")) for dst in dsts]

    def _wire_to(self, src: OutPort, other: Any) -> Any:
        """`src >> other`: wire to an input, a block's only input, or a tuple of them; the
        result is the block wired to (so `a >> b >> c` chains)."""
        if isinstance(other, (tuple, list)):
            return tuple(self._wire_to(src, item) for item in other)
        dst = self._end(other, "input")
        self._wire(src, dst)
        return dst.block

    def _end(self, end: Any, kind: str) -> _Port:
        if isinstance(end, BlockHandle):
            end = end._only(kind)
        if not isinstance(end, _Port):
            raise BuildError(f"a wire {'starts' if kind == 'output' else 'ends'} at a port "
                             f"(block.{'y' if kind == 'output' else 'u'}), not {end!r}")
        if end.kind != kind:
            raise BuildError(f"{end.block.id}.{end.name} is an {end.kind}: a wire goes from "
                             f"an output to an input", block=end.block.path, port=end.name)
        if end.block.level.model is not self.model:
            raise BuildError(f"{end.block.path}.{end.name} is in another diagram level: wire "
                             f"across levels through the subsystem's Inport/Outport blocks",
                             block=end.block.path, port=end.name)
        if not any(b is end.block.block for b in self.model.blocks):
            raise BuildError("the block is no longer in the diagram", block=end.block.path)
        return end

    def _wire(self, src: _Port, dst: _Port) -> Wire:
        for wire in self.model.wires:
            if wire.dst == dst.ref:
                raise BuildError(f"input already wired from {wire.src} (an input has one "
                                 f"source; disconnect it first)", block=dst.block.path,
                                 port=dst.name)
        wire = Wire(src.ref, dst.ref)
        self.model.wires.append(wire)
        return wire

    def disconnect(self, dst: InPort) -> None:
        """Remove the wire into an input."""
        dst = self._end(dst, "input")
        self.model.wires[:] = [w for w in self.model.wires if w.dst != dst.ref]

    def remove(self, block: BlockHandle | str) -> None:
        """Remove a block and its wires."""
        block_id = block if isinstance(block, str) else block.id
        self[block_id]  # noqa: B018 (BuildError if absent)
        self.model.blocks[:] = [b for b in self.model.blocks if b.id != block_id]
        self.model.wires[:] = [w for w in self.model.wires
                               if w.src.block != block_id and w.dst.block != block_id]

    # ----- checking, files, running -----
    def to_dict(self) -> dict[str, Any]:
        """The diagram as the JSON document a file holds (checked against the schema)."""
        from blocksim.format import diagram_from_dict, diagram_to_dict

        data = diagram_to_dict(self.top.model)
        diagram_from_dict(data, source=self._source())  # DiagramFileError as for a file
        return data

    def validate(self) -> None:
        """Check the whole diagram as `blocksim validate` does: DiagramFileError or
        CompileError with the same messages a file gets."""
        from blocksim.compiler import compile_diagram

        self.to_dict()
        compile_diagram(self.top.model, None, self.simulation)

    def save(self, path: str | os.PathLike[str], layout: bool = True) -> None:
        """Write the diagram file (atomically); with `layout` blocks without a position are
        laid out as the editor would, so the file opens as it will look."""
        from blocksim.format import save_diagram

        self.to_dict()
        if layout:
            from blocksim.gui.autolayout import layout_diagram  # Qt-free

            layout_diagram(self.top.model)
        save_diagram(self.top.model, path)

    def compile(self, params: Mapping[str, Any] | None = None, **settings: Any) -> Any:
        """`blocksim.compile` of the whole diagram."""
        from blocksim import api

        return api.compile(self.top.model, params, **settings)

    def simulate(self, **options: Any) -> Any:
        """`blocksim.simulate` of the whole diagram (same keywords: stop_time, params, ...)."""
        from blocksim import api

        return api.simulate(self.top.model, **options)

    def _source(self) -> str:
        return self.top.model.source

    # ----- display -----
    def summary(self) -> str:
        """A text picture of this level: blocks with parameters, then wires."""
        from blocksim.notebook import summary

        return summary(self)

    def __repr__(self) -> str:
        where = f" '{'/'.join(self._path)}'" if self._path else ""
        return (f"<DiagramBuilder{where}: {len(self.model.blocks)} blocks, "
                f"{len(self.model.wires)} wires>")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else self.summary())

    def _repr_svg_(self) -> str | None:
        from blocksim.notebook import svg

        return svg(self)
