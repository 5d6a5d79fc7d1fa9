"""The hostile corpus: every case a user (or an attacker) could hand blocksim, built
deterministically so that a failure reproduces from its case id alone.

A Case is data: the files to create in a fresh folder, the CLI arguments or the API call,
and what the contract allows (exit statuses, words the one-line message must contain, files
that must be left byte-identical). `build_corpus()` returns the same list on every call.
Paths inside cases use the placeholder @DIR@ (the case's folder) and @MARK@ (a marker file
that must never exist: every code-execution payload tries to create it).

    python -m hostile.corpus --list            # ids and notes
    python -m hostile.corpus --write FOLDER    # the files of every case, for manual replay
"""
from __future__ import annotations

import copy
import json
import os
import random
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

SEED = 20240917
DIAGRAMS = Path(__file__).resolve().parents[2] / "diagrams"
DIR = "@DIR@"
MARK = "@DIR@/PWNED"
DIAGRAM = "@DIR@/d.json"

ANY = (0, 1, 2)
BAD = (2,)
RUN_OK_OR_FAIL = (0, 1)


@dataclass
class Case:
    """One hostile input and the contract it must meet."""

    id: str
    category: str
    argv: list[str] | None = None            # CLI arguments (after `blocksim`)
    api: dict[str, Any] | None = None        # or an API call: op load|compile|simulate
    files: dict[str, bytes] = field(default_factory=dict)
    setup: list[tuple] = field(default_factory=list)  # ("fifo", name), ("mkdir", name), ...
    exits: tuple[int, ...] = ANY             # allowed CLI exit statuses (API: mapped)
    mentions: tuple[str, ...] = ()           # words the error line must contain
    unchanged: tuple[str, ...] = ()          # files that must stay byte-identical
    keep_fifo: tuple[str, ...] = ()          # special files (FIFO, device) that must keep
                                             # their file type: never replaced by a file
    budget: float = 5.0                      # seconds of wall time
    note: str = ""
    env: dict[str, str] = field(default_factory=dict)  # environment variables for the case

    @property
    def kind(self) -> str:
        return "api" if self.api is not None else "cli"


# ---------------------------------------------------------------------------------------------
# Building blocks of diagrams


def blk(block_id: str, block_type: str, **params: Any) -> dict:
    return {"id": block_id, "type": block_type, "params": params}


def doc(blocks: list[dict], wires: Iterable[tuple[str, str]], parameters: dict | None = None,
        **simulation: Any) -> dict:
    return {"format": "blocksim", "version": 1, "parameters": parameters or {},
            "simulation": simulation, "blocks": blocks,
            "wires": [{"src": s, "dst": d} for s, d in wires]}


def lag(**simulation: Any) -> dict:
    """The first-order lag of docs/format.md: Step -> Sum -> Integrator, Gain 1/tau back."""
    sim = {"stop": 5.0, "output_interval": 0.01, **simulation}
    return doc([blk("step", "Step", time=1, before=0, after=1), blk("sum", "Sum", signs="+-"),
                blk("integ", "Integrator", x0=0), blk("fb", "Gain", k="1 / tau"),
                {"id": "y", "type": "Output", "params": {}, "layout": {"x": 340, "y": 100}}],
               [("step.y", "sum.u1"), ("sum.y", "integ.u"), ("integ.y", "fb.u"),
                ("fb.y", "sum.u2"), ("integ.y", "y.u")], {"tau": 0.5}, **sim)


def example(name: str) -> dict:
    return json.loads((DIAGRAMS / name).read_text())


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------------------------------------
# Case factories


