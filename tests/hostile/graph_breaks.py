"""One thing broken on purpose in a valid random diagram (graph_build.Builder), each a
mistake the compiler must refuse with a CompileError naming a block, never run or crash.

Each break knows why its diagram cannot compile: a value outside the declaration (a bound,
a choice, a whole number), parameter values the block's own `check` refuses, an input left
unconnected, a direct feedback loop (an algebraic loop), an input of a width the block's
`sizes` refuses, a From whose tag matches no Goto, a BusSelector fed by a plain signal.
A break that finds nothing to break in the graph at hand leaves it to the next one.
"""
from __future__ import annotations

from typing import Callable

from hypothesis import strategies as st

from blocksim.blocktypes import registry
from hostile.graph_build import Builder, Endpoint, Node
from hostile.graph_params import loose_params, pick, problem, small

WIDTHS = (2, 3, 5)


def _main(builder: Builder) -> list[Node]:
    return [n for n in builder.nodes.values() if n.main and n.inst is not None]


def _set(node: Node, name: str, value) -> None:
    node.doc["params"] = {**node.doc["params"], name: value}


def value_outside(draw, builder: Builder) -> str | None:
    """A number below its lower bound or above its upper one, a choice not offered, a
    fraction where a whole number goes."""
    spots = [(node, prm) for node in _main(builder) for prm in type(node.inst.impl).params
             if prm.low is not None or prm.high is not None or prm.kind in ("choice", "int")]
    if not spots:
        return None
    node, prm = pick(draw, spots)
    if prm.kind == "choice":
        value = draw(st.sampled_from(["", "none of these", prm.choices[0].upper() + "?"]))
    elif prm.low is not None and (prm.high is None or draw(st.booleans())):
        value = prm.low - draw(st.sampled_from([1, 1e-3, 1e6]))
    elif prm.high is not None:
        value = prm.high + draw(st.sampled_from([1, 1e6]))
    else:
        value = draw(st.sampled_from([0.5, 1.25, -2.5]))
    if prm.kind == "int" and float(value).is_integer():
        value = float(value) + 0.5
    _set(node, prm.name, value)
    return f"parameter '{prm.name}' of {node.id} set to {value!r}"


def values_clash(draw, builder: Builder) -> str | None:
    """Parameter values each plausible but refused together (the block's `check`)."""
    nodes = _main(builder)
    first = draw(st.integers(0, len(nodes) - 1)) if nodes else 0
    for node in nodes[first:] + nodes[:first]:
        for _ in range(8):
            params = loose_params(draw, node.doc["type"])
            found, why = problem(node.doc["type"], params)
            if found is None:
                node.doc["params"] = params
                return f"parameters of {node.id}: {why}"
    return None


def unconnected(draw, builder: Builder) -> str | None:
    """An input of a block with no wire."""
    inputs = sorted(key for key in builder.driver if builder.nodes[key[0]].main)
    if not inputs:
        return None
    block, port = pick(draw, inputs)
    del builder.driver[(block, port)]
    return f"input {block}.{port} left unconnected"


def _direct(builder: Builder) -> dict[Endpoint, list[Endpoint]]:
    """For each output, the outputs it reads without delay (the compiler's feedthrough)."""
    deps: dict[Endpoint, list[Endpoint]] = {}
    for node in builder.nodes.values():
        for out in node.outs:
            if node.inst is None:  # a kit's pass-through subsystem
                ports = ["i0"]
            elif node.id in builder.reads:  # a From reads its Goto's input
                deps[(node.id, out)] = [builder.driver[builder.reads[node.id]]]
                continue
            elif getattr(type(node.inst.impl), "bus_role", None) == "selector":
                deps[(node.id, out)] = [builder.element_source(node, out)]
                continue  # the compiler wires each element to its own source
            else:
                ports = node.inst.feedthrough.get(out, ())
            deps[(node.id, out)] = [builder.driver[(node.id, p)] for p in ports
                                    if (node.id, p) in builder.driver]
    return deps


