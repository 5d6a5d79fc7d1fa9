"""Code generation: the blocks' source lines spliced into one Python function per task.

The engine calls `deriv`, `zc`, `outputs`, `update`, ... once per evaluation; inside, every
signal is a local variable and every parameter an exact literal, so there is no Python call
per block in the solver's inner loop. Only our own templates reach the generated text:
file content enters as numbers (via `lit`) or as formulas re-emitted from a checked syntax
tree (`expressions.to_code`), never verbatim.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from blocksim import expressions
from blocksim.blockspec import Emit, Sizes
from blocksim.compiler.flatten import FlatBlock, FlatDiagram
from blocksim.compiler.graph import ConstraintLoop
from blocksim.errors import CompileError


@dataclass
class Layout:
    """Where each block's slots live in the engine's flat arrays."""

    signal_of: dict[tuple[str, str], list[int]]  # (path, port) -> signal indices
    states: dict[str, range]
    discrete: dict[str, range]
    zcs: dict[str, range]
    n_signals: int
    n_states: int
    n_discrete: int
    n_zc: int


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
    return Layout(signal_of, states, discrete, zcs, ns, nx, nm, nz)


class Generator:
    """Builds the source of the model's functions and compiles them."""

    def __init__(self, flat: FlatDiagram, layout: Layout, order: list[tuple[FlatBlock, str]],
                 loops: dict[tuple[str, str], ConstraintLoop] | None = None):
        self.flat = flat
        self.layout = layout
        self.order = order
        self.loops = loops or {}
        self.namespace: dict[str, Any] = {"inf": math.inf, "nan": math.nan, "math": math,
                                          "np": np, **expressions.SCALAR_FUNCTIONS}
        self.index = {blk.path: i for i, blk in enumerate(flat.blocks)}
        self.emits = {blk.path: self._emit(blk) for blk in flat.blocks}
        plain = [blk for blk in flat.blocks if not blk.block_type.solves_loop]
        self._outputs_cache = {blk.path: self._code(blk, "output") for blk in plain}
        for unknown, loop in self.loops.items():  # solvers iterate on the lines of their loop
            self.emits[unknown[0]].loop = [line for line, _ in self._output_lines(loop.body)]
        for blk in flat.blocks:
            if blk.block_type.solves_loop:
                self._outputs_cache[blk.path] = self._code(blk, "output")

    def _code(self, blk: FlatBlock, method: str) -> Any:
        """A block's code lines; a block that cannot write them is named in the error."""
        try:
            return getattr(blk.impl, method)(self.emits[blk.path])
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise CompileError(f"cannot generate code: {exc}", block=blk.path,
                               file=self.flat.source) from None

    def _const(self, value: Any) -> str:
        name = f"C{len([k for k in self.namespace if k.startswith('C')])}"
        self.namespace[name] = np.array(value, dtype=float) if not callable(value) else value
        return name

    def _emit(self, blk: FlatBlock) -> Emit:
        lay = self.layout
        u = {}
        for port in blk.inputs:
            src = self.flat.drivers[(blk.path, port)]
            u[port] = [f"s{i}" for i in lay.signal_of[src]]
        y = {port: [f"s{i}" for i in lay.signal_of[(blk.path, port)]] for port in blk.outputs}
        return Emit(
            p=blk.p, u=u, y=y,
            x=[f"x_[{i}]" for i in lay.states[blk.path]],
            dx=[f"dx_[{i}]" for i in lay.states[blk.path]],
            m=[f"m_[{i}]" for i in lay.discrete[blk.path]],
            g=[f"g_[{i}]" for i in lay.zcs[blk.path]],
            z=[f"z_[{i}]" for i in lay.zcs[blk.path]],
            zo=[f"z_[{i}]" for i in lay.zcs[blk.path]],
            zn=[f"zn_[{i}]" for i in lay.zcs[blk.path]],
            index=self.index[blk.path],
            const=self._const,
        )

    # ----- which outputs each task needs -----
    def _needed(self, consumers: list[FlatBlock]) -> set[tuple[str, str]]:
        """Output ports read, directly or through feedthrough, by these blocks' inputs."""
        by_path = {blk.path: blk for blk in self.flat.blocks}
        needed: set[tuple[str, str]] = set()
        stack = [self.flat.drivers[(blk.path, port)] for blk in consumers for port in blk.inputs]
        while stack:
            node = stack.pop()
            if node in needed:
                continue
            needed.add(node)
            if node in self.loops:
                stack += list(self.loops[node].inputs)
            blk = by_path[node[0]]
            stack += [self.flat.drivers[(blk.path, inp)] for inp in blk.feedthrough.get(node[1], ())]
        return needed

    def _output_lines(self, needed: set[tuple[str, str]] | None) -> list[tuple[str, int]]:
        lines = []
        for blk, port in self.order:
            if needed is None or (blk.path, port) in needed:
                owner = self.index[blk.path]
                lines += [(line, owner) for line in self._outputs_cache[blk.path].get(port, [])]
        return lines

    def _block_lines(self, blocks: list[FlatBlock], method: str) -> list[tuple[str, int]]:
        lines = []
        for blk in blocks:
            owner = self.index[blk.path]
            lines += [(line, owner) for line in self._code(blk, method)]
        return lines

    # ----- the functions -----
    def source(self) -> tuple[str, list[int | None]]:
        """The module text and, for each of its lines, the index of the block that wrote it."""
        lay = self.layout
        blocks = self.flat.blocks
        with_states = [b for b in blocks if lay.states[b.path]]
        with_zc = [b for b in blocks if lay.zcs[b.path]]
        head = _plain(["x_ = x.tolist()", "m_ = m.tolist()", "z_ = z.tolist()"])
        all_signals = ", ".join(f"s{i}" for i in range(lay.n_signals))
        write_back = _plain(self._write_back())

        deriv = (head + self._output_lines(self._needed(with_states))
                 + _plain([f"dx_ = [0.0] * {lay.n_states}"])
                 + self._block_lines(with_states, "derivative") + _plain(["return dx_"]))
        zc = (head + self._output_lines(self._needed(with_zc))
              + _plain([f"g_ = [0.0] * {lay.n_zc}"])
              + self._block_lines(with_zc, "zero_crossing") + _plain(["return g_"]))
        outputs = head + self._output_lines(None) + _plain([f"return [{all_signals}]"])
        update = (head + _plain(["zn_ = zn.tolist()", "changed = False"])
                  + self._output_lines(None) + self._block_lines(blocks, "update")
                  + write_back + _plain(["return changed"]))
        pre = (head + self._output_lines(None) + self._block_lines(blocks, "pre_event")
               + write_back + _plain(["return None"]))
        after = (head + _plain(["changed = False"]) + self._output_lines(None)
                 + self._block_lines(blocks, "after_event") + write_back
                 + _plain(["return changed"]))

        text: list[str] = []
        owners: list[int | None] = []
        for name, args, body in (("deriv", "t, x, m, z", deriv), ("zc", "t, x, m, z", zc),
                                 ("outputs", "t, x, m, z", outputs),
                                 ("update", "t, x, m, z, zn, init, ev", update),
                                 ("pre_event", "t, x, m, z", pre),
                                 ("after_event", "t, x, m, z", after)):
            text.append(f"def {name}({args}):")
            owners.append(None)
            for line, owner in body:
                for part in line.split("\n"):
                    text.append("    " + part)
                    owners.append(owner)
            text.append("")
            owners.append(None)
        return "\n".join(text) + "\n", owners

    def _write_back(self) -> list[str]:
        lines = []
        if self.layout.n_states:
            lines.append("x[:] = x_")
        if self.layout.n_discrete:
            lines.append("m[:] = m_")
        return lines

    def compile(self, source: str, filename: str) -> dict[str, Callable]:
        code = compile(source, filename, "exec")
        exec(code, self.namespace)  # our generated text only; see module docstring
        names = ("deriv", "zc", "outputs", "update", "pre_event", "after_event")
        return {name: self.namespace[name] for name in names}


def _plain(lines: list[str]) -> list[tuple[str, None]]:
    """Lines that belong to no block (function heads and tails)."""
    return [(line, None) for line in lines]
