"""`UserBlock`: a block type written as a Python class, turned into an ordinary BlockType.

The user writes plain functions over tuples of floats (no self, so that numba can compile
them): `out`, `der`, `crossing` and `event`, each called as f(t, x, d, u, p) with the
continuous states x, the discrete states d, the inputs u (one value per input port) and
the parameters p (a named tuple: p.g). The declaration becomes generated code like any
other block's: lines that call those functions and copy their results into the engine's
slots, so validation, the palette, the inspector, `describe` and both backends treat it as
a standard block, and the engine's event semantics (latched modes, located crossings,
event iteration until nothing changes, left and right limits) hold unchanged.
"""
from __future__ import annotations

import collections
import math
from typing import Any, Callable, ClassVar

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, ParamValues, Sizes, lit
from blocksim.user.declare import DIRECTIONS, Crossing, Discrete, State
from blocksim.user.functions import guarded, register_function

_METHODS = ("out", "der", "crossing", "event")
# What `update` logs for a block with an `event` function (its declared `event_kinds`).
EVENT_KINDS = (
    EventKind("reset", "its `event` function changed a continuous state"),
    EventKind("mode", "its `event` function changed discrete states only"),
    EventKind("stop", "its `event` function returned TERMINATE: the run stops here"),
)
_PARAM_KINDS = ("scalar", "int", "bool")


def _tuple(items: list[str]) -> str:
    """Source of a tuple of these expressions (one element keeps its comma)."""
    if len(items) == 1:
        return f"({items[0]},)"
    return f"({', '.join(items)})"


