"""Runtime parameters: a compiled model with new parameter values, without a new compile.

The code generator records, per block, each code method it called and the parameter slots
its numbers became (`blocksim.expressions.param_slots`). New values are resolved like a compile's
(`--set`-style names, the same safe expressions, checks and messages), and only the blocks
that read a changed name are asked again: their ports, widths, sample time and code must
come out the same with the new values (the code compared line by line, slot names and all),
else the change is structural and `StructuralParameterError` names the parameter and the
block. What they give instead are new slot values, initial states and event parameters,
bound into a copy of the model whose generated functions are rebound to a new globals dict
(microseconds: no text is generated and nothing compiled).
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from blocksim.expressions import language as expressions

from blocksim.expressions import param_slots
from blocksim.blocktypes.blockspec import BlockType, Emit, Param, ParamValues, Sizes
from blocksim.compiler.budget import ParameterBudget
from blocksim.compiler.codegen import Generator, Layout, const_value, reset_lines
from blocksim.compiler.faults import BLOCK_FAULTS, call_block
from blocksim.compiler.flatten import FlatBlock, FlatDiagram, Level
from blocksim.compiler.param_reads import BlockReads, identifiers, mentions
from blocksim.compiler.params import resolve_param
from blocksim.compiler.shared_derived import rebound
from blocksim.errors import CompileError, ExpressionError, StructuralParameterError

if TYPE_CHECKING:
    from blocksim.compiler.compiled import CompiledModel

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# What a block's parameter may be that is never a number in its code.
_STRUCTURAL_KINDS = ("choice", "bool", "signs", "text")


@dataclass(eq=False)
class BlockRecord:
    """What new values of one block are checked and replayed against."""

    index: int  # in the model's blocks; -1 for a block dissolved into wires
    flat: FlatBlock
    emit: Emit | None
    calls: list[param_slots.SlotCall]
    sizes: Sizes | None
    in_widths: dict[str, int | None]
    states: range = range(0)
    discrete: range = range(0)
    zcs: range = range(0)
    _reads: frozenset[str] | None = None
    shape: tuple | None = None  # `_shape` at the compile: every model of it has this one
    _redo: dict[frozenset[str], list[Param]] | None = None
    _replayed: list[tuple[int, param_slots.SlotCall]] | None = None

    @property
    def reads(self) -> frozenset[str]:
        """The names its parameters' text mentions (a superset of those it reads)."""
        if self._reads is None:
            self._reads = frozenset(identifiers(self.flat.raw.values()))
        return self._reads

    @property
    def replayed(self) -> list[tuple[int, param_slots.SlotCall]]:
        """Its recorded code method calls that may depend on parameters, numbered."""
        if self._replayed is None:
            self._replayed = [(k, call) for k, call in enumerate(self.calls)
                              if not _inherited_empty(self.flat.impl, call)]
        return self._replayed

    def redo(self, touched: frozenset[str]) -> list[Param]:
        """The parameters whose text mentions a name in `touched`: the only ones new values
        of those names can change (`param_reads.mentions`), in declaration order."""
        if self._redo is None:
            self._redo = {}
        found = self._redo.get(touched)
        if found is None:
            said = mentions(self.flat.block_type, self.flat.raw)
            found = self._redo[touched] = [prm for prm in self.flat.block_type.params
                                           if not said[prm.name].isdisjoint(touched)]
        return found


@dataclass(eq=False)
class Structure:
    """What every model with the same code shares: the records of its blocks, and what
    its structure key hashes besides the code (`extra`)."""

    source: str
    folder: str | None
    levels: dict[str, Level]
    blocks: list[BlockRecord]
    extra: str
    n_slots: int


