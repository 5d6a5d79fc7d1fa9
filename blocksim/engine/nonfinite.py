"""Logged signals that become NaN or infinite, and the block they come from.

An overflow (1e300 * 1e10) or an undefined operation (inf - inf) in a block's output does
not raise in Python floats, and numpy's warnings are silenced during a run: without this
check such values would reach the results without a word. Each logged signal is reported
once, at the first time it holds one, naming the block that logs it and the first block,
in the order outputs are computed, whose output is not finite there.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from blocksim.compiler.compiled import CompiledModel
from blocksim.engine import derived, failports


def describe(value: float) -> str:
    return "NaN" if value != value else "+inf" if value > 0 else "-inf"


def first_bad(rows: np.ndarray) -> list[tuple[int, int]]:
    """(column, first row) of each column of `rows` holding a NaN or an infinity."""
    bad = ~np.isfinite(rows)
    return [(int(j), int(np.argmax(bad[:, j]))) for j in np.flatnonzero(bad.any(axis=0))]


def origin(model: CompiledModel, outputs: Callable, t: float, x: np.ndarray, m: np.ndarray,
           z: np.ndarray) -> str | None:
    """The first block, in the order `outputs` computes them, whose output at (t, x) is
    NaN or infinite (or whose formula fails there); None if every output is finite."""
    return origin_port(model, outputs, t, x, m, z)[0]


def origin_port(model: CompiledModel, outputs: Callable, t: float, x: np.ndarray,
                m: np.ndarray, z: np.ndarray) -> tuple[str | None, str | None]:
    """`origin` and its first non-finite output port (`failports`); (None, None) if every
    output is finite."""
    try:
        y = np.array(outputs(t, x, m, z), dtype=float)
    except (ArithmeticError, ValueError) as exc:
        return failports.exception_origin(model, exc)
    bad: dict[str, str] = {}  # block -> its first non-finite port
    for i in np.flatnonzero(~np.isfinite(y)):
        block, port = failports.signal_port(model, int(i))
        bad.setdefault(block, port)
    block = next((b for b in derived.output_order(model) if b in bad), min(bad, default=None))
    return block, bad.get(block) if block is not None else None


class LoggedCheck:
    """The logged signals already reported, and the messages for new ones."""

    def __init__(self, model: CompiledModel):
        self.model = model
        self.reported: set[str] = set()

    def new(self, times: np.ndarray, rows: np.ndarray) -> list[tuple[float, str, float]]:
        """(first time, logging block, value) of each signal in `rows` that is not finite
        there and was not reported before (now it is), earliest first."""
        columns = [sig.name for sig in self.model.logged for _ in sig.indices]
        found = []
        for j, i in first_bad(rows):
            name = columns[j]
            if name not in self.reported:
                self.reported.add(name)
                found.append((float(times[i]), name, float(rows[i, j])))
        return sorted(found)

    @staticmethod
    def message(t: float, name: str, value: float, source: str | None) -> str:
        text = f"block '{name}' logs {describe(value)} from t = {t!r}"
        if source and source != name:
            text += f"; the first block with a non-finite output is '{source}'"
        return text
