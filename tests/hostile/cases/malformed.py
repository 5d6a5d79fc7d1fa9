"""Malformed diagram files and diagram paths that are not regular files."""
from __future__ import annotations

import copy
import json
import os
import random
from typing import Any

from hostile.cases.base import (ANY, BAD, Case, Corpus, DIR, SEED, blk, doc, dumps, lag)


# Category: malformed diagram files


def _deep_subsystem(depth: int) -> bytes:
    """A gain nested `depth` subsystems deep, wired through every level (built as text:
    json.dumps itself recurses too deeply for the deepest ones)."""
    head = '{"blocks": [{"id": "i", "type": "Inport"}, '
    tail = (', {"id": "o", "type": "Outport"}], "wires": [{"src": "i.y", "dst": "%s"}, '
            '{"src": "%s", "dst": "o.u"}]}')
    inner = head + '{"id": "g", "type": "Gain", "params": {"k": 2}}' + tail % ("g.u", "g.y")
    opening = head + '{"id": "s", "type": "Subsystem", "diagram": '
    closing = "}" + tail % ("s.i", "s.o")
    text = opening * (depth - 1) + inner + closing * (depth - 1)
    top = dumps(doc([blk("c", "Constant", value=1), {"id": "s", "type": "Subsystem",
                                                      "diagram": "@INNER@"},
                     blk("y", "Output")], [("c.y", "s.i"), ("s.o", "y.u")], stop=0.1))
    return top.replace(b'"@INNER@"', text.encode())


def _nested_json(depth: int, open_: str, close: str) -> bytes:
    return (b'{"format": "blocksim", "version": 1, "blocks": [], "wires": [], "description": '
            + open_.encode() * depth + close.encode() * depth + b"}")


