"""Buses: named vectors. BusCreator names its inputs; BusSelector picks elements by name.

A bus is virtual, as Simulink's default bus: the compiler (`blocksim.compiler.buses`) wires
each BusSelector output straight to the signal that made the element, following the bus
through subsystem ports, Goto/From and other BusSelectors. Names therefore survive every
level of nesting, and a selected element depends on its own source only: a bus that
carries a feedback signal makes no false algebraic loop. BusCreator's output is also an
ordinary vector (its inputs one after the other) for blocks that are not bus-aware.
"""
from __future__ import annotations

from typing import ClassVar

from blocksim.blocktypes.blockspec import BlockType, Emit, Param, Port, Sizes


def split_names(text: str) -> list[str]:
    """The names of a comma-separated list ("a, b, c"), stripped."""
    return [name.strip() for name in text.split(",")]


def names_problem(names: list[str], dotted: bool) -> str | None:
    """A message if a name list is not usable, else None."""
    for name in names:
        parts = name.split(".") if dotted else [name]
        if not all(part.isidentifier() for part in parts):
            what = "names (letters, digits, _), dot-separated for nested buses" if dotted \
                else "names (letters, digits, _; not starting with a digit)"
            return f"'names' must be comma-separated {what}, got {name!r}"
    return None


class BusCreator(BlockType):
    """Combine the inputs u1..un into a bus whose elements are named by `names`.

    An input may be a vector or itself a bus (a nested bus: its elements are then reached
    as "outer.inner" by BusSelector). The output, used as an ordinary signal, is the inputs
    one after the other, as Mux makes it.
    """

    name = "BusCreator"
    category = "Signal Routing"
    params = (Param("names", "text", "a, b", "comma-separated element names, one input "
                    "u1, u2, ... per name, in order"),)
    inputs = (Port("u1", "element 1; one port u1, u2, ... per name"),
              Port("u2", "element 2 (with the default two names)"))
    outputs = (Port("y", "the bus"),)
    bus_role: ClassVar[str] = "creator"

    def element_names(self, p) -> list[str]:
        return split_names(p.names)

    def check(self, p):
        names = self.element_names(p)
        problem = names_problem(names, dotted=False)
        if problem:
            return problem
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            return f"'names' repeats {', '.join(map(repr, repeated))}: element names are unique"
        return None

    def input_ports(self, p):
        return tuple(Port(f"u{i + 1}", f"element '{name}'")
                     for i, name in enumerate(self.element_names(p)))

    def sizes(self, p, in_widths):
        return Sizes({"y": sum(w or 1 for w in in_widths.values())})

    def output(self, e: Emit):
        parts = [v for port in self.input_ports(e.p) for v in e.u[port.name]]
        return {"y": [f"{y} = {v}" for y, v in zip(e.y["y"], parts)]}


class BusSelector(BlockType):
    """Output bus elements by name: one output y1, y2, ... per name in `names`.

    Names of nested buses are dot-separated ("motor.speed"); selecting a nested bus outputs
    that bus, names and all. An unknown name is a compile error naming the block and the
    name and listing the bus's names. The bus must come from a BusCreator, directly or
    through subsystem ports (those of triggered and enabled subsystems too: each element
    is sampled or held there as the bus would be), Goto/From or another BusSelector.
    """

    name = "BusSelector"
    category = "Signal Routing"
    params = (Param("names", "text", "a", "comma-separated names of the elements to output, "
                    "dot-separated inside nested buses"),)
    inputs = (Port("bus", "a bus (from a BusCreator)"),)
    outputs = (Port("y1", "the first named element; one port y1, y2, ... per name"),)
    bus_role: ClassVar[str] = "selector"

    def element_names(self, p) -> list[str]:
        return split_names(p.names)

    def check(self, p):
        return names_problem(self.element_names(p), dotted=True)

    def output_ports(self, p):
        return tuple(Port(f"y{i + 1}", f"element '{name}'")
                     for i, name in enumerate(self.element_names(p)))

    def feedthrough(self, p):
        # Before the compiler wires the elements (`blocksim.compiler.buses`): the bus.
        return {port.name: ("bus",) for port in self.output_ports(p)}

    def sizes(self, p, in_widths):
        # Input e<k> is element k, wired by the compiler in place of the bus input.
        return Sizes({f"y{k + 1}": in_widths.get(f"e{k + 1}") or 1
                      for k in range(len(self.element_names(p)))})

    def output(self, e: Emit):
        return {f"y{k + 1}": [f"{y} = {u}" for y, u in zip(e.y[f"y{k + 1}"], e.u[f"e{k + 1}"])]
                for k in range(len(self.element_names(e.p)))}


BLOCK_TYPES = (BusCreator, BusSelector)
