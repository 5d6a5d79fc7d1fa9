"""How a block type is declared: ports, parameters, states and the code it contributes.

A declaration is the single source for file validation, the compiler, the palette, the
inspector and `blocksim describe`. A block never runs Python per solver stage: it returns
source lines that the compiler splices into one generated function per model (see
`blocksim.compiler.codegen`). Its instance data (states, modes, zero-crossing signs) live in
flat arrays owned by the engine; the block only names slots through an `Emit` context.

Zero-crossing semantics (shared by every discontinuous block):
  * a block declares continuous functions g_i; the engine keeps for each a latched sign
    `z_i` in {-1, 0, +1} that changes only at events, so modes stay fixed during a
    continuous step (the Simulink/Modelica convention);
  * at an event the engine evaluates every g_i just after the event instant and hands the
    block both the old sign (`zo`) and the new one (`zn`) in its `update` code.
"""
from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np

from blocksim.expressions import param_slots
from blocksim.blocktypes.sampletime import CONTINUOUS, INHERITED, SampleTime, parse_sample_time

REQUIRED = object()

PARAM_KINDS = ("scalar", "vector", "int", "bool", "choice", "text", "signs")


@dataclass(frozen=True)
class Param:
    """A block parameter: its kind, default, unit and documentation.

    kinds: scalar (one number), vector (number or array), int, bool, choice (one of
    `choices`), text (a formula or name, never evaluated by the loader), signs (a string of
    sign characters such as "+-+").

    Numbers must be finite unless `allow_inf` says that +-inf means something (a limit that
    is absent); NaN is never accepted. A vector's length usually sets a signal's width, so it
    is held to the compiler's signal limit; a `table` (breakpoints, data, matrices) is held
    to the larger table limit instead (`blocksim.compiler.limits`).

    A text parameter that names a file the block reads or writes says so in `access`
    ("reads", "writes"): the write rule (`blocksim.files.write_rule`) then knows every file
    a run touches, for any block type, before the run starts.
    """

    name: str
    kind: str = "scalar"
    default: Any = REQUIRED
    doc: str = ""
    unit: str = ""
    choices: tuple[str, ...] = ()
    low: float | None = None  # inclusive bounds checked by the compiler
    high: float | None = None
    allow_inf: bool = False  # +-inf is a meaningful value (e.g. "no limit")
    table: bool = False  # a table or matrix, not a per-element value of a signal
    access: str = ""  # "reads" / "writes": the text names a file (relative: the diagram's folder)
    suffixes: tuple[str, ...] = ()  # a file parameter's suffixes (the editor's file chooser)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Port:
    """An input or output port of a block."""

    name: str
    doc: str = ""


@dataclass(frozen=True)
class EventKind:
    """A kind of entry a block logs in the events (`time,block,kind`; `e.event(kind)` in
    its code), with what it means: declared, so that `describe`, the documentation and
    the sweep metrics `count:BLOCK.KIND` / `time:BLOCK.KIND:K` know a block's kinds
    without running it."""

    name: str
    doc: str = ""


# The entry the engine logs for every located zero crossing, under the block that owns it,
# before what the block then did (no block declares it: any block with crossings has it).
STATE_EVENT = EventKind("state", "one of its zero crossings, located in time (before "
                                 "what the block then did)")


@dataclass(frozen=True)
class History:
    """The past of an input that a block reads (a transport delay).

    The engine keeps it in a ring of the discrete-state array (`blocksim.blocktypes.history_ring`):
    one record per accepted step, interpolating the input to the solver's order, and a
    marker at each event. `span` (s): how far back it is read; `capacity`: records kept
    (a run whose steps within `span` need more fails, naming the block); `delay` (s, 0:
    none): a fixed delay whose breakpoints the block schedules as time events, so that
    the engine counts how often a discontinuity has passed through it.
    """

    port: str
    span: float
    capacity: int
    delay: float = 0.0


@dataclass(frozen=True)
class Sizes:
    """What one block instance needs: output widths and slot counts."""

    outputs: Mapping[str, int]
    states: int = 0
    discrete: int = 0
    zero_crossings: int = 0
    history: History | None = None


