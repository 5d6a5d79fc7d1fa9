"""Virtual buses: each BusSelector output wired straight to the signal that made the element.

Runs on the flat diagram (after Inport/Outport and Goto/From are dissolved), so a bus is
followed through every subsystem level and tag for free: the driver of a BusSelector's
`bus` input is a BusCreator's output, another BusSelector's output that selected a nested
bus, or the hold on a port of a triggered or enabled subsystem, which then gets one twin
per element. The selector's one `bus` input is replaced by one input per selected element
(`e1`, `e2`, ...), so its outputs depend exactly on their own sources.
"""
from __future__ import annotations

import numpy as np

from blocksim.compiler.flatten import Endpoint, FlatBlock, FlatDiagram
from blocksim.errors import CompileError, shown

MAX_NAMES_SHOWN = 30
HOLDS = ("TriggeredHold", "EnabledHold")  # the ports of conditional subsystems


class _Buses:
    def __init__(self, flat: FlatDiagram):
        self.flat = flat
        self.by_path = {blk.path: blk for blk in flat.blocks}
        self.active: set[tuple[str, str]] = set()  # elements being resolved (loop guard)

    def error(self, message: str, blk: FlatBlock) -> CompileError:
        return CompileError(message, block=blk.path, port="bus", file=self.flat.source)

    def bus_of(self, endpoint: Endpoint) -> dict[str, Endpoint] | None:
        """{element name: the signal that makes it} if `endpoint` carries a bus, else None."""
        blk = self.by_path[endpoint[0]]
        role = getattr(blk.block_type, "bus_role", None)
        if role == "creator":
            return {name: self.flat.drivers[(blk.path, f"u{i + 1}")]
                    for i, name in enumerate(blk.impl.element_names(blk.p))}
        if role == "selector":
            name = blk.impl.element_names(blk.p)[int(endpoint[1][1:]) - 1]
            return self.bus_of(self.element(blk, name))
        if blk.block_type.name in HOLDS:
            inner = self.bus_of(self.flat.drivers[(blk.path, "u")])
            if inner is None:
                return None
            return {name: self.held(blk, name, src) for name, src in inner.items()}
        return None

    def held(self, hold: FlatBlock, name: str, src: Endpoint) -> Endpoint:
        """Element `name` through the port hold `hold` of a conditional subsystem: a hold of
        its own, alike in all but width (made once), so it is sampled or held as the bus."""
        path = f"{hold.path}.{name}"
        if path not in self.by_path:
            if np.size(hold.p.initial) > 1:  # only an Outport's can be a vector
                raise CompileError("a bus passes this Outport, so its 'initial' must be one "
                                   "number (each element starts from it)",
                                   block=hold.path.replace("/__out_", "/"),
                                   file=self.flat.source)
            copy = FlatBlock(path, hold.block_type, hold.block_type(), hold.p, ["u"], ["y"],
                             {"y": ("u",)}, hold.gates, hold.trigger)
            self.flat.blocks.append(copy)
            self.by_path[path] = copy
            self.flat.drivers[(path, "u")] = src
        return (path, "y")

    def names(self, bus: dict[str, Endpoint], depth: int = 0) -> list[str]:
        """Every name of a bus, nested ones dot-separated."""
        found = []
        for name, endpoint in bus.items():
            found.append(name)
            inner = self.bus_of(endpoint) if depth < 8 else None
            found += [f"{name}.{sub}" for sub in self.names(inner or {}, depth + 1)]
        return found

    def element(self, sel: FlatBlock, name: str) -> Endpoint:
        """The signal that makes element `name` of the bus into selector `sel`."""
        key = (sel.path, name)
        if key in self.active:
            raise self.error(f"bus element '{shown(name)}' is made from its own selection: "
                             f"the buses form a loop", sel)
        self.active.add(key)
        try:
            src = self.flat.drivers[(sel.path, "bus")]
            bus = self.bus_of(src)
            if bus is None:
                raise self.error(f"input 'bus' is not a bus: '{shown(src[0])}.{src[1]}' "
                                 f"drives it (a bus comes from a BusCreator, through subsystem "
                                 f"ports, Goto/From or BusSelectors)", sel)
            parts, endpoint, sub = name.split("."), src, bus
            for i, part in enumerate(parts):
                if sub is None:
                    raise self.error(f"no bus element '{shown(name)}': "
                                     f"'{'.'.join(parts[:i])}' is not a bus", sel)
                if part not in sub:
                    raise self.error(f"no bus element '{shown(name)}' (the bus has: "
                                     f"{self._listed(bus)})", sel)
                endpoint = sub[part]
                sub = self.bus_of(endpoint) if i + 1 < len(parts) else None
            return endpoint
        finally:
            self.active.discard(key)

    def _listed(self, bus: dict[str, Endpoint]) -> str:
        names = self.names(bus)
        more = f", ... ({len(names)} in all)" if len(names) > MAX_NAMES_SHOWN else ""
        return ", ".join(shown(n) for n in names[:MAX_NAMES_SHOWN]) + more


def resolve(flat: FlatDiagram) -> None:
    """Wire every BusSelector's outputs to their elements (CompileError for an unknown
    element names the block, the name and the bus's names)."""
    buses = _Buses(flat)
    selectors = [blk for blk in flat.blocks
                 if getattr(blk.block_type, "bus_role", None) == "selector"]
    wiring = {blk.path: [buses.element(blk, name) for name in blk.impl.element_names(blk.p)]
              for blk in selectors}
    for blk in selectors:  # only once every selection is known: they read the `bus` inputs
        del flat.drivers[(blk.path, "bus")]
        blk.inputs = [f"e{k + 1}" for k in range(len(wiring[blk.path]))]
        blk.feedthrough = {f"y{k + 1}": (f"e{k + 1}",) for k in range(len(blk.inputs))}
        for k, endpoint in enumerate(wiring[blk.path]):
            flat.drivers[(blk.path, f"e{k + 1}")] = endpoint
