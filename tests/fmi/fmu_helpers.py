"""Diagrams around the test FMUs (tests/fmi)."""
from __future__ import annotations

import json
from pathlib import Path


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