def algebraic_loop(draw, builder: Builder) -> str | None:
    """An input wired from an output that reads that very input without delay."""
    deps = _direct(builder)
    readers: dict[Endpoint, list[Endpoint]] = {}
    for out, sources in deps.items():
        for src in sources:
            readers.setdefault(src, []).append(out)
    spots = []
    for node in _main(builder):
        for out in node.outs:
            for port in node.inst.feedthrough.get(out, ()):
                if port not in node.fixed and (node.id, port) in builder.driver:
                    spots.append((node, port, (node.id, out)))
    if not spots:
        return None
    node, port, start = pick(draw, spots)
    downstream, todo = {start}, [start]
    while todo:  # every output that reads `start` without delay, `start` included
        for nxt in readers.get(todo.pop(), ()):
            if nxt not in downstream:
                downstream.add(nxt)
                todo.append(nxt)
    width = builder.nodes[builder.driver[(node.id, port)][0]].outs[
        builder.driver[(node.id, port)][1]]
    same = sorted(e for e in downstream if builder.nodes[e[0]].outs[e[1]] == width)
    src = pick(draw, same or sorted(downstream))
    builder.driver[(node.id, port)] = src
    return f"{node.id}.{port} wired from {src[0]}.{src[1]}, which reads it directly"


def wrong_width(draw, builder: Builder) -> str | None:
    """An input fed a signal of a width the block's `sizes` refuses (with the widths of its
    other inputs, or with a second input made wider too)."""
    spots = []
    for node in _main(builder):
        ports = [p for p in node.inst.inputs if p not in node.fixed
                 and (node.id, p) in builder.driver]
        widths = {p: builder.nodes[builder.driver[(node.id, p)][0]].outs[
            builder.driver[(node.id, p)][1]] for p in node.inst.inputs
            if (node.id, p) in builder.driver}
        tries = [{port: width} for port in ports for width in WIDTHS]
        tries += [{a: 2, b: 3} for a, b in zip(ports, ports[1:])]
        for change in tries:
            try:
                node.inst.impl.sizes(node.inst.p, {**widths, **change})
            except Exception:  # noqa: BLE001 - refused: what we are after
                spots.append((node, change))
    if not spots:
        return None
    node, change = pick(draw, spots)
    for port, width in change.items():
        source = builder.add_constant([draw(small) for _ in range(width)])
        builder.driver[(node.id, port)] = (source.id, "y")
    return f"{node.id} fed widths {change}"


def lost_tag(draw, builder: Builder) -> str | None:
    """A From whose tag no Goto has."""
    node = builder.add_unwired("From", {"tag": draw(st.sampled_from(["nowhere", "A", "g"]))})
    return f"From {node.id} with tag {node.doc['params']['tag']!r}, which no Goto has"


def not_a_bus(draw, builder: Builder) -> str | None:
    """A BusSelector fed a plain signal."""
    outputs = [e for e in builder.outputs() if builder.nodes[e[0]].doc["type"] != "From"
               and getattr(registry.get(builder.nodes[e[0]].doc["type"]), "bus_role",
                           None) is None]  # a From may carry a bus its Goto reads
    if not outputs:
        return None
    node = builder.add_unwired("BusSelector", {"names": "a"})
    src = pick(draw, outputs)
    builder.driver[(node.id, "bus")] = src
    return f"BusSelector {node.id} fed {src[0]}.{src[1]}, not a bus"


BREAKS: tuple[Callable, ...] = (value_outside, values_clash, unconnected, algebraic_loop,
                                wrong_width, not_a_bus, lost_tag)


def break_one(draw, builder: Builder, how: Callable) -> str:
    """Break the graph `how` says; where that finds nothing to break, the next break in
    BREAKS that does (the last, a From with a lost tag, always does)."""
    start = BREAKS.index(how)
    for other in BREAKS[start:] + BREAKS[:start]:
        what = other(draw, builder)
        if what:
            return what
    raise AssertionError("lost_tag always breaks")
