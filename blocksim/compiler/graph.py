"""Signal-flow analysis of a flat diagram: unconnected inputs, port widths, and the
evaluation order of output ports, with algebraic loops reported as the cycle they form.

Ordering works per output port, not per block: an output that does not depend directly on
an input (an integrator's, a reset integrator's `state`) never puts that input in a loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from blocksim.blocktypes.blockspec import Sizes
from blocksim.compiler.faults import BLOCK_FAULTS
from blocksim.compiler.flatten import Endpoint, FlatBlock, FlatDiagram
from blocksim.errors import CompileError

Feedthrough = Mapping[str, Mapping[str, tuple[str, ...]]]  # block path -> port -> inputs


def check_connected(flat: FlatDiagram) -> None:
    """Every input port of every block must be driven by some output."""
    for blk in flat.blocks:
        for port in blk.inputs:
            if (blk.path, port) not in flat.drivers:
                raise CompileError(f"input '{port}' is not connected", block=blk.path, port=port,
                                   file=flat.source)


def resolve_sizes(flat: FlatDiagram) -> dict[str, Sizes]:
    """Widths of every port, propagated from sources until nothing changes.

    A block's output widths may depend on its input widths (Gain, Sum) or only on its
    parameters (Constant, Integrator); feedback loops settle because the latter fix them.
    """
    sizes: dict[str, Sizes] = {}
    changing: list[str] = []
    # Sizes are a function of parameters and input widths: a pass asks again only the
    # blocks a source of which changed since they were last asked (the second pass over
    # a 10,000-block diagram that had settled in one asked every block for nothing).
    readers: dict[str, list[str]] = {}
    for blk in flat.blocks:
        for port in blk.inputs:
            readers.setdefault(flat.drivers[(blk.path, port)][0], []).append(blk.path)
    stale = {blk.path for blk in flat.blocks}
    known: dict[tuple, Sizes] = {}
    # A block that refuses the widths of a pass is asked again when one of them changes: an
    # early pass hands it widths made from sources not reached yet (a Sum of an Inport that
    # comes later in the file and of a scalar says 1 before it says 2). What it refuses
    # once the widths have settled is the error.
    refused: dict[str, CompileError] = {}
    for _ in range(len(flat.blocks) + 2):
        changing = []
        for blk in flat.blocks:
            if blk.path not in stale:
                continue
            stale.discard(blk.path)
            in_widths: dict[str, int | None] = {}
            for port in blk.inputs:
                src_path, src_port = flat.drivers[(blk.path, port)]
                src = sizes.get(src_path)
                in_widths[port] = src.outputs.get(src_port) if src else None
            try:
                if blk.twin is None:
                    new = _sizes_of(blk, in_widths, flat.source)
                else:  # flatten's twins fed the same widths have the same sizes: asked once
                    twins = (id(blk.twin), *in_widths.values())
                    new = known.get(twins)
                    if new is None:
                        new = known[twins] = _sizes_of(blk, in_widths, flat.source)
            except CompileError as exc:
                refused[blk.path] = exc
                continue
            refused.pop(blk.path, None)
            if sizes.get(blk.path) != new:
                sizes[blk.path] = new
                changing.append(blk.path)
                stale.update(readers.get(blk.path, ()))
        if not changing:
            break
    if refused:
        raise next(refused[blk.path] for blk in flat.blocks if blk.path in refused)
    if changing:  # a loop whose widths grow at every pass (a Mux fed by its own output)
        raise CompileError(f"signal widths never settle: a feedback loop through "
                           f"{', '.join(repr(p) for p in changing[:6])} makes them grow at "
                           f"every pass (a Mux or Concatenate fed by its own output?)",
                           block=changing[0], file=flat.source)
    for blk in flat.blocks:
        for port in blk.inputs:
            src_path, src_port = flat.drivers[(blk.path, port)]
            if sizes[src_path].outputs.get(src_port) is None:
                raise CompileError(f"output '{src_port}' has no width", block=src_path,
                                   file=flat.source)
    return sizes


def _sizes_of(blk: FlatBlock, in_widths: dict[str, int | None], source: str | None) -> Sizes:
    """The block's sizes for these input widths; its errors name it."""
    try:
        return blk.impl.sizes(blk.p, in_widths)
    except CompileError as exc:  # a block's own message (FromFile: its file)
        raise CompileError(exc.detail, block=exc.block or blk.path, port=exc.port,
                           file=source) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise CompileError(f"cannot size the block: {exc}", block=blk.path,
                           file=source) from None
    except BLOCK_FAULTS as exc:
        raise CompileError(f"cannot size the block: {type(exc).__name__}: {exc}",
                           block=blk.path, file=source) from None


@dataclass(frozen=True)
class ConstraintLoop:
    """The algebraic loop an AlgebraicConstraint solves: from its output back to its input.

    `body` are the output ports computed from the unknown on the way to the residual;
    `inputs` the outputs outside the loop that the body reads, which must be ready before
    the solver iterates.
    """

    unknown: Endpoint
    residual: Endpoint
    body: frozenset[Endpoint]
    inputs: tuple[Endpoint, ...]


