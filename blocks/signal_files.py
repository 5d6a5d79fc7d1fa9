"""Reading the signal files of FromFile with every size checked while reading, not after.

A signal file is at most MAX_FILE_BYTES and holds at most `limits.MAX_TABLE_ELEMENTS`
numbers (rows x columns). Without checks made while reading, a 200 MB CSV was parsed whole
(5.8 GB of Python floats, over a minute) before its numbers were counted, and a 3 MB NPZ
inflated to gigabytes before its shape was looked at. Here:

  * CSV is read line by line from the file (never whole), each line at most
    MAX_LINE_CHARS long, and the numbers are counted as the rows come: reading stops at the
    first row past the limit. A field over the csv module's limit (128 KiB) is an error
    naming its line, as is text that is not UTF-8.
  * NPZ members are looked at before they are inflated: the archive's table of contents
    must be small, each chosen array stored or deflated (not bzip2/lzma, whose chunks
    inflate without bound), its declared inflated size and then the shape in its .npy
    header within the numbers left; only then are its bytes read, exactly as many as the
    header says.

The formats themselves are described in `files` (the FromFile and ToFile blocks).
"""
from __future__ import annotations

import csv
import io
import math
import re
import struct
import zipfile
import zlib
from array import array
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import numpy as np

from blocksim.compiler import limits
from blocksim.errors import shown
from blocksim.files.safe import FileTooLarge, open_regular_file

MAX_FILE_BYTES = 256 * 2**20
"""The largest signal file FromFile reads (a million numbers fit in far less)."""

MAX_LINE_CHARS = 4 * 2**20
"""The longest CSV line: 100,000 numbers (the widest signal a model may have) written at
full precision, as ToFile writes them, take 2.5 MB."""

MAX_DIRECTORY_BYTES = 2**20
"""The largest table of contents of an NPZ archive (an archive of a signal has a few
arrays, about 100 bytes each; a huge one would be parsed whole by `zipfile`)."""

MAX_ITEM_BYTES = 16  # the widest number type an array may hold (longdouble)
MAX_HEADER_BYTES = 10_000  # numpy's own bound on a .npy header
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_END_RECORD = b"PK\x05\x06"  # the end of central directory record: 22 bytes + a comment
_ZIP64_LOCATOR = b"PK\x06\x07"  # 20 bytes, just before the end record of a ZIP64 archive
_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes decoded with "surrogateescape"
_READ_FAULTS = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error,
                NotImplementedError, RuntimeError, struct.error)


class SignalFileError(ValueError):
    """A signal file that cannot be used; the message says why (the caller adds the path)."""


