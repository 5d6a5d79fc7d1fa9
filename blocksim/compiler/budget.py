"""Memory and size budgets of a diagram, checked before anything large is allocated.

Four budgets (limits in `blocksim.compiler.limits`): the parameter values a compile keeps,
the scalar slots of the compiled model (each a line of generated code), the sample hits of
the discrete rates, and the results a run will log. Each error names what to change: the
block and parameter, the block and port, or the simulation setting.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from blocksim.blocktypes.blockspec import Sizes
from blocksim.compiler import limits
from blocksim.compiler.faults import BLOCK_FAULTS
from blocksim.compiler.rates import EXACT_INT, Clock, Rate, as_fraction, next_hit
from blocksim.errors import CompileError
from blocksim.diagram.model import SimulationSettings


class ParameterBudget:
    """The memory of every parameter value a compile keeps; an array shared by several
    scopes or blocks counts once."""

    def __init__(self, source: str | None, limit: int | None = None):
        self.source = source
        self.limit = limit if limit is not None else limits.MAX_PARAMETER_BYTES
        self.used = 0
        self._seen: dict[int, np.ndarray] = {}  # id -> the array (kept, so ids stay unique)

    def charge(self, value: Any, what: str, block: str | None = None) -> None:
        """Count `value` (once); CompileError naming `what` when the total is over."""
        if not isinstance(value, np.ndarray) or id(value) in self._seen:
            return
        self._seen[id(value)] = value
        self.used += value.nbytes
        if self.used > self.limit:
            raise CompileError(
                f"{what} ({value.size} elements) brings the diagram's parameter values to "
                f"{limits.size_text(self.used)}, over the limit of "
                f"{limits.size_text(self.limit)}: use fewer or smaller arrays",
                block=block, file=self.source)


class _Kind(str):
    """A kind of slot count (as opposed to an output's port name)."""


_STATES, _DISCRETE, _ZERO_CROSSINGS = (_Kind("states"), _Kind("discrete states"),
                                       _Kind("zero crossings"))


def _count_name(what: str) -> str:
    """A slot count as messages name it: "states", "output 'y'"."""
    return what if isinstance(what, _Kind) else f"output '{what}'"


def check_slots(blocks: Iterable[Any], sizes: Mapping[str, Sizes], source: str | None) -> None:
    """Widths must be whole numbers and all slots together within MAX_SIGNALS.

    Runs before any slot is allocated or any line generated; names the block (and port, and
    the parameter of that many elements, when there is one) that asks for the most.
    """
    total, largest = 0, (0, None, None)
    for blk in blocks:
        sz = sizes[blk.path]
        # (what a count is: an output's port name, else the kind; named only if needed)
        counts = [*sz.outputs.items(), (_STATES, sz.states), (_DISCRETE, sz.discrete),
                  (_ZERO_CROSSINGS, sz.zero_crossings)]
        for what, n in counts:
            if type(n) is not int and (isinstance(n, bool)
                                       or not isinstance(n, (int, np.integer))) or n < 0:
                raise CompileError(f"the block type {blk.block_type.name} gives "
                                   f"{_count_name(what)} a size of {n!r}, not a whole number "
                                   f">= 0", block=blk.path, file=source)
            total += int(n)
            if n > largest[0]:
                largest = (int(n), blk, what)
    if total <= limits.MAX_SIGNALS:
        return
    n, blk, what = largest
    what = _count_name(what)
    port = what[len("output '"):-1] if what.startswith("output") else None
    raise CompileError(f"{what} needs {n} elements{_param_of_size(blk, n)}; the diagram "
                       f"needs {total} signal and state elements in all, over the limit of "
                       f"{limits.MAX_SIGNALS}: use narrower signals or fewer blocks",
                       block=blk.path, port=port, file=source)


def check_history(flat: Any, sizes: Mapping[str, Sizes]) -> None:
    """The history rings within `limits.MAX_HISTORY_VALUES`, checked before they are allocated;
    names the block with the largest ring."""
    from blocksim.blocktypes import history_ring

    total, largest = 0, (0, None)
    for blk in flat.blocks:
        spec = sizes[blk.path].history
        if spec is None:
            continue
        src, port = flat.drivers[(blk.path, spec.port)]
        n = history_ring.region_size(sizes[src].outputs[port], spec.capacity)
        total += n
        if n > largest[0]:
            largest = (n, blk)
    if total > limits.MAX_HISTORY_VALUES:
        n, blk = largest
        raise CompileError(
            f"its input history needs {limits.size_text(8 * n)}; the diagram's histories "
            f"need {limits.size_text(8 * total)} in all, over the limit of "
            f"{limits.size_text(8 * limits.MAX_HISTORY_VALUES)}: lower buffer_size",
            block=blk.path, file=flat.source)


def check_code(source: str, line_owner: Sequence[int | None], block_ids: Sequence[str],
               file: str | None) -> None:
    """Generated code within MAX_CODE_BYTES, checked before Python compiles it; names the
    block that writes the most."""
    if len(source) <= limits.MAX_CODE_BYTES:
        return
    written: dict[int, int] = {}
    for line, owner in zip(source.split("\n"), line_owner):
        if owner is not None:
            written[owner] = written.get(owner, 0) + len(line) + 1
    top = max(written, key=written.__getitem__) if written else None
    raise CompileError(f"the diagram's generated code would be {limits.size_text(len(source))}"
                       f" (at most {limits.size_text(limits.MAX_CODE_BYTES)}); this block writes "
                       f"{limits.size_text(written.get(top, 0))} of it: use smaller matrices or "
                       f"narrower signals", block=block_ids[top] if top is not None else None,
                       file=file)


def _param_of_size(blk: Any, n: int) -> str:
    """' (parameter 'x0' has n elements)' if one of the block's parameters has that size."""
    for prm in blk.block_type.params:
        value = blk.p.get(prm.name)
        if isinstance(value, np.ndarray) and value.size == n:
            return f" (parameter '{prm.name}' has {n} elements)"
    return ""


def check_results(logged_columns: int, time_events: Iterable[tuple[str, Any, Any]],
                  settings: SimulationSettings, source: str | None) -> None:
    """The results a run will keep must fit MAX_RESULT_BYTES, its time events MAX_STEPS.

    Rows are estimated as the engine makes them: the output grid (output_interval, else
    500 intervals), plus the start, plus two rows (left and right limit) per event; state
    events cannot be known before the run and are not counted. `time_events` gives, per
    block with time events, (path, block type instance, parameters).
    """
    start, stop = float(settings.start), float(settings.stop)
    span = stop - start
    events, busiest = 0.0, (0.0, None)
    for path, impl, p in time_events:
        try:
            count = impl.count_time_events(p, start, stop)
        except BLOCK_FAULTS as exc:
            raise CompileError(f"cannot count the block's time events: {type(exc).__name__}: "
                               f"{exc}", block=path, file=source) from None
        if isinstance(count, bool) or not isinstance(count, numbers.Real) or not count >= 0:
            continue  # unknown
        events += count
        if count > busiest[0]:
            busiest = (count, path)
    if events > limits.MAX_STEPS:
        total = "" if busiest[0] == events else f", {events:.3g} with the other blocks"
        raise CompileError(f"it makes about {busiest[0]:.3g} time events between {start:g} and "
                           f"{stop:g}{total} (at most {limits.MAX_STEPS:.0e} in a run): use a "
                           f"longer period or a shorter run", block=busiest[1], file=source)
    interval = settings.output_interval or span / 500
    rows = math.floor(span / interval) + 2 + 2 * events
    columns = 1 + logged_columns
    size = rows * columns * 8 + events * limits.EVENT_BYTES
    if size <= limits.MAX_RESULT_BYTES:
        return
    if settings.output_interval and span / interval > 2 * events:
        name, value = "output_interval", settings.output_interval
        change = "a larger output interval, a shorter run or fewer logged signals"
    elif busiest[1] is not None:
        raise CompileError(f"its {busiest[0]:.3g} time events between {start:g} and {stop:g} "
                           f"make about {rows:.3g} rows of results, "
                           f"{limits.size_text(size)} (at most "
                           f"{limits.size_text(limits.MAX_RESULT_BYTES)}): use a longer "
                           f"period or a shorter run", block=busiest[1], file=source)
    else:
        name, value = "stop", settings.stop
        change = "a shorter run or fewer logged signals"
    raise CompileError(f"simulation setting '{name}' = {value!r}: the run would log about "
                       f"{rows:.3g} rows of {columns} columns, {limits.size_text(size)} of "
                       f"results (at most {limits.size_text(limits.MAX_RESULT_BYTES)}): use "
                       f"{change}", file=source)


def check_hits(rates: Sequence[Rate], clock: Clock | None, owners: Sequence[str],
               settings: SimulationSettings, source: str | None) -> None:
    """The sample hits of the discrete rates within `limits.max_hits()`, their common tick
    within the exact clock; CompileError names a block of the rate at fault (`owners`).

    Hits are counted per rate over [start, stop] in floats (a period of 1e-300 s gives
    1e300, never a huge integer) and summed: each hit is an instant the engine settles.
    Triggered rates are not counted: their hits are the trigger's events.
    """
    if not rates:
        return
    start, stop = float(settings.start), float(settings.stop)
    counts = [_hit_count(rate, clock, start, stop) for rate in rates]
    total, limit = sum(counts), limits.max_hits()
    if total > limit:
        i = max(range(len(rates)), key=counts.__getitem__)
        others = "" if counts[i] == total else f", {_count_text(total)} with the other rates"
        raise CompileError(
            f"its sample time, {rates[i].sample_time}, makes {_count_text(counts[i])} sample "
            f"hits between {start:g} and {stop:g}{others} (at most {_count_text(limit)} in a "
            f"run; the environment variable BLOCKSIM_MAX_HITS raises it): use a longer period "
            f"or a shorter run", block=owners[i] or None, file=source)
    if clock is not None and clock.q.bit_length() > limits.MAX_CLOCK_BITS:
        bits = [max(as_fraction(r.period).denominator.bit_length(),
                    as_fraction(r.offset).denominator.bit_length()) for r in rates]
        i = max(range(len(rates)), key=bits.__getitem__)
        raise CompileError(
            f"its sample time, {rates[i].sample_time}, is too fine for the exact clock of the "
            f"sample hits (the discrete rates' common tick would be below "
            f"2**-{limits.MAX_CLOCK_BITS} s): use a period and offset that are multiples of "
            f"a coarser tick", block=owners[i] or None, file=source)


def _hit_count(rate: Rate, clock: Clock, start: float, stop: float) -> float:
    """Hits of `rate` within [start, stop] as a float: estimated in doubles (a period of
    1e-300 s gives 1e300, inf when doubles cannot count them), and, when that is below
    2**53, exact on the clock the engine schedules them with (`rates.next_hit`)."""
    last, first = (stop - rate.offset) / rate.period, (start - rate.offset) / rate.period
    if not (math.isfinite(last) and math.isfinite(first)):
        return math.inf
    estimate = float(max(0, math.floor(last) - max(0, math.ceil(first)) + 1))
    if estimate >= EXACT_INT:
        return estimate
    before = math.nextafter(start, -math.inf)  # a hit at the start time counts
    return float(next_hit(rate, clock, stop) - next_hit(rate, clock, before))


def _count_text(count: float) -> str:
    """A count for a message: exact below 1e9 (10000001 must not read as 1e+07)."""
    if count < 1e9:
        return f"{count:.0f}"
    return f"about {count:.3g}" if math.isfinite(count) else "more than 1e+308"
