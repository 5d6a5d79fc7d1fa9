"""Metrics: cheap reductions of one run's results, computed where the run ran.

A spec string is also the metric's column name:

- `final:SIGNAL`, `min:SIGNAL`, `max:SIGNAL`: the last value (the right limit if the run
  ends on an event), the smallest and largest logged value. SIGNAL is a results column
  (`x`, `id[0]` for an element of a vector signal).
- `at:SIGNAL:TIME`: the value at TIME, linear between output rows; at an event instant, its
  right limit (the value just after the event). NaN outside the run's time span.
- `count:BLOCK.KIND`: how many events of that block and kind (as in the events CSV:
  `ball.reset`, `ball.lower limit`). KIND is one its block type declares
  (`blocksim describe TYPE`, docs/semantics.md), or `state` for a block with zero
  crossings; another is refused before the sweep starts.
- `time:BLOCK.KIND:K`: the time of the K-th (from 1) such event; NaN if there were fewer.

A Python user may also give a callable on `Results` (named by its `__name__`, or by the key
of a dict of metrics). A metric of a run that failed is NaN; its status says why.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from blocksim.blocktypes.blockspec import STATE_EVENT
from blocksim.engine import Results
from blocksim.errors import BlocksimError, shown

if TYPE_CHECKING:
    from blocksim.compiler import CompiledModel

_SIGNAL_KINDS = ("final", "min", "max", "at")
_EVENT_KINDS = ("count", "time")


@dataclass(frozen=True)
class Metric:
    """A named reduction: a parsed spec, or a user function of the results."""

    name: str
    kind: str  # final | min | max | at | count | time | function
    target: str = ""  # the signal column, or the block id
    event: str = ""  # the event kind (count, time)
    number: float = 0.0  # TIME of `at`, K of `time`
    function: Callable[[Results], Any] | None = None

    def __call__(self, results: Results) -> float:
        if self.function is not None:
            return float(self.function(results))
        if self.kind in _EVENT_KINDS:
            times = [e.time for e in results.events
                     if e.block == self.target and e.kind == self.event]
            if self.kind == "count":
                return float(len(times))
            k = int(self.number)
            return float(times[k - 1]) if len(times) >= k else math.nan
        values = _column(results, self.target)
        if len(values) == 0:
            return math.nan
        if self.kind == "final":
            return float(values[-1])
        if self.kind == "min":
            return float(np.min(values))
        if self.kind == "max":
            return float(np.max(values))
        return value_at(results.time, values, self.number)


def value_at(time: np.ndarray, values: np.ndarray, t: float) -> float:
    """Linear interpolation at t; at a repeated (event) instant the last row: the right
    limit. NaN outside [time[0], time[-1]]."""
    if len(time) == 0 or not time[0] <= t <= time[-1]:
        return math.nan
    k = int(np.searchsorted(time, t, side="right")) - 1  # the last row at or before t
    if time[k] == t or k + 1 >= len(time):
        return float(values[k])
    t0, t1 = time[k], time[k + 1]
    w = (t - t0) / (t1 - t0)
    return float(values[k] + w * (values[k + 1] - values[k]))


def _column(results: Results, name: str) -> np.ndarray:
    if name in results.signals and results.signals[name].ndim == 1:
        return results.signals[name]
    for column, values in results.columns():
        if column == name:
            return values
    raise LookupError(f"this run logs no signal '{shown(name)}' (a width that changed?)")


def parse_metric(spec: str | Callable[[Results], Any], name: str | None = None) -> Metric:
    """A Metric from a spec string (its own name) or a callable (named `name` or by its
    `__name__`); BlocksimError naming the spec if it is malformed."""
    if callable(spec):
        label = name or getattr(spec, "__name__", "")
        if not label or label == "<lambda>":
            raise BlocksimError("a metric function needs a name: pass metrics as a dict "
                                "{name: function}")
        return Metric(label, "function", function=spec)
    if not isinstance(spec, str):
        raise BlocksimError(f"a metric is a spec string or a function, got {shown(spec)!r}")
    kind, sep, rest = spec.partition(":")
    label = name or spec
    if kind in ("final", "min", "max") and sep and rest:
        return Metric(label, kind, target=rest)
    if kind == "at":
        signal, sep, when = rest.rpartition(":")
        t = _number(when)
        if sep and signal and t is not None and math.isfinite(t):
            return Metric(label, "at", target=signal, number=t)
    if kind == "count":
        block, sep, event = rest.rpartition(".")
        if sep and block and event:
            return Metric(label, "count", target=block, event=event)
    if kind == "time":
        what, sep, k = rest.rpartition(":")
        block, dot, event = what.rpartition(".")
        number = _number(k)
        if sep and dot and block and event and number is not None and number >= 1 \
                and number == int(number):
            return Metric(label, "time", target=block, event=event, number=int(number))
    raise BlocksimError(
        f"metric '{shown(spec)}': expected final:SIGNAL, min:SIGNAL, max:SIGNAL, "
        f"at:SIGNAL:TIME, count:BLOCK.KIND or time:BLOCK.KIND:K (K = 1, 2, ...)")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_metrics(metrics: Iterable[Any] | Mapping[str, Any] | None) -> tuple[Metric, ...]:
    """A list of specs/functions, or a dict name -> spec/function; names must be unique."""
    if metrics is None:
        return ()
    if isinstance(metrics, (str, Metric)) or callable(metrics):
        metrics = [metrics]
    items = metrics.items() if isinstance(metrics, Mapping) else ((None, m) for m in metrics)
    parsed: list[Metric] = []
    for name, spec in items:
        metric = spec if isinstance(spec, Metric) else parse_metric(spec, name)
        if any(m.name == metric.name for m in parsed):
            raise BlocksimError(f"metric '{shown(metric.name)}' is asked for twice")
        parsed.append(metric)
    return tuple(parsed)


def check_metrics(metrics: Iterable[Metric], model: CompiledModel, source: str) -> None:
    """Refuse, before any run, a metric of a signal the diagram does not log, of a block it
    does not have, or of an event kind that block cannot log (naming the metric and what
    there is: a `count:ball.Reset` would otherwise be a column of zeros)."""
    columns = ["time"] + [c for s in model.logged for c in s.columns]
    blocks = {bid: index for index, bid in enumerate(model.block_ids)}
    for metric in metrics:
        if metric.kind in _SIGNAL_KINDS and metric.target not in columns:
            known = ", ".join(c for c in columns if c != "time") or "none"
            raise BlocksimError(f"{source}: metric '{shown(metric.name)}': no logged signal "
                                f"'{shown(metric.target)}' (logged: {known})")
        if metric.kind not in _EVENT_KINDS:
            continue
        if metric.target not in blocks:
            raise BlocksimError(f"{source}: metric '{shown(metric.name)}': no block "
                                f"'{shown(metric.target)}'{_close(metric.target, list(blocks))}")
        index = blocks[metric.target]
        kinds = event_kinds(model, index)
        if metric.event not in kinds:
            what = f"block '{shown(metric.target)}' ({model.block_types[index]})"
            raise BlocksimError(f"{source}: metric '{shown(metric.name)}': {what} logs no "
                                f"'{shown(metric.event)}' events{_close(metric.event, kinds)}"
                                f"; it logs {', '.join(map(repr, kinds)) or 'no events'}")


def event_kinds(model: CompiledModel, index: int) -> tuple[str, ...]:
    """The kinds of entry block `index` of `model` can log in the events: `state` if it
    owns a zero crossing, then those its type declares (`BlockType.event_kinds`)."""
    from blocksim.blocktypes import registry

    block_type = registry.get(model.block_types[index], internal=True)
    declared = tuple(k.name for k in block_type.event_kinds) if block_type else ()
    located = (STATE_EVENT.name,) if index in model.zc_owner else ()
    return located + tuple(k for k in declared if k not in located)


def _close(kind: str, kinds: Sequence[str]) -> str:
    same = [k for k in kinds if k.lower() == kind.lower()]
    close = same or difflib.get_close_matches(kind, kinds, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