class ParamValues:
    """Resolved parameter values of one block instance, read as attributes (p.k)."""

    def __init__(self, values: Mapping[str, Any], names: Mapping[str, Any] | None = None,
                 folder: str | None = None):
        self._values = dict(values)
        # The diagram parameters in scope (for formulas): a read-only view shared by every
        # block of one diagram level, never a copy per block.
        self.scope: Mapping[str, Any] = (names if isinstance(names, MappingProxyType)
                                         else MappingProxyType(dict(names or {})))
        # The folder of the diagram file (absolute), against which blocks that read or
        # write files resolve relative paths; None for a diagram that has no file (the
        # current folder is used then).
        self.folder = folder

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)


def lit(value: float) -> str:
    """An exact Python literal for a float (repr round-trips; inf and nan are names); in
    code the generator records, a finite number is a parameter slot holding it
    (`blocksim.expressions.param_slots`). inf stays a name: it means "none" (a limit), and blocks
    leave out the code it makes moot, so a change between finite and inf is structural."""
    value = float(value)
    if value - value == 0.0:  # finite
        name = param_slots.slot(value)
        if name is not None:
            return name
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "(-inf)"
    text = repr(value)
    return f"({text})" if value < 0 else text


def broadcast(values: Any, width: int) -> list[float]:
    """A parameter value (scalar or array) expanded to `width` elements."""
    if type(values) is float:  # most parameters (no numpy: new values replay code often)
        return [values] * width
    arr = np.atleast_1d(np.asarray(values, dtype=float)).ravel()
    if arr.size == 1:
        return [float(arr[0])] * width
    if arr.size != width:
        raise ValueError(f"has {arr.size} elements where {width} are needed")
    return [float(v) for v in arr]


def elementwise_width(in_widths: Mapping[str, int | None]) -> int:
    """The common width of elementwise inputs; ValueError names the ports that disagree."""
    known = {port: w for port, w in in_widths.items() if w and w > 1}
    widths = set(known.values())
    if len(widths) > 1:
        text = ", ".join(f"'{port}' {w}" for port, w in known.items())
        raise ValueError(f"input widths do not match ({text}); only width 1 expands")
    return widths.pop() if widths else 1


def size_of(value: Any) -> int:
    """Number of elements of a scalar or array parameter."""
    if type(value) is float:
        return 1
    return int(np.asarray(value).size)


@dataclass
class Emit:
    """Names of one block instance's slots inside generated code.

    u[port][k] is the expression of element k of an input; y[port][k] the local variable an
    output element is assigned to; x/dx/m/g/zo/zn index the engine's flat arrays.
    `const(arr)` registers an array constant and returns its name.
    """

    p: ParamValues
    u: dict[str, list[str]]
    y: dict[str, list[str]]
    x: list[str]
    dx: list[str]
    m: list[str]
    g: list[str]
    z: list[str]
    zo: list[str]
    zn: list[str]
    index: int
    const: Callable[[Any], str] = field(repr=False, default=lambda v: repr(v))
    # For a block that solves an algebraic loop (BlockType.solves_loop): the output lines of
    # the blocks between its output and its input, in evaluation order.
    loop: list[str] = field(default_factory=list)
    # The block's resolved sample time (an inherited one as resolved from its inputs); a
    # discrete block's period and offset are `rate.period` and `rate.offset`.
    rate: SampleTime = field(default_factory=lambda: SampleTime(INHERITED))
    # Inside an enabled subsystem: an expression that is nonzero while it is enabled ("1.0"
    # elsewhere). For an enable gate: the lines that reset the subsystem's states when it is
    # enabled (set by the compiler).
    gate: str = "1.0"
    resets: list[str] = field(default_factory=list)
    # For a block that follows conditional subsystems (Merge): per input, an expression
    # nonzero while the subsystem that drives it runs (an enabled one while enabled, a
    # triggered one during the event of its trigger edge; set by the compiler).
    watch: list[str] = field(default_factory=list)
    # A block with a `History`: where its ring starts in the array `m` (read it from
    # generated code as `m`, the whole array, with `blocksim.blocktypes.history_ring.hist_read`).
    hist: int = -1
    # Every block's index by path (the generator's own map, not a copy): a block that logs
    # events for others (a physical network, for its components) names them by index.
    index_of: Mapping[str, int] = field(default_factory=dict)

    def width(self, port: str) -> int:
        """Width of an input or output port."""
        return len(self.u[port]) if port in self.u else len(self.y[port])

    def event(self, kind: str) -> str:
        """A statement that logs an event of this block and marks the pass as changed."""
        return f"ev.append(({self.index}, {kind!r})); changed = True"


