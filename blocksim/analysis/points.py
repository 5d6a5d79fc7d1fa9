"""Analysis points: the names a user gives (`"u"`, `"plant.y"`, `"pid.e"`,
`"part/inner.y"`), found in the diagram, and the copy of the diagram that makes them
measurable and drivable.

The copy adds, for every point, blocks with reserved ids (`__lin_...`) that a run never
sees otherwise: an Output that measures the signal as its source makes it (before any
perturbation), and for an input or an opened loop an Integrator whose state is the
injected value, fed by 0 times a sine (so the value is constant along the flow, and
between sample hits a zero-order hold; `frequency_response` sets the factor, the
Integrator's output is then a sine wave). A perturbation is added to the signal by a Sum; an opened loop's
readers read the injected value alone. Top-level Inports (which have no signal in a run)
become such injected values too: the model's inputs. A TransportDelay becomes its Pade
approximation (`pade.py`). The user's diagram is never changed.
"""
from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from blocksim.analysis.errors import AnalysisError
from blocksim.analysis.pade import pade_coefficients
from blocksim.diagram.model import Block, Diagram, PortRef, Wire
from blocksim.errors import shown

PREFIX = "__lin_"
SINKS = ("Output", "Scope", "Outport", "Terminator")


@dataclass(frozen=True)
class Point:
    """One analysis point: on a signal (an output port and all its readers), on one
    branch (a single input port), or a top-level Inport."""

    name: str  # as the user wrote it
    level: tuple[str, ...]  # the subsystem path of the level it lives in
    kind: str  # "signal", "branch" or "inport"
    block: str  # the block id in that level (the source's, for a signal)
    port: str  # its output port (signal), input port (branch); "y" for an Inport
    source: tuple[str, str] | None = None  # a branch's driver (block, port)

    @property
    def prefix(self) -> str:
        return "".join(part + "/" for part in self.level)


def _level(diagram: Diagram, parts: Sequence[str], name: str) -> Diagram:
    """The diagram of the subsystem at `parts` (AnalysisError if there is none)."""
    here = diagram
    for k, part in enumerate(parts):
        try:
            blk = here.block(part)
        except KeyError:
            raise AnalysisError(f"unknown analysis point '{shown(name)}': no block "
                                f"'{shown('/'.join(parts[:k + 1]))}'",
                                file=diagram.source) from None
        if blk.subsystem is None:
            raise AnalysisError(f"unknown analysis point '{shown(name)}': block "
                                f"'{shown('/'.join(parts[:k + 1]))}' is not a subsystem",
                                file=diagram.source)
        here = blk.subsystem
    return here


def _all_names(diagram: Diagram, prefix: str = "") -> list[str]:
    """Every point name the diagram offers (for "did you mean")."""
    names = []
    for blk in diagram.blocks:
        names.append(prefix + blk.id)
        if blk.subsystem is not None:
            names += _all_names(blk.subsystem, prefix + blk.id + "/")
    for wire in diagram.wires:
        names += [prefix + str(wire.src), prefix + str(wire.dst)]
    return names


def resolve(diagram: Diagram, name: str) -> Point:
    """The point a name means; AnalysisError naming it (and close names) if none."""
    if not isinstance(name, str) or not name:
        raise AnalysisError(f"an analysis point must be a block id or 'block.port', got "
                            f"{shown(repr(name))}", file=diagram.source)
    head, dot, port = name.rpartition(".")
    path = head if dot else name
    parts = path.split("/")
    level = _level(diagram, parts[:-1], name)
    block_id = parts[-1]
    try:
        blk = level.block(block_id)
    except KeyError:
        raise AnalysisError(_unknown(diagram, name, f"no block '{shown(path)}'"),
                            file=diagram.source) from None
    outs = {w.src.port for w in level.wires if w.src.block == block_id}
    ins = {w.dst.port: w.src for w in level.wires if w.dst.block == block_id}
    where = tuple(parts[:-1])
    if dot:
        if port in outs:
            return Point(name, where, "signal", block_id, port)
        if port in ins:
            src = ins[port]
            return Point(name, where, "branch", block_id, port, (src.block, src.port))
        wired = ", ".join(sorted(outs | set(ins))) or "none"
        raise AnalysisError(_unknown(diagram, name, f"block '{shown(path)}' has no wired "
                                                    f"port '{shown(port)}' (wired: {wired})"),
                            file=diagram.source)
    if blk.type == "Inport" and not where:
        return Point(name, where, "inport", block_id, "y")
    if len(outs) == 1:
        return Point(name, where, "signal", block_id, next(iter(outs)))
    if not outs and blk.type in SINKS and len(ins) == 1:
        port, src = next(iter(ins.items()))
        return Point(name, where, "signal", src.block, src.port)
    why = (f"block '{shown(path)}' has {len(outs)} wired outputs: name one as "
           f"'{shown(path)}.PORT'" if len(outs) > 1 else
           f"block '{shown(path)}' has no wired output")
    raise AnalysisError(_unknown(diagram, name, why), file=diagram.source)


def _unknown(diagram: Diagram, name: str, why: str) -> str:
    close = difflib.get_close_matches(name, _all_names(diagram), n=3)
    hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    return f"unknown analysis point '{shown(name)}': {why}{hint}"


@dataclass(frozen=True)
class Plan:
    """The rewritten diagram and the reserved ids it added, per point, in order."""

    diagram: Diagram
    injected: dict[str, str]  # point name -> Integrator path of its injected value
    measured: dict[str, str]  # point name -> path of the Output that measures it
    opened: frozenset[str]  # point names whose readers read the injected value alone
    inports: tuple[str, ...]  # top-level Inport ids (all of them: the model's inputs)
    delays: tuple[str, ...]  # TransportDelay paths replaced by their Pade approximation
    # point name -> the diagram parameters of its Sine (amplitude, frequency in Hz, phase)
    excitation: dict[str, tuple[str, str, str]]


