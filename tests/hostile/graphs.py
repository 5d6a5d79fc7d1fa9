"""Hypothesis strategies for random small diagrams of library blocks, and how one is run.

`diagrams()` builds diagrams that compile by construction (graph_build: parameters each
block's declaration accepts, wires of widths its `sizes` takes, feedback only through
outputs that read no input directly, discrete rates where a block needs one), sometimes
wrapped in nested, triggered or enabled subsystems, with random solver settings: a run may
still fail (a domain error, a stiff system), and the contract only says how.
`broken_diagrams()` builds the same and breaks one thing on purpose (graph_breaks): those
must be refused with a CompileError naming a block. Block types, their parameters and
ports come from the registry, so a type added to the library is fuzzed without touching
these files.

Used by tests/test_fuzz_diagrams.py (bounded) and benchmarks/fuzz.py (long runs).
"""
from __future__ import annotations

import json
import math
import os
import re
import traceback
import warnings
from time import monotonic as _clock
from typing import Any

import numpy as np
from hypothesis import strategies as st

from blocksim.blocktypes import registry
from hostile.deadline import TimeLimit, time_limit
from hostile.graph_breaks import BREAKS, break_one
from hostile.graph_build import GATES, Builder
from hostile.graph_params import SCRATCH, chance, generic_value, pick

SKIP_TYPES = {"Inport", "Outport", "Subsystem", "TriggeredSubsystem", "EnabledSubsystem",
              "Scope", "Stop"}  # structure (see _wrapped), sinks added apart
WRAPPERS = ("Subsystem", "Subsystem", "TriggeredSubsystem", "EnabledSubsystem")
SOLVERS = ("dopri5", "dop853", "radau", "bdf", "euler", "rk4")


def fuzz_types() -> list[str]:
    """The signal block types (physical components need connections, not signals: the
    physical suite and its hostile cases exercise them)."""
    return [name for name, block_type in registry.all_types().items()
            if name not in SKIP_TYPES and not hasattr(block_type, "connector_ports")]


def _graph(draw, max_blocks: int, types: list[str] | None) -> tuple[Builder, str | None]:
    """The blocks and wires of a valid diagram, and the subsystem to wrap it in (or None)."""
    wrapper = pick(draw, WRAPPERS) if chance(draw, 4) else None
    builder = Builder(draw, triggered=wrapper == "TriggeredSubsystem")
    types = types or fuzz_types()
    for _ in range(draw(st.integers(1, max_blocks))):
        builder.add(pick(draw, types))
    if not builder.outputs():
        builder.add("Constant")
    builder.feedback()
    builder.settle_rates()
    return builder, wrapper


def _document(draw, builder: Builder, wrapper: str | None,
              solvers: tuple[str, ...]) -> tuple[dict, dict]:
    """The diagram document (sinks, diagram parameters, the wrapping) and the settings."""
    blocks, wires = builder.blocks_and_wires()
    outputs = builder.outputs()
    logged = list(dict.fromkeys(pick(draw, outputs) for _ in range(draw(st.integers(1, 3))))) \
        if outputs else []
    sinks = []
    for k, (bid, out) in enumerate(logged):
        sinks.append({"id": f"y{k}", "type": "Output", "params": {}})
        wires.append((f"{bid}.{out}", f"y{k}.u"))
    if outputs and chance(draw, 10):
        bid, out = pick(draw, outputs)
        sinks.append({"id": "halt", "type": "Stop", "params": {}})
        wires.append((f"{bid}.{out}", "halt.u"))
    parameters: dict[str, Any] = {}
    for inst in blocks:  # some numbers become diagram parameters used in expressions
        for key, value in list(inst.get("params", {}).items()):
            numeric = isinstance(value, (int, float, list)) and not isinstance(value, bool)
            if numeric and chance(draw, 5):
                name = f"p{len(parameters)}"
                parameters[name] = value
                inst["params"][key] = draw(st.sampled_from(
                    [name, f"{name} * 1", f"({name} + 0)", f"array({name})" if isinstance(
                        value, list) else f"min({name}, {name})"]))
    document = {"format": "blocksim", "version": 1, "parameters": parameters,
                "simulation": {}, "blocks": blocks + sinks,
                "wires": [{"src": s, "dst": d} for s, d in wires]}
    if wrapper is not None:
        document = _wrapped(document, depth=draw(st.integers(1, 3)), wrapper=wrapper, draw=draw)
    solver = draw(st.sampled_from(solvers))
    stop = draw(st.sampled_from([0.05, 0.3, 1.0, 2.0, 5.0]))
    settings: dict[str, Any] = {"solver": solver, "stop_time": stop}
    if solver in ("euler", "rk4"):
        settings["step"] = stop / draw(st.sampled_from([10, 100, 1000]))
    else:
        if draw(st.booleans()):
            settings["rtol"] = draw(st.sampled_from([1e-3, 1e-6, 1e-9]))
            settings["atol"] = settings["rtol"] * 1e-2
        if chance(draw, 4):
            settings["max_step"] = stop / draw(st.sampled_from([5, 50]))
    if chance(draw, 3):
        settings["output_interval"] = stop / draw(st.sampled_from([7, 100]))
    return document, settings