class Corpus:
    def __init__(self) -> None:
        self.cases: list[Case] = []
        self.rng = random.Random(SEED)

    def add(self, case: Case) -> None:
        self.cases.append(case)

    def diagram_cases(self, category: str, name: str, content: bytes | dict, *,
                      exits: tuple[int, ...] = BAD, validate_exits: tuple[int, ...] | None = None,
                      mentions: tuple[str, ...] = (), budget: float = 5.0, note: str = "",
                      commands: tuple[str, ...] = ("validate", "run", "api"),
                      run_args: tuple[str, ...] = ()) -> None:
        """One diagram file through `validate`, `run` and the API."""
        raw = content if isinstance(content, bytes) else dumps(content)
        files = {"d.json": raw}
        ment = ("d.json", *mentions)
        if "validate" in commands:
            self.add(Case(f"{category}/{name}/validate", category,
                          ["validate", DIAGRAM], files=files,
                          exits=validate_exits or exits, mentions=ment, unchanged=("d.json",),
                          budget=budget, note=note))
        if "run" in commands:
            self.add(Case(f"{category}/{name}/run", category,
                          ["run", DIAGRAM, "-q", "--out", f"{DIR}/out.csv", *run_args],
                          files=files, exits=exits, mentions=ment, unchanged=("d.json",),
                          budget=budget, note=note))
        if "api" in commands:
            self.add(Case(f"{category}/{name}/api", category,
                          api={"op": "simulate", "path": DIAGRAM, "settings": {}},
                          files=files, exits=exits, unchanged=("d.json",), budget=budget,
                          note=note))

    def run_case(self, category: str, name: str, data: dict | bytes, args: Iterable[str] = (),
                 *, exits: tuple[int, ...] = ANY, mentions: tuple[str, ...] = (),
                 budget: float = 5.0, note: str = "", extra_files: dict | None = None,
                 setup: list[tuple] | None = None, unchanged: tuple[str, ...] = ("d.json",),
                 keep_fifo: tuple[str, ...] = (), command: str = "run") -> None:
        raw = data if isinstance(data, bytes) else dumps(data)
        files = {"d.json": raw, **(extra_files or {})}
        argv = [command, DIAGRAM, *args]
        self.add(Case(f"{category}/{name}", category, argv, files=files, setup=setup or [],
                      exits=exits, mentions=mentions, unchanged=unchanged, keep_fifo=keep_fifo,
                      budget=budget, note=note))

    def api_case(self, category: str, name: str, data: dict | bytes, *, op: str = "simulate",
                 params: dict | None = None, settings: dict | None = None,
                 exits: tuple[int, ...] = ANY, budget: float = 5.0, note: str = "",
                 path: str = DIAGRAM, setup: list[tuple] | None = None) -> None:
        raw = data if isinstance(data, bytes) else dumps(data)
        self.add(Case(f"{category}/{name}", category,
                      api={"op": op, "path": path, "params": params or {},
                           "settings": settings or {}},
                      files={"d.json": raw}, setup=setup or [], exits=exits,
                      unchanged=("d.json",), budget=budget, note=note))


# ---------------------------------------------------------------------------------------------
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
                         "keyword": {"tau": 0.5, "lambda": 1}, "constant-pi": {"tau": 0.5, "pi": 3},
                         "constant-e": {"tau": 0.5, "e": 1}, "constant-inf": {"tau": 0.5, "inf": 0},
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


# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
# Category: expression attacks


