"""The sampled-data library: sample times, holds, gated subsystems."""
from __future__ import annotations

from typing import Any

from hostile.cases.base import (ANY, BAD, Corpus, blk, doc)
from hostile.cases.numerics import _source_to


# Category: sample times and conditional subsystems


def _held(sample_time: Any, block: str = "ZeroOrderHold", stop: float = 1.0, **sim) -> dict:
    return doc([blk("s", "Sine"), blk("h", block, sample_time=sample_time), blk("y", "Output")],
               [("s.y", "h.u"), ("h.y", "y.u")], stop=stop, **sim)


def _gated(kind: str, inner_blocks: list, inner_wires: list, gate: dict | None = None,
           params: dict | None = None, port: str | None = None) -> dict:
    port = port or ("trigger" if kind == "TriggeredSubsystem" else "enable")
    gate = gate or blk("g", "Pulse", period=0.2)
    sub = {"id": "sub", "type": kind, "params": params or {},
           "diagram": {"blocks": inner_blocks,
                       "wires": [{"src": a, "dst": b} for a, b in inner_wires]}}
    return doc([gate, blk("c", "Clock"), sub, blk("y", "Output")],
               [("g.y", f"sub.{port}"), ("c.y", "sub.x"), ("sub.out", "y.u")], stop=1.0)


