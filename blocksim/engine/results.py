"""Simulation results: time, logged signals and the event log, exportable to CSV and NPZ.

An event instant appears twice in `time`: its left limit, then its right limit. `warnings`
holds what the run reported without failing (a stiff system on an explicit solver, a logged
signal that became NaN or infinite), one line each, in the order they arose.
"""
from __future__ import annotations

import csv
import functools
import os
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from blocksim.files.safe import atomic_write


class Event(NamedTuple):
    """One entry of the event log (a named tuple: a run can log hundreds of thousands, and
    a frozen dataclass cost 0.8 µs each to make, a quarter of a bounce on numba)."""

    time: float
    block: str
    kind: str


_new_event = functools.partial(tuple.__new__, Event)  # Event(*fields), called from C


def logged_events(times: np.ndarray, blocks: np.ndarray, kinds: np.ndarray,
                  block_ids: Sequence[str], kind_names: Sequence[str]) -> Iterator[Event]:
    """Events from a compiled loop's event log (times, block and kind indices), made in
    bulk: no Python call per event."""
    return map(_new_event, zip(times.tolist(), map(block_ids.__getitem__, blocks.tolist()),
                               map(kind_names.__getitem__, kinds.tolist())))


@dataclass(frozen=True)
class Results:
    """What a run produced, complete or up to the failure."""

    time: np.ndarray
    signals: dict[str, np.ndarray]
    events: tuple[Event, ...] = ()
    # finished | stopped (a Stop block or should_stop) | failed | interrupted (Ctrl-C)
    status: str = "finished"
    message: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    # What blocks wrote once the run ended: (block id, "/path/out.csv (120 rows)") (ToFile)
    written: tuple[tuple[str, str], ...] = ()

    def __getitem__(self, name: str) -> np.ndarray:
        return self.signals[name]

    def columns(self) -> Iterator[tuple[str, np.ndarray]]:
        """(column name, values) pairs: `id` for scalars, `id[k]` for vector elements."""
        yield "time", self.time
        for name, values in self.signals.items():
            if values.ndim == 1:
                yield name, values
            else:
                for k in range(values.shape[1]):
                    yield f"{name}[{k}]", values[:, k]

    def events_of(self, kind: str | None = None, block: str | None = None) -> list[Event]:
        return [e for e in self.events
                if (kind is None or e.kind == kind) and (block is None or e.block == block)]

    def to_csv(self, path: str | os.PathLike) -> None:
        """Write `time,<signal>,...` rows, full precision, atomically."""
        cols = list(self.columns())
        data = np.column_stack([c for _, c in cols]) if cols else np.empty((0, 0))

        def write(fh):
            fh.write(",".join(name for name, _ in cols) + "\n")
            np.savetxt(fh, data, delimiter=",", fmt="%.17g")
        atomic_write(path, write)

    def to_npz(self, path: str | os.PathLike) -> None:
        """Write a NumPy archive with `time`, each signal and the event log, atomically."""
        arrays = {"time": self.time, **{f"signal:{k}": v for k, v in self.signals.items()}}
        arrays["event_time"] = np.array([e.time for e in self.events], dtype=float)
        arrays["event_block"] = np.array([e.block for e in self.events], dtype=str)
        arrays["event_kind"] = np.array([e.kind for e in self.events], dtype=str)
        atomic_write(path, lambda fh: np.savez_compressed(fh, **arrays), binary=True)

    def to_pandas(self, mark: str | None = "event") -> Any:
        """A pandas DataFrame indexed by time; the `mark` column says which rows are an
        event's "left" and "right" limits (needs the `pandas` extra; see blocksim.engine.frames)."""
        from blocksim.engine import frames

        return frames.to_pandas(self, mark)

    def to_xarray(self, mark: str | None = "event") -> Any:
        """An xarray Dataset on `time`, the event log on `event_index` (needs the `xarray`
        extra; see blocksim.engine.frames)."""
        from blocksim.engine import frames

        return frames.to_xarray(self, mark)

    def plot(self, signals: Sequence[str] | None = None, events: bool | str = True,
             figsize: tuple[float, float] | None = None) -> Any:
        """A matplotlib Figure, one axes per signal, events marked (needs the `plot`
        extra; see blocksim.engine.frames)."""
        from blocksim.engine import frames

        return frames.plot(self, signals, events, figsize)

    def events_to_csv(self, path: str | os.PathLike) -> None:
        """Write the event log as `time,block,kind` rows, atomically."""
        def write(fh):
            out = csv.writer(fh, lineterminator="\n")
            out.writerow(["time", "block", "kind"])
            for e in self.events:
                out.writerow([repr(float(e.time)), e.block, e.kind])
        atomic_write(path, write)