@st.composite
def diagrams(draw, max_blocks: int = 7, solvers: tuple[str, ...] = SOLVERS,
             types: list[str] | None = None) -> tuple[dict, dict]:
    """(diagram document, simulate() keyword arguments) of a valid random diagram."""
    builder, wrapper = _graph(draw, max_blocks, types)
    return _document(draw, builder, wrapper, solvers)


@st.composite
def broken_diagrams(draw, max_blocks: int = 7, solvers: tuple[str, ...] = SOLVERS,
                    types: list[str] | None = None) -> tuple[dict, dict, str]:
    """(document, settings, what was broken) of a diagram that must be refused: a valid
    one with one thing broken on purpose (`graph_breaks.BREAKS`)."""
    builder, wrapper = _graph(draw, max_blocks, types)
    what = break_one(draw, builder, draw(st.sampled_from(BREAKS)))
    document, settings = _document(draw, builder, wrapper, solvers)
    return document, settings, what


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
        elif s_blk in sources:  # one wire into the Inport, however many it feeds inside
            if (src, "sub.i0") not in top_wires:
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
        outer["params"] = {prm.name: generic_value(prm, draw)
                           for prm in registry.get(wrapper).params if prm.kind == "choice"}
        kind = pick(draw, GATES)
        gate = {"id": "gate", "type": kind["type"], "params": dict(kind["params"])}
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


def run_example(document: dict, settings: dict, backend: str = "python",
                cap: float = 10.0, info: dict | None = None) -> tuple[str | None, str]:
    """Run one generated diagram; (None, "") if the contract holds, else (kind, detail).

    `info`, when given, receives "outcome" (finished, stopped, or the error class name),
    "results" (on success), "seconds", and for an error its "message" and "block".

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
    diagram.path = os.path.join(SCRATCH.name, "fuzz.json")  # a ToFile writes beside it
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
        info["block"] = getattr(exc, "block", None)
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


def refusal_problem(document: dict, settings: dict, cap: float = 10.0,
                    info: dict | None = None) -> tuple[str | None, str]:
    """A broken diagram (`broken_diagrams`): (None, "") if it is refused with a one-line
    CompileError naming a block, else (kind, detail) as `run_example` gives them."""
    info = info if info is not None else {}
    kind, detail = run_example(document, settings, "python", cap, info)
    if kind and not kind.startswith("soft:"):
        return kind, detail
    outcome = info.get("outcome")
    if outcome in ("finished", "stopped"):
        return "broken: a broken diagram ran", ""
    if outcome != "CompileError":
        return f"broken: {outcome}, not a CompileError", info.get("message", "")
    if not info.get("block"):
        return "broken: the refusal names no block", info.get("message", "")
    return kind, detail


_SHAPES = [(re.compile(p), r) for p, r in (
    (r"^.*?fuzz\.json, ", ""), (r"'[^']*'", "'X'"), (r"\([^()]*\)", "(..)"),
    (r"\[[^\]]*\]", "[..]"), (r"-?\d+(\.\d+)?(e-?\d+)?", "N"), (r"\bt = N, ", ""))]


def message_shape(message: str) -> str:
    """An error message with its names, values and file left out: what kind of refusal or
    failure it is, to count them by kind."""
    for pattern, replacement in _SHAPES:
        message = pattern.sub(replacement, message)
    return message[:160]


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
