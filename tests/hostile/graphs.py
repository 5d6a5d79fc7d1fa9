"""Hypothesis strategies for VALID diagrams: random small graphs of library blocks.

Block types, their parameters and their ports come from the registry (`registry.all_types()`,
each type's `params`, `input_ports(p)`, `output_ports(p)` and `feedthrough(p)`), so a block
type added to the library is fuzzed without touching this file. Parameters are random but
plausible (a handful of blocks with coupled parameters get a generator of their own; any
other type falls back to its declared kinds, ranges and defaults). Inputs are wired to
outputs of earlier blocks, or to outputs with no direct feedthrough (integrators, memories,
latched discontinuities), so the graph has no algebraic loop by construction; a run may still
be refused or fail (a domain error, a stiff system): the contract only says how.

Used by tests/test_fuzz_diagrams.py (bounded) and benchmarks/fuzz.py (long runs).
"""
from __future__ import annotations

import json
import math
import os
import re
import tempfile
import traceback
import warnings
from time import monotonic as _clock
from typing import Any

import numpy as np
from hypothesis import strategies as st

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import REQUIRED, ParamValues
from hostile.deadline import TimeLimit, time_limit

SKIP_TYPES = {"Inport", "Outport", "Subsystem", "TriggeredSubsystem", "EnabledSubsystem",
              "Scope", "Stop"}  # structure (see _wrapped), sinks added apart
WRAPPERS = ("Subsystem", "Subsystem", "TriggeredSubsystem", "EnabledSubsystem")
SAMPLE_TIMES = (0.1, 0.25, 1.0, -1, [0.2, 0.05], [0.3, 0.0])
SOURCE_TYPES = ("Constant", "Clock", "Sine", "Step", "Ramp", "Pulse")
SOLVERS = ("dopri5", "dop853", "radau", "bdf", "euler", "rk4")
INPUT_NAMES = ("u", "v", "w")

small = st.one_of(
    st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False).map(lambda v: round(v, 3)),
    st.sampled_from([0.0, 1.0, -1.0, 1e3, -1e3, 1e-6]))
positive = st.floats(0.05, 3.0).map(lambda v: round(v, 3))


def _vector(elem: st.SearchStrategy = small) -> st.SearchStrategy:
    """Mostly a scalar, sometimes two elements (a vector signal)."""
    return st.one_of(elem, elem, elem, st.lists(elem, min_size=2, max_size=2))


@st.composite
def _increasing(draw, n_min: int = 2, n_max: int = 5, allow_repeat: bool = False) -> list[float]:
    n = draw(st.integers(n_min, n_max))
    start = draw(st.floats(-1.0, 1.0).map(lambda v: round(v, 3)))
    steps = draw(st.lists(st.floats(0.0 if allow_repeat else 0.05, 1.0).map(
        lambda v: round(v, 3)), min_size=n - 1, max_size=n - 1))
    out = [start]
    for s in steps:
        out.append(round(out[-1] + (s if s > 0 or allow_repeat else 0.05), 6))
    return out


@st.composite
def _formula(draw, names: list[str]) -> str:
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
    text = draw(st.recursive(leaves, extend, max_leaves=6))
    return text.replace("t_", draw(st.sampled_from(names)))


