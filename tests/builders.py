"""Small helpers to build and run diagrams in tests without writing JSON files."""
from __future__ import annotations

from typing import Any

from blocksim.format import diagram_from_dict
from blocksim.model import Diagram


def block(block_id: str, block_type: str, **params: Any) -> dict:
    return {"id": block_id, "type": block_type, "params": params}


def diagram(blocks: list[dict], wires: list[tuple[str, str]], parameters: dict | None = None,
            **simulation: Any) -> Diagram:
    """A Diagram from blocks (see `block`), (src, dst) wire pairs and simulation settings."""
    data = {"format": "blocksim", "version": 1, "parameters": parameters or {},
            "simulation": simulation,
            "blocks": blocks, "wires": [{"src": s, "dst": d} for s, d in wires]}
    return diagram_from_dict(data, source="<test>")
