"""Tests of blocksim.diagram.format: round trips, every error path, atomic saving and fuzzed input."""
from __future__ import annotations

import copy
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import blocksim.diagram.format as fmt
from blocksim.errors import DiagramFileError
from blocksim.diagram.format import (
    SCHEMA_PATH,
    diagram_from_dict,
    diagram_to_dict,
    load_diagram,
    migrate,
    save_diagram,
)
from blocksim.diagram.model import (
    BACKENDS,
    FORMAT_VERSION,
    SOLVERS,
    Block,
    Diagram,
    SimulationSettings,
)


from format_samples import lag_diagram, lag_dict


def error_of(data: Any, source: str = "diagrams/x.json") -> DiagramFileError:
    with pytest.raises(DiagramFileError) as info:
        diagram_from_dict(data, source=source)
    assert source in str(info.value)
    assert info.value.file == source
    return info.value


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# Schema


def test_schema_is_valid_draft_2020_12_and_matches_model() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert tuple(schema["$defs"]["simulation"]["properties"]["solver"]["enum"]) == SOLVERS
    # every backend a run takes can be saved in a file (the file said no to "c" before)
    assert tuple(schema["$defs"]["simulation"]["properties"]["backend"]["enum"]) == BACKENDS
    assert set(schema["$defs"]["simulation"]["properties"]) == set(
        SimulationSettings.__dataclass_fields__)
    jsonschema.Draft202012Validator(schema).validate(lag_dict())
    jsonschema.Draft202012Validator(schema).validate(diagram_to_dict(lag_diagram()))


# ---------------------------------------------------------------------------------------------
# Round trips


def test_dict_round_trip_of_model() -> None:
    d = lag_diagram()
    assert diagram_from_dict(diagram_to_dict(d)) == d


def test_dict_round_trip_of_document() -> None:
    data = lag_dict()
    d = diagram_from_dict(data)
    assert diagram_from_dict(diagram_to_dict(d)) == d
    assert d.block("sub").subsystem.block("gain1").params == {"k": "g"}
    assert d.block("sub").subsystem.parameters == {"g": 3}
    assert d.block("sub").subsystem.simulation == SimulationSettings()
    assert d.wires[1].points == [(1.5, 2.0), (3, 4)]
    assert d.block("step").layout["color"] == "red"
    assert d.block("sum").layout is None
    assert d.simulation == SimulationSettings(stop=5.0, solver="rk4", step=0.01)
    assert data == lag_dict()  # the input is not modified


def test_model_does_not_alias_input() -> None:
    data = lag_dict()
    d = diagram_from_dict(data)
    d.parameters["A"][0][0] = 99
    d.block("step").layout["x"] = 99
    assert data == lag_dict()


def test_minimal_document_gets_defaults() -> None:
    d = diagram_from_dict({"format": "blocksim", "version": 1, "blocks": [], "wires": []})
    assert d == Diagram()


def test_to_dict_key_order_and_omissions() -> None:
    d = lag_diagram()
    d.blocks[1].layout = {}
    d.simulation = SimulationSettings()
    out = diagram_to_dict(d)
    assert list(out) == ["format", "version", "description", "parameters", "simulation",
                         "blocks", "wires"]
    assert out["simulation"] == {"start": 0.0, "stop": 10.0, "solver": "dopri5",
                                 "rtol": 1e-6, "atol": 1e-8}
    assert list(out["blocks"][0]) == ["id", "type", "params", "layout"]
    assert "layout" not in out["blocks"][1]
    assert "diagram" not in out["blocks"][1]
    assert list(out["blocks"][2]["diagram"]) == ["parameters", "blocks", "wires"]
    assert out["wires"][0]["points"] == [[0.1, 0.2], [3.0, 4.0]]
    assert "points" not in out["wires"][1]
    assert "description" not in diagram_to_dict(Diagram())


def test_to_dict_converts_tuples_and_array_likes() -> None:
    class FakeArray:
        def tolist(self) -> list[float]:
            return [1.0, 2.0]

    d = Diagram(blocks=[Block("g", "Gain", {"k": (1, 2), "v": FakeArray()})])
    assert diagram_to_dict(d)["blocks"][0]["params"] == {"k": [1, 2], "v": [1.0, 2.0]}


