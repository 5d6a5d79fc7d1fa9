"""Signal routing: Goto/From tags, a multiport switch, element selection and Merge.

Goto and From never reach the generated code: the compiler wires each From to its Goto's
signal while flattening (`blocksim.compiler.tags`). MultiportSwitch latches its selection
like Switch; Merge follows the conditional subsystem that ran last (whether each source
runs is handed to it by the compiler, `Emit.watch`). Indices are one-based throughout, as the
ports u1, u2, ... of Mux, Demux and these blocks are numbered.
"""
from __future__ import annotations

import numpy as np

from blocksim.blocktypes.blockspec import (BlockType, Emit, EventKind, Param, Port, Sizes, broadcast,
                                elementwise_width, lit, size_of)
from blocksim.compiler.limits import MAX_PORTS

VISIBILITIES = ("local", "scoped", "global")


def _tag_problem(tag: str) -> str | None:
    if not tag.isidentifier():
        return f"'tag' must be a name (letters, digits, _; not starting with a digit), got {tag!r}"
    return None


class Goto(BlockType):
    """Send the input to the From blocks with the same tag, without a wire.

    Visibility: "local" reaches Froms in the same subsystem level only, "scoped" also the
    subsystems nested inside that level, "global" the whole diagram. Two Gotos with one tag
    that some level could see both are an error, and so is a From that sees no Goto. A tag
    does not cross the boundary of a triggered or enabled subsystem (use its ports). The
    compiler turns each Goto/From pair into an ordinary connection, so bus element names
    and widths pass unchanged.
    """

    name = "Goto"
    category = "Signal Routing"
    params = (
        Param("tag", "text", "A", "the name Froms use to read this signal"),
        Param("visibility", "choice", "local", "which levels see the tag: this one (local), "
              "this one and the subsystems inside it (scoped), all (global)",
              choices=VISIBILITIES),
    )
    inputs = (Port("u", "the signal to send"),)

    def check(self, p):
        return _tag_problem(p.tag)


class From(BlockType):
    """Output the signal of the Goto with the same tag (see Goto for visibility)."""

    name = "From"
    category = "Signal Routing"
    params = (Param("tag", "text", "A", "the tag of the Goto to read"),)
    outputs = (Port("y", "the Goto's input signal"),)

    def check(self, p):
        return _tag_problem(p.tag)


def _data_ports(n: int) -> tuple[Port, ...]:
    return tuple(Port(f"u{i + 1}", f"data input {i + 1}") for i in range(n))


class MultiportSwitch(BlockType):
    """Pass the data input selected by the control: u1 for control 1, u2 for 2, and so on.

    The selection is round(control) (one-based; a half-integer goes up), clipped to 1..n:
    a control below 1 selects u1, above n selects un. It is latched between events: the
    control crossing a half-integer k + 0.5 between two inputs is a located zero crossing,
    so the output switches at that exact instant and a step never straddles a switch.
    Data inputs of width 1 expand to the others' width; the control is a scalar.
    """

    name = "MultiportSwitch"
    category = "Signal Routing"
    event_kinds = (
        EventKind("switch", "another data input is selected (the control crossed a half-"
                            "integer)"),
    )
    params = (Param("inputs", "int", 2, "number of data inputs u1..un", low=1, high=MAX_PORTS),)
    inputs = (Port("control", "selects a data input by its number (rounded, clipped to 1..n)"),
              Port("u1", "data input 1; one port u1, u2, ... per input"),
              Port("u2", "data input 2 (with the default 2 inputs)"))
    outputs = (Port("y", "the selected data input"),)
    zc_direction = -1  # only leaving the current selection matters

    def input_ports(self, p):
        return (self.inputs[0], *_data_ports(p.inputs))

    def feedthrough(self, p):
        # The control acts through the latched selection only (as Switch's control).
        return {"y": tuple(f"u{i + 1}" for i in range(p.inputs))}

    def sizes(self, p, in_widths):
        if (in_widths.get("control") or 1) != 1:
            raise ValueError(f"the control input must be a scalar signal, got width "
                             f"{in_widths['control']}")
        data = {port: w for port, w in in_widths.items() if port != "control"}
        return Sizes({"y": elementwise_width(data)}, discrete=1, zero_crossings=2)

    def output(self, e: Emit):
        n, k = e.p.inputs, e.m[0]
        lines = []
        for j, y in enumerate(e.y["y"]):
            expr = _pick(e.u[f"u{n}"], j)
            for i in range(n - 1, 0, -1):
                expr = f"({_pick(e.u[f'u{i}'], j)} if {k} < {i + 0.5!r} else {expr})"
            lines.append(f"{y} = {expr}")
        return {"y": lines}

    def zero_crossing(self, e: Emit):
        c, k, n = e.u["control"][0], e.m[0], float(e.p.inputs)
        return [f"{e.g[0]} = ({c} - ({k} - 0.5)) if {k} > 1.5 else 1.0",
                f"{e.g[1]} = (({k} + 0.5) - {c}) if {k} < {n - 0.5!r} else 1.0"]

    def update(self, e: Emit):
        c, k, n = e.u["control"][0], e.m[0], float(e.p.inputs)
        zn_lo, zn_hi, var = e.zn[0], e.zn[1], f"_k{e.index}"
        nearest = f"min({n!r}, max(1.0, float(np.floor({c} + 0.5))))"
        return [
            f"if {k} == 0.0 or {zn_lo} < 0.0 or {zn_hi} <= 0.0:",  # else: stays put
            f"    if {k} == 0.0:",  # the first update (see initial_discrete)
            f"        {var} = {nearest}",
            f"    elif {zn_hi} <= 0.0 and {k} < {n!r}:",  # at least one up, further if it jumped
            f"        {var} = min({n!r}, max({k} + 1.0, {nearest}))",
            f"    elif {zn_lo} < 0.0 and {k} > 1.0:",
            f"        {var} = max(1.0, min({k} - 1.0, {nearest}))",
            "    else:",
            f"        {var} = {k}",
            f"    if {var} != {k}:",
            f"        {k} = {var}",
            "        if init: changed = True",  # setting up the selection is no event
            f"        else: {e.event('switch')}",
        ]

    # 0.0: no selection yet; the first update (at the start) rounds the control.
    def initial_discrete(self, p, n):
        return [0.0] * n


