"""Code generation: the blocks' source lines spliced into one Python function per task.

The engine calls `deriv`, `zc`, `outputs`, `update`, ... once per evaluation; inside, every
signal is a local variable and every parameter number a module global (a parameter slot,
`blocksim.expressions.param_slots`, which new values rebind without new code), so there is no Python
call per block in the solver's inner loop. Only our own templates reach the generated text:
file content enters as numbers (via `lit`, as slots) or as formulas re-emitted from a
checked syntax tree (`expressions.to_code`), never verbatim. Each block's calls are kept
(`calls`) so that `compiler.runtime` can replay them with new parameter values.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from blocksim.expressions import language as expressions

from blocksim.blocktypes import history_ring

from blocksim.expressions import param_slots
from blocksim.blocktypes.blockspec import BlockType, Emit, Sizes, lit
from blocksim.compiler import code_reuse, dataflow, lazy_compile
from blocksim.compiler.faults import BLOCK_FAULTS
from blocksim.compiler.flatten import FlatBlock, FlatDiagram
from blocksim.compiler.graph import ConstraintLoop
from blocksim.compiler.sampling import Sampling
from blocksim.errors import CompileError
from blocksim.blocktypes.sampletime import INHERITED, SampleTime


@dataclass
class Layout:
    """Where each block's slots live in the engine's flat arrays."""

    signal_of: dict[tuple[str, str], list[int]]  # (path, port) -> signal indices
    states: dict[str, range]
    discrete: dict[str, range]
    zcs: dict[str, range]
    n_signals: int
    n_states: int
    n_discrete: int  # the ordinary discrete slots; the history rings follow them in m
    n_zc: int
    history: dict[str, range] = field(default_factory=dict)  # each block's ring in m

    @property
    def m_size(self) -> int:
        """The length of the engine's array m: discrete slots, then history rings."""
        return max([self.n_discrete] + [r.stop for r in self.history.values()])


def allocate(flat: FlatDiagram, sizes: dict[str, Sizes]) -> Layout:
    """Give every output element a signal index and every block its slot ranges."""
    signal_of: dict[tuple[str, str], list[int]] = {}
    states, discrete, zcs = {}, {}, {}
    ns = nx = nm = nz = 0
    for blk in flat.blocks:
        sz = sizes[blk.path]
        for port in blk.outputs:
            w = sz.outputs[port]
            signal_of[(blk.path, port)] = list(range(ns, ns + w))
            ns += w
        states[blk.path] = range(nx, nx + sz.states)
        discrete[blk.path] = range(nm, nm + sz.discrete)
        zcs[blk.path] = range(nz, nz + sz.zero_crossings)
        nx += sz.states
        nm += sz.discrete
        nz += sz.zero_crossings
    history, nh = {}, nm
    for blk in flat.blocks:
        spec = sizes[blk.path].history
        if spec is not None:
            width = len(signal_of[flat.drivers[(blk.path, spec.port)]])
            size = history_ring.region_size(width, spec.capacity)
            history[blk.path] = range(nh, nh + size)
            nh += size
    return Layout(signal_of, states, discrete, zcs, ns, nx, nm, nz, history)