class UserBlock(BlockType):
    """Base class of a block type written in Python (docs/python.md).

    Class attributes: name, category, doc (or the docstring), params (scalar, int or bool
    Params), inputs and outputs (scalar Ports), states (State), discrete_states (Discrete),
    crossings (Crossing), clock (the name of a discrete state that holds the time of the
    block's next time event, ModiaMath's setNextEvent!; inf: none), feedthrough_outputs
    (False: `out` does not read the inputs and gets u = ()).

    Functions, each f(t, x, d, u, p) with tuples x, d, u and named-tuple p:
      out -> one value per output port;      der -> one derivative per state;
      crossing -> one value per Crossing;
      event(t, x, d, u, p, zo, zn, init) -> (new x, new d, CONTINUE or TERMINATE), run in
      every pass of an event's iteration until it changes nothing; zo/zn are the crossings'
      signs before and just after the event, init is true at the start time.
    Optional start(x, d, p) -> (x, d): the initial values from the declared ones and the
    parameters, computed once when the diagram compiles (in Python).
    """

    category: ClassVar[str] = "User"
    states: ClassVar[tuple[State, ...]] = ()
    discrete_states: ClassVar[tuple[Discrete, ...]] = ()
    crossings: ClassVar[tuple[Crossing, ...]] = ()
    clock: ClassVar[str | None] = None
    feedthrough_outputs: ClassVar[bool] = True
    rate = "continuous"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.name:
            return  # a base class of user blocks (no name): nothing to declare yet
        problem = _declaration_problem(cls)
        if problem:
            raise TypeError(f"user block {cls.__qualname__}: {problem}")
        cls.has_time_events = cls.clock is not None
        cls.event_kinds = EVENT_KINDS if _function(cls, "event") is not None else ()
        cls._param_tuple = collections.namedtuple(  # type: ignore[attr-defined]
            f"{cls.__name__}Params", [prm.name for prm in cls.params])
        for method in _METHODS:
            fn = _function(cls, method)
            if fn is not None:
                register_function(fn, cls.name, method, cls._sample_arguments(method))
        register_function(cls._param_tuple, cls.name, "params", ())  # type: ignore[attr-defined]

    @classmethod
    def _sample_arguments(cls, method: str) -> tuple:
        """Arguments of the types generated code passes to `method` (for numba)."""
        u = len(cls.inputs) if method != "out" or cls.feedthrough_outputs else 0
        args = (0.0, (0.0,) * len(cls.states), (0.0,) * len(cls.discrete_states),
                (0.0,) * u, cls._param_tuple(*[0.0] * len(cls.params)))  # type: ignore
        if method == "event":
            args += ((0.0,) * len(cls.crossings), (0.0,) * len(cls.crossings), 0)
        return args

    # ----- structure -----
    def feedthrough(self, p):
        ins = [port.name for port in self.inputs] if self.feedthrough_outputs else []
        return {port.name: ins for port in self.outputs}

    def sizes(self, p: ParamValues, in_widths):
        wide = [port for port, width in in_widths.items() if width and width > 1]
        if wide:
            raise ValueError(f"input '{wide[0]}' has width {in_widths[wide[0]]}; the inputs "
                             f"of a user block are scalars")
        stop = 1 if _function(type(self), "event") is not None else 0
        return Sizes({port.name: 1 for port in self.outputs}, states=len(self.states),
                     discrete=len(self.discrete_states) + stop,
                     zero_crossings=len(self.crossings))

    def zc_directions(self, p, count):
        return [DIRECTIONS[c.direction] for c in self.crossings]

    def check(self, p: ParamValues) -> str | None:
        for prm in self.params:
            value = p[prm.name]
            if not math.isfinite(float(value)):
                return f"parameter '{prm.name}' must be finite, got {value!r}"
        return self._results_problem(p)

    def _results_problem(self, p: ParamValues) -> str | None:
        """Each function called once at the initial values (inputs 0): a result of the
        wrong shape is named now, not deep in a run. One that raises there is left to the
        run (it may divide by an input that is never 0 in the diagram)."""
        try:
            starts = self._starts(p)
        except ValueError as exc:
            return str(exc)
        x, d = tuple(starts[0]), tuple(starts[1])
        args = (0.0, x, d, (0.0,) * len(self.inputs),
                self._param_tuple(*[float(p[prm.name]) for prm in self.params]))  # type: ignore
        shapes = {"out": len(self.outputs), "der": len(self.states),
                  "crossing": len(self.crossings)}
        for method, n in shapes.items():
            fn = _function(type(self), method)
            if fn is None or not n:
                continue
            call = args if method != "out" or self.feedthrough_outputs else args[:3] + ((), args[4])
            try:
                result = fn(*call)
            except Exception:
                continue
            if not _numbers(result, n):
                return f"{method}() must return a tuple of {n} numbers, got {_shown(result)}"
        fn = _function(type(self), "event")
        if fn is not None:
            signs = (0.0,) * len(self.crossings)
            try:
                result = fn(*args, signs, signs, True)
            except Exception:
                return None
            if not (isinstance(result, tuple) and len(result) == 3
                    and _numbers(result[0], len(x)) and _numbers(result[1], len(d))
                    and _numbers((result[2],), 1)):
                return (f"event() must return (a tuple of {len(x)} states, a tuple of "
                        f"{len(d)} discrete states, CONTINUE or TERMINATE), got "
                        f"{_shown(result)}")
        return None

    def _starts(self, p: ParamValues) -> tuple[list[float], list[float]]:
        """The declared start values, or what the optional `start(p)` function makes of
        them (called once per compile, in Python: ModiaMath's initialisation)."""
        x = [_start(s.start, p, f"state '{s.name}'") for s in self.states]
        d = [_start(s.start, p, f"discrete state '{s.name}'") for s in self.discrete_states]
        fn = _function(type(self), "start")
        if fn is None:
            return x, d
        params = self._param_tuple(*[float(p[prm.name]) for prm in self.params])  # type: ignore
        try:
            result = fn(tuple(x), tuple(d), params)
        except Exception as exc:
            raise ValueError(f"start() raised {type(exc).__name__}: {exc}") from None
        if not (isinstance(result, tuple) and len(result) == 2 and _numbers(result[0], len(x))
                and _numbers(result[1], len(d))):
            raise ValueError(f"start() must return (a tuple of {len(x)} states, a tuple of "
                             f"{len(d)} discrete states), got {_shown(result)}")
        return [float(v) for v in result[0]], [float(v) for v in result[1]]

    def initial_states(self, p, n):
        return self._starts(p)[0]

    def initial_discrete(self, p, n):
        values = self._starts(p)[1]
        return values + [0.0] * (n - len(values))

    def state_tolerances(self, p, n):
        if all(s.error_control and s.atol is None and s.nominal == 1.0 for s in self.states):
            return None
        return [(math.inf, 1.0) if not s.error_control else (s.atol, 1.0)
                if s.atol is not None else (math.nan, s.nominal) for s in self.states]

    # ----- generated code -----
    def _args(self, e: Emit, inputs: bool = True) -> str:
        params = [lit(float(e.p[prm.name])) for prm in self.params]
        tup = e.const(self._param_tuple)  # type: ignore[attr-defined]
        u = [e.u[port.name][0] for port in self.inputs] if inputs else []
        d = e.m[:len(self.discrete_states)]
        return f"t, {_tuple(e.x)}, {_tuple(d)}, {_tuple(u)}, {tup}({', '.join(params)})"

    def _call(self, e: Emit, method: str, inputs: bool = True) -> str:
        fn = _function(type(self), method)
        assert fn is not None
        return f"{e.const(guarded(fn))}({self._args(e, inputs)})"

    def output(self, e: Emit):
        if _function(type(self), "out") is None:
            raise ValueError("a user block with outputs needs an `out` function")
        call = self._call(e, "out", self.feedthrough_outputs)
        return {port.name: [f"{e.y[port.name][0]} = {call}[{k}]"]
                for k, port in enumerate(self.outputs)}

    def derivative(self, e: Emit):
        if not self.states:
            return []
        if _function(type(self), "der") is None:
            raise ValueError("a user block with states needs a `der` function")
        r = f"_d{e.index}"
        return [f"{r} = {self._call(e, 'der')}"] + [f"{dx} = {r}[{k}]"
                                                  for k, dx in enumerate(e.dx)]

    def zero_crossing(self, e: Emit):
        if not self.crossings:
            return []
        if _function(type(self), "crossing") is None:
            raise ValueError("a user block with crossings needs a `crossing` function")
        r = f"_g{e.index}"
        return [f"{r} = {self._call(e, 'crossing')}"] + [f"{g} = {r}[{k}]"
                                                       for k, g in enumerate(e.g)]

    def update(self, e: Emit):
        fn = _function(type(self), "event")
        if fn is None:
            return []
        i, nd = e.index, len(self.discrete_states)
        r, c = f"_e{i}", f"_c{i}"
        call = (f"{e.const(guarded(fn))}({self._args(e)}, {_tuple(e.zo) if e.zo else '()'}, "
                f"{_tuple(e.zn) if e.zn else '()'}, init)")
        lines = [f"{r} = {call}", f"{c} = 0"]
        for k, x in enumerate(e.x):
            lines += [f"if {r}[0][{k}] != {x}:", f"    {x} = {r}[0][{k}]", f"    {c} = 2"]
        for k, m in enumerate(e.m[:nd]):
            lines += [f"if {r}[1][{k}] != {m}:", f"    {m} = {r}[1][{k}]",
                      f"    if {c} == 0: {c} = 1"]
        stop = e.m[nd]
        lines += [f"if {c} != 0 and init:", "    changed = True",  # starting values: no entry
                  f"elif {c} == 2:", f"    {e.event('reset')}",
                  f"elif {c} == 1:", f"    {e.event('mode')}",
                  f"if {r}[2] != 0 and {stop} == 0.0:", f"    {stop} = 1.0",
                  f"    {e.event('stop')}"]
        return lines

    def next_time(self, e: Emit) -> str:
        slot = e.m[[d.name for d in self.discrete_states].index(self.clock)]
        return f"({slot} if {slot} > t else inf)"

    def next_time_event(self, p, t):
        return math.inf  # the generated `next_time` reads the clock's discrete state

    @classmethod
    def locates_crossings(cls) -> bool:
        return bool(cls.crossings)

    @classmethod
    def describe(cls) -> str:
        text = super().describe()
        parts = []
        if cls.states:
            parts.append("States: " + ", ".join(s.name for s in cls.states))
        if cls.discrete_states:
            parts.append("Discrete states: " + ", ".join(d.name for d in cls.discrete_states))
        if cls.crossings:
            parts.append("Crossings: " + ", ".join(f"{c.name} ({c.direction})"
                                                   for c in cls.crossings))
        return text + "".join(line + "\n" for line in parts)


