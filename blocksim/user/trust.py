"""Python files of user block types named by a diagram: run only when trusted, and then
exactly the bytes that were trusted.

A diagram file may come from anyone, and running a Python file runs anything. So a diagram
that names files (its top-level "python" list) loads only when the caller trusts each of
them: `blocksim run --trust FILE` (these bytes, now), `blocksim.load(path, trust=...)`, or
the user's allow-list (`blocksim trust FILE`: that file with its content then, by SHA-256,
so an edited file must be trusted again).

Each file is read once (a regular file of bounded size: never a FIFO or a device), those
bytes are hashed and checked, and those same bytes are compiled and executed in a fresh
module. Python's import system is never asked for the file: it would run a `__pycache__`
.pyc shipped beside the reviewed .py (an unchecked-hash pyc is used whatever the source
says), and it would read the file again after the check, when it may have been swapped.
"""
from __future__ import annotations

import hashlib
import logging
import os
import sys
import types
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Iterable, Sequence, Union

from blocksim.blocktypes import registry
from blocksim.diagram.model import Diagram
from blocksim.errors import DiagramFileError, shown
from blocksim.files.safe import read_regular_file, why_unreadable
from blocksim.user import allowlist

log = logging.getLogger(__name__)

Trust = Union[bool, Iterable[Union[str, "os.PathLike[str]"]]]

MAX_SOURCE_BYTES = 4 * 2**20  # a Python file of user block types (the largest seen: 60 kB)
ALLOW_LIST_ENV = allowlist.ENV

# resolved path -> (SHA-256 of the bytes executed, names of the block types they registered)
_IMPORTED: dict[Path, tuple[str, list[str]]] = {}


class UntrustedCodeError(DiagramFileError):
    """A diagram names a Python file its user has not said to trust."""


@dataclass(frozen=True)
class Source:
    """One Python file a diagram names, as read once: the bytes checked are the bytes run."""

    name: str  # as the diagram names it
    path: Path  # resolved
    data: bytes
    digest: str  # SHA-256 of data (hex)
    trusted: bool
    changed: bool = False  # on the allow-list with another digest: edited since trusted


def named_files(diagram: Diagram) -> list[Path]:
    """The Python files a diagram names, resolved against its folder."""
    folder = diagram.path.parent if diagram.path else Path.cwd()
    return [(folder / name).resolve() for name in diagram.python]


def read_sources(diagram: Diagram, trust: Trust = ()) -> list[Source]:
    """Read each Python file the diagram names (once) and say whether it is trusted: by
    `trust` (True: all; else these paths, as they are now) or by the allow-list (this
    path with this digest). DiagramFileError names a file that cannot be read."""
    given = None if trust is True else {_resolved(p, diagram.source) for p in (trust or ())}
    listed: dict[str, str] | None = None
    found = []
    for name, path in zip(diagram.python, named_files(diagram)):
        data = read_source(path, name, diagram.source)
        digest = hashlib.sha256(data).hexdigest()
        trusted = given is None or path in given
        known = None
        if not trusted:
            listed = allowlist.entries() if listed is None else listed
            known = listed.get(str(path))
            trusted = known == digest
        found.append(Source(name, path, data, digest, trusted, known is not None and not trusted))
    return found


def import_trusted(diagram: Diagram, trust: Trust = ()) -> list[str]:
    """Run the diagram's Python files and register their block types (names returned).

    trust: True trusts every file the diagram names; else the paths trusted (relative to
    the current folder) as they are when read here. UntrustedCodeError, before anything
    runs, if one is not trusted.
    """
    if not diagram.python:
        return []
    sources = read_sources(diagram, trust)
    for source in sources:
        if not source.trusted:
            raise untrusted_error(source, diagram.source)
    return run_sources(sources, diagram.source)


def untrusted_error(source: Source, diagram_source: str) -> UntrustedCodeError:
    shown_path = (os.path.relpath(source.path) if not Path(source.name).is_absolute()
                  else source.name)
    why = ("which changed since you trusted it; blocksim runs it only if you trust it as it "
           "is now" if source.changed else "which blocksim runs only if you trust it")
    return UntrustedCodeError(
        f"names the Python file '{shown(source.name)}', {why}: run with --trust "
        f"{shown(shown_path)}, or `blocksim trust {shown(shown_path)}` to trust it until it "
        f"changes (blocksim.load(..., trust=True) in Python)", file=diagram_source)