def discrete(c: Corpus) -> None:
    cat = "discrete"
    for name, st, exits in (
            ("zero", 0, BAD), ("negative", -0.5, BAD), ("minus-2", -2, BAD),
            ("tiny", 1e-300, ANY), ("denormal", 5e-324, ANY), ("1e-9", 1e-9, ANY),
            ("1e-7", 1e-7, ANY), ("huge", 1e300, ANY), ("inf", "inf", BAD),
            ("nan", "inf - inf", BAD), ("offset-equals-period", [0.1, 0.1], BAD),
            ("offset-negative", [0.1, -0.05], BAD), ("offset-huge", [0.1, 1e300], BAD),
            ("three-elements", [0.1, 0.0, 0.0], BAD), ("empty-list", [], BAD),
            ("matrix", [[0.1, 0.0]], (0, 2)), ("string", "fast", BAD), ("bool", True, (0, 2)),
            ("expression", "2 * 0.05", (0,)), ("inherited-from-continuous", -1, (0, 2)),
            ("irrational", "pi / 10", (0,)), ("third", "1 / 3", (0,)),
            ("offset-almost-period", [0.1, "0.1 - 1e-17"], ANY)):
        for block in ("ZeroOrderHold", "UnitDelay"):
            c.run_case(cat, f"{block}-sample-time-{name}", _held(st, block), ["-q"],
                       exits=exits, mentions=("h", "sample_time") if exits == BAD else (),
                       budget=5.0)
    # many rates at once: hits that nearly coincide
    rates = doc([blk("s", "Sine")] + [blk(f"h{i}", "ZeroOrderHold", sample_time=f"1 / {n}")
                                      for i, n in enumerate((3, 7, 11, 13, 17, 19, 23, 29))]
                + [blk(f"y{i}", "Output") for i in range(8)],
                [("s.y", f"h{i}.u") for i in range(8)] + [(f"h{i}.y", f"y{i}.u")
                                                           for i in range(8)], stop=10.0)
    c.run_case(cat, "eight-coprime-rates", rates, ["-q"], exits=(0,))
    counter = doc([blk("d", "UnitDelay", sample_time=0.001), blk("one", "Constant"),
                   blk("s", "Sum", signs="++"), blk("y", "Output")],
                  [("s.y", "d.u"), ("d.y", "s.u1"), ("one.y", "s.u2"), ("d.y", "y.u")],
                  stop=1.0)
    c.run_case(cat, "unit-delay-counter-1000-hits", counter, ["-q"], exits=(0,))
    loop = doc([blk("h", "ZeroOrderHold", sample_time=0.1), blk("g", "Gain", k=0.5),
                blk("y", "Output")], [("h.y", "g.u"), ("g.y", "h.u"), ("h.y", "y.u")], stop=1.0)
    c.run_case(cat, "zoh-direct-loop", loop, ["-q"], exits=(0, 2))
    c.run_case(cat, "zoh-1e-9-on-10s", _held(1e-9, stop=10.0), ["-q"], exits=ANY,
               note="1e10 hits: refuse or fail, not run for hours")
    c.run_case(cat, "unit-delay-1e-7-on-1s", _held(1e-7, "UnitDelay"), ["-q"], exits=ANY)
    c.run_case(cat, "zoh-start-1e9", _held(0.1, start=1e9, stop=1e9 + 1), ["-q"], exits=ANY)
    c.run_case(cat, "zoh-rk4-step-not-dividing", _held(0.1), ["-q", "--solver", "rk4",
                                                              "--step", "0.03"], exits=(0,))
    c.run_case(cat, "set-unknown-with-rates", _held(0.1), ["-q", "--set", "x=1"], exits=BAD)
    # the discrete library with hostile sizes and values (types missing from the registry
    # are refused as unknown, which the contract allows too)
    for name, (btype, params, exits) in {
            "tapped-delay-1e9": ("TappedDelay", {"delays": "10**9"}, ANY),
            "tapped-delay-1e6": ("TappedDelay", {"delays": 1000000}, ANY),
            "tapped-delay-0": ("TappedDelay", {"delays": 0}, BAD),
            "tapped-delay-fraction": ("TappedDelay", {"delays": 2.5}, BAD),
            "counter-bits-1e6": ("Counter", {"mode": "free-running", "bits": 1000000}, ANY),
            "counter-bits-1024": ("Counter", {"mode": "free-running", "bits": 1024}, ANY),
            "counter-upper-negative": ("Counter", {"upper": -1}, BAD),
            "counter-upper-1e300": ("Counter", {"upper": 1e300}, ANY),
            "dtf-den-leading-zero": ("DiscreteTransferFcn", {"den": [0, 1]}, BAD),
            "dtf-den-1e5": ("DiscreteTransferFcn", {"den": "ones(100000)"}, ANY),
            "dtf-improper": ("DiscreteTransferFcn", {"num": [1, 2, 3], "den": [1, 0.5], "powers": "z"}, BAD),
            "dtf-unstable": ("DiscreteTransferFcn", {"num": [1], "den": [1, -1e3]}, (0, 1)),
            "dfilter-den-zero": ("DiscreteFilter", {"den": [0.0]}, BAD),
            "dss-a-1e4": ("DiscreteStateSpace", {"A": "zeros(10000)", "B": 1, "C": 1}, ANY),
            "dintegrator-k-1e308": ("DiscreteIntegrator", {"K": 1e308}, (0, 1)),
            "dintegrator-lower-above-upper": ("DiscreteIntegrator", {"lower": 1, "upper": 0},
                                              BAD),
            "pid-n-zero": ("PID", {"D": 1.0, "N": 0.0}, BAD),
            "pid-n-negative": ("PID", {"D": 1.0, "N": -5.0}, BAD),
            "pid-n-1e300": ("PID", {"D": 1.0, "N": 1e300}, ANY),
            "pid-discrete-n-1e300": ("PID", {"D": 1.0, "N": 1e300, "sample_time": 0.01}, ANY),
            "pid-limits-crossed": ("PID", {"lower": 1.0, "upper": -1.0}, BAD),
            "pid-sample-time-1e-9": ("PID", {"sample_time": 1e-9}, ANY),
            "detect-change-1e-9": ("DetectChange", {"sample_time": 1e-9}, ANY),
    }.items():
        d = _source_to(blk("b", btype, **params), ["u"], 1.0, blk("src", "Sine"))
        c.run_case(cat, name, d, ["-q"], exits=exits,
                   mentions=("b",) if exits == BAD else ())
    inner = [blk("x", "Inport"), blk("i", "Integrator"), blk("out", "Outport")]
    inner_wires = [("x.y", "i.u"), ("i.y", "out.u")]
    for kind in ("TriggeredSubsystem", "EnabledSubsystem"):
        port = "trigger" if kind == "TriggeredSubsystem" else "enable"
        c.run_case(cat, f"{kind}-plain", _gated(kind, inner, inner_wires), ["-q"], exits=(0, 2))
        d = _gated(kind, inner, inner_wires)
        d["wires"] = [w for w in d["wires"] if not w["dst"].endswith(port)]
        c.run_case(cat, f"{kind}-gate-unwired", d, ["-q"], exits=BAD, mentions=("sub", port))
        clash = [blk(port, "Inport"), blk("x", "Inport"), blk("out", "Outport")]
        c.run_case(cat, f"{kind}-inport-named-{port}",
                   _gated(kind, clash, [("x.y", "out.u")]), ["-q"], exits=BAD,
                   mentions=("sub", port))
        d = _gated(kind, inner, inner_wires)
        del d["blocks"][2]["diagram"]
        c.run_case(cat, f"{kind}-without-diagram", d, ["-q"], exits=BAD, mentions=("sub",))
        for pname, value in (("edge", "sideways"), ("states_when_enabling", "later"),
                             ("outputs_when_disabled", 1), ("nope", 1)):
            c.run_case(cat, f"{kind}-param-{pname}",
                       _gated(kind, inner, inner_wires, params={pname: value}), ["-q"],
                       exits=BAD)
        fast_gate = blk("g", "Pulse", period=1e-6)
        c.run_case(cat, f"{kind}-gate-1e-6-period", _gated(kind, inner, inner_wires, fast_gate),
                   ["-q"], exits=ANY, note="a million gate edges: refuse or fail, fast")
        chatter = blk("g", "Sine", frequency=1e5)
        c.run_case(cat, f"{kind}-gate-fast-sine", _gated(kind, inner, inner_wires, chatter),
                   ["-q"], exits=ANY)
        nested = _gated(kind, [blk("x", "Inport"),
                               {"id": "deep", "type": kind, "params": {},
                                "diagram": {"blocks": inner, "wires": [
                                    {"src": a, "dst": b} for a, b in inner_wires]}},
                               blk("out", "Outport")],
                        [("x.y", "deep.x"), ("x.y", f"deep.{port}"), ("deep.out", "out.u")])
        c.run_case(cat, f"{kind}-nested-gated-by-own-input", nested, ["-q"], exits=(0, 1, 2))
        looped = _gated(kind, [blk("x", "Inport"), blk("g", "Gain", k=2), blk("out", "Outport")],
                        [("x.y", "g.u"), ("g.y", "out.u")])
        looped["wires"] = [w for w in looped["wires"] if w["dst"] != "sub.x"]
        looped["wires"].append({"src": "sub.out", "dst": "sub.x"})
        c.run_case(cat, f"{kind}-output-fed-back", looped, ["-q"], exits=(0, 1, 2))


