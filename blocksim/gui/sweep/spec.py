"""What the Sweep dialog asks for, as plain data, checked with the CLI's own rules.

The dialog's fields become the same strings the command line takes (`START:STOP:N`,
`normal(MU,SIGMA)`, metric specs), parsed by blocksim.sweeps, so a value refused on the
command line is refused here with the same message; no Qt here, so it is tested alone.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from blocksim.compiler import compile_diagram
from blocksim.errors import BlocksimError, shown
from blocksim.diagram.model import Diagram
from blocksim.sweeps.metrics import parse_metrics
from blocksim.sweeps.plan import Plan, make_plan

GRID, NORMAL, UNIFORM = "grid", "normal", "uniform"
KINDS = (GRID, NORMAL, UNIFORM)
MAX_BATCH = 8  # runs per pool task at most: a Cancel waits for the batches under way
FIELD_NAMES = {GRID: ("start", "stop", "N"), NORMAL: ("mu", "sigma", ""),
               UNIFORM: ("a", "b", "")}


@dataclass(frozen=True)
class SweptParameter:
    """One row of the dialog: a parameter, how it varies, and the fields as typed."""

    name: str
    kind: str  # grid | normal | uniform
    fields: tuple[str, ...]  # (start, stop, N) or (mu, sigma) or (a, b), as text

    def spec(self) -> str:
        """The CLI's text for this row: `START:STOP:N` or `normal(MU,SIGMA)`."""
        labels = FIELD_NAMES.get(self.kind)
        if labels is None:
            raise BlocksimError(f"parameter '{shown(self.name)}': unknown kind "
                                f"'{shown(self.kind)}' (grid, normal or uniform)")
        used = [(label, text.strip()) for label, text in zip(labels, self.fields) if label]
        for label, text in used:
            if not text:
                raise BlocksimError(f"parameter '{shown(self.name)}': {label} is empty")
            if self.kind != GRID or label != "N":
                _number(self.name, label, text)
        if self.kind == GRID:
            return ":".join(text for _, text in used)
        return f"{self.kind}({used[0][1]},{used[1][1]})"


@dataclass(frozen=True)
class SweepRequest:
    """Everything one sweep needs, ready for `blocksim.sweep(**request.arguments())`."""

    rows: tuple[SweptParameter, ...]
    metrics: tuple[str, ...]
    n: int = 1
    seed: int = 0
    workers: int = 1
    backend: str | None = None
    plan: Plan = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.rows:
            raise BlocksimError("add a parameter to sweep")
        if not self.metrics:
            raise BlocksimError("add a metric (final:SIGNAL, count:BLOCK.KIND, ...)")
        if self.workers < 1:
            raise BlocksimError(f"workers must be at least 1, got {self.workers}")
        parse_metrics(self.metrics)  # a malformed or repeated spec: the CLI's message
        object.__setattr__(self, "plan", make_plan(**self._plan_arguments()))

    def _plan_arguments(self) -> dict[str, Any]:
        grid = {r.name: r.spec() for r in self.rows if r.kind == GRID}
        draws = {r.name: r.spec() for r in self.rows if r.kind != GRID}
        if len(grid) + len(draws) != len(self.rows):
            twice = sorted({r.name for r in self.rows
                            if sum(s.name == r.name for s in self.rows) > 1})
            raise BlocksimError(f"parameter '{shown(twice[0])}' is swept twice")
        if not draws:
            return {"grid": grid}
        return {"grid": grid, "draws": draws, "n": self.n, "seed": self.seed}

    def arguments(self) -> dict[str, Any]:
        """Keyword arguments of blocksim.sweep (besides the diagram and progress)."""
        runs_per_worker = -(-len(self.plan) // (8 * self.workers))  # the sweep's own share
        return {**self._plan_arguments(), "metrics": list(self.metrics),
                "workers": self.workers, "backend": self.backend,
                "batch_size": max(1, min(MAX_BATCH, runs_per_worker))}


def _number(name: str, label: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise BlocksimError(f"parameter '{shown(name)}': {label} '{shown(text)}' is not a "
                            f"finite number")
    return value


@dataclass(frozen=True)
class DiagramChoices:
    """What the dialog offers for a diagram: its named parameters, the logged signal
    columns (for metrics and the overlay) and its block ids (for event metrics)."""

    parameters: dict[str, Any]
    signals: tuple[str, ...]
    blocks: tuple[str, ...]
    problem: str = ""  # why the signals are unknown (a diagram that does not compile)

    def metric_suggestions(self) -> list[str]:
        """final:/min:/max: of each logged signal; typed specs are accepted as well."""
        return [f"{kind}:{s}" for s in self.signals for kind in ("final", "min", "max")]


def choices(diagram: Diagram) -> DiagramChoices:
    """The choices for `diagram` as it is now (compiling it once to know what it logs)."""
    parameters = dict(diagram.parameters)
    try:
        model = compile_diagram(diagram)
    except BlocksimError as exc:
        return DiagramChoices(parameters, (), (), str(exc))
    signals = tuple(c for s in model.logged for c in s.columns)
    return DiagramChoices(parameters, signals, tuple(model.block_ids))


def run_label(names: Sequence[str], values: Sequence[float]) -> str:
    """A run's legend label: `mu=0.5, v0=1`."""
    return ", ".join(f"{n}={v:.6g}" for n, v in zip(names, values))
