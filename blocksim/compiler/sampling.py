"""Sample times of a flat diagram: every block's resolved rate, and the discrete rates whose
hits the engine schedules (`rates` has the rules; `docs/semantics.md` the user's view).

A block with continuous states is continuous; other blocks declare their sample time
(`BlockType.rate`, or a discrete block's `sample_time` parameter) and inherited ones take
their inputs'. Only discrete blocks need hits: an inherited block on a discrete rate reads
held values, so it is simply evaluated with everything else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from blocksim.blocktypes.blockspec import Sizes
from blocksim.compiler.faults import call_block
from blocksim.compiler.flatten import FlatDiagram
from blocksim.compiler.rates import Clock, Rate, resolve
from blocksim.errors import CompileError
from blocksim.blocktypes.sampletime import (CONSTANT, CONTINUOUS, CONTINUOUS_TIME, DISCRETE, TRIGGERED,
                                 SampleTime)


@dataclass(frozen=True)
class Sampling:
    """What the compiler and the engine need to know about sample times."""

    block_rates: Mapping[str, SampleTime]  # every block path -> its resolved sample time
    clock: Clock | None  # the common tick of the discrete rates (None: no discrete block)
    rates: tuple[Rate, ...]  # the distinct rates of discrete blocks, fastest first
    # Every discrete block -> its rate: an index in `rates`, or len(rates) + j for the j-th
    # trigger (a triggered subsystem's rate, run at its edges).
    rate_of: Mapping[str, int]
    triggers: tuple[str, ...] = ()  # the gate paths of the triggered rates


def _sample_time(impl, p) -> SampleTime:
    try:
        value = impl.sample_time(p)
    except ValueError as exc:  # the parameter's own message
        raise CompileError(f"parameter 'sample_time': {exc}") from None
    if not isinstance(value, SampleTime):
        raise TypeError(f"sample_time() gave {value!r}, not a SampleTime")
    return value


def resolve_sampling(flat: FlatDiagram, sizes: Mapping[str, Sizes]) -> Sampling:
    """Resolve every block's sample time; CompileError names a block whose `sample_time`
    cannot work."""
    declared: dict[str, SampleTime] = {}
    for blk in flat.blocks:
        if sizes[blk.path].states:
            declared[blk.path] = CONTINUOUS_TIME
        else:
            try:
                declared[blk.path] = call_block(_sample_time, blk.impl, blk.p)
            except CompileError as exc:
                raise CompileError(exc.detail, block=blk.path, file=flat.source) from None
        if blk.trigger is not None:
            declared[blk.path] = _in_triggered(blk, declared[blk.path], flat.source)
    inputs_of = {blk.path: [flat.drivers[(blk.path, port)][0] for port in blk.inputs]
                 for blk in flat.blocks}
    resolved = resolve(declared, inputs_of)
    discrete = [blk for blk in flat.blocks if call_block(blk.impl.is_discrete, blk.p)]
    for blk in discrete:
        if resolved[blk.path].kind not in (DISCRETE, TRIGGERED):
            raise CompileError(
                f"parameter 'sample_time': inherited from the inputs, the rate would be "
                f"{resolved[blk.path]}; a {blk.block_type.name} needs a discrete rate: give a "
                f"period (or [period, offset])", block=blk.path, file=flat.source)
    clocked = [blk for blk in discrete if resolved[blk.path].discrete]
    times = sorted({resolved[blk.path] for blk in clocked}, key=lambda st: (st.period, st.offset))
    triggers = tuple(dict.fromkeys(resolved[blk.path].source for blk in discrete
                                   if resolved[blk.path].kind == TRIGGERED))
    clock, rates = None, ()
    if times:
        try:
            clock = Clock.for_times(times)
            rates = tuple(clock.rate(st) for st in times)
        except ValueError as exc:
            raise CompileError(f"the sample times have no common base rate: {exc}",
                               file=flat.source) from None
    index = {st: i for i, st in enumerate(times)}
    index.update({SampleTime(TRIGGERED, 0.0, 0.0, gate): len(times) + j
                  for j, gate in enumerate(triggers)})
    rate_of = {blk.path: index[resolved[blk.path]] for blk in discrete}
    return Sampling(resolved, clock, rates, rate_of, triggers)


def _in_triggered(blk, declared: SampleTime, source: str) -> SampleTime:
    """The sample time of a block inside a triggered subsystem: its trigger's rate (only
    constants keep theirs); continuous blocks and explicit periods are refused."""
    if declared.kind == CONSTANT:
        return declared
    subsystem = blk.trigger
    if declared.kind == CONTINUOUS:
        raise CompileError(f"a block inside the TriggeredSubsystem '{subsystem}' may not be "
                           f"continuous (continuous states or a function of time): it runs "
                           f"only at the trigger", block=blk.path, file=source)
    if declared.discrete:
        raise CompileError(f"parameter 'sample_time': inside the TriggeredSubsystem "
                           f"'{subsystem}' a block runs at the trigger: set sample_time to -1 "
                           f"(inherited)", block=blk.path, file=source)
    return SampleTime(TRIGGERED, 0.0, 0.0, blk.trigger)
