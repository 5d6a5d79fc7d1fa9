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
"""
from __future__ import annotations

import csv
import io
import logging
import os
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np

from blocksim.blocktypes.blockspec import BlockType, Param, Port, Sizes
from blocksim.compiler import limits
from blocksim.errors import CompileError, shown
from blocksim.files.safe import FileTooLarge, NotARegularFile, atomic_write, read_regular_file
from blocksim.files.write_rule import data_path

from .lookup import PiecewiseLinear
from .sources import FromTable

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 256 * 2**20
"""The largest signal file FromFile reads (a million table elements fit in far less)."""

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


# ----- reading -----

class SignalFileError(ValueError):
    """A signal file that cannot be used; the message says why (the caller adds the path)."""


def read_signal(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(times, values with one row per time) of a CSV or NPZ file, checked: numeric, not
    ragged, finite, at least two different times, times never decreasing, no time given
    more than twice (twice is a jump). SignalFileError or OSError say what is wrong."""
    data = read_regular_file(path, MAX_FILE_BYTES)
    if path.suffix.lower() == ".npz":
        times, values = _parse_npz(data)
        lines = None
    else:
        times, values, lines = _parse_csv(data)

    def row(i: int) -> str:
        return f"line {lines[i]}" if lines else f"element {i} of 't'"
    if times.size * (1 + values.shape[1]) > limits.MAX_TABLE_ELEMENTS:
        raise SignalFileError(f"it has {times.size} rows of {1 + values.shape[1]} numbers "
                              f"(at most {limits.MAX_TABLE_ELEMENTS} numbers)")
    _check_times(times, row)
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        i, col = bad[0]
        raise SignalFileError(f"{row(i)}: signal column {col + 1} is {values[i, col]}; "
                              f"the signal must be finite")
    return times, values


def _parse_csv(data: bytes) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(times, values, the line of each row) of a CSV file."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SignalFileError("it is not a text (UTF-8) file; a CSV file is text") from None
    rows: list[list[float]] = []
    lines: list[int] = []
    width = 0
    reader = csv.reader(io.StringIO(text))
    for fields in reader:
        if not fields or not "".join(fields).strip() or fields[0].lstrip().startswith("#"):
            continue
        numbers = []
        for col, field in enumerate(fields):
            try:
                numbers.append(float(field))
            except ValueError:
                if rows:  # a header is allowed only before the numbers
                    raise SignalFileError(f"line {reader.line_num}, column {col + 1}: "
                                          f"'{shown(field.strip(), 40)}' is not a number"
                                          ) from None
                numbers = []
                break
        if not numbers:
            continue  # the header row
        if not rows:
            width = len(numbers)
            if width < 2:
                raise SignalFileError(f"line {reader.line_num} has one column; a signal "
                                      f"file needs a time column and at least one signal "
                                      f"column")
        elif len(numbers) != width:
            raise SignalFileError(f"line {reader.line_num} has {len(numbers)} columns where "
                                  f"the first row of numbers has {width} (a ragged file)")
        rows.append(numbers)
        lines.append(reader.line_num)
    if not rows:
        raise SignalFileError("it holds no rows of numbers")
    table = np.array(rows, dtype=float)
    return table[:, 0], table[:, 1:], lines


def _parse_npz(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    try:
        archive = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise SignalFileError(f"it is not a NumPy .npz archive ({exc})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise SignalFileError("it is a single .npy array, not an .npz archive with 't' and 'y'")
    with archive:
        names = list(archive.files)
        if "t" not in names:
            raise SignalFileError(f"it has no array 't' (the times); it has "
                                  f"{', '.join(map(repr, names)) or 'no arrays'}")
        others = [name for name in names if name != "t"]
        key = "y" if "y" in names else (others[0] if len(others) == 1 else None)
        if key is None:
            raise SignalFileError(f"it has no array 'y' (the signal); it has "
                                  f"{', '.join(map(repr, names))}")
        try:
            raw_t, raw_y = archive["t"], archive[key]
        except (ValueError, OSError, zipfile.BadZipFile) as exc:
            raise SignalFileError(f"cannot read its arrays ({exc})") from None
    for name, arr in (("t", raw_t), (key, raw_y)):
        if arr.dtype.kind not in "biuf":
            raise SignalFileError(f"array '{name}' holds {arr.dtype} values, not numbers")
    times, values = raw_t.astype(float), raw_y.astype(float)
    if times.ndim != 1:
        raise SignalFileError(f"array 't' must be a vector, got shape {times.shape}")
    if values.ndim not in (1, 2) or values.shape[0] != times.size:
        raise SignalFileError(f"array '{key}' must have one value or one row per time "
                              f"({times.size}), got shape {values.shape}")
    return times, values.reshape(times.size, -1)


def _check_times(times: np.ndarray, row: Callable[[int], str]) -> None:
    """Finite, never decreasing, no time more than twice, two different times at least;
    `row(i)` names row i in a message."""
    bad = np.flatnonzero(~np.isfinite(times))
    if bad.size:
        raise SignalFileError(f"{row(bad[0])}: the time is {times[bad[0]]}; times must be "
                              f"finite")
    steps = np.diff(times)
    back = np.flatnonzero(steps < 0)
    if back.size:
        i = int(back[0])
        raise SignalFileError(f"{row(i + 1)}: the time column decreases ({times[i + 1]:g} "
                              f"after {times[i]:g}); times must not decrease")
    thrice = np.flatnonzero((steps[:-1] == 0) & (steps[1:] == 0))
    if thrice.size:
        raise SignalFileError(f"{row(thrice[0] + 2)}: time {times[thrice[0]]:g} appears a "
                              f"third time (twice makes a jump)")
    if times.size < 2 or times[-1] == times[0]:
        raise SignalFileError("it needs rows at two different times at least")


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
              "file's folder", access="reads"),
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
