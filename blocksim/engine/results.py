"""Simulation results: time, logged signals and the event log, exportable to CSV and NPZ.

An event instant appears twice in `time`: its left limit, then its right limit.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from blocksim.fileio import atomic_write


@dataclass(frozen=True)
class Event:
    """One entry of the event log."""

    time: float
    block: str
    kind: str


@dataclass(frozen=True)
class Results:
    """What a run produced, complete or up to the failure."""

    time: np.ndarray
    signals: dict[str, np.ndarray]
    events: tuple[Event, ...] = ()
    status: str = "finished"  # finished | stopped (a Stop block) | failed
    message: str = ""
    stats: dict[str, Any] = field(default_factory=dict)

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
    rows arrives (the compiled loop's output buffer) or at the end: building an array per
    row costs more than the row itself.
    """

    def __init__(self, names: Sequence[str], indices: Sequence[Sequence[int]]):
        self.names = list(names)
        self.indices = [np.asarray(ix, dtype=int) for ix in indices]
        self.flat_index = np.concatenate(self.indices) if self.indices else np.zeros(0, int)
        self._flat = self.flat_index.tolist()
        self.times: list[float] = []
        self._singles: list[list[float]] = []
        self._parts: list[np.ndarray] = []
        self.events: list[Event] = []

    def add(self, t: float, signals: Sequence[float]) -> None:
        self.times.append(t)
        self._singles.append([float(signals[i]) for i in self._flat])

    def add_logged(self, t: float, values: Sequence[float]) -> None:
        """A row given as the logged signals themselves (what `observe` returns)."""
        self.times.append(t)
        self._singles.append(list(values))

    def add_rows(self, times: np.ndarray, rows: np.ndarray) -> None:
        """Many rows of logged signals at once (the compiled loop's output buffer)."""
        self._flush()
        self.times.extend(times.tolist())
        self._parts.append(np.array(rows, dtype=float))  # a copy: the buffer is reused

    def _flush(self) -> None:
        if self._singles:
            part = np.array(self._singles, dtype=float).reshape(len(self._singles),
                                                                len(self._flat))
            self._parts.append(part)
            self._singles = []

    def drop_last(self) -> None:
        self.times.pop()
        if self._singles:
            self._singles.pop()
        else:
            self._parts[-1] = self._parts[-1][:-1]

    def results(self, status: str = "finished", message: str = "",
                stats: dict[str, Any] | None = None) -> Results:
        self._flush()
        data = (np.concatenate(self._parts) if self._parts
                else np.zeros((0, len(self._flat))))
        signals, col = {}, 0
        for name, ix in zip(self.names, self.indices):
            block = data[:, col:col + len(ix)]
            signals[name] = block[:, 0].copy() if len(ix) == 1 else block.copy()
            col += len(ix)
        return Results(np.array(self.times, dtype=float), signals, tuple(self.events), status,
                       message, dict(stats or {}))