def _direct_deps(flat: FlatDiagram, feedthrough: Feedthrough | None = None
                 ) -> dict[Endpoint, list[tuple[Endpoint, str]]]:
    """For each output port, the outputs (and through which input) it reads without delay;
    `feedthrough` replaces the blocks' own for the paths it names."""
    deps: dict[Endpoint, list[tuple[Endpoint, str]]] = {}
    for blk in flat.blocks:
        feed = (feedthrough or {}).get(blk.path, blk.feedthrough)
        for port in blk.outputs:
            deps[(blk.path, port)] = [(flat.drivers[(blk.path, inp)], inp)
                                      for inp in feed.get(port, ())]
    return deps


def constraint_loops(flat: FlatDiagram) -> dict[Endpoint, ConstraintLoop]:
    """The loop of every block that solves one, keyed by its unknown (output port)."""
    deps = _direct_deps(flat)
    loops: dict[Endpoint, ConstraintLoop] = {}
    for blk in flat.blocks:
        if not blk.block_type.solves_loop:
            continue
        unknown = (blk.path, blk.outputs[0])
        residual = flat.drivers[(blk.path, blk.inputs[0])]
        if not _reads(residual, unknown, deps):
            raise CompileError(f"input '{blk.inputs[0]}' does not depend on output "
                               f"'{blk.outputs[0]}': there is no loop to solve", block=blk.path,
                               port=blk.inputs[0], file=flat.source)
        body = {n for n in _upstream(residual, deps) if n != unknown and _reads(n, unknown, deps)}
        inputs = sorted({d for n in body for d, _ in deps[n] if d not in body and d != unknown})
        loops[unknown] = ConstraintLoop(unknown, residual, frozenset(body), tuple(inputs))
    for unknown, loop in loops.items():
        coupled = [other for other, o in loops.items() if other != unknown and o.body & loop.body]
        if coupled:
            raise CompileError(f"its loop shares blocks with the loop of '{coupled[0][0]}': "
                               f"coupled (nested) algebraic constraints are not supported",
                               block=unknown[0], file=flat.source)
    return loops


def _upstream(node: Endpoint, deps: Mapping[Endpoint, list[tuple[Endpoint, str]]]
              ) -> set[Endpoint]:
    """`node` and every output it reads, directly or through other direct reads."""
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n not in seen:
            seen.add(n)
            stack += [d for d, _ in deps[n]]
    return seen


def _reads(node: Endpoint, target: Endpoint,
           deps: Mapping[Endpoint, list[tuple[Endpoint, str]]]) -> bool:
    return target in _upstream(node, deps)


def output_order(flat: FlatDiagram, loops: Mapping[Endpoint, ConstraintLoop] | None = None,
                 feedthrough: Feedthrough | None = None) -> list[tuple[FlatBlock, str]]:
    """Output ports in an order where each is computed after everything it reads directly.

    The unknown of a constraint loop comes after the outside signals its loop reads, so the
    solver can iterate there; the loop's own outputs follow it as usual. `feedthrough`
    replaces some blocks' own (discrete blocks read their inputs at their hits only).
    """
    by_path = {blk.path: blk for blk in flat.blocks}
    nodes = [(blk.path, port) for blk in flat.blocks for port in blk.outputs]
    deps = _direct_deps(flat, feedthrough)
    for unknown, loop in (loops or {}).items():
        deps[unknown] = deps[unknown] + [(src, "(loop)") for src in loop.inputs]
    order: list[Endpoint] = []
    state: dict[Endpoint, int] = {}  # 1 visiting, 2 done
    for start in nodes:
        if state.get(start) == 2:
            continue
        stack: list[tuple[Endpoint, int]] = [(start, 0)]
        trail: list[Endpoint] = []
        while stack:
            node, i = stack.pop()
            if i == 0:
                if state.get(node) == 2:
                    continue
                if state.get(node) == 1:
                    raise _loop_error(flat, trail, node, deps)
                state[node] = 1
                trail.append(node)
            children = deps[node]
            if i < len(children):
                stack.append((node, i + 1))
                child = children[i][0]
                if state.get(child) == 1:
                    raise _loop_error(flat, trail, child, deps)
                if state.get(child) != 2:
                    stack.append((child, 0))
            else:
                state[node] = 2
                trail.pop()
                order.append(node)
    return [(by_path[path], port) for path, port in order]


def _loop_error(flat: FlatDiagram, trail: list[Endpoint], again: Endpoint,
                deps: Mapping[Endpoint, list[tuple[Endpoint, str]]]) -> CompileError:
    cycle = trail[trail.index(again):] + [again]
    # trail runs from a consumer to the outputs it reads; print in signal-flow direction.
    cycle = cycle[::-1]
    parts, wires = [], []
    for a, b in zip(cycle, cycle[1:]):
        inp = next(name for src, name in deps[b] if src == a)
        parts += [f"{a[0]}.{a[1]}", f"{b[0]}.{inp}"]
        wires.append((f"{a[0]}.{a[1]}", f"{b[0]}.{inp}"))
    return CompileError(f"algebraic loop: {' -> '.join(parts)}", block=cycle[0][0],
                        file=flat.source, wires=wires)