def _function(cls: type, method: str) -> Callable | None:
    """The user's plain function for `method` (a staticmethod unwrapped), or None."""
    for klass in cls.__mro__:
        if method in vars(klass):
            value = vars(klass)[method]
            return value.__func__ if isinstance(value, staticmethod) else value
    return None


def _numbers(value: Any, n: int) -> bool:
    """Whether value is a tuple (or list) of n real numbers."""
    return (isinstance(value, (tuple, list)) and len(value) == n
            and all(isinstance(v, (int, float)) or hasattr(v, "__float__") for v in value))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _start(value: float | str, p: ParamValues, what: str) -> float:
    if isinstance(value, str):
        try:
            return float(p[value])
        except KeyError:
            raise ValueError(f"{what} starts at '{value}', which is no parameter") from None
    return float(value)


def _declaration_problem(cls: type[UserBlock]) -> str | None:
    for prm in cls.params:
        if prm.kind not in _PARAM_KINDS:
            return (f"parameter '{prm.name}' is of kind {prm.kind}; user blocks take "
                    f"{', '.join(_PARAM_KINDS)} parameters")
    for item in (*cls.states, *cls.crossings):
        problem = item.problem()
        if problem:
            return problem
    names = [d.name for d in cls.discrete_states]
    if cls.clock is not None and cls.clock not in names:
        return f"clock '{cls.clock}' is not one of its discrete states"
    params = {prm.name for prm in cls.params}
    for item in (*cls.states, *cls.discrete_states):
        if isinstance(item.start, str) and item.start not in params:
            return f"'{item.name}' starts at '{item.start}', which is no parameter"
    for method in (*_METHODS, "start"):
        fn = vars(cls).get(method)
        if fn is not None and not callable(fn) and not isinstance(fn, staticmethod):
            return f"'{method}' must be a function"
    return None
