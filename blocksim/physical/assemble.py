"""The compiler pass that turns the physical components of a flat diagram into blocks.

Runs right after flattening. Each network's equations go through alias elimination, index
reduction, state selection and sorting (one module each); the result is one
`NetworkBlock` inserted where the network's first component was. The components stay as
shells: a source's signal input is wired to the network too, and a sensor's output copies
the network's value of it, so signal blocks see the same ports and names as before.
"""
from __future__ import annotations

import itertools
import logging
from typing import Iterable

import numpy as np
import sympy as sp

from blocksim.blocktypes.blockspec import Param
from blocksim.compiler.flatten import FlatBlock, FlatDiagram
from blocksim.errors import CompileError
from blocksim.physical import aliases, blt, pantelides, states
from blocksim.physical.declare import NETWORK_INPUT
from blocksim.physical.equations import Relation
from blocksim.physical.netblock import network_type, param_values
from blocksim.physical.plan import Plan, Variant
from blocksim.physical.network import Network, build_system, networks
from blocksim.physical.system import Equation, System, copy_system

log = logging.getLogger(__name__)

MAX_MODE_CHECKS = 64  # mode combinations whose linear systems are checked at compile time


def assemble(flat: FlatDiagram) -> None:
    """Replace the components of `flat` by network blocks, in place."""
    nets = networks(flat)
    if not nets:
        return
    taken = {blk.path for blk in flat.blocks}
    for net in nets:
        _check_references(net, flat.source)
        system = build_system(net, flat.source)
        plan = compile_network(system, flat.source)
        path = _name(net, taken)
        taken.add(path)
        _insert(flat, net, plan, path)


def compile_network(system: System, source: str) -> Plan:
    """The passes, from a network's equations to the plan of its code: one structure, or
    one per value of the discrete variables that change which variables the equations
    contain (a rope taut or slack), each possibly split by dynamic state selection."""
    base = copy_system(system)
    structural = _structural_discretes(system, source)
    variants: list[Variant] = []
    for selector, fixed, specialised in _specialised(system, structural, source):
        for pivot, point, compiled in _structures(specialised, source):
            blocks = blt.sort(compiled, source)
            _check_linear_blocks(compiled, blocks, point, source)
            variants.append(Variant(sp.And(selector, pivot), compiled, blocks, fixed))
    slots: list[sp.Symbol] = []
    for v in variants:
        slots += [x for x in v.system.states if x not in slots]
    relation_slot: dict[sp.Symbol, tuple[int, str]] = {}
    slot_of: dict[sp.Expr, int] = {}
    for v in variants:  # relations of one crossing function share its slot
        for rel in v.system.relations:
            if rel.symbol in relation_slot:
                continue
            key = rel.g if len(variants) == 1 else rel.symbol
            if key not in slot_of:
                slot_of[key] = len(slot_of)
            relation_slot[rel.symbol] = (slot_of[key], rel.op)
    for v in variants:
        for w in v.system.whens:
            for target, _ in w.reinit:
                if target not in slots:
                    raise CompileError(
                        f"a when clause reinitialises {target.name}, which is not a state of "
                        f"the network after index reduction (states: "
                        f"{', '.join(x.name for x in slots) or 'none'}): reinitialise a "
                        f"state, or declare the variable `prefer`", block=w.owner, file=source)
    param_key = {sym: f"{path}.{name}" for sym, (path, name) in system.params.items()}
    pre_symbols = sorted({p for v in variants for p in v.system.pre.values()},
                         key=lambda s: s.name)
    plan = Plan(base, variants, slots, sorted(system.inputs, key=lambda s: s.name),
                sorted(system.outputs), relation_slot, len(slot_of), len(system.whens),
                pre_symbols, param_key)
    for v in variants:
        log.debug("physical network %s (%s): %d states, %d blocks (%s)",
                  system.components[0], v.selector, len(v.system.states), len(v.blocks),
                  ", ".join(f"{b.kind} {len(b.variables)}" for b in v.blocks
                            if b.kind != "explicit"))
    return plan


def _structures(system: System, source: str):
    """(pivot condition, evaluation point, compiled system) per choice of states."""
    aliases.eliminate(system, set(system.params))
    if system.conflicts:
        owner = next((c for c in system.components if f"{c}." in system.conflicts[0]),
                     system.components[0])
        raise CompileError(system.conflicts[0], block=owner, file=source)
    pantelides.reduce_index(system, source)
    point = states.evaluation_point(system)
    choices = states.select_states(system, source, point)
    for pivot, chosen in choices:
        lost = [x for x in system.fixed if x not in chosen]
        if lost:
            x = lost[0]
            raise CompileError(
                f"the start value of {x.name} is fixed, but {x.name} is not a state: the "
                f"network's constraints determine it from {', '.join(s.name for s in chosen)} "
                f"(drop `fixed` there, or fix one of those instead)",
                block=system.fixed[x], file=source)
        compiled = copy_system(system) if len(choices) > 1 else system
        compiled.states = chosen
        yield pivot, point, compiled