@st.composite
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
        den = [1.0] + [round(draw(st.floats(-0.9, 0.9)) / order, 3) for _ in range(order)]
        num = [draw(small) for _ in range(draw(st.integers(1, order + 1)))]
        return {"num": num, "den": den, "sample_time": draw(st.sampled_from(SAMPLE_TIMES))}
    if type_name == "DiscreteStateSpace":
        n = draw(st.integers(1, 2))
        a = [[round(draw(st.floats(-0.9, 0.9)) / n, 3) for _ in range(n)] for _ in range(n)]
        return {"A": a, "B": [[draw(small)] for _ in range(n)],
                "C": [[draw(small) for _ in range(n)]], "D": draw(st.sampled_from([0.0, 1.0])),
                "sample_time": draw(st.sampled_from(SAMPLE_TIMES))}
    if type_name in ("PID", "DiscreteIntegrator"):
        block_type = registry.get(type_name)
        p = {prm.name: _generic(prm, draw) for prm in block_type.params
             if prm.name not in ("lower", "upper") and not _chance(draw, 3)}
        if _chance(draw, 2):
            lo = draw(st.floats(-3, 0).map(lambda v: round(v, 3)))
            p.update(lower=lo, upper=lo + draw(st.floats(0.1, 4).map(lambda v: round(v, 3))))
        if type_name == "PID" and _chance(draw, 2):
            p["sample_time"] = 0.0  # the continuous PID
        if "N" in p:
            p["N"] = abs(p["N"]) + 1.0
        return p
    if type_name == "Counter":
        upper = draw(st.integers(1, 9))
        return {"mode": draw(st.sampled_from(["limited", "free-running"])), "upper": upper,
                "initial": draw(st.integers(0, upper)), "bits": draw(st.integers(4, 8)),
                "sample_time": draw(st.sampled_from([t for t in SAMPLE_TIMES if t != -1]))}
    if type_name == "LookupTable1D":
        bps = draw(_increasing())
        return {"breakpoints": bps, "table": [draw(small) for _ in bps],
                "extrapolation": draw(st.sampled_from(["clip", "linear"]))}
    if type_name == "LookupTableND":
        b1, b2 = draw(_increasing(n_max=4)), draw(_increasing(n_max=4))
        return {"breakpoints1": b1, "breakpoints2": b2,
                "table": [[draw(small) for _ in b2] for _ in b1],
                "out_of_range": draw(st.sampled_from(["clip", "extrapolate"]))}
    if type_name == "Selector":
        return {"indices": draw(st.lists(st.integers(1, 2), min_size=1, max_size=3))}
    if type_name == "FromTable":
        times = sorted(abs(v) for v in draw(_increasing(allow_repeat=True)))
        times = [v for k, v in enumerate(times) if k < 2 or not v == times[k - 1] == times[k - 2]]
        return {"times": times, "values": [draw(small) for _ in times]}
    if type_name == "Integrator":
        p: dict[str, Any] = {"x0": draw(small)}
        if draw(st.booleans()):
            lo = draw(st.floats(-3, 0).map(lambda v: round(v, 3)))
            hi = draw(st.floats(0, 3).map(lambda v: round(v, 3)))
            p.update(lower=min(lo, p["x0"]), upper=max(hi, p["x0"]))
        if _chance(draw, 6):
            p["ic_source"] = "input"
        return p
    if type_name == "Relay":
        on = draw(small)
        off = on - draw(st.floats(0, 1).map(lambda v: round(v, 3)))
        return {"on_point": on, "off_point": off, "on_value": draw(small),
                "off_value": draw(small), "initial": draw(st.sampled_from(["off", "on"]))}
    if type_name == "Saturation":
        lo = draw(st.floats(-2, 0).map(lambda v: round(v, 3)))
        return {"lower": lo, "upper": lo + draw(st.floats(0, 3).map(lambda v: round(v, 3)))}
    if type_name == "Pulse":
        return {"amplitude": draw(_vector()), "period": draw(st.floats(0.02, 1.0)),
                "width": draw(st.floats(1.0, 99.0)), "delay": draw(st.floats(0.0, 0.5))}
    if type_name == "Step":
        return {"time": draw(st.floats(0.0, 1.0)), "before": draw(small), "after": draw(small)}
    if type_name == "Ramp":
        return {"slope": draw(small), "start": draw(st.floats(0.0, 1.0)), "initial": draw(small)}
    if type_name == "Sine":
        return {"amplitude": draw(_vector()), "frequency": draw(positive),
                "phase": draw(small), "bias": draw(small)}
    if type_name == "AlgebraicConstraint":
        return {"z0": draw(small)}
    if type_name == "Expression":
        names = sorted(draw(st.sets(st.sampled_from(INPUT_NAMES), min_size=1, max_size=3)))
        return {"inputs": ", ".join(names), "formula": draw(_formula(names))}
    if type_name == "Demux":
        return {"outputs": 1}
    if type_name in ("Mux", "LogicalOperator"):
        return None
    return None


