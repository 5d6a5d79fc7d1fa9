"""What each curve of a scope is called: the name of the signal feeding each logged element,
and the units the Scope block declares. Plain Python (no Qt), so it is tested on its own.

A logged element is named after the wire into the scope's port when the diagram names that
wire (a signal label), else after the signal that drives it as the compiler names it
(`ball.x`, `mux.y[1]`): the legend then says where each curve comes from.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from blocksim.gui.canvas.portinfo import port_info, scope_names
from blocksim.diagram.model import Block, Diagram

_ELEMENT = re.compile(r"^(?P<base>.*)\[(?P<k>\d+)\]$")


@dataclass(frozen=True)
class ScopeTraces:
    """The curves of one plotted block: one label per logged element, and the y units."""

    labels: tuple[str, ...]
    units: str = ""

    def y_label(self, fallback: str) -> str:
        """The y axis's name: the signal's own when there is one curve, else `fallback`
        (the scope's id)."""
        return self.labels[0] if len(self.labels) == 1 else fallback


def find_block(diagram: Diagram, path: str) -> tuple[Diagram, Block] | None:
    """The level and block of a path such as "sub/scope", or None if it is not there."""
    *subs, block_id = path.split("/")
    level = diagram
    try:
        for sub in subs:
            nested = level.block(sub).subsystem
            if nested is None:
                return None
            level = nested
        return level, level.block(block_id)
    except KeyError:
        return None


def _runs(names: Sequence[str]) -> list[tuple[str, int]]:
    """Consecutive elements of one driving signal: [(base name, count), ...]."""
    runs: list[tuple[str, int]] = []
    for name in names:
        match = _ELEMENT.match(name)
        base = match.group("base") if match else name
        fresh = match is None or match.group("k") == "0"
        if runs and runs[-1][0] == base and not fresh:
            runs[-1] = (base, runs[-1][1] + 1)
        else:
            runs.append((base, 1))
    return runs


def _wire_names(level: Diagram, block: Block) -> dict[str, str]:
    """{input port: the name of the wire into it} for wires the diagram names."""
    named = {}
    for wire in level.wires:
        name = getattr(wire, "name", None)  # signal labels: a wire's optional name
        if wire.dst.block == block.id and name:
            named[wire.dst.port] = str(name)
    return named


def scope_traces(diagram: Diagram, path: str, drivers: Sequence[str]) -> ScopeTraces:
    """Labels for the logged elements of the block at `path`, given the names of the
    signals that drive them (`drivers`, one per element, from `logged_drivers`)."""
    found = find_block(diagram, path)
    units = ""
    named: dict[str, str] = {}
    ports: tuple[str, ...] = ()
    if found is not None:
        level, block = found
        units = str(block.params.get("units", "") or "").strip()
        named = _wire_names(level, block)
        ports = port_info(block, scope_names(level), level.wires).inputs
    runs = _runs(drivers)
    labels: list[str] = []
    # One run per input port when every port has its own driver: name it by its wire.
    by_port = len(runs) == len(ports)
    for r, (base, count) in enumerate(runs):
        name = named.get(ports[r], base) if by_port else base
        labels += [name] if count == 1 else [f"{name}[{k}]" for k in range(count)]
    return ScopeTraces(tuple(labels), units)


def logged_drivers(signal_names: Sequence[str], logged) -> dict[str, tuple[str, ...]]:
    """{logged path: the driving signal's name of each element} from a compiled model's
    `signal_names` and `logged` entries."""
    return {entry.name: tuple(signal_names[i] for i in entry.indices) for entry in logged}


def fallback_traces(path: str, width: int) -> ScopeTraces:
    """Labels when the drivers are unknown (a run that never compiled): `path`, `path[k]`."""
    return ScopeTraces((path,) if width == 1 else tuple(f"{path}[{k}]" for k in range(width)))