def _structural_discretes(system: System, source: str) -> dict[sp.Symbol, list[float]]:
    """The discrete variables that decide which variables an equation contains (an
    if-expression on them whose branches read different unknowns), with the values they
    take: their start and the constants their when clauses assign."""
    unknowns = set(system.unknowns)
    discrete = {d.symbol: d for d in system.discretes}
    found: set[sp.Symbol] = set()
    for eq in system.equations:
        for pw in eq.residual.atoms(sp.Piecewise):
            conditions = set().union(*(c.free_symbols for _, c in pw.args))
            on = conditions & discrete.keys()
            if on and len({frozenset(e.free_symbols & unknowns) for e, _ in pw.args}) > 1:
                found |= on
    values: dict[sp.Symbol, list[float]] = {}
    for sym in sorted(found, key=lambda s: s.name):
        taken = _discrete_values(system, sym)
        if taken is None:
            raise CompileError(f"the discrete variable {sym.name} changes which equations "
                               f"hold, so it may only be assigned constants",
                               block=discrete[sym].owner, file=source)
        values[sym] = taken
    return values


def _discrete_values(system: System, sym: sp.Symbol) -> list[float] | None:
    """The values a discrete variable takes: its start and the constants its when clauses
    assign (None if one assigns a value that is not a constant)."""
    numeric = system.numeric()
    start = next(d.start for d in system.discretes if d.symbol == sym)
    taken = {float(start.xreplace(numeric))}
    for w in system.whens:
        for target, value in w.assign:
            if target == sym:
                value = value.xreplace(numeric)
                if not value.is_Number:
                    return None
                taken.add(float(value))
    return sorted(taken)


def _specialised(system: System, structural: dict[sp.Symbol, list[float]], source: str):
    """(condition, the system with those discrete values put into its equations) per
    combination of the structural discrete variables' values."""
    if not structural:
        yield sp.true, {}, system
        return
    names = list(structural)
    for combo in itertools.product(*(structural[s] for s in names)):
        values = {s: sp.Float(v) for s, v in zip(names, combo)}
        copy = copy_system(system)
        copy.equations = [Equation(eq.residual.xreplace(values), eq.owner, eq.text, eq.level)
                          for eq in copy.equations]
        copy.outputs = {k: v.xreplace(values) for k, v in copy.outputs.items()}
        copy.relations = [Relation(r.symbol, r.g.xreplace(values), r.op, r.owner)
                          for r in copy.relations]
        yield sp.And(*(sp.Eq(s, v) for s, v in values.items())), values, copy


def _check_references(net: Network, source: str) -> None:
    """An electrical circuit needs a Ground: its voltages are otherwise determined only up
    to a constant (a singular system). Islands are found through the components' pins."""
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        while parent.setdefault(a, a) != a:
            a = parent[a]
        return a

    node_of = {}
    for k, members in enumerate(net.sets):
        for endpoint in members:
            node_of[endpoint] = f"n{k}"
    grounded: set[str] = set()
    owners: dict[str, list[str]] = {}
    for blk in net.components:
        pins = [(blk.path, c.name) for c in blk.impl.connector_ports(blk.p)
                if c.domain == "electrical"]
        nodes = [node_of[p] for p in pins if p in node_of]
        for a, b in zip(nodes, nodes[1:]):
            parent[find(a)] = find(b)
        if nodes:
            owners.setdefault(nodes[0], []).append(blk.path)
            if getattr(blk.impl, "reference", False):
                grounded.add(nodes[0])
    islands: dict[str, list[str]] = {}
    for node, paths in owners.items():
        islands.setdefault(find(node), []).extend(paths)
    roots = {find(n) for n in grounded}
    for root, paths in islands.items():
        if root not in roots:
            raise CompileError(f"the circuit of {', '.join(sorted(paths)[:8])} has no Ground: "
                               f"its voltages are not determined (add a Ground block)",
                               block=sorted(paths)[0], file=source)


