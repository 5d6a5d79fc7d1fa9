"""Every kind of event entry a block's generated code can log is declared by its type
(`BlockType.event_kinds`), and every declared kind is logged by some variant: the
declarations feed `describe`, the docs and the sweep metrics' check, so they must not drift.

The kinds are read from the generated code (`ev.append((block, 'kind'))`) of each block type
compiled alone with each value of its choice and bool parameters (limits finite), of the
blocks that need company (Merge, MinMax over inputs), of every example diagram and of the
user blocks of the tests.
"""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

import blocksim
from blocksim.physical.declare import Component
from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import STATE_EVENT, ParamValues
from blocksim.compiler import CompiledModel, compile_diagram
from blocksim.user import block as user_block
from builders import DIAGRAMS, block, diagram
from modia_user_blocks import registered

ROOT = Path(__file__).resolve().parents[1]
_ENTRY = re.compile(r"ev\.append\(\((\d+), ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)\)")
_FINITE = {"lower": -1.0, "upper": 1.0, "dx_lower": -1.0, "dx_upper": 1.0}
# Types that cannot be compiled alone with default parameters (they need a matrix, a bus, a
# Goto, a loop to solve, a file, conditional subsystems ...).
# A conditional subsystem's kinds are logged by the gate the compiler inserts, under the
# subsystem's id.
LOGGED_BY = {"TriggeredSubsystem": "TriggerGate", "EnabledSubsystem": "EnableGate"}
ALONE_IMPOSSIBLE = {"StateSpace", "AlgebraicConstraint", "MatrixGain", "Inport", "BusSelector",
                    "Demux", "From", "FromFile", "Merge",
                    "Placeholder"}  # (an import's stand-in: it never compiles, by design)


def logged_kinds(model: CompiledModel) -> dict[str, set[str]]:
    """Block type name -> the kinds its generated code in `model` can log."""
    found: dict[str, set[str]] = defaultdict(set)
    for match in _ENTRY.finditer(model.code):
        found[model.block_types[int(match[1])]].add(ast.literal_eval(match[2]))
    return found


def _variants(block_type):
    limits = {p.name: _FINITE[p.name] for p in block_type.params if p.name in _FINITE}
    yield {}
    yield limits
    for prm in block_type.params:
        if prm.kind == "choice":
            for choice in prm.choices:
                yield {**limits, prm.name: choice}
        elif prm.kind == "bool":
            yield {**limits, prm.name: not prm.default}


def _alone(name: str, params: dict) -> blocksim.DiagramBuilder:
    """The block fed by sines on every input, every output logged."""
    block_type = registry.get(name)
    d = blocksim.DiagramBuilder(stop=1)
    b = d.add(name, id="b", **params)
    p = ParamValues({**{prm.name: prm.default for prm in block_type.params}, **params})
    for port in block_type().input_ports(p):
        d.connect(d.add("Sine", id=f"in_{port.name}"), getattr(b, port.name))
    for port in block_type().output_ports(p):
        d.connect(getattr(b, port.name), d.add("Output", id=f"out_{port.name}"))
    return d


def _merge() -> object:
    def enabled(block_id):
        return {"id": block_id, "type": "EnabledSubsystem", "params": {},
                "diagram": {"blocks": [block("c", "Clock"), block("o", "Outport")],
                            "wires": [{"src": "c.y", "dst": "o.u"}]}}
    return diagram([block("s", "Sine"), block("n", "Gain", k=-1.0), enabled("a"),
                    enabled("b"), block("m", "Merge"), block("y", "Output")],
                   [("s.y", "a.enable"), ("s.y", "n.u"), ("n.y", "b.enable"),
                    ("a.o", "m.u1"), ("b.o", "m.u2"), ("m.y", "y.u")])


