"""Sample times as blocks declare them: continuous, constant, inherited or discrete
`[period, offset]` (Simulink's notion), and how a `sample_time` parameter reads.

The compiler resolves inherited sample times and puts all discrete rates on one exact clock
(`blocksim.compiler.rates`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

CONTINUOUS, CONSTANT, INHERITED, DISCRETE = "continuous", "constant", "inherited", "discrete"
TRIGGERED = "triggered"  # runs at the edges of a triggered subsystem's trigger (period 0)


@dataclass(frozen=True)
class SampleTime:
    """A block's sample time: kind, and for discrete ones the period and offset (s)."""

    kind: str
    period: float = 0.0
    offset: float = 0.0
    source: str = ""  # a triggered rate's trigger (its subsystem's path)

    @property
    def discrete(self) -> bool:
        return self.kind == DISCRETE

    def __str__(self) -> str:
        if self.kind == TRIGGERED:
            return f"triggered by {self.source}"
        if not self.discrete:
            return self.kind
        if self.offset:
            return f"discrete [{self.period:g}, {self.offset:g}] s"
        return f"discrete {self.period:g} s"


CONTINUOUS_TIME = SampleTime(CONTINUOUS)
CONSTANT_TIME = SampleTime(CONSTANT)
INHERITED_TIME = SampleTime(INHERITED)


def parse_sample_time(value: Any, allow_continuous: bool = False) -> SampleTime:
    """A `sample_time` parameter's value as a SampleTime; ValueError says what is wrong.

    Accepted: a period T > 0 (offset 0), `[T, offset]` with 0 <= offset < T, -1 for
    inherited, inf for constant, and 0 for continuous where `allow_continuous`.
    """
    values = [float(v) for v in (value if isinstance(value, (list, tuple)) else
                                 getattr(value, "ravel", lambda: [value])())]
    if len(values) not in (1, 2):
        raise ValueError(f"must be a period or [period, offset], got {len(values)} numbers")
    period = values[0]
    offset = values[1] if len(values) == 2 else 0.0
    if math.isnan(period) or math.isnan(offset):
        raise ValueError("must not be NaN")
    if period == -1.0 and offset == 0.0:
        return INHERITED_TIME
    if period == math.inf:
        return CONSTANT_TIME
    if period == 0.0:
        if allow_continuous and offset == 0.0:
            return CONTINUOUS_TIME
        raise ValueError("a period of 0 (continuous) is not allowed for this block; give a "
                         "period > 0, or -1 to inherit")
    if not (math.isfinite(period) and period > 0.0):
        raise ValueError(f"the period must be > 0 (or -1 to inherit), got {period:g}")
    if not (math.isfinite(offset) and 0.0 <= offset < period):
        raise ValueError(f"the offset must satisfy 0 <= offset < period ({period:g}), "
                         f"got {offset:g}")
    return SampleTime(DISCRETE, period, offset)
