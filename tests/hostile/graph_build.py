"""A random diagram that compiles by construction, built block by block (`Builder`).

Each block has parameters its declaration accepts (graph_params.valid_instance). Its inputs
are wired to outputs of blocks placed before it, or to fresh sources, whose widths the
block's own `sizes` accepts: the builder knows every output's width as it goes, because it
asks each block, as the compiler will. Some inputs are then rewired to an output that reads
no input directly (an integrator's, a unit delay's) of the same width, anywhere in the
graph, itself included: feedback, and never an algebraic loop (kept where the compiler's
own pass over the widths, `graph.resolve_sizes`, finds them unchanged: a loop that nothing
fixes the width of settles at 1). Discrete blocks that inherit
their rate get a period where their inputs would not give them a discrete one (the
compiler's own `rates.resolve`). Blocks that need company get it: a BusSelector reads a
BusCreator with the names it selects, a From reads a Goto of its own tag, a Merge reads
enabled subsystems, an AlgebraicConstraint closes its loop through an Expression.

`triggered`: everything but the first source will run inside a TriggeredSubsystem, so
only blocks that can run at a trigger are placed (no continuous states, no function of
time, discrete blocks with sample_time -1) and fresh sources after the first are Constants.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from blocksim.blocktypes import registry
from blocksim.blocktypes.sampletime import (CONSTANT, CONTINUOUS_TIME, DISCRETE, INHERITED,
                                            INHERITED_TIME, SampleTime)
from blocksim.blocktypes.blockspec import Sizes, size_of
from blocksim.compiler.graph import resolve_sizes
from blocksim.compiler.rates import resolve
from blocksim.errors import CompileError
from hostile.graph_params import (SAMPLE_TIMES, Instance, chance, pick, problem, small,
                                  valid_instance)

SOURCE_TYPES = ("Constant", "Clock", "Sine", "Step", "Ramp", "Pulse")
GATES = ({"type": "Pulse", "params": {"period": 0.3, "width": 40.0}},
         {"type": "Sine", "params": {"frequency": 2.0}},
         {"type": "Step", "params": {"time": 0.5}})
WIRING_TRIES = 3
FEEDBACK_SHARE = 4  # about one input in this many is rewired to a delayed output

Endpoint = tuple[str, str]


class _PassThrough:
    """The widths of a kit's pass-through subsystem (an Inport wired to an Outport)."""

    @staticmethod
    def sizes(p, in_widths):
        return Sizes({"o0": in_widths.get("i0")})


_PASS_THROUGH = _PassThrough()


@dataclass
class Node:
    """A placed block: its document, its instance (None: a subsystem of a kit), its output
    widths, whether it has continuous states, and which of its inputs a kit wired."""

    id: str
    doc: dict[str, Any]
    inst: Instance | None
    outs: dict[str, int]
    states: int = 0
    main: bool = True  # drawn from the types (after the fresh sources in the document)
    fixed: set[str] = field(default_factory=set)
    delayed: set[str] = field(default_factory=set)  # outputs that read no input directly

    def declared_rate(self) -> SampleTime:
        """Its own sample time, as the compiler reads it (`sampling.resolve_sampling`)."""
        if self.inst is None or self.states:  # a kit's subsystem: taken as continuous
            return CONTINUOUS_TIME
        impl, p = self.inst.impl, self.inst.p
        return impl.sample_time(p) if impl.is_discrete(p) else SampleTime(impl.rate)


