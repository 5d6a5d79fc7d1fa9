"""Signals from and to files: FromFile reads a measured signal when the diagram compiles,
ToFile writes its input once the run has ended.

Paths are data, never code: a relative path is taken from the folder of the diagram file
(the current folder for a diagram that has no file), so a diagram moved together with its
data files still runs. The file formats are those the two blocks share:

  * CSV: rows of numbers separated by commas, an optional header row (any row before the
    first number row whose fields are not all numbers), blank lines and lines starting
    with '#' ignored; the first column is the time, the others the signal.
  * NPZ (NumPy archive): an array `t` (the times) and an array `y`, one value or one row
    per time (an archive without `y` may hold one other array, which is taken instead).

FromFile reads them through `signal_files`, which checks their sizes while reading.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

from blocksim.blocktypes.blockspec import BlockType, Param, Port, Sizes
from blocksim.errors import CompileError, shown
from blocksim.files.safe import FileTooLarge, NotARegularFile, atomic_write
from blocksim.files.write_rule import data_path

from .lookup import PiecewiseLinear
from .signal_files import SignalFileError, read_signal
from .sources import FromTable

log = logging.getLogger(__name__)

SUFFIXES = (".csv", ".npz")


def suffix_problem(text: str) -> str | None:
    """A message if `text` cannot name a signal file, else None (the file is not looked at)."""
    if not text.strip():
        return "parameter 'file' is empty; give a .csv or .npz file name"
    if "\x00" in text:
        return "parameter 'file' contains a NUL character"
    if Path(text).suffix.lower() not in SUFFIXES:
        return (f"parameter 'file' = '{shown(text)}' must end in .csv or .npz (the suffix "
                f"says the format)")
    return None


def resolve(p, text: str) -> Path:
    """The file a `file` parameter names: relative to the diagram's folder (see module)."""
    return data_path(p.folder, text)


def _where(text: str, path: Path) -> str:
    return f"'{shown(text)}'" + ("" if str(path) == text else f" ({shown(path, 200)})")