class BlockType:
    """Base class of every block declaration.

    Subclasses set the class attributes and override the code methods they need. Code
    methods return lists of Python source lines (no indentation) using the names in `Emit`.
    Defaults: every output depends directly on every input (override `feedthrough`), no
    states, no events.
    """

    name: ClassVar[str] = ""
    category: ClassVar[str] = "Misc"
    doc: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    inputs: ClassVar[tuple[Port, ...]] = ()
    outputs: ClassVar[tuple[Port, ...]] = ()
    logs: ClassVar[bool] = False  # Scope/Output: record the input under the block's id
    # Directions of zero crossings to locate: 0 both, +1 rising only, -1 falling only.
    zc_direction: ClassVar[int] = 0
    # True for a block whose outputs are the unknowns of an algebraic loop closing on its
    # inputs (AlgebraicConstraint): its outputs have no feedthrough, and the compiler hands
    # its output code the loop's lines (Emit.loop) to iterate on.
    solves_loop: ClassVar[bool] = False
    # Sample time (see blocksim.blocktypes.sampletime): "inherited" (the rate of the inputs: Gain, Sum,
    # Switch...), "continuous" (a time-dependent source) or "constant". A block with
    # continuous states is continuous whatever it declares.
    rate: ClassVar[str] = INHERITED
    # A discrete block (Unit Delay, Zero-Order Hold, ...): its outputs change only at its
    # sample hits. Between hits `output` reads held values (discrete slots); at a hit
    # `sample_output` sets them from the inputs at that instant and the discrete states
    # before the update, and once every block's outputs are set, `sample_update` updates
    # the discrete states. Its `feedthrough` says which inputs each output reads at a hit;
    # between hits its outputs read no input.
    discrete: ClassVar[bool] = False
    # The kinds of entry its code logs in the events (`Emit.event(kind)`), whatever its
    # parameters: every kind it can log must be declared (tests/test_registry.py checks
    # the generated code). The engine's `state` entry of a located crossing comes on top.
    event_kinds: ClassVar[tuple[EventKind, ...]] = ()

    # ----- structure, possibly depending on parameters -----
    def input_ports(self, p: ParamValues) -> Sequence[Port]:
        return self.inputs

    def output_ports(self, p: ParamValues) -> Sequence[Port]:
        return self.outputs

    def feedthrough(self, p: ParamValues) -> Mapping[str, Sequence[str]]:
        """For each output port, the input ports its value depends on without delay."""
        ins = [port.name for port in self.input_ports(p)]
        return {port.name: ins for port in self.output_ports(p)}

    def check(self, p: ParamValues) -> str | None:
        """A message if the parameter values cannot work together, else None."""
        return None

    def is_discrete(self, p: ParamValues) -> bool:
        """Whether this instance is a discrete block (`discrete`; a PID is continuous or
        discrete by its parameters)."""
        return self.discrete

    def sample_time(self, p: ParamValues) -> SampleTime:
        """This block's declared sample time; a discrete block reads its `sample_time`
        parameter (ValueError says what is wrong with it)."""
        if self.is_discrete(p):
            return parse_sample_time(p.sample_time)
        return SampleTime(self.rate)

    def sizes(self, p: ParamValues, in_widths: Mapping[str, int | None]) -> Sizes:
        """Output widths and slot counts; default: elementwise over inputs of equal width
        (width-1 inputs expand), outputs as wide as the widest input."""
        width = elementwise_width(in_widths)
        return Sizes({port.name: width for port in self.output_ports(p)})

    def zc_directions(self, p: ParamValues, count: int) -> list[int]:
        return [self.zc_direction] * count

    # ----- initial values -----
    def initial_states(self, p: ParamValues, n: int) -> list[float]:
        return [0.0] * n

    def initial_discrete(self, p: ParamValues, n: int) -> list[float]:
        return [0.0] * n

    def state_tolerances(self, p: ParamValues, n: int) -> list[tuple[float, float]] | None:
        """Per state, (absolute tolerance or nan, nominal value): the solver's absolute
        tolerance for the state is the one given, else the run's atol times the nominal;
        inf leaves the state out of the error control. None: the run's atol for each."""
        return None

    # ----- generated code -----
    def output(self, e: Emit) -> dict[str, list[str]]:
        """Lines assigning e.y[port][k] for each output port (keyed by port)."""
        return {}

    def derivative(self, e: Emit) -> list[str]:
        """Lines assigning e.dx[k] for each state."""
        return []

    def zero_crossing(self, e: Emit) -> list[str]:
        """Lines assigning e.g[k], continuous functions whose sign changes are events."""
        return []

    def update(self, e: Emit) -> list[str]:
        """Event-mode lines: set e.x / e.m from inputs and zo/zn signs; use e.event(kind).

        Runs in every pass of the event iteration until no block changes anything. At the
        start time the local `init` is True in every pass of that first iteration, so code
        that sets a mode from scratch under `init` must reach the same answer each pass.
        """
        return []

    def unsettled(self, p: ParamValues) -> str | None:
        """What it means for this block that an event iteration never settles with the
        block still changing, and what to do: the engine's error adds it after the
        block's name ("friction sticks: ..."); None: nothing to add."""
        return None

    def pre_event(self, e: Emit) -> list[str]:
        """Lines run once at the start of each event with the left-limit values (Memory)."""
        return []

    def after_event(self, e: Emit) -> list[str]:
        """Lines run once when an event has settled (clearing event pulses)."""
        return []

    def sample_output(self, e: Emit) -> dict[str, list[str]]:
        """A discrete block at its hit, per output port: lines setting the held values that
        `output` reads, from e.u (the inputs at the hit) and the discrete states before
        the update."""
        return {}

    def sample_update(self, e: Emit) -> list[str]:
        """A discrete block at its hit, after every block's outputs: lines updating its
        discrete states from e.u."""
        return []

    def next_time_event(self, p: ParamValues, t: float) -> float:
        """The first time strictly after t at which this block changes by itself."""
        return float("inf")

    def next_time(self, e: Emit) -> str:
        """`next_time_event` as generated code: an expression in t and e.m for the first
        time strictly after t at which this block changes by itself, its discrete states
        being those settled at t (the engine takes the minimum over blocks after each
        event). It must agree with `next_time_event`. The default calls that method, a
        Python helper: on the numba backend the time events of the model then return to
        Python; an expression numba compiles keeps them in the compiled loop."""
        helper = e.const(functools.partial(self.next_time_event, e.p))
        return f"{helper}(t)"

    has_time_events: ClassVar[bool] = False

    # A logging block that does something with its signal once a run has ended (ToFile
    # writes it to a file): the engine then calls `after_run`.
    has_after_run: ClassVar[bool] = False

    def after_run(self, p: ParamValues, name: str, time: np.ndarray, values: np.ndarray
                  ) -> str | None:
        """Called once when a run has ended (finished, stopped, failed or interrupted) with
        the times and this logging block's values so far, logged under `name`; OSError or
        ValueError, whose message names what failed, if it cannot do its work. Returns what
        it wrote, for the user ("/data/out.csv (120 rows)"), or None."""

    def count_time_events(self, p: ParamValues, start: float, stop: float) -> float | None:
        """About how many time events this block makes in [start, stop] (None: unknown).

        The compiler holds the total to its limits before a run, so that a pulse period of
        1e-12 is an error naming the block rather than a run that never ends.
        """
        return 1.0 if self.has_time_events else 0.0

    # A block that holds something outside the engine's arrays for the length of a run (an
    # FMU instance): the engine calls `start_run` before the run's first evaluation and
    # `end_run` when it has ended, however it ended (`blocksim.engine.sessions`).
    has_run_session: ClassVar[bool] = False

    def start_run(self, p: ParamValues, start: float, stop: float, rtol: float,
                  x: np.ndarray, m: np.ndarray) -> None:
        """Open the block's run session; `x` and `m` are views of its slots in the run's
        state, which it may set (initial values known only now). CompileError if it
        cannot start (the run does not begin)."""

    def end_run(self, p: ParamValues) -> None:
        """Close the block's run session (never raises)."""

    def step_hook(self, p: ParamValues) -> Callable[[float, list[float]], bool] | None:
        """A function called after each accepted continuous step with its end time and the
        block's states there, once the model's outputs are evaluated at it: True asks for
        an event there (an FMU's step event). None: nothing to call."""
        return None

    def instance_notes(self, p: ParamValues) -> str | None:
        """What these parameter values make of the block, for the editor's inspector (an
        FMU: its model, interface and parameters with start values and units); None:
        nothing beyond the parameters."""
        return None

    # ----- documentation -----
    @classmethod
    def _rate_text(cls) -> str:
        if cls.discrete or any(prm.name == "sample_time" for prm in cls.params):
            return "discrete, by its sample_time parameter (-1 inherits the input's rate)"
        return {"inherited": "inherited from its inputs"}.get(cls.rate, cls.rate)

    @classmethod
    def locates_crossings(cls) -> bool:
        """Whether this type has zero crossings (then the events also log `state`)."""
        return cls.zero_crossing is not BlockType.zero_crossing

    @classmethod
    def summary(cls) -> str:
        """The first sentence of the documentation (`blocksim blocks` lists it): the text up
        to a full stop that ends the paragraph or precedes a capital letter, so "e.g. x",
        "i.e. y" and "0, 1, 2, ... and" do not end it."""
        text = inspect.cleandoc(cls.doc or cls.__doc__ or "").split("\n\n", 1)[0]
        text = " ".join(text.split())
        end = re.search(r"\.(?=\s+[A-Z])", text)
        return text[:end.end()] if end else text

    @classmethod
    def describe(cls) -> str:
        """Human-readable documentation: ports, parameters and doc text."""
        text = inspect.cleandoc(cls.doc or cls.__doc__ or "")
        lines = [f"{cls.name} ({cls.category})", "", text, "", f"Sample time: {cls._rate_text()}"]
        if cls.inputs:
            lines.append("Inputs:")
            lines += [f"  {port.name:12s} {port.doc}" for port in cls.inputs]
        if cls.outputs:
            lines.append("Outputs:")
            lines += [f"  {port.name:12s} {port.doc}" for port in cls.outputs]
        if cls.params:
            lines.append("Parameters:")
            for prm in cls.params:
                default = "required" if prm.required else f"default {prm.default!r}"
                unit = f" [{prm.unit}]" if prm.unit else ""
                kind = f"{prm.kind} ({', '.join(prm.choices)})" if prm.choices else prm.kind
                inf = ", +-inf allowed" if prm.allow_inf else ""
                lines.append(f"  {prm.name:12s} {kind}{unit}, {default}{inf}. {prm.doc}")
        kinds = (STATE_EVENT,) * cls.locates_crossings() + cls.event_kinds
        if kinds:
            lines.append("Events (the events CSV's kind; metrics count:BLOCK.KIND, "
                         "time:BLOCK.KIND:K):")
            width = max(12, *(len(kind.name) for kind in kinds))
            lines += [f"  {kind.name:{width}s} {kind.doc}" for kind in kinds]
        return "\n".join(lines).rstrip() + "\n"


