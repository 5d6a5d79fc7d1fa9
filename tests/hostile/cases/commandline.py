"""Command-line arguments and output files."""
from __future__ import annotations

import copy
import os

from hostile.cases.base import (ANY, BAD, Case, Corpus, DIAGRAM, DIR, blk, doc, dumps, example, lag)
from hostile.cases.malformed import _deep_subsystem


# Category: command-line arguments


NUMBERS = {"nan": "nan", "NaN": "NaN", "inf": "inf", "minus-inf": "-inf", "1e999": "1e999",
           "zero": "0", "minus-zero": "-0", "negative": "-1", "denormal": "5e-324",
           "tiny": "1e-300", "huge": "1e300", "word": "abc", "empty": "", "hex": "0x10",
           "underscore": "1_0", "space": " 1 ", "comma": "1,5"}
NOT_FINITE = {"nan", "NaN", "inf", "minus-inf", "1e999"}
NOT_POSITIVE = {"zero", "minus-zero", "negative"}
NOT_A_NUMBER = {"word", "empty", "hex", "comma"}


def cli_args(c: Corpus) -> None:
    cat = "cli-args"
    d = lag()
    ball = example("bouncing_ball.json")
    options = {
        "rtol": ("--rtol", [], "rtol"),
        "atol": ("--atol", [], "atol"),
        "stop-time": ("--stop-time", [], "stop"),
        "step-rk4": ("--step", ["--solver", "rk4"], "step"),
        "step-euler": ("--step", ["--solver", "euler"], "step"),
        "step-dopri5": ("--step", [], "step"),
        "output-interval": ("--output-interval", [], "interval"),
    }
    for oname, (flag, extra, word) in options.items():
        for vname, value in NUMBERS.items():
            if vname in NOT_A_NUMBER:
                exits, mentions = BAD, (flag,)
            elif vname in NOT_FINITE or vname in NOT_POSITIVE:
                exits, mentions = BAD, (word,)
            elif vname in ("denormal", "tiny"):
                exits, mentions = ANY, ()
                if oname in ("step-rk4", "step-euler", "output-interval"):
                    exits = (1, 2)  # 1e300 steps or rows: refuse or fail, never run forever
            else:
                exits, mentions = ANY, ()
            if oname == "stop-time" and vname in ("huge",):
                exits = ANY
            c.run_case(cat, f"{oname}={vname}", d, ["-q", *extra, f"{flag}={value}"],
                       exits=exits, mentions=mentions)
    # the same values through the API
    for key in ("rtol", "atol", "stop_time", "output_interval", "max_step", "start_time"):
        for vname, value in (("nan", float("nan")), ("inf", float("inf")),
                             ("minus-inf", float("-inf")), ("zero", 0.0), ("negative", -1.0),
                             ("tiny", 1e-300)):
            if key == "start_time" and vname in ("zero", "negative", "tiny"):
                continue
            no_limit = key == "max_step" and vname == "inf"  # documented: no limit
            c.api_case(cat, f"api-{key}={vname}", d, settings={key: value},
                       exits=ANY if vname == "tiny" or no_limit else (2,))
        c.api_case(cat, f"api-{key}=string", d, settings={key: "1"}, exits=ANY)
    for solver in ("euler", "rk4"):
        c.run_case(cat, f"{solver}-without-step", d, ["-q", "--solver", solver], exits=BAD,
                   mentions=("step",))
        c.api_case(cat, f"api-{solver}-without-step", d, settings={"solver": solver},
                   exits=(2,))
        c.api_case(cat, f"api-{solver}-step-nan", d,
                   settings={"solver": solver, "step": float("nan")}, exits=(2,))
        c.run_case(cat, f"{solver}-step-bigger-than-run", d,
                   ["-q", "--solver", solver, "--step", "100"], exits=ANY)
        c.run_case(cat, f"{solver}-step-1e-9-ball", ball,
                   ["-q", "--solver", solver, "--step", "1e-9"], exits=(1, 2),
                   note="1e10 steps: refuse or fail, not run for hours")
    c.run_case(cat, "stop-before-start", {**d, "simulation": {"start": 5.0, "stop": 10.0}},
               ["-q", "--stop-time", "1"], exits=BAD, mentions=("stop",))
    c.run_case(cat, "stop-equals-start", {**d, "simulation": {"start": 1.0, "stop": 10.0}},
               ["-q", "--stop-time", "1"], exits=BAD, mentions=("stop",))
    c.run_case(cat, "start-minus-1e308-stop-1e308",
               {**d, "simulation": {"start": -1e308, "stop": 1e308}}, ["-q"], exits=(1, 2))
    c.run_case(cat, "stop-1e308-interval-default", {**d, "simulation": {"stop": 1e308}},
               ["-q"], exits=ANY)
    c.run_case(cat, "ball-stop-1e300", ball, ["-q", "--stop-time", "1e300"], exits=ANY)
    c.run_case(cat, "rtol-huge-atol-huge", d, ["-q", "--rtol", "1e300", "--atol", "1e300"],
               exits=ANY)
    c.run_case(cat, "file-max-step-1e-8-10s", {**d, "simulation": {"stop": 10.0,
                                                                  "max_step": 1e-8}},
               ["-q"], exits=ANY, note="1e9 steps: refuse or fail, not run for hours")
    c.run_case(cat, "file-output-interval-1e-9-10s",
               {**d, "simulation": {"stop": 10.0, "output_interval": 1e-9}}, ["-q"],
               exits=ANY, note="1e10 rows: refuse or fail, bounded memory")
    c.run_case(cat, "file-step-denormal-rk4", {**d, "simulation": {"solver": "rk4",
                                                                  "step": 5e-324}},
               ["-q"], exits=(1, 2))
    # choices and sub-commands
    for name, argv in {"unknown-solver": ["--solver", "ode45"],
                       "unknown-backend": ["--backend", "gpu"],
                       "empty-solver": ["--solver", ""], "empty-backend": ["--backend", ""],
                       "unknown-flag": ["--fast"], "set-without-value": ["--set"],
                       "out-without-value": ["--out"], "two-diagrams": [DIAGRAM],
                       "stop-time-twice": ["--stop-time", "1", "--stop-time", "nan"],
                       }.items():
        c.run_case(cat, name, d, ["-q", *argv], exits=BAD)
    for name, argv in {"no-arguments": [], "unknown-command": ["simulate"],
                       "run-without-diagram": ["run"], "describe-unknown": ["describe", "Nope"],
                       "describe-empty": ["describe", ""],
                       "describe-dunder": ["describe", "__class__"],
                       "describe-huge": ["describe", "G" * 100_000],
                       "describe-surrogate": ["describe", "\udcff"],
                       "blocks-extra": ["blocks", "x"], "validate-with-out": ["validate", DIAGRAM,
                                                                               "--out", "x.csv"],
                       "render-no-out": ["render", DIAGRAM],
                       "help-flag-typo": ["run", "--hepl"]}.items():
        c.add(Case(f"{cat}/{name}", cat, argv, files={"d.json": dumps(d)}, exits=BAD,
                   unchanged=("d.json",)))
    for value in ("gpu", "", "NUMBA", "python; rm -rf /", "\u202enumba"):
        name = value.encode("unicode_escape").decode() or "empty"
        c.add(Case(f"{cat}/env-backend={name[:20]}", cat, ["run", DIAGRAM, "-q"],
                   files={"d.json": dumps(d)}, env={"BLOCKSIM_BACKEND": value},
                   exits=(0,) if value == "" else BAD, unchanged=("d.json",),
                   mentions=() if value == "" else ("BLOCKSIM_BACKEND",)))
    # the name of a shipped example instead of a file
    for name, argv, exits in (
            ("example-by-name", ["validate", "bouncing_ball"], (0,)),
            ("example-run-short", ["run", "math003", "-q", "--stop-time", "1"], (0,)),
            ("example-dotdot", ["validate", "../bouncing_ball"], BAD),
            ("example-traversal", ["validate", "../../../../etc/passwd"], BAD),
            ("example-dunder", ["validate", "__init__"], BAD),
            ("example-dot", ["validate", "."], BAD),
            ("example-slash", ["validate", "/"], BAD),
            ("example-upper", ["validate", "BOUNCING_BALL"], (0, 2)),
            ("example-with-suffix", ["validate", "bouncing_ball.json"], (0, 2)),
            ("example-space", ["validate", "bouncing ball"], BAD),
            ("example-glob", ["validate", "*"], BAD),
            ("example-unknown", ["validate", "no_such_example"], BAD),
            ("example-topic", ["validate", "physical/c21_diode_ideal"], (0,)),
            ("example-topic-dotdot", ["validate", "physical/../math003"], BAD),
            ("example-topic-deeper", ["validate", "physical/c21/diode"], BAD),
            ("example-topic-absolute", ["validate", "/physical/c21_diode_ideal"], BAD),
            ("example-topic-hidden", ["validate", "physical/.c21_diode_ideal"], BAD),
            ("example-topic-only", ["validate", "physical/"], BAD),
            ("examples-list", ["examples"], (0,)),
            ("examples-extra", ["examples", "x"], BAD)):
        c.add(Case(f"{cat}/{name}", cat, argv, exits=exits))
    # --strict: a logged signal that becomes NaN or infinite fails the run
    overflow = doc([blk("c", "Constant", value=1e300), blk("g", "Gain", k=1e300),
                    blk("y", "Output")], [("c.y", "g.u"), ("g.y", "y.u")], stop=1.0)
    c.run_case(cat, "strict-inf-logged", overflow, ["-q", "--strict"], exits=(1,),
               mentions=("y",))
    c.run_case(cat, "no-strict-inf-logged", overflow, ["-q"], exits=(0,))
    c.run_case(cat, "strict-twice", overflow, ["-q", "--strict", "--strict"], exits=(1,))
    c.run_case(cat, "strict-with-set", lag(), ["-q", "--strict", "--set", "tau=0"],
               exits=(1, 2))
    for t in ("Integrator", "Subsystem", "Expression"):
        c.add(Case(f"{cat}/describe-{t}", cat, ["describe", t], exits=(0,)))
    c.add(Case(f"{cat}/blocks", cat, ["blocks"], exits=(0,)))
    for name, backend_argv in {"unknown-solver-api": {"solver": "ode45"},
                               "unknown-backend-api": {"backend": "gpu"},
                               "empty-solver-api": {"solver": ""}}.items():
        c.api_case(cat, name, d, settings=backend_argv, exits=(2,))

    # --set
    cat = "cli-set"
    names = {"empty": "", "digit": "1x", "unknown": "nope", "space": "a b", "dunder": "__class__",
             "constant-pi": "pi", "dotted": "tau.x", "upper": "TAU", "keyword": "lambda",
             "unicode": "t\u00e4u", "zero-width": "ta\u200bu"}
    for nname, name in names.items():
        c.run_case(cat, f"name-{nname}", d, ["-q", "--set", f"{name}=1"], exits=BAD,
                   mentions=(name.strip(),) if name.strip() else ("set",))
    c.run_case(cat, "no-equals", d, ["-q", "--set", "tau"], exits=BAD, mentions=("tau",))
    c.run_case(cat, "equals-only", d, ["-q", "--set", "="], exits=BAD)
    c.run_case(cat, "double-equals", d, ["-q", "--set", "tau==1"], exits=BAD, mentions=("tau",))
    c.run_case(cat, "twice", d, ["-q", "--set", "tau=1", "--set", "tau=2"], exits=(0,))
    values = {"empty": ("", BAD), "word": ("abc", BAD), "1e999": ("1e999", ANY),
              "nan-name": ("nan", BAD), "minus": ("-", BAD), "open-list": ("[1,2", BAD),
              "list": ("[1, 2]", ANY), "nested-list": ("[[1, 2], [3]]", BAD),
              "pow-tower": ("10**10**10", ANY), "zeros-1e9": ("zeros(1e9)", BAD),
              "self": ("tau", BAD), "div-zero": ("1/0", BAD), "zero": ("0", ANY),
              "string": ("'str'", BAD), "dict": ("{}", BAD), "lambda": ("lambda: 1", BAD),
              "if-incomplete": ("1 if 1 else", BAD), "padded": ("  2  ", (0,)),
              "hex": ("0x10", ANY), "true": ("True", BAD), "none": ("None", BAD),
              "ellipsis": ("...", BAD), "superscript": ("\u00b2", BAD),
              "complex": ("1j", BAD), "long": ("1+" * 4999 + "1", ANY),
              "too-long": ("1+" * 6000 + "1", BAD), "deep-parens": ("(" * 500 + "1" + ")" * 500,
                                                                    BAD),
              "deep-unary": ("-" * 9000 + "1", ANY), "newline": ("1\n+1", ANY),
              "semicolon": ("1; 2", BAD), "comment": ("1 # x", ANY)}
    for vname, (value, exits) in values.items():
        c.run_case(cat, f"value-{vname}", d, ["-q", "--set", f"tau={value}"], exits=exits,
                   mentions=("tau",) if exits == BAD else ())
        c.api_case(cat, f"api-value-{vname}", d, params={"tau": value},
                   exits=(2,) if exits == BAD else ANY)
    c.api_case(cat, "api-unknown-name", d, params={"nope": 1}, exits=(2,))
    c.api_case(cat, "api-value-pylist", d, params={"tau": [1.0, 2.0]}, exits=ANY)
    c.api_case(cat, "api-value-nan", d, params={"tau": float("nan")}, exits=(2,))


