"""Building diagrams in Python: a thin layer over the plain model (`blocksim.diagram.model`).

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

import inspect
import logging
import os
import re
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from blocksim.api import facade as api
from blocksim.errors import CompileError, shown
from blocksim.api.handles import (PhysicalPort, BlockHandle, BuildError, InPort, OutPort, PortNameError, _close,
                              _Factories, _Port, _block_type, _checked_params, _lenient,
                              _listed)
from blocksim.diagram.model import Block, Diagram, SimulationSettings, Wire

if TYPE_CHECKING:
    from blocksim.compiler import CompiledModel
    from blocksim.engine import Results

__all__ = ["DiagramBuilder", "BlockHandle", "InPort", "OutPort", "BuildError",
           "PortNameError"]

log = logging.getLogger(__name__)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SETTINGS = tuple(SimulationSettings.__dataclass_fields__)


def _method_signature(function: Any) -> inspect.Signature:
    """The signature of `function(diagram, ...)` as a method's (self, ...): interactive
    sessions then complete simulate's keywords on the builder too."""
    signature = inspect.signature(function)
    params = list(signature.parameters.values())
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return signature.replace(parameters=[self_param] + params[1:])


class DiagramBuilder:
    """A diagram built in Python; `model` is the plain `blocksim.diagram.model.Diagram` it edits.

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
    def load(cls, path: str | os.PathLike[str], *, trust: Any = ()) -> "DiagramBuilder":
        """A builder on a diagram file (DiagramFileError names the file and block); `trust`
        as for `blocksim.load` (the Python files of user blocks the diagram names)."""
        from blocksim.api.facade import load

        return cls.wrap(load(path, trust=trust))

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
        from blocksim.expressions import language as expressions

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
        block_type = _block_type(type_name, self)
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

    def component(self, declaration: Mapping[str, Any]) -> str:
        """Declare a physical component type in the diagram itself (saved in its file; the
        equations in the safe expression language, docs/physical.md); returns its name,
        for `add`. BuildError if the declaration cannot work."""
        from blocksim.physical.declared import component_type

        try:
            cls = component_type(dict(declaration), self.top.model.source)
        except CompileError as exc:
            raise BuildError(exc.detail) from None
        components = self.top.model.components
        components[:] = [c for c in components if c.get("name") != cls.name]
        components.append(dict(declaration))
        return cls.name

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
        block_type = _block_type(block.type, self)
        if getattr(block_type, "has_diagram", False):
            return True
        return _lenient(block, block_type, self.names())[1]

    # ----- wires -----
    def connect(self, src: OutPort | BlockHandle | PhysicalPort,
                *dsts: InPort | BlockHandle | PhysicalPort) -> list[Wire]:
        """Wire an output (or a block's only output) to one or more inputs; or connect a
        physical port to other physical ports of its domain."""
        if isinstance(src, PhysicalPort):
            return [self._connect_physical(src, dst, chain=False) for dst in dsts]
        return [self._wire(self._end(src, "output"), self._end(dst, "input")) for dst in dsts]

    def _connect_physical(self, a: PhysicalPort, b: Any, chain: bool = True) -> Any:
        """`a >> b` between physical ports: a connection (the result is b's block)."""
        if isinstance(b, (tuple, list)):
            return tuple(self._connect_physical(a, item, chain) for item in b)
        for end in (a, b):
            if not isinstance(end, PhysicalPort):
                raise BuildError(f"a physical port connects only to physical ports, not "
                                 f"{end!r} (use a sensor or a source to reach signals)")
            self._end(end, "physical")
        if any((w.src, w.dst) in ((a.ref, b.ref), (b.ref, a.ref)) for w in self.model.wires):
            raise BuildError(f"{a.ref} and {b.ref} are already connected",
                             block=a.block.path, port=a.name)
        wire = Wire(a.ref, b.ref)
        self.model.wires.append(wire)
        return b.block if chain else wire

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
            if "physical" in (kind, end.kind):
                raise BuildError(f"{end.block.id}.{end.name} is {'a' if end.kind == 'physical' else 'an'} "
                                 f"{end.kind} port: a connection joins physical ports, a wire "
                                 f"goes from an output to an input", block=end.block.path,
                                 port=end.name)
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
        from blocksim.diagram.format import diagram_from_dict, diagram_to_dict

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
        from blocksim.diagram.format import save_diagram

        self.to_dict()
        if layout:
            from blocksim.gui.layout.autolayout import layout_diagram  # Qt-free

            layout_diagram(self.top.model)
        save_diagram(self.top.model, path)

    def compile(self, params: Mapping[str, Any] | None = None, **settings: Any
                ) -> "CompiledModel":
        """`blocksim.compile` of the whole diagram."""
        return api.compile(self.top.model, params, **settings)

    def simulate(self, **options: Any) -> "Results":
        """`blocksim.simulate` of the whole diagram (same keywords: stop_time, params, ...)."""
        return api.simulate(self.top.model, **options)

    simulate.__signature__ = _method_signature(api.simulate)  # type: ignore[attr-defined]

    def _source(self) -> str:
        return self.top.model.source

    # ----- display -----
    def summary(self) -> str:
        """A text picture of this level: blocks with parameters, then wires."""
        from blocksim.api.notebook import summary

        return summary(repr(self), self.model, top=self._parent is None)

    def __repr__(self) -> str:
        where = f" '{'/'.join(self._path)}'" if self._path else ""
        return (f"<DiagramBuilder{where}: {len(self.model.blocks)} blocks, "
                f"{len(self.model.wires)} wires>")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else self.summary())

    def _repr_svg_(self) -> str | None:
        from blocksim.api.notebook import svg

        return svg(self.top.model, self._path)