class Recorder:
    """Collects rows while a run goes on; `results()` freezes them at any moment.

    Single rows are kept as Python lists and turned into one array only when a block of
    rows arrives (the output grid of a step, the compiled loop's buffer) or at the end:
    building an array per row costs more than the row itself. A run ended by Ctrl-C may
    stop between two of the appends below: `results()` keeps only complete rows.
    """

    def __init__(self, names: Sequence[str], indices: Sequence[Sequence[int]]):
        self.names = list(names)
        self.widths = [len(ix) for ix in indices]
        self.width = sum(self.widths)
        self._times: list[float] = []
        self._singles: list[list[float]] = []
        self._t_parts: list[np.ndarray] = []
        self._y_parts: list[np.ndarray] = []
        self._count = 0
        self.events: list[Event] = []

    def __len__(self) -> int:
        """The number of rows so far."""
        return self._count

    @property
    def last_time(self) -> float | None:
        """The time of the last row (None before the first)."""
        if self._times:
            return self._times[-1]
        return float(self._t_parts[-1][-1]) if self._t_parts else None

    def add_logged(self, t: float, values: Sequence[float]) -> None:
        """A row given as the logged signals themselves (what `observe` returns)."""
        self._times.append(t)
        self._singles.append(list(values))
        self._count += 1

    def add_rows(self, times: np.ndarray, rows: np.ndarray) -> None:
        """Many rows of logged signals at once (copied: the caller may reuse its buffers)."""
        self._flush()
        self._t_parts.append(np.array(times, dtype=float))
        self._y_parts.append(np.array(rows, dtype=float).reshape(len(times), self.width))
        self._count += len(times)

    def _flush(self) -> None:
        if self._singles:
            n = min(len(self._times), len(self._singles))  # complete rows only (Ctrl-C)
            self._t_parts.append(np.array(self._times[:n], dtype=float))
            self._y_parts.append(np.array(self._singles[:n], dtype=float).reshape(
                n, self.width))
            self._times, self._singles = [], []

    def drop_last(self) -> None:
        self._count -= 1
        if self._singles:
            self._times.pop()
            self._singles.pop()
        else:
            self._t_parts[-1] = self._t_parts[-1][:-1]
            self._y_parts[-1] = self._y_parts[-1][:-1]

    def results(self, status: str = "finished", message: str = "",
                stats: dict[str, Any] | None = None, warnings: Sequence[str] = ()) -> Results:
        self._flush()
        if len(self._t_parts) != len(self._y_parts):  # complete blocks only (Ctrl-C)
            parts = min(len(self._t_parts), len(self._y_parts))
            del self._t_parts[parts:], self._y_parts[parts:]
        if len(self._t_parts) > 1:  # one block from then on: later calls cost nothing
            self._t_parts = [np.concatenate(self._t_parts)]
            self._y_parts = [np.concatenate(self._y_parts)]
        time = self._t_parts[0].copy() if self._t_parts else np.zeros(0)
        data = self._y_parts[0] if self._y_parts else np.zeros((0, self.width))
        signals, col = {}, 0
        for name, width in zip(self.names, self.widths):
            signals[name] = data[:, col].copy() if width == 1 else data[:, col:col + width].copy()
            col += width
        return Results(time, signals, tuple(self.events), status, message, dict(stats or {}),
                       tuple(warnings))
