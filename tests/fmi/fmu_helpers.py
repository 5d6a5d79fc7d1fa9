"""Diagrams around the test FMUs (tests/fmi)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np


def write_diagram(folder: Path, blocks, wires, stop=3.0, name="d.json", **simulation):
    """A diagram file in `folder` (the FMUs beside it)."""
    sim = {"start": 0, "stop": stop, "solver": "dopri5", "rtol": 1e-10, "atol": 1e-10,
           "output_interval": 0.01, **simulation}
    path = folder / name
    path.write_text(json.dumps({"format": "blocksim", "version": 1, "simulation": sim,
                                "blocks": blocks, "wires": wires}))
    return path


def place(fmu: Path, folder: Path, name: str | None = None) -> str:
    """Copy an FMU next to a diagram; its file name."""
    target = folder / (name or fmu.name)
    target.write_bytes(fmu.read_bytes())
    return target.name


def exact_x4(t):
    """Math 003's exact x4: ramps of slope 6 that stop at +-2.5 (17/12, 23/6, 35/6)."""
    t = np.asarray(t, dtype=float)
    pieces = [(1, 17 / 12, lambda s: 6 * (s - 1)), (17 / 12, 3, lambda s: 2.5 + 0 * s),
              (3, 23 / 6, lambda s: 2.5 - 6 * (s - 3)), (23 / 6, 5, lambda s: -2.5 + 0 * s),
              (5, 35 / 6, lambda s: -2.5 + 6 * (s - 5)), (35 / 6, math.inf, lambda s: 2.5 + 0 * s)]
    x4 = np.zeros_like(t)
    for a, b, f in pieces:
        x4 = np.where((t >= a) & (t < b), f(t), x4)
    return x4
