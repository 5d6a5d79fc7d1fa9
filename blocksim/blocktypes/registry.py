"""The block-type registry: every block library plugs in through the `blocksim.blocks`
entry point group, the standard library (blocks/ in the repository, blocksim.blocks when
installed) included.

An entry point names a module (or an object) with a `BLOCK_TYPES` sequence of BlockType
subclasses. Duplicate names are refused, so two libraries can never silently shadow each other.
"""
from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from blocksim.blocktypes.blockspec import BlockType
from blocksim.errors import BlocksimError

log = logging.getLogger(__name__)

_registry: dict[str, type[BlockType]] | None = None


def types_of(obj: object, source: str) -> list[type[BlockType]]:
    """The BLOCK_TYPES of a library module or object (logged and empty if it has none)."""
    types = getattr(obj, "BLOCK_TYPES", None)
    if callable(types):
        types = types()
    if not isinstance(types, (list, tuple)) or not all(
            isinstance(t, type) and issubclass(t, BlockType) for t in types):
        log.error("block library '%s' has no BLOCK_TYPES sequence of BlockType classes", source)
        return []
    return list(types)


def _load() -> dict[str, type[BlockType]]:
    found: dict[str, type[BlockType]] = {}
    sources = [(ep.name, ep.load) for ep in entry_points(group="blocksim.blocks")]
    if not any(name == "standard" for name, _ in sources):
        sources.append(("standard", standard_library))
    for source, loader in sources:
        try:
            obj = loader()
        except Exception as exc:  # a broken third-party library must not kill blocksim
            log.error("block library '%s' failed to load: %s", source, exc)
            continue
        for block_type in types_of(obj, source):
            register(block_type, found, source)
    return found


def standard_library() -> ModuleType:
    """blocksim.blocks: installed, or (a source tree that was never installed) the blocks/
    folder beside the package, loaded under the same name."""
    try:
        return importlib.import_module("blocksim.blocks")
    except ModuleNotFoundError as exc:
        if exc.name != "blocksim.blocks":
            raise
    folder = Path(__file__).resolve().parents[2] / "blocks"
    spec = importlib.util.spec_from_file_location(
        "blocksim.blocks", folder / "__init__.py", submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no block library at {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    return module


def register(block_type: type[BlockType], into: dict[str, type[BlockType]] | None = None,
             source: str = "") -> type[BlockType]:
    """Add one block type; refuse a second type of the same name."""
    target = into if into is not None else _types()
    name = block_type.name
    if not name:
        raise BlocksimError(f"block type {block_type.__qualname__} has no name")
    if name in target and target[name] is not block_type:
        raise BlocksimError(f"block type '{name}' from '{source}' is already registered")
    target[name] = block_type
    return block_type


def unregister(name: str) -> None:
    """Forget a block type (a trusted Python file that changed re-registers its types)."""
    _types().pop(name, None)


def _types() -> dict[str, type[BlockType]]:
    global _registry
    if _registry is None:
        _registry = _load()
    return _registry


def get(name: str, internal: bool = False) -> type[BlockType] | None:
    """The block type of this name, or None; with `internal`, also one the compiler inserts
    (a conditional subsystem's gate and holds, which a compiled model's `block_types`
    name too)."""
    found = _types().get(name)
    if found is None:
        found = next((types[name] for types in _declared.values() if name in types), None)
    if found is None and internal:
        inserted = getattr(standard_library().ports, "INTERNAL_TYPES", ())
        found = next((t for t in inserted if t.name == name), None)
    return found


def all_types(declared: bool = False) -> dict[str, type[BlockType]]:
    """Every registered block type by name, sorted by category then name; with `declared`,
    also those the diagrams open in the editor declare (`declare`)."""
    types = dict(_types())
    if declared:
        for more in _declared.values():
            for name, block_type in more.items():
                types.setdefault(name, block_type)
    return dict(sorted(types.items(), key=lambda kv: (kv[1].category, kv[0])))


# Types a diagram declares itself (its physical components), known by name while an editor
# has the diagram open: `get` finds them after the libraries' types; `all_types` lists them
# only when asked, so they never pass for a library's.
_declared: dict[object, dict[str, type[BlockType]]] = {}


def declare(owner: object, types: dict[str, type[BlockType]]) -> None:
    """Make `types` known for `owner` (an open document), replacing what it declared."""
    if types:
        _declared[owner] = dict(types)
    else:
        _declared.pop(owner, None)


def undeclare(owner: object) -> None:
    """Forget what `owner` declared (its document closed)."""
    _declared.pop(owner, None)
