"""The compiled model: what the engine needs, frozen, with no mutable simulation state.

It holds the generated functions, initial values and the maps from flat slots back to
block ids (so every engine error can name the block at fault). All values that change
during a run live in the engine.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

from blocksim.blocktypes import history_ring
from blocksim.blocktypes.blockspec import BlockType, ParamValues
from blocksim.compiler import budget, buses, codegen, conditional, graph, runtime
from blocksim.compiler.faults import call_block
from blocksim.compiler.flatten import flatten
from blocksim.compiler.rates import Clock, Rate, delay_grid
from blocksim.compiler.sampling import resolve_sampling
from blocksim.compiler.settings import check_settings
from blocksim.physical.declare import Component
from blocksim.errors import CompileError
from blocksim.files import write_rule
from blocksim.files.write_rule import RunFiles
from blocksim.gc_pause import without_gc
from blocksim.diagram.model import Diagram, SimulationSettings
from blocksim.blocktypes.sampletime import SampleTime

log = logging.getLogger(__name__)

GENERATED_FILENAME = "<blocksim generated>"


@dataclass(frozen=True)
class LoggedSignal:
    """A signal recorded under a logging block's id."""

    name: str
    indices: tuple[int, ...]

    @property
    def columns(self) -> list[str]:
        if len(self.indices) == 1:
            return [self.name]
        return [f"{self.name}[{k}]" for k in range(len(self.indices))]


@dataclass(frozen=True)
class TimeEventSource:
    block: int
    impl: BlockType
    p: ParamValues

    def next_after(self, t: float) -> float:
        return float(self.impl.next_time_event(self.p, t))


@dataclass(frozen=True)
class AfterRun:
    """A logging block with work to do once a run has ended (`BlockType.after_run`)."""

    block: int
    impl: BlockType
    p: ParamValues


@dataclass(frozen=True)
class RunSession:
    """A block that holds something outside the engine's arrays for the length of a run
    (an FMU instance, `BlockType.has_run_session`): its slots in x and m."""

    block: int
    impl: BlockType
    p: ParamValues
    states: range
    discrete: range


@dataclass(frozen=True)
class HistoryChannel:
    """A block's ring of input history in m (`blockspec.History`, `history_ring`): where
    it starts, its records, the width and signals of the input it keeps."""

    block: int
    base: int
    capacity: int
    width: int
    span: float
    delay: float
    signals: tuple[int, ...]
    # Whether the block's output reaches its own input (a delay-differential equation):
    # only then is its breakpoint a discontinuity of its input, to be scheduled again.
    feedback: bool = True
    # The other blocks with fixed delays whose outputs reach this block's input: their
    # breakpoints are discontinuities of the input.
    upstream: tuple[int, ...] = ()