def read_signal(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(times, values with one row per time) of a CSV or NPZ file, checked: within the size
    limits (while reading), numeric, not ragged, finite, at least two different times,
    times never decreasing, no time given more than twice (twice is a jump).
    SignalFileError or OSError (FileTooLarge, NotARegularFile) say what is wrong."""
    with open_regular_file(path, MAX_FILE_BYTES) as fh:
        if path.suffix.lower() == ".npz":
            times, values = _parse_npz(fh)
            lines = None
        else:
            times, values, lines = _parse_csv(fh)

    def row(i: int) -> str:
        return f"line {lines[i]}" if lines is not None else f"element {i} of 't'"
    _check_times(times, row)
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        i, col = bad[0]
        raise SignalFileError(f"{row(i)}: signal column {col + 1} is {values[i, col]}; "
                              f"the signal must be finite")
    return times, values


# ----- CSV -----

class _Lines:
    """The lines of a text file, each at most MAX_LINE_CHARS long and UTF-8 (else
    SignalFileError naming the line), counted (`number`: the line last read) and at most
    MAX_FILE_BYTES characters in all (a file that grows while it is read)."""

    def __init__(self, text: io.TextIOBase):
        self.text = text
        self.number = 0
        self.chars = 0

    def __iter__(self) -> Iterator[str]:
        while True:
            line = self.text.readline(MAX_LINE_CHARS + 1)
            if not line:
                return
            self.number += 1
            self.chars += len(line)
            if len(line) > MAX_LINE_CHARS:
                raise SignalFileError(f"line {self.number} is longer than "
                                      f"{MAX_LINE_CHARS} characters")
            if self.chars > MAX_FILE_BYTES:
                raise FileTooLarge(f"it grew beyond {MAX_FILE_BYTES} bytes while read")
            if _NOT_UTF8.search(line):
                raise SignalFileError(f"line {self.number} is not UTF-8 text; a CSV file is "
                                      f"text")
            yield line


def _parse_csv(fh: BinaryIO) -> tuple[np.ndarray, np.ndarray, array]:
    """(times, values, the line of each row) of a CSV file, read line by line."""
    # Bytes that are not UTF-8 become lone surrogates, found line by line (`_Lines`).
    text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="surrogateescape", newline="")
    lines = _Lines(text)
    reader = csv.reader(lines)
    numbers = array("d")  # the rows, flat: 8 bytes a number while reading
    row_lines = array("q")
    width = 0
    try:
        for fields in reader:
            if not fields or not "".join(fields).strip() or fields[0].lstrip().startswith("#"):
                continue
            if len(numbers) + len(fields) > limits.MAX_TABLE_ELEMENTS:
                raise SignalFileError(f"line {reader.line_num} brings it to more than "
                                      f"{limits.MAX_TABLE_ELEMENTS} numbers (rows x columns),"
                                      f" the most a signal file may hold")
            row = _numbers(fields, reader.line_num, header_allowed=not row_lines)
            if row is None:
                continue  # the header row
            if not row_lines:
                width = len(row)
                if width < 2:
                    raise SignalFileError(f"line {reader.line_num} has one column; a signal "
                                          f"file needs a time column and at least one "
                                          f"signal column")
            elif len(row) != width:
                raise SignalFileError(f"line {reader.line_num} has {len(row)} columns where "
                                      f"the first row of numbers has {width} (a ragged file)")
            numbers.extend(row)
            row_lines.append(reader.line_num)
    except csv.Error as exc:
        raise SignalFileError(f"line {lines.number}: {_csv_problem(exc)}") from None
    finally:
        text.detach()  # the caller closes the file
    if not row_lines:
        raise SignalFileError("it holds no rows of numbers")
    table = np.frombuffer(numbers, dtype=float).reshape(len(row_lines), width)
    return table[:, 0].copy(), table[:, 1:].copy(), row_lines


def _numbers(fields: list[str], line: int, header_allowed: bool) -> list[float] | None:
    """The fields as numbers; None for a header row (allowed only before the numbers)."""
    row = []
    for col, field in enumerate(fields):
        try:
            row.append(float(field))
        except ValueError:
            if header_allowed:
                return None
            raise SignalFileError(f"line {line}, column {col + 1}: "
                                  f"'{shown(field.strip(), 40)}' is not a number") from None
    return row


def _csv_problem(exc: csv.Error) -> str:
    text = str(exc)
    if "field limit" in text:
        return (f"a field is longer than {csv.field_size_limit()} characters (no number "
                f"is that long)")
    return text


# ----- NPZ -----

def _parse_npz(fh: BinaryIO) -> tuple[np.ndarray, np.ndarray]:
    head = fh.read(len(_NPY_MAGIC))
    if head.startswith(_NPY_MAGIC):
        raise SignalFileError("it is a single .npy array, not an .npz archive with 't' and 'y'")
    if not head.startswith(_ZIP_MAGIC):
        raise SignalFileError("it is not a NumPy .npz archive (not a zip file)")
    _check_directory(fh)
    try:
        archive = zipfile.ZipFile(fh)
    except _READ_FAULTS as exc:
        raise SignalFileError(f"it is not a NumPy .npz archive ({exc})") from None
    with archive:
        members = {(info.filename[:-4] if info.filename.endswith(".npy") else info.filename):
                   info for info in archive.infolist() if not info.is_dir()}
        names = list(members)
        if "t" not in members:
            raise SignalFileError(f"it has no array 't' (the times); it has "
                                  f"{_names(names) or 'no arrays'}")
        others = [name for name in names if name != "t"]
        key = "y" if "y" in members else (others[0] if len(others) == 1 else None)
        if key is None:
            raise SignalFileError(f"it has no array 'y' (the signal); it has {_names(names)}")
        raw_t = _read_array(archive, members["t"], "t", limits.MAX_TABLE_ELEMENTS)
        raw_y = _read_array(archive, members[key], key, limits.MAX_TABLE_ELEMENTS - raw_t.size)
    times, values = raw_t.astype(float), raw_y.astype(float)
    if times.ndim != 1:
        raise SignalFileError(f"array 't' must be a vector, got shape {times.shape}")
    if values.ndim not in (1, 2) or values.shape[0] != times.size:
        raise SignalFileError(f"array '{key}' must have one value or one row per time "
                              f"({times.size}), got shape {values.shape}")
    return times, values.reshape(times.size, -1)


def _names(names: list[str], most: int = 10) -> str:
    text = ", ".join(repr(shown(name, 40)) for name in names[:most])
    return text + (f" and {len(names) - most} more" if len(names) > most else "")


def _check_directory(fh: BinaryIO) -> None:
    """Refuse an archive whose table of contents is large (or ZIP64) before `zipfile`
    reads it whole; the end record is found as `zipfile` finds it (the last one)."""
    size = fh.seek(0, io.SEEK_END)
    tail_size = min(size, 20 + 22 + 0xFFFF)  # ZIP64 locator, end record, longest comment
    fh.seek(size - tail_size)
    tail = fh.read(tail_size)
    fh.seek(0)
    at = len(tail) - 22 if tail[-22:-18] == _END_RECORD else tail.rfind(_END_RECORD)
    if at < 0 or at + 22 > len(tail):
        return  # no end record: zipfile says the file is not a zip archive
    if tail[max(at - 20, 0):at].startswith(_ZIP64_LOCATOR):
        raise SignalFileError("it is a ZIP64 archive, made for more data than a signal "
                              "file may hold")
    directory_bytes = struct.unpack_from("<L", tail, at + 12)[0]
    if directory_bytes > MAX_DIRECTORY_BYTES:
        raise SignalFileError(f"its table of contents is {directory_bytes} bytes (at most "
                              f"{MAX_DIRECTORY_BYTES}: a signal file holds a few arrays)")


def _read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str,
                budget: int) -> np.ndarray:
    """The array of one .npy member, refused before it is inflated if it would hold more
    than `budget` numbers (or is not made of numbers)."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        method = zipfile.compressor_names.get(info.compress_type, info.compress_type)
        raise SignalFileError(f"array '{name}' is compressed with {method}; an .npz file is "
                              f"stored or deflated (numpy's savez, savez_compressed)")
    most = budget * MAX_ITEM_BYTES + MAX_HEADER_BYTES
    if info.file_size > most:
        raise SignalFileError(f"array '{name}' inflates to {limits.size_text(info.file_size)};"
                              f" a signal file holds at most {limits.MAX_TABLE_ELEMENTS} "
                              f"numbers ({limits.size_text(most)} at most for this array)")
    try:
        with archive.open(info) as member:
            shape, fortran, dtype = _header(member, name)
            count = math.prod(shape)
            if count > budget:
                times = limits.MAX_TABLE_ELEMENTS - budget
                raise SignalFileError(
                    f"array '{name}' has shape {shape}, {count} numbers"
                    f"{f' (and {times} times)' if times else ''}; a signal file holds at "
                    f"most {limits.MAX_TABLE_ELEMENTS} numbers")
            size = count * dtype.itemsize
            data = member.read(size)
    except SignalFileError:
        raise
    except _READ_FAULTS as exc:
        raise SignalFileError(f"cannot read its array '{name}' ({exc})") from None
    if len(data) != size:
        raise SignalFileError(f"array '{name}' is cut short: its header says {size} bytes "
                              f"of data, the archive has {len(data)}")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")


def _header(member: BinaryIO, name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, Fortran order, dtype) from a .npy header; the dtype must be numbers."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(member)
    except ValueError:
        raise SignalFileError(f"array '{name}' is not a NumPy array (.npy)") from None
    read: Callable = (fmt.read_array_header_1_0 if version == (1, 0)
                      else fmt.read_array_header_2_0)  # 2.0 and 3.0 differ only in text
    shape, fortran, dtype = read(member, max_header_size=MAX_HEADER_BYTES)
    if dtype.hasobject or dtype.kind not in "biuf":
        raise SignalFileError(f"array '{name}' holds {dtype} values, not numbers")
    return tuple(int(n) for n in shape), bool(fortran), dtype


# ----- both -----

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