def test_file_round_trip(tmp_path: Path) -> None:
    d = lag_diagram()
    path = tmp_path / "lag.json"
    save_diagram(d, path)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert text.startswith('{\n  "format": "blocksim",\n  "version": 1,')
    loaded = load_diagram(path)
    assert loaded.path == path
    loaded.path = None
    assert loaded == d
    assert loaded.parameters["tau"] == 0.1 + 0.2  # floats survive exactly
    # saving again is byte-for-byte stable
    save_diagram(load_diagram(path), path)
    assert path.read_text(encoding="utf-8") == text


def test_load_accepts_str_path_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(lag_dict()).encode())
    d = load_diagram(str(path))
    assert d.path == path and d.source == str(path)


# ---------------------------------------------------------------------------------------------
# Reading files


def load_error(path: Path) -> DiagramFileError:
    with pytest.raises(DiagramFileError) as info:
        load_diagram(path)
    assert str(path) in str(info.value)
    return info.value


def test_missing_file(tmp_path: Path) -> None:
    assert "no such file" in str(load_error(tmp_path / "nope.json"))


def test_directory(tmp_path: Path) -> None:
    assert "directory" in str(load_error(tmp_path))


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "locked.json", lag_dict())

    def refuse(path, limit) -> bytes:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(fmt, "read_regular_file", refuse)
    assert "permission denied" in str(load_error(path))


def test_other_os_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "io.json", lag_dict())

    def fail(path, limit) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(fmt, "read_regular_file", fail)
    assert "Input/output error" in str(load_error(path))


def test_path_with_nul_byte(tmp_path: Path) -> None:
    load_error(tmp_path / "a\0b.json")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"format": "blocksim", "description": "café"}'.encode("latin-1"))
    assert "not UTF-8" in str(load_error(path))


def test_truncated_json_reports_line_and_column(tmp_path: Path) -> None:
    text = json.dumps(lag_dict(), indent=2)
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    message = str(load_error(path))
    assert "invalid JSON at line" in message and "column" in message


def test_invalid_json_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "format": "blocksim",\n  "version": 1,,\n}', encoding="utf-8")
    assert "line 3, column 16" in str(load_error(path))