def _generic(prm, draw) -> Any:
    """A plausible value of one declared parameter from its kind, range and default."""
    if prm.name == "sample_time":
        return draw(st.sampled_from(SAMPLE_TIMES))
    if prm.kind == "choice":
        return draw(st.sampled_from(prm.choices))
    if prm.kind == "bool":
        return draw(st.booleans())
    if prm.kind == "int":
        lo = int(prm.low) if prm.low is not None else 1
        return draw(st.integers(max(lo, 1), max(lo, 1) + 2))
    if prm.kind == "signs":
        alphabet = "*/" if "*" in str(prm.default) or "/" in str(prm.default) else "+-"
        first = alphabet[0]
        rest = draw(st.text(alphabet, min_size=0, max_size=3))
        return first + rest
    if prm.kind == "text":
        return prm.default if prm.default is not REQUIRED else "u"
    lo = prm.low if prm.low is not None else -2.0
    hi = prm.high if prm.high is not None else 2.0
    if lo == 0.0 and hi == 100.0:  # a percentage strictly inside
        lo, hi = 1.0, 99.0
    elem = st.floats(max(lo, -2.0) if hi > -2.0 else lo, min(hi, 2.0) if lo < 2.0 else hi,
                     allow_nan=False, allow_infinity=False).map(lambda v: round(v, 3))
    return draw(_vector(elem) if prm.kind == "vector" else elem)


def _resolved(block_type, params: dict[str, Any]) -> ParamValues:
    """Parameter values as the compiler would hand them to the block (for its ports)."""
    values = {}
    for prm in block_type.params:
        raw = params.get(prm.name, prm.default)
        if raw is REQUIRED:
            raw = 0.0
        if prm.kind in ("scalar", "int"):
            raw = int(raw) if prm.kind == "int" else float(raw)
        elif prm.kind == "vector":
            arr = np.asarray(raw, dtype=float)
            raw = float(arr) if arr.ndim == 0 else arr
        values[prm.name] = raw
    return ParamValues(values)


def _chance(draw, k: int) -> bool:
    """True about once in k draws (hypothesis leans towards small integers: a plain
    integers(0, k - 1) == 0 comes out true far more often)."""
    return draw(st.sampled_from([False] * (k - 1) + [True]))


def fuzz_types() -> list[str]:
    return [name for name in registry.all_types() if name not in SKIP_TYPES]


@st.composite
def block_instance(draw, type_name: str) -> dict[str, Any]:
    block_type = registry.get(type_name)
    params = draw(_special(type_name))
    if params is None:
        params = {}
        for prm in block_type.params:
            if prm.required or not _chance(draw, 3):
                params[prm.name] = _generic(prm, draw)
    return {"type": type_name, "params": params}


