"""Reading and writing blocksim diagram files: JSON validated against diagram.schema.json.

Everything that can go wrong with a file a user hands us surfaces as one DiagramFileError line
naming the file (and the block, when the fault is inside one), never as a traceback.
"""
from __future__ import annotations

import copy
import functools
import json
import logging
import math
import os
import re
import reprlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from blocksim.diagram import schema_check
from blocksim.gc_pause import without_gc
from blocksim.files.safe import FileTooLarge, NotARegularFile, atomic_write, read_regular_file
from blocksim.errors import DiagramFileError
from blocksim.diagram.model import (
    ANALYSIS_ROLES,
    FORMAT_NAME,
    FORMAT_VERSION,
    Block,
    Diagram,
    PortRef,
    SimulationSettings,
    Wire,
)

__all__ = [
    "SCHEMA_PATH",
    "MIGRATIONS",
    "load_diagram",
    "save_diagram",
    "diagram_from_dict",
    "diagram_to_dict",
    "migrate",
]

log = logging.getLogger(__name__)

def _schema_path() -> Path:
    """resources/diagram.schema.json: beside the package in a checkout (and an editable
    install), inside it as blocksim/resources in a wheel (see pyproject.toml)."""
    here = Path(__file__).resolve().parent.parent  # the blocksim package
    candidates = (here.parent / "resources", here / "resources")
    for folder in candidates:
        if (folder / "diagram.schema.json").exists():
            return folder / "diagram.schema.json"
    return candidates[0] / "diagram.schema.json"  # missing: loading says which file


SCHEMA_PATH = _schema_path()

# Format upgrades: MIGRATIONS[n] turns a version-n document into a version-(n + 1) one.
# It receives a copy it may modify and returns the upgraded dict (without touching "version",
# which `migrate` sets). Empty while FORMAT_VERSION == 1.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

# A diagram of 10,000 blocks takes a few MiB; anything far larger is not a diagram, and
# reading it whole would only exhaust memory.
MAX_FILE_BYTES = 256 * 2**20

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_MESSAGE = 300
_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlist = 6
_repr.maxdict = 4
_repr.maxlevel = 3


# ---------------------------------------------------------------------------------------------
# Files


@without_gc
def load_diagram(path: str | os.PathLike[str]) -> Diagram:
    """Read, validate and build the diagram stored at `path`; its `path` is set to the file."""
    source = str(path)
    file = Path(path)
    try:
        raw = read_regular_file(file, MAX_FILE_BYTES)
    except NotARegularFile as exc:
        raise DiagramFileError(f"is {exc.kind}, not a diagram file", file=source) from None
    except FileTooLarge:
        raise DiagramFileError(f"the file is larger than {MAX_FILE_BYTES // 2**20} MiB; "
                               f"not a diagram file", file=source) from None
    except FileNotFoundError:
        raise DiagramFileError("no such file", file=source) from None
    except PermissionError:
        raise DiagramFileError("cannot read the file: permission denied", file=source) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise DiagramFileError(f"cannot read the file: {getattr(exc, 'strerror', None) or exc}",
                               file=source) from None
    try:
        text = raw.decode("utf-8-sig")  # tolerate the BOM some Windows editors write
    except UnicodeDecodeError as exc:
        raise DiagramFileError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", file=source
        ) from None
    data = _parse_json(text, source)
    diagram = diagram_from_dict(data, source=source)
    diagram.path = file
    log.debug("loaded %s: %d blocks, %d wires", source, len(diagram.blocks), len(diagram.wires))
    return diagram


