"""Where a run's results go: output paths checked before simulating, results never lost after.

A mistyped `--out` must not destroy the diagram (`--out d.json` on `d.json`), nor a file the
run reads or its blocks write (FromFile data, a trusted Python file, a ToFile's file: the
write rule, `blocksim.files.write_rule`), one output must not overwrite another (`--out
r.npz --events r.npz`), and a path that cannot be written must be refused before a long run
rather than after it. If a write still fails after the run
(the disk filled up, the folder went away), the results are written beside, to a file whose
name says so, and the user is told where.
"""
from __future__ import annotations

import errno
import logging
import os
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from blocksim.engine import Results
from blocksim.errors import BlocksimError
from blocksim.files import write_rule
from blocksim.files.write_rule import RunFiles

log = logging.getLogger(__name__)

# Write ends of named pipes (FIFOs) held open from the check to the write: the reader found
# before the run must not see end-of-file before the results come.
_held_pipes: dict[str, int] = {}


@dataclass(frozen=True)
class Output:
    """One file a run writes: the option that named it, its path and how it is written."""

    option: str  # "--out", "--events"
    path: Path
    write: Callable[[Results, Path], None]
    describe: Callable[[Results], str]  # what it holds, e.g. "1120 rows"


def results_output(path: str | os.PathLike) -> Output:
    """`--out`: the logged signals as CSV, or NPZ (signals and events) by the suffix."""
    path = Path(path)
    if path.suffix.lower() == ".npz":
        return Output("--out", path, lambda r, p: r.to_npz(p),
                      lambda r: f"{count(len(r.time), 'row')}, {count(len(r.events), 'event')}")
    return Output("--out", path, lambda r, p: r.to_csv(p), lambda r: count(len(r.time), "row"))


def events_output(path: str | os.PathLike) -> Output:
    """`--events`: the event log as CSV."""
    return Output("--events", Path(path), lambda r, p: r.events_to_csv(p),
                  lambda r: count(len(r.events), "event"))


def count(n: int, word: str) -> str:
    """`1 row`, `2 rows`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def duration(seconds: float) -> str:
    """A run's wall time as a person reads it: `2.41 s`, `38.2 ms`, `590 µs` (a run on the
    C backend often takes under a millisecond, which `0.000 s` hid)."""
    if seconds >= 0.9995:  # (what rounds to 1000 ms is 1.00 s)
        return f"{seconds:.2f} s"
    if seconds >= 0.9995e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def check_outputs(diagram: Path, outputs: list[Output], files: RunFiles | None = None,
                  allow: Sequence[str] = (), runs: int = 1) -> None:
    """Refuse, before anything runs, outputs that would overwrite an input or each other,
    or that cannot be written (missing folder, a folder, a read-only place); with the
    compiled model's `files`, also what its blocks would write against the write rule
    (`blocksim.files.write_rule`: `allow` are the --allow-write paths, `runs` a sweep's)."""
    if files is None:  # before the diagram is read: the diagram file itself
        files = write_rule.run_files(diagram, (), ())
    write_rule.check(files, [write_rule.output_use(out.option, out.path) for out in outputs],
                     allow, runs)
    for out in outputs:
        if write_rule.is_special(out.path):
            _claim_pipe(out)  # a device, FIFO or socket (/dev/null): written to in place
        else:
            _check_writable(out)


def _claim_pipe(out: Output) -> None:
    """A named pipe with nobody reading it would block the write forever once the run is
    over: refuse it before the run, and hold the write end open until the results go out."""
    try:
        if not stat.S_ISFIFO(os.stat(out.path).st_mode):
            return
        key = write_rule.identity(out.path)
        if key not in _held_pipes:
            _held_pipes[key] = os.open(out.path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise BlocksimError(f"{out.option} {out.path}: is a named pipe (FIFO) that no "
                                f"program reads; start the reader first") from None
        raise BlocksimError(f"{out.option} {out.path}: cannot write: "
                            f"{exc.strerror or exc}") from None


def _release_pipes() -> None:
    for fd in _held_pipes.values():
        try:
            os.close(fd)
        except OSError:
            pass
    _held_pipes.clear()


def _check_writable(out: Output) -> None:
    target = Path(os.path.realpath(out.path))
    where = f"{out.option} {out.path}"
    if target.is_dir():
        raise BlocksimError(f"{where}: is a folder; give a file name")
    folder = target.parent
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise BlocksimError(f"{where}: the folder {folder} {what}")
    # Writing means creating a temporary file in the folder and renaming it over the
    # target: try exactly that (os.access would say yes to root on a read-only mount).
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=folder)
    except OSError as exc:
        raise BlocksimError(f"{where}: cannot write in {folder}: "
                            f"{exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


def write_outputs(results: Results, outputs: list[Output]) -> tuple[list[str], list[str]]:
    """Write every output; returns (lines saying what was written, lines saying what failed
    and where the results went instead). Never raises for a failed write."""
    written, failed = [], []
    for out in outputs:
        try:
            out.write(results, out.path)
            written.append(f"{out.path} ({out.describe(results)})")
        except BrokenPipeError:  # `--out /dev/stdout | head`: the reader has had enough
            continue
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            rescued = _write_beside(results, out)
            if rescued is None:
                failed.append(f"cannot write {out.option} {out.path}: {reason}; "
                              f"the results could not be written anywhere else either")
            else:
                failed.append(f"cannot write {out.option} {out.path}: {reason}; "
                              f"written to {rescued} instead")
    _release_pipes()
    return written, failed


def _write_beside(results: Results, out: Output) -> Path | None:
    """Write to `<stem>.unsaved-<time><suffix>` beside the target, else in the current
    folder, else in the temporary folder; the path written, or None."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"{out.path.stem}.unsaved-{stamp}{out.path.suffix}"
    beside = [out.path.parent] if not write_rule.is_special(out.path) else []  # not into /dev
    for folder in beside + [Path.cwd(), Path(tempfile.gettempdir())]:
        candidate = folder / name
        try:
            out.write(results, candidate)
        except (OSError, ValueError) as exc:
            log.debug("cannot write %s: %s", candidate, exc)
            continue
        return candidate
    return None
