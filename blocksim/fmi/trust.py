"""Whether an FMU's binary may run: the same rule and allow-list as Python files of user
block types (`blocksim.user.trust`).

An FMU carries native code, which runs with the user's rights as soon as it is loaded. A
diagram names its FMUs (the `file` of its FMU blocks); loading it (`blocksim.load`, the
command line, the editor) checks each one against what the user trusts: `--trust
FILE.fmu` or `trust=` (this file as it is now), or the allow-list (`blocksim trust
FILE.fmu`: this path with this SHA-256). What passed is remembered for the process
(path -> digest), and a run loads an FMU only if the bytes it reads then have a digest
trusted for that path, so a file swapped after the check never runs.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable, Iterator

from blocksim.diagram.model import Diagram
from blocksim.errors import DiagramFileError, shown
from blocksim.files.safe import read_regular_file, why_unreadable
from blocksim.files.write_rule import data_path

BLOCK_TYPE = "FMU"

# resolved path -> SHA-256 of the archive trusted in this process
_TRUSTED: dict[Path, set[str]] = {}


class UntrustedFmuError(DiagramFileError):
    """A diagram names an FMU its user has not said to trust."""


def fmu_files(diagram: Diagram) -> list[tuple[str, str, Path]]:
    """(block path, file text, resolved path) of every FMU block, subsystems included, whose
    `file` is a plain string (a block whose file is missing is the compiler's to report)."""
    folder = str(diagram.path.parent) if diagram.path else None
    found = []

    def walk(d: Diagram, prefix: str) -> None:
        for blk in d.blocks:
            if blk.subsystem is not None:
                walk(blk.subsystem, f"{prefix}{blk.id}/")
            elif blk.type == BLOCK_TYPE:
                text = blk.params.get("file")
                if isinstance(text, str) and text.strip() and "\x00" not in text:
                    found.append((prefix + blk.id, text, data_path(folder, text)))
    walk(diagram, "")
    return found


def digest_of(path: Path, shown_as: str) -> str:
    from blocksim.fmi.archive import MAX_FMU_BYTES

    try:
        data = read_regular_file(path, MAX_FMU_BYTES)
    except (OSError, ValueError) as exc:
        raise DiagramFileError(f"FMU file '{shown(shown_as)}' "
                               f"{why_unreadable(exc, MAX_FMU_BYTES)}") from None
    return hashlib.sha256(data).hexdigest()


def check_diagram(diagram: Diagram, trust: bool | Iterable[str | os.PathLike[str]] = ()) -> None:
    """UntrustedFmuError (one line saying how to trust it) for the first FMU the diagram
    names that is neither given in `trust` (True: all) nor on the allow-list with its
    present content; the trusted ones are remembered for this process. An FMU file that
    does not exist is left to the compiler, which names the block."""
    found = fmu_files(diagram)
    if not found:
        return
    given = None if trust is True else {_resolved(p) for p in (trust or ())}
    listed: dict[str, str] | None = None
    for block, text, path in found:
        resolved = _resolved(path)
        if not resolved.exists() or resolved.suffix.lower() != ".fmu":
            continue  # (the compiler names what is wrong with it)
        try:
            digest = digest_of(resolved, text)
        except DiagramFileError as exc:
            raise DiagramFileError(exc.detail, file=diagram.source, block=block) from None
        ok = given is None or resolved in given
        known = None
        if not ok:
            from blocksim.user import allowlist  # (only for a diagram with FMUs)
            listed = allowlist.entries() if listed is None else listed
            known = listed.get(str(resolved))
            ok = known == digest
        if not ok:
            raise untrusted(text, resolved, known is not None, diagram.source, block)
        _TRUSTED.setdefault(resolved, set()).add(digest)


def untrusted(text: str, path: Path, changed: bool, source: str | None,
              block: str | None) -> UntrustedFmuError:
    shown_path = os.path.relpath(path) if not Path(text).is_absolute() else text
    why = ("which changed since you trusted it; blocksim loads its binary only if you trust "
           "it as it is now" if changed else
           "whose binary (native code) blocksim loads only if you trust it")
    python = ("blocksim.load(..., trust=True) in Python" if source is not None else
              "blocksim.load(..., trust=True), or for a diagram built in Python "
              "blocksim.fmi.trust.trust_now(path)")
    return UntrustedFmuError(
        f"names the FMU '{shown(text)}', {why}: run with --trust {shown(shown_path)}, or "
        f"`blocksim trust {shown(shown_path)}` to trust it until it changes ({python})",
        file=source, block=block)


def trust_now(path: str | os.PathLike[str]) -> str:
    """Trust this FMU as it is now, for this process only (a diagram built in Python);
    returns its SHA-256."""
    resolved = _resolved(path)
    digest = digest_of(resolved, str(path))
    _TRUSTED.setdefault(resolved, set()).add(digest)
    return digest


def is_trusted(path: Path, digest: str) -> bool:
    """Whether these bytes (by digest) of this FMU may run: trusted in this process, or on
    the allow-list."""
    resolved = _resolved(path)
    if digest in _TRUSTED.get(resolved, ()):
        return True
    from blocksim.user import allowlist
    return allowlist.entries().get(str(resolved)) == digest


def _resolved(path: str | os.PathLike[str]) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise DiagramFileError(f"cannot trust '{shown(os.fspath(path))}': {exc}") from None


def iter_trusted() -> Iterator[tuple[Path, set[str]]]:  # (tests and the editor)
    return iter(list(_TRUSTED.items()))
