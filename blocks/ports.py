"""Subsystems and their Inport/Outport blocks; the compiler flattens them away.

A Subsystem carries a nested diagram; each Inport/Outport inside becomes a port of the
subsystem named by that block's id (ordered by the `index` parameter, then file order).

A TriggeredSubsystem or an EnabledSubsystem is a subsystem that runs only on a condition,
as in Simulink (docs/semantics.md). The compiler puts internal blocks around its contents,
declared here too but not registered: a gate that watches the `trigger` or `enable` input,
and holds on its ports.
"""
from __future__ import annotations

from typing import ClassVar

from blocksim.physical.declare import Connector
from blocksim.physical.domains import DOMAINS
from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes, broadcast, size_of
from blocksim.blocktypes.sampletime import INHERITED, SampleTime
from blocksim.compiler.limits import MAX_PORTS

from .continuous import _EDGES, _edge_condition


class Subsystem(BlockType):
    """A group of blocks shown as one; its ports are the ids of its Inport/Outport blocks."""

    name = "Subsystem"
    category = "Ports & Subsystems"
    has_diagram: ClassVar[bool] = True


class TriggeredSubsystem(Subsystem):
    """A subsystem that runs once at each edge of its `trigger` input, and holds in between.

    At a trigger edge (a located event of the trigger signal through 0, in the chosen
    direction; none at the start time), the subsystem samples its inputs, its blocks run
    once as discrete blocks would at a sample hit (outputs, then updates), and its outputs
    take the new values; between edges every output holds. Its blocks must not have
    continuous states, and its discrete blocks inherit their rate (sample_time -1): they
    step once per trigger. Its outputs are `initial` (the Outports' own) before the first.
    """

    name = "TriggeredSubsystem"
    event_kinds = (
        EventKind("trigger", "an edge of the `trigger` input: the subsystem ran once"),
    )
    inputs = (Port("trigger", "runs the subsystem at its edges (besides its Inports)"),)
    params = (Param("edge", "choice", "rising", "which edge of the trigger runs the subsystem",
                    choices=_EDGES),)

    @classmethod
    def locates_crossings(cls) -> bool:
        return True  # its gate locates the trigger's crossings, logged under its id


class EnabledSubsystem(Subsystem):
    """A subsystem that runs while its `enable` input is positive, and is frozen otherwise.

    The enable signal is watched by a located event at 0, so the subsystem switches at the
    exact instant. While disabled, its continuous states do not change, its discrete
    blocks skip their hits, and its outputs hold their last value (or, with
    `outputs_when_disabled` = "reset", the Outports' `initial`). When enabled again its
    states go on from where they were (or, with `states_when_enabling` = "reset", restart
    from their initial values).
    """

    name = "EnabledSubsystem"
    event_kinds = (
        EventKind("enable", "the `enable` input became positive (or is, at the start): the "
                            "subsystem runs"),
        EventKind("disable", "the `enable` input fell to 0 or below: the subsystem is frozen"),
    )
    inputs = (Port("enable", "runs the subsystem while positive (besides its Inports)"),)
    params = (
        Param("states_when_enabling", "choice", "held", "states go on from where they were, "
              "or restart from their initial values", choices=("held", "reset")),
        Param("outputs_when_disabled", "choice", "held", "outputs hold their last value, or "
              "show the Outports' initial values", choices=("held", "reset")),
    )

    @classmethod
    def locates_crossings(cls) -> bool:
        return True  # its gate locates the enable signal's crossings, logged under its id


class Inport(BlockType):
    """A subsystem input: the signal wired to the subsystem port of this block's id."""

    name = "Inport"
    category = "Ports & Subsystems"
    params = (Param("index", "int", 0, "ordering among the subsystem's inputs (0: file order)"),)
    outputs = (Port("y", "the signal entering the subsystem"),)


class Outport(BlockType):
    """A subsystem output: offered outside as the subsystem port of this block's id."""

    name = "Outport"
    category = "Ports & Subsystems"
    params = (Param("index", "int", 0, "ordering among the subsystem's outputs (0: file order)"),
              Param("initial", "vector", 0.0, "in a triggered or enabled subsystem: the output "
                    "before it first runs (and while disabled, if it resets)"))
    inputs = (Port("u", "the signal leaving the subsystem"),)


class ConnectionPort(BlockType):
    """A subsystem's physical port (Simscape's Connection Port).

    The components connected to it inside are connected to whatever the subsystem port of
    this block's id is connected to outside. It is a junction, not a component."""

    name = "ConnectionPort"
    category = "Ports & Subsystems"
    params = (Param("domain", "choice", "electrical", "the physical domain of the port",
                    choices=tuple(DOMAINS)),)

    def connector_ports(self, p):
        return (Connector("p", p.domain, "the port, seen inside the subsystem"),)


# ----- internal blocks the compiler inserts (not registered: no file names them) -----------
class TriggerGate(BlockType):
    """Watches a triggered subsystem's trigger input; at an edge it raises the flag (its
    discrete slot) that makes the engine run the subsystem's rate once."""

    name = "TriggerGate"
    category = "Ports & Subsystems"
    event_kinds = TriggeredSubsystem.event_kinds  # logged under the subsystem's id
    params = (Param("edge", "choice", "rising", "", choices=_EDGES),)
    inputs = (Port("trigger", "trigger signal"),)

    def sizes(self, p, in_widths):
        if (in_widths.get("trigger") or 1) != 1:
            raise ValueError("the trigger input must be a scalar signal")
        return Sizes({}, discrete=1, zero_crossings=1)

    def zero_crossing(self, e: Emit):
        return [f"{e.g[0]} = {e.u['trigger'][0]}"]

    def update(self, e: Emit):
        fire = _edge_condition(e.p.edge, e.zo[0], e.zn[0])
        return [f"if not init and {fire}:", f"    {e.m[0]} = 1.0; {e.event('trigger')}"]


