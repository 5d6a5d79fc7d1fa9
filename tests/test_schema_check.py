"""The fast schema check never accepts what jsonschema rejects, and accepts valid files."""
from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from blocksim.diagram import schema_check
from blocksim.diagram.format import _parse_json, _validator, migrate
from format_samples import lag_dict
from test_format_fuzz import FUZZ, mutated_documents

DIAGRAMS = Path(__file__).resolve().parents[1] / "diagrams"


def verdicts(doc: Any) -> tuple[bool, bool]:
    validator = _validator()
    return schema_check.is_valid(doc, validator.schema), validator.is_valid(doc)


@pytest.mark.parametrize("path", sorted(DIAGRAMS.rglob("*.json")), ids=lambda p: p.name)
def test_example_diagrams_pass_the_fast_check(path):
    doc = migrate(_parse_json(path.read_text(encoding="utf-8"), str(path)), str(path))
    assert verdicts(doc) == (True, True)


@FUZZ
@given(mutated_documents())
def test_fast_check_is_never_more_lenient_than_jsonschema(doc: Any) -> None:
    fast, full = verdicts(doc)
    assert full or not fast


@pytest.mark.parametrize("change", [
    lambda d: d["blocks"][0].update(id="lag\n"),  # "$" of a pattern accepts a final newline
    lambda d: d["blocks"][0].update(layout={"x": True, "y": 0}),  # a boolean is no number
    lambda d: d["blocks"][0].update(layout={"x": 0, "y": 0, "rotation": False}),
    lambda d: d["simulation"].update(rtol=0),
    lambda d: d["simulation"].update(solver="euler2"),
    lambda d: d.update(version=1.0),
    lambda d: d.update(version=1.5),
    lambda d: d["wires"][0].update(points=[[0, 1, 2]]),
    lambda d: d["wires"][0].update(src="a.b.c"),
    lambda d: d["blocks"][0].update(type=""),
    lambda d: d["blocks"][0]["params"].update({"1x": 2}),
    # a component's when clause reinitialises at most 256 variables (maxProperties)
    lambda d: d.update(components=[{"name": "K", "equations": ["x = 1"], "when": [
        {"condition": "x > 0", "reinit": {f"v{k}": "0" for k in range(256)}}]}]),
    lambda d: d.update(components=[{"name": "K", "equations": ["x = 1"], "when": [
        {"condition": "x > 0", "reinit": {f"v{k}": "0" for k in range(257)}}]}]),
])
def test_fast_check_agrees_on_edge_cases(change):
    doc = copy.deepcopy(lag_dict())
    doc.setdefault("simulation", {})
    change(doc)
    fast, full = verdicts(doc)
    assert full or not fast
    if full:
        assert fast  # what jsonschema accepts, the fast path accepts too (no slow path)


def test_nan_bounds_are_left_to_jsonschema():
    # jsonschema lets NaN pass "exclusiveMinimum" (a failed comparison is no error): the
    # fast check says "not sure" and the loader's own checks decide (rtol must be finite).
    doc = copy.deepcopy(lag_dict())
    doc["simulation"]["rtol"] = math.nan
    assert verdicts(doc) == (False, True)


def test_unknown_keywords_leave_the_answer_to_jsonschema():
    assert not schema_check.is_valid("x", {"type": "string", "format": "email"})
    assert schema_check.is_valid("x", {"type": "string", "title": "a name"})


@pytest.mark.parametrize("place", ["param", "wires", "blocks", "bool-in-param", "mixed"])
def test_long_numeric_arrays_get_the_verdict_of_jsonschema(place):
    """Arrays of thousands of numbers are judged at once (a 1e6-entry table loads in a
    fraction of a second); the verdict stays jsonschema's wherever the array sits."""
    doc = lag_dict()
    numbers = [float(i) for i in range(2000)]
    if place == "param":
        doc["blocks"][0]["params"]["k"] = numbers
    elif place == "wires":
        doc["wires"] = numbers  # wires must be objects
    elif place == "blocks":
        doc["blocks"] = [1] * 50
    elif place == "bool-in-param":
        doc["blocks"][0]["params"]["k"] = numbers[:100] + [True]
    else:
        doc["blocks"][0]["params"]["k"] = numbers[:100] + ["1 + 2"]
    fast, slow = verdicts(doc)
    assert fast == slow or (fast is False and slow is True)  # "not sure" is allowed
    if place in ("wires", "blocks"):
        assert slow is False and fast is False
    if place == "param":
        assert fast is True