@st.composite
def diagrams(draw, max_blocks: int = 7, solvers: tuple[str, ...] = SOLVERS,
             types: list[str] | None = None) -> tuple[dict, dict]:
    """(diagram document, simulate() keyword arguments) of a valid random diagram."""
    types = types or fuzz_types()
    count = draw(st.integers(1, max_blocks))
    blocks: list[dict] = []
    ports: list[tuple[list[str], list[str], dict]] = []  # inputs, outputs, feedthrough
    for i in range(count):
        inst = draw(block_instance(draw(st.sampled_from(types))))
        block_type = registry.get(inst["type"])()
        p = _resolved(type(block_type), inst["params"])
        try:
            ins = [port.name for port in block_type.input_ports(p)]
            outs = [port.name for port in block_type.output_ports(p)]
            through = {k: tuple(v) for k, v in block_type.feedthrough(p).items()}
        except Exception:  # a parameter set the ports cannot be computed for: use a source
            inst = {"type": "Constant", "params": {"value": 1.0}}
            ins, outs, through = [], ["y"], {"y": ()}
        inst["id"] = f"b{i}"
        blocks.append(inst)
        ports.append((ins, outs, through))
    # outputs that break loops (no direct feedthrough) may drive any input
    delayed = [(f"b{i}", out) for i, (_, outs, through) in enumerate(ports)
               for out in outs if not through.get(out)]
    wires: list[tuple[str, str]] = []
    extra: list[dict] = []
    prewired: set[tuple[int, str]] = set()
    for i, inst in enumerate(blocks):
        if inst["type"] == "AlgebraicConstraint":  # close its loop: f(z) = z**3 + z - c
            c = draw(small)
            extra.append({"id": f"f{i}", "type": "Expression",
                          "params": {"formula": f"u ** 3 + u - ({c!r})"}})
            wires += [(f"b{i}.z", f"f{i}.u"), (f"f{i}.y", f"b{i}.f")]
            prewired.add((i, "f"))
    for j, (ins, _, _) in enumerate(ports):
        earlier = [(f"b{i}", out) for i in range(j) for out in ports[i][1]]
        for port in ins:
            if (j, port) in prewired:
                continue
            candidates = earlier + [d for d in delayed if d not in earlier]
            if candidates and not _chance(draw, 6):
                src = draw(st.sampled_from(candidates))
            else:
                sid = f"s{len(extra)}"
                extra.append({"id": sid, **draw(block_instance(draw(st.sampled_from(
                    SOURCE_TYPES))))})
                src = (sid, "y")
            wires.append((f"{src[0]}.{src[1]}", f"b{j}.{port}"))
    outputs = [(f"b{i}", out) for i, (_, outs, _) in enumerate(ports) for out in outs]
    logged = draw(st.lists(st.sampled_from(outputs), min_size=1, max_size=3, unique=True)) \
        if outputs else []
    sinks = []
    for k, (bid, out) in enumerate(logged):
        sinks.append({"id": f"y{k}", "type": "Output", "params": {}})
        wires.append((f"{bid}.{out}", f"y{k}.u"))
    if outputs and _chance(draw, 10):
        bid, out = draw(st.sampled_from(outputs))
        sinks.append({"id": "halt", "type": "Stop", "params": {}})
        wires.append((f"{bid}.{out}", "halt.u"))
    parameters: dict[str, Any] = {}
    for inst in blocks:  # some numbers become diagram parameters used in expressions
        for key, value in list(inst["params"].items()):
            numeric = isinstance(value, (int, float, list)) and not isinstance(value, bool)
            if numeric and _chance(draw, 5):
                name = f"p{len(parameters)}"
                parameters[name] = value
                inst["params"][key] = draw(st.sampled_from(
                    [name, f"{name} * 1", f"({name} + 0)", f"array({name})" if isinstance(
                        value, list) else f"min({name}, {name})"]))
    document = {"format": "blocksim", "version": 1, "parameters": parameters,
                "simulation": {}, "blocks": extra + blocks + sinks,
                "wires": [{"src": s, "dst": d} for s, d in wires]}
    if _chance(draw, 4):
        document = _wrapped(document, depth=draw(st.integers(1, 3)),
                            wrapper=draw(st.sampled_from(WRAPPERS)), draw=draw)
    solver = draw(st.sampled_from(solvers))
    stop = draw(st.sampled_from([0.05, 0.3, 1.0, 2.0, 5.0]))
    settings: dict[str, Any] = {"solver": solver, "stop_time": stop}
    if solver in ("euler", "rk4"):
        settings["step"] = stop / draw(st.sampled_from([10, 100, 1000]))
    else:
        if draw(st.booleans()):
            settings["rtol"] = draw(st.sampled_from([1e-3, 1e-6, 1e-9]))
            settings["atol"] = settings["rtol"] * 1e-2
        if _chance(draw, 4):
            settings["max_step"] = stop / draw(st.sampled_from([5, 50]))
    if _chance(draw, 3):
        settings["output_interval"] = stop / draw(st.sampled_from([7, 100]))
    return document, settings


