"""Code of identical blocks written once: a block's code as a template of its slot names.

A chain of 10,000 equal lags asked every block for the same lines with other names; the
calls, through the parameter-slot recorder, were a third of compiling it. Blocks flatten
found to have the same type, parameter values and ports (`FlatBlock.twin`) and that sit
alike (same port widths, rate, gate, ...) get the lines of the first one with their own
names put in (`str.format`). Whether that is exact is not assumed but checked: the second
block of each kind is still asked, and only when its own code equals the template's (and
its parameter slots' values the first one's) is the template used for the rest. A block
whose code names anything else of its own (its index, an array constant, a history ring)
fails that check and is asked each time, as before.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from blocksim.blocktypes.blockspec import Emit
from blocksim.expressions.param_slots import PREFIX

# The names an Emit hands a block (signals, slots of the engine's arrays) and the
# parameter slots its numbers become.
_NAME = re.compile(r"\b(?:s\d+|" + PREFIX + r"\d+)\b|\b(?:x_|dx_|m_|g_|z_|zn_)\[\d+\]")

_UNSET, _REFUSED = object(), object()


def emit_names(e: Emit) -> list[str]:
    """Every name an Emit gives its block, in a fixed order (port by port)."""
    names: list[str] = []
    for signals in e.u.values():
        names += signals
    for signals in e.y.values():
        names += signals
    return names + e.x + e.dx + e.m + e.g + e.z + e.zn


def emit_shape(e: Emit) -> tuple:
    """What besides the names must match for two blocks to share code."""
    return (tuple(len(v) for v in e.u.values()), tuple(len(v) for v in e.y.values()),
            tuple(e.u), tuple(e.y), len(e.x), len(e.m), len(e.g), e.rate, e.gate,
            tuple(e.watch), e.hist)


class _Template:
    """One block method's code with each name replaced by its position ("{3}")."""

    def __init__(self, result: Any, names: list[str], values: list[float]):
        self.values = values
        self.verified = False  # set once a second block reproduced its own code from it
        position = {name: str(i) for i, name in enumerate(names)}
        self.shape = _shape(result, position)

    def instantiate(self, names: list[str]) -> Any:
        """The code with these names (the block's, then its parameter slots')."""
        return _fill(self.shape, names)

    def fill(self, names: list[str], first: int) -> Any:
        """The code of a block with these names and its parameter slots from `first` on."""
        return _fill(self.shape, names + slot_names(first, len(self.values)))


def _shape(result: Any, position: dict[str, str]) -> Any:
    if isinstance(result, str):
        def placeholder(match: re.Match) -> str:
            at = position.get(match.group(0))
            return match.group(0) if at is None else "{" + at + "}"
        return _Text(_NAME.sub(placeholder, result.replace("{", "{{").replace("}", "}}")))
    if isinstance(result, list):
        return [_shape(item, position) for item in result]
    if isinstance(result, tuple):
        return tuple(_shape(item, position) for item in result)
    if isinstance(result, dict) and all(isinstance(k, str) for k in result):
        return {k: _shape(v, position) for k, v in result.items()}
    raise _NotText


class _Text(str):
    """A template string (as opposed to a plain string in the block's result)."""


class _NotText(Exception):
    """A block's code holds something other than text, lists, tuples and dicts."""


def _fill(shape: Any, names: list[str]) -> Any:
    kind = type(shape)
    if kind is _Text:
        return str.format(shape, *names)
    if kind is list:
        return [str.format(item, *names) if type(item) is _Text else _fill(item, names)
                for item in shape]
    if kind is tuple:
        return tuple(_fill(item, names) for item in shape)
    return {k: _fill(v, names) for k, v in shape.items()}


def slot_names(first: int, n: int) -> list[str]:
    """The names of n parameter slots from slot `first` on."""
    return [PREFIX + str(k) for k in range(first, first + n)]


class CodeReuse:
    """Templates of the code methods of identical blocks, kept while one model compiles."""

    def __init__(self) -> None:
        self._templates: dict[tuple, Any] = {}

    def ready(self, key: tuple) -> _Template | None:
        """The template of this kind of block once checked (else ask the block)."""
        entry = self._templates.get(key)
        return entry if type(entry) is _Template and entry.verified else None

    def code(self, key: tuple, names: list[str], first: int,
             ask: Callable[[], tuple[Any, list[float], list[str]]]
             ) -> tuple[Any, list[float], list[str]]:
        """A block's (code, parameter values, array constants), by `ask`ing it (its
        parameter slots from `first` on); the first block of a kind gives the template,
        the second checks it (see the module docstring)."""
        result, values, consts = ask()
        entry = self._templates.get(key, _UNSET)
        if entry is _REFUSED or (type(entry) is _Template and entry.verified):
            return result, values, consts
        if consts or len(set(names)) < len(names):
            self._templates[key] = _REFUSED
            return result, values, consts
        own = names + slot_names(first, len(values))
        if entry is _UNSET:  # the first of its kind: its code becomes the template
            try:
                self._templates[key] = _Template(result, own, list(values))
            except _NotText:
                self._templates[key] = _REFUSED
        elif list(values) == entry.values and entry.instantiate(own) == result:
            entry.verified = True  # the second reproduces its own code: use it from now on
        else:
            self._templates[key] = _REFUSED
        return result, values, consts
