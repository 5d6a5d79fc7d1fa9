"""Which wires of a level form one net, without Qt.

A signal net is one source port and every wire from it. A physical net is every connector
joined by connections, whichever way each wire was drawn: wires between physical ports
are undirected, so the net is the connected part of the graph they make. Wires of one
net may share a line and meet in junction dots; wires of two nets must not (the router,
the routing check and the canvas all ask here).
"""
from __future__ import annotations

from typing import Callable, Sequence

from blocksim.diagram.model import PortRef, Wire

PHYSICAL_NET = "~"  # physical nets' keys start with this (no port reference does)


def net_keys(wires: Sequence[Wire], is_physical: Callable[[PortRef], bool]) -> list[str]:
    """The net of each wire: the source port for a signal wire, for a connection the
    least of the connectors in its connected part (prefixed with PHYSICAL_NET)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    physical = [is_physical(w.src) or is_physical(w.dst) for w in wires]
    for wire, joined in zip(wires, physical):
        if joined:
            a, b = find(str(wire.src)), find(str(wire.dst))
            if a != b:
                parent[max(a, b)] = min(a, b)  # the least member is the root
    return [PHYSICAL_NET + find(str(w.src)) if joined else str(w.src)
            for w, joined in zip(wires, physical)]
