"""A sweep's result: one row per run (parameters, status, metrics, message), by run index.

Columns are the swept parameter names, `status`, the metrics (named as asked), then
`message`; `to_pandas()` gives the same as a DataFrame indexed by `run`. With
keep="signals", `results[i]` holds run i's Results (None for a run that did not start).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from blocksim.engine import Results

STATUS, MESSAGE = "status", "message"
# A run's status (blocksim.sweeps.worker says when each is given).
STATUSES = ("finished", "stopped", "failed", "invalid", "error")


@dataclass
class SweepTable:
    """The rows of a sweep so far (a resumed sweep includes the rows it found)."""

    names: tuple[str, ...]  # swept parameters
    metric_names: tuple[str, ...]
    rows: dict[int, tuple] = field(default_factory=dict)  # index -> one value per column
    results: dict[int, Results | None] = field(default_factory=dict, repr=False)
    total: int = 0  # runs planned
    resumed: int = 0  # rows found in the output file by `resume`
    interrupted: bool = False

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.names, STATUS, *self.metric_names, MESSAGE)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Each row as a dict of column -> value, by run index."""
        columns = self.columns
        for index in sorted(self.rows):
            yield dict(zip(columns, self.rows[index]))

    def column(self, name: str) -> list[Any]:
        """One column's values by run index."""
        k = self.columns.index(name)
        return [self.rows[i][k] for i in sorted(self.rows)]

    def counts(self) -> dict[str, int]:
        """How many runs ended with each status."""
        k = len(self.names)
        counts: dict[str, int] = {}
        for row in self.rows.values():
            counts[row[k]] = counts.get(row[k], 0) + 1
        return counts

    def to_pandas(self) -> Any:
        """A pandas DataFrame indexed by `run` (needs the `pandas` extra, and says so)."""
        from blocksim.engine.frames import need_library

        pd = need_library("pandas", "pandas", "table.to_pandas()")

        order = sorted(self.rows)
        frame = pd.DataFrame([self.rows[i] for i in order], columns=list(self.columns),
                             index=pd.Index(order, name="run"))
        return frame

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(self.counts().items()))
        return (f"<SweepTable {len(self)} of {self.total} runs ({counts or 'none'}); "
                f"columns: {', '.join(self.columns)}>")