def malformed(c: Corpus) -> None:
    cat = "malformed"
    rng = random.Random(SEED + 1)
    base = lag()
    base_raw = dumps(base)
    raw_docs: dict[str, bytes] = {
        "empty": b"",
        "whitespace": b"   \n\t\r\n",
        "bom-only": b"\xef\xbb\xbf",
        "nul-bytes": b"\x00" * 256,
        "binary-1": bytes(rng.randrange(256) for _ in range(4096)),
        "binary-2": bytes(rng.randrange(256) for _ in range(65536)),
        "binary-ascii": bytes(rng.randrange(32, 127) for _ in range(2048)),
        "invalid-utf8": base_raw.replace(b"First", b"\xc3\x28irst") if b"First" in base_raw
        else base_raw[:20] + b"\xff\xfe" + base_raw[20:],
        "latin1-description": dumps({**base, "description": "caf\u00e9"}).replace(
            "caf\u00e9".encode(), b"caf\xe9"),
        "utf16": json.dumps(base).encode("utf-16"),
        "utf32": json.dumps(base).encode("utf-32"),
        "open-brace": b"{",
        "open-bracket": b"[",
        "format-only-unclosed": b'{"format": "blocksim"',
        "null": b"null", "true": b"true", "number": b"1", "string": b'"blocksim"',
        "list": b"[]", "object": b"{}", "list-of-object": b"[{}]",
        "number-1e999": b"1e999",
        "python-literal": b"{'format': 'blocksim', 'version': 1, 'blocks': [], 'wires': []}",
        "js-comment": b'// a diagram\n{"format": "blocksim", "version": 1, "blocks": [], '
                      b'"wires": []}',
        "trailing-comma": b'{"format": "blocksim", "version": 1, "blocks": [], "wires": [],}',
        "nan-token": base_raw.replace(b'"tau": 0.5', b'"tau": NaN'),
        "infinity-token": base_raw.replace(b'"tau": 0.5', b'"tau": Infinity'),
        "minus-infinity-token": base_raw.replace(b'"x0": 0', b'"x0": -Infinity'),
        "nan-in-layout": base_raw.replace(b'"x": 340', b'"x": NaN'),
        "duplicate-key": base_raw.replace(b'"tau": 0.5', b'"tau": 0.5, "tau": 1'),
        "duplicate-top-key": base_raw[:-1] + b', "blocks": []}',
        "version-5000-digits": base_raw.replace(b'"version": 1', b'"version": 1' + b"0" * 4999),
        "param-5000-digits": base_raw.replace(b'"tau": 0.5', b'"tau": ' + b"7" * 5000),
        "layout-5000-digits": base_raw.replace(b'"x": 340', b'"x": ' + b"9" * 5000),
        "x0-5000-digit-float": base_raw.replace(b'"x0": 0', b'"x0": ' + b"1" * 5000 + b".5"),
        "tiny-5000-digit-float": base_raw.replace(b'"tau": 0.5',
                                                  b'"tau": 0.' + b"0" * 5000 + b"1"),
        "exponent-5000-digits": base_raw.replace(b'"tau": 0.5', b'"tau": 1e' + b"9" * 5000),
        "number-1e999-param": base_raw.replace(b'"tau": 0.5', b'"tau": 1e999'),
        "number-1e999-stop": base_raw.replace(b'"stop": 5.0', b'"stop": 1e999'),
        "number-minus-1e999-x0": base_raw.replace(b'"x0": 0', b'"x0": -1e999'),
        "deep-array-100k": _nested_json(100_000, "[", "]"),
        "deep-object-100k": _nested_json(50_000, '{"a":', "}"),
        "deep-array-900": _nested_json(900, "[", "]"),
        "truncated-10": base_raw[:10], "truncated-half": base_raw[: len(base_raw) // 2],
        "truncated-minus-1": base_raw[:-1], "truncated-minus-2": base_raw[:-2],
        "lone-surrogate-description": base_raw.replace(b'"simulation"',
                                                       b'"description": "\\ud800", "simulation"'),
        "lone-surrogate-id": base_raw.replace(b'"id": "y"', b'"id": "\\udfff"'),
        "lone-surrogate-type": base_raw.replace(b'"type": "Output"', b'"type": "\\ud83d"'),
        "lone-surrogate-param": base_raw.replace(b'"1 / tau"', b'"1 / \\ud800"'),
        "lone-surrogate-key": base_raw.replace(b'"tau": 0.5', b'"\\ud800": 0.5'),
        "nul-in-type": base_raw.replace(b'"type": "Gain"', b'"type": "Gain\\u0000"'),
        "nul-in-id": base_raw.replace(b'"id": "y"', b'"id": "y\\u0000"'),
        "nul-in-param-name": base_raw.replace(b'"k": "1 / tau"', b'"k\\u0000": "1 / tau"'),
        "nul-in-expression": base_raw.replace(b'"1 / tau"', b'"1 / tau\\u0000"'),
    }
    # JSON that Python reads as a value the format has no rule against (1e999 is inf, a
    # lone surrogate is a str): refusing and accepting are both within the contract; a run
    # that then hangs on the infinite value is not
    lenient = {"exponent-5000-digits": (0, 2), "number-1e999-param": (0, 2),
               "lone-surrogate-description": (0, 2), "x0-5000-digit-float": (1, 2),
               "number-minus-1e999-x0": (1, 2)}
    for name, raw in raw_docs.items():
        exits = lenient.get(name, BAD)
        c.diagram_cases(cat, name, raw, exits=exits,
                        validate_exits=(0, 2) if name in lenient else None)

    def variant(mutate) -> dict:
        d = copy.deepcopy(base)
        mutate(d)
        return d

    def setter(path: tuple, value: Any):
        def mutate(d):
            node = d
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        return mutate

    def deleter(path: tuple):
        def mutate(d):
            node = d
            for key in path[:-1]:
                node = node[key]
            del node[path[-1]]
        return mutate

    bad_docs: dict[str, tuple[Any, tuple[str, ...]]] = {}
    # missing keys, at every level
    for key in ("format", "version", "blocks", "wires"):
        bad_docs[f"missing-{key}"] = (variant(deleter((key,))), ())
    bad_docs["missing-block-id"] = (variant(deleter(("blocks", 1, "id"))), ())
    bad_docs["missing-block-type"] = (variant(deleter(("blocks", 1, "type"))), ("sum",))
    bad_docs["missing-wire-src"] = (variant(deleter(("wires", 0, "src"))), ())
    bad_docs["missing-wire-dst"] = (variant(deleter(("wires", 0, "dst"))), ())
    # extra keys
    bad_docs["extra-top-key"] = (variant(setter(("extra",), 1)), ("extra",))
    bad_docs["extra-simulation-key"] = (variant(setter(("simulation", "tolerance"), 1e-3)),
                                        ("tolerance",))
    bad_docs["extra-block-key"] = (variant(setter(("blocks", 2, "colour"), "red")), ("colour",))
    bad_docs["extra-wire-key"] = (variant(setter(("wires", 0, "label"), "w")), ("label",))
    # wrong types
    for key, values in {"blocks": [{}, "x", None, 1], "wires": [{}, "x", None],
                        "parameters": [[], "x", None, 1], "simulation": [[], "x", 1],
                        "description": [1, [], None]}.items():
        for i, value in enumerate(values):
            bad_docs[f"type-{key}-{i}"] = (variant(setter((key,), value)), (key,))
    bad_docs["type-params-list"] = (variant(setter(("blocks", 3, "params"), [1])), ("fb",))
    bad_docs["type-params-null"] = (variant(setter(("blocks", 3, "params"), None)), ("fb",))
    bad_docs["type-layout-list"] = (variant(setter(("blocks", 4, "layout"), [1, 2])), ("y",))
    bad_docs["type-layout-null"] = (variant(setter(("blocks", 4, "layout"), None)), ("y",))
    bad_docs["type-points-string"] = (variant(setter(("wires", 0, "points"), "x")), ())
    bad_docs["type-points-short"] = (variant(setter(("wires", 0, "points"), [[1]])), ())
    bad_docs["type-points-long"] = (variant(setter(("wires", 0, "points"), [[1, 2, 3]])), ())
    bad_docs["type-param-object"] = (variant(setter(("blocks", 3, "params", "k"), {"a": 1})),
                                     ("fb",))
    bad_docs["type-param-null"] = (variant(setter(("blocks", 3, "params", "k"), None)), ("fb",))
    bad_docs["type-param-mixed-list"] = (variant(setter(("blocks", 3, "params", "k"),
                                                        [1, "a"])), ("fb",))
    bad_docs["type-param-ragged"] = (variant(setter(("blocks", 2, "params", "x0"),
                                                    [[1, 2], [3]])), ("integ",))
    bad_docs["type-id-number"] = (variant(setter(("blocks", 0, "id"), 7)), ())
    bad_docs["type-type-list"] = (variant(setter(("blocks", 0, "type"), ["Step"])), ())
    # versions and formats
    for name, value in {"0": 0, "minus-1": -1, "2": 2, "huge": 10 ** 30, "string": "1",
                        "float": 1.5, "true": True, "null": None, "1e308": 1e308,
                        "list": [1]}.items():
        bad_docs[f"version-{name}"] = (variant(setter(("version",), value)), ("version",))
    for name, value in {"capital": "Blocksim", "empty": "", "null": None, "list": ["blocksim"],
                        "simulink": "simulink"}.items():
        bad_docs[f"format-{name}"] = (variant(setter(("format",), value)), ("format",))
    # block types
    for name, value in {"unknown": "NoSuchBlock", "empty": "", "lowercase": "gain",
                        "dunder": "__import__", "dotted": "os.system",
                        "trailing-space": "Gain ", "zero-width": "Ga\u200bin",
                        "rtl": "\u202eniaG", "fullwidth": "\uff27ain",
                        "huge": "G" * 200_000}.items():
        bad_docs[f"type-{name}"] = (variant(setter(("blocks", 3, "type"), value)), ("fb",))
    bad_docs["subsystem-without-diagram"] = (variant(setter(("blocks", 3, "type"), "Subsystem")),
                                             ("fb",))
    bad_docs["diagram-on-a-gain"] = (variant(setter(("blocks", 3, "diagram"),
                                                    {"blocks": [], "wires": []})), ("fb",))
    # identifiers
    for name, value in {"digit": "1a", "dash": "a-b", "space": "a b", "dot": "a.b",
                        "empty": "", "unicode": "\u00e9t\u00e9", "huge": "b" * 100_000,
                        "emoji": "\U0001f600"}.items():
        bad_docs[f"id-{name}"] = (variant(setter(("blocks", 4, "id"), value)), ())
    # port references
    for name, value in {"no-dot": "integ", "trailing-dot": "integ.", "leading-dot": ".y",
                        "two-dots": "integ.y.z", "digit": "1nteg.y", "space": "integ.y ",
                        "unicode": "int\u00e9g.y", "empty": "", "huge": "a" * 100_000 + ".y"
                        }.items():
        bad_docs[f"src-{name}"] = (variant(setter(("wires", 4, "src"), value)), ())
    bad_docs["src-missing-block"] = (variant(setter(("wires", 4, "src"), "nope.y")), ("nope",))
    bad_docs["src-missing-port"] = (variant(setter(("wires", 4, "src"), "integ.nope")),
                                    ("integ", "nope"))
    bad_docs["dst-missing-block"] = (variant(setter(("wires", 4, "dst"), "nope.u")), ("nope",))
    bad_docs["dst-missing-port"] = (variant(setter(("wires", 4, "dst"), "y.nope")), ("y", "nope"))
    bad_docs["src-is-an-input"] = (variant(setter(("wires", 4, "src"), "sum.u1")), ("sum", "u1"))
    bad_docs["dst-is-an-output"] = (variant(setter(("wires", 4, "dst"), "step.y")),
                                    ("step", "y"))
    bad_docs["sum-port-beyond-signs"] = (variant(setter(("wires", 3, "dst"), "sum.u3")),
                                         ("sum", "u3"))
    # duplicates, fan-in, dangling inputs
    bad_docs["duplicate-id"] = (variant(setter(("blocks", 4, "id"), "fb")), ("fb",))
    bad_docs["duplicate-wire"] = (variant(lambda d: d["wires"].append(dict(d["wires"][0]))),
                                  ("sum", "u1"))
    bad_docs["fan-in"] = (variant(lambda d: d["wires"].append({"src": "integ.y",
                                                               "dst": "sum.u1"})), ("sum", "u1"))
    bad_docs["unconnected-input"] = (variant(deleter(("wires", 1))), ("integ", "u"))
    bad_docs["no-wires"] = (variant(setter(("wires",), [])), ())
    # algebraic loops
    bad_docs["self-loop"] = (doc([blk("g", "Gain", k=0.5), blk("y", "Output")],
                                 [("g.y", "g.u"), ("g.y", "y.u")]), ("g",))
    bad_docs["three-cycle"] = (doc([blk("a", "Gain"), blk("b", "Abs"), blk("c", "Sum", signs="+"),
                                    blk("y", "Output")],
                                   [("a.y", "b.u"), ("b.y", "c.u1"), ("c.y", "a.u"),
                                    ("a.y", "y.u")]), ())
    bad_docs["loop-through-expression"] = (
        doc([blk("f", "Expression", formula="sin(u) + 1"), blk("y", "Output")],
            [("f.y", "f.u"), ("f.y", "y.u")]), ("f",))
    bad_docs["loop-through-subsystem"] = (
        doc([{"id": "s", "type": "Subsystem", "diagram": {
            "blocks": [blk("i", "Inport"), blk("g", "Gain", k=2), blk("o", "Outport")],
            "wires": [{"src": "i.y", "dst": "g.u"}, {"src": "g.y", "dst": "o.u"}]}},
            blk("y", "Output")], [("s.o", "s.i"), ("s.o", "y.u")]), ())
    bad_docs["loop-through-biproper-tf"] = (
        doc([blk("tf", "TransferFunction", num=[1, 0], den=[1, 1]), blk("y", "Output")],
            [("tf.y", "tf.u"), ("tf.y", "y.u")]), ("tf",))
    bad_docs["loop-through-statespace-d"] = (
        doc([blk("ss", "StateSpace", A=-1, B=1, C=1, D=1), blk("y", "Output")],
            [("ss.y", "ss.u"), ("ss.y", "y.u")]), ("ss",))
    # subsystem misuse
    bad_docs["inport-at-top"] = (doc([blk("i", "Inport"), blk("y", "Output")], [("i.y", "y.u")]),
                                 ())
    bad_docs["outport-at-top"] = (doc([blk("c", "Constant"), blk("o", "Outport")],
                                      [("c.y", "o.u")]), ())
    bad_docs["subsystem-port-missing"] = (
        doc([blk("c", "Constant"), {"id": "s", "type": "Subsystem", "diagram": {
            "blocks": [blk("i", "Inport"), blk("o", "Outport")],
            "wires": [{"src": "i.y", "dst": "o.u"}]}}, blk("y", "Output")],
            [("c.y", "s.nope"), ("s.o", "y.u")]), ("nope",))
    bad_docs["subsystem-inport-unwired"] = (
        doc([{"id": "s", "type": "Subsystem", "diagram": {
            "blocks": [blk("i", "Inport"), blk("o", "Outport")],
            "wires": [{"src": "i.y", "dst": "o.u"}]}}, blk("y", "Output")],
            [("s.o", "y.u")]), ("s",))
    bad_docs["subsystem-duplicate-inner-id"] = (
        doc([{"id": "s", "type": "Subsystem", "diagram": {
            "blocks": [blk("p", "Inport"), blk("p", "Outport")],
            "wires": [{"src": "p.y", "dst": "p.u"}]}}], []), ("p",))
    bad_docs["subsystem-with-simulation"] = (
        doc([{"id": "s", "type": "Subsystem", "diagram": {
            "blocks": [], "wires": [], "simulation": {"stop": 1}}}], []), ("s",))
    bad_docs["subsystem-params"] = (
        doc([{"id": "s", "type": "Subsystem", "params": {"k": 1},
              "diagram": {"blocks": [], "wires": []}}], []), ("s",))
    bad_docs["subsystem-bad-inner-param"] = (
        doc([{"id": "s", "type": "Subsystem", "diagram": {
            "parameters": {"k": "1/0"},
            "blocks": [blk("c", "Constant", value="k"), blk("o", "Outport")],
            "wires": [{"src": "c.y", "dst": "o.u"}]}}, blk("y", "Output")], [("s.o", "y.u")]),
        ("s",))
    # layout garbage that the schema refuses
    for name, layout in {"width-0": {"width": 0}, "width-negative": {"width": -1},
                         "rotation-45": {"rotation": 45}, "flip-string": {"flip": "yes"},
                         "x-string": {"x": "1e308"}, "label-number": {"label": 5}}.items():
        bad_docs[f"layout-{name}"] = (variant(setter(("blocks", 4, "layout"), layout)), ("y",))
    # settings that the schema refuses
    for name, sim in {"rtol-0": {"rtol": 0}, "atol-negative": {"atol": -1},
                      "solver-unknown": {"solver": "ode45"}, "backend-unknown": {"backend": "gpu"},
                      "step-0": {"step": 0, "solver": "rk4"}, "max-step-0": {"max_step": 0},
                      "output-interval-negative": {"output_interval": -0.1},
                      "stop-string": {"stop": "10"}, "stop-before-start": {"start": 5, "stop": 1},
                      "stop-equals-start": {"start": 1, "stop": 1},
                      "start-1e308-stop-minus": {"start": 1e308, "stop": -1e308},
                      "euler-without-step": {"solver": "euler"},
                      "rk4-without-step": {"solver": "rk4", "step": None}}.items():
        bad_docs[f"settings-{name}"] = (variant(lambda d, s=sim: d["simulation"].update(s)), ())
    # parameters
    for name, params in {"cycle": {"a": "b", "b": "a"}, "self": {"tau": "tau"},
                         "keyword": {"tau": 0.5, "lambda": 1},
                         # (a parameter may shadow pi and e: expressions' shadow/* cases)
                         "constant-inf": {"tau": 0.5, "inf": 0},
                         "bad-name": {"tau": 0.5, "1x": 1}, "unknown-ref": {"tau": "nope + 1"},
                         "dunder": {"tau": 0.5, "__class__": 1}, "None": {"tau": 0.5, "None": 1},
                         "True": {"tau": 0.5, "True": 1}}.items():
        bad_docs[f"parameters-{name}"] = (variant(setter(("parameters",), params)), ())
    # block parameters the library refuses
    for name, (index, key, value, words) in {
            "unknown-param": (3, "gain", 2, ("fb", "gain")),
            "missing-required": (None, None, None, ("ss",)),
            "choice-bad": (2, "ic_source", "file", ("integ", "ic_source")),
            "signs-bad": (1, "signs", "+*", ("sum", "signs")),
            "signs-empty": (1, "signs", "", ("sum", "signs")),
            "signs-number": (1, "signs", 2, ("sum", "signs")),
            "x0-string-garbage": (2, "x0", "zero", ("integ", "x0")),
            "k-bool": (3, "k", True, ("fb", "k")),
            "lower-above-upper": (2, "upper", -1, ("integ",)),
    }.items():
        if index is None:
            d = doc([blk("ss", "StateSpace", A=-1), blk("y", "Output")], [("ss.y", "y.u")])
        else:
            d = variant(setter(("blocks", index, "params", key), value))
        bad_docs[f"block-{name}"] = (d, words)

    # accepted today and harmless: the contract allows either answer
    lenient_docs = {"diagram-on-a-gain", "outport-at-top", "parameters-dunder", "block-k-bool"}
    for name, (d, words) in bad_docs.items():
        if name in lenient_docs:
            c.diagram_cases(cat, name, d, exits=(0, 2))
        else:
            c.diagram_cases(cat, name, d, exits=BAD, mentions=words)

    # valid but unusual: these must work (exit 0), or fail cleanly where noted
    fine: dict[str, tuple[dict, tuple[int, ...]]] = {
        "version-1.0": (variant(setter(("version",), 1.0)), (0,)),
        "bom": (None, (0,)),
        "emoji-description": (variant(setter(("description",), "\U0001f680 \u202e RTL \u0301")),
                              (0,)),
        "huge-description": (variant(setter(("description",), "x" * 5_000_000)), (0,)),
        "huge-label": (variant(setter(("blocks", 4, "layout"), {"label": "L" * 1_000_000})), (0,)),
        "layout-1e308": (variant(setter(("blocks", 4, "layout"), {"x": 1e308, "y": -1e308,
                                                                  "width": 1e308})), (0,)),
        "layout-extra-keys": (variant(setter(("blocks", 4, "layout"), {"z": [1, {"a": None}]})),
                              (0,)),
        "points-1e308": (variant(setter(("wires", 0, "points"), [[1e308, -1e308]] * 1000)), (0,)),
        "empty-diagram": (doc([], []), (0, 2)),
        "no-logs": (doc([blk("c", "Constant")], []), (0, 2)),
        "deep-subsystem-10": (_deep_subsystem(10), (0,)),
        "deep-subsystem-60": (_deep_subsystem(60), (0, 2)),
        "deep-subsystem-300": (_deep_subsystem(300), (0, 2)),
        "deep-subsystem-2000": (_deep_subsystem(2000), (0, 2)),
        "ids-python-keywords": (None, (0,)),
        "ids-engine-names": (None, (0,)),
        "chain-500": (doc([blk("c", "Constant")] + [blk(f"g{i}", "Gain", k=1.0)
                                                    for i in range(500)] + [blk("y", "Output")],
                          [("c.y", "g0.u")] + [(f"g{i}.y", f"g{i + 1}.u") for i in range(499)]
                          + [("g499.y", "y.u")], stop=0.1), (0,)),
    }
    fine["bom"] = (None, (0,))
    for name, (d, exits) in fine.items():
        if name == "bom":
            content: bytes | dict = b"\xef\xbb\xbf" + base_raw
        elif name == "ids-python-keywords":
            content = _renamed(["class", "def", "lambda", "None", "True", "import", "return"])
        elif name == "ids-engine-names":
            content = _renamed(["x", "t", "dx", "np", "math", "ev", "changed", "init"])
        else:
            content = d
        c.diagram_cases(cat, name, content, exits=exits,
                        validate_exits=tuple(sorted({0} | set(exits))) if 0 in exits else None,
                        budget=5.0)

    # wide signals written as expressions that would allocate them
    wide = {
        "constant-zeros-1e9": ("Constant", "value", "zeros(1e9)"),
        "constant-zeros-1e7": ("Constant", "value", "zeros(1e7)"),
        "constant-ones-1e6": ("Constant", "value", "ones(1e6)"),
        "constant-linspace-1e8": ("Constant", "value", "linspace(0, 1, 1e8)"),
        "constant-list-repeat": ("Constant", "value", "[1] * 1000000000"),
        "constant-zeros-1e7-sum": ("Constant", "value", "zeros(1e7) + ones(1e7) * 2"),
        "sine-amplitude-1e6": ("Sine", "amplitude", "ones(1e6)"),
        "step-after-1e7": ("Step", "after", "zeros(9999999)"),
        "ramp-slope-1e6": ("Ramp", "slope", "linspace(0, 1, 1000000)"),
        "pulse-amplitude-1e6": ("Pulse", "amplitude", "ones(1000000)"),
    }
    for name, (btype, key, value) in wide.items():
        d = doc([blk("src", btype, **{key: value}), blk("y", "Output")], [("src.y", "y.u")],
                stop=0.1)
        c.diagram_cases("huge", name, d, exits=ANY, budget=5.0,
                        note="a signal of 1e6..1e9 elements: refuse or run, in bounded memory")
    huge_blocks = {
        "gain-k-1e6": doc([blk("c", "Constant"), blk("g", "Gain", k="ones(1e6)"),
                           blk("y", "Output")], [("c.y", "g.u"), ("g.y", "y.u")], stop=0.1),
        "integrator-x0-1e6": doc([blk("c", "Constant"), blk("i", "Integrator", x0="zeros(1e6)"),
                                  blk("y", "Output")], [("c.y", "i.u"), ("i.y", "y.u")],
                                 stop=0.1),
        "statespace-1e4-square": doc([blk("c", "Constant"),
                                      blk("ss", "StateSpace", A="zeros(10000) * 0 - 1", B=1, C=1),
                                      blk("y", "Output")], [("c.y", "ss.u"), ("ss.y", "y.u")],
                                     stop=0.1),
        "lookup-1e6-breakpoints": doc([blk("c", "Clock"),
                                       blk("l", "LookupTable1D", breakpoints="linspace(0, 1, 1e6)",
                                           table="linspace(0, 1, 1e6)"), blk("y", "Output")],
                                      [("c.y", "l.u"), ("l.y", "y.u")], stop=1e-3),
        # A size case: the run crosses 1,000 of the 1e6 breakpoints (how many events a run
        # may have at what rate is the event-storm cases' matter, under numerics).
        "fromtable-1e6-times": doc([blk("f", "FromTable", times="linspace(0, 1, 1e6)",
                                        values="linspace(0, 1, 1e6)"), blk("y", "Output")],
                                   [("f.y", "y.u")], stop=1e-3),
        "mux-inputs-1e9": doc([blk("m", "Mux", inputs="[1] * 1000000000"), blk("y", "Output")],
                              [("m.y", "y.u")]),
        "mux-inputs-1e6": doc([blk("m", "Mux", inputs=1000000), blk("y", "Output")],
                              [("m.y", "y.u")]),
        "demux-outputs-1e9": doc([blk("c", "Constant"), blk("m", "Demux", outputs=1e9)],
                                 [("c.y", "m.u")]),
        "logic-inputs-1e7": doc([blk("m", "LogicalOperator", inputs="10**7"), blk("y", "Output")],
                                [("m.y", "y.u")]),
        "sum-signs-1e6": doc([blk("s", "Sum", signs="+" * 1_000_000), blk("y", "Output")],
                             [("s.y", "y.u")]),
        "product-ops-1e5": doc([blk("s", "Product", ops="*" * 100_000), blk("y", "Output")],
                               [("s.y", "y.u")]),
        "expression-inputs-1e5": doc([blk("f", "Expression", inputs=",".join(
            f"a{i}" for i in range(100_000)), formula="a0"), blk("y", "Output")],
            [("f.y", "y.u")]),
        "tf-den-1e5": doc([blk("c", "Constant"), blk("tf", "TransferFunction",
                                                    den="ones(100000)"), blk("y", "Output")],
                          [("c.y", "tf.u"), ("tf.y", "y.u")], stop=0.1),
        "json-array-1e6": doc([blk("c", "Constant", value=[0.5] * 1_000_000), blk("y", "Output")],
                              [("c.y", "y.u")], stop=0.1),
    }
    for name, d in huge_blocks.items():
        c.diagram_cases("huge", name, d, exits=ANY, budget=5.0,
                        note="huge sizes from small text: refuse or run, in bounded memory")


def _renamed(ids: list[str]) -> dict:
    """The lag with its block ids replaced (names that collide with generated code)."""
    d = lag()
    mapping = dict(zip(["step", "sum", "integ", "fb", "y"], ids))
    for b in d["blocks"]:
        b["id"] = mapping[b["id"]]
    for w in d["wires"]:
        for end in ("src", "dst"):
            b_id, port = w[end].split(".")
            w[end] = f"{mapping[b_id]}.{port}"
    return d


# Category: diagram paths that are not regular files


def special_paths(c: Corpus) -> None:
    cat = "paths"
    long_name = "n" * 300
    paths: dict[str, tuple[str, list[tuple]]] = {
        "missing": (f"{DIR}/missing.json", []),
        "empty-string": ("", []),
        "directory": (f"{DIR}/folder", [("mkdir", "folder")]),
        "directory-trailing-slash": (f"{DIR}/folder/", [("mkdir", "folder")]),
        "file-with-trailing-slash": (f"{DIR}/d.json/", []),
        "fifo": (f"{DIR}/pipe.json", [("fifo", "pipe.json")]),
        "symlink-to-fifo": (f"{DIR}/link.json", [("fifo", "pipe"), ("symlink", "link.json",
                                                                     "pipe")]),
        "dev-zero": ("/dev/zero", []),
        "dev-urandom": ("/dev/urandom", []),
        "dev-null": ("/dev/null", []),
        "dev-stdin": ("/dev/stdin", []),
        "symlink-to-dev-zero": (f"{DIR}/zero.json", [("symlink", "zero.json", "/dev/zero")]),
        "proc-status": ("/proc/self/status", []),
        "proc-mem": ("/proc/self/mem", []),
        "symlink-loop": (f"{DIR}/loop.json", [("symlink", "loop.json", "loop.json")]),
        "name-too-long": (f"{DIR}/{long_name}.json", []),
        "path-too-long": (f"{DIR}/" + "/".join(["a" * 200] * 30) + "/d.json", []),
        "dash": ("-", []),
        "unreadable": (f"{DIR}/secret.json", [("copy", "secret.json", "d.json"),
                                             ("chmod", "secret.json", 0)]),
    }
    lenient = {"file-with-trailing-slash": (0, 2)}  # pathlib drops the slash: reads d.json
    if os.geteuid() == 0:
        lenient["unreadable"] = (0,)  # root reads it anyway
    for name, (path, setup) in paths.items():
        mentions = (os.path.basename(path.rstrip("/")),) if path.startswith(DIR) else ()
        for command in ("validate", "run"):
            c.add(Case(f"{cat}/{name}/{command}", cat,
                       [command, path, *(["-q"] if command == "run" else [])],
                       files={"d.json": dumps(lag())}, setup=setup,
                       exits=lenient.get(name, BAD),
                       mentions=mentions, budget=5.0,
                       note="validate/run must not hang or allocate on a non-file"))
        c.add(Case(f"{cat}/{name}/api", cat, api={"op": "load", "path": path},
                   files={"d.json": dumps(lag())}, setup=setup, exits=(0, 2), budget=5.0))
    c.add(Case(f"{cat}/nul-in-path/api", cat, api={"op": "load", "path": f"{DIR}/d\x00.json"},
               exits=(2,)))
    c.add(Case(f"{cat}/dash-prefixed/run", cat, ["run", "-d.json"], exits=BAD))


