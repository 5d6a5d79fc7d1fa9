"""Which files a run may write, decided before it starts: a diagram someone sends you must not
change your files.

A run reads the diagram, the Python files of block types it names and the files its blocks
read (FromFile); it writes the files its blocks write (ToFile) and the files the user named
(--out, --events, a sweep's --out). Every path is judged where it really leads (symlinks
followed, those of its folders too), and one file under two names is one file:

  * A file a block writes lies inside the diagram file's folder (or a folder below it), or
    the user allowed it: that file or a folder around it (`--allow-write PATH`,
    `allow_write=` in Python, the editor's question). A diagram that has no file (built in
    Python, a new one in the editor) is its author's own: its blocks may write anywhere.
  * A block writes a regular file (or a new one), never a FIFO or a device, which would
    block the end of the run or never end.
  * In a sweep each run would write a block's file again: only where allowed.
  * No run writes a file it reads or writes otherwise: the diagram, its Python files, a
    FromFile's data, another block's file, --out and --events are all different files,
    whatever is allowed.

A refusal is a WriteRefused (a CompileError, so the CLI's exit 2 and the editor's
diagnostics name the block): one line naming the block, its file and where it leads.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence, Union

from blocksim.errors import BlocksimError, CompileError, shown
from blocksim.files.safe import _kind as file_kind

READS, WRITES = "reads", "writes"
PathLike = Union[str, "os.PathLike[str]"]

ALLOW_HINT = "--allow-write {} (allow_write= in Python)"


class WriteRefused(CompileError):
    """A run that would write where the rule says no. `allowable`: the real paths an
    allowance would let it write (empty when none can: a file the run reads), `reason`
    the message without how to allow it (for the editor's question)."""

    def __init__(self, message: str, block: str | None = None, file: str | None = None,
                 allowable: Sequence[str] = (), reason: str = ""):
        super().__init__(message, block=block, file=file)
        self.allowable = tuple(allowable)
        self.reason = reason or message


@dataclass(frozen=True)
class FileUse:
    """One file a run reads or writes, and who names it."""

    path: str  # absolute, '..' folded, symlinks not followed: as named
    writes: bool
    role: str  # what it is, as a message says: "the diagram being run"
    block: str | None = None  # the block whose parameter names it
    text: str = ""  # as written in the diagram, or on the command line
    option: str = ""  # "--out", "--events": named by the user


@dataclass(frozen=True)
class RunFiles:
    """Every file one compiled diagram reads and writes, and the folder its blocks' writes
    must stay in (None: a diagram with no file, its author's own)."""

    folder: str | None = None
    uses: tuple[FileUse, ...] = ()
    source: str = "<diagram>"


def data_path(folder: str | None, text: str) -> Path:
    """The file a block's `file` text names: relative to the diagram's folder (the current
    folder for a diagram that has no file), '..' folded, symlinks not followed."""
    path = Path(text)
    if not path.is_absolute():
        path = Path(folder or os.getcwd()) / path
    return Path(os.path.normpath(path))


def run_files(path: PathLike | None, python: Iterable[str],
              blocks: Iterable[tuple[str, Any, Any]]) -> RunFiles:
    """What a diagram saved at `path` touches: itself, its `python` files, and the files its
    blocks' parameters name (`blocks`: (path, block type, parameter values) of the flattened
    diagram; a parameter declared with `access` names a file)."""
    folder = os.path.dirname(os.path.abspath(path)) if path else None
    uses = []
    if path:
        uses.append(FileUse(os.path.abspath(path), False, "the diagram being run",
                            text=str(path)))
    for name in python:
        uses.append(FileUse(str(data_path(folder, name)), False,
                            f"the Python file '{shown(name)}' of the diagram's block types",
                            text=name))
    for block, block_type, p in blocks:
        for prm in getattr(block_type, "params", ()):
            access = getattr(prm, "access", "")
            text = p.get(prm.name) if access else None
            if not isinstance(text, str) or not text or "\x00" in text:
                continue  # (the block's own check refuses it)
            writes = access == WRITES
            role = f"{'also ' if writes else ''}the file block '{shown(block)}' {access}"
            uses.append(FileUse(str(data_path(folder, text)), writes, role, block, text))
    return RunFiles(folder, tuple(uses), str(path) if path else "<diagram>")


def output_use(option: str, path: PathLike) -> FileUse:
    """A file the user named for a run's results (`--out`, `--events`)."""
    return FileUse(os.path.abspath(path), True, f"also the {option} file", text=str(path),
                   option=option)


def check(files: RunFiles | None, outputs: Sequence[FileUse] = (),
          allow: Iterable[PathLike] = (), runs: int = 1) -> None:
    """Refuse, before anything runs, what the rule (see module) forbids: WriteRefused naming
    the block or option and the file. `runs`: how often each block's file is written (a
    sweep's runs). `outputs` that are devices or FIFOs (`--out /dev/null`) are written in
    place and collide with nothing."""
    allowed = [_allowance(item) for item in allow]
    blocks = [use for use in (files.uses if files else ()) if use.writes and use.block]
    if not outputs and not any(use.writes for use in (files.uses if files else ())):
        return  # nothing is written, so nothing collides (a `simulate` with no ToFile)
    for use in blocks:
        _refuse_special(use, files)
    outputs = [use for use in outputs if not is_special(use.path)]
    _refuse_collisions(list(files.uses if files else ()) + outputs, files)
    outside, repeated = [], []
    inner = os.path.realpath(files.folder) if files and files.folder else None
    for use in blocks:
        real = os.path.realpath(use.path)
        if any(_covers(a, real) for a in allowed):
            continue
        if inner is not None and not _inside(real, inner):
            outside.append((use, real))
        elif runs > 1:
            repeated.append((use, real))
    allowable = [real for _, real in outside + repeated]
    if outside:
        use, real = outside[0]
        more = f" (and {_count(len(outside) - 1, 'other file')} outside it)" \
            if len(outside) > 1 else ""
        reason = f"its file {_leads(use, real)} is outside the diagram's folder " \
                 f"{shown(inner, 200)}{more}"
        raise WriteRefused(f"{reason}: a diagram writes only inside its folder; allow it "
                           f"with {ALLOW_HINT.format(shown(real, 200))}", block=use.block,
                           file=files.source, allowable=allowable, reason=reason)
    if repeated:
        use, real = repeated[0]
        reason = f"its file {_leads(use, real)} would be written again by each of the " \
                 f"{runs} runs of the sweep, each replacing the last"
        raise WriteRefused(f"{reason}: allow it with {ALLOW_HINT.format(shown(real, 200))} "
                           f"if the last run's is what you want, or remove the block",
                           block=use.block, file=files.source, allowable=allowable,
                           reason=reason)


def identity(path: PathLike) -> str:
    """A key equal for two names of one file (symlinks, '..', relative paths)."""
    return os.path.normcase(os.path.realpath(path))


def _keys(path: str) -> set[tuple]:
    """The identities of a file: its real path, and its inode if it exists (hard links)."""
    keys: set[tuple] = {("path", identity(path))}
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return keys
    keys.add(("inode", info.st_dev, info.st_ino))
    return keys


def _refuse_collisions(uses: list[FileUse], files: RunFiles | None) -> None:
    """The first use that writes a file an earlier one reads or writes (reads come first:
    the diagram, its Python files, the blocks' data; then the blocks' writes; then the
    user's outputs), named with what it collides with."""
    ordered = sorted(uses, key=lambda use: (use.writes, bool(use.option)))
    seen: dict[tuple, FileUse] = {}
    for use in ordered:
        keys = _keys(use.path)
        earlier = next((seen[k] for k in keys if k in seen), None)
        if earlier is not None and (use.writes or earlier.writes):
            if use.option:  # the user's own output: as `--out` errors always read
                raise WriteRefused(f"{use.option} {shown(use.text, 200)}: that is "
                                   f"{earlier.role}; choose another file")
            raise WriteRefused(f"its file {_leads(use, os.path.realpath(use.path))} is "
                               f"{earlier.role}; choose another file", block=use.block,
                               file=files.source if files else None)
        for key in keys:
            seen.setdefault(key, use)


def _refuse_special(use: FileUse, files: RunFiles) -> None:
    """A block's file that exists as something else than a regular file (a FIFO would block
    the end of the run until someone reads it), or that cannot be looked at."""
    try:
        mode = os.stat(use.path).st_mode
    except FileNotFoundError:
        return  # a new file
    except OSError as exc:  # a symlink loop, a name too long, ...
        raise WriteRefused(f"cannot write its file '{shown(use.text, 200)}': "
                           f"{exc.strerror or exc}", block=use.block, file=files.source
                           ) from None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):  # (a folder: the block's own message)
        return
    raise WriteRefused(f"its file {_leads(use, os.path.realpath(use.path))} is "
                       f"{file_kind(mode)}, not a regular file; a block writes regular "
                       f"files only", block=use.block, file=files.source)