def _pick(seq: list[str], k: int) -> str:
    return seq[k] if len(seq) > 1 else seq[0]


class Selector(BlockType):
    """Pick elements of the input vector: y[k] = u[indices[k]], indices one-based.

    Indices may repeat and come in any order; the output is as wide as `indices`. An index
    above the input's width is a compile error naming the block.
    """

    name = "Selector"
    category = "Signal Routing"
    params = (Param("indices", "vector", [1.0], "the input elements to output, one-based "
                    "(1 is the first element)"),)
    inputs = (Port("u", "the vector to pick from"),)
    outputs = (Port("y", "the picked elements, in the order of 'indices'"),)

    def _indices(self, p) -> list[int]:
        return [int(i) for i in np.atleast_1d(np.asarray(p.indices, dtype=float)).ravel()]

    def check(self, p):
        values = np.atleast_1d(np.asarray(p.indices, dtype=float)).ravel()
        bad = [v for v in values if v < 1 or v != int(v)]
        if bad:
            return (f"'indices' must be whole numbers from 1 (one-based), got {bad[0]:g}")
        return None

    def sizes(self, p, in_widths):
        width, indices = in_widths.get("u"), self._indices(p)
        if width is not None and max(indices) > width:
            raise ValueError(f"'indices' asks for element {max(indices)} of an input of width "
                             f"{width} (indices are one-based)")
        return Sizes({"y": len(indices)})

    def output(self, e: Emit):
        u = e.u["u"]
        return {"y": [f"{y} = {u[i - 1]}" for y, i in zip(e.y["y"], self._indices(e.p))]}


class Merge(BlockType):
    """Output the input whose conditional subsystem ran most recently.

    Each input must come from an output of an EnabledSubsystem or a TriggeredSubsystem
    (through subsystem ports or Goto/From). Merge switches to an input when its subsystem
    starts running: an enabled one when it becomes enabled (at the start, or at the
    located event of its enable signal), a triggered one at each trigger edge. It then
    follows that input (a running enabled subsystem's output live; afterwards the held or
    reset value its subsystem shows) until another source starts. If several start at one
    event, the highest-numbered input wins. Before any source has run, the output is
    `initial`.
    """

    name = "Merge"
    category = "Signal Routing"
    event_kinds = (
        EventKind("select", "the output switched to another input: its subsystem started "
                            "running"),
    )
    params = (Param("inputs", "int", 2, "number of inputs u1..un", low=1, high=MAX_PORTS),
              Param("initial", "vector", 0.0, "the output before any source subsystem has "
                    "run"))
    inputs = (Port("u1", "output of an enabled or triggered subsystem; one port u1, u2, ... "
                   "per input"),
              Port("u2", "second input (with the default 2 inputs)"))
    outputs = (Port("y", "the input of the subsystem that ran last"),)
    watches_sources = True  # the compiler fills Emit.watch: is each source running

    def input_ports(self, p):
        return _data_ports(p.inputs)

    def sizes(self, p, in_widths):
        n = elementwise_width({**in_widths, "initial": size_of(p.initial)})
        # slot 0: the selected input (1..n; 0 none yet), then whether each source ran
        return Sizes({"y": n}, discrete=1 + p.inputs)

    def output(self, e: Emit):
        n, sel = e.p.inputs, e.m[0]
        initial = broadcast(e.p.initial, len(e.y["y"]))
        lines = []
        for j, y in enumerate(e.y["y"]):
            expr = lit(initial[j])
            for i in range(n, 0, -1):
                expr = f"({_pick(e.u[f'u{i}'], j)} if {sel} == {float(i)!r} else {expr})"
            lines.append(f"{y} = {expr}")
        return {"y": lines}

    def pre_event(self, e: Emit):
        # Whether each source ran at the event's left limit: "starts" compares with it.
        return [f"{last} = {mode}" for mode, last in zip(e.watch, e.m[1:])]

    def update(self, e: Emit):
        var = f"_s{e.index}"
        lines = [f"{var} = 0.0"]
        for i, (mode, last) in enumerate(zip(e.watch, e.m[1:])):
            lines.append(f"if {mode} != 0.0 and {last} == 0.0: {var} = {float(i + 1)!r}")
        return lines + [f"if {var} != 0.0 and {var} != {e.m[0]}:",
                        f"    {e.m[0]} = {var}",
                        "    if init: changed = True",
                        f"    else: {e.event('select')}"]


BLOCK_TYPES = (Goto, From, MultiportSwitch, Selector, Merge)
