"""Which of a block's parameters each of its methods reads: what `with_params` may skip.

A block's check, shape (ports, widths, sample time), code methods and initial values are
functions of its parameter values and of the model's structure alone. Called once with a
`ReadTracker` in place of a model's values, each records the parameters it read; with new
values that differ only in parameters it did not read, it would read the same values and
so return the same thing, and `with_params` need not call it again (a sweep's runs then
ask a block only what the swept names can change). A method that reads the values some
other way (the scope of names, the folder, the whole mapping) may read anything: it is
always called again.
"""
from __future__ import annotations

import functools
import logging
import re
from typing import Any, Callable, Mapping

from blocksim.blocktypes.blockspec import BlockType, ParamValues

log = logging.getLogger(__name__)

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")

# What `reads` returns for a method that may read any parameter.
ANY = None
_UNKNOWN = object()


class ReadTracker(ParamValues):
    """A block's parameter values that note which of them are read."""

    def __init__(self, values: ParamValues):  # (no super().__init__: every read comes here)
        self.__dict__.update(_tracked=values, _read=set(), _everything=False)

    def __getattr__(self, name: str) -> Any:
        tracked = self.__dict__["_tracked"]
        if name in ("scope", "folder", "_values"):  # a formula's names, a file: anything
            self.__dict__["_everything"] = True
            return getattr(tracked, name)
        self.__dict__["_read"].add(name)
        return getattr(tracked, name)

    def __getitem__(self, name: str) -> Any:
        self.__dict__["_read"].add(name)
        return self.__dict__["_tracked"][name]

    def get(self, name: str, default: Any = None) -> Any:
        self.__dict__["_read"].add(name)
        return self.__dict__["_tracked"].get(name, default)

    def as_dict(self) -> dict[str, Any]:
        self.__dict__["_everything"] = True
        return self.__dict__["_tracked"].as_dict()


def reads(method: Callable[[ParamValues], Any], values: ParamValues) -> frozenset[str] | None:
    """The parameters `method(values)` reads, or ANY (it reads the values some other way,
    or fails: then it is always called again)."""
    tracker = ReadTracker(values)
    try:
        method(tracker)
    except Exception:  # it passed with these values at the compile: be safe, call it always
        log.debug("learning the reads of %r failed", method, exc_info=True)
        return ANY
    return ANY if tracker.__dict__["_everything"] else frozenset(tracker.__dict__["_read"])


class BlockReads:
    """The reads of one block's methods with one model's values, learned on first use."""

    def __init__(self, values: ParamValues):
        self.values = values
        self.known: dict[Any, frozenset[str] | None] = {}

    def stale(self, key: Any, changed: frozenset[str], method: Callable[..., Any],
              *args: Any) -> bool:
        """Whether `method(*args, values)` may return something else when the parameters
        `changed` (`key` names it among the block's methods)."""
        found = self.known.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            found = self.known[key] = reads(functools.partial(method, *args), self.values)
        return found is ANY or not found.isdisjoint(changed)


def mentions(block_type: type[BlockType], raw: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Per parameter of a block, the names its file value (or default) mentions: new
    values of other names cannot change it."""
    return {prm.name: frozenset(identifiers([raw.get(prm.name, prm.default)]))
            for prm in block_type.params}


def identifiers(values: Any) -> set[str]:
    """The names in values as in a file: text, and lists and dicts of them (a superset of
    the names an expression reads)."""
    found: set[str] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.update(_IDENTIFIER.findall(value))
        elif isinstance(value, (list, tuple)):
            stack.extend(v for v in value if isinstance(v, (str, list, tuple)))
        elif isinstance(value, dict):
            stack.extend(value.values())
    return found
