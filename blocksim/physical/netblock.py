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

from typing import Any, Mapping

import sympy as sp

from blocksim.blocktypes.blockspec import BlockType, Emit, Param, ParamValues, Port, Sizes, lit
from blocksim.physical import solvers
from blocksim.physical.blt import Block
from blocksim.physical.equations import TIME
from blocksim.physical.plan import Plan, Variant
from blocksim.physical.printer import Printer

_SIGN_TESTS = {"<": "< 0.0", "<=": "<= 0.0", ">": "> 0.0", ">=": ">= 0.0"}


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
            reads = set()
            for v in plan.variants:
                reads |= _reads(v, [v.system.outputs[key]])
            result[f"out{k}"] = tuple(sorted({port_of[s] for s in reads if s in port_of}))
        return result

    def sizes(self, p: ParamValues, in_widths: Mapping[str, int | None]) -> Sizes:
        plan = self.plan
        return Sizes({f"out{k}": 1 for k in range(len(plan.outputs))},
                     states=len(plan.slots), discrete=plan.m_size,
                     zero_crossings=plan.n_crossings)

    def initial_states(self, p: ParamValues, n: int) -> list[float]:
        values = self._values(p)
        starts = {}
        for v in reversed(self.plan.variants):  # the first variant's start values win
            starts.update(v.system.starts)
        return [float(starts[x].xreplace(values)) if x in starts else 0.0
                for x in self.plan.slots]

    def initial_discrete(self, p: ParamValues, n: int) -> list[float]:
        values = self._values(p)
        starts = [float(d.start.xreplace(values)) for d in self.plan.base.discretes]
        return starts + [0.0] * (n - len(starts))

    def _values(self, p: ParamValues) -> dict[sp.Symbol, sp.Expr]:
        return {sym: sp.Float(p[key]) for sym, key in self.plan.param_key.items()}

    def unsettled(self, p: ParamValues) -> str | None:
        if not self.plan.n_whens:
            return None
        return ("keeps switching: its components' when conditions undo each other at this "
                "instant, typically a relation that holds with equality where another when "
                "acts (a rope going slack at exactly its length reads as longer by "
                "roundoff); give that relation a margin far above roundoff, e.g. "
                "x**2 + y**2 > l**2 * (1 + 1e-12)")

    def structure_summary(self) -> str:
        """What the compiler made of the network, in one line (`blocksim describe`)."""
        plan = self.plan
        states = ", ".join(x.name for x in plan.slots) or "none"
        parts = [f"states {states}"]
        if len(plan.variants) > 1:
            parts.append(f"{len(plan.variants)} structures")
        loops = []
        for v in plan.variants[:1]:
            for b in v.blocks:
                if b.kind == "explicit":
                    continue
                size = len(b.variables)
                torn = f", torn to {len(b.torn.tearing)}" if b.torn else ""
                loops.append(f"{b.kind} loop of {size}{torn}")
        if loops:
            parts.append("; ".join(loops))
        return "; ".join(parts)

    # ----- code -----
    def local(self, e: Emit, sym: sp.Symbol) -> str:
        return f"_p{e.index}_{self.plan.unknown_index[sym]}"

    def _printer(self, e: Emit, signs: list[str], variant: Variant) -> Printer:
        plan = self.plan
        states = {x: k for k, x in enumerate(plan.slots) if x in variant.system.states}
        inputs = {s: k for k, s in enumerate(plan.inputs)}
        discretes = {d.symbol: k for k, d in enumerate(plan.base.discretes)}
        pres = {s: k for k, s in enumerate(plan.pre_symbols)}

        def symbol(sym: sp.Symbol) -> str:
            if sym in states:
                return e.x[states[sym]]
            if sym in variant.defined_by:
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

    def _variants(self, e: Emit, signs: list[str], body) -> list[str]:
        """`body(variant, printer)`'s lines, under each variant's selector."""
        variants = self.plan.variants
        if len(variants) == 1:
            v = variants[0]
            return body(v, self._printer(e, signs, v))
        lines: list[str] = []
        for k, v in enumerate(variants):  # exhaustive: the last one is the `else`
            pr = self._printer(e, signs, v)
            last = k == len(variants) - 1
            lines.append("else:" if last else f"{'if' if k == 0 else 'elif'} {pr(v.selector)}:")
            lines += ["    " + part for line in body(v, pr) or ["pass"]
                      for part in line.split("\n")]
        return lines

    def _solve(self, e: Emit, variant: Variant, targets: list[sp.Expr], pr: Printer
               ) -> list[str]:
        """Lines computing every unknown the targets need, block by block."""
        reads = _reads(variant, targets)
        needed = sorted({variant.defined_by[s] for s in reads if s in variant.defined_by})
        lines: list[str] = []
        for b in needed:
            lines += self._block_code(e, variant, variant.blocks[b], pr)
        return lines

    def _guesses(self, e: Emit, variant: Variant, unknowns: list[sp.Symbol]) -> list[float]:
        """Where Newton's method starts on its first call: the unknowns' start values
        (Modelica's iteration guesses, which pick the branch of a law with several
        solutions), else 0."""
        plan = self.plan
        values = {sym: sp.Float(float(e.p[key])) for sym, key in plan.param_key.items()}
        starts = variant.system.starts
        return [float(starts[v].xreplace(values)) if v in starts else 0.0 for v in unknowns]

    def _block_code(self, e: Emit, variant: Variant, block: Block, pr: Printer) -> list[str]:
        if block.kind == "explicit":
            return [f"{self.local(e, block.variables[0])} = {pr(block.value)}"]
        torn = block.torn
        unknowns = torn.tearing if torn is not None else block.variables
        names = [self.local(e, v) for v in unknowns]
        owners = sorted({eq.owner for eq in block.equations} - {""})
        what = f"the equations of {', '.join(owners) or 'the connections'}"
        if torn is not None and block.solution is not None:
            lines = [f"{name} = {pr(value)}" for name, value in zip(names, block.solution)]
        elif block.kind == "linear":
            matrix, rhs = block.matrix, block.rhs
            if torn is not None:
                zero = {t: 0 for t in torn.tearing}
                matrix, rhs = torn.jacobian, [-r.xreplace(zero) for r in torn.residuals]
            lines = solvers.linear(names, [[pr(c) for c in row] for row in matrix],
                                   [pr(r) for r in rhs], what)
        else:
            residuals = torn.residuals if torn is not None else [
                eq.residual for eq in block.equations]
            jacobian = torn.jacobian if torn is not None else block.jacobian
            slot = {x: k for k, x in enumerate(self.plan.slots)}
            lines = solvers.newton(names, [pr(r) for r in residuals],
                                   [[pr(c) for c in row] for row in jacobian],
                                   e.const(self._guesses(e, variant, unknowns)), what,
                                   [e.x[slot[v]] if v in slot else None for v in unknowns])
        if torn is not None:
            lines += [f"{self.local(e, v)} = {pr(value)}" for v, value in torn.sequence]
        return lines

    def output(self, e: Emit) -> dict[str, list[str]]:
        result = {}
        for k, key in enumerate(self.plan.outputs):
            target = e.y[f"out{k}"][0]

            def body(v: Variant, pr: Printer, key=key, target=target) -> list[str]:
                value = v.system.outputs[key]
                return self._solve(e, v, [value], pr) + [f"{target} = {pr(value)}"]
            result[f"out{k}"] = self._variants(e, e.z, body)
        return result

    def derivative(self, e: Emit) -> list[str]:
        slots = self.plan.slots

        def body(v: Variant, pr: Printer) -> list[str]:
            ders = [_derivative_in(v, x) for x in slots]
            lines = self._solve(e, v, [d for d in ders if d is not None], pr)
            return lines + [f"{e.dx[k]} = {pr(d) if d is not None else '0.0'}"
                            for k, d in enumerate(ders)]
        return self._variants(e, e.z, body)

    def zero_crossing(self, e: Emit) -> list[str]:
        def body(v: Variant, pr: Printer) -> list[str]:
            crossings = _crossings(self.plan, v)
            lines = self._solve(e, v, [g for g in crossings if g is not None], pr)
            return lines + [f"{e.g[k]} = {pr(g) if g is not None else '1.0'}"
                            for k, g in enumerate(crossings)]
        return self._variants(e, e.z, body)

    def pre_event(self, e: Emit) -> list[str]:
        plan = self.plan
        if not plan.pre_symbols:
            return []

        def body(v: Variant, pr: Printer) -> list[str]:
            of = {p: x for x, p in v.system.pre.items()}
            pairs = [(k, of[s]) for k, s in enumerate(plan.pre_symbols)
                     if s in of and v.computes(of[s])]
            return self._solve(e, v, [x for _, x in pairs], pr) + [
                f"{e.m[plan.pre_slot(k)]} = {pr(x)}" for k, x in pairs]
        return self._variants(e, e.z, body)

    def update(self, e: Emit) -> list[str]:
        plan = self.plan
        synced = len(plan.variants) > 1
        if not plan.n_whens and not synced:
            return []

        def body(v: Variant, pr: Printer) -> list[str]:
            return self._events(e, v, pr, synced)
        return self._variants(e, e.zn, body)

    def _events(self, e: Emit, v: Variant, pr: Printer, synced: bool) -> list[str]:
        plan, system = self.plan, v.system
        states = {x: k for k, x in enumerate(plan.slots)}
        discretes = {d.symbol: k for k, d in enumerate(plan.base.discretes)}
        # variables of other variants' states kept in step with this one's solution
        kept = [(k, x) for k, x in enumerate(plan.slots)
                if synced and x not in system.states and x in v.defined_by]
        targets = [x for _, x in kept] + [w.condition for w in system.whens]
        targets += [value for w in system.whens for _, value in w.reinit + w.assign]
        lines = self._solve(e, v, [t for t in targets if isinstance(t, sp.Expr)] +
                            [s for t in targets for s in t.free_symbols], pr)
        lines += [f"{e.x[k]} = {pr(x)}" for k, x in kept]
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
            values = [(f"_v{k}_{j}", pr(value)) for j, (_, value) in enumerate(w.reinit + w.assign)]
            acts = [f"{name} = {value}" for name, value in values]
            for j, (target, _) in enumerate(w.reinit):
                if target not in states:
                    raise ValueError(f"reinit of {target.name}, which is not a state of the "
                                     f"network (its states: "
                                     f"{', '.join(x.name for x in plan.slots)})")
                acts.append(f"{e.x[states[target]]} = {values[j][0]}")
            for j, (target, _) in enumerate(w.assign, len(w.reinit)):
                acts.append(f"{e.m[discretes[target]]} = {values[j][0]}")
            owner = e.index_of.get(w.owner, e.index)
            acts.append(f"ev.append(({owner}, {w.event!r})); changed = True" if w.event
                        else "changed = True")
            lines += [f"        {line}" for line in acts]
        return lines


