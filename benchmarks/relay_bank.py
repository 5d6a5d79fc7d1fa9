"""A bank of relay oscillators: many blocks, many state events (the event-cost benchmark).

Oscillator k is x' = b_k + g_k * relay(x): the relay turns on at x = 1 (output -1) and off
at x = -1 (output +1), so x runs a triangle wave between -1 and 1 with slopes g_k + b_k
and -(g_k - b_k). Each oscillator is four blocks (Integrator, Relay, Gain, Bias); the
gains differ, so the relays switch at distinct instants. The switching times are known
in closed form (`switch_times`), so a run can be checked.
"""
from __future__ import annotations

import numpy as np

from blocksim.diagram.format import diagram_from_dict
from blocksim.diagram.model import Diagram


def gain(k: int) -> float:
    return 1.0 + 0.37 * k


def bias(k: int, n: int) -> float:
    return 0.25 * k / n


def diagram(n: int, stop: float = 10.0, rtol: float = 1e-8, atol: float = 1e-10) -> Diagram:
    """n oscillators (4 n + 2 blocks), logging the first and the last state."""
    blocks, wires = [], []
    for k in range(n):
        blocks += [{"id": f"x{k}", "type": "Integrator", "params": {"x0": 0.0}},
                   {"id": f"r{k}", "type": "Relay",
                    "params": {"on_point": 1.0, "off_point": -1.0, "on_value": -1.0,
                               "off_value": 1.0}},
                   {"id": f"g{k}", "type": "Gain", "params": {"k": gain(k)}},
                   {"id": f"b{k}", "type": "Bias", "params": {"bias": bias(k, n)}}]
        wires += [(f"x{k}.y", f"r{k}.u"), (f"r{k}.y", f"g{k}.u"), (f"g{k}.y", f"b{k}.u"),
                  (f"b{k}.y", f"x{k}.u")]
    blocks += [{"id": "first", "type": "Output"}, {"id": "last", "type": "Output"}]
    wires += [("x0.y", "first.u"), (f"x{n - 1}.y", "last.u")]
    data = {"format": "blocksim", "version": 1, "parameters": {},
            "simulation": {"stop": stop, "rtol": rtol, "atol": atol},
            "blocks": blocks, "wires": [{"src": s, "dst": d} for s, d in wires]}
    return diagram_from_dict(data, source=f"<relay bank {n}>")


def switch_times(k: int, n: int, stop: float) -> np.ndarray:
    """The instants oscillator k's relay switches, up to `stop` (x starts at 0, rising)."""
    up, down = gain(k) + bias(k, n), gain(k) - bias(k, n)
    times, t, rising, x = [], 0.0, True, 0.0
    while True:
        t += (1.0 - x) / up if rising else (x + 1.0) / down
        if t > stop:
            return np.array(times)
        times.append(t)
        x, rising = (1.0, False) if rising else (-1.0, True)
