"""A sweep's output file: CSV for small sweeps, Parquet for large ones; and resuming from it.

Parquet (through pyarrow, the `parquet` extra) rather than NetCDF: it is what pandas reads
natively (`pd.read_parquet`) and xarray through pandas, it stores the status and message
strings as plainly as the numbers, compresses a 100,000-row table to a fraction of its
CSV, and pyarrow is one well-kept wheel (Apache Arrow) with no C library to install, where
NetCDF-4 needs HDF5 behind netCDF4 or h5netcdf and NetCDF-3 has no proper strings.

The file is rewritten whole, atomically (blocksim.files.safe.atomic_write), at checkpoints:
after a second, then no more often than ten times the last write took, and at the end or
on Ctrl-C. A sweep killed outright loses at most the runs since the last checkpoint and
never leaves a half-written file. Numbers are written to round-trip exactly (CSV with
Python's shortest repr), so `--resume` recognises the runs it finds by their parameter
values: run i of a grid or of a seeded Monte Carlo has the same values every time.
"""
from __future__ import annotations

import csv
import io
import os
import stat
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from blocksim.errors import BlocksimError, shown
from blocksim.files.safe import atomic_write
from blocksim.sweeps.plan import Plan
from blocksim.sweeps.table import MESSAGE, STATUS, STATUSES, SweepTable

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def output_format(path: str | os.PathLike) -> str:
    """`csv` or `parquet` by the file's suffix (BlocksimError for another)."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise BlocksimError(f"--out {path}: a sweep writes .csv or .parquet files")
    if fmt == "parquet":
        _pyarrow(path)
    return fmt


def _pyarrow(path: Any) -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401 (the submodule is imported for its side)
    except ImportError:
        raise BlocksimError(f"--out {path}: Parquet needs pyarrow: pip install "
                            f"'blocksim[parquet]' (or write .csv)") from None
    return pyarrow


def write_table(table: SweepTable, path: str | os.PathLike) -> None:
    """The whole table, atomically, in the format the suffix says."""
    columns = table.columns
    order = sorted(table.rows)
    if output_format(path) == "csv":
        def write(fh: io.TextIOBase) -> None:
            out = csv.writer(fh, lineterminator="\n")
            out.writerow(columns)
            for i in order:
                out.writerow([repr(v) if isinstance(v, float) else v for v in table.rows[i]])
        atomic_write(path, write)
        return
    pa = _pyarrow(path)
    data = list(zip(*(table.rows[i] for i in order))) or [()] * len(columns)
    arrow = pa.table({name: pa.array(values, type=pa.string() if name in (STATUS, MESSAGE)
                                     else pa.float64())
                      for name, values in zip(columns, data)})
    atomic_write(path, lambda fh: pa.parquet.write_table(arrow, fh), binary=True)


def read_rows(path: str | os.PathLike) -> tuple[list[str], list[tuple[str, list[Any]]]]:
    """The columns of a sweep file written by `write_table`, and its rows, each with where
    it is (`line 3` of a CSV, `row 2` of a Parquet table) for a message."""
    try:
        if output_format(path) == "csv":
            with open(path, newline="", encoding="utf-8") as fh:
                reader = csv.reader(fh)
                header = next(reader, [])
                rows, start = [], reader.line_num + 1
                for row in reader:
                    rows.append((f"line {start}", row))
                    start = reader.line_num + 1
            return header, rows
        pa = _pyarrow(path)
        data = pa.parquet.read_table(path).to_pydict()
    except OSError as exc:
        raise BlocksimError(f"--resume {path}: cannot read: {exc.strerror or exc}") from None
    except Exception as exc:  # a corrupt or foreign file: say which
        raise BlocksimError(f"--resume {path}: not a sweep file ({exc})") from None
    columns = list(data)
    return columns, [(f"row {k + 1}", list(row)) for k, row in enumerate(zip(*data.values()))]


def resume(table: SweepTable, plan: Plan, path: str | os.PathLike) -> int:
    """Fill `table` with the rows of an earlier run of the same sweep found in `path`
    (matched to the plan's runs by their parameter values); the number found.

    The whole file is checked before any row is taken: one row that is cut short, has a
    field that is not a number or a status, or is no run of this sweep refuses the file,
    naming it and the row, and nothing runs (so the file is never rewritten from part of
    it)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return 0  # a device or a pipe (reading a FIFO would wait): no earlier runs
    except FileNotFoundError:
        return 0
    except (OSError, ValueError) as exc:
        raise BlocksimError(f"--resume {path}: cannot read: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
    columns, rows = read_rows(path)
    if not columns and not rows:
        return 0  # an empty file: no runs yet
    if tuple(columns) != table.columns:
        raise BlocksimError(f"--resume {path}: its columns ({', '.join(map(shown, columns))}) "
                            f"are not this sweep's ({', '.join(table.columns)}); same "
                            f"parameters and metrics, or another --out")
    waiting: dict[tuple, list[int]] = {}
    for index in range(len(plan) - 1, -1, -1):  # popped from the end: lowest index first
        waiting.setdefault(plan.rows[index], []).append(index)
    found: dict[int, tuple] = {}
    for where, fields in rows:
        row = _parse_row(table, fields, f"--resume {path}: {where}")
        indices = waiting.get(row[:len(table.names)])
        if not indices:
            raise BlocksimError(f"--resume {path}: {where} "
                                f"({_describe(table.names, row)}) is not a run of this "
                                f"sweep (another grid, draws or seed?){_KEPT}")
        found[indices.pop()] = row
    table.rows.update(found)
    return len(found)


_KEPT = "; nothing ran, the file is as it was"


def _parse_row(table: SweepTable, fields: Sequence[Any], where: str) -> tuple:
    """One row of a sweep file as the table holds it (parameters, status, metrics,
    message), or BlocksimError saying what is wrong with it."""
    columns, n = table.columns, len(table.names)
    if len(fields) != len(columns):
        raise BlocksimError(f"{where} has {len(fields)} field{'s' * (len(fields) != 1)}, "
                            f"not the {len(columns)} of "
                            f"this sweep's rows ({', '.join(columns)}){_KEPT}")
    numbers = []
    for k, (name, value) in enumerate(zip(columns, fields)):
        if k == n or k == len(columns) - 1:
            continue  # status, message
        try:
            numbers.append(float(value))
        except (TypeError, ValueError):
            raise BlocksimError(f"{where}: {name} is '{shown(value)}', not a number"
                                f"{_KEPT}") from None
    status = fields[n]
    if status not in STATUSES:
        raise BlocksimError(f"{where}: status is '{shown(status)}', not one of "
                            f"{', '.join(STATUSES)}{_KEPT}")
    message = "" if fields[-1] is None else str(fields[-1])
    return (*numbers[:n], status, *numbers[n:], message)


def _describe(names: Sequence[str], values: Sequence[float]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in zip(names, values))


class Checkpoints:
    """Rewrites the output when enough time has passed since the last write."""

    def __init__(self, table: SweepTable, path: str | os.PathLike | None):
        self.table, self.path = table, path
        self.last = time.monotonic()
        self.interval = 1.0
        self.dirty = False

    def changed(self) -> None:
        self.dirty = True
        if self.path is not None and time.monotonic() - self.last >= self.interval:
            self.write()

    def write(self) -> None:
        if self.path is None or not self.dirty:
            return
        started = time.monotonic()
        try:
            write_table(self.table, self.path)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            raise BlocksimError(f"cannot write --out {self.path}: {reason}") from None
        self.last = time.monotonic()
        self.interval = max(1.0, 10 * (self.last - started))
        self.dirty = False


def counts_line(counts: Counter | dict[str, int]) -> str:
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no runs"

