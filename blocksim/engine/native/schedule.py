"""Order a pure model function's blocks so that blocks of one kind sit together.

`native.fusion` turns consecutive blocks that generate the same code into one loop, and
numba's typing and lowering cost grows with the lines of a function. The code generator
orders blocks by their data dependencies only, which in a bank of relay oscillators
alternates relay, gain and bias per oscillator: nothing is consecutive, nothing fuses, and
numba spends about 2 s on 150 straight lines where three loops would do. Any order that
keeps every dependency computes the same values to the bit (each statement does the same
arithmetic on the same operands), so `cluster` picks, among the blocks whose inputs are
ready, one of the kind just emitted.

Only for functions whose statements have no effect but their assignments (`deriv`, `zc`,
`observe`, `probe`): event functions log entries in an order that matters. A statement the
analysis cannot see through (an effect, an array used whole or at a computed index, a line
owned by no block) is a barrier: nothing moves across it.
"""
from __future__ import annotations

import heapq
import re
from typing import Iterable

from blocksim.compiler import dataflow
from blocksim.engine.native import fusion

# The engine arrays generated code indexes (`dataflow._ARRAYS`).
ARRAYS = ("x_", "dx_", "m_", "z_", "g_", "zn_")
_SLOT = re.compile(r"\b(" + "|".join(ARRAYS) + r")\[(\d+)\]")
_WHOLE = re.compile(r"\b(?:" + "|".join(ARRAYS) + r")\b(?!\[\d+\])")
# Below this many blocks' chunks a function keeps its order: it compiles in a fraction of
# a second anyway, and straight-line code with constant indices is what runs fastest.
MIN_CHUNKS = 32


class _Access:
    """What a chunk (one block's consecutive statements) reads and writes, as names and
    array slots ("x_[3]"); `barrier` when that is not known precisely."""

    __slots__ = ("reads", "writes", "barrier")

    def __init__(self, statements: list[dataflow.Statement]):
        self.reads: set[str] = set()
        self.writes: set[str] = set()
        self.barrier = False
        for st in statements:
            text = "\n".join(st.lines)
            if st.owner is None or "*" in st.stores or _WHOLE.search(text):
                self.barrier = True
                return
            self.reads |= {name for name in st.reads if name not in ARRAYS}
            self.reads |= {f"{array}[{int(k)}]" for array, k in _SLOT.findall(text)}
            self.writes |= st.writes | st.stores


def _chunks(statements: Iterable[dataflow.Statement]
            ) -> list[tuple[int | None, list[dataflow.Statement]]]:
    """Consecutive statements of one block together (as `fusion.group` does)."""
    chunks: list[tuple[int | None, list[dataflow.Statement]]] = []
    for st in statements:
        if chunks and st.owner is not None and chunks[-1][0] == st.owner:
            chunks[-1][1].append(st)
        else:
            chunks.append((st.owner, [st]))
    return chunks


def _predecessors(accesses: list[_Access]) -> list[set[int]]:
    """For each chunk of a stretch without barriers, the earlier chunks it must follow:
    the last writer of what it reads or writes, and the readers of what it writes."""
    last_writer: dict[str, int] = {}
    readers: dict[str, list[int]] = {}
    before: list[set[int]] = []
    for i, access in enumerate(accesses):
        deps: set[int] = set()
        for name in access.reads:
            if name in last_writer:
                deps.add(last_writer[name])
        for name in access.writes:
            if name in last_writer:
                deps.add(last_writer[name])
            deps.update(readers.get(name, ()))
        for name in access.reads:
            readers.setdefault(name, []).append(i)
        for name in access.writes:
            last_writer[name] = i
            readers[name] = []
        deps.discard(i)
        before.append(deps)
    return before


def _order(keys: list[object], before: list[set[int]], groupable: set[object]) -> list[int]:
    """A topological order that keeps blocks of one groupable kind together: after a
    chunk, a ready chunk of the same kind (and another block) if any, else the earliest
    ready chunk."""
    n = len(keys)
    waiting = [len(deps) for deps in before]
    after: list[list[int]] = [[] for _ in range(n)]
    for i, deps in enumerate(before):
        for j in deps:
            after[j].append(i)
    ready: list[int] = []
    by_kind: dict[object, list[int]] = {}

    def release(i: int) -> None:
        heapq.heappush(ready, i)
        if keys[i] in groupable:
            heapq.heappush(by_kind.setdefault(keys[i], []), i)

    for i in range(n):
        if not waiting[i]:
            release(i)
    done = [False] * n
    order: list[int] = []
    last: int | None = None
    while len(order) < n:
        pick = None
        if last is not None and keys[last] in groupable:
            same = by_kind.get(keys[last], [])
            while same and done[same[0]]:
                heapq.heappop(same)
            if same:
                pick = heapq.heappop(same)
        if pick is None:
            while done[ready[0]]:
                heapq.heappop(ready)
            pick = heapq.heappop(ready)
        done[pick] = True
        order.append(pick)
        last = pick
        for i in after[pick]:
            waiting[i] -= 1
            if not waiting[i]:
                release(i)
    return order


def cluster(statements: list[dataflow.Statement]) -> list[fusion.Chunk]:
    """The statements as `fusion` chunks (owner, lines), blocks of one kind brought
    together where the dependencies allow (in functions of MIN_CHUNKS chunks or more);
    barriers stay where they are."""
    chunks = _chunks(statements)
    plain = [(owner, [line for st in sts for line in st.lines]) for owner, sts in chunks]
    if len(chunks) < MIN_CHUNKS:
        return plain
    templated = fusion.templates(plain)
    keys: list[object] = [(text, tuple(fusion.kinds(values))) for _, text, values in templated]
    accesses = [_Access(sts) for _, sts in chunks]
    result: list[fusion.Chunk] = []
    start = 0
    for end in [i for i, a in enumerate(accesses) if a.barrier] + [len(chunks)]:
        stretch = range(start, end)
        counts: dict[object, int] = {}
        for i in stretch:
            counts[keys[i]] = counts.get(keys[i], 0) + 1
        groupable = {key for key, count in counts.items() if count >= fusion.MIN_RUN}
        if groupable:
            local = _order([keys[i] for i in stretch],
                           _predecessors([accesses[i] for i in stretch]), groupable)
            result += [plain[start + i] for i in local]
        else:
            result += plain[start:end]
        if end < len(chunks):
            result.append(plain[end])  # the barrier itself
        start = end + 1
    return result
