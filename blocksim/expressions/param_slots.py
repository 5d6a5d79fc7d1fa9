"""Parameter slots: numbers from parameters enter generated code as named slots, not literals.

While the code generator asks a block for its code, `blockspec.lit` (and the formulas of
`expressions.to_code`) hand each number to the active `Recorder`, which names it `_p<k>`
and keeps its value. The generated module binds those names as globals (the numba backend
reads them from its scratch array), so a compiled model runs with new parameter values
without generating or compiling code again (`compiler.runtime`). Outside a recording the
numbers stay exact literals.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Iterator

PREFIX = "_p"
SLOT = re.compile(r"\b_p(\d+)\b")  # a slot's name in generated code

_STATE = threading.local()  # .recorder: the active Recorder of this thread, if any


def slot_name(index: int) -> str:
    return f"{PREFIX}{index}"


@dataclass
class SlotCall:
    """One recorded call of a block's code method: its slots `first`..`first + count - 1`,
    the array constants it registered, and what it returned (with slot names: the code's
    shape, which new parameter values must reproduce exactly)."""

    method: str
    first: int
    count: int
    consts: tuple[str, ...]
    result: Any


class Recorder:
    """Names the numbers of one block method's code, starting at slot `first`: `values`
    are the numbers in the order named, `consts` the names of the array constants
    registered meanwhile. Replaying (`replay_consts` given), `const` hands out the names
    recorded before, in order, and keeps the new values in `const_values`."""

    def __init__(self, first: int, replay_consts: tuple[str, ...] | None = None):
        self.first = first
        self.values: list[float] = []
        self.consts: list[str] = []
        self.replay_consts = replay_consts
        self.const_values: dict[str, Any] = {}

    def name(self, value: float) -> str:
        self.values.append(value)
        return slot_name(self.first + len(self.values) - 1)

    def const(self, value: Any) -> str:
        """`Emit.const` while replaying; a constant more than before gets a name no code
        had, so the code differs and the change is structural."""
        assert self.replay_consts is not None
        k = len(self.const_values)
        name = self.replay_consts[k] if k < len(self.replay_consts) else f"C_new{k}"
        self.const_values[name] = value
        return name

    def __enter__(self) -> "Recorder":
        self._outer = getattr(_STATE, "recorder", None)
        _STATE.recorder = self
        return self

    def __exit__(self, *exc: object) -> None:
        _STATE.recorder = self._outer


def active() -> "Recorder | None":
    """The recorder of the code being generated, if any."""
    return getattr(_STATE, "recorder", None)


def slot(value: float) -> str | None:
    """The slot name for a parameter number in code being recorded, else None."""
    recorder = getattr(_STATE, "recorder", None)
    return None if recorder is None else recorder.name(value)


def names_in(code: str) -> Iterator[int]:
    """The slot numbers a piece of generated code names."""
    return (int(k) for k in SLOT.findall(code))