def _collect() -> tuple[dict[type, set[str]], dict[str, list[str]]]:
    """(block type -> the kinds found, type name -> the variants it could not compile)."""
    found: dict[type, set[str]] = defaultdict(set)
    failed: dict[str, list[str]] = defaultdict(list)
    # components that example diagrams declare themselves: their kinds are their files'
    declared_in_files = {c["name"] for path in DIAGRAMS.rglob("*.json")
                         for c in blocksim.load(path).components}

    def add(model):
        for name, kinds in logged_kinds(model).items():
            block_type = registry.get(name, internal=True)
            if block_type is not None or name not in declared_in_files:
                found[block_type] |= kinds

    for name, block_type in registry.all_types().items():
        for params in _variants(block_type):
            try:
                add(_alone(name, params).compile())
            except Exception as exc:  # (listed and checked below)
                failed[name].append(f"{params}: {exc}")
    add(compile_diagram(_merge()))
    add(_alone("MinMax", {"inputs": 2}).compile())
    for path in sorted(DIAGRAMS.rglob("*.json")):
        add(compile_diagram(blocksim.load(path, trust=sorted((DIAGRAMS / "python").glob("*.py")))))
    with registered():
        from modia_user_blocks import Countdown, ModiaBall, PythonOnlyDecay, SimpleStateEvents
        for user in (ModiaBall, SimpleStateEvents, PythonOnlyDecay, Countdown):
            add(_alone(user.name, {}).compile())
    return found, failed


@pytest.fixture(scope="module")
def collected():
    return _collect()


def _declared(block_type: type) -> set[str]:
    return {kind.name for kind in block_type.event_kinds}


def test_every_logged_kind_is_declared(collected):
    found, _ = collected
    assert None not in found
    undeclared = {t.name: sorted(kinds - _declared(t)) for t, kinds in found.items()
                  if kinds - _declared(t)}
    assert not undeclared, f"kinds logged but not declared in event_kinds: {undeclared}"
    assert all(STATE_EVENT.name not in kinds for kinds in found.values())  # the engine's


def test_every_declared_kind_is_logged_by_some_variant(collected):
    found, _ = collected
    stale = {}
    for name, block_type in registry.all_types().items():
        if issubclass(block_type, Component):
            continue  # its kinds are its when clauses' events, which its network logs as written
        logged_by = registry.get(LOGGED_BY.get(name, name), internal=True)
        missing = _declared(block_type) - found.get(logged_by, set())
        if missing:
            stale[name] = sorted(missing)
    assert not stale, f"declared kinds that no variant logs: {stale}"


def test_only_the_listed_types_escape_the_compilation_alone(collected):
    """A new block type is compiled alone (its kinds are read) unless listed here; the
    listed ones' declared kinds are found in the examples or the special diagrams (above)."""
    _, failed = collected
    always = {name for name, errors in failed.items()
              if len(errors) == sum(1 for _ in _variants(registry.get(name)))
              and not issubclass(registry.get(name), Component)}  # a port must be connected
    assert always == ALONE_IMPOSSIBLE, {name: failed[name][0] for name in always}


def test_user_block_kinds_follow_its_event_function():
    with registered():
        from modia_user_blocks import ModiaBall

        assert [k.name for k in ModiaBall.event_kinds] == ["reset", "mode", "stop"]
        assert ModiaBall.locates_crossings()
        text = ModiaBall.describe()
    assert "Events (" in text and "  mode " in text and "  state " in text


def test_describe_lists_the_kinds_with_state_for_a_block_with_crossings():
    text = registry.get("Integrator").describe()
    events = text[text.index("Events ("):]
    assert [line.split()[0] for line in events.splitlines()[1:]] == [
        "state", "lower", "upper", "leave"]
    assert "Events (" not in registry.get("Gain").describe()
    assert "  trigger " in registry.get("TriggeredSubsystem").describe()
    assert "  state " in registry.get("TriggeredSubsystem").describe()


def test_the_semantics_doc_has_the_table_of_every_type_and_kind():
    """docs/semantics.md's table: one row per declared kind, with its meaning, as declared."""
    text = (ROOT / "docs" / "semantics.md").read_text()
    rows = set()
    for line in text.splitlines():
        if line.startswith("| `"):
            name, kind, doc = line.strip().strip("|").split(" | ")
            rows.add((name.strip().strip("`"), kind.strip("`"), doc.strip()))
    want = {(name, kind.name, kind.doc) for name, t in registry.all_types().items()
            for kind in t.event_kinds}
    want.add(("any block with zero crossings", STATE_EVENT.name, STATE_EVENT.doc))
    want |= {("UserBlock", kind.name, kind.doc) for kind in user_block.EVENT_KINDS}
    assert rows == want, (sorted(want - rows), sorted(rows - want))