@dataclass(frozen=True)
class CompiledModel:
    """A diagram ready to simulate: generated functions plus slot maps."""

    source: str
    settings: SimulationSettings
    block_ids: tuple[str, ...]
    block_types: tuple[str, ...]
    x0: np.ndarray
    m0: np.ndarray
    state_owner: tuple[int, ...]
    zc_owner: tuple[int, ...]
    zc_direction: np.ndarray
    signal_names: tuple[str, ...]
    logged: tuple[LoggedSignal, ...]
    time_events: tuple[TimeEventSource, ...]
    functions: Mapping[str, Callable] = field(repr=False)
    code: str = field(repr=False)
    line_owner: tuple[int | None, ...] = field(repr=False, default=())
    # Generated functions no block contributes code to (pre_event, after_event, update):
    # they do nothing, and the engine does not call them.
    empty: frozenset[str] = frozenset()
    # Sample times: each block's resolved one, and the discrete rates whose hits the
    # engine schedules on their common clock (`blocksim.compiler.rates`).
    block_rates: tuple[SampleTime, ...] = ()
    clock: Clock | None = None
    rates: tuple[Rate, ...] = ()
    # A discrete block of each rate (the first), for the messages about its hits.
    rate_blocks: tuple[str, ...] = ()
    # Triggered rates (after the clock's in `sample`'s hits): the discrete slot of each
    # trigger's flag, raised by its gate at an edge and cleared by the engine.
    trigger_slots: tuple[int, ...] = ()
    # Logging blocks whose `after_run` the engine calls when a run ends (ToFile).
    after_run: tuple[AfterRun, ...] = ()
    # Blocks the engine opens before a run and closes after it (FMUs: `engine.sessions`).
    run_sessions: tuple[RunSession, ...] = ()
    # Blocks that read the past of an input (transport delays): the rings the engine fills.
    history: tuple[HistoryChannel, ...] = ()
    # What an event iteration that never settles means for a block still changing there
    # (`BlockType.unsettled`), by block path: the blocks that have something to say.
    unsettled: Mapping[str, str] = field(default_factory=dict)
    # Per state (absolute tolerance or nan, nominal value), where a block declares them
    # (`BlockType.state_tolerances`); None: the run's atol for every state.
    state_tolerance: np.ndarray | None = None
    # Every file a run of it reads or writes (the diagram, its Python files, the blocks'
    # files): what the write rule checks before a run (`blocksim.files.write_rule`).
    files: RunFiles | None = None
    # Artefacts the engine derives from `code` on first use (pruned functions, sparsity,
    # native code), kept here so repeated runs of one model build them once.
    derived: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    # The parameter records and values (`compiler.runtime`) behind `with_params`.
    runtime: Any = field(repr=False, compare=False, default=None)

    def with_params(self, values: Mapping[str, Any]) -> "CompiledModel":
        """This model with new values of diagram parameters (keyed and written as for
        `compile_diagram(overrides=...)`, on top of the overrides it was compiled with),
        without generating or compiling code: equal to a compile with those overrides. A value that changes the structure (a width, a
        choice, the shape of the code, a sample time) raises StructuralParameterError
        naming the parameter and the block; a bad value the compile's CompileError."""
        return runtime.with_params(self, values)

    @property
    def structure_key(self) -> str:
        """Equal for models that can share generated code and compiled kernels (those that
        differ only in parameter values)."""
        return self.runtime.key if self.runtime is not None else f"id{id(self)}"

    @property
    def shared(self) -> dict[str, Any]:
        """Engine artefacts that depend on the structure alone (the numba functions),
        shared by every model `with_params` makes from this one."""
        return self.runtime.shared if self.runtime is not None else self.derived

    @property
    def n_states(self) -> int:
        return len(self.x0)

    def state_atol(self, atol: float) -> float | np.ndarray:
        """The solver's absolute tolerance for a run with this atol: one number, or one
        per state where blocks declare their own (inf: no error control)."""
        if self.state_tolerance is None:
            return atol
        fixed, nominal = self.state_tolerance[:, 0], self.state_tolerance[:, 1]
        return np.where(np.isnan(fixed), atol * nominal, fixed)

    @property
    def n_zc(self) -> int:
        return len(self.zc_direction)

    def block_of_signal(self, index: int) -> str:
        return self.signal_names[index].rsplit(".", 1)[0]

    def block_of_exception(self, exc: BaseException) -> str | None:
        """The block whose generated line raised `exc` (deepest such frame), if any: in the
        generated module, or in a function derived from it and registered with
        `register_lines`."""
        found = None
        derived = self.derived.get("line_owners", {})
        tb = exc.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            owners = (self.line_owner if code.co_filename == GENERATED_FILENAME
                      else derived.get((code.co_filename, code.co_name)))
            line = tb.tb_lineno - 1
            if owners is not None and 0 <= line < len(owners) and owners[line] is not None:
                found = self.block_ids[owners[line]]
            tb = tb.tb_next
        return found

    def param_vector(self) -> np.ndarray:
        """The values of the model's parameter slots (`blocksim.expressions.param_slots`),
        in order: what the compiled backends (numba, C) pass as the parameter array."""
        found = self.derived.get("param_vector")
        if found is None:
            from blocksim.expressions import param_slots

            namespace = self.functions["deriv"].__globals__
            count = self.runtime.structure.n_slots if self.runtime is not None else 0
            found = np.array([namespace[param_slots.slot_name(k)] for k in range(count)],
                             dtype=float)
            self.derived["param_vector"] = found
        return found

    def register_lines(self, filename: str, function: str, source: str) -> None:
        """Let `block_of_exception` name blocks in `function`, compiled from `source` (a
        `dataflow.Source`, which knows each line's block) under `filename`."""
        owners = getattr(source, "owners", None)
        if owners is not None:
            self.derived.setdefault("line_owners", {})[(filename, function)] = owners


@without_gc
def compile_diagram(diagram: Diagram, overrides: Mapping[str, Any] | None = None,
                    settings: SimulationSettings | None = None) -> CompiledModel:
    """Check and compile a diagram; every problem is a CompileError naming block and port.

    `settings` are those the run will use (the diagram's own with the CLI/API overrides
    applied; default: the diagram's own): they are checked too, together with the memory
    the run's results will need, so that nothing fails or hangs for them at run time.
    """
    settings = settings or diagram.simulation
    check_settings(settings, diagram.source)
    try:
        return _compile(diagram, overrides, settings)
    except (MemoryError, RecursionError) as exc:  # a limit we do not know of yet
        log.debug("compiling %s failed", diagram.source, exc_info=True)
        raise CompileError(f"the diagram is too large to compile ({type(exc).__name__})",
                           file=diagram.source) from None