def _wrapped(document: dict, depth: int, wrapper: str = "Subsystem", draw=None) -> dict:
    """The same diagram with everything but its sinks and first source inside `depth` nested
    subsystems: sinks read Outports, the first source enters through an Inport. The outermost
    may be a TriggeredSubsystem or an EnabledSubsystem, gated by a pulse or a sine."""
    sinks = {b["id"] for b in document["blocks"] if b["type"] in ("Output", "Stop")}
    sources = [b["id"] for b in document["blocks"] if b["id"].startswith("s")][:1]
    inside = [b for b in document["blocks"] if b["id"] not in sinks and b["id"] not in sources]
    outside = [b for b in document["blocks"] if b["id"] in sinks or b["id"] in sources]
    wires = [(w["src"], w["dst"]) for w in document["wires"]]
    inner_wires, top_wires, outs = [], [], {}
    for src, dst in wires:
        s_blk, d_blk = src.split(".")[0], dst.split(".")[0]
        if d_blk in sinks and s_blk in sources:
            top_wires.append((src, dst))
        elif d_blk in sinks:  # leaves the subsystem through an Outport (one per source port)
            port = outs.setdefault(src, f"o{len(outs)}")
            top_wires.append((f"sub.{port}", dst))
        elif s_blk in sources:
            top_wires.append((src, "sub.i0"))
            inner_wires.append(("i0.y", dst))
        else:
            inner_wires.append((src, dst))
    inner_blocks = inside + [{"id": port, "type": "Outport", "params": {}}
                             for port in outs.values()]
    inner_wires += [(src, f"{port}.u") for src, port in outs.items()]
    if sources and any(src.startswith("i0.") for src, _ in inner_wires):
        inner_blocks.append({"id": "i0", "type": "Inport", "params": {}})
    else:
        top_wires = [(a, b) for a, b in top_wires if b != "sub.i0"]
    body = {"blocks": inner_blocks, "wires": [{"src": a, "dst": b} for a, b in inner_wires]}
    for _ in range(depth - 1):  # pass-through levels: the same ports one level further in
        ports_in = [b["id"] for b in body["blocks"] if b["type"] == "Inport"]
        ports_out = [b["id"] for b in body["blocks"] if b["type"] == "Outport"]
        body = {"blocks": [{"id": p, "type": "Inport", "params": {}} for p in ports_in]
                + [{"id": "sub", "type": "Subsystem", "diagram": body}]
                + [{"id": p, "type": "Outport", "params": {}} for p in ports_out],
                "wires": [{"src": f"{p}.y", "dst": f"sub.{p}"} for p in ports_in]
                + [{"src": f"sub.{p}", "dst": f"{p}.u"} for p in ports_out]}
    outer: dict[str, Any] = {"id": "sub", "type": wrapper, "diagram": body}
    if wrapper != "Subsystem" and registry.get(wrapper) is not None and draw is not None:
        outer["params"] = {prm.name: _generic(prm, draw) for prm in registry.get(wrapper).params
                           if prm.kind == "choice"}
        gate = draw(st.sampled_from([
            {"id": "gate", "type": "Pulse", "params": {"period": 0.3, "width": 40.0}},
            {"id": "gate", "type": "Sine", "params": {"frequency": 2.0}},
            {"id": "gate", "type": "Step", "params": {"time": 0.5}}]))
        outside.append(gate)
        port = "trigger" if wrapper.startswith("Triggered") else "enable"
        top_wires.append(("gate.y", f"sub.{port}"))
    elif wrapper != "Subsystem":
        outer["type"] = "Subsystem"
    return {**document, "blocks": outside + [outer],
            "wires": [{"src": a, "dst": b} for a, b in top_wires]}


