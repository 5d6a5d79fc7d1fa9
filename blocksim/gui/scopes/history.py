"""The last few runs' logged signals, kept for the Data Inspector to compare (plain Python).

Each run keeps its results (arrays are shared, not copied), its number, the diagram it
ran and the parameters it ran with, and the signal labels the scopes showed; a run's
title names the diagram and the parameters that differ from the run before it
("Run 3: bouncing_ball · mu = 0.7").
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from blocksim.engine import Results

DEFAULT_RUNS = 5


@dataclass(frozen=True)
class Column:
    """One logged element: its results column name, a label, and its values."""

    name: str
    label: str
    values: np.ndarray = field(repr=False, compare=False)


@dataclass(frozen=True)
class RunRecord:
    """One finished (or stopped, or failed) run as the Data Inspector lists it."""

    number: int
    title: str
    status: str
    time: np.ndarray = field(repr=False, compare=False)
    columns: tuple[Column, ...] = field(repr=False, compare=False)
    params: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    diagram: str = ""  # the name of the diagram that ran (its file's or example's stem)

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(name)


def distinguishing(records: list["RunRecord"]) -> dict[int, str]:
    """{run number: "mu = 0.9"}: the parameters whose values differ among these runs, so
    curves of several runs say what sets them apart ("" when nothing does)."""
    keys: list[str] = []
    for record in records:
        keys += [k for k in record.params if k not in keys]
    missing = object()
    differ = [k for k in keys
              if len({repr(r.params.get(k, missing)) for r in records}) > 1]
    return {r.number: ", ".join(f"{k} = {_short(r.params[k])}" for k in differ
                                if k in r.params) for r in records}


def _short(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def changed_parameters(before: Mapping[str, Any] | None, now: Mapping[str, Any]) -> str:
    """"mu = 0.7, g = 9.8" for the parameters that differ from the run before."""
    if before is None:
        return ""
    changed = [k for k in now if before.get(k, object()) != now[k]]
    return ", ".join(f"{k} = {_short(now[k])}" for k in changed)


class RunHistory:
    """The newest `limit` runs, oldest first."""

    def __init__(self, limit: int = DEFAULT_RUNS):
        self.limit = limit
        self.runs: deque[RunRecord] = deque(maxlen=limit)
        self._count = 0
        self._last_params: dict[str, Any] | None = None

    def add(self, results: Results, params: Mapping[str, Any],
            labels: Mapping[str, str] | None = None, diagram: str = "") -> RunRecord:
        """Record a run's logged signals; `labels` maps column names to signal labels,
        `diagram` names the diagram that ran."""
        self._count += 1
        changed = changed_parameters(self._last_params, params)
        self._last_params = dict(params)
        title = (f"Run {self._count}" + (f": {diagram}" if diagram else "")
                 + (f" · {changed}" if changed else ""))
        if results.status != "finished":
            title += f" ({results.status})"
        labels = labels or {}
        columns = tuple(Column(name, labels.get(name, name), values)
                        for name, values in list(results.columns())[1:])
        record = RunRecord(self._count, title, results.status, results.time, columns,
                           dict(params), diagram)
        self.runs.append(record)
        return record

    def run(self, number: int) -> RunRecord:
        for record in self.runs:
            if record.number == number:
                return record
        raise KeyError(number)

    def clear(self) -> None:
        self.runs.clear()
        self._last_params = None

    def forget_parameters(self) -> None:
        """The next run is of another diagram: its title names no changed parameters."""
        self._last_params = None