class ContinuousOrSampled:
    """Mixed into a block that is continuous with sample_time 0 and discrete otherwise (PID,
    Derivative): its `sample_time` parameter, parsed with 0 meaning continuous."""

    @classmethod
    def _rate_text(cls) -> str:
        """`describe`'s sample-time line: the default (0) is continuous, so the line says
        that first rather than the "discrete" of blocks that are always sampled."""
        return ("continuous by default (sample_time 0); discrete with a sample_time > 0 (a "
                "period, or [period, offset]; -1 inherits a discrete input's rate)")

    def is_discrete(self, p: ParamValues) -> bool:
        try:
            return parse_sample_time(p.sample_time, allow_continuous=True).kind != CONTINUOUS
        except ValueError:
            return True  # `sample_time_problem` names what is wrong with it

    def sample_time(self, p: ParamValues) -> SampleTime:
        return parse_sample_time(p.sample_time, allow_continuous=True)

    @staticmethod
    def sample_time_problem(p: ParamValues) -> str | None:
        try:
            parse_sample_time(p.sample_time, allow_continuous=True)
        except ValueError as exc:
            return f"parameter 'sample_time': {exc}"
        return None


SAMPLE_TIME = Param("sample_time", "vector", 1.0, "sample period, or [period, offset] with "
                    "0 <= offset < period; -1 inherits the rate of the input", unit="s")


def each(targets: Sequence[str], template: str, **lists: Sequence[str]) -> list[str]:
    """Elementwise lines `target = template` with {name} replaced by element k of each list.

    Lists of length 1 broadcast (scalar expansion), as Simulink does.
    """
    lines = []
    for k, target in enumerate(targets):
        values = {name: (seq[k] if len(seq) > 1 else seq[0]) for name, seq in lists.items()}
        lines.append(f"{target} = {template.format(**values)}")
    return lines