def _reads(variant: Variant, targets: list[sp.Expr]) -> set[sp.Symbol]:
    """Every symbol the targets read, through the blocks that define unknowns (relations
    are read as latched signs: no dependence on their crossing functions)."""
    seen: set[sp.Symbol] = set()
    stack = [s for t in targets for s in t.free_symbols]
    done: set[int] = set()
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        b = variant.defined_by.get(s)
        if b is not None and b not in done:
            done.add(b)
            for eq in variant.blocks[b].equations:
                stack += list(eq.residual.free_symbols)
    return seen


def _derivative_in(v: Variant, x: sp.Symbol) -> sp.Expr | None:
    """What a state slot's derivative is in variant v: its derivative where v computes
    it, else None (0: a slot v does not use stays put until a switch sets it)."""
    d = v.system.der.get(x)
    if d is not None and v.computes(d):
        return d
    return None


def _crossings(plan: Plan, v: Variant) -> list[sp.Expr | None]:
    """Per crossing slot, the function whose sign the relations of that slot latch, as
    variant v computes it (None: the variant has no such relation)."""
    out: list[sp.Expr | None] = [None] * plan.n_crossings
    for rel in v.system.relations:
        slot, _ = plan.relation_slot[rel.symbol]
        if out[slot] is None and v.watches(rel.symbol) and all(
                v.computes(s) or s not in plan.unknown_index for s in rel.g.free_symbols):
            out[slot] = rel.g
    return out


def network_type(plan: Plan, params: tuple[Param, ...]) -> type[NetworkBlock]:
    """A block type for one network (its plan and its parameters)."""
    return type("PhysicalNetwork", (NetworkBlock,), {"plan": plan, "params": params})


def param_values(plan: Plan, folder: str | None) -> ParamValues:
    values: dict[str, Any] = {key: plan.base.values[sym] for sym, key in plan.param_key.items()}
    return ParamValues(values, folder=folder)