def save_diagram(diagram: Diagram, path: str | os.PathLike[str]) -> None:
    """Write `diagram` to `path` atomically: a crash mid-save leaves the old file untouched.

    The JSON goes to a temporary file in the same directory, is flushed and fsynced, and then
    replaces the target in one `os.replace`. Saving through a symlink rewrites the file it
    points to. `diagram.path` is left alone (the caller decides whether this was a "save as").
    """
    source = str(path)
    data = diagram_to_dict(diagram)

    def write(fh) -> None:
        json.dump(data, fh, indent=2, ensure_ascii=False, allow_nan=False)
        fh.write("\n")
    try:
        atomic_write(path, write)
    except OSError as exc:
        raise DiagramFileError(f"cannot save: {exc.strerror or exc}", file=source) from None
    except (ValueError, TypeError) as exc:  # NaN/inf, a NUL in the path, a value JSON lacks
        raise DiagramFileError(f"cannot save: {exc}", file=source) from None
    log.debug("saved %s", source)


def _parse_json(text: str, source: str) -> Any:
    """JSON text -> Python value; rejects NaN/Infinity and duplicate keys, which JSON forbids."""
    if not text.strip():
        raise DiagramFileError("the file is empty", file=source)
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DiagramFileError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=source
        ) from None
    except _JSONValueError as exc:
        raise DiagramFileError(f"invalid JSON: {exc}", file=source) from None
    except RecursionError:
        raise DiagramFileError("invalid JSON: nested too deeply", file=source) from None
    except ValueError:  # Python's limit on the digits of an integer
        raise DiagramFileError(f"invalid JSON: a number with more than "
                               f"{sys.get_int_max_str_digits()} digits", file=source) from None
    except MemoryError:
        raise DiagramFileError("the document is too large to read", file=source) from None


class _JSONValueError(ValueError):
    """A value that Python's json module accepts but standard JSON does not."""


def _reject_constant(name: str) -> Any:
    raise _JSONValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _JSONValueError(f"duplicate key {key!r} in an object")
        result[key] = value
    return result


# ---------------------------------------------------------------------------------------------
# Dicts <-> model


@without_gc
def diagram_from_dict(data: Any, source: str = "<diagram>") -> Diagram:
    """Check, migrate, validate and build a diagram from a parsed JSON document.

    Raises DiagramFileError, and only that, for any input whatsoever.
    """
    try:
        if not isinstance(data, dict):
            raise DiagramFileError(
                f"not a blocksim diagram: expected a JSON object, got {_json_type(data)}",
                file=source)
        if "format" not in data:
            raise DiagramFileError(
                f'not a blocksim diagram: no "format": "{FORMAT_NAME}" key', file=source)
        if data["format"] != FORMAT_NAME:
            raise DiagramFileError(
                f"not a blocksim diagram: format is {_short(data['format'])}, "
                f"expected '{FORMAT_NAME}'", file=source)
        data = migrate(data, source)
        _validate(data, source)
        diagram = _build_diagram(data, source, ())
        diagram.description = data.get("description", "")
        diagram.python = list(data.get("python", []))
        diagram.components = copy.deepcopy(data.get("components", []))
        diagram.simulation = _build_simulation(data.get("simulation", {}), source)
        return diagram
    except DiagramFileError:
        raise
    except RecursionError:
        raise DiagramFileError("the document is nested too deeply", file=source) from None
    except MemoryError:
        raise DiagramFileError("the document is too large to build", file=source) from None
    except Exception as exc:  # a bug or an exotic non-JSON value: still one clear line
        log.debug("unexpected error reading %s", source, exc_info=True)
        raise DiagramFileError(
            f"cannot read the diagram: {type(exc).__name__}: {_clip(str(exc))}",
            file=source) from None


