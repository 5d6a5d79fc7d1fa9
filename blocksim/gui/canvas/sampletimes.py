"""Sample-time colours (Simulink's Display > Sample Time > Colors), without Qt: each block's
and each signal's resolved rate in a compiled diagram, the colour of each rate, the legend.

Colours follow Simulink: continuous black, constant magenta, the discrete rates by speed
(fastest red, then green, blue, light blue, dark green, orange, ...), triggered cyan, and
yellow for a subsystem whose contents run at several rates ("mixed", Simulink's hybrid).
A block's rate is the one the compiler resolved for its flat path ("sub/inner"); a
subsystem's is the common rate of its contents; an Inport's or Outport's (the compiler
dissolves them) is that of the signal through it, as is a wire's (the rate of its source).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence, Union

from blocksim.blocktypes import registry
from blocksim.compiler.rates import as_fraction
from blocksim.diagram.model import Block, Diagram, PortRef
from blocksim.blocktypes.sampletime import CONSTANT, CONTINUOUS, DISCRETE, TRIGGERED, SampleTime

MIXED = "mixed"  # a subsystem whose contents run at several rates
Rate = Union[SampleTime, str]  # a SampleTime, or MIXED

CONTINUOUS_COLOR = "#000000"
CONSTANT_COLOR = "#c000c0"  # magenta
TRIGGERED_COLOR = "#00a8b8"  # cyan, deep enough to read on white
MIXED_COLOR = "#d4a000"  # Simulink's yellow for hybrid subsystems, likewise
# Fastest first, as Simulink orders them (red, green, blue, light blue, dark green, orange),
# then more that are told apart from those; beyond, they repeat.
DISCRETE_COLORS = ("#e00000", "#00a000", "#0000e0", "#2b9cf0", "#005a00", "#ff8000",
                   "#8b4513", "#9400d3", "#808000", "#e0509a")


@dataclass(frozen=True)
class LegendEntry:
    """One line of the legend: a colour, a short name (D1, Cont, ...) and what it means."""

    color: str
    name: str
    text: str


class SampleTimes:
    """The resolved rates of one compiled diagram, looked up by level and block."""

    def __init__(self, block_ids: Sequence[str], block_types: Sequence[str],
                 block_rates: Sequence[SampleTime]):
        # every flat block, the compiler's own included (gates, holds: signals pass them)
        self.flat: dict[str, SampleTime] = dict(zip(block_ids, block_rates))
        # the blocks a user placed (what `blocksim describe DIAGRAM` lists)
        self.shown: dict[str, SampleTime] = {
            bid: rate for bid, kind, rate in zip(block_ids, block_types, block_rates)
            if registry.get(kind) is not None}
        # subsystem path -> the rates inside: of its blocks and of the holds the compiler
        # puts on a conditional subsystem's ports ("sub/__out_y"; a pass-through one has no
        # other), not of the gates of conditional subsystems inside (at "sub/inner")
        self.inside: dict[str, set[SampleTime]] = defaultdict(set)
        for path, rate in self.flat.items():
            parts = path.split("/")
            if path not in self.shown and not parts[-1].startswith("__"):
                continue
            for depth in range(1, len(parts)):
                self.inside["/".join(parts[:depth])].add(rate)
        speeds = sorted({(r.period, r.offset) for r in self.shown.values() if r.discrete})
        self.rank = {key: i for i, key in enumerate(speeds)}  # 0: the fastest

    @classmethod
    def of_model(cls, model) -> "SampleTimes":
        """From a `CompiledModel`."""
        return cls(model.block_ids, model.block_types, model.block_rates)

    # ----- colours -----
    def color(self, rate: Rate | None) -> str | None:
        """The colour of a rate (a hex string); None for no rate."""
        if rate is None:
            return None
        if rate == MIXED:
            return MIXED_COLOR
        if rate.kind == DISCRETE:
            rank = self.rank.get((rate.period, rate.offset))
            return None if rank is None else DISCRETE_COLORS[rank % len(DISCRETE_COLORS)]
        return {CONTINUOUS: CONTINUOUS_COLOR, CONSTANT: CONSTANT_COLOR,
                TRIGGERED: TRIGGERED_COLOR}.get(rate.kind)

    def describe(self, rate: Rate | None) -> str:
        """A rate as a tooltip says it ("discrete 0.1 s (D1)", "triggered by sampler")."""
        if rate is None:
            return "unknown"
        if rate == MIXED:
            return "mixed (its blocks run at several rates)"
        if rate.kind == DISCRETE and (rate.period, rate.offset) in self.rank:
            return f"{rate} (D{self.rank[(rate.period, rate.offset)] + 1})"
        return str(rate)

    def legend(self) -> list[LegendEntry]:
        """The rates of the diagram (continuous, constant, D1, D2, ..., triggered, mixed)."""
        rates = set(self.shown.values())
        entries = []
        kinds = {r.kind for r in rates}
        if CONTINUOUS in kinds:
            entries.append(LegendEntry(CONTINUOUS_COLOR, "Cont", "continuous"))
        if CONSTANT in kinds:
            entries.append(LegendEntry(CONSTANT_COLOR, "Inf", "constant"))
        for (period, offset), rank in sorted(self.rank.items(), key=lambda kv: kv[1]):
            rate = SampleTime(DISCRETE, period, offset)
            when = f"[{seconds(period)}, {seconds(offset)}] s" if offset else \
                f"{seconds(period)} s"
            entries.append(LegendEntry(self.color(rate), f"D{rank + 1}", when))
        triggers = sorted({r.source for r in rates if r.kind == TRIGGERED})
        if triggers:
            entries.append(LegendEntry(TRIGGERED_COLOR, "T", "triggered (" +
                                       ", ".join(triggers) + ")"))
        if any(len(found) > 1 for found in self.inside.values()):
            entries.append(LegendEntry(MIXED_COLOR, "Mixed", "subsystem of several rates"))
        return entries

    # ----- lookups in the document's diagram -----
    def level_rates(self, top: Diagram, level: Sequence[str]
                    ) -> tuple[dict[str, Rate | None], dict[str, SampleTime | None]]:
        """Rates of the blocks of one level by id (None where the compiled model does not
        know one: a block added since, an empty subsystem), and of its wires by source
        ("blk.port")."""
        found = _Lookup(self, top)
        level = tuple(level)
        diagram = found.diagram(level)
        blocks = {b.id: found.block_rate(level, b) for b in diagram.blocks}
        signals = {str(w.src): found.signal_rate(level, w.src) for w in diagram.wires}
        return blocks, signals


class _Lookup:
    """One pass of lookups in a diagram, with each level's blocks and wires indexed once
    (a 1,000-block level is looked up in milliseconds, not by scanning it per wire)."""

    def __init__(self, rates: SampleTimes, top: Diagram):
        self.rates = rates
        self.top = top
        self._levels: dict[tuple, tuple[Diagram, dict[str, Block], dict]] = {}

    def diagram(self, level: tuple) -> Diagram:
        return self._index(level)[0]

    def _index(self, level: tuple) -> tuple[Diagram, dict[str, Block], dict]:
        """The level's diagram, its blocks by id and its drivers ((block, port) -> source);
        KeyError if there is no such level."""
        if level not in self._levels:
            diagram = self.top
            for block_id in level:
                diagram = self._index(level[:-1])[1][block_id].subsystem
                if diagram is None:
                    raise KeyError(block_id)
            drivers = {(w.dst.block, w.dst.port): w.src for w in diagram.wires}
            self._levels[level] = (diagram, {b.id: b for b in diagram.blocks}, drivers)
        return self._levels[level]

    def block_rate(self, level: tuple, block: Block) -> Rate | None:
        path = _path(level, block.id)
        if block.subsystem is not None:
            inside = self.rates.inside.get(path)
            if not inside:
                return None
            return next(iter(inside)) if len(inside) == 1 else MIXED
        if block.type == "Inport":
            return self.signal_rate(level, PortRef(block.id, "y"))
        if block.type == "Outport":
            src = self._index(level)[2].get((block.id, "u"))
            return None if src is None else self.signal_rate(level, src)
        return self.rates.shown.get(path)

    def signal_rate(self, level: tuple, src: PortRef, depth: int = 0) -> SampleTime | None:
        """The rate of the signal leaving output `src` of a block of `level`: its block's,
        followed through subsystem ports and the holds the compiler puts on them."""
        if depth > 1000:
            return None  # ports in a loop: the compiler refuses that diagram
        flat = self.rates.flat
        try:
            _, blocks, _ = self._index(level)
            block = blocks[src.block]
        except KeyError:
            return None
        path = _path(level, block.id)
        if block.subsystem is not None:  # out of a subsystem: through its hold, or inside
            hold = flat.get(f"{path}/__out_{src.port}")
            if hold is not None:
                return hold
            inner = level + (block.id,)
            driver = self._index(inner)[2].get((src.port, "u"))
            return None if driver is None else self.signal_rate(inner, driver, depth + 1)
        if block.type == "Inport" and level:  # into a subsystem: from the level above
            hold = flat.get(f"{_path(level[:-1], level[-1])}/__in_{block.id}")
            if hold is not None:
                return hold
            driver = self._index(level[:-1])[2].get((level[-1], block.id))
            return None if driver is None else self.signal_rate(level[:-1], driver, depth + 1)
        return flat.get(path)


def seconds(value: float) -> str:
    """A period as the user would write it: 0.1, 0.25, 2, or 1/3 and 1/6 where a short
    decimal would not be exact (the compiler reads periods as such fractions)."""
    fraction = as_fraction(value)
    rest = fraction.denominator
    for factor in (2, 5):
        while rest % factor == 0:
            rest //= factor
    if rest == 1 or fraction.denominator > 1000:
        return f"{value:g}"
    return f"{fraction.numerator}/{fraction.denominator}"


def _path(level: Sequence[str], block_id: str) -> str:
    return "/".join((*level, block_id))


def skeleton(diagram: Diagram) -> Diagram:
    """What the compiler reads of a diagram, in new containers: blocks (ids, types, params,
    insides), wires' ends, parameters and settings; no layout, no wire bends.

    The editor's commands replace a block's params, a wire's ends or the settings, never
    change them in place, so the values are shared, not copied: about a tenth of the cost
    of a deep copy. Two skeletons compare equal when a compile would give the same result
    (a move or a new wire bend changes no rate)."""
    return Diagram(
        blocks=[Block(b.id, b.type, dict(b.params), None,
                      skeleton(b.subsystem) if b.subsystem is not None else None)
                for b in diagram.blocks],
        wires=[type(w)(w.src, w.dst) for w in diagram.wires],
        parameters=dict(diagram.parameters), simulation=diagram.simulation,
        path=diagram.path)