@pytest.mark.parametrize("text", ["", "  \n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.json"
    path.write_text(text, encoding="utf-8")
    assert "empty" in str(load_error(path))


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_json_constants(tmp_path: Path, constant: str) -> None:
    path = tmp_path / "nan.json"
    text = json.dumps(lag_dict()).replace('"tau": 0.5', f'"tau": {constant}')
    path.write_text(text, encoding="utf-8")
    assert "not a JSON number" in str(load_error(path))


def test_duplicate_json_keys(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"format": "blocksim", "version": 1, "version": 2}', encoding="utf-8")
    assert "duplicate key 'version'" in str(load_error(path))


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    load_error(path)


def test_deeply_nested_value_in_a_valid_document() -> None:
    data = lag_dict()
    deep: Any = 1.0
    for _ in range(3000):
        deep = [deep]
    data["parameters"]["deep"] = deep
    error_of(data)


# ---------------------------------------------------------------------------------------------
# Checking documents


@pytest.mark.parametrize("data, expected", [
    (None, "expected a JSON object, got null"),
    ([1, 2], "expected a JSON object, got array"),
    ("blocksim", "expected a JSON object, got string"),
    (3.5, "expected a JSON object, got number"),
    ({}, '"format": "blocksim"'),
    ({"format": "simulink", "version": 1}, "format is 'simulink'"),
    ({"format": ["blocksim"]}, "not a blocksim diagram"),
])
def test_not_a_blocksim_document(data: Any, expected: str) -> None:
    message = str(error_of(data))
    assert "not a blocksim diagram" in message
    assert expected in message


def mutated(change) -> dict[str, Any]:
    data = lag_dict()
    change(data)
    return data


@pytest.mark.parametrize("change, block, expected", [
    (lambda d: d["blocks"][3]["params"].__setitem__("k", [1, "a"]), "fb",
     "params.k: [1, 'a'] is not a number, boolean, string or array of numbers"),
    (lambda d: d["blocks"][3]["params"].__setitem__("k", ["a", "b"]), "fb", "params.k:"),
    (lambda d: d["blocks"][3]["params"].__setitem__("k", {"x": 1}), "fb", "params.k:"),
    (lambda d: d["blocks"][3]["params"].__setitem__("k", None), "fb", "params.k:"),
    (lambda d: d["blocks"][3].__setitem__("colour", "red"), "fb", "unknown key 'colour'"),
    (lambda d: d["blocks"][3].pop("type"), "fb", "'type' is a required property"),
    (lambda d: d["blocks"][3].__setitem__("type", ""), "fb", "type"),
    (lambda d: d["blocks"][0]["layout"].__setitem__("rotation", 45), "step",
     "layout.rotation: 45 is not one of 0, 90, 180, 270"),
    (lambda d: d["blocks"][0]["layout"].__setitem__("x", "left"), "step",
     "layout.x: expected number, got string 'left'"),
    (lambda d: d["blocks"][0]["layout"].__setitem__("width", 0), "step", "layout.width"),
    (lambda d: d["blocks"][3]["params"].__setitem__("2k", 1), "fb", "'2k' is not a valid name"),
    (lambda d: d["blocks"][4]["diagram"]["blocks"][1]["params"].__setitem__("k", [True]),
     "sub/gain1", "params.k"),
    (lambda d: d["blocks"][4]["diagram"]["wires"][0].__setitem__("src", "u"), "sub",
     "diagram.wires[0].src: 'u' does not match 'block.port'"),
    (lambda d: d["blocks"][4]["diagram"].pop("wires"), "sub",
     "diagram: 'wires' is a required property"),
    (lambda d: d["blocks"][4]["diagram"].__setitem__("simulation", {}), "sub",
     "diagram: unknown key 'simulation'"),
    (lambda d: d["blocks"][4]["diagram"]["blocks"].append({"id": "u", "type": "Inport"}),
     "sub", "duplicate block id 'u'"),
])
def test_errors_inside_blocks_name_the_block(change, block: str, expected: str) -> None:
    err = error_of(mutated(change))
    assert err.block == block
    assert f"block '{block}'" in str(err)
    assert expected in str(err)
    assert "\n" not in str(err)


@pytest.mark.parametrize("change, expected", [
    (lambda d: d["wires"][3].__setitem__("src", "fb"),
     "wires[3].src: 'fb' does not match 'block.port'"),
    (lambda d: d["wires"][3].__setitem__("dst", "fb.y.z"), "wires[3].dst"),
    (lambda d: d["wires"][3].__setitem__("dst", "fb.u\n"), "wires[3].dst"),
    (lambda d: d["wires"][3].pop("dst"), "wires[3]: 'dst' is a required property"),
    (lambda d: d["wires"][3].__setitem__("label", "x"), "wires[3]: unknown key 'label'"),
    (lambda d: d["wires"][1].__setitem__("points", [[1, 2, 3]]), "wires[1].points[0]"),
    (lambda d: d["wires"][1].__setitem__("points", [[1, "2"]]), "wires[1].points[0][1]"),
    (lambda d: d.pop("blocks"), "'blocks' is a required property"),
    (lambda d: d.pop("wires"), "'wires' is a required property"),
    (lambda d: d.__setitem__("blocks", {}), "blocks: expected array, got object"),
    (lambda d: d.__setitem__("extra", 1), "unknown key 'extra'"),
    (lambda d: d.__setitem__("description", 1), "description: expected string"),
    (lambda d: d["blocks"].append({"id": "sum", "type": "Sum"}), "duplicate block id 'sum'"),
    (lambda d: d["blocks"].append({"id": "1sum", "type": "Sum"}),
     "blocks[6].id: '1sum' is not a valid name"),
    (lambda d: d["blocks"].append({"id": "sum\n", "type": "Sum"}), "blocks[6].id"),
    (lambda d: d["blocks"].append({"type": "Sum"}), "blocks[6]: 'id' is a required property"),
    (lambda d: d["blocks"].append(7), "blocks[6]: expected object, got number 7"),
    (lambda d: d["parameters"].__setitem__("1a", 1), "parameters: '1a' is not a valid name"),
    (lambda d: d["parameters"].__setitem__("b", [[1], [2, "x"]]), "parameters.b"),
    (lambda d: d["parameters"].__setitem__("b", True), "parameters.b"),
    (lambda d: d["simulation"].__setitem__("solver", "ode45"),
     "simulation.solver: 'ode45' is not one of 'dopri5'"),
    (lambda d: d["simulation"].__setitem__("rtol", 0),
     "simulation.rtol: 0 must be greater than 0"),
    (lambda d: d["simulation"].__setitem__("max_step", -1), "simulation.max_step"),
    (lambda d: d["simulation"].__setitem__("step", 0), "simulation.step"),
    (lambda d: d["simulation"].__setitem__("stop", "10"),
     "simulation.stop: expected number, got string '10'"),
    (lambda d: d["simulation"].__setitem__("stop", math.inf), "simulation.stop: must be finite"),
    (lambda d: d["simulation"].__setitem__("stop", 10 ** 400), "simulation.stop"),
    (lambda d: d["simulation"].__setitem__("tol", 1), "simulation: unknown key 'tol'"),
    (lambda d: d.__setitem__("simulation", []), "simulation: expected object"),
])
def test_errors_outside_blocks(change, expected: str) -> None:
    err = error_of(mutated(change))
    assert err.block is None
    assert expected in str(err)
    assert "\n" not in str(err)


def test_simulation_nulls_and_infinite_max_step() -> None:
    data = lag_dict()
    data["simulation"].update(output_interval=None, step=None, max_step=1e999)
    sim = diagram_from_dict(data).simulation
    assert sim.output_interval is None and sim.step is None and sim.max_step == math.inf


def test_long_values_are_abbreviated() -> None:
    data = lag_dict()
    data["blocks"][3]["params"]["k"] = [list(range(1000)), "x" * 10_000]
    assert len(str(error_of(data))) < 400


def test_error_message_for_load(tmp_path: Path) -> None:
    data = lag_dict()
    data["blocks"][3]["params"]["k"] = [1, "a"]
    err = load_error(write(tmp_path / "x.json", data))
    assert str(err).startswith(f"{tmp_path / 'x.json'}, block 'fb': params.k: [1, 'a']")


def test_non_json_python_values_still_give_diagram_file_error() -> None:
    data = lag_dict()
    data["blocks"][3]["params"][1] = object()
    error_of(data)
    data = lag_dict()
    data["parameters"] = {("a",): {1, 2}}
    error_of(data)


# ---------------------------------------------------------------------------------------------
# Versions and migration


@pytest.mark.parametrize("version, expected", [
    (3, "written by a newer blocksim (version 3; this one reads up to 1)"),
    ("1", "version must be an integer"),
    (1.5, "version must be an integer"),
    (True, "version must be an integer"),
    (None, "version must be an integer"),
    (0, "invalid version 0"),
    (-2, "invalid version -2"),
])
def test_bad_versions(version: Any, expected: str) -> None:
    data = lag_dict()
    data["version"] = version
    assert expected in str(error_of(data))
    with pytest.raises(DiagramFileError):
        migrate(data, "x.json")


def test_missing_version() -> None:
    data = lag_dict()
    del data["version"]
    assert 'no "version" key' in str(error_of(data))


def test_integral_float_version_is_accepted() -> None:
    data = lag_dict()
    data["version"] = 1.0
    assert diagram_from_dict(data) == diagram_from_dict(lag_dict())


def test_current_version_needs_no_migration() -> None:
    assert FORMAT_VERSION == 1 and fmt.MIGRATIONS == {}
    data = lag_dict()
    assert migrate(data, "x") == data


def test_migrations_are_chained(monkeypatch: pytest.MonkeyPatch) -> None:
    def v1_to_v2(doc: dict[str, Any]) -> dict[str, Any]:
        doc["description"] = doc.pop("notes", "")
        return doc

    def v2_to_v3(doc: dict[str, Any]) -> dict[str, Any]:
        doc["description"] += " (v3)"
        return doc

    monkeypatch.setattr(fmt, "FORMAT_VERSION", 3)
    monkeypatch.setattr(fmt, "MIGRATIONS", {1: v1_to_v2, 2: v2_to_v3})
    old = {"format": "blocksim", "version": 1, "notes": "old", "blocks": [], "wires": []}
    snapshot = copy.deepcopy(old)
    new = migrate(old, "old.json")
    assert new == {"format": "blocksim", "version": 3, "description": "old (v3)",
                   "blocks": [], "wires": []}
    assert old == snapshot
    assert diagram_from_dict(old).description == "old (v3)"


def test_missing_migration_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "FORMAT_VERSION", 2)
    err = error_of({"format": "blocksim", "version": 1, "blocks": [], "wires": []})
    assert "cannot upgrade from version 1" in str(err)


# ---------------------------------------------------------------------------------------------
# Atomic saving


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "model.json"
    save_diagram(lag_diagram(), path)
    return path, path.read_bytes()


def test_failure_mid_write_keeps_old_file(saved, monkeypatch: pytest.MonkeyPatch) -> None:
    path, before = saved

    def half_dump(obj: Any, fh: Any, **kwargs: Any) -> None:
        fh.write('{"format": "blo')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(json, "dump", half_dump)
    with pytest.raises(DiagramFileError) as info:
        save_diagram(Diagram(), path)
    assert str(path) in str(info.value) and "No space left" in str(info.value)
    assert path.read_bytes() == before
    assert leftovers(path.parent) == []


def test_failure_at_replace_keeps_old_file(saved, monkeypatch: pytest.MonkeyPatch) -> None:
    path, before = saved

    def no_replace(src: Any, dst: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(DiagramFileError) as info:
        save_diagram(Diagram(), path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == before
    assert leftovers(path.parent) == []


def test_interrupt_mid_write_cleans_up_and_propagates(saved, monkeypatch) -> None:
    path, before = saved

    def interrupted(obj: Any, fh: Any, **kwargs: Any) -> None:
        fh.write("{")
        raise KeyboardInterrupt

    monkeypatch.setattr(json, "dump", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_diagram(Diagram(), path)
    assert path.read_bytes() == before
    assert leftovers(path.parent) == []


@pytest.mark.parametrize("bad", [math.nan, object()])
def test_unserialisable_values(saved, bad: Any) -> None:
    path, before = saved
    d = lag_diagram()
    d.parameters["bad"] = bad
    with pytest.raises(DiagramFileError) as info:
        save_diagram(d, path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == before
    assert leftovers(path.parent) == []


def test_save_into_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir.json"
    with pytest.raises(DiagramFileError) as info:
        save_diagram(Diagram(), path)
    assert str(path) in str(info.value)


def test_save_to_bad_paths(tmp_path: Path) -> None:
    for path in (tmp_path / "a\0b.json", tmp_path):
        with pytest.raises(DiagramFileError) as info:
            save_diagram(Diagram(), path)
        assert str(path) in str(info.value)
    assert leftovers(tmp_path) == [] and leftovers(tmp_path.parent) == []


def test_save_keeps_permissions_and_symlinks(saved) -> None:
    path, _ = saved
    os.chmod(path, 0o640)
    link = path.parent / "link.json"
    link.symlink_to(path.name)
    d = lag_diagram()
    d.description = "changed"
    save_diagram(d, link)
    assert link.is_symlink()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert load_diagram(path).description == "changed"
    assert leftovers(path.parent) == []


def test_save_does_not_touch_diagram_path(tmp_path: Path) -> None:
    d = lag_diagram()
    save_diagram(d, tmp_path / "a.json")
    assert d.path is None


def test_schema_ships_inside_wheels():
    # pyproject maps resources/ to the package blocksim.resources, so a wheel install (with
    # no checkout around it) finds the schema inside the package.
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    root = Path(__file__).resolve().parents[1]
    setup = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert setup["setuptools"]["package-dir"]["blocksim.resources"] == "resources"
    assert "blocksim.resources" in setup["setuptools"]["packages"]
    assert setup["setuptools"]["package-data"]["blocksim.resources"] == ["*.json"]
    assert SCHEMA_PATH == root / "resources" / "diagram.schema.json"
    # Every package of the source tree is listed (they are listed, not found), the block
    # library under the blocksim name (blocks/ is installed as blocksim.blocks).
    mapped = {folder: package for package, folder in setup["setuptools"]["package-dir"].items()}
    found = set()
    for p in root.glob("blocks*/**/__init__.py"):
        parts = p.relative_to(root).parent.parts
        found.add(".".join((mapped.get(parts[0], parts[0]),) + parts[1:]))
    assert found <= set(setup["setuptools"]["packages"])
    assert "blocks" not in found and "blocksim.blocks" in found


@pytest.mark.parametrize("kind", ["fifo", "device", "huge", "digits", "directory"])
def test_files_that_could_hang_or_exhaust_memory_are_refused_at_once(tmp_path: Path, kind: str,
                                                                      monkeypatch) -> None:
    if kind == "fifo":
        path, expected = tmp_path / "pipe.json", "is a FIFO (named pipe), not a diagram file"
        os.mkfifo(path)  # no writer: opening it for reading would block forever
    elif kind == "device":
        path, expected = Path("/dev/zero"), "is a character device, not a diagram file"
    elif kind == "huge":
        monkeypatch.setattr(fmt, "MAX_FILE_BYTES", 1000)
        path, expected = tmp_path / "big.json", "larger than 0 MiB"
        path.write_text(json.dumps({**lag_dict(), "description": "x" * 2000}))
    elif kind == "digits":
        path, expected = tmp_path / "digits.json", "a number with more than 4300 digits"
        path.write_text('{"format": "blocksim", "version": ' + "1" * 5000 + "}")
    else:
        path, expected = tmp_path, "is a directory, not a diagram file"
    error = load_error(path)
    assert expected in str(error) and error.file == str(path)