class EnableGate(BlockType):
    """Watches an enabled subsystem's enable input; its discrete slot is 1.0 while enabled.
    At the enabling instant the compiler's reset lines (Emit.resets) run."""

    name = "EnableGate"
    category = "Ports & Subsystems"
    event_kinds = EnabledSubsystem.event_kinds  # logged under the subsystem's id
    inputs = (Port("enable", "enable signal"),)

    def sizes(self, p, in_widths):
        if (in_widths.get("enable") or 1) != 1:
            raise ValueError("the enable input must be a scalar signal")
        return Sizes({}, discrete=1, zero_crossings=1)

    def zero_crossing(self, e: Emit):
        return [f"{e.g[0]} = {e.u['enable'][0]}"]

    def update(self, e: Emit):
        mode = e.m[0]
        lines = [f"if {e.zn[0]} > 0.0 and {mode} == 0.0:",
                 f"    {mode} = 1.0; {e.event('enable')}"]
        lines += [f"    {line}" for line in e.resets]
        lines += [f"elif {e.zn[0]} <= 0.0 and {mode} == 1.0:",
                  f"    {mode} = 0.0; {e.event('disable')}"]
        return lines


class TriggeredHold(BlockType):
    """A port of a triggered subsystem: samples its input when the subsystem runs and holds
    it (a zero-order hold on the subsystem's trigger instead of a clock)."""

    name = "TriggeredHold"
    category = "Ports & Subsystems"
    discrete = True
    params = (Param("initial", "vector", 0.0, ""),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "held input"),)

    def sample_time(self, p):
        return SampleTime(INHERITED)  # the compiler gives it the subsystem's trigger rate

    def sizes(self, p, in_widths):
        n = max(in_widths.get("u") or 1, size_of(p.initial))
        return Sizes({"y": n}, discrete=n)

    def initial_discrete(self, p, n):
        return broadcast(p.initial, n)

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def sample_output(self, e: Emit):
        u = e.u["u"] * len(e.m) if len(e.u["u"]) == 1 else e.u["u"]
        return {"y": [f"{m} = {v}" for m, v in zip(e.m, u)]}


class EnabledHold(BlockType):
    """An output of an enabled subsystem: the inner signal while enabled; while disabled
    the value it had just before (held at every event's left limit), or `initial`."""

    name = "EnabledHold"
    category = "Ports & Subsystems"
    params = (Param("initial", "vector", 0.0, ""),
              Param("reset", "bool", False, "show `initial` while disabled"))
    inputs = (Port("u", "inner signal"),)
    outputs = (Port("y", "the subsystem's output"),)

    def sizes(self, p, in_widths):
        n = in_widths.get("u") or 1
        return Sizes({"y": n}, discrete=n)

    def initial_discrete(self, p, n):
        return broadcast(p.initial, n)

    def output(self, e: Emit):
        return {"y": [f"{y} = {u} if {e.gate} != 0.0 else {m}"
                      for y, u, m in zip(e.y["y"], e.u["u"], e.m)]}

    def pre_event(self, e: Emit):
        if e.p.reset:
            return []
        return [f"if {e.gate} != 0.0: {m} = {u}" for m, u in zip(e.m, e.u["u"])]


INTERNAL_TYPES = (TriggerGate, EnableGate, TriggeredHold, EnabledHold)


class Placeholder(BlockType):
    """Stands for a block an import could not translate; a diagram holding one never runs.

    A Stateflow chart, a MATLAB Function, an S-Function, a masked block with
    initialization code: the placeholder keeps the original's ports inside a subsystem of the same name, wired from that
    subsystem's Inports to its Outports, so the diagram around it stays as drawn; but a
    diagram holding one never compiles: `validate` and `run` name it and what it stands
    for until its contents are built in the subsystem and it is deleted."""

    name = "Placeholder"
    category = "Ports & Subsystems"
    params = (Param("inputs", "int", 1, "number of inputs u1, u2, ...", low=0, high=MAX_PORTS),
              Param("outputs", "int", 1, "number of outputs y1, y2, ...", low=0, high=MAX_PORTS),
              Param("stands_for", "text", "", "what the original block was (type and name)"),
              Param("reason", "text", "", "why it was not translated"))

    def input_ports(self, p):
        return tuple(Port(f"u{k + 1}", f"input {k + 1}") for k in range(int(p.inputs)))

    def output_ports(self, p):
        return tuple(Port(f"y{k + 1}", f"output {k + 1}") for k in range(int(p.outputs)))

    def check(self, p):
        what = p.stands_for or "an untranslated block"
        why = f" ({p.reason})" if p.reason else ""
        return (f"placeholder for {what}{why}: build its contents in this subsystem "
                "and delete the placeholder")

    def sizes(self, p, in_widths):  # (never reached: `check` refuses every instance)
        return Sizes({f"y{k + 1}": 1 for k in range(int(p.outputs))})


BLOCK_TYPES = (Subsystem, TriggeredSubsystem, EnabledSubsystem, Inport, Outport, ConnectionPort,
               Placeholder)