CODE_PAYLOADS = {
    "import-system": f"__import__('os').system('touch {MARK}')",
    "open": f"open('{MARK}', 'w')",
    "eval": f"eval(\"open('{MARK}', 'w')\")",
    "exec": "exec('import os')",
    "subclasses": "().__class__.__bases__[0].__subclasses__()",
    "comprehension": "[c for c in ().__class__.__base__.__subclasses__()]",
    "lambda-call": f"(lambda: open('{MARK}', 'w'))()",
    "attribute": "tau.__class__",
    "builtins": "__builtins__",
    "globals": "globals()",
    "fstring": f"f'{{open(\"{MARK}\", \"w\")}}'",
    "format-method": "'{0.__class__}'.format(1)",
    "percent-format": "'%s' % 1",
    "dunder-import-name": "__import__",
    "np-attr": "np.exp(1)",
    "math-attr": "math.pi",
    "function-globals": "sin.__globals__",
    "walrus": "(x := 1)",
    "statement": "1; import os",
    "import": "import os",
    "leading-newline": f"\n__import__('os').system('touch {MARK}')",
    "comment-only": "# nothing",
    "lambda": "lambda x: x",
    "dict": "{1: 2}", "set": "{1}", "slice": "[1, 2][0:1]", "matmul": "[1] @ [1]",
    "floordiv": "7 // 2", "invert": "~1", "shift": "1 << 1000", "xor": "2 ^ 3",
    "name-True": "1 if True else 0", "yield": "(yield 1)", "await": "await x",
    "starred": "max(*[1, 2])", "keyword-arg": "round(1.5, ndigits=1)", "print": "print(1)",
    "string-repeat": "'a' * 10**9", "bytes": "b'abc'", "complex": "1j", "ellipsis": "...",
    "is": "1 is 1", "in": "1 in [1]", "getattr": "getattr(1, 'real')",
    "type-call": "type(1)", "breakpoint": "breakpoint()", "vars": "vars()",
    "dunder-name": "__name__", "unicode-name": "\u03c0 * 2", "fullwidth-sin": "\uff53in(1)",
    "nbsp": "1\u00a0+ 1", "rtl": "\u202e1 + 1", "nul": "1 +\x00 1",
    "surrogate": "1 + \udcff",
}
HEAVY_PAYLOADS = {
    "pow-tower": "10**10**10", "pow-tower-9": "9**9**9**9", "pow-1024": "2**1024",
    "overflow-mul": "1e308 * 10", "overflow-neg": "-1e308 * 10",
    "deep-parens": "(" * 1000 + "1" + ")" * 1000, "deep-parens-90": "(" * 90 + "1" + ")" * 90,
    "long-sum": "1+" * 4999 + "1", "long-unary": "-" * 9000 + "1",
    "deep-lists": "[" * 3000 + "]" * 3000, "too-long": "1" * 10_001,
    "zeros-1e9": "zeros(1e9)", "ones-1e7": "ones(10**7)", "linspace-1e12": "linspace(0, 1, 1e12)",
    "sum-of-huge": "sum(ones(1e7) * ones(1e7))", "repeat-list": "[1] * 1000000000",
    "div-zero": "1/0", "zero-div-zero": "0/0", "log-0": "log(0)", "sqrt-minus-1": "sqrt(-1)",
    "mod-0": "mod(1, 0)", "zero-pow-minus-1": "0**-1", "inf-minus-inf": "inf - inf",
    "inf-times-0": "inf * 0", "exp-1000": "exp(1000)", "asin-2": "asin(2)",
    "zeros-negative": "zeros(-1)", "zeros-fraction": "zeros(1.5)", "index-out": "[1, 2][5]",
    "index-fraction": "[1, 2][0.5]", "index-scalar": "1[0]", "max-empty": "max(zeros(0))",
    "ragged": "[[1, 2], [3]]", "int-huge-literal": "1" + "0" * 400, "float-huge": "1e400",
    "many-args": "max(" + ",".join(["1"] * 5000) + ")",
    "hypot-big": "hypot(1e308, 1e308)", "linspace-nan": "linspace(0, inf, 3)",
    "pi-name": "pi", "e-name": "e", "inf-name": "inf",
    "bidi-comment": "1 # \u202e ) + open('x')",  # a comment: the value is 1 (Trojan Source)
}


