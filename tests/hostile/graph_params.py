"""Random parameters of one block (drawn with hypothesis), valid by the block's own rules.

Values are random but plausible: a handful of blocks whose parameters constrain each other
get a generator of their own (`_special`); any other type draws from its declared kinds,
ranges and choices (`generic_value`). `valid_instance` then asks the declaration itself whether
the draw can work (the compiler's `params_for`, the type's `check` and, for a discrete
block, its `sample_time`) and draws again when not: first everything at random, then the
defaults with a few parameters at random (a draw that changes one parameter from working
defaults mostly works), at last the defaults. So a block type added to the library is
fuzzed with valid parameters without touching this file, and the diagrams the fuzzer
builds compile instead of stopping at the first parameter out of range.

`loose_params` is the draw without that check, for the broken diagrams (graph_breaks).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import REQUIRED, BlockType, ParamValues
from blocksim.compiler.params import params_for
from blocksim.errors import BlocksimError

SAMPLE_TIMES = (0.1, 0.25, 1.0, -1, [0.2, 0.05], [0.3, 0.0])
INPUT_NAMES = ("u", "v", "w")
RANDOM_TRIES, PARTIAL_TRIES = 2, 4  # all parameters at random, then defaults with a few

# Where generated diagrams live while they run (removed when the process ends); it holds
# the data file FromFile reads by default, so that block is fuzzed like any other source.
SCRATCH = tempfile.TemporaryDirectory(prefix="blocksim-fuzz-")
with open(os.path.join(SCRATCH.name, "signal.csv"), "w", encoding="utf-8") as _data:
    _data.write("t,y\n0,0\n0.5,1\n1,-1\n2,0.5\n")


def _rounded(low: float, high: float) -> st.SearchStrategy:
    return st.floats(low, high, allow_nan=False, allow_infinity=False).map(
        lambda v: round(v, 3))


small = st.one_of(_rounded(-2.0, 2.0), st.sampled_from([0.0, 1.0, -1.0, 1e3, -1e3, 1e-6]))
positive = _rounded(0.05, 3.0)
# Strategies are built once: building one per draw (validating it, labelling it) cost
# hypothesis five times the time of drawing from it.
_STRATEGIES: dict[Any, st.SearchStrategy] = {}


def _cached(key: Any, make) -> st.SearchStrategy:
    found = _STRATEGIES.get(key)
    if found is None:
        found = _STRATEGIES[key] = make()
    return found


def _vector(elem: st.SearchStrategy = small) -> st.SearchStrategy:
    """Mostly a scalar, sometimes two elements (a vector signal)."""
    return st.one_of(elem, elem, elem, st.lists(elem, min_size=2, max_size=2))


VECTOR = _vector()
ROUNDED = {bounds: _rounded(*bounds) for bounds in (
    (-1.0, 1.0), (0.05, 1.0), (0.0, 1.0), (-3.0, 0.0), (0.0, 3.0), (0.1, 4.0), (-2.0, 0.0),
    (-0.9, 0.9))}
SAMPLE_TIME = st.sampled_from(SAMPLE_TIMES)


def chance(draw, k: int) -> bool:
    """True about once in k draws (hypothesis leans towards small integers: a plain
    integers(0, k - 1) == 0 comes out true far more often)."""
    return draw(_cached(("chance", k), lambda: st.sampled_from([False] * (k - 1) + [True])))


def pick(draw, items: list) -> Any:
    """One of `items` (a list of its own each time: no strategy is built for it)."""
    return items[draw(st.integers(0, len(items) - 1))]


def _increasing(draw, n_min: int = 2, n_max: int = 5, allow_repeat: bool = False
                ) -> list[float]:
    n = draw(st.integers(n_min, n_max))
    out = [draw(ROUNDED[(-1.0, 1.0)])]
    step = ROUNDED[(0.0, 1.0) if allow_repeat else (0.05, 1.0)]
    for _ in range(n - 1):
        out.append(round(out[-1] + draw(step), 6))
    return out


def _formula_strategy(names: tuple[str, ...]) -> st.SearchStrategy:
    leaves = st.one_of(st.sampled_from(names), small.map(repr), st.just("t_"))

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(
                lambda a: f"({a[0]} {a[1]} {a[2]})"),
            st.tuples(st.sampled_from(["sin", "cos", "tanh", "atan", "abs", "exp", "sqrt",
                                       "log", "sign", "floor"]), inner).map(
                lambda a: f"{a[0]}({a[1]})"),
            st.tuples(st.sampled_from(["min", "max", "atan2", "hypot"]), inner, inner).map(
                lambda a: f"{a[0]}({a[1]}, {a[2]})"),
            st.tuples(inner, inner, inner).map(lambda a: f"({a[0]} if {a[1]} > 0 else {a[2]})"),
        )
    return st.recursive(leaves, extend, max_leaves=6)


def _formula(draw, names: tuple[str, ...]) -> str:
    text = draw(_cached(("formula", names), lambda: _formula_strategy(names)))
    return text.replace("t_", pick(draw, list(names)))


def _special(draw, type_name: str) -> dict[str, Any] | None:
    """Parameters of blocks whose parameters constrain each other; None: generic."""
    if type_name == "TransferFunction":
        order = draw(st.integers(1, 3))
        den = [draw(positive)] + [draw(positive) for _ in range(order)]
        num = [draw(small) for _ in range(draw(st.integers(1, order + 1)))]
        if not any(num):
            num[-1] = 1.0
        return {"num": num, "den": den}
    if type_name == "StateSpace":
        n = draw(st.integers(1, 2))
        a = [[draw(small) - (2.0 if i == j else 0.0) for j in range(n)] for i in range(n)]
        b = [[draw(small)] for _ in range(n)]
        c = [[draw(small) for _ in range(n)]]
        d = draw(st.sampled_from([0.0, 0.0, 1.0]))
        return {"A": a, "B": b, "C": c, "D": d, "x0": draw(small)}
    if type_name in ("DiscreteTransferFcn", "DiscreteFilter"):
        order = draw(st.integers(1, 3))
        den = [1.0] + [round(draw(ROUNDED[(-0.9, 0.9)]) / order, 3) for _ in range(order)]
        num = [draw(small) for _ in range(draw(st.integers(1, order + 1)))]
        return {"num": num, "den": den, "sample_time": draw(SAMPLE_TIME)}
    if type_name == "DiscreteStateSpace":
        n = draw(st.integers(1, 2))
        a = [[round(draw(ROUNDED[(-0.9, 0.9)]) / n, 3) for _ in range(n)] for _ in range(n)]
        return {"A": a, "B": [[draw(small)] for _ in range(n)],
                "C": [[draw(small) for _ in range(n)]], "D": draw(st.sampled_from([0.0, 1.0])),
                "sample_time": draw(SAMPLE_TIME)}
    if type_name in ("PID", "DiscreteIntegrator"):
        block_type = registry.get(type_name)
        p = {prm.name: generic_value(prm, draw) for prm in block_type.params
             if prm.name not in ("lower", "upper") and not chance(draw, 3)}
        if chance(draw, 2):
            lo = draw(ROUNDED[(-3.0, 0.0)])
            p.update(lower=lo, upper=lo + draw(ROUNDED[(0.1, 4.0)]))
        if type_name == "PID" and chance(draw, 2):
            p["sample_time"] = 0.0  # the continuous PID
        if "N" in p:
            p["N"] = abs(p["N"]) + 1.0
        return p
    if type_name == "Counter":
        upper = draw(st.integers(1, 9))
        return {"mode": draw(st.sampled_from(["limited", "free-running"])), "upper": upper,
                "initial": draw(st.integers(0, upper)), "bits": draw(st.integers(4, 8)),
                "sample_time": pick(draw, [t for t in SAMPLE_TIMES if t != -1])}
    if type_name == "LookupTable1D":
        bps = _increasing(draw)
        return {"breakpoints": bps, "table": [draw(small) for _ in bps],
                "extrapolation": draw(st.sampled_from(["clip", "linear"]))}
    if type_name == "LookupTableND":
        b1, b2 = _increasing(draw, n_max=4), _increasing(draw, n_max=4)
        return {"breakpoints1": b1, "breakpoints2": b2,
                "table": [[draw(small) for _ in b2] for _ in b1],
                "out_of_range": draw(st.sampled_from(["clip", "extrapolate"]))}
    if type_name == "Selector":
        return {"indices": [draw(st.integers(1, 2)) for _ in range(draw(st.integers(1, 3)))]}
    if type_name == "FromTable":
        times = sorted(abs(v) for v in _increasing(draw, allow_repeat=True))
        times = [v for k, v in enumerate(times) if k < 2 or not v == times[k - 1] == times[k - 2]]
        return {"times": times, "values": [draw(small) for _ in times]}
    if type_name == "RepeatingSequence":
        rest = _increasing(draw, n_min=1, n_max=4)
        times = [0.0] + [round(t - rest[0] + 0.05, 6) for t in rest]
        return {"times": times, "values": [draw(small) for _ in times]}
    if type_name == "Integrator":
        p: dict[str, Any] = {"x0": draw(small)}
        if draw(st.booleans()):
            lo, hi = draw(ROUNDED[(-3.0, 0.0)]), draw(ROUNDED[(0.0, 3.0)])
            p.update(lower=min(lo, p["x0"]), upper=max(hi, p["x0"]))
        if chance(draw, 6):
            p["ic_source"] = "input"
        return p
    if type_name == "Relay":
        on = draw(small)
        off = on - draw(ROUNDED[(0.0, 1.0)])
        return {"on_point": on, "off_point": off, "on_value": draw(small),
                "off_value": draw(small), "initial": draw(st.sampled_from(["off", "on"]))}
    if type_name in ("Saturation", "DeadZone"):
        lo = draw(ROUNDED[(-2.0, 0.0)])
        hi = lo + draw(ROUNDED[(0.0, 3.0)])
        return {"lower": lo, "upper": hi} if type_name == "Saturation" else \
            {"start": lo, "end": hi}
    if type_name == "Pulse":
        return {"amplitude": draw(VECTOR), "period": draw(st.floats(0.02, 1.0)),
                "width": draw(st.floats(1.0, 99.0)), "delay": draw(st.floats(0.0, 0.5))}
    if type_name == "Step":
        return {"time": draw(st.floats(0.0, 1.0)), "before": draw(small), "after": draw(small)}
    if type_name == "Ramp":
        return {"slope": draw(small), "start": draw(st.floats(0.0, 1.0)), "initial": draw(small)}
    if type_name == "Sine":
        return {"amplitude": draw(VECTOR), "frequency": draw(positive),
                "phase": draw(small), "bias": draw(small)}
    if type_name == "AlgebraicConstraint":
        return {"z0": draw(small)}
    if type_name == "Expression":
        names = tuple(n for n in INPUT_NAMES if chance(draw, 2)) or (pick(draw, INPUT_NAMES),)
        return {"inputs": ", ".join(names), "formula": _formula(draw, names)}
    if type_name == "Demux":
        return {"outputs": 1}
    return None


def _value_strategy(prm) -> st.SearchStrategy:
    """What `generic_value` draws for one declared parameter (built once per parameter)."""
    if prm.name == "sample_time":
        return SAMPLE_TIME
    if prm.kind == "choice":
        return st.sampled_from(prm.choices)
    if prm.kind == "bool":
        return st.booleans()
    if prm.kind == "int":
        lo = int(prm.low) if prm.low is not None else 1
        return st.integers(max(lo, 1), max(lo, 1) + 2)
    if prm.kind == "signs":
        alphabet = "*/" if "*" in str(prm.default) or "/" in str(prm.default) else "+-"
        return st.text(alphabet, min_size=0, max_size=3).map(lambda rest: alphabet[0] + rest)
    if prm.kind == "text":
        return st.just(prm.default if prm.default is not REQUIRED else "u")
    lo = prm.low if prm.low is not None else -2.0
    hi = prm.high if prm.high is not None else 2.0
    if lo == 0.0 and hi == 100.0:  # a percentage strictly inside
        lo, hi = 1.0, 99.0
    elem = _rounded(max(lo, -2.0) if hi > -2.0 else lo, min(hi, 2.0) if lo < 2.0 else hi)
    return _vector(elem) if prm.kind == "vector" else elem


def generic_value(prm, draw) -> Any:
    """A plausible value of one declared parameter from its kind, range and default."""
    return draw(_cached(("param", id(prm)), lambda: _value_strategy(prm)))


def loose_params(draw, type_name: str) -> dict[str, Any]:
    """Plausible parameters of a block of this type, not checked against its rules."""
    params = _special(draw, type_name)
    if params is None:
        params = {}
        for prm in registry.get(type_name).params:
            if prm.required or not chance(draw, 3):
                params[prm.name] = generic_value(prm, draw)
    return params


@dataclass
class Instance:
    """A block with parameters its declaration accepts: the resolved values and the ports."""

    type: str
    params: dict[str, Any]
    impl: BlockType
    p: ParamValues
    inputs: list[str]
    outputs: list[str]
    feedthrough: dict[str, tuple[str, ...]]


def problem(type_name: str, params: dict[str, Any]) -> tuple[Instance | None, str]:
    """(the instance, "") if the block's declaration accepts these parameters, else
    (None, what it says): the compiler's own checks, in its order (`params_for`, `check`,
    the ports, a discrete block's `sample_time`)."""
    block_type = registry.get(type_name)
    try:
        p = params_for(block_type, params, {}, "b", folder=SCRATCH.name)
        impl = block_type()
        message = impl.check(p)
        if message:
            return None, message
        if impl.is_discrete(p):
            impl.sample_time(p)
        inputs = [port.name for port in impl.input_ports(p)]
        outputs = [port.name for port in impl.output_ports(p)]
        feed = {k: tuple(v) for k, v in impl.feedthrough(p).items()}
    except (BlocksimError, ValueError, TypeError, KeyError, IndexError,
            ArithmeticError) as exc:  # what the compiler turns into a CompileError
        return None, str(exc)
    return Instance(type_name, params, impl, p, inputs, outputs, feed), ""


def valid_instance(draw, type_name: str, fixed: dict[str, Any] | None = None
                   ) -> Instance | None:
    """A block of this type with parameters it accepts (None: not even its defaults);
    `fixed` parameters are given, whatever is drawn."""
    block_type = registry.get(type_name)
    fixed = fixed or {}
    for _ in range(RANDOM_TRIES):
        found, _why = problem(type_name, {**loose_params(draw, type_name), **fixed})
        if found:
            return found
    defaults = {prm.name: prm.default for prm in block_type.params if not prm.required}
    for _ in range(PARTIAL_TRIES):
        drawn = loose_params(draw, type_name)
        keep = {k: v for k, v in drawn.items() if k not in defaults or chance(draw, 3)}
        found, _why = problem(type_name, {**keep, **fixed})
        if found:
            return found
    found, _why = problem(type_name, dict(fixed))
    return found
