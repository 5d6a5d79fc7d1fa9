"""diagrams/multi_clock.json (bdsim's multi-clock example): a sine held at 2 Hz and at 3 Hz,
against the sampled values computed independently at every row."""
import math
from fractions import Fraction

import numpy as np

import blocksim
from builders import DIAGRAMS


def held(t: float, per_second: int, is_right_limit: bool) -> float:
    """sin(2 pi 0.2 t_k) for the last hit t_k of a rate of `per_second` Hz at or before t
    (before t at a left-limit row)."""
    ticks = Fraction(t).limit_denominator(10 ** 6) * per_second
    k = math.floor(ticks) if is_right_limit or ticks.denominator != 1 else int(ticks) - 1
    k = max(k, 0)
    return math.sin(2 * math.pi * 0.2 * float(Fraction(k, per_second)))


def test_both_holds_and_their_mean_at_every_row():
    r = blocksim.simulate(blocksim.load(DIAGRAMS / "multi_clock.json"))
    times = r.time.tolist()
    right = [i + 1 == len(times) or times[i + 1] != t for i, t in enumerate(times)]
    h2 = np.array([held(t, 2, rl) for t, rl in zip(times, right)])
    h3 = np.array([held(t, 3, rl) for t, rl in zip(times, right)])
    assert np.max(np.abs(r["h2"] - h2)) < 1e-12
    assert np.max(np.abs(r["h3"] - h3)) < 1e-12
    assert np.max(np.abs(r["y"] - (h2 + h3) / 2)) < 1e-12
    hits = sorted({t for t in times if times.count(t) == 2})
    expected = sorted({float(Fraction(k, 2)) for k in range(1, 11)} |
                      {float(Fraction(k, 3)) for k in range(1, 16)})
    assert hits == expected  # 1, 2, 3, 4, 5 once each: the two rates meet there