def rewrite(diagram: Diagram, inject: Iterable[Point], measure: Iterable[Point],
            opened: Iterable[Point], delays: Mapping[str, float] | None = None,
            delay_order: int = 0) -> Plan:
    """A copy of the diagram with the analysis points' blocks added (module docstring)."""
    copied = copy.deepcopy(diagram)
    copied.path = diagram.path  # (deepcopy keeps it; said for the reader: messages name it)
    opened_names = {p.name for p in opened}
    injected, measured, excitation = {}, {}, {}
    counter = iter(range(10 ** 9))
    inports = [blk.id for blk in copied.blocks if blk.type == "Inport"]
    inject, measure = list(inject), list(measure)
    points = {p.name: p for p in [*inject, *opened, *measure]}
    inject_names = {p.name for p in inject} | opened_names
    # Measurements first: they read the source as it is, before any perturbation.
    for point in measure:
        level = _level(copied, point.level, point.name)
        probe = f"{PREFIX}out{next(counter)}"
        level.blocks.append(Block(probe, "Output", {}))
        level.wires.append(Wire(PortRef(*_source(level, point)), PortRef(probe, "u")))
        measured[point.name] = point.prefix + probe
    for point in [p for p in points.values() if p.name in inject_names]:
        if point.name in injected:
            continue
        level = _level(copied, point.level, point.name)
        k = next(counter)
        state = _injection(copied, level, k, excitation, point.name)
        injected[point.name] = point.prefix + state
        readers = _readers(level, point)
        if point.kind == "inport" or point.name in opened_names:
            driver = PortRef(state, "y")
        else:
            total = f"{PREFIX}sum{k}"
            level.blocks.append(Block(total, "Sum", {"signs": "++"}))
            level.wires += [Wire(PortRef(*_source(level, point)), PortRef(total, "u1")),
                            Wire(PortRef(state, "y"), PortRef(total, "u2"))]
            driver = PortRef(total, "y")
        for wire in readers:
            wire.src = copy.copy(driver)
    for inport in inports:  # the others: held at a value (`Injected` states, x0 0)
        if inport in injected:
            continue
        state = _injection(copied, copied, next(counter), excitation, inport)
        for wire in copied.wires:
            if wire.src.block == inport:
                wire.src = PortRef(state, "y")
        injected[inport] = state
    copied.blocks = [blk for blk in copied.blocks if blk.id not in inports]
    replaced = _pade_delays(copied, "", delays or {}, delay_order)
    return Plan(copied, injected, measured, frozenset(opened_names), tuple(inports),
                tuple(replaced), excitation)


def _injection(top: Diagram, level: Diagram, k: int,
               excitation: dict[str, tuple[str, str, str]], name: str) -> str:
    """Add an injected value to `level`: an Integrator (state 0) of amplitude x a unit
    sine, the amplitude, frequency and phase diagram parameters (amplitude 0: the value
    stays put; `frequency_response` sets them without compiling again, the generated
    code keeping its shape whatever their values). Its id."""
    wave, gain, times, state = (f"{PREFIX}{what}{k}" for what in ("wave", "gain", "times",
                                                                   "in"))
    amp, freq, phase = (f"{PREFIX}{what}{k}" for what in ("amplitude", "hz", "phase"))
    top.parameters.update({amp: 0.0, freq: 1.0, phase: 1.0})
    level.blocks += [Block(wave, "Sine", {"amplitude": 1.0, "frequency": freq,
                                          "phase": phase}),
                     Block(gain, "Constant", {"value": amp}),
                     Block(times, "Product", {}),
                     Block(state, "Integrator", {"x0": 0.0})]
    level.wires += [Wire(PortRef(wave, "y"), PortRef(times, "u1")),
                    Wire(PortRef(gain, "y"), PortRef(times, "u2")),
                    Wire(PortRef(times, "y"), PortRef(state, "u"))]
    excitation[name] = (amp, freq, phase)
    return state


def _source(level: Diagram, point: Point) -> tuple[str, str]:
    """The output port whose signal the point is."""
    if point.kind == "branch":
        assert point.source is not None
        return point.source
    return point.block, point.port


def _readers(level: Diagram, point: Point) -> list[Wire]:
    """The wires whose signal the point injects into (not the analysis blocks' own, but
    every reader of an Inport, which goes away)."""
    if point.kind == "inport":
        return [w for w in level.wires if w.src.block == point.block]
    if point.kind == "branch":
        return [w for w in level.wires
                if w.dst.block == point.block and w.dst.port == point.port]
    return [w for w in level.wires if w.src.block == point.block
            and w.src.port == point.port and not w.dst.block.startswith(PREFIX)]


def _pade_delays(level: Diagram, prefix: str, delays: Mapping[str, float],
                order: int) -> list[str]:
    """The TransportDelays named in `delays` (path -> the delay, as compiled) replaced in
    place by TransferFunctions of their Pade approximation of `order`."""
    replaced = []
    for blk in level.blocks:
        path = prefix + blk.id
        if blk.subsystem is not None:
            replaced += _pade_delays(blk.subsystem, path + "/", delays, order)
        elif blk.type == "TransportDelay" and path in delays:
            num, den = pade_coefficients(delays[path], order)
            blk.type = "TransferFunction"
            blk.params = {"num": num, "den": den}
            replaced.append(path)
    return replaced