@dataclass(frozen=True, eq=False)
class Runtime:
    """A model's structure and the parameter values it was made with; its structure key
    and the engine's artefacts for that key (`shared`, e.g. the numba functions), which
    every model with the same key made by `with_params` shares."""

    structure: Structure
    overrides: Mapping[str, Any]
    names: Mapping[str, Mapping[str, Any]]  # per level: the names its blocks see
    p: tuple[ParamValues, ...]  # per record of `structure.blocks`
    key: str
    shared: dict[str, Any] = field(default_factory=dict)
    # What `with_params` learns of these values as it needs it: per record, what its
    # methods read (`param_reads`); per set of names given, the diagram parameters that
    # must be evaluated again (those names and the ones that read them).
    reads: dict[int, BlockReads] = field(default_factory=dict)
    todo: dict[frozenset[str], frozenset[str]] = field(default_factory=dict)


def record(flat: FlatDiagram, layout: Layout, gen: Generator, sizes: Mapping[str, Sizes],
           overrides: Mapping[str, Any] | None, code: str, extra: str) -> Runtime:
    """The runtime-parameter records of a model just generated."""
    blocks = []
    for emit in gen.emits.values():
        emit.const = _replaying_only  # a replay gives its own; the generator may go
    for i, blk in enumerate(flat.blocks):
        in_widths = {port: len(layout.signal_of[flat.drivers[(blk.path, port)]])
                     for port in blk.inputs}
        blocks.append(BlockRecord(i, blk, gen.emits[blk.path], gen.calls.get(blk.path, []),
                                  sizes[blk.path], in_widths, layout.states[blk.path],
                                  layout.discrete[blk.path], layout.zcs[blk.path]))
    blocks += [BlockRecord(-1, blk, None, [], None, {}) for blk in flat.dissolved]
    structure = Structure(flat.source, flat.folder, flat.levels, blocks, extra, gen.n_slots)
    names = {path: level.names for path, level in flat.levels.items()}
    return Runtime(structure, dict(overrides or {}), names, tuple(r.flat.p for r in blocks),
                   structure_key(code, gen.namespace, extra))


def _replaying_only(value: Any) -> str:
    raise RuntimeError("array constants are registered only while code is generated")


def with_params(model: "CompiledModel", values: Mapping[str, Any]) -> "CompiledModel":
    """`model` with new parameter values (see the module docstring)."""
    from blocksim.compiler import compiled

    rt = model.runtime
    if rt is None:
        raise CompileError("this model was built without parameter records (compile it "
                           "with compile_diagram)", file=model.source)
    st = rt.structure
    overrides = {**rt.overrides, **values}
    names, changed = _resolve_levels(st, rt, overrides, frozenset(values))
    new = _Changes(model)
    params = list(rt.p)
    for k, rec in enumerate(st.blocks):
        touched = rec.reads & changed.get(rec.flat.level, frozenset())
        if not touched:
            continue
        p, differ = _new_params(st, rec, names[rec.flat.level], rt.p[k], touched)
        if p is None:
            continue
        params[k] = p
        if rec.index >= 0:
            reads = rt.reads.get(k) or rt.reads.setdefault(k, BlockReads(rt.p[k]))
            new.block(st, rec, p, touched, differ, reads)
    if not new.any():
        return model
    key, shared = rt.key, rt.shared
    if new.tables:  # new table values: baked into numba's code
        namespace = {**model.functions["deriv"].__globals__, **new.globals}
        key, shared = structure_key(model.code, namespace, st.extra), {}
    result = new.build(Runtime(st, overrides, names, tuple(params), key, shared))
    if any(src.block in new.p for src in model.time_events):  # (rates are structural)
        compiled._check_results(result, result.settings)  # e.g. a pulse period too short
    return result


def structure_key(code: str, namespace: Mapping[str, Any], extra: str) -> str:
    """A digest of what compiled kernels depend on: the code (slot names, not values),
    the array constants' values (baked into the numba module) and `extra`."""
    import hashlib

    digest = hashlib.sha256(code.encode())
    digest.update(extra.encode())
    for name in sorted(n for n in namespace if n[:1] == "C" and n[1:].isdigit()):
        value = namespace[name]
        if isinstance(value, np.ndarray):
            digest.update(f"{name}{value.shape}".encode() + value.tobytes())
        else:
            digest.update(f"{name}:{getattr(value, '__qualname__', type(value).__name__)}"
                          .encode())
    return digest.hexdigest()[:32]


