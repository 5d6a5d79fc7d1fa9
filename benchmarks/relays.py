"""The relay benchmark model: n relay oscillators side by side, for the cost of an event as
a diagram grows.

Oscillator i is an Integrator x_i, a Relay on it (on at +1, off at -1, output -1 on and +1
off) and a Gain w_i: x_i' = w_i * relay, a triangle wave between -1 and 1 whose relay
switches at t = (2 k + 1) / w_i exactly. The rates differ (w_i = 1 + 0.37 i), so no two
oscillators switch together and every event is one crossing located among n watched ones.
3 n + 1 blocks (an Output logs x_0).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from blocksim.diagram.format import diagram_from_dict
from blocksim.diagram.model import Diagram


def rate(i: int) -> float:
    return 1.0 + 0.37 * i


def diagram(n: int, stop: float, rtol: float = 1e-10, atol: float = 1e-10,
            gain: Callable[[int], float | str] = rate,
            parameters: dict[str, float] | None = None) -> Diagram:
    """The bank of n oscillators; `gain(i)` is oscillator i's Gain (a number, or an
    expression of the diagram's `parameters`, for runtime-parameter tests)."""
    blocks, wires = [], []
    for i in range(n):
        blocks += [{"id": f"x{i}", "type": "Integrator"},
                   {"id": f"r{i}", "type": "Relay",
                    "params": {"on_point": 1.0, "off_point": -1.0, "on_value": -1.0,
                               "off_value": 1.0}},
                   {"id": f"w{i}", "type": "Gain", "params": {"k": gain(i)}}]
        wires += [(f"x{i}.y", f"r{i}.u"), (f"r{i}.y", f"w{i}.u"), (f"w{i}.y", f"x{i}.u")]
    blocks.append({"id": "y", "type": "Output"})
    wires.append(("x0.y", "y.u"))
    data = {"format": "blocksim", "version": 1, "parameters": dict(parameters or {}),
            "simulation": {"stop": stop, "rtol": rtol, "atol": atol},
            "blocks": blocks, "wires": [{"src": s, "dst": d} for s, d in wires]}
    return diagram_from_dict(data, source=f"<{n} relays>")


def switch_times(n: int, stop: float) -> dict[str, np.ndarray]:
    """Exact switching times of every relay up to `stop`, by block id."""
    times = {}
    for i in range(n):
        k = np.arange(int((stop * rate(i) - 1) / 2) + 1)
        t = (2 * k + 1) / rate(i)
        times[f"r{i}"] = t[t < stop - 1e-9]  # one at the stop time itself is not run
    return times


def error(results, n: int, stop: float) -> float:
    """Max error of every relay's switching times against the exact ones (inf if the
    counts differ)."""
    worst = 0.0
    for block, exact in switch_times(n, stop).items():
        got = np.array([e.time for e in results.events_of(None, block)
                        if e.kind in ("on", "off")])
        if len(got) != len(exact):
            return float("inf")
        if len(got):
            worst = max(worst, float(np.max(np.abs(got - exact))))
    return worst