def describe(document: dict, settings: dict, backend: str = "python") -> str:
    """A reproducer: the settings and the diagram as JSON."""
    return (f"simulate(backend={backend!r}, **{json.dumps(settings)}) of\n"
            f"{json.dumps(document, allow_nan=True)}")


class Hang(TimeLimit):
    """The run used up its cap (CPU seconds; wall seconds: three times that)."""


# Where generated diagrams live while they run (removed when the process ends).
_SCRATCH = tempfile.TemporaryDirectory(prefix="blocksim-fuzz-")


def run_example(document: dict, settings: dict, backend: str = "python",
                cap: float = 10.0, info: dict | None = None) -> tuple[str | None, str]:
    """Run one generated diagram; (None, "") if the contract holds, else (kind, detail).

    `info`, when given, receives "outcome" (finished, stopped, or the error class name),
    "results" (on success) and "seconds".

    The contract: the run finishes (results with a non-decreasing time that reaches the stop
    time unless a Stop block ended it) or raises a BlocksimError with a one-line message;
    never another exception, never longer than `cap` seconds. `kind` is a short fixed text
    that groups failures; "message names X" kinds are soft (not the run invariant).
    """
    import blocksim
    from blocksim.errors import BlocksimError
    from blocksim.diagram.format import diagram_from_dict

    try:
        diagram = diagram_from_dict(document, source="fuzz.json")
    except BlocksimError as exc:
        return "generator: the format refused a generated diagram", str(exc)
    diagram.path = os.path.join(_SCRATCH.name, "fuzz.json")  # a ToFile writes beside it
    info = info if info is not None else {}
    info["outcome"], info["results"] = "?", None
    t0 = _clock()
    try:
        try:
            with time_limit(cap, Hang), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results = blocksim.simulate(diagram, backend=backend, **settings)
        finally:
            info["seconds"] = _clock() - t0
    except Hang:
        info["outcome"] = "hang"
        return f"hang: over {cap:g} s of CPU", ""
    except BlocksimError as exc:
        info["outcome"] = type(exc).__name__
        message = info["message"] = str(exc)
        if not message.strip() or "\n" in message.strip():
            return "error message not one line", message
        leak = LEAKY.search(message)
        if leak:
            return f"soft: message names {leak.group(1)}", message
        return None, ""
    except Exception as exc:  # noqa: BLE001 - the finding
        info["outcome"] = "crash"
        return f"{type(exc).__name__} at {where(exc)}", f"{type(exc).__name__}: {exc}"
    info["outcome"], info["results"] = results.status, results
    time = np.asarray(results.time)
    if time.size == 0:
        return "results: no rows", ""
    if np.any(np.diff(time) < 0):
        return "results: time goes backwards", ""
    stop = settings.get("stop_time", diagram.simulation.stop)
    if results.status == "finished" and not math.isclose(time[-1], stop, rel_tol=1e-9,
                                                         abs_tol=1e-12):
        return "results: finished before the stop time", f"last time {time[-1]!r}"
    return None, ""


LEAKY = re.compile(
    r"\b(ValueError|KeyError|TypeError|IndexError|AttributeError|ZeroDivisionError|"
    r"OverflowError|RuntimeError|AssertionError|NameError|RecursionError|MemoryError|"
    r"FloatingPointError|LinAlgError|NotImplementedError|UnboundLocalError)\b")


def where(exc: BaseException) -> str:
    """module:line of the innermost frame inside blocksim."""
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [f for f in frames if "/blocksim/" in f.filename or "/blocks/" in f.filename]
    frame = (inside or frames)[-1] if (inside or frames) else None
    if frame is None:
        return "?"
    path = frame.filename
    for marker in ("/blocksim/", "/blocks/"):
        if marker in path:
            path = path[path.rindex(marker) + 1:]
            break
    return f"{path}:{frame.lineno}"
