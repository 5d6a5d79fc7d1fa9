"""Logic and memory blocks: Boolean combinations, a set/reset latch and a one-event delay.

Their inputs are logic signals (outputs of relational blocks, steps, other logic blocks),
which change only at events; so these blocks need no zero crossings of their own: their
discrete states are updated in the event iteration, which runs at every event.
"""
from __future__ import annotations

from blocksim.blocktypes.blockspec import BlockType, Emit, EventKind, Param, Port, Sizes, broadcast, size_of
from blocksim.compiler.limits import MAX_PORTS

OPERATORS = ("AND", "OR", "NAND", "NOR", "XOR", "NOT")


def _pick(seq: list[str], k: int) -> str:
    return seq[k] if len(seq) > 1 else seq[0]


def _common_width(widths: dict[str, int | None]) -> int:
    """The elementwise width of several inputs, each 1 (scalar expansion) or the same n."""
    known = {port: w or 1 for port, w in widths.items()}
    n = max(known.values(), default=1)
    for port, w in known.items():
        if w not in (1, n):
            raise ValueError(f"input '{port}' has width {w} where 1 or {n} are needed")
    return n


class LogicalOperator(BlockType):
    """Combine logic inputs: AND, OR, NAND, NOR, XOR (odd number true) or NOT.

    An input counts as true when it is nonzero; the output is 1.0 or 0.0, elementwise with
    scalar expansion. With a single input (other than NOT) the operator combines the
    elements of that vector into one value, as in Simulink. The block declares no zero
    crossings: its inputs are normally outputs of relational or logic blocks, which read
    latched signs and therefore change only at events, and every event re-evaluates the
    whole diagram; a continuous input would be seen only when something else causes an
    event, so compare it first with a RelationalOperator or CompareToConstant.
    """

    name = "LogicalOperator"
    category = "Logic"
    params = (
        Param("operator", "choice", "AND", "the Boolean operation", choices=OPERATORS),
        Param("inputs", "int", 2, "number of inputs u1..un (NOT always has one)", low=1,
              high=MAX_PORTS),
    )
    outputs = (Port("y", "1.0 where the operation is true, else 0.0"),)

    @staticmethod
    def count(p) -> int:
        return 1 if p.operator == "NOT" else int(p.inputs)

    def input_ports(self, p):
        return tuple(Port(f"u{i + 1}", "logic input (nonzero: true)")
                     for i in range(self.count(p)))

    def sizes(self, p, in_widths):
        n = _common_width(in_widths)
        if self.count(p) == 1 and p.operator != "NOT":
            n = 1  # reduction over the elements of the one input
        return Sizes({"y": n})

    def output(self, e: Emit):
        op = e.p.operator
        ports = [e.u[f"u{i + 1}"] for i in range(self.count(e.p))]
        lines = []
        for k, y in enumerate(e.y["y"]):
            if len(ports) == 1 and op != "NOT":
                terms = [f"({v} != 0.0)" for v in ports[0]]
            else:
                terms = [f"({_pick(u, k)} != 0.0)" for u in ports]
            if op == "NOT":
                test = f"not {terms[0]}"
            elif op == "XOR":
                test = " ^ ".join(terms)
            else:
                joined = (" and " if op in ("AND", "NAND") else " or ").join(terms)
                test = f"not ({joined})" if op in ("NAND", "NOR") else joined
            lines.append(f"{y} = (1.0 if {test} else 0.0)")
        return {"y": lines}


class SRFlipFlop(BlockType):
    """A set/reset latch: q becomes 1 when s is nonzero, 0 when r is nonzero.

    When s and r are both nonzero the latch keeps its state (neither input wins), so a
    held set cannot be cancelled by a reset pulse and vice versa. The state is discrete
    and changes in the event iteration, so the outputs change only at events and depend
    on s and r with a delay of one event pass: the latch breaks algebraic loops. The
    rule also applies at the start time.
    """

    name = "SRFlipFlop"
    category = "Logic"
    event_kinds = (
        EventKind("set", "q became 1 (s nonzero, r zero)"),
        EventKind("reset", "q became 0 (r nonzero, s zero)"),
    )
    params = (Param("initial", "bool", False, "initial value of q"),)
    inputs = (Port("s", "set (nonzero: true)"), Port("r", "reset (nonzero: true)"))
    outputs = (Port("q", "the latched state, 1.0 or 0.0"), Port("qbar", "1.0 - q"))

    def feedthrough(self, p):
        return {"q": (), "qbar": ()}

    def sizes(self, p, in_widths):
        n = _common_width(in_widths)
        return Sizes({"q": n, "qbar": n}, discrete=n)

    def initial_discrete(self, p, n):
        return [1.0 if p.initial else 0.0] * n

    def output(self, e: Emit):
        return {"q": [f"{y} = {m}" for y, m in zip(e.y["q"], e.m)],
                "qbar": [f"{y} = 1.0 - {m}" for y, m in zip(e.y["qbar"], e.m)]}

    def update(self, e: Emit):
        lines = []
        for k, m in enumerate(e.m):
            s, r = _pick(e.u["s"], k), _pick(e.u["r"], k)
            lines += [f"if {m} == 0.0 and {s} != 0.0 and {r} == 0.0:",
                      f"    {m} = 1.0; {e.event('set')}",
                      f"elif {m} != 0.0 and {r} != 0.0 and {s} == 0.0:",
                      f"    {m} = 0.0; {e.event('reset')}"]
        return lines


class Memory(BlockType):
    """Hold the input's value from just before the most recent event (its left limit).

    At the start of every event the block samples its input as it was before anything
    changed, and outputs that value until the next event (`initial` before the first).
    The output never depends on the current input, so like Modelica's pre() it breaks
    algebraic loops at events: y = Memory(y) + 1 counts events.
    """

    name = "Memory"
    category = "Discrete"
    params = (Param("initial", "vector", 0.0, "output before the first event"),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "u just before the most recent event"),)

    def feedthrough(self, p):
        return {"y": ()}

    def sizes(self, p, in_widths):
        n = max(in_widths.get("u") or 1, size_of(p.initial))
        if size_of(p.initial) not in (1, n) or (in_widths.get("u") or 1) not in (1, n):
            raise ValueError(f"'initial' has {size_of(p.initial)} elements but the input "
                             f"has width {in_widths.get('u')}")
        return Sizes({"y": n}, discrete=n)

    def initial_discrete(self, p, n):
        return broadcast(p.initial, n)

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def pre_event(self, e: Emit):
        return [f"{m} = {_pick(e.u['u'], k)}" for k, m in enumerate(e.m)]


BLOCK_TYPES = (LogicalOperator, SRFlipFlop, Memory,)