def check_run(model: CompiledModel, settings: SimulationSettings) -> None:
    """The checks `compile_diagram` makes of a run's settings, for a model compiled before:
    valid settings, and results within the memory budget (CompileError if not)."""
    check_settings(settings, model.source)
    _check_results(model, settings)


def _check_results(model: CompiledModel, settings: SimulationSettings) -> None:
    budget.check_hits(model.rates, model.clock, model.rate_blocks, settings, model.source)
    columns = sum(len(sig.indices) for sig in model.logged)
    events = [(model.block_ids[src.block], src.impl, src.p) for src in model.time_events]
    budget.check_results(columns, events, settings, model.source)


def _rate_blocks(sampling) -> tuple[str, ...]:
    """The first discrete block of each clocked rate (in the diagram's order)."""
    first: dict[int, str] = {}
    for path, index in sampling.rate_of.items():
        first.setdefault(index, path)
    return tuple(first.get(i, "") for i in range(len(sampling.rates)))


def _compile(diagram: Diagram, overrides: Mapping[str, Any] | None,
             settings: SimulationSettings) -> CompiledModel:
    flat = flatten(diagram, overrides)
    if any(isinstance(blk.impl, Component) for blk in flat.blocks):
        from blocksim.physical.assemble import assemble  # sympy: only for physical diagrams

        assemble(flat)
    graph.check_connected(flat)
    buses.resolve(flat)
    conditional.merge_sources(flat)
    sizes = graph.resolve_sizes(flat)
    budget.check_slots(flat.blocks, sizes, flat.source)
    budget.check_history(flat, sizes)
    sampling = resolve_sampling(flat, sizes)
    # Between its hits a discrete block's outputs are held values: they read no input.
    hit_feedthrough = {blk.path: blk.feedthrough for blk in flat.blocks
                       if blk.path in sampling.rate_of}
    for blk in flat.blocks:
        if blk.path in sampling.rate_of:
            blk.feedthrough = {port: () for port in blk.outputs}
    loops = graph.constraint_loops(flat)
    order = graph.output_order(flat, loops)
    hit_order = graph.output_order(flat, loops, hit_feedthrough) if sampling.rate_of else []
    layout = codegen.allocate(flat, sizes)
    try:
        gen = codegen.Generator(flat, layout, order, loops, sampling, hit_order)
        source, line_owner = gen.source()
        budget.check_code(source, line_owner, [b.path for b in flat.blocks], flat.source)
        functions = gen.compile(source, GENERATED_FILENAME)
    except (ValueError, KeyError, IndexError, TypeError, SyntaxError) as exc:
        raise CompileError(f"code generation failed: {exc}", file=diagram.source) from exc

    x0, m0, state_owner, zc_owner, zc_dir = [], [], [], [], []
    logged, time_events, after_run, history, sessions = [], [], [], [], []
    unsettled: dict[str, str] = {}
    tolerances: list[tuple[float, float]] = []
    declared = False
    for i, blk in enumerate(flat.blocks):
        sz = sizes[blk.path]
        try:
            x0 += _initial(blk, "initial_states", sz.states)
            m0 += _initial(blk, "initial_discrete", sz.discrete)
            zc_dir += _initial(blk, "zc_directions", sz.zero_crossings)
            tol = call_block(blk.impl.state_tolerances, blk.p, sz.states) if sz.states else None
        except CompileError as exc:
            raise CompileError(exc.detail, block=blk.path, file=diagram.source) from None
        if tol is not None:
            tolerances += _tolerances(tol, sz.states, blk.path, diagram.source)
            declared = True
        else:
            tolerances += [(math.nan, 1.0)] * sz.states
        state_owner += [i] * sz.states
        zc_owner += [i] * sz.zero_crossings
        if blk.block_type.logs:  # all its inputs, one after the other (an XYGraph's x, y)
            logged.append(LoggedSignal(blk.path, tuple(
                i for port in blk.inputs for i in layout.signal_of[flat.drivers[(blk.path, port)]])))
        if blk.block_type.has_time_events:
            time_events.append(TimeEventSource(i, blk.impl, blk.p))
        if blk.block_type.logs and blk.block_type.has_after_run:
            after_run.append(AfterRun(i, blk.impl, blk.p))
        if blk.block_type.has_run_session:
            sessions.append(RunSession(i, blk.impl, blk.p, layout.states[blk.path],
                                       layout.discrete[blk.path]))
        hint = call_block(blk.impl.unsettled, blk.p)
        if hint:
            unsettled[blk.path] = hint
        if sz.history is not None:
            signals = tuple(layout.signal_of[flat.drivers[(blk.path, sz.history.port)]])
            history.append(HistoryChannel(i, layout.history[blk.path].start,
                                          sz.history.capacity, len(signals),
                                          float(sz.history.span), float(sz.history.delay),
                                          signals, _feeds_back(flat, blk.path)))
    scheduled = [c.block for c in history if c.delay > 0]
    reaching = {b: _reaches(flat, flat.blocks[b].path) for b in scheduled}
    history = [replace(c, upstream=tuple(b for b in scheduled if b != c.block
                                         and flat.blocks[c.block].path in reaching[b]))
               for c in history]
    m0 += [0.0] * (layout.m_size - len(m0))  # the history rings start empty
    for channel in history:
        grid = delay_grid(sampling.clock, channel.delay) if channel.delay > 0 else None
        m0[channel.base:channel.base + history_ring.HEAD] = history_ring.header(grid)
    names = [""] * layout.n_signals
    for (path, port), idx in layout.signal_of.items():
        for k, i in enumerate(idx):
            names[i] = f"{path}.{port}" + (f"[{k}]" if len(idx) > 1 else "")
    rates = tuple(sampling.block_rates[b.path] for b in flat.blocks)
    extra = repr(([b.path for b in flat.blocks], [b.block_type.name for b in flat.blocks], rates,
                  sampling.clock, sampling.rates, logged, history, layout.m_size))
    records = runtime.record(flat, layout, gen, sizes, overrides, source, extra)
    log.debug("compiled %s: %d blocks, %d states, %d zero crossings, %d signals",
              diagram.source, len(flat.blocks), layout.n_states, layout.n_zc, layout.n_signals)
    model = CompiledModel(
        source=diagram.source,
        settings=settings,
        block_ids=tuple(b.path for b in flat.blocks),
        block_types=tuple(b.block_type.name for b in flat.blocks),
        x0=_frozen(x0),
        m0=_frozen(m0),
        state_owner=tuple(state_owner),
        zc_owner=tuple(zc_owner),
        zc_direction=_frozen(zc_dir),
        signal_names=tuple(names),
        logged=tuple(logged),
        time_events=tuple(time_events),
        functions=functions,
        code=source,
        line_owner=tuple(line_owner),
        empty=frozenset(gen.empty),
        block_rates=rates,
        clock=sampling.clock,
        rates=sampling.rates,
        rate_blocks=_rate_blocks(sampling),
        trigger_slots=tuple(layout.discrete[gate].start for gate in sampling.triggers),
        after_run=tuple(after_run),
        run_sessions=tuple(sessions),
        history=tuple(history),
        files=write_rule.run_files(diagram.path, diagram.python, (
            (b.path, b.block_type, b.p) for b in flat.blocks)),
        unsettled=unsettled,
        state_tolerance=np.array(tolerances, dtype=float).reshape(-1, 2) if declared else None,
        runtime=records,
    )
    _check_results(model, settings)
    return model