def expressions(c: Corpus) -> None:
    cat = "expressions"
    payloads = {**{f"code-{k}": (v, True) for k, v in CODE_PAYLOADS.items()},
                **{f"heavy-{k}": (v, False) for k, v in HEAVY_PAYLOADS.items()}}

    def gain_in_file(value):
        d = lag()
        d["blocks"][3]["params"]["k"] = value
        return d, [], ("fb", "k")

    def parameter_in_file(value):
        d = lag()
        d["parameters"]["tau"] = value
        return d, [], ("tau",)

    def set_value(value):
        return lag(), ["--set", f"tau={value}"], ("tau",)

    def formula(value):
        d = doc([blk("c", "Clock"), blk("f", "Expression", formula=value),
                 blk("y", "Output")], [("c.y", "f.u"), ("f.y", "y.u")], stop=1.0)
        return d, [], ("f", "formula")

    def mux_inputs(value):
        d = doc([blk("c", "Constant"), blk("m", "Mux", inputs=value), blk("y", "Output")],
                [("c.y", "m.u1"), ("m.y", "y.u")], stop=1.0)
        return d, [], ("m", "inputs")

    def switch_threshold(value):
        d = doc([blk("c", "Clock"), blk("s", "Switch", threshold=value), blk("y", "Output")],
                [("c.y", "s.u1"), ("c.y", "s.u2"), ("c.y", "s.u3"), ("s.y", "y.u")], stop=1.0)
        return d, [], ("s", "threshold")

    def subsystem_parameter(value):
        d = doc([{"id": "s", "type": "Subsystem", "diagram": {
            "parameters": {"k": value},
            "blocks": [blk("c", "Constant", value="k"), blk("o", "Outport")],
            "wires": [{"src": "c.y", "dst": "o.u"}]}}, blk("y", "Output")], [("s.o", "y.u")],
            stop=1.0)
        return d, [], ("k",)

    points = {"gain": gain_in_file, "param": parameter_in_file, "set": set_value,
              "formula": formula, "mux-inputs": mux_inputs, "switch": switch_threshold,
              "subsystem-param": subsystem_parameter}
    for pname, make in points.items():
        for name, (value, is_code) in payloads.items():
            if pname == "set" and "\x00" in value:
                continue  # a NUL cannot be passed on a command line
            if not is_code and pname in ("param", "switch", "subsystem-param"):
                continue  # the heavy payloads evaluate alike there: once per kind is enough
            d, args, words = make(value)
            exits = BAD if is_code else ANY
            mentions = words if is_code else ()
            if is_code and name in ("code-fullwidth-sin", "code-unicode-name"):
                exits, mentions = ANY, ()  # NFKC makes them plain names: may be valid or not
            if "\udcff" in value and pname != "set":
                mentions = ()  # a lone surrogate cannot be UTF-8: the file itself is refused
            c.run_case(cat, f"{pname}/{name}", d, ["-q", *args], exits=exits, mentions=mentions,
                       note="the payload must be refused, never run")
    # text parameters that reach generated code
    injections = {
        "inputs-dunder": ("Expression", {"inputs": "__builtins__", "formula": "__builtins__"}),
        "inputs-import": ("Expression", {"inputs": "__import__", "formula": "__import__ + 1"}),
        "inputs-code": ("Expression", {"inputs": f"u); open('{MARK}', 'w'); (u",
                                       "formula": "u"}),
        "inputs-newline": ("Expression", {"inputs": "u\nimport os", "formula": "u"}),
        "inputs-keyword": ("Expression", {"inputs": "class", "formula": "1"}),
        "inputs-empty": ("Expression", {"inputs": "", "formula": "1"}),
        "inputs-commas": ("Expression", {"inputs": ",,,", "formula": "1"}),
        "inputs-repeat": ("Expression", {"inputs": "u, u", "formula": "u"}),
        "inputs-pi": ("Expression", {"inputs": "pi", "formula": "pi"}),
        "formula-string-escape": ("Expression", {"formula": "u\" + open('x') + \""}),
        "formula-triple-quote": ("Expression", {"formula": "'''"}),
        "formula-backslash": ("Expression", {"formula": "u \\\n + 1"}),
        "formula-tab": ("Expression", {"formula": "\tu"}),
        "formula-empty": ("Expression", {"formula": ""}),
        "signs-code": ("Sum", {"signs": "+-'); open('x"}),
        "ops-code": ("Product", {"ops": "*/'); import os; ('"}),
        "function-code": ("MathFunction", {"function": "exp(u); open('x')"}),
        "operator-code": ("CompareToConstant", {"operator": "<= 0 or open('x') or u"}),
        "criterion-code": ("Switch", {"criterion": "u2 >= a or __import__('os')"}),
        "extrapolation-code": ("LookupTable1D", {"extrapolation": "linear; import os"}),
    }
    for name, (btype, params) in injections.items():
        d = doc([blk("c", "Clock"), blk("b", btype, **params), blk("y", "Output")], [], stop=1.0)
        c.run_case(cat, f"text/{name}", d, ["-q"], exits=BAD, mentions=("b",),
                   note="text that reaches generated code must be refused or quoted")
    # names that collide with the generated code's own names: valid diagrams
    for name in ("x", "t", "dx", "m", "g", "z", "zo", "zn", "ev", "np", "math", "changed",
                 "init", "y", "self", "u", "out", "_", "__builtins__", "print"):
        d = doc([blk("c", "Clock"), blk("s", "Sine"),
                 blk("f", "Expression", inputs=f"{name}, other", formula=f"{name} + 2 * other"),
                 blk("out1", "Output")],
                [("c.y", f"f.{name}"), ("s.y", "f.other"), ("f.y", "out1.u")], stop=1.0,
                output_interval=0.1)
        c.run_case(cat, f"input-named/{name}", d, ["-q"], exits=(0,),
                   note="an input name that is also a name of the generated code")
        d = lag()
        d["parameters"] = {name: 0.5}
        d["blocks"][3]["params"]["k"] = f"1 / {name}"
        c.run_case(cat, f"parameter-named/{name}", d, ["-q"], exits=(0,) if name not in (
            "__builtins__",) else (0, 2))
    # parameter names that shadow constants and functions
    for name in ("pi", "e", "inf", "sin", "exp", "zeros", "max", "nan", "True", "None",
                 "lambda", "__import__", "__class__", "t"):
        d = lag()
        d["parameters"] = {"tau": 0.5, name: 3}
        d["blocks"][3]["params"]["k"] = f"1 / tau + 0 * {name}" if name not in (
            "True", "None", "lambda") else "1 / tau"
        c.run_case(cat, f"shadow/{name}", d, ["-q"], exits=ANY,
                   mentions=())
        c.run_case(cat, f"shadow-set/{name}", lag(), ["-q", "--set", f"{name}=3"], exits=BAD,
                   mentions=(name,))
    # parameter graphs: long chains (a recursive resolver meets the recursion limit), wide
    # fans, a subsystem parameter defined by the outer one of the same name
    for n in (500, 5000):
        d = lag()
        d["parameters"] = {"p0": 0.5, **{f"p{i}": f"p{i - 1} + 0" for i in range(1, n)}}
        d["parameters"]["tau"] = f"p{n - 1}"
        c.run_case(cat, f"parameter-chain-{n}", d, ["-q"], exits=(0, 2))
        d = lag()
        d["parameters"] = {f"p{i}": f"p{(i + 1) % n}" for i in range(n)}
        d["parameters"]["tau"] = "p0"
        c.run_case(cat, f"parameter-cycle-{n}", d, ["-q"], exits=BAD, mentions=("cycle",))
    d = lag()
    d["parameters"] = {"tau": 0.5, "big": "+".join(["tau"] * 2400)}
    c.run_case(cat, "parameter-wide-sum", d, ["-q"], exits=(0, 2))  # deep tree: may be refused
    shadow = doc([{"id": "s", "type": "Subsystem", "diagram": {
        "parameters": {"k": "k + 1"},
        "blocks": [blk("c", "Constant", value="k"), blk("o", "Outport")],
        "wires": [{"src": "c.y", "dst": "o.u"}]}}, blk("y", "Output")], [("s.o", "y.u")],
        {"k": 1.0}, stop=1.0)
    c.run_case(cat, "subsystem-parameter-shadows-itself", shadow, ["-q"], exits=(0, 2))
    c.run_case(cat, "subsystem-parameter-shadow-set", shadow, ["-q", "--set", "k=5"],
               exits=(0, 2))
    # integer parameters given as lists or huge values
    for name, value in {"list": "[2, 3]", "repeat": "[2] * 3", "float": 2.5, "negative": -2,
                        "zero": 0, "huge": 1e300, "inf": "inf", "bool": True,
                        "string": "two", "json-list": [2, 3]}.items():
        d = doc([blk("c", "Constant"), blk("m", "Mux", inputs=value), blk("y", "Output")],
                [("c.y", "m.u1"), ("c.y", "m.u2"), ("m.y", "y.u")], stop=1.0)
        c.run_case(cat, f"int-param/{name}", d, ["-q"], exits=ANY)


# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------
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


def build_corpus() -> list[Case]:
    """Every case, in a fixed order; ids are unique."""
    c = Corpus()
    handpicked(c)
    malformed(c)
    special_paths(c)
    cli_args(c)
    outputs(c)
    expressions(c)
    numerics(c)
    discrete(c)
    mutants(c)
    ids = [case.id for case in c.cases]
    dupes = {i for i in ids if ids.count(i) > 1} if len(set(ids)) != len(ids) else set()
    if dupes:
        raise AssertionError(f"duplicate case ids: {sorted(dupes)[:5]}")
    return c.cases


def materialize(case: Case, folder: Path) -> None:
    """Create the case's files and special files in `folder` (which exists)."""
    root = str(folder)
    for name, raw in case.files.items():
        (folder / name).write_bytes(raw.replace(DIR.encode(), root.encode()))
    for op in case.setup:
        kind, name = op[0], op[1]
        path = folder / name
        if kind == "mkdir":
            path.mkdir(parents=True, exist_ok=True)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "chardev":  # like /dev/null (1, 3); a FIFO where mknod is refused
            try:
                os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            except OSError:
                os.mkfifo(path)
        elif kind == "symlink":
            os.symlink(op[2], path)
        elif kind == "copy":
            path.write_bytes((folder / op[2]).read_bytes())
        elif kind == "chmod":
            os.chmod(path, op[2])
        else:
            raise ValueError(f"unknown setup {op}")


