"""Python files of user block types named by a diagram: imported only when trusted.

A diagram file may come from anyone, and importing a Python file runs it. So a diagram
that names files (its top-level "python" list) loads only when the caller trusts each of
them: `blocksim run --trust FILE`, `blocksim.load(path, trust=...)`, or the user's
allow-list (`blocksim trust FILE`: that file with its content now, by SHA-256, so an edited
file must be trusted again). An untrusted file is never imported: the error says how to
trust it.
"""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
from pathlib import Path
from typing import Iterable, Union

from blocksim.blocktypes import registry
from blocksim.errors import DiagramFileError
from blocksim.diagram.model import Diagram

log = logging.getLogger(__name__)

Trust = Union[bool, Iterable[Union[str, "os.PathLike[str]"]]]

# resolved path -> (stamp, names of the block types it registered)
_IMPORTED: dict[Path, tuple[tuple[int, int], list[str]]] = {}


class UntrustedCodeError(DiagramFileError):
    """A diagram names a Python file its user has not said to trust."""


def named_files(diagram: Diagram) -> list[Path]:
    """The Python files a diagram names, resolved against its folder."""
    folder = diagram.path.parent if diagram.path else Path.cwd()
    return [(folder / name).resolve() for name in diagram.python]


def import_trusted(diagram: Diagram, trust: Trust = ()) -> list[str]:
    """Import the diagram's Python files and register their block types (names returned).

    trust: True trusts every file the diagram names; else the paths trusted (relative to
    the current folder). UntrustedCodeError, before anything is imported, if one is not.
    """
    files = named_files(diagram)
    if not files:
        return []
    trusted = None if trust is True else {Path(p).resolve() for p in (trust or ())}
    for name, path in zip(diagram.python, files):
        if trusted is not None and path not in trusted and not allowed(path):
            shown = os.path.relpath(path) if not Path(name).is_absolute() else name
            raise UntrustedCodeError(
                f"names the Python file '{name}', which blocksim imports only if you trust "
                f"it: run with --trust {shown}, or `blocksim trust {shown}` to trust it "
                f"until it changes (blocksim.load(..., trust=True) in Python)",
                file=diagram.source)
    names: list[str] = []
    for name, path in zip(diagram.python, files):
        names += _import(path, name, diagram.source)
    return names


def _import(path: Path, name: str, source: str) -> list[str]:
    try:
        info = path.stat()
    except OSError:
        raise DiagramFileError(f"Python file '{name}' not found at {path}", file=source) from None
    stamp = (info.st_mtime_ns, info.st_size)
    done = _IMPORTED.get(path)
    if done is not None and done[0] == stamp:
        return done[1]
    module_name = "blocksim_user_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise DiagramFileError(f"cannot import Python file '{name}'", file=source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's own code: one line naming the file
        del sys.modules[module_name]
        raise DiagramFileError(f"Python file '{name}' failed to import: "
                               f"{type(exc).__name__}: {exc}", file=source) from None
    types = registry.types_of(module, str(path))
    if not types:
        raise DiagramFileError(f"Python file '{name}' has no BLOCK_TYPES sequence of block "
                               f"types", file=source)
    for old in done[1] if done is not None else []:
        registry.unregister(old)  # the file changed: its new classes replace the old
    for block_type in types:
        try:
            registry.register(block_type, source=str(path))
        except Exception as exc:
            raise DiagramFileError(f"Python file '{name}': {exc}", file=source) from None
    log.info("%s: imported %d block types from %s", source, len(types), path)
    _IMPORTED[path] = (stamp, [t.name for t in types])
    return _IMPORTED[path][1]


# ----- the user's allow-list: one "sha256<TAB>path" line per trusted file -----
ALLOW_LIST_ENV = "BLOCKSIM_TRUST_LIST"


def allow_list() -> Path:
    """Where the allow-list lives ($BLOCKSIM_TRUST_LIST, else ~/.config/blocksim/)."""
    root = os.environ.get(ALLOW_LIST_ENV)
    return Path(root) if root else Path.home() / ".config" / "blocksim" / "trusted-python.txt"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _entries() -> dict[Path, str]:
    try:
        text = allow_list().read_text(encoding="utf-8")
    except OSError:
        return {}
    entries = {}
    for line in text.splitlines():
        digest, _, path = line.partition("\t")
        if path:
            entries[Path(path)] = digest
    return entries


def allowed(path: Path) -> bool:
    """Whether the allow-list has this file with exactly its present content."""
    digest = _entries().get(path)
    try:
        return digest is not None and digest == _digest(path)
    except OSError:
        return False


def remember(path: str | os.PathLike[str]) -> Path:
    """Put a file, with its present content, on the user's allow-list."""
    resolved = Path(path).resolve()
    try:
        digest = _digest(resolved)
    except OSError as exc:
        raise DiagramFileError(f"cannot read it: {exc.strerror or exc}", file=str(path)) from None
    entries = _entries()
    entries[resolved] = digest
    target = allow_list()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(f"{d}\t{p}\n" for p, d in entries.items()), encoding="utf-8")
    return resolved