def _reaches(flat, path: str) -> set[str]:
    """The blocks a block's outputs reach through the diagram (any path, states
    included)."""
    readers: dict[str, set[str]] = {}
    for (dst, _), (src, _) in flat.drivers.items():
        readers.setdefault(src, set()).add(dst)
    seen: set[str] = set()
    stack = [path]
    while stack:
        for nxt in readers.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _feeds_back(flat, path: str) -> bool:
    """Whether a block's outputs reach its own inputs."""
    return path in _reaches(flat, path)
def _tolerances(values: Any, n: int, block: str, source: str) -> list[tuple[float, float]]:
    """A block's (absolute tolerance or nan, nominal) pairs, checked: n of them, each
    tolerance nan or > 0 (inf allowed), each nominal finite and > 0."""
    pairs = [(float(a), float(b)) for a, b in values]
    if len(pairs) != n:
        raise CompileError(f"the block gave {len(pairs)} tolerances for {n} states",
                           block=block, file=source)
    for a, b in pairs:
        if not (math.isnan(a) or a > 0.0) or not (math.isfinite(b) and b > 0.0):
            raise CompileError(f"absolute tolerance {a!r} / nominal value {b!r} of a state: "
                               f"a tolerance must be > 0 (inf: no error control), a "
                               f"nominal finite and > 0", block=block, file=source)
    return pairs


def _initial(blk: Any, method: str, n: int) -> list[float]:
    """A block's initial values (or zero-crossing directions) for its n slots; a block
    with no such slot that keeps the base class's method is not asked (most blocks)."""
    if n == 0 and getattr(type(blk.impl), method) is getattr(BlockType, method):
        return []
    return _values(call_block(getattr(blk.impl, method), blk.p, n), n)


def _values(values: Any, n: int) -> list[float]:
    """A block's initial values as n floats (CompileError if it gave something else)."""
    values = list(values)
    if len(values) != n:
        raise CompileError(f"the block gave {len(values)} initial values for {n} slots")
    return values


def _frozen(values: list[float]) -> np.ndarray:
    """A read-only float array: runs copy the initial values, they never change them."""
    arr = np.array(values, dtype=float)
    arr.flags.writeable = False
    return arr