def _check_linear_blocks(system: System, blocks: list[blt.Block],
                         point: dict[sp.Symbol, float], source: str) -> None:
    """A linear block must be solvable in every combination of the modes it reads, at the
    parameters' values: a singular matrix is a compile error naming the components."""
    for block in blocks:
        if block.kind != "linear" or len(block.variables) < 2:
            continue
        matrix = sp.Matrix(block.matrix)
        relations = [r for r in system.relations if r.symbol in matrix.free_symbols]
        discretes = [d.symbol for d in system.discretes if d.symbol in matrix.free_symbols]
        taken = [_discrete_values(system, d) or [float(point[d])] for d in discretes]
        combos: Iterable = itertools.product(*([(False, True)] * len(relations) + taken))
        for combo in itertools.islice(combos, MAX_MODE_CHECKS):
            values = dict(point)
            values.update({r.symbol: sp.true if v else sp.false
                           for r, v in zip(relations, combo)})
            values.update({d: sp.Float(v) for d, v in zip(discretes, combo[len(relations):])})
            numeric = np.array(matrix.xreplace(values).evalf(), dtype=float)
            if np.linalg.matrix_rank(numeric, tol=1e-12 * max(1.0, np.abs(numeric).max())) \
                    < len(block.variables):
                owners = sorted({eq.owner for eq in block.equations} - {""})
                mode = ""
                if combo:
                    mode = " in the mode where " + ", ".join(
                        [f"{r.g} {r.op} 0 is {v}" for r, v in zip(relations, combo)]
                        + [f"{d.name} = {v:g}" for d, v in zip(discretes, combo[len(relations):])])
                raise CompileError(
                    f"the equations of {', '.join(owners) or 'the connections'} are singular"
                    f"{mode} (they do not determine "
                    f"{', '.join(v.name for v in block.variables[:6])}); a floating node, "
                    f"a loop of ideal sources or a cut set of ideal current sources?",
                    block=owners[0] if owners else None, file=source)


def _name(net: Network, taken: set[str]) -> str:
    paths = [blk.path for blk in net.components]
    prefix = paths[0].rpartition("/")[0]
    if not all(p.rpartition("/")[0] == prefix for p in paths):
        prefix = ""
    base = (prefix + "/" if prefix else "") + "network"
    for k in itertools.count(1):
        name = base if k == 1 else f"{base}{k}"
        if name not in taken:
            return name
    raise AssertionError("unreachable")


def _insert(flat: FlatDiagram, net: Network, plan: Plan, path: str) -> None:
    system = plan.base
    params = tuple(Param(key, "scalar", system.values[sym], unit="")
                   for sym, key in plan.param_key.items())
    block_type = network_type(plan, params)
    impl = block_type()
    p = param_values(plan, flat.folder)
    inputs = [f"in{k}" for k in range(len(plan.inputs))]
    outputs = [f"out{k}" for k in range(len(plan.outputs))]
    first = net.components[0]
    by_path = {blk.path: blk for blk in net.components}
    # New parameter values (`compiler.runtime`) replay the network's code with the values
    # its components' parameters resolve to, in the first component's scope; components
    # in subsystems with parameters of their own see other names, so there a new value is
    # structural (a new compile).
    raw = {key: by_path[comp].raw.get(name, by_path[comp].block_type and _default(
        by_path[comp], name)) for sym, key in plan.param_key.items()
        for comp, name in [system.params[sym]]}
    scope = flat.levels[first.level].names if first.level in flat.levels else None
    one_level = all(flat.levels.get(blk.level) is not None
                    and flat.levels[blk.level].names is scope for blk in net.components)
    net_block = FlatBlock(path, block_type, impl, p, inputs, outputs,
                          {k: tuple(v) for k, v in impl.feedthrough(p).items()},
                          first.gates, first.trigger, raw=raw, level=first.level,
                          declared=one_level)
    for k, sym in enumerate(plan.inputs):
        comp, port = system.inputs[sym]
        driver = flat.drivers.get((comp, port))
        if driver is None:
            raise CompileError(f"input '{port}' is not connected", block=comp, port=port,
                               file=flat.source)
        flat.drivers[(path, f"in{k}")] = driver
    for k, (comp, port) in enumerate(plan.outputs):
        shell = by_path[comp]
        hidden = NETWORK_INPUT + port
        if hidden not in shell.inputs:
            shell.inputs.append(hidden)
        flat.drivers[(comp, hidden)] = (path, f"out{k}")
    flat.blocks.insert(flat.blocks.index(first), net_block)


def _default(blk: FlatBlock, name: str):
    return next(prm.default for prm in blk.block_type.params if prm.name == name)
