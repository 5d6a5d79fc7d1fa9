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
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from blocksim.errors import BlocksimError, shown
from blocksim.files.safe import atomic_write
from blocksim.sweeps.plan import Plan
from blocksim.sweeps.table import MESSAGE, STATUS, SweepTable

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


def read_rows(path: str | os.PathLike) -> tuple[list[str], list[list[Any]]]:
    """The columns and rows of a sweep file written by `write_table`."""
    try:
        if output_format(path) == "csv":
            with open(path, newline="", encoding="utf-8") as fh:
                rows = list(csv.reader(fh))
            return (rows[0], rows[1:]) if rows else ([], [])
        pa = _pyarrow(path)
        data = pa.parquet.read_table(path).to_pydict()
    except OSError as exc:
        raise BlocksimError(f"--resume {path}: cannot read: {exc.strerror or exc}") from None
    except Exception as exc:  # a corrupt or foreign file: say which
        raise BlocksimError(f"--resume {path}: not a sweep file ({exc})") from None
    columns = list(data)
    return columns, [list(row) for row in zip(*data.values())]


def resume(table: SweepTable, plan: Plan, path: str | os.PathLike) -> int:
    """Fill `table` with the rows of an earlier run of the same sweep found in `path`
    (matched to the plan's runs by their parameter values); the number found."""
    if not Path(path).exists():
        return 0
    columns, rows = read_rows(path)
    if tuple(columns) != table.columns:
        raise BlocksimError(f"--resume {path}: its columns ({', '.join(map(shown, columns))}) "
                            f"are not this sweep's ({', '.join(table.columns)}); same "
                            f"parameters and metrics, or another --out")
    n = len(table.names)
    status_at = n
    waiting: dict[tuple, list[int]] = {}
    for index in range(len(plan) - 1, -1, -1):  # popped from the end: lowest index first
        waiting.setdefault(plan.rows[index], []).append(index)
    found = 0
    for k, row in enumerate(rows):
        try:
            values = tuple(float(v) for v in row[:n])
            metrics = tuple(float(v) for v in row[n + 1:-1])
        except (TypeError, ValueError):
            raise BlocksimError(f"--resume {path}: row {k + 1} is not a sweep row") from None
        indices = waiting.get(values)
        if not indices:
            raise BlocksimError(f"--resume {path}: row {k + 1} ({_describe(table.names, values)})"
                                f" is not a run of this sweep (another grid, draws or seed?)")
        table.rows[indices.pop()] = (*values, str(row[status_at]), *metrics,
                                     "" if row[-1] is None else str(row[-1]))
        found += 1
    return found


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