# ----- parameter values ---------------------------------------------------------------------

def _resolve_levels(st: Structure, rt: Runtime, overrides: Mapping[str, Any],
                    given: frozenset[str]
                    ) -> tuple[dict[str, Mapping[str, Any]], dict[str, frozenset[str]]]:
    """Each level's names with the new overrides (`given`: the names this call sets), and
    which of them changed."""
    names: dict[str, Mapping[str, Any]] = {}
    changed: dict[str, frozenset[str]] = {}
    budget = ParameterBudget(st.source)
    for path, level in st.levels.items():
        parent = names.get(level.parent, _EMPTY) if level.parent is not None else _EMPTY
        parent_changed = changed.get(level.parent, frozenset()) if level.parent is not None \
            else frozenset()
        if path and (not level.parameters or not parent_changed):
            names[path] = parent if not level.parameters else rt.names[path]
            changed[path] = parent_changed
            continue
        where = "subsystem parameter '{}'" if path else "diagram parameter '{}'"
        old = rt.names.get(path, _EMPTY)

        def charge(name: str, value: Any) -> None:
            budget.charge(value, where.format(name), block=path or None)

        if not path and given <= level.parameters.keys():  # only what the new values reach
            own, fresh = _changed_only(st, rt, level, overrides, given, old, charge)
            names[path] = MappingProxyType(own)
            changed[path] = frozenset(n for n in fresh if n not in old
                                      or not _same(own[n], old[n]))
            continue
        else:
            try:
                own = expressions.resolve_parameters(
                    level.parameters, overrides if not path else None, scope=parent,
                    on_value=charge)
            except ExpressionError as exc:
                raise CompileError(str(exc), block=path or None, file=st.source) from None
        scope = MappingProxyType({**parent, **own})
        changed[path] = frozenset(n for n, v in scope.items()
                                  if n not in old or not _same(v, old[n]))
        names[path] = scope
    return names, changed