def run_sources(sources: Sequence[Source], diagram_source: str) -> list[str]:
    """Execute the bytes of each (trusted) source and register its block types."""
    names: list[str] = []
    for source in sources:
        if not source.trusted:  # (a caller's bug, never a user's file run unasked)
            raise untrusted_error(source, diagram_source)
        names += _execute(source, diagram_source)
    return names


def read_source(path: Path, name: str, diagram_source: str | None = None) -> bytes:
    """The bytes of a Python file of user blocks: a regular .py file of bounded size."""
    if not str(name).endswith(".py"):
        raise DiagramFileError(f"'{shown(name)}' is not a Python source file: only .py files "
                               f"(and .fmu files) can be trusted", file=diagram_source)
    try:
        return read_regular_file(path, MAX_SOURCE_BYTES)
    except (OSError, ValueError) as exc:
        raise DiagramFileError(f"the Python file '{shown(name)}' "
                               f"{why_unreadable(exc, MAX_SOURCE_BYTES)}",
                               file=diagram_source) from None


def _execute(source: Source, diagram_source: str) -> list[str]:
    done = _IMPORTED.get(source.path)
    if (done is not None and done[0] == source.digest
            and all(registry.get(n) is not None for n in done[1])):
        return done[1]
    name = shown(source.name)
    module_name = "blocksim_user_" + hashlib.sha256(str(source.path).encode()).hexdigest()[:16]
    module = types.ModuleType(module_name)
    module.__file__ = str(source.path)
    module.__spec__ = ModuleSpec(module_name, None, origin=str(source.path))
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module  # (dataclasses and pickle look their module up)
    try:
        code = compile(source.data, str(source.path), "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except SyntaxError as exc:
        _restore(module_name, previous)
        raise DiagramFileError(f"Python file '{name}' has a syntax error at line "
                               f"{exc.lineno}: {exc.msg}", file=diagram_source) from None
    except (Exception, SystemExit) as exc:  # the user's own code: one line naming the file
        _restore(module_name, previous)
        raise DiagramFileError(f"Python file '{name}' failed to import: "
                               f"{type(exc).__name__}: {shown(exc, 300)}",
                               file=diagram_source) from None
    block_types = registry.types_of(module, str(source.path))
    if not block_types:
        raise DiagramFileError(f"Python file '{name}' has no BLOCK_TYPES sequence of block "
                               f"types", file=diagram_source)
    for old in done[1] if done is not None else []:
        registry.unregister(old)  # the file changed: its new classes replace the old
    for block_type in block_types:
        try:
            registry.register(block_type, source=str(source.path))
        except Exception as exc:
            raise DiagramFileError(f"Python file '{name}': {exc}", file=diagram_source) from None
    log.info("%s: ran %s (sha256 %s): %d block types", diagram_source, source.path,
             source.digest, len(block_types))
    _IMPORTED[source.path] = (source.digest, [t.name for t in block_types])
    return _IMPORTED[source.path][1]


def _restore(module_name: str, previous: types.ModuleType | None) -> None:
    if previous is None:
        sys.modules.pop(module_name, None)
    else:
        sys.modules[module_name] = previous


def _resolved(path: str | os.PathLike[str], diagram_source: str | None) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a symlink loop
        raise DiagramFileError(f"cannot trust '{shown(os.fspath(path))}': {exc}",
                               file=diagram_source) from None


# ----- the user's allow-list (blocksim.user.allowlist) -----
def allow_list() -> Path:
    """Where the allow-list lives ($BLOCKSIM_TRUST_LIST, else ~/.config/blocksim/)."""
    return allowlist.location()


def remember(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[Path, str]]:
    """Put files, with their present content, on the user's allow-list: (path, SHA-256)
    of each. Every file is read (a regular .py file of bounded size, or an .fmu: FMUs
    share the list, `blocksim.fmi.trust`) before any is added."""
    found = []
    for given in paths:
        path = _resolved(given, None)
        if path.suffix.lower() == ".fmu":
            from blocksim.fmi.trust import digest_of
            found.append((path, digest_of(path, os.fspath(given))))
            continue
        data = read_source(path, os.fspath(given))
        found.append((path, hashlib.sha256(data).hexdigest()))
    remember_digests(found)
    return found


def remember_digests(items: Iterable[tuple[Path, str]]) -> Path:
    """Put these paths with these digests (of bytes the caller read and showed) on the
    allow-list; the list's path."""
    return allowlist.add({str(path): digest for path, digest in items})
