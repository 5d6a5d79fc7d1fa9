"""Fuzzed input: no document makes loading raise anything but DiagramFileError."""
from __future__ import annotations


import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blocksim.errors import DiagramFileError
from blocksim.diagram.format import (
    diagram_from_dict,
    diagram_to_dict,
    load_diagram,
)


from format_samples import lag_dict


# ---------------------------------------------------------------------------------------------
# Fuzzing: no input makes loading raise anything but DiagramFileError

json_scalars = (st.none() | st.booleans() | st.integers(-10**20, 10**20)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12,
)


def containers(value: Any, trail: tuple = ()) -> list[tuple[Any, Any]]:
    """Every (container, key) slot in a document, so mutations can hit any depth."""
    slots: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for key in list(value):
            slots.append((value, key))
            slots.extend(containers(value[key]))
    elif isinstance(value, list):
        for index in range(len(value)):
            slots.append((value, index))
            slots.extend(containers(value[index]))
    return slots


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    data: Any = lag_dict()
    for _ in range(draw(st.integers(1, 4))):
        slots = containers(data)[::-1]  # hypothesis favours early items: keep "format" last
        action = draw(st.sampled_from(["delete", "replace", "insert", "root"]))
        if action == "root" or not slots:
            if draw(st.integers(0, 9)) == 0:
                data = draw(json_values)
            continue
        container, key = draw(st.sampled_from(slots))
        if action == "delete":
            del container[key]
        elif action == "replace":
            container[key] = draw(json_values)
        elif isinstance(container, dict):
            container[draw(st.text(max_size=6))] = draw(json_values)
        else:
            container.insert(key, draw(json_values))
    return data


FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(mutated_documents())
def test_fuzz_from_dict_raises_only_diagram_file_error(data: Any) -> None:
    try:
        d = diagram_from_dict(data, source="fuzz.json")
    except DiagramFileError as exc:
        assert "fuzz.json" in str(exc) and "\n" not in str(exc)
    else:  # whatever was accepted must survive a round trip
        assert diagram_from_dict(diagram_to_dict(d)) == d


@pytest.fixture(scope="module")
def fuzz_dir():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


@FUZZ
@given(doc=mutated_documents(), cut=st.floats(0, 1), pretty=st.booleans(),
       junk=st.binary(max_size=4))
def test_fuzz_load_truncated_files(fuzz_dir: Path, doc: Any, cut: float, pretty: bool,
                                   junk: bytes) -> None:
    raw = json.dumps(doc, indent=2 if pretty else None).encode()
    raw = raw[: int(len(raw) * cut)] + junk
    path = fuzz_dir / "fuzz.json"
    path.write_bytes(raw)
    try:
        load_diagram(path)
    except DiagramFileError as exc:
        assert str(path) in str(exc)
