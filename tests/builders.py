"""Small helpers to build and run diagrams in tests without writing JSON files."""
from __future__ import annotations

import contextlib
import csv
import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

from blocksim.cli.main import main

from blocksim.diagram.format import diagram_from_dict
from blocksim.diagram.model import Diagram


def block(block_id: str, block_type: str, **params: Any) -> dict:
    return {"id": block_id, "type": block_type, "params": params}


def diagram(blocks: list[dict], wires: list[tuple[str, str]], parameters: dict | None = None,
            **simulation: Any) -> Diagram:
    """A Diagram from blocks (see `block`), (src, dst) wire pairs and simulation settings."""
    data = {"format": "blocksim", "version": 1, "parameters": parameters or {},
            "simulation": simulation,
            "blocks": blocks, "wires": [{"src": s, "dst": d} for s, d in wires]}
    return diagram_from_dict(data, source="<test>")


DIAGRAMS = Path(__file__).resolve().parents[1] / "diagrams"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextlib.contextmanager
def benchmark_script(name: str, module_name: str):
    """benchmarks/NAME imported as a module under module_name, for the length of the block
    (registered in sys.modules while it runs: dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(module_name, None)


def cli_run(directory: Path, name: str, *args: Any) -> tuple[dict, list]:
    """Run diagrams/NAME through the CLI; returns the results table and the event log."""
    out, events = directory / "out.csv", directory / "events.csv"
    code = main(["run", str(DIAGRAMS / name), "--out", str(out), "--events", str(events),
                 "-q", *map(str, args)])
    assert code == 0
    rows = list(csv.reader(out.open()))
    header, data = rows[0], np.array(rows[1:], dtype=float)
    table = {column: data[:, i] for i, column in enumerate(header)}
    log = [(float(t), b, k) for t, b, k in list(csv.reader(events.open()))[1:]]
    return table, log