class Generator:
    """Builds the source of the model's functions and compiles them."""

    def __init__(self, flat: FlatDiagram, layout: Layout, order: list[tuple[FlatBlock, str]],
                 loops: dict[tuple[str, str], ConstraintLoop] | None = None,
                 sampling: Sampling | None = None,
                 hit_order: list[tuple[FlatBlock, str]] | None = None):
        self.flat = flat
        self.layout = layout
        self.order = order
        self.loops = loops or {}
        self.sampling = sampling
        self.hit_order = hit_order or []
        self.namespace: dict[str, Any] = {"inf": math.inf, "nan": math.nan, "math": math,
                                          "np": np, **expressions.SCALAR_FUNCTIONS,
                                          "_hist_read": history_ring.hist_read,
                                          "_hist_due": history_ring.hist_due,
                                          "_hist_later": history_ring.later}
        self.index = {blk.path: i for i, blk in enumerate(flat.blocks)}
        self.by_path = {blk.path: blk for blk in flat.blocks}
        self.port_of_signal: list[tuple[str, str]] = [("", "")] * layout.n_signals
        for endpoint, indices in layout.signal_of.items():
            for i in indices:
                self.port_of_signal[i] = endpoint
        self.empty: set[str] = set()  # functions no block contributes code to
        self._n_consts = 0
        # Per block, its recorded code calls (their parameter slots), in order.
        self.calls: dict[str, list[param_slots.SlotCall]] = {}
        self.n_slots = 0
        self.reuse = code_reuse.CodeReuse()
        self._kinds: dict[str, tuple] = {}  # per block with twins: its kind and names
        # Twins worth a template: three or more (the first makes it, the second checks it).
        counts = Counter(id(blk.twin) for blk in flat.blocks if blk.twin is not None)
        self._many = {twin for twin, n in counts.items() if n >= 3}
        # Each output's signal names ("s12", ...), written once for its block and readers.
        self._signal_names = {endpoint: [f"s{i}" for i in indices]
                              for endpoint, indices in layout.signal_of.items()}
        self._ordered_lines: list[tuple[tuple[str, str], list[tuple[str, int]]]] | None = None
        self.emits = {blk.path: self._emit(blk) for blk in flat.blocks}
        self._enable_resets()
        plain = [blk for blk in flat.blocks if not blk.block_type.solves_loop]
        self._outputs_cache = {blk.path: self._code(blk, "output") for blk in plain}
        for unknown, loop in self.loops.items():  # solvers iterate on the lines of their loop
            self.emits[unknown[0]].loop = [line for line, _ in self._output_lines(loop.body)]
        for blk in flat.blocks:
            if blk.block_type.solves_loop:
                self._outputs_cache[blk.path] = self._code(blk, "output")

    def _code(self, blk: FlatBlock, method: str) -> Any:
        """A block's code lines; a block that cannot write them is named in the error."""
        emit = self.emits[blk.path]
        try:
            if id(blk.twin) not in self._many or emit.loop or emit.resets:
                return self._recorded(blk, method, lambda: getattr(blk.impl, method)(emit))
            kind = self._kinds.get(blk.path)
            if kind is None:
                kind = self._kinds[blk.path] = (
                    (id(blk.twin), code_reuse.emit_shape(emit)), code_reuse.emit_names(emit))
            key = (method, kind[0])
            template = self.reuse.ready(key)
            if template is not None:  # a twin's code, checked: with this block's names
                first = self.n_slots
                return self._keep(blk, method, first, template.fill(kind[1], first),
                                  template.values, ())
            return self._recorded(blk, method, lambda: getattr(blk.impl, method)(emit),
                                  key, kind[1])
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise CompileError(f"cannot generate code: {exc}", block=blk.path,
                               file=self.flat.source) from None
        except BLOCK_FAULTS as exc:
            raise CompileError(f"cannot generate code: {type(exc).__name__}: {exc}",
                               block=blk.path, file=self.flat.source) from None

    def _recorded(self, blk: FlatBlock, method: str, make: Callable[[], Any],
                  twins: tuple | None = None, names: list[str] | None = None) -> Any:
        """What `make` returns (a block's code), its numbers as new parameter slots; for
        a block with twins (`twins`: their kind, `names`: the block's), its code may
        become the template of its kind (`code_reuse`)."""
        first = self.n_slots

        def record() -> tuple[Any, list[float], list[str]]:
            with param_slots.Recorder(first) as rec:
                made = make()
            return made, rec.values, rec.consts

        if twins is None:
            result, values, consts = record()
        else:
            result, values, consts = self.reuse.code(twins, names, first, record)
        return self._keep(blk, method, first, result, values, consts)

    def _keep(self, blk: FlatBlock, method: str, first: int, result: Any,
              values: list[float], consts: list[str] | tuple[str, ...]) -> Any:
        """Bind a block's code's parameter slots (from `first`) and keep the call."""
        if values:
            namespace = self.namespace
            for k, value in enumerate(values, first):
                namespace[param_slots.PREFIX + str(k)] = value
            self.n_slots += len(values)
        calls = self.calls.get(blk.path)
        if calls is None:
            calls = self.calls[blk.path] = []
        calls.append(param_slots.SlotCall(method, first, len(values), tuple(consts), result))
        return result

    def _const(self, value: Any) -> str:
        name = f"C{self._n_consts}"
        self._n_consts += 1
        self.namespace[name] = const_value(value)
        recorder = param_slots.active()
        if recorder is not None:
            recorder.consts.append(name)
        return name

    def _emit(self, blk: FlatBlock) -> Emit:
        lay = self.layout
        names, drivers = self._signal_names, self.flat.drivers
        u = {port: list(names[drivers[(blk.path, port)]]) for port in blk.inputs}
        y = {port: list(names[(blk.path, port)]) for port in blk.outputs}
        states, zcs = lay.states[blk.path], lay.zcs[blk.path]
        return Emit(
            p=blk.p, u=u, y=y,
            x=_slots("x_", states),
            dx=_slots("dx_", states),
            m=_slots("m_", lay.discrete[blk.path]),
            g=_slots("g_", zcs),
            z=_slots("z_", zcs),
            zo=_slots("z_", zcs),
            zn=_slots("zn_", zcs),
            index=self.index[blk.path],
            const=self._const,
            rate=self.sampling.block_rates[blk.path] if self.sampling else SampleTime(INHERITED),
            gate=self._gate(blk),
            watch=[self._running(self.by_path[src]) for src in blk.watch],
            hist=lay.history[blk.path].start if blk.path in lay.history else -1,
            index_of=self.index,
        )

    # ----- enabled subsystems -----
    def _gate(self, blk: FlatBlock) -> str:
        """Nonzero while every enabled subsystem around the block is enabled."""
        modes = [f"m_[{self.layout.discrete[gate].start}]" for gate in blk.gates]
        if not modes:
            return "1.0"
        return modes[0] if len(modes) == 1 else f"({' * '.join(modes)})"

    def _running(self, hold: FlatBlock) -> str:
        """Nonzero while the subsystem whose output `hold` is runs: an enabled one while
        enabled, a triggered one during the event of its trigger edge (its flag)."""
        if hold.block_type.name == "TriggeredHold":
            return f"m_[{self.layout.discrete[hold.trigger].start}]"
        return self._gate(hold)

    def _enable_resets(self) -> None:
        """The lines an enable gate runs when its subsystem is enabled with "reset": every
        state and discrete slot inside back to its initial value."""
        for gate in self.flat.blocks:
            if gate.block_type.name != "EnableGate" or gate.p.states_when_enabling != "reset":
                continue
            lines = []
            for blk in self.flat.blocks:
                if gate.path not in blk.gates:
                    continue
                x_slots, m_slots = self.layout.states[blk.path], self.layout.discrete[blk.path]
                x0 = self._code_call(blk, "initial_states", len(x_slots))
                m0 = self._code_call(blk, "initial_discrete", len(m_slots))
                lines += self._recorded(blk, "resets",
                                        lambda: reset_lines(x_slots, m_slots, x0, m0))
            self.emits[gate.path].resets = lines

    def _code_call(self, blk: FlatBlock, method: str, *args: Any) -> Any:
        """A block's own method called with its parameters (errors name the block)."""
        try:
            return list(getattr(blk.impl, method)(blk.p, *args))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise CompileError(f"{method}() failed: {exc}", block=blk.path,
                               file=self.flat.source) from None

    def _frozen_states(self) -> list[tuple[str, int]]:
        """Derivative lines of blocks inside enabled subsystems: zero while disabled."""
        lines: list[tuple[str, int]] = []
        for blk in self.flat.blocks:
            states = self.layout.states[blk.path]
            if blk.gates and len(states):
                owner = self.index[blk.path]
                lines.append((f"if {self.emits[blk.path].gate} == 0.0:", owner))
                lines += [(f"    dx_[{i}] = 0.0", owner) for i in states]
        return lines

    # ----- which outputs each function needs -----
    def _referenced(self, lines: list[str]) -> set[tuple[str, str]]:
        """Output ports whose signals these code lines name (inputs read, outputs written)."""
        # (One search over the joined text: a name never spans a line break.)
        found = {int(k) for k in _SIGNAL_INDEX.findall("\n".join(lines))}
        ports = self.port_of_signal
        return {ports[i] for i in found if i < len(ports)}

    def _needed(self, roots: set[tuple[str, str]]) -> set[tuple[str, str]]:
        """These output ports and every one they read, directly or through feedthrough."""
        needed: set[tuple[str, str]] = set()
        stack = list(roots)
        while stack:
            node = stack.pop()
            if node in needed:
                continue
            needed.add(node)
            if node in self.loops:
                stack += list(self.loops[node].inputs)
            blk = self.by_path[node[0]]
            stack += [self.flat.drivers[(blk.path, inp)] for inp in blk.feedthrough.get(node[1], ())]
        return needed

    def _output_lines(self, needed: set[tuple[str, str]] | None) -> list[tuple[str, int]]:
        """The output lines of these ports (all: None), in the order outputs are computed."""
        index, cache = self.index, self._outputs_cache
        ordered = self._ordered_lines
        if ordered is None:  # each port's lines with their owner
            complete = len(cache) == len(self.flat.blocks)  # (not yet while loops are made)
            ordered = [((blk.path, port), [(line, index[blk.path])
                                           for line in cache[blk.path].get(port, [])])
                       for blk, port in self.order
                       if complete or needed is None or (blk.path, port) in needed]
            if complete:
                self._ordered_lines = ordered  # made once for all the functions
        lines: list[tuple[str, int]] = []
        for endpoint, owned in ordered:
            if owned and (needed is None or endpoint in needed):
                lines += owned
        return lines

    def _method(self, blocks: list[FlatBlock], method: str) -> list[tuple[str, int]]:
        """The lines these blocks contribute to one method, each with its block's index.
        A block type that keeps the base class's method (no lines, whatever its
        parameters) is not asked: most blocks have no event code, and asking each of
        10,000 blocks three times was a fifth of compiling them."""
        lines = []
        base = getattr(BlockType, method)
        for blk in blocks:
            if getattr(type(blk.impl), method, None) is base:
                continue
            owner = self.index[blk.path]
            lines += [(line, owner) for line in self._code(blk, method)]
        return lines

    def _body(self, code: list[tuple[str, int]], pure: bool) -> list[tuple[str, int]]:
        """Block lines preceded by the output lines they need (only those: an event function
        that recomputed every signal would cost as much as `outputs` at each pass)."""
        outputs = self._output_lines(self._needed(self._referenced([ln for ln, _ in code])))
        if pure and not self.loops:
            return _propagate_copies(outputs + code)
        return outputs + code

    # ----- the functions -----
    def source(self) -> tuple[str, list[int | None]]:
        """The module text and, for each of its lines, the index of the block that wrote it.

        Functions whose blocks contribute no code at all are recorded in `self.empty`: the
        engine need not call them.
        """
        lay = self.layout
        blocks = self.flat.blocks
        with_states = [b for b in blocks if lay.states[b.path]]
        with_zc = [b for b in blocks if lay.zcs[b.path]]
        all_signals = ", ".join(f"s{i}" for i in range(lay.n_signals))
        self.empty = set()

        deriv = (self._body(self._method(with_states, "derivative") + self._frozen_states(),
                            pure=True),
                 [f"dx_ = [0.0] * {lay.n_states}"], ["return dx_"])
        zc = (self._body(self._method(with_zc, "zero_crossing"), pure=True),
              [f"g_ = [0.0] * {lay.n_zc}"], ["return g_"])
        outputs = (self._output_lines(None), [], [f"return [{all_signals}]"])
        bodies = {"deriv": deriv, "zc": zc, "outputs": outputs}
        for name, method, result in (("update", "update", "changed"),
                                     ("pre_event", "pre_event", "None"),
                                     ("after_event", "after_event", "changed")):
            code = self._method(blocks, method)
            if not code:
                self.empty.add(name)
                bodies[name] = ([], [], ["return False" if result == "changed" else "return None"])
                continue
            written = _arrays_in([ln for ln, _ in code], ("x_", "m_"))
            tail = [self._write_back(a) for a in ("x_", "m_") if a in written]
            head = ["changed = False"] if result == "changed" else []
            bodies[name] = (self._body(code, pure=False), head, tail + [f"return {result}"])

        sample = self._sample_lines()
        if sample:
            written = _arrays_in([ln for ln, _ in sample], ("x_", "m_"))
            tail = [self._write_back(a) for a in ("x_", "m_") if a in written]
            bodies["sample"] = (sample, ["hits_ = hits"], tail + ["return None"])
        else:
            self.empty.add("sample")
            bodies["sample"] = ([], [], ["return None"])
        next_time = self._next_time_lines()
        bodies["next_time"] = (next_time, [], ["return tn" if next_time else "return inf"])

        text: list[str] = []
        owners: list[int | None] = []
        for name, args in (("deriv", "t, x, m, z"), ("zc", "t, x, m, z"),
                           ("outputs", "t, x, m, z"), ("update", "t, x, m, z, zn, init, ev"),
                           ("pre_event", "t, x, m, z"), ("after_event", "t, x, m, z"),
                           ("sample", "t, x, m, z, hits"), ("next_time", "t, m")):
            body, before, after = bodies[name]
            used = _arrays_in([ln for ln, _ in body], _HEADS)
            heads = [self._head(a) for a in _HEADS if a in used]
            text.append(f"def {name}({args}):")
            owners.append(None)
            for line, owner in _plain(heads + before) + body + _plain(after):
                for part in line.split("\n"):
                    text.append("    " + part)
                    owners.append(owner)
            text.append("")
            owners.append(None)
        return "\n".join(text) + "\n", owners

    def _ordinary(self, array: str) -> str:
        """The array as generated code copies it into a list: m without the history rings
        (a ring is read from `m` itself; copying it per call would cost more than a step)."""
        lay = self.layout
        if array == "m_" and lay.m_size > lay.n_discrete:
            return f"m[:{lay.n_discrete}]"
        return array[:-1]

    def _head(self, array: str) -> str:
        return f"{array} = {self._ordinary(array)}.tolist()"

    def _write_back(self, array: str) -> str:
        target = self._ordinary(array)
        return f"{target} = {array}" if "[" in target else f"{target}[:] = {array}"

    def _sample_lines(self) -> list[tuple[str, int]]:
        """The body of `sample(t, x, m, z, hits)`, run once at each sample hit.

        Every output in the order of the hit (where a discrete block reads its inputs); a
        discrete block whose rate hits (`hits[r]` true) first sets its held values from its
        inputs, then its output reads them as usual. Once all outputs are set, the hitting
        blocks update their discrete states.
        """
        sampling = self.sampling
        if sampling is None or not sampling.rate_of:
            return []
        lines: list[tuple[str, int]] = []
        held: dict[str, dict[str, list[str]]] = {}
        discrete = [blk for blk in self.flat.blocks if blk.path in sampling.rate_of]
        for blk in discrete:
            held[blk.path] = self._code(blk, "sample_output")
        for blk, port in self.hit_order:
            owner = self.index[blk.path]
            if blk.path in held and held[blk.path].get(port):
                lines += _guarded(self._hit(blk), held[blk.path][port], owner)
            lines += [(line, owner) for line in self._outputs_cache[blk.path].get(port, [])]
        for blk in discrete:
            update = self._code(blk, "sample_update")
            if update:
                lines += _guarded(self._hit(blk), update, self.index[blk.path])
        return lines

    def _next_time_lines(self) -> list[tuple[str, int]]:
        """The body of `next_time(t, m)`: the earliest time event after t of the blocks that
        have them (`BlockType.next_time`), with the discrete states as settled at t, in
        `tn` (none: the engine does not call it)."""
        lines: list[tuple[str, int]] = []
        for blk in self.flat.blocks:
            if not blk.block_type.has_time_events:
                continue
            owner = self.index[blk.path]
            if not lines:
                lines.append((f"tn = {self._code(blk, 'next_time')}", owner))
                continue
            var = f"_t{owner}"
            lines += [(f"{var} = {self._code(blk, 'next_time')}", owner),
                      (f"if {var} < tn: tn = {var}", owner)]
        return lines

    def _hit(self, blk: FlatBlock) -> str:
        """True at a hit of the block's rate (and, in an enabled subsystem, while enabled)."""
        hit = f"hits_[{self.sampling.rate_of[blk.path]}]"
        return f"{hit} and {self.emits[blk.path].gate} != 0.0" if blk.gates else hit

    def compile(self, source: str, filename: str) -> dict[str, Callable]:
        """The module's functions; the large ones compile on their first call
        (`lazy_compile`)."""
        text, lines, spans = lazy_compile.module_text(source)
        if spans:
            self.namespace[lazy_compile.HELPER] = lazy_compile.LazyFunctions(
                lines, spans, filename)
        code = compile(text, filename, "exec")
        exec(code, self.namespace)  # our generated text only; see module docstring
        names = ("deriv", "zc", "outputs", "update", "pre_event", "after_event", "sample",
                 "next_time")
        return {name: self.namespace[name] for name in names}