def migrate(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Upgrade a document of any older format version to FORMAT_VERSION (input left unchanged)."""
    if "version" not in data:
        raise DiagramFileError('no "version" key (the format version, an integer)', file=source)
    version = data["version"]
    if isinstance(version, float) and version.is_integer():
        version = int(version)
    if isinstance(version, bool) or not isinstance(version, int):
        raise DiagramFileError(
            f"version must be an integer, not {_short(data['version'])}", file=source)
    if version < 1:
        raise DiagramFileError(f"invalid version {version} (versions start at 1)", file=source)
    if version > FORMAT_VERSION:
        raise DiagramFileError(
            f"written by a newer blocksim (version {version}; "
            f"this one reads up to {FORMAT_VERSION})", file=source)
    data = dict(data)
    while version < FORMAT_VERSION:
        upgrade = MIGRATIONS.get(version)
        if upgrade is None:  # a gap in the table is our bug, but say what happened
            raise DiagramFileError(
                f"cannot upgrade from version {version}: no migration", file=source)
        log.info("%s: upgrading diagram format %d -> %d", source, version, version + 1)
        data = upgrade(copy.deepcopy(data))
        version += 1
    data["version"] = version
    return data


def diagram_to_dict(diagram: Diagram) -> dict[str, Any]:
    """The JSON document for `diagram`, keys in a stable order so saved files diff well."""
    out: dict[str, Any] = {"format": FORMAT_NAME, "version": FORMAT_VERSION}
    if diagram.description:
        out["description"] = diagram.description
    if diagram.python:
        out["python"] = list(diagram.python)
    if diagram.components:
        out["components"] = copy.deepcopy(diagram.components)
    out["parameters"] = _plain(diagram.parameters)
    out["simulation"] = _simulation_to_dict(diagram.simulation)
    out.update(_level_to_dict(diagram))
    return out


def _level_to_dict(diagram: Diagram) -> dict[str, Any]:
    return {
        "blocks": [_block_to_dict(b) for b in diagram.blocks],
        "wires": [_wire_to_dict(w) for w in diagram.wires],
    }


def _block_to_dict(block: Block) -> dict[str, Any]:
    out: dict[str, Any] = {"id": block.id, "type": block.type, "params": _plain(block.params)}
    if block.layout:
        out["layout"] = _plain(block.layout)
    if block.subsystem is not None:
        sub: dict[str, Any] = {}
        if block.subsystem.parameters:
            sub["parameters"] = _plain(block.subsystem.parameters)
        sub.update(_level_to_dict(block.subsystem))
        out["diagram"] = sub
    return out


def _wire_to_dict(wire: Wire) -> dict[str, Any]:
    out: dict[str, Any] = {"src": str(wire.src), "dst": str(wire.dst)}
    if wire.points:
        out["points"] = [[x, y] for x, y in wire.points]
    if wire.name:
        out["name"] = wire.name
    if wire.analysis:
        out["analysis"] = list(wire.analysis)
    return out


def _simulation_to_dict(sim: SimulationSettings) -> dict[str, Any]:
    out: dict[str, Any] = {
        "start": sim.start,
        "stop": sim.stop,
        "solver": sim.solver,
        "rtol": sim.rtol,
        "atol": sim.atol,
    }
    if sim.max_step is not None and not math.isinf(sim.max_step):
        out["max_step"] = sim.max_step
    if sim.output_interval is not None:
        out["output_interval"] = sim.output_interval
    if sim.step is not None:
        out["step"] = sim.step
    if sim.backend is not None:
        out["backend"] = sim.backend
    return out


def _plain(value: Any) -> Any:
    """A JSON-ready copy: tuples become lists, numpy arrays and scalars become Python values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars, without importing numpy
    if callable(tolist):
        return _plain(tolist())
    return value  # json.dump reports it, and save_diagram turns that into DiagramFileError


# ---------------------------------------------------------------------------------------------
# Validation


@functools.lru_cache(maxsize=1)
def _schema() -> tuple[dict[str, Any], dict[str, Any]]:
    """The diagram schema as written, and with its references inlined (what is checked),
    read once. Checking a well-formed file needs no jsonschema (schema_check's fast path),
    so jsonschema is imported only to word what is wrong with a file that fails."""
    try:
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"blocksim is not installed correctly: cannot read the diagram "
                           f"schema {SCHEMA_PATH}: {exc}") from exc
    return schema, _inline_refs(schema)


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    """The jsonschema validator, built once (loading and checking the schema is not free)."""
    import jsonschema

    schema, inlined = _schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(inlined)


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every non-recursive local $ref replaced by its definition.

    Same meaning, but jsonschema no longer resolves a reference for every block and wire:
    validating a 10,000-block file drops from seconds to a fraction. References that would
    expand forever (nested subsystems, nested arrays) stay references.
    """
    defs = schema.get("$defs", {})

    def expand(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [expand(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
            name = ref[len("#/$defs/"):]
            if name in defs and name not in stack:
                return expand(defs[name], stack + (name,))
            return node
        return {key: (value if key == "$defs" else expand(value, stack))
                for key, value in node.items()}

    return expand(schema, ())


def _validate(data: dict[str, Any], source: str) -> None:
    if schema_check.is_valid(data, _schema()[1]):
        return  # jsonschema is needed only for the message about what is wrong
    from jsonschema.exceptions import best_match

    validator = _validator()
    error = best_match(validator.iter_errors(data))
    if error is None:
        return
    # If the best error sits under an anyOf with a title (say a parameter value that is none of
    # the allowed kinds), report it against that value rather than some branch's detail.
    node = error
    while node.parent is not None:
        node = node.parent
        if node.validator == "anyOf" and isinstance(node.schema, dict) and "title" in node.schema:
            error = node
    path = list(error.absolute_path)
    block, rest = _block_of(data, path)
    where = _format_path(rest)
    message = _message(error)
    raise DiagramFileError(f"{where}: {message}" if where else message, file=source, block=block)


def _message(error: Any) -> str:
    """One readable sentence for a jsonschema error, with long values abbreviated."""
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    kind = error.validator
    if kind in ("anyOf", "pattern", "maxLength") and "title" in schema:
        text = f"{_short(instance)} is not {schema['title']}"
    elif kind == "pattern" and "\\." in str(error.validator_value):
        text = f"{_short(instance)} does not match 'block.port'"
    elif kind == "pattern":
        text = (f"{_short(instance)} is not a valid name (letters, digits and _, "
                f"not starting with a digit)")
    elif kind == "type":
        expected = error.validator_value
        if isinstance(expected, list):
            expected = " or ".join(expected)
        text = f"expected {expected}, got {_json_type(instance)} {_short(instance)}"
    elif kind == "enum":
        text = f"{_short(instance)} is not one of {', '.join(map(repr, error.validator_value))}"
    elif kind == "exclusiveMinimum":
        text = f"{_short(instance)} must be greater than {error.validator_value}"
    elif kind == "additionalProperties" and isinstance(instance, dict):
        allowed = schema.get("properties", {})
        extra = [k for k in instance if k not in allowed]
        text = (f"unknown key{'s' if len(extra) > 1 else ''} "
                f"{', '.join(_short(k) for k in extra)}"
                + (f" (allowed: {', '.join(allowed)})" if allowed else ""))
    elif kind == "required":
        text = error.message
    elif kind == "propertyNames":
        text = f"{_short(instance)}: {error.message}"
    else:
        text = error.message
    return _clip(text)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _block_of(data: Any, path: list[Any]) -> tuple[str | None, list[Any]]:
    """The (slash-qualified) id of the innermost block containing `path`, and the rest of it."""
    ids: list[str] = []
    rest = path
    level = data
    i = 0
    while (i + 1 < len(path) and path[i] == "blocks" and isinstance(path[i + 1], int)
           and isinstance(level, dict) and isinstance(level.get("blocks"), list)
           and path[i + 1] < len(level["blocks"])):
        blk = level["blocks"][path[i + 1]]
        block_id = blk.get("id") if isinstance(blk, dict) else None
        if not (isinstance(block_id, str) and _IDENTIFIER.fullmatch(block_id)):
            break  # a block without a usable id: fall back to naming it by position
        ids.append(block_id)
        rest = path[i + 2:]
        i += 2
        if i < len(path) and path[i] == "diagram":
            level = blk.get("diagram")
            i += 1
        else:
            break
    if not ids:
        return None, path
    return "/".join(ids), rest


def _format_path(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _short(value: Any) -> str:
    try:
        return _repr.repr(value)
    except Exception:  # a hostile __repr__ must not mask the real problem
        return f"<{type(value).__name__}>"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# ---------------------------------------------------------------------------------------------
# Building model objects from a validated document


def _build_diagram(level: dict[str, Any], source: str, parents: tuple[str, ...]) -> Diagram:
    """One diagram level (the top, or a subsystem's `diagram`), already schema-valid."""
    owner = "/".join(parents) or None
    prefix = "diagram." if parents else ""  # errors in a subsystem's level name its `diagram`
    parameters = _json_copy(level.get("parameters", {}))
    for name in parameters:
        if not _IDENTIFIER.fullmatch(name):
            raise DiagramFileError(f"{prefix}parameters: {name!r} is not a valid name",
                                   file=source, block=owner)
    blocks: list[Block] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(level["blocks"]):
        block_id = item["id"]
        if not _IDENTIFIER.fullmatch(block_id):  # the schema's $ also accepts a final newline
            raise DiagramFileError(
                f"{prefix}blocks[{index}].id: {_short(block_id)} is not a valid name",
                file=source, block=owner)
        if block_id in seen:
            raise DiagramFileError(
                f"{'diagram: ' if parents else ''}duplicate block id '{block_id}' "
                f"(blocks[{seen[block_id]}] and blocks[{index}])", file=source, block=owner)
        seen[block_id] = index
        qualified = "/".join(parents + (block_id,))
        for name in item.get("params", {}):
            if not _IDENTIFIER.fullmatch(name):
                raise DiagramFileError(f"params: {name!r} is not a valid name",
                                       file=source, block=qualified)
        subsystem = None
        if "diagram" in item:
            subsystem = _build_diagram(item["diagram"], source, parents + (block_id,))
        blocks.append(Block(
            id=block_id,
            type=item["type"],
            params=_json_copy(item.get("params", {})),
            layout=_json_copy(item["layout"]) if "layout" in item else None,
            subsystem=subsystem,
        ))
    wires: list[Wire] = []
    for index, item in enumerate(level["wires"]):
        ends = []
        for key in ("src", "dst"):
            text = item[key]
            block_id, _, port = text.partition(".")
            if not (_IDENTIFIER.fullmatch(block_id) and _IDENTIFIER.fullmatch(port)):
                raise DiagramFileError(
                    f"{prefix}wires[{index}].{key}: {_short(text)} does not match 'block.port'",
                    file=source, block=owner)
            ends.append(PortRef(block_id, port))
        points = [(x, y) for x, y in item.get("points", [])]
        marks = item.get("analysis", [])
        if len(set(marks)) != len(marks):
            raise DiagramFileError(f"{prefix}wires[{index}].analysis: {_short(marks)} names a "
                                   f"mark twice", file=source, block=owner)
        analysis = tuple(role for role in ANALYSIS_ROLES if role in marks)
        wires.append(Wire(ends[0], ends[1], points, item.get("name", ""), analysis))
    return Diagram(blocks=blocks, wires=wires, parameters=parameters)


def _json_copy(value: Any) -> Any:
    """A copy of schema-valid JSON data (dicts, lists, immutable scalars): the model owns
    its own. copy.deepcopy's memo bookkeeping made it a third of loading 10,000 blocks."""
    if isinstance(value, dict):
        return {key: _json_copy(item) if isinstance(item, (dict, list)) else item
                for key, item in value.items()}
    if isinstance(value, list):
        return [_json_copy(item) if isinstance(item, (dict, list)) else item for item in value]
    return value


def _build_simulation(sim: dict[str, Any], source: str) -> SimulationSettings:
    values: dict[str, Any] = {}
    for key, value in sim.items():
        if key in ("solver", "backend") or value is None:
            values[key] = value
            continue
        try:
            number = float(value)
        except OverflowError:
            raise DiagramFileError(f"simulation.{key}: {_short(value)} is out of range",
                                   file=source) from None
        if not math.isfinite(number) and key != "max_step":
            raise DiagramFileError(f"simulation.{key}: must be finite, not {number}",
                                   file=source)
        values[key] = number
    return SimulationSettings(**values)
