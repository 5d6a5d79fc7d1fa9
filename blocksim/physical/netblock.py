"""The block a physical network becomes: its states, modes and crossings, and the code
that solves its sorted equations.

The network's signal inputs (a source's `v`) are its input ports `in0, in1, ...`, and the
signal outputs of its components (a sensor's `v`) its output ports `out0, ...`, which the
components' shells copy. Every generated function computes only the blocks of equations
that its targets need: the outputs, the states' derivatives, the relations' crossing
functions. Parameters are read through `e.p`, so their numbers become parameter slots
like every block's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import sympy as sp

from blocksim.blocktypes.blockspec import BlockType, Emit, Param, ParamValues, Port, Sizes, lit
from blocksim.physical import solvers
from blocksim.physical.blt import Block
from blocksim.physical.equations import TIME
from blocksim.physical.printer import Printer
from blocksim.physical.system import System

_SIGN_TESTS = {"<": "< 0.0", "<=": "<= 0.0", ">": "> 0.0", ">=": ">= 0.0"}


@dataclass
class Plan:
    """What code generation needs of a network, in slot order."""

    system: System
    blocks: list[Block]
    inputs: list[sp.Symbol]
    outputs: list[tuple[str, str]]
    crossings: list[sp.Expr]
    relation_slot: dict[sp.Symbol, tuple[int, str]]
    pre_symbols: list[sp.Symbol]  # what pre_event saves (in m after the discretes)
    param_key: dict[sp.Symbol, str]
    unknown_index: dict[sp.Symbol, int] = field(default_factory=dict)
    defined_by: dict[sp.Symbol, int] = field(default_factory=dict)  # unknown -> block

    def __post_init__(self) -> None:
        self.unknown_index = {u: k for k, u in enumerate(self.system.unknowns)}
        for b, block in enumerate(self.blocks):
            for v in block.variables:
                self.defined_by[v] = b

    # slots in m: the discrete variables, each when's last condition, then pre values
    @property
    def n_discrete(self) -> int:
        return len(self.system.discretes)

    def when_slot(self, k: int) -> int:
        return self.n_discrete + k

    def pre_slot(self, k: int) -> int:
        return self.n_discrete + len(self.system.whens) + k

    @property
    def m_size(self) -> int:
        return self.n_discrete + len(self.system.whens) + len(self.pre_symbols)


class NetworkBlock(BlockType):
    """A physical network compiled to one block (made by the compiler, never by a user)."""

    name = "PhysicalNetwork"
    category = "Physical"
    rate = "continuous"
    plan: Plan  # set per network (a subclass per network, see `network_type`)

    def input_ports(self, p: ParamValues):
        return tuple(Port(f"in{k}") for k in range(len(self.plan.inputs)))

    def output_ports(self, p: ParamValues):
        return tuple(Port(f"out{k}") for k in range(len(self.plan.outputs)))

    def feedthrough(self, p: ParamValues) -> Mapping[str, tuple[str, ...]]:
        plan = self.plan
        port_of = {sym: f"in{k}" for k, sym in enumerate(plan.inputs)}
        result = {}
        for k, key in enumerate(plan.outputs):
            reads = self._reads([plan.system.outputs[key]])
            result[f"out{k}"] = tuple(sorted({port_of[s] for s in reads if s in port_of}))
        return result

    def sizes(self, p: ParamValues, in_widths: Mapping[str, int | None]) -> Sizes:
        plan = self.plan
        return Sizes({f"out{k}": 1 for k in range(len(plan.outputs))},
                     states=len(plan.system.states), discrete=plan.m_size,
                     zero_crossings=len(plan.crossings))

    def initial_states(self, p: ParamValues, n: int) -> list[float]:
        system = self.plan.system
        values = self._values(p)
        return [float(system.starts[x].xreplace(values)) if x in system.starts else 0.0
                for x in system.states]

    def initial_discrete(self, p: ParamValues, n: int) -> list[float]:
        values = self._values(p)
        starts = [float(d.start.xreplace(values)) for d in self.plan.system.discretes]
        return starts + [0.0] * (n - len(starts))

    def _values(self, p: ParamValues) -> dict[sp.Symbol, sp.Expr]:
        return {sym: sp.Float(p[key]) for sym, key in self.plan.param_key.items()}

    # ----- which blocks a function needs -----
    def _reads(self, targets: list[sp.Expr]) -> set[sp.Symbol]:
        """Every symbol the targets read, through the blocks that define unknowns."""
        plan = self.plan
        seen: set[sp.Symbol] = set()
        stack = [s for t in targets for s in t.free_symbols]
        done_blocks: set[int] = set()
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            b = plan.defined_by.get(s)
            if b is not None and b not in done_blocks:
                done_blocks.add(b)
                for eq in plan.blocks[b].equations:
                    stack += list(eq.residual.free_symbols)
                for rel in self._relations_in(plan.blocks[b]):
                    stack += list(rel.free_symbols)
        return seen

    def _relations_in(self, block: Block) -> list[sp.Expr]:
        return []  # relations are read as latched signs: no dependence on their g

    def _needed(self, targets: list[sp.Expr]) -> list[int]:
        plan = self.plan
        needed = {plan.defined_by[s] for s in self._reads(targets) if s in plan.defined_by}
        return sorted(needed)

    # ----- code -----
    def _printer(self, e: Emit, signs: list[str]) -> Printer:
        plan, system = self.plan, self.plan.system
        states = {x: k for k, x in enumerate(system.states)}
        inputs = {s: k for k, s in enumerate(plan.inputs)}
        discretes = {d.symbol: k for k, d in enumerate(system.discretes)}
        pres = {system.pre[x]: k for k, x in enumerate(plan.pre_symbols)}

        def symbol(sym: sp.Symbol) -> str:
            if sym in states:
                return e.x[states[sym]]
            if sym in plan.unknown_index:
                return self.local(e, sym)
            if sym in inputs:
                return e.u[f"in{inputs[sym]}"][0]
            if sym in plan.param_key:
                return lit(float(e.p[plan.param_key[sym]]))
            if sym in discretes:
                return e.m[discretes[sym]]
            if sym in pres:
                return e.m[plan.pre_slot(pres[sym])]
            if sym in plan.relation_slot:
                slot, op = plan.relation_slot[sym]
                return f"({signs[slot]} {_SIGN_TESTS[op]})"
            if sym == TIME:
                return "t"
            raise ValueError(f"no value for {sym.name} in the network's code")
        return Printer(symbol)

    def local(self, e: Emit, sym: sp.Symbol) -> str:
        return f"_p{e.index}_{self.plan.unknown_index[sym]}"

    def _solve(self, e: Emit, targets: list[sp.Expr], signs: list[str]) -> list[str]:
        """Lines computing every unknown the targets need, block by block."""
        pr = self._printer(e, signs)
        lines: list[str] = []
        for b in self._needed(targets):
            lines += self._block_code(e, self.plan.blocks[b], pr, b)
        return lines

    def _block_code(self, e: Emit, block: Block, pr: Printer, b: int) -> list[str]:
        if block.kind == "explicit":
            return [f"{self.local(e, block.variables[0])} = {pr(block.value)}"]
        torn = block.torn
        unknowns = torn.tearing if torn is not None else block.variables
        names = [self.local(e, v) for v in unknowns]
        if torn is not None and block.solution is not None:
            lines = [f"{name} = {pr(value)}" for name, value in zip(names, block.solution)]
        elif block.kind == "linear":
            matrix, rhs = block.matrix, block.rhs
            if torn is not None:
                zero = {t: 0 for t in torn.tearing}
                matrix, rhs = torn.jacobian, [-r.xreplace(zero) for r in torn.residuals]
            lines = solvers.linear(names, [[pr(c) for c in row] for row in matrix],
                                   [pr(r) for r in rhs])
        else:
            residuals = torn.residuals if torn is not None else [
                eq.residual for eq in block.equations]
            jacobian = torn.jacobian if torn is not None else block.jacobian
            owners = sorted({eq.owner for eq in block.equations} - {""})
            what = f"the equations of {', '.join(owners) or 'the connections'}"
            lines = solvers.newton(names, [pr(r) for r in residuals],
                                   [[pr(c) for c in row] for row in jacobian],
                                   e.const([0.0] * len(names)), what)
        if torn is not None:
            lines += [f"{self.local(e, v)} = {pr(value)}" for v, value in torn.sequence]
        return lines

    def output(self, e: Emit) -> dict[str, list[str]]:
        plan = self.plan
        result = {}
        for k, key in enumerate(plan.outputs):
            value = plan.system.outputs[key]
            pr = self._printer(e, e.z)
            result[f"out{k}"] = self._solve(e, [value], e.z) + [f"{e.y[f'out{k}'][0]} = {pr(value)}"]
        return result

    def derivative(self, e: Emit) -> list[str]:
        system = self.plan.system
        ders = [system.der[x] for x in system.states]
        pr = self._printer(e, e.z)
        return self._solve(e, ders, e.z) + [f"{e.dx[k]} = {pr(d)}" for k, d in enumerate(ders)]

    def zero_crossing(self, e: Emit) -> list[str]:
        crossings = self.plan.crossings
        pr = self._printer(e, e.z)
        return self._solve(e, crossings, e.z) + [f"{e.g[k]} = {pr(g)}"
                                                  for k, g in enumerate(crossings)]

    def pre_event(self, e: Emit) -> list[str]:
        plan = self.plan
        if not plan.pre_symbols:
            return []
        pr = self._printer(e, e.z)
        return self._solve(e, plan.pre_symbols, e.z) + [
            f"{e.m[plan.pre_slot(k)]} = {pr(x)}" for k, x in enumerate(plan.pre_symbols)]

    def update(self, e: Emit) -> list[str]:
        plan, system = self.plan, self.plan.system
        if not system.whens:
            return []
        pr = self._printer(e, e.zn)
        targets = [w.condition for w in system.whens]
        targets += [v for w in system.whens for _, v in w.reinit + w.assign]
        lines = self._solve(e, [t for t in targets if isinstance(t, sp.Expr)] +
                            [s for t in targets for s in t.free_symbols], e.zn)
        states = {x: k for k, x in enumerate(system.states)}
        discretes = {d.symbol: k for k, d in enumerate(system.discretes)}
        # every condition first, with the values at the start of this pass (Modelica's
        # simultaneous whens), then the actions of those that became true
        lines += [f"_c{e.index}_{k} = 1.0 if {pr(w.condition)} else 0.0"
                  for k, w in enumerate(system.whens)]
        for k, w in enumerate(system.whens):
            prev = e.m[plan.when_slot(k)]
            cond = f"_c{e.index}_{k}"
            lines += ["if init:",
                      f"    {prev} = {cond}",
                      f"elif {cond} != {prev}:",
                      f"    {prev} = {cond}",
                      f"    if {cond}:"]
            acts = []
            values = [(f"_v{k}_{j}", pr(value)) for j, (_, value) in enumerate(w.reinit + w.assign)]
            acts += [f"{name} = {value}" for name, value in values]
            for j, (target, _) in enumerate(w.reinit):
                if target not in states:
                    raise ValueError(f"reinit of {target.name}, which is not a state of the "
                                     f"network (its states: "
                                     f"{', '.join(x.name for x in system.states)})")
                acts.append(f"{e.x[states[target]]} = {values[j][0]}")
            for j, (target, _) in enumerate(w.assign, len(w.reinit)):
                acts.append(f"{e.m[discretes[target]]} = {values[j][0]}")
            owner = e.index_of.get(w.owner, e.index)
            acts.append(f"ev.append(({owner}, {w.event!r})); changed = True" if w.event
                        else "changed = True")
            lines += [f"        {line}" for line in acts]
        return lines


def network_type(plan: Plan, params: tuple[Param, ...]) -> type[NetworkBlock]:
    """A block type for one network (its plan and its parameters)."""
    return type("PhysicalNetwork", (NetworkBlock,), {"plan": plan, "params": params})


def param_values(plan: Plan, folder: str | None) -> ParamValues:
    values: dict[str, Any] = {key: plan.system.values[sym] for sym, key in plan.param_key.items()}
    return ParamValues(values, folder=folder)