def substitute(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(DIR, root)
    if isinstance(value, list):
        return [substitute(v, root) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, root) for k, v in value.items()}
    return value


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--write", metavar="FOLDER")
    parser.add_argument("--only", default="", help="ids starting with this")
    parser.add_argument("--show", metavar="ID", help="print one case: command and files")
    args = parser.parse_args(argv)
    if args.show:
        case = next((c for c in build_corpus() if c.id == args.show), None)
        if case is None:
            print(f"no case {args.show}", file=sys.stderr)
            return 2
        print(f"{case.id}  (allowed exit {'/'.join(map(str, case.exits))}) {case.note}")
        print("  blocksim " + " ".join(json.dumps(a) if not a or " " in a else a
                                       for a in case.argv) if case.argv is not None
              else f"  API {case.api}")
        for op in case.setup:
            print(f"  setup: {op}")
        for name, raw in case.files.items():
            text = raw.decode("utf-8", "backslashreplace")
            print(f"  {name} ({len(raw)} bytes): "
                  + (text if len(text) <= 1200 else text[:600] + " ... " + text[-300:]))
        return 0
    cases = [case for case in build_corpus() if case.id.startswith(args.only)]
    if args.write:
        out = Path(args.write)
        for case in cases:
            folder = out / case.id.replace("/", "__")
            folder.mkdir(parents=True, exist_ok=True)
            for name, raw in case.files.items():
                (folder / name).write_bytes(raw)
            (folder / "case.json").write_text(json.dumps(
                {"id": case.id, "argv": case.argv, "api": case.api, "setup": case.setup,
                 "exits": case.exits, "mentions": case.mentions, "note": case.note},
                indent=1, ensure_ascii=True))
    if args.list or not args.write:
        counts: dict[str, int] = {}
        for case in cases:
            counts[case.category] = counts.get(case.category, 0) + 1
            if args.list:
                print(f"{case.id}\t{case.note}")
        print(f"{len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
