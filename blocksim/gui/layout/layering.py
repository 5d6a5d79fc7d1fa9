"""Columns for the automatic layout: which wires are feedback, and which column each block
takes. Without Qt.

A diagram with loops is drawn left to right by calling some wires feedback (they run
backwards). Several choices are tried (depth-first from the sources, either way round;
Eades-Lin-Smyth's greedy order; feedback taken from state outputs, as block diagrams are
usually drawn) and the one whose picture has the shortest wires wins. Columns then come
from the longest path, compacted so that wires are short, with sources next to what they
feed and loggers in the last column. Every step is near-linear in the size of the diagram:
a 1,000-block diagram must open in well under a second.
"""
from __future__ import annotations

import heapq
from collections import defaultdict, deque
from typing import Iterable, Mapping, Protocol, Sequence

SINK_TYPES = {"Output", "Scope", "XYGraph", "Outport", "Stop"}
SOURCE_TYPES = {"Inport"}
COMPACT_PASSES = 8


class Edge(Protocol):
    """What layering needs of a wire (see autolayout._Edge)."""

    wire: int
    src: str
    dst: str


class Layering:
    """Feedback choice and columns for one diagram level."""

    def __init__(self, ids: Sequence[str], edges: Sequence[Edge], types: Mapping[str, str],
                 stateful: Iterable[str]):
        self.ids = list(ids)
        self.edges = list(edges)
        self.types = types
        self.stateful = set(stateful)
        self.discovery: list[str] = []

    def run(self) -> tuple[set[int], dict[str, int]]:
        """(wires drawn as feedback, column of each block) of the best choice."""
        return self.choices()[0]

    def choices(self, wide: bool = False) -> list[tuple[set[int], dict[str, int]]]:
        """The different choices of feedback wires and columns, best first. `wide` adds a
        depth-first search started from every block, either way round (for a small
        diagram: where a loop is cut decides most of its crossings, and no single rule
        picks the cut a person would)."""
        has_input = {e.dst for e in self.edges}
        roots = [i for i in self.ids if i not in has_input] + \
            [i for i in self.ids if i in has_input]
        first, self.discovery = self._dfs(roots, self.edges)
        candidates = [first, self._dfs(roots, self.edges[::-1])[0], self._greedy_fas(),
                      self._states_last(roots)]
        if wide:
            for start in self.ids:
                others = [start] + [i for i in roots if i != start]
                candidates += [self._dfs(others, self.edges)[0],
                               self._dfs(others, self.edges[::-1])[0]]
        scored = []
        for i, back in enumerate(candidates):
            layer = self.layers(back)
            # a wire chosen as feedback that the columns turned forwards is drawn forwards
            back = {e.wire for e in self.edges if e.wire in back and layer[e.dst] <= layer[e.src]}
            scored.append((self._cost(back, layer), i, back, layer))
        scored.sort(key=lambda s: s[:2])
        distinct, seen = [], []
        for _, _, back, layer in scored:
            if (back, layer) not in seen:
                seen.append((back, layer))
                distinct.append((back, layer))
        return distinct

    # ----- feedback candidates -----
    def _dfs(self, roots: list[str], edges: list[Edge]) -> tuple[set[int], list[str]]:
        """Depth-first from the sources; an edge back onto the current path is feedback."""
        out: dict[str, list[Edge]] = defaultdict(list)
        for edge in edges:
            out[edge.src].append(edge)
        state: dict[str, int] = {}  # 1 on the path, 2 done
        back: set[int] = set()
        discovery: list[str] = []
        for root in roots:
            if root in state:
                continue
            stack = [(root, iter(out[root]))]
            state[root] = 1
            discovery.append(root)
            while stack:
                node, pending = stack[-1]
                edge = next(pending, None)
                if edge is None:
                    state[node] = 2
                    stack.pop()
                elif state.get(edge.dst) == 1:
                    back.add(edge.wire)
                elif edge.dst not in state:
                    state[edge.dst] = 1
                    discovery.append(edge.dst)
                    stack.append((edge.dst, iter(out[edge.dst])))
        return back, discovery

    def _greedy_fas(self) -> set[int]:
        """Eades-Lin-Smyth: peel sinks and sources, else the node with most out- over
        in-edges; with queues and a heap, so it stays near-linear on big diagrams."""
        ids = self.ids
        rank = {n: i for i, n in enumerate(ids)}
        succ: dict[str, list[str]] = defaultdict(list)
        pred: dict[str, list[str]] = defaultdict(list)
        ins: dict[str, int] = dict.fromkeys(ids, 0)
        outs: dict[str, int] = dict.fromkeys(ids, 0)
        for e in self.edges:
            if e.src != e.dst:
                succ[e.src].append(e.dst)
                pred[e.dst].append(e.src)
                outs[e.src] += 1
                ins[e.dst] += 1
        live = set(ids)
        sinks = deque(n for n in ids if outs[n] == 0)
        sources = deque(n for n in ids if ins[n] == 0 and outs[n] > 0)
        heap = [(ins[n] - outs[n], rank[n], n) for n in ids]
        heapq.heapify(heap)
        left: list[str] = []
        right: list[str] = []  # reversed at the end

        def remove(node: str) -> None:
            live.discard(node)
            for nxt in succ[node]:
                if nxt in live:
                    ins[nxt] -= 1
                    if ins[nxt] == 0 and outs[nxt] > 0:
                        sources.append(nxt)
                    heapq.heappush(heap, (ins[nxt] - outs[nxt], rank[nxt], nxt))
            for prev in pred[node]:
                if prev in live:
                    outs[prev] -= 1
                    if outs[prev] == 0:
                        sinks.append(prev)
                    heapq.heappush(heap, (ins[prev] - outs[prev], rank[prev], prev))

        while live:
            if sinks:
                node = sinks.popleft()
                if node in live:
                    right.append(node)
                    remove(node)
            elif sources:
                node = sources.popleft()
                if node in live and outs[node] > 0:
                    left.append(node)
                    remove(node)
            else:
                key, _, node = heapq.heappop(heap)
                if node in live and key == ins[node] - outs[node]:
                    left.append(node)
                    remove(node)
        order = {n: i for i, n in enumerate(left + right[::-1])}
        return {e.wire for e in self.edges if order[e.src] >= order[e.dst]}

    def _states_last(self, roots: list[str]) -> set[int]:
        """Feedback taken from the outputs of state blocks (integrators) where possible, the
        way block diagrams are usually drawn: cut the graph at the state outputs, order what
        is left, then keep each state's wire forward only if it does not close a loop."""
        fast = [e for e in self.edges if e.src not in self.stateful]
        back, _ = self._dfs(roots, fast)
        succ: dict[str, set[str]] = defaultdict(set)
        for e in fast:
            if e.wire not in back:
                succ[e.src].add(e.dst)
        for e in (e for e in self.edges if e.src in self.stateful):
            if _reaches(succ, e.dst, e.src):
                back.add(e.wire)
            else:
                succ[e.src].add(e.dst)
        return back

    def _cost(self, back: set[int], layer: Mapping[str, int]) -> float:
        """Long wires and wide feedback loops make a layout hard to read; feedback into an
        integrator (rather than out of one) looks unusual."""
        cost = 0.0
        for e in self.edges:
            span = layer[e.dst] - layer[e.src]
            if e.wire in back and span <= 0:
                cost += (1 - span) * 3 + 2
                cost += 12 * (e.dst in self.stateful) - 2 * (e.src in self.stateful)
            else:
                cost += max(span - 1, 0)
        return cost

    # ----- columns -----
    def layers(self, back: set[int]) -> dict[str, int]:
        """Columns: longest path from the sources, compacted, sources pulled to what they
        feed, and loggers in the last column unless that would make their wires long."""
        fwd = [e for e in self.edges if e.wire not in back and e.src != e.dst]
        preds: dict[str, list[str]] = defaultdict(list)
        succs: dict[str, list[str]] = defaultdict(list)
        for e in fwd:
            preds[e.dst].append(e.src)
            succs[e.src].append(e.dst)
        topo = _topological(self.discovery, preds, succs)
        layer: dict[str, int] = {}
        for node in topo:
            layer[node] = max((layer[p] + 1 for p in preds[node]), default=0)
        for node in reversed(topo):  # sources next to the first block they feed
            if not preds[node] and succs[node] and self.types[node] not in SOURCE_TYPES:
                layer[node] = max(layer[node], min(layer[s] for s in succs[node]) - 1)
        self._compact(layer, topo, preds, succs, [e for e in self.edges if e.wire in back])
        last = max(layer.values(), default=0)
        sinks = [n for n in topo if not succs[n] and self.types[n] in SINK_TYPES and preds[n]]
        if any(layer[n] == last and n not in sinks for n in topo):
            last += 1 if sinks else 0
        for node in sinks:
            if self.types[node] == "Outport" or layer[node] >= last - 2:
                layer[node] = last
        return layer

    def _compact(self, layer: dict[str, int], topo: list[str], preds, succs,
                 back: list[Edge]) -> None:
        """Move blocks a column at a time while that shortens the wires in total (forward
        wires must keep going forwards, feedback keeps going back): a cheap stand-in for
        network simplex that keeps layouts narrow."""
        back_out: dict[str, list[str]] = defaultdict(list)
        back_in: dict[str, list[str]] = defaultdict(list)
        for e in back:
            if e.src != e.dst:
                back_out[e.src].append(e.dst)
                back_in[e.dst].append(e.src)
        fixed = {n for n in topo if self.types[n] in SOURCE_TYPES or
                 (self.types[n] in SINK_TYPES and not succs[n])}
        for _ in range(COMPACT_PASSES):
            moved = False
            for node in reversed(topo):  # rightwards, sinks first
                if node in fixed or not succs[node]:
                    continue
                gain = len(succs[node]) - len(preds[node]) + len(back_in[node]) \
                    - len(back_out[node])
                limit = min(layer[s] for s in succs[node]) - 1
                limit = min([limit] + [layer[s] for s in back_in[node]])
                if gain > 0 and layer[node] < limit:
                    layer[node] = limit
                    moved = True
            for node in topo:  # leftwards
                if node in fixed or not preds[node]:
                    continue
                gain = len(preds[node]) - len(succs[node]) + len(back_out[node]) \
                    - len(back_in[node])
                limit = max(layer[p] for p in preds[node]) + 1
                limit = max([limit] + [layer[d] for d in back_out[node]])
                if gain > 0 and layer[node] > limit:
                    layer[node] = limit
                    moved = True
            if not moved:
                break


def _topological(discovery: list[str], preds: Mapping[str, list],
                 succs: Mapping[str, list]) -> list[str]:
    """Kahn's order, ties broken by order of discovery (a heap: no quadratic re-sorting)."""
    rank = {n: i for i, n in enumerate(discovery)}
    remaining = {n: len(preds.get(n, ())) for n in discovery}
    ready = [(rank[n], n) for n in discovery if remaining[n] == 0]
    heapq.heapify(ready)
    result = []
    while ready:
        _, node = heapq.heappop(ready)
        result.append(node)
        for s in succs.get(node, ()):
            remaining[s] -= 1
            if remaining[s] == 0:
                heapq.heappush(ready, (rank[s], s))
    return result


def _reaches(succ: Mapping[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        for nxt in succ.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False

