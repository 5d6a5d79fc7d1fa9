"""Numerical traps: stiff, exploding, storming and degenerate runs on every solver."""
from __future__ import annotations

from hostile.cases.base import (ANY, Corpus, DIR, RUN_OK_OR_FAIL, blk, doc, example, lag)


# Category: numerical traps


def _feedback(lam: float, stop: float, **sim) -> dict:
    """x' = -lam x, x(0) = 1: stiff for large lam."""
    return doc([blk("i", "Integrator", x0=1), blk("g", "Gain", k=-lam), blk("y", "Output")],
               [("i.y", "g.u"), ("g.y", "i.u"), ("i.y", "y.u")], stop=stop, **sim)


def _source_to(block: dict, wires_in: list[str], stop: float = 1.0, src: dict | None = None,
               **sim) -> dict:
    src = src or blk("src", "Clock")
    return doc([src, block, blk("y", "Output")],
               [("src.y", f"{block['id']}.{p}") for p in wires_in] + [(f"{block['id']}.y", "y.u")],
               stop=stop, **sim)


SOLVERS = {"dopri5": [], "dop853": ["--solver", "dop853"], "radau": ["--solver", "radau"],
           "bdf": ["--solver", "bdf"], "euler": ["--solver", "euler", "--step", "1e-3"],
           "rk4": ["--solver", "rk4", "--step", "1e-3"]}


