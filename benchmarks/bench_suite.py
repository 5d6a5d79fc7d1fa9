"""What every benchmark case shares: the suite of sections and target checks it reports
into, and how times are taken and shown."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

log = logging.getLogger("benchmarks.performance")


@dataclass
class Target:
    what: str
    measured: str
    met: bool | None  # None: could not be measured in this run


@dataclass
class Suite:
    """The run's options, its Markdown sections and its target checks."""

    quick: bool
    backends: list[str]
    peer_max: int
    sections: list[str] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def repeats(self) -> int:
        return 1 if self.quick else 5

    def section(self, title: str, text: str, header: list[str], rows: list[list[str]]) -> None:
        lines = [f"## {title}", "", text, "", "| " + " | ".join(header) + " |",
                 "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        self.sections.append("\n".join(lines) + "\n")
        log.info("%s\n%s", title, "\n".join(lines[4:]))

    def target(self, what: str, measured: str, met: bool | None) -> None:
        self.targets.append(Target(what, measured, met))
        log.info("target %s: %s (%s)", what, measured,
                 "met" if met else "not measured" if met is None else "NOT met")


def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """(best wall time, last result) of `repeats` calls."""
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def fmt_time(seconds: float | None) -> str:
    if seconds is None or not np.isfinite(seconds):
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def ratio(slow: float | None, fast: float | None) -> str:
    """How many times longer `slow` takes than `fast` (below 1: faster than blocksim)."""
    if not slow or not fast:
        return "—"
    value = slow / fast
    return f"{value:,.0f}×" if value >= 10 else f"{value:.2g}×"