def _leads(use: FileUse, real: str) -> str:
    """How a message names a block's file: as written, and where it really leads."""
    named = f"'{shown(use.text, 200)}'"
    if identity(use.path) != os.path.normcase(use.path):
        return f"{named} (a symlink leads it to {shown(real, 200)})"
    if use.text != use.path:
        return f"{named} ({shown(use.path, 200)})"
    return named


def is_special(path: PathLike) -> bool:
    """An existing device, FIFO or socket (through symlinks: /dev/stdout)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _allowance(item: PathLike) -> tuple[str, bool]:
    """(real path, whether it is a folder) of one `--allow-write`."""
    text = os.fspath(item) if isinstance(item, (str, os.PathLike)) else None
    if not text or "\x00" in text:
        raise BlocksimError(f"--allow-write needs the path of a file or folder, got "
                            f"{shown(repr(item))}")
    real = os.path.realpath(text)
    return real, os.path.isdir(real)


def _covers(allowance: tuple[str, bool], real: str) -> bool:
    path, folder = allowance
    same = os.path.normcase(path) == os.path.normcase(real)
    return same or (folder and _inside(real, path))


def _inside(real: str, folder: str) -> bool:
    """Whether `real` lies below `folder` (both real paths)."""
    try:
        common = os.path.commonpath([os.path.normcase(real), os.path.normcase(folder)])
    except ValueError:  # another drive
        return False
    return common == os.path.normcase(folder) and os.path.normcase(real) != common


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