# Category: output files


def outputs(c: Corpus) -> None:
    cat = "outputs"
    good = lag()
    failing = doc([blk("c", "Clock"), blk("f", "Expression", formula="sqrt(1 - u)"),
                   blk("y", "Output")], [("c.y", "f.u"), ("f.y", "y.u")], stop=2.0,
                  output_interval=0.1)
    refused = {**lag(), "blocks": lag()["blocks"][:-1] + [blk("y", "NoSuchBlock")]}
    targets = {
        "missing-folder": (["--out", f"{DIR}/missing/out.csv"], [], ("missing",)),
        "events-missing-folder": (["--events", f"{DIR}/missing/ev.csv"], [], ("missing",)),
        "folder": (["--out", f"{DIR}/folder"], [("mkdir", "folder")], ("folder",)),
        "events-folder": (["--events", f"{DIR}/folder"], [("mkdir", "folder")], ("folder",)),
        "npz-folder": (["--out", f"{DIR}/folder.npz"], [("mkdir", "folder.npz")], ("folder",)),
        "parent-is-a-file": (["--out", f"{DIR}/d.json/out.csv"], [], ("out.csv",)),
        "proc": (["--out", "/proc/blocksim-out.csv"], [], ("blocksim-out.csv",)),
        "proc-file": (["--out", "/proc/version"], [], ("/proc/version",)),
        "fifo": (["--out", f"{DIR}/pipe.csv"], [("fifo", "pipe.csv")], ("pipe.csv",)),
        # a copy of /dev/null (a FIFO where mknod is not allowed): `--out /dev/null` as root
        "device": (["--out", f"{DIR}/null"], [("chardev", "null")], ("null",)),
        "events-device": (["--events", f"{DIR}/null"], [("chardev", "null")], ("null",)),
        "equal-to-diagram": (["--out", DIAGRAM], [], ("d.json",)),
        "events-equal-to-diagram": (["--events", DIAGRAM], [], ("d.json",)),
        "symlink-to-diagram": (["--out", f"{DIR}/link.csv"], [("symlink", "link.csv", "d.json")],
                               ("link.csv",)),
        "relative-alias-of-diagram": (["--out", f"{DIR}/./sub/../d.json"], [("mkdir", "sub")],
                                      ("d.json",)),
        "out-equal-events": (["--out", f"{DIR}/r.csv", "--events", f"{DIR}/r.csv"], [],
                             ("r.csv",)),
    }
    for tname, (args, setup, words) in targets.items():
        fifo = tuple(s[1] for s in setup if s[0] in ("fifo", "chardev"))
        for dname, data, exits in (("ok", good, BAD), ("failing", failing, (1, 2)),
                                   ("refused", refused, BAD)):
            if tname in ("device", "events-device", "fifo"):  # writing into it is fine too
                exits = tuple(sorted(set(exits) | ({0} if dname == "ok" else {1})))
            c.run_case(cat, f"{tname}/{dname}", data, ["-q", *args], exits=exits,
                       mentions=words if exits == BAD and dname != "refused" else (),
                       setup=setup, keep_fifo=fifo,
                       unchanged=("d.json",))
    for dname, data, exits in (("ok", good, BAD), ("failing", failing, (1, 2)),
                               ("refused", refused, BAD)):
        c.add(Case(f"{cat}/npz-equal-to-diagram/{dname}", cat,  # a diagram saved as d.npz
                   ["run", f"{DIR}/d.npz", "-q", "--out", f"{DIR}/d.npz"],
                   files={"d.npz": dumps(data)}, exits=exits, unchanged=("d.npz",)))
    ro_exits = (0,) if os.geteuid() == 0 else BAD  # root writes anywhere
    c.run_case(cat, "read-only-folder/ok", good, ["-q", "--out", f"{DIR}/ro/out.csv"],
               setup=[("mkdir", "ro"), ("chmod", "ro", 0o555)], exits=ro_exits)
    c.run_case(cat, "unknown-extension/ok", good, ["-q", "--out", f"{DIR}/out.txt"],
               exits=(0, 2))
    c.run_case(cat, "upper-npz/ok", good, ["-q", "--out", f"{DIR}/out.NPZ"], exits=(0,))
    c.run_case(cat, "empty-name/ok", good, ["-q", "--out", ""], exits=(0, 2))
    c.run_case(cat, "without-quiet/ok", good, [], exits=(0,))
    c.run_case(cat, "without-quiet/failing", failing, [], exits=(1,))
    c.run_case(cat, "partial-results/failing", failing,
               ["-q", "--out", f"{DIR}/r.csv", "--events", f"{DIR}/e.csv"], exits=(1,),
               mentions=("f",))
    # render
    cat = "render"
    renders = {
        "png": (["--out", f"{DIR}/p.png"], (0,), []),
        "svg": (["--out", f"{DIR}/p.svg"], (0,), []),
        "gif": (["--out", f"{DIR}/p.gif"], BAD, []),
        "missing-folder": (["--out", f"{DIR}/missing/p.png"], BAD, []),
        "folder": (["--out", f"{DIR}/folder.png"], BAD, [("mkdir", "folder.png")]),
        "level-unknown": (["--out", f"{DIR}/p.png", "--level", "nope"], BAD, []),
        "level-slashes": (["--out", f"{DIR}/p.png", "--level", "///"], (0, 2), []),
        "level-dotdot": (["--out", f"{DIR}/p.png", "--level", "../.."], BAD, []),
        "level-gain": (["--out", f"{DIR}/p.png", "--level", "fb"], BAD, []),
    }
    for rname, (args, exits, setup) in renders.items():
        c.run_case(cat, rname, good, args, exits=exits, setup=setup, command="render",
                   budget=10.0)
    c.add(Case(f"{cat}/diagram-is-svg-and-out", cat,
               ["render", f"{DIR}/d.svg", "--out", f"{DIR}/d.svg"],
               files={"d.svg": dumps(good)}, exits=BAD, unchanged=("d.svg",), budget=10.0))
    layouts = {
        "coords-1e308": {"x": 1e308, "y": -1e308},
        "coords-mixed-1e308": None,
        "size-1e308": {"width": 1e308, "height": 1e308},
        "size-tiny": {"width": 1e-300, "height": 1e-300},
        "label-1e6": {"label": "W" * 1_000_000},
        "label-newlines": {"label": "a\n" * 10_000},
        "label-rtl": {"label": "\u202e\u0301" * 100},
        "coords-1e15": {"x": 1e15, "y": 1e15},
    }
    for lname, layout in layouts.items():
        d = copy.deepcopy(good)
        for i, b in enumerate(d["blocks"]):
            b["layout"] = layout if layout is not None else {"x": (-1) ** i * 1e308, "y": i}
        c.run_case(cat, f"layout-{lname}", d, ["--out", f"{DIR}/p.png"], exits=(0, 2),
                   command="render", budget=10.0)
        c.run_case(cat, f"layout-{lname}-svg", d, ["--out", f"{DIR}/p.svg"], exits=(0, 2),
                   command="render", budget=10.0)
    d = copy.deepcopy(good)
    d["wires"][0]["points"] = [[1e308, 1e308], [-1e308, 1e308]]
    c.run_case(cat, "points-1e308", d, ["--out", f"{DIR}/p.png"], exits=(0, 2),
               command="render", budget=10.0)
    d = copy.deepcopy(good)
    d["wires"][0]["points"] = [[i, i % 7] for i in range(5_000)]
    c.run_case(cat, "points-5k", d, ["--out", f"{DIR}/p.png"], exits=(0, 2),
               command="render", budget=10.0)
    c.run_case(cat, "deep-subsystem-60", _deep_subsystem(60),
               ["--out", f"{DIR}/p.png", "--level", "/".join(["s"] * 59)], exits=(0, 2),
               command="render", budget=10.0)
    c.run_case(cat, "malformed", b"{", ["--out", f"{DIR}/p.png"], exits=BAD, command="render",
               mentions=("d.json",))
    c.run_case(cat, "many-blocks-1000", doc([blk(f"c{i}", "Constant") for i in range(1000)], []),
               ["--out", f"{DIR}/p.svg"], exits=(0, 2), command="render", budget=10.0)


