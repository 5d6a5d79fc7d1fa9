"""Seeded random mutations of the example diagrams, and hand-picked regressions."""
from __future__ import annotations

import copy
import json
import random
from typing import Any

from hostile.cases.base import (ANY, BAD, Case, Corpus, DIAGRAM, DIAGRAMS, DIR, RUN_OK_OR_FAIL, SEED, blk, doc, dumps, example, lag)


# Category: seeded random mutations of the example diagrams


MUTANT_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 2, 1.5, -0.0, 1e308, -1e308, 5e-324, 10 ** 20, "", "x", "+-",
    "**/", "u2 != 0", "1/0", "nope.y", "y.u", "Gain", "Integrator", "Subsystem", "[1, 2]",
    "zeros(3)", "inf", "-inf", "1e999", "__class__", "\u202e", "a" * 300, [], [1], [1, 2, 3],
    [[1, 2], [3, 4]], [[1], [2, 3]], {}, {"a": 1}, {"blocks": [], "wires": []}, ["a"],
    "zeros(1e8)", "10**10**10", "sqrt(-1)", "linspace(0, 1, 5)", "rising", "either", "input",
    "clip", "NOT", "XOR", "<", "u2 >= a", "floor", "mod", "pow", "rem",
]


def _slots(node: Any) -> list[tuple[Any, Any]]:
    out: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        for key in list(node):
            out.append((node, key))
            out.extend(_slots(node[key]))
    elif isinstance(node, list):
        for i in range(len(node)):
            out.append((node, i))
            out.extend(_slots(node[i]))
    return out


def mutants(c: Corpus, count: int = 300) -> None:
    cat = "mutants"
    rng = random.Random(SEED + 7)
    bases = {"lag": lag(), "ball": example("bouncing_ball.json"), "math003": example("math003.json"),
             "diode_ideal": example("diode_ideal.json"),
             "pendulum": example("rotating_pendulum.json"),
             "shockley": example("diode_shockley.json"), "c5": example("c5_two_state.json")}
    for name in ("zoh_loop", "multi_clock"):  # sampled-data examples, where present
        if (DIAGRAMS / f"{name}.json").exists():
            bases[name] = example(f"{name}.json")
    names = sorted(bases)
    base_texts = {name: json.dumps(d) for name, d in bases.items()}
    for i in range(count):
        base_name = names[i % len(names)]
        d = json.loads(base_texts[base_name])
        slots = _slots(d)  # computed once: a slot inside a removed part just does nothing
        for _ in range(rng.randint(1, 4)):
            if not slots:
                break
            container, key = rng.choice(slots)
            action = rng.choice(["replace", "replace", "delete", "insert", "swap"])
            try:
                if action == "replace":
                    container[key] = copy.deepcopy(rng.choice(MUTANT_VALUES))
                elif action == "delete":
                    del container[key]
                elif action == "insert" and isinstance(container, list):
                    container.insert(key, copy.deepcopy(rng.choice(container)))
                elif action == "insert":
                    container[rng.choice(["extra", "k", "x0", "signs", "inputs", "formula"])] = \
                        copy.deepcopy(rng.choice(MUTANT_VALUES))
                elif action == "swap":
                    other_container, other_key = rng.choice(slots)
                    container[key] = copy.deepcopy(other_container[other_key])
            except (KeyError, IndexError, TypeError, RecursionError):
                pass
        # a part of the base's own run, so an unmutated diagram finishes in well under a second
        stop = bases[base_name]["simulation"].get("stop", 10.0) * rng.choice([0.05, 0.2, 0.5])
        if i % 2:
            c.run_case(cat, f"{i:04d}-{base_name}", d, ["-q", "--stop-time", repr(stop)],
                       exits=ANY)
        else:
            c.api_case(cat, f"{i:04d}-{base_name}", d, settings={"stop_time": stop}, exits=ANY)


# Hand-picked regressions (known findings, in the words of their reports)


def handpicked(c: Corpus) -> None:
    cat = "handpicked"
    ramp_cmp = doc([blk("r", "Ramp", slope=1), blk("cmp", "CompareToConstant", operator=">=",
                                                    constant=0.5), blk("y", "Output")],
                   [("r.y", "cmp.u"), ("cmp.y", "y.u")], stop=1.0)
    c.run_case(cat, "radau-no-state-zero-crossing", ramp_cmp, ["-q", "--solver", "radau"],
               exits=(0,), note="died with AttributeError 'NoStateStepper' has no 'solve_to'")
    c.run_case(cat, "bdf-no-state-zero-crossing", ramp_cmp, ["-q", "--solver", "bdf"],
               exits=(0,))
    tf = doc([blk("c", "Step", time=0), blk("tf", "TransferFunction", num=[1], den=[2, 1e9]),
              blk("y", "Output")], [("c.y", "tf.u"), ("tf.y", "y.u")], stop=0.1)
    c.run_case(cat, "tf-2-1e9-dopri5", tf, ["-q"], exits=RUN_OK_OR_FAIL,
               note="never finished a 0.1 s run")
    pulse = doc([blk("p", "Pulse", period=1e-9), blk("y", "Output")], [("p.y", "y.u")], stop=0.1)
    c.run_case(cat, "pulse-1e-9-0.1s", pulse, ["-q"], exits=ANY,
               note="spun through 2e8 time events")
    c.run_case(cat, "rtol-nan-hangs", lag(), ["-q", "--rtol", "nan"], exits=BAD,
               mentions=("rtol",), note="hung for ever (found while writing this suite)")
    c.run_case(cat, "out-folder-traceback", lag(), ["-q", "--out", DIR], exits=BAD,
               note="IsADirectoryError traceback after a successful run")
    c.run_case(cat, "euler-without-step-exit-1", lag(), ["-q", "--solver", "euler"], exits=BAD,
               mentions=("step",), note="impossible settings reported as a failed run (1)")
    c.diagram_cases(cat, "5000-digit-version",
                    dumps(lag()).replace(b'"version": 1', b'"version": ' + b"1" * 5000),
                    mentions=("version",))
    c.add(Case(f"{cat}/validate-dev-zero", cat, ["validate", "/dev/zero"], exits=BAD,
               note="read the whole of /dev/zero into memory"))
    c.add(Case(f"{cat}/validate-fifo", cat, ["validate", f"{DIR}/p.json"],
               setup=[("fifo", "p.json")], exits=BAD, keep_fifo=("p.json",),
               note="blocked for ever opening a FIFO with no writer"))
    c.run_case(cat, "out-equals-diagram", lag(), ["-q", "--out", DIAGRAM], exits=BAD,
               note="the results overwrote the diagram")
    c.run_case(cat, "render-huge-coordinates",
               {**lag(), "blocks": [{**b, "layout": {"x": 1e308, "y": -1e308}}
                                    for b in lag()["blocks"]]},
               ["--out", f"{DIR}/p.png"], command="render", exits=(0, 2), budget=10.0,
               note="OverflowError traceback in the router")