def numerics(c: Corpus) -> None:
    cat = "numerics"
    traps: dict[str, tuple[dict, tuple[int, ...], tuple[str, ...], tuple[str, ...]]] = {}
    # initial values
    for name, x0 in {"inf": "inf", "minus-1e999": "-1e999", "inf-minus-inf": "inf - inf",
                     "json-1e308": 1e308, "minus-inf-vector": "[1, -inf]"}.items():
        d = doc([blk("c", "Constant"), blk("i", "Integrator", x0=x0), blk("y", "Output")],
                [("c.y", "i.u"), ("i.y", "y.u")], stop=1.0)
        traps[f"x0-{name}"] = (d, ANY, (), tuple(SOLVERS))
    # stiff systems on explicit solvers
    for lam, stop in ((1e6, 0.01), (1e6, 10.0), (1e9, 0.1)):
        traps[f"stiff-lambda-{lam:g}-{stop:g}s"] = (_feedback(lam, stop), RUN_OK_OR_FAIL, (),
                                                     ("dopri5", "dop853", "radau", "bdf"))
    tf = doc([blk("c", "Step", time=0), blk("tf", "TransferFunction", num=[1], den=[2, 1e9]),
              blk("y", "Output")], [("c.y", "tf.u"), ("tf.y", "y.u")], stop=0.1)
    traps["tf-den-2-1e9"] = (tf, RUN_OK_OR_FAIL, (), tuple(SOLVERS))
    tf2 = doc([blk("c", "Step", time=0), blk("tf", "TransferFunction", num=[1],
                                               den=[1, 2e5, 1e10]),
               blk("y", "Output")], [("c.y", "tf.u"), ("tf.y", "y.u")], stop=0.1)
    traps["tf-second-order-stiff"] = (tf2, RUN_OK_OR_FAIL, (), ("dopri5", "radau"))
    # time events faster than time can be resolved
    traps["pulse-1e-15-at-1e3"] = (
        doc([blk("p", "Pulse", period=1e-15, delay=1e3), blk("y", "Output")], [("p.y", "y.u")],
            start=999.999, stop=1000.001), ANY, (), ("dopri5", "radau", "euler"))
    traps["pulse-1e-9-on-0.1s"] = (
        doc([blk("p", "Pulse", period=1e-9), blk("y", "Output")], [("p.y", "y.u")], stop=0.1),
        ANY, (), ("dopri5", "rk4"))
    traps["pulse-denormal"] = (
        doc([blk("p", "Pulse", period=5e-324), blk("y", "Output")], [("p.y", "y.u")], stop=0.1),
        ANY, (), ("dopri5",))
    traps["pulse-width-edge"] = (
        doc([blk("p", "Pulse", period=1.0, width=1e-13), blk("y", "Output")], [("p.y", "y.u")],
            stop=3.0), ANY, (), ("dopri5",))
    traps["fromtable-dense-times"] = (
        doc([blk("f", "FromTable", times="linspace(0, 1e-12, 1000)",
                 values="linspace(0, 1, 1000)"), blk("y", "Output")], [("f.y", "y.u")],
            stop=1.0), ANY, (), ("dopri5",))
    traps["step-at-1e-300"] = (
        doc([blk("s", "Step", time=1e-300), blk("y", "Output")], [("s.y", "y.u")], stop=1.0),
        (0,), (), ("dopri5", "radau"))
    traps["output-interval-1e-9"] = (lag(output_interval=1e-9, stop=10.0), ANY, (), ("dopri5",))
    traps["output-interval-1e-6-0.1s"] = (lag(output_interval=1e-6, stop=0.1), ANY, (),
                                          ("dopri5",))
    traps["max-step-1e-8-10s"] = (lag(max_step=1e-8, stop=10.0), ANY, (), ("dopri5", "radau"))
    # discontinuities below the solver's resolution
    sine = blk("src", "Sine", amplitude=1, frequency=1)
    traps["relay-hysteresis-1e-300"] = (
        _source_to(blk("r", "Relay", on_point=1e-300, off_point=0), ["u"], 2.0, sine),
        RUN_OK_OR_FAIL, (), tuple(SOLVERS))
    traps["relay-hysteresis-1e-17"] = (
        _source_to(blk("r", "Relay", on_point=1e-17, off_point=-1e-17), ["u"], 2.0, sine),
        RUN_OK_OR_FAIL, (), ("dopri5",))
    sliding = doc([blk("i", "Integrator", x0=1), blk("s", "Sign"), blk("g", "Gain", k=-1),
                   blk("y", "Output")], [("i.y", "s.u"), ("s.y", "g.u"), ("g.y", "i.u"),
                                        ("i.y", "y.u")], stop=3.0)
    traps["sliding-mode-sign"] = (sliding, RUN_OK_OR_FAIL, (), tuple(SOLVERS))
    relay_loop = doc([blk("i", "Integrator", x0=0.5), blk("r", "Relay", on_point=0, off_point=0,
                                                          on_value=-1, off_value=1),
                      blk("y", "Output")], [("i.y", "r.u"), ("r.y", "i.u"), ("i.y", "y.u")],
                     stop=3.0)
    traps["relay-chatter-no-hysteresis"] = (relay_loop, RUN_OK_OR_FAIL, (), tuple(SOLVERS))
    traps["sine-1e15-hz"] = (_source_to(blk("g", "Gain"), ["u"], 1e-3,
                                        blk("src", "Sine", frequency=1e15)),
                             RUN_OK_OR_FAIL, (), ("dopri5",))
    traps["saturation-on-sine-equal-limits"] = (
        _source_to(blk("s", "Saturation", lower=0, upper=0), ["u"], 2.0, sine),
        RUN_OK_OR_FAIL, (), ("dopri5", "radau"))
    # state-event storms: a million located crossings in a one-second run (found by
    # benchmarks/fuzz.py: rem(t, x) with x near 1e-6 ran for 20 minutes)
    clock = blk("src", "Clock")
    fast = blk("src", "Sine", frequency=1e5)
    for name, (block, ports, source) in {
            "rem-by-1e-6": (blk("f", "MathFunction", function="rem"), ["u1"], clock),
            "mod-by-1e-6": (blk("f", "MathFunction", function="mod"), ["u1"], clock),
            "floor-of-1e6-t": (blk("f", "MathFunction", function="floor"), ["u"], None),
            "sign-of-fast-sine": (blk("f", "Sign"), ["u"], fast),
            "relay-on-fast-sine": (blk("f", "Relay"), ["u"], fast),
            "hitcrossing-on-fast-sine": (blk("f", "HitCrossing"), ["u"], fast),
            "abs-of-fast-sine": (blk("f", "Abs"), ["u"], fast),
            "compare-fast-sine": (blk("f", "CompareToConstant", operator=">"), ["u"], fast),
    }.items():
        if source is None:  # floor(1e6 t)
            d = doc([blk("src", "Clock"), blk("g", "Gain", k=1e6), block, blk("y", "Output")],
                    [("src.y", "g.u"), ("g.y", "f.u"), ("f.y", "y.u")], stop=1.0)
        else:
            d = _source_to(block, ports, 1.0, source)
            if ports == ["u1"]:
                d["blocks"].append(blk("d", "Constant", value=1e-6))
                d["wires"].append({"src": "d.y", "dst": "f.u2"})
        traps[f"event-storm-{name}"] = (d, ANY, (), ("dopri5", "radau"))
    # formulas that produce NaN
    for name, formula in {"sqrt-minus-1": "sqrt(u - 2)", "log-0": "log(u)",
                          "div-0": "1 / (u - u)", "pow-overflow": "exp(u * 1e6)",
                          "asin-2": "asin(u + 2)", "mod-0": "mod(u, 0)", "pow-neg": "(-1 - u) ** 0.5",
                          "int-pow-tower": "u ** 10 ** 10 ** 10"}.items():
        traps[f"formula-{name}"] = (
            _source_to(blk("f", "Expression", formula=formula), ["u"], 1.0),
            (1, 2), ("f",), ("dopri5", "radau", "rk4"))
    traps["formula-big-int"] = (
        _source_to(blk("f", "Expression", formula="u * 1" + "0" * 300), ["u"], 1.0),
        RUN_OK_OR_FAIL, (), ("dopri5",))
    for name, fn in {"log-of-negative": "log", "sqrt-of-negative": "sqrt",
                     "reciprocal-of-zero": "reciprocal", "asin-of-2": "asin"}.items():
        src = blk("src", "Constant", value=-1 if "negative" in name else (0 if "zero" in name
                                                                          else 2))
        traps[f"mathfunction-{name}"] = (
            _source_to(blk("f", "MathFunction", function=fn), ["u"], 1.0, src), (1, 2), ("f",),
            ("dopri5", "radau"))
    traps["product-divide-by-zero"] = (
        doc([blk("c", "Constant", value=0), blk("one", "Constant"), blk("p", "Product", ops="*/"),
             blk("y", "Output")], [("one.y", "p.u1"), ("c.y", "p.u2"), ("p.y", "y.u")], stop=1.0),
        (1, 2), ("p",), ("dopri5", "bdf"))
    # overflow
    chain = [blk("c", "Constant", value=1e200)] + [blk(f"g{i}", "Gain", k=1e200) for i in range(4)]
    traps["gain-chain-overflow"] = (
        doc(chain + [blk("y", "Output")], [("c.y", "g0.u"), ("g0.y", "g1.u"), ("g1.y", "g2.u"),
                                           ("g2.y", "g3.u"), ("g3.y", "y.u")], stop=1.0),
        RUN_OK_OR_FAIL, (), ("dopri5", "radau"))
    traps["gain-chain-overflow-integrated"] = (
        doc(chain + [blk("i", "Integrator"), blk("y", "Output")],
            [("c.y", "g0.u"), ("g0.y", "g1.u"), ("g1.y", "g2.u"), ("g2.y", "g3.u"),
             ("g3.y", "i.u"), ("i.y", "y.u")], stop=1.0), RUN_OK_OR_FAIL, (), tuple(SOLVERS))
    traps["exponential-blowup"] = (_feedback(-1e3, 10.0), RUN_OK_OR_FAIL, (), tuple(SOLVERS))
    traps["integrator-x0-1e308-growth"] = (
        doc([blk("i", "Integrator", x0=1e308), blk("g", "Gain", k=10), blk("y", "Output")],
            [("i.y", "g.u"), ("g.y", "i.u"), ("i.y", "y.u")], stop=1.0),
        RUN_OK_OR_FAIL, (), ("dopri5", "euler"))
    traps["denormal-states"] = (
        doc([blk("i", "Integrator", x0=5e-324), blk("g", "Gain", k=-1), blk("y", "Output")],
            [("i.y", "g.u"), ("g.y", "i.u"), ("i.y", "y.u")], stop=1.0),
        (0,), (), ("dopri5", "radau", "bdf"))
    # zero crossings without continuous state (regression: radau AttributeError)
    ramp_cmp = doc([blk("r", "Ramp", slope=1), blk("cmp", "CompareToConstant", operator=">=",
                                                    constant=0.5), blk("y", "Output")],
                   [("r.y", "cmp.u"), ("cmp.y", "y.u")], stop=1.0)
    traps["stateless-zero-crossing"] = (ramp_cmp, (0,), (), tuple(SOLVERS))
    traps["stateless-no-zero-crossing"] = (
        doc([blk("s", "Step", time=0.5), blk("y", "Output")], [("s.y", "y.u")], stop=1.0),
        (0,), (), tuple(SOLVERS))
    traps["stateless-stop-block"] = (
        doc([blk("c", "Clock"), blk("cmp", "CompareToConstant", operator=">", constant=0.3),
             blk("stop", "Stop"), blk("y", "Output")],
            [("c.y", "cmp.u"), ("cmp.y", "stop.u"), ("c.y", "y.u")], stop=1.0),
        (0,), (), tuple(SOLVERS))
    traps["stop-at-start"] = (
        doc([blk("c", "Constant"), blk("stop", "Stop"), blk("y", "Output")],
            [("c.y", "stop.u"), ("c.y", "y.u")], stop=1.0), (0,), (), ("dopri5", "radau"))
    # algebraic loops that cannot be solved
    traps["algebraic-no-root"] = (
        doc([blk("z", "AlgebraicConstraint"), blk("f", "Expression", formula="u * u + 1"),
             blk("y", "Output")], [("z.z", "f.u"), ("f.y", "z.f"), ("z.z", "y.u")], stop=1.0),
        (1, 2), ("z",), ("dopri5",))
    traps["algebraic-independent"] = (
        doc([blk("z", "AlgebraicConstraint"), blk("c", "Constant"), blk("y", "Output")],
            [("c.y", "z.f"), ("z.z", "y.u")], stop=1.0), (1, 2), ("z",), ("dopri5",))
    traps["algebraic-tol-0"] = (
        doc([blk("z", "AlgebraicConstraint", tol=1e-300), blk("f", "Expression",
                                                              formula="u - 0.3"),
             blk("y", "Output")], [("z.z", "f.u"), ("f.y", "z.f"), ("z.z", "y.u")], stop=1.0),
        ANY, (), ("dopri5",))
    # event storms
    memory_counter = doc([blk("p", "Pulse", period=1e-4), blk("m", "Memory"),
                          blk("s", "Sum", signs="++"), blk("one", "Constant"),
                          blk("y", "Output"), blk("y2", "Output")],
                         [("s.y", "m.u"), ("m.y", "s.u1"), ("one.y", "s.u2"), ("m.y", "y.u"),
                          ("p.y", "y2.u")], stop=0.1)
    traps["memory-counter-10k-events"] = (memory_counter, RUN_OK_OR_FAIL, (), ("dopri5",))
    traps["ball-to-rest"] = (example("bouncing_ball.json"), RUN_OK_OR_FAIL, (), ("dopri5",))
    hit = doc([blk("c", "Constant", value=0.0), blk("h", "HitCrossing", level=0),
               blk("r", "ResetIntegrator"), blk("one", "Constant"), blk("y", "Output")],
              [("c.y", "h.u"), ("one.y", "r.u"), ("h.y", "r.reset"), ("c.y", "r.x0"),
               ("r.y", "y.u")], stop=1.0)
    traps["hitcrossing-at-level"] = (hit, RUN_OK_OR_FAIL, (), ("dopri5", "radau"))
    reset_self = doc([blk("i", "ResetIntegrator", initial=0), blk("one", "Constant"),
                      blk("cmp", "CompareToConstant", operator=">=", constant=0.0),
                      blk("zero", "Constant", value=0.0), blk("y", "Output")],
                     [("one.y", "i.u"), ("i.y", "cmp.u"), ("cmp.y", "i.reset"),
                      ("zero.y", "i.x0"), ("i.y", "y.u")], stop=1.0)
    traps["reset-at-own-guard"] = (reset_self, RUN_OK_OR_FAIL, (), ("dopri5", "radau", "euler"))
    for name, (d, exits, words, solvers) in traps.items():
        for solver in solvers:
            c.run_case(cat, f"{name}/{solver}", d,
                       ["-q", *SOLVERS[solver], "--out", f"{DIR}/r.csv",
                        "--events", f"{DIR}/e.csv"],
                       exits=exits, mentions=words,
                       note="a run finishes or fails with a message, within the budget")
    # the same traps through the API (default solver)
    for name, (d, exits, words, solvers) in traps.items():
        c.api_case(cat, f"api/{name}", d, exits=exits)