def _slots(array: str, indices: range) -> list[str]:
    """The names of a block's slots in one of the engine's arrays ("x_[3]", ...)."""
    return [f"{array}[{i}]" for i in indices] if indices else []


def const_value(value: Any) -> Any:
    """An array constant as generated code reads it (a callable stays itself)."""
    return np.array(value, dtype=float) if not callable(value) else value


def reset_lines(x_slots: range, m_slots: range, x0: list[float], m0: list[float]) -> list[str]:
    """The lines that set a block's states back to their initial values (an enabled
    subsystem enabled with "reset")."""
    return ([f"x_[{i}] = {lit(v)}" for i, v in zip(x_slots, x0)]
            + [f"m_[{i}] = {lit(v)}" for i, v in zip(m_slots, m0)])


_SIGNAL_INDEX = re.compile(r"\bs(\d+)\b")
_SIGNAL_NAME = re.compile(r"\bs\d+\b")
_HEADS = ("x_", "m_", "z_", "zn_")
_ARRAY_NAME = re.compile(r"\b(x_|m_|z_|zn_)\b")
# An output line that only copies a value the function cannot change: a state, a mode, a
# latched sign, the time or another signal (literals stay: they document the parameters).
_COPY = dataflow.COPY_LINE


def _arrays_in(lines: list[str], names: tuple[str, ...]) -> set[str]:
    """Which of the engine's arrays (x_, m_, ...) these lines name."""
    found = set(_ARRAY_NAME.findall("\n".join(lines)))  # (a name never spans lines)
    return found & set(names)