def _changed_only(st: Structure, rt: Runtime, level: Level, overrides: Mapping[str, Any],
                  given: frozenset[str], old: Mapping[str, Any], charge
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The diagram's parameters with those `given` and the ones that read them evaluated
    again, the others as they were (and those evaluated again); an error is reported by
    a full resolution, so that its message is the compile's."""
    current = {name: overrides.get(name, raw) for name, raw in level.parameters.items()}
    try:
        todo = rt.todo.get(given)
        if todo is None:
            todo = rt.todo[given] = _readers_closure(current, given)
        if todo == given and all(type(current[k]) is float for k in given):
            fresh = {k: current[k] for k in given}  # numbers: what resolution gives them
            for name, value in fresh.items():
                charge(name, value)
        else:
            scope = MappingProxyType({k: v for k, v in old.items() if k not in todo})
            fresh = expressions.resolve_parameters(
                {k: current[k] for k in current if k in todo}, scope=scope, on_value=charge)
    except ExpressionError:
        try:
            expressions.resolve_parameters(level.parameters, overrides, on_value=charge)
        except ExpressionError as exc:
            raise CompileError(str(exc), file=st.source) from None
        raise  # pragma: no cover - the full resolution finds every error the part does
    return {**old, **fresh}, fresh


def _readers_closure(current: Mapping[str, Any], given: frozenset[str]) -> frozenset[str]:
    """The names `given` and every parameter that reads one of them, however indirectly
    (the same for every value of `given`: their own expressions read, are not read)."""
    readers: dict[str, set[str]] = {}
    for name, raw in current.items():
        for dep in _reads_of(raw):
            readers.setdefault(dep, set()).add(name)
    todo, stack = set(given), list(given)
    while stack:
        for reader in readers.get(stack.pop(), ()):
            if reader not in todo:
                todo.add(reader)
                stack.append(reader)
    return frozenset(todo)


def _reads_of(raw: Any) -> frozenset[str]:
    """The names a parameter's expression reads (none for a number)."""
    if isinstance(raw, str):
        return _expression_names(raw)
    if isinstance(raw, (list, tuple)):
        return frozenset(identifiers(raw))
    return frozenset()


@functools.lru_cache(maxsize=4096)
def _expression_names(text: str) -> frozenset[str]:
    try:
        return frozenset(expressions.names_in(text, constants=True))
    except ExpressionError:
        return frozenset(_IDENTIFIER.findall(text))


def _new_params(st: Structure, rec: BlockRecord, names: Mapping[str, Any], old: ParamValues,
                touched: frozenset[str]) -> tuple[ParamValues | None, frozenset[str]]:
    """A block's parameters resolved with new names, and those whose values differ (None:
    a dissolved block's did not change; a block's own are replayed even so, as a formula
    reads names through its scope); StructuralParameterError for a change the model cannot
    take. Only the parameters whose text mentions a `touched` name are resolved again (as
    `params_for` would, with its checks and messages): the others cannot change."""
    blk = rec.flat
    if not blk.declared:  # a conditional subsystem's gate or hold
        raise _structural(st, touched, blk.path, "its conditional subsystem's settings are "
                          "compiled in", code_only=True)
    values, differ = old.as_dict(), []
    try:
        for prm in rec.redo(touched):
            value = resolve_param(prm, blk.raw.get(prm.name, prm.default), names, blk.path)
            values[prm.name] = value
            if not _same(value, old[prm.name]):
                differ.append(prm.name)
    except CompileError as exc:
        raise CompileError(exc.detail, block=exc.block or blk.path, file=st.source) from None
    p = ParamValues(values, names=names, folder=st.folder)
    if not differ and rec.index < 0:
        return None, frozenset()
    if rec.index < 0:
        raise _structural(st, touched, blk.path, f"parameter '{differ[0]}' of a "
                          f"{blk.block_type.name} is compiled in", code_only=True)
    for prm in blk.block_type.params:
        if prm.kind in _STRUCTURAL_KINDS and prm.name in differ:
            raise _structural(st, touched, blk.path, f"its parameter '{prm.name}' is a "
                              f"{prm.kind}, compiled in")
    return p, frozenset(differ)


def _same(a: Any, b: Any) -> bool:
    """Bit for bit the same value (0.0 and -0.0 differ in code; NaN equals NaN)."""
    if isinstance(a, float) and isinstance(b, float):
        return a.hex() == b.hex()
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    return type(a) is type(b) and a == b


def _structural(st: Structure, names: frozenset[str], block: str, why: str,
                code_only: bool = False) -> StructuralParameterError:
    shown = ", ".join(f"'{n}'" for n in sorted(names))
    what = "parameter" if len(names) == 1 else "parameters"
    return StructuralParameterError(
        f"a new value of {what} {shown} changes the model's structure ({why}); compile "
        f"the diagram again with it", block=block, file=st.source, code_only=code_only)


# ----- the new model ------------------------------------------------------------------------

class _Changes:
    """New slot values, constants, initial values and event parameters of one call."""

    def __init__(self, model: "CompiledModel"):
        self.model = model
        self.globals: dict[str, Any] = {}
        self.x0: np.ndarray | None = None
        self.m0: np.ndarray | None = None
        self.zdir: np.ndarray | None = None
        self.tol: np.ndarray | None = None
        self.p: dict[int, ParamValues] = {}
        self.tables = False  # an array constant (a table) has new values

    def any(self) -> bool:
        return bool(self.p)

    def block(self, st: Structure, rec: BlockRecord, p: ParamValues, touched: frozenset[str],
              differ: frozenset[str], reads: BlockReads) -> None:
        """Check and replay what of a block the parameters that `differ` can change (its
        check, shape, code and initial values; the others read none of them)."""
        blk, impl = rec.flat, rec.flat.impl
        try:
            if reads.stale("check", differ, call_block, impl.check):
                problem = call_block(impl.check, p)
                if problem:
                    raise CompileError(problem)
            shape = {i: part(rec, p) for i, part in enumerate(_SHAPE)
                     if reads.stale(("shape", i), differ, part, rec)}
        except CompileError as exc:
            raise CompileError(exc.detail, block=blk.path, file=st.source) from None
        if shape and rec.shape is None:
            rec.shape = _shape(rec, reads.values)
        for i, part in shape.items():
            if part != rec.shape[i]:
                raise _structural(st, touched, blk.path, f"{_SHAPE_NAMES[i]} change")
        for k, call in rec.replayed:
            if reads.stale(k, differ, _generate, rec, call):
                self._replay(st, rec, call, p, touched)
        if reads.stale("initial", differ, _initial_values, rec):
            self._initial(st, rec, p, touched)
        self.p[rec.index] = p

    def _replay(self, st: Structure, rec: BlockRecord, call: param_slots.SlotCall,
                p: ParamValues, touched: frozenset[str]) -> None:
        recorder = param_slots.Recorder(call.first, call.consts)
        try:
            result = _generate(rec, call, p, recorder)
        except BLOCK_FAULTS as exc:
            raise CompileError(f"cannot generate code: {exc}", block=rec.flat.path,
                               file=st.source) from None
        if (result != call.result or len(recorder.values) != call.count
                or len(recorder.const_values) != len(call.consts)):
            raise _structural(st, touched, rec.flat.path, f"its code ({call.method}) changes",
                              code_only=True)
        namespace = self.model.functions["deriv"].__globals__
        for k, value in enumerate(recorder.values):
            self.globals[param_slots.slot_name(call.first + k)] = value
        for name, value in recorder.const_values.items():
            value, before = const_value(value), namespace[name]
            if isinstance(before, np.ndarray):
                if not isinstance(value, np.ndarray) or value.shape != before.shape:
                    raise _structural(st, touched, rec.flat.path, "a table's size changes")
                if _same(value, before):
                    continue
                self.tables = True
            self.globals[name] = value  # (a function: the block's, for the new values)

    def _initial(self, st: Structure, rec: BlockRecord, p: ParamValues,
                 touched: frozenset[str]) -> None:
        from blocksim.compiler.compiled import _tolerances

        model, path = self.model, rec.flat.path
        nx, nm, nz = len(rec.states), len(rec.discrete), len(rec.zcs)
        try:
            x0, m0, zdir, tol = _initial_values(rec, p)
        except CompileError as exc:
            raise CompileError(exc.detail, block=path, file=st.source) from None
        if nx:
            self.x0 = _put(self.x0, model.x0, rec.states, x0)
        if nm:
            self.m0 = _put(self.m0, model.m0, rec.discrete, m0)
        if nz:
            self.zdir = _put(self.zdir, model.zc_direction, rec.zcs, zdir)
        if tol is not None and model.state_tolerance is None:
            raise _structural(st, touched, path, "it declares state tolerances", code_only=True)
        if model.state_tolerance is not None and nx:  # none declared: the run's atol
            pairs = (_tolerances(tol, nx, path, st.source) if tol is not None
                     else [(math.nan, 1.0)] * nx)
            if self.tol is None:
                self.tol = np.array(model.state_tolerance, dtype=float)
            self.tol[rec.states.start:rec.states.stop] = pairs

    def build(self, runtime: Runtime) -> "CompiledModel":
        model = self.model
        functions, derived = rebound(model, self.globals, runtime.shared)
        changes: dict[str, Any] = dict(functions=functions, derived=derived, runtime=runtime)
        for name, value in (("x0", self.x0), ("m0", self.m0), ("zc_direction", self.zdir)):
            if value is not None:
                value.flags.writeable = False
                changes[name] = value
        if self.tol is not None:
            changes["state_tolerance"] = self.tol
        if self.p:
            changes["time_events"] = tuple(
                replace(src, p=self.p.get(src.block, src.p)) for src in model.time_events)
            changes["after_run"] = tuple(
                replace(a, p=self.p.get(a.block, a.p)) for a in model.after_run)
            changes["run_sessions"] = tuple(
                replace(a, p=self.p.get(a.block, a.p)) for a in model.run_sessions)
        new = object.__new__(type(model))  # (dataclasses.replace would check every field
        new.__dict__.update(vars(model), **changes)  # again; copy.copy is 3x slower)
        return new


def _generate(rec: BlockRecord, call: param_slots.SlotCall, p: ParamValues,
              recorder: param_slots.Recorder | None = None) -> Any:
    """What one recorded code method returns with the values `p` (its numbers named by
    `recorder`, a throwaway one if None)."""
    impl = rec.flat.impl
    recorder = recorder or param_slots.Recorder(call.first, call.consts)
    with recorder:
        if call.method == "resets":
            x0 = list(impl.initial_states(p, len(rec.states)))
            m0 = list(impl.initial_discrete(p, len(rec.discrete)))
            return reset_lines(rec.states, rec.discrete, x0, m0)
        assert rec.emit is not None
        emit = object.__new__(Emit)  # a copy: its lists are read, never changed
        emit.__dict__.update(rec.emit.__dict__)
        emit.p, emit.const = p, recorder.const
        return getattr(impl, call.method)(emit)


def _initial_values(rec: BlockRecord, p: ParamValues) -> tuple:
    """A block's initial states, initial discrete values, crossing directions and state
    tolerances (None if it declares none) with the values `p`."""
    from blocksim.compiler.compiled import _values

    impl = rec.flat.impl
    nx, nm, nz = len(rec.states), len(rec.discrete), len(rec.zcs)
    return (_values(call_block(impl.initial_states, p, nx), nx),
            _values(call_block(impl.initial_discrete, p, nm), nm),
            _values(call_block(impl.zc_directions, p, nz), nz),
            call_block(impl.state_tolerances, p, nx) if nx else None)


def _inherited_empty(impl: Any, call: param_slots.SlotCall) -> bool:
    """A call of the base class's code method that gave nothing: it never depends on the
    parameters."""
    return (not call.result and getattr(type(impl), call.method, None)
            is getattr(BlockType, call.method, None))


def _ports(rec: BlockRecord, p: ParamValues) -> tuple:
    impl = rec.flat.impl
    return ([port.name for port in call_block(impl.input_ports, p)],
            [port.name for port in call_block(impl.output_ports, p)])


def _feedthrough(rec: BlockRecord, p: ParamValues) -> dict:
    return {k: tuple(v) for k, v in call_block(rec.flat.impl.feedthrough, p).items()}


def _rate(rec: BlockRecord, p: ParamValues) -> tuple:
    impl = rec.flat.impl
    try:
        rate = impl.sample_time(p)
    except ValueError as exc:
        raise CompileError(f"parameter 'sample_time': {exc}") from None
    return call_block(impl.is_discrete, p), rate


def _sizes(rec: BlockRecord, p: ParamValues) -> Sizes:
    return call_block(rec.flat.impl.sizes, p, rec.in_widths)


# What must not change (`_shape`), each part asked again only if it reads a changed value.
_SHAPE = (_ports, _feedthrough, _rate, _sizes)
_SHAPE_NAMES = ("its ports", "which inputs its outputs read", "its sample time",
                "its widths or slots")


def _shape(rec: BlockRecord, p: ParamValues) -> tuple:
    """What must not change: ports, feedthrough, sample time, widths and slot counts."""
    return tuple(part(rec, p) for part in _SHAPE)


def _put(target: np.ndarray | None, base: np.ndarray, where: range, values: list[float]
         ) -> np.ndarray:
    if target is None:
        target = np.array(base, dtype=float)
    target[where.start:where.stop] = values
    return target