def zoh_points(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of the staircase that holds each row until the next time: every row's
    value holds from its time on (of two rows at one time, the second)."""
    keep = np.append(np.diff(times) > 0, True)  # the later of two rows at one time
    t, v = times[keep], values[keep]
    x = np.repeat(t, 2)[1:]  # t0, t1, t1, t2, t2, ...
    rows = np.repeat(v, 2, axis=0)[:-1]  # v0, v0, v1, v1, ...
    return x, rows


class FromFile(FromTable):
    """A signal read from a CSV or NPZ file (formats: see below), interpolated in time.

    The file is read when the diagram compiles, so the compiled model holds the data and
    runs without it. A relative `file` is taken from the diagram file's folder (the
    current folder for a diagram that has no file): a diagram moved together with its data
    still runs; a path outside that folder is allowed. `interpolation` "linear" joins the
    rows with straight lines, "zoh" holds each row until the next time; before the first
    time and after the last the end values are held. Every time in the file is a time
    event, so the solver stops exactly at each kink or jump.

    CSV: the first column is the time, the others the signal (one output element each); an
    optional header row, blank lines and '#' lines are skipped. NPZ: an array `t` of times
    and an array `y` with one value or one row per time. Times must not decrease; a time
    given twice makes a jump. A missing file, a decreasing time, a field that is not a
    number or a ragged row is an error naming the block and the file.
    """

    name = "FromFile"
    category = "Sources"  # as in Simulink; ToFile is a sink
    params = (
        Param("file", "text", "signal.csv", "the .csv or .npz file, relative to the diagram "
              "file's folder", access="reads", suffixes=SUFFIXES),
        Param("interpolation", "choice", "linear", "between the rows: straight lines "
              "(linear) or each row held until the next time (zoh)",
              choices=("linear", "zoh")),
    )
    outputs = (Port("y", "the signal from the file"),)

    def check(self, p):
        return suffix_problem(p.file)

    def _table(self, p) -> PiecewiseLinear:
        cached = getattr(self, "_cache", None)
        if cached is not None and cached[0] is p:
            return cached[1]
        path = resolve(p, p.file)
        try:
            times, values = read_signal(path)
        except FileNotFoundError:
            raise CompileError(f"cannot read {_where(p.file, path)}: no such file") from None
        except (NotARegularFile, FileTooLarge, SignalFileError) as exc:
            raise CompileError(f"cannot use {_where(p.file, path)}: {exc}") from None
        except OSError as exc:
            raise CompileError(f"cannot read {_where(p.file, path)}: "
                               f"{exc.strerror or exc}") from None
        if p.interpolation == "zoh":
            times, values = zoh_points(times, values)
        table = PiecewiseLinear(times, values, "clip")
        log.debug("%s: %d rows of %d columns", path, len(times), table.width)
        self._cache = (p, table)
        return table

    def count_time_events(self, p, start, stop):
        return float(len(self._table(p).switch))


class ToFile(BlockType):
    """Write the input signal, with the time, to a CSV or NPZ file when the run ends.

    The rows are those of the results: the output grid plus every event instant twice
    (left, then right limit); the signal is also logged under the block's id like an
    Output's. The file is written atomically (a temporary file in the same folder renamed
    over it) once the run has ended, also when it failed or was interrupted: it then holds
    what was computed so far. A relative `file` is taken from the diagram file's folder
    (the current folder for a diagram that has no file). CSV: a header `time,<id>` (vectors:
    `<id>[0]`, ...) and full-precision rows; NPZ: arrays `t` and `y` (one row per time).
    FromFile reads both back. A folder that does not exist is an error before the run; a
    write that fails after it fails the run, naming the block and the file.

    A diagram may come from anyone, so before the run its file must lie inside the diagram
    file's folder, where it really leads (symlinks followed), unless the user allows it
    (`--allow-write PATH`); it is never the diagram, a file the run reads or another
    output, and in a sweep it is written only where allowed (`blocksim.files.write_rule`).
    """

    name = "ToFile"
    category = "Sinks"
    params = (Param("file", "text", "output.csv", "the .csv or .npz file to write, "
                    "relative to the diagram file's folder (and inside it, unless allowed)",
                    access="writes"),)
    inputs = (Port("u", "signal to write"),)
    logs = True
    has_after_run = True

    def check(self, p):
        return suffix_problem(p.file)

    def sizes(self, p, in_widths):
        path = resolve(p, p.file)
        folder = path.parent
        if path.is_dir():
            raise CompileError(f"cannot write {_where(p.file, path)}: it is a folder")
        if not folder.is_dir():
            what = "does not exist" if not folder.exists() else "is not a folder"
            raise CompileError(f"cannot write {_where(p.file, path)}: the folder {what}")
        return Sizes({})

    def after_run(self, p, name: str, time: np.ndarray, values: np.ndarray) -> str:
        """Write the file (OSError or ValueError, naming it, if that fails); says what."""
        path = resolve(p, p.file)
        values = values.reshape(len(time), -1)
        try:
            if path.suffix.lower() == ".npz":
                arrays = {"t": time, "y": values if values.shape[1] > 1 else values[:, 0]}
                atomic_write(path, lambda fh: np.savez(fh, **arrays), binary=True)
            else:
                names = [name] if values.shape[1] == 1 else [
                    f"{name}[{k}]" for k in range(values.shape[1])]

                def write(fh):
                    fh.write(",".join(["time", *names]) + "\n")
                    np.savetxt(fh, np.column_stack([time, values]), delimiter=",",
                               fmt="%.17g")
                atomic_write(path, write)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise OSError(f"cannot write {_where(p.file, path)}: {reason}") from None
        log.info("%s: wrote %d rows to %s", name, len(time), path)
        real = os.path.realpath(path)
        where = f"{path}" if real == str(path) else f"{path} (-> {real})"
        return f"{where} ({len(time)} row{'' if len(time) == 1 else 's'})"


BLOCK_TYPES = (FromFile, ToFile)