def _propagate_copies(lines: list[tuple[str, int | None]]) -> list[tuple[str, int | None]]:
    """Straight-line code without its pure copies (`s3 = x_[2]`): readers use the source.

    Only for functions that never write x_, m_ or z_ (deriv, zc), where a copy and its
    source are the same value everywhere; a chain of lags then derives in one line each.
    """
    alias: dict[str, str] = {}
    out = []

    def substitute(match: re.Match) -> str:
        return alias.get(match.group(0), match.group(0))

    for line, owner in lines:
        copy = _COPY.match(line)
        if copy and copy.group(1) not in alias:  # (its source renamed as a reader would)
            source = copy.group(2)
            alias[copy.group(1)] = alias.get(source, source)
            continue
        if alias:
            line = _SIGNAL_NAME.sub(substitute, line)
        copy = _COPY.match(line)
        if copy:
            alias[copy.group(1)] = copy.group(2)
            continue
        out.append((line, owner))
    return out


def _guarded(condition: str, lines: list[str], owner: int) -> list[tuple[str, int]]:
    """`if condition:` with the lines (and the lines inside them) indented under it."""
    body = ["    " + part for line in lines for part in line.split("\n")]
    return [(f"if {condition}:", owner)] + [(line, owner) for line in body]


def _plain(lines: list[str]) -> list[tuple[str, None]]:
    """Lines that belong to no block (function heads and tails)."""
    return [(line, None) for line in lines]