class Builder:
    def __init__(self, draw, triggered: bool = False):
        self.draw = draw
        self.triggered = triggered
        self.nodes: dict[str, Node] = {}
        self.driver: dict[Endpoint, Endpoint] = {}  # (block, input) -> (block, output)
        self.reads: dict[str, Endpoint] = {}  # a From -> the input of its Goto
        self.count = {"b": 0, "s": 0}

    # ----- placing blocks -----

    def _id(self, prefix: str) -> str:
        self.count[prefix] = self.count.get(prefix, 0) + 1
        return f"{prefix}{self.count[prefix] - 1}"

    def _instance(self, type_name: str, fixed: dict[str, Any] | None = None
                  ) -> Instance | None:
        return valid_instance(self.draw, type_name, fixed or self._fixed_params(type_name))

    def _fixed_params(self, type_name: str) -> dict[str, Any]:
        if self.triggered and any(prm.name == "sample_time"
                                  for prm in registry.get(type_name).params):
            return {"sample_time": -1}
        return {}

    def _fresh(self, k: int) -> Node | None:
        """A new source (not yet placed): any source type; a Constant inside a trigger."""
        kind = "Constant" if self.triggered and self.count["s"] + k > 0 else \
            pick(self.draw, SOURCE_TYPES)
        inst = self._instance(kind, {})
        if inst is None:
            return None
        node = Node(f"s{self.count['s'] + k}", {"type": kind, "params": inst.params}, inst,
                    {}, main=False)
        return node if self._size(node, {}) else None

    def _size(self, node: Node, in_widths: dict[str, int]) -> bool:
        """Ask the block its output widths for these input widths; False if it refuses."""
        try:
            sizes = node.inst.impl.sizes(node.inst.p, in_widths)
            outs = {port: sizes.outputs[port] for port in node.inst.outputs}
        except Exception:  # noqa: BLE001 - what the compiler refuses, naming the block
            return False
        if not all(isinstance(w, int) and w > 0 for w in outs.values()):
            return False
        node.outs, node.states = outs, sizes.states
        return self._broadcasts(node) and self._runs_here(node)

    @staticmethod
    def _broadcasts(node: Node) -> bool:
        """A per-element parameter (a vector that is not a table) has one value, or one
        per element of an output: the code the block generates broadcasts it so."""
        widths = set(node.outs.values())
        for prm in type(node.inst.impl).params:
            if prm.kind == "vector" and not prm.table and prm.name != "sample_time":
                size = size_of(node.inst.p[prm.name])
                if size > 1 and widths and size not in widths:
                    return False
        return True

    def _place(self, node: Node) -> Node:
        node.doc = {"id": node.id, **node.doc}
        if node.inst is not None:
            node.delayed = {out for out in node.outs if not node.inst.feedthrough.get(out)}
        self.nodes[node.id] = node
        return node

    def _outputs(self) -> list[Endpoint]:
        return [(node.id, out) for node in self.nodes.values() for out in node.outs]

    def _wire(self, node: Node, ports: list[str]) -> bool:
        """Wire `ports` of `node` to earlier outputs or fresh sources whose widths it takes."""
        earlier = self._outputs()
        for attempt in range(WIRING_TRIES + 4):
            plan: dict[str, Endpoint | Node] = {}
            fresh: list[Node] = []
            for port in ports:
                uniform = attempt >= WIRING_TRIES  # last resort: fresh sources of one width
                if earlier and not uniform and not chance(self.draw, 6):
                    plan[port] = pick(self.draw, earlier)
                    continue
                src = self._fresh(len(fresh)) if not uniform else self._constant(
                    attempt - WIRING_TRIES + 1, len(fresh))
                if src is None:
                    break
                fresh.append(src)
                plan[port] = src
            else:
                widths = {port: (self.nodes[src[0]].outs[src[1]] if isinstance(src, tuple)
                                 else src.outs["y"]) for port, src in plan.items()}
                if self._size(node, widths):
                    for src in fresh:
                        self.count["s"] += 1
                        self._place(src)
                    for port, src in plan.items():
                        self.driver[(node.id, port)] = src if isinstance(src, tuple) else \
                            (src.id, "y")
                    return True
        return False

    def _constant(self, width: int, k: int) -> Node | None:
        return self._constant_node([self.draw(small) for _ in range(width)], k)

    def _constant_node(self, value: list[float], k: int) -> Node | None:
        inst, _ = problem("Constant", {"value": value[0] if len(value) == 1 else value})
        node = Node(f"s{self.count['s'] + k}", {"type": "Constant", "params": inst.params},
                    inst, {}, main=False)
        return node if self._size(node, {}) else None

    def add_constant(self, value: list[float]) -> Node:
        """Place a Constant of this value, read by nothing yet."""
        node = self._constant_node(value, 0)
        self.count["s"] += 1
        return self._place(node)

    def add_unwired(self, type_name: str, params: dict[str, Any]) -> Node:
        """Place a block with these parameters (which its declaration must accept) and no
        input wired yet."""
        inst, why = problem(type_name, params)
        if inst is None:
            raise ValueError(f"{type_name} {params}: {why}")
        node = Node(self._id("b"), {"type": type_name, "params": inst.params}, inst, {})
        if not self._size(node, {}):
            node.outs = {port: 1 for port in inst.outputs}
        return self._place(node)

    def add(self, type_name: str) -> Node | None:
        """Place a block of this type with its inputs wired (None: it could not be)."""
        block_type = registry.get(type_name)
        if getattr(block_type, "bus_role", None) == "selector":
            return self._selector()
        if type_name == "From":
            return self._from()
        if getattr(block_type, "watches_sources", False):
            return None if self.triggered else self._merge(type_name)
        fixed = self._fixed_params(type_name)
        if type_name == "Goto":  # a tag of its own: two Gotos of one tag clash
            fixed = {**fixed, "tag": f"g{self.count['b']}"}
        inst = self._instance(type_name, fixed)
        if inst is None:
            return None
        node = Node(self._id("b"), {"type": type_name, "params": inst.params}, inst, {})
        if block_type.solves_loop:
            return self._constraint(node)
        if not self._wire(node, list(inst.inputs)):
            return None
        return self._place(node)

    def _runs_here(self, node: Node) -> bool:
        """Inside a trigger only blocks without a rate of their own run (no states)."""
        if not self.triggered or node.inst is None:
            return True
        try:
            return node.declared_rate().kind in (INHERITED, CONSTANT)
        except ValueError:
            return False

    # ----- blocks that need company -----

    def _constraint(self, node: Node) -> Node | None:
        """An AlgebraicConstraint solving f(z) = z**3 + z - c = 0 through an Expression."""
        if not self._size(node, {port: 1 for port in node.inst.inputs}):
            return None
        c = self.draw(small)
        inst, _ = problem("Expression", {"formula": f"u ** 3 + u - ({c!r})"})
        f = Node(f"f{node.id}", {"type": "Expression", "params": inst.params}, inst, {},
                 main=False, fixed={"u"})
        unknown = node.inst.outputs[0]
        if not self._size(f, {"u": node.outs[unknown]}):
            return None
        self._place(node)
        self._place(f)
        self.driver[(f.id, "u")] = (node.id, unknown)
        self.driver[(node.id, node.inst.inputs[0])] = (f.id, "y")
        node.fixed = set(node.inst.inputs)
        return node

    def _selector(self) -> Node | None:
        """A BusSelector of some elements of a BusCreator placed before it (or now)."""
        creators = [n for n in self.nodes.values() if n.inst is not None and getattr(
            type(n.inst.impl), "bus_role", None) == "creator"]
        creator = pick(self.draw, creators) if creators else self.add("BusCreator")
        if creator is None:
            return None
        names = creator.inst.impl.element_names(creator.inst.p)
        picked = [n for n in names if chance(self.draw, 2)] or [pick(self.draw, names)]
        inst, _ = problem("BusSelector", {"names": ", ".join(picked)})
        if inst is None:
            return None
        node = Node(self._id("b"), {"type": "BusSelector", "params": inst.params}, inst, {},
                    fixed={"bus"})
        sources = [self.driver[(creator.id, f"u{names.index(n) + 1}")] for n in picked]
        widths = {f"e{k + 1}": self.nodes[src[0]].outs[src[1]] for k, src in enumerate(sources)}
        if not self._size(node, widths):
            return None
        self.driver[(node.id, "bus")] = (creator.id, "y")
        return self._place(node)

    def _from(self) -> Node | None:
        """A From reading a Goto placed before it (or now), by that Goto's own tag."""
        gotos = [n for n in self.nodes.values() if n.doc["type"] == "Goto"]
        goto = pick(self.draw, gotos) if gotos else self.add("Goto")
        if goto is None:
            return None
        inst, _ = problem("From", {"tag": goto.inst.p.tag})
        node = Node(self._id("b"), {"type": "From", "params": inst.params}, inst, {})
        src = self.driver[(goto.id, "u")]
        node.outs = {"y": self.nodes[src[0]].outs[src[1]]}
        self.reads[node.id] = (goto.id, "u")
        self._place(node)
        node.delayed = set()  # it reads its Goto's input directly
        return node

    def _merge(self, type_name: str) -> Node | None:
        """A Merge whose every input is the output of a pass-through EnabledSubsystem."""
        inst = self._instance(type_name)
        if inst is None:
            return None
        node = Node(self._id("b"), {"type": type_name, "params": inst.params}, inst, {},
                    fixed=set(inst.inputs))
        subsystems = []
        for port in inst.inputs:
            sub = Node(self._id("m"), {"type": "EnabledSubsystem", "diagram": {
                "blocks": [{"id": "i0", "type": "Inport", "params": {}},
                           {"id": "o0", "type": "Outport", "params": {}}],
                "wires": [{"src": "i0.y", "dst": "o0.u"}]}}, None, {}, main=False,
                fixed={"enable"})
            kind = pick(self.draw, GATES)
            lit, _ = problem(kind["type"], dict(kind["params"]))
            gate = self._place(Node(self._id("e"), {"type": kind["type"], "params": lit.params},
                                    lit, {"y": 1}, main=False))
            earlier = self._outputs()
            src = pick(self.draw, earlier) if earlier else None
            if src is None or (gate.id, "y") == src:
                return None
            sub.outs = {"o0": self.nodes[src[0]].outs[src[1]]}
            subsystems.append((sub, src, gate))
        if not self._size(node, {port: sub.outs["o0"] for port, (sub, _, _) in
                                 zip(inst.inputs, subsystems)}):
            return None
        for port, (sub, src, gate) in zip(inst.inputs, subsystems):
            self._place(sub)
            self.driver[(sub.id, "i0")] = src
            self.driver[(sub.id, "enable")] = (gate.id, "y")
            self.driver[(node.id, port)] = (sub.id, "o0")
        return self._place(node)

    # ----- the whole graph -----

    def feedback(self) -> None:
        """Rewire some inputs to an output of the same width that reads no input directly,
        where the compiler finds the widths the builder knows: a loop whose widths nothing
        in it fixes (no parameter, no source) settles at width 1 whatever was there before."""
        delayed = [(node.id, out) for node in self.nodes.values() if node.main
                   for out in sorted(node.delayed)]
        if not delayed:
            return
        for (block, port), src in list(self.driver.items()):
            node = self.nodes[block]
            if not node.main or port in node.fixed or not chance(self.draw, FEEDBACK_SHARE):
                continue
            width = self.nodes[src[0]].outs[src[1]]
            same = [d for d in delayed if self.nodes[d[0]].outs[d[1]] == width]
            if same:
                self.driver[(block, port)] = pick(self.draw, same)
                if not self._widths_hold():
                    self.driver[(block, port)] = src

    def element_source(self, selector: Node, out: str) -> Endpoint:
        """The output that makes the bus element a BusSelector's output `out` selects."""
        creator = self.nodes[self.driver[(selector.id, "bus")][0]]
        names = creator.inst.impl.element_names(creator.inst.p)
        name = selector.inst.impl.element_names(selector.inst.p)[int(out[1:]) - 1]
        return self.driver[(creator.id, f"u{names.index(name) + 1}")]

    def _widths_hold(self) -> bool:
        """Whether the compiler's own pass over the widths (`graph.resolve_sizes`, from
        unknown widths on, in the order of the document) finds the builder's."""
        blocks, drivers = [], {}
        for node in self.ordered():
            if node.inst is None:  # a kit's pass-through subsystem
                inputs, impl, p = ["i0"], _PASS_THROUGH, None
            elif node.id in self.reads:  # the compiler wires a From to its Goto's source
                inputs, impl, p = ["u"], node.inst.impl, node.inst.p
                drivers[(node.id, "u")] = self.driver[self.reads[node.id]]
            elif getattr(type(node.inst.impl), "bus_role", None) == "selector":
                inputs, impl, p = [f"e{k + 1}" for k in range(len(node.outs))], \
                    node.inst.impl, node.inst.p  # the compiler wires each element apart
                for k in range(len(node.outs)):
                    drivers[(node.id, f"e{k + 1}")] = self.element_source(node, f"y{k + 1}")
            else:
                inputs, impl, p = node.inst.inputs, node.inst.impl, node.inst.p
            for port in inputs:
                drivers.setdefault((node.id, port), self.driver.get((node.id, port)))
            blocks.append(SimpleNamespace(path=node.id, inputs=inputs, twin=None, impl=impl,
                                          p=p))
        try:
            sizes = resolve_sizes(SimpleNamespace(blocks=blocks, drivers=drivers, source=None))
        except CompileError:
            return False
        return all(dict(sizes[node.id].outputs) == node.outs for node in self.ordered()
                   if node.outs)

    def settle_rates(self) -> None:
        """A discrete block inheriting a rate that is not discrete gets a period of its own."""
        if self.triggered:  # every block inside runs at the trigger
            return
        periods = [t for t in SAMPLE_TIMES if t != -1]
        for _ in range(len(self.nodes) + 2):
            declared = {}
            for node in self.nodes.values():
                try:
                    declared[node.id] = node.declared_rate()
                except ValueError:
                    declared[node.id] = INHERITED_TIME
            inputs_of: dict[str, list[str]] = {}
            for (block, _port), (src, _out) in self.driver.items():
                inputs_of.setdefault(block, []).append(src)
            for block, goto_input in self.reads.items():
                inputs_of.setdefault(block, []).append(self.driver[goto_input][0])
            rates = resolve(declared, inputs_of)
            wrong = [node for node in self.nodes.values() if node.inst is not None
                     and declared[node.id].kind == INHERITED
                     and node.inst.impl.is_discrete(node.inst.p)
                     and rates[node.id].kind != DISCRETE]
            if not wrong:
                return
            for node in wrong:
                params = {**node.inst.params, "sample_time": pick(self.draw, periods)}
                inst, _ = problem(node.doc["type"], params)
                if inst is not None:
                    node.inst, node.doc["params"] = inst, params

    def ordered(self) -> list[Node]:
        """The blocks in the document's order: fresh sources and kits first (the first
        source is the one a wrapping subsystem leaves outside), then the drawn blocks."""
        return [n for n in self.nodes.values() if not n.main] + \
            [n for n in self.nodes.values() if n.main]

    def blocks_and_wires(self) -> tuple[list[dict], list[tuple[str, str]]]:
        """The document's blocks and wires."""
        wires = [(f"{s}.{o}", f"{b}.{p}") for (b, p), (s, o) in self.driver.items()]
        return [n.doc for n in self.ordered()], wires

    def outputs(self) -> list[Endpoint]:
        """Outputs worth logging: those of the blocks drawn from the types."""
        return [(n.id, out) for n in self.nodes.values() if n.main for out in n.outs]
