"""The order of the blocks within each column of the automatic layout: few crossings.

The classic layer-by-layer sweep: each column is sorted by the mean position of the ports
its blocks are wired to in the column before (sweeping right) or after (sweeping left),
then adjacent pairs are swapped while that removes crossings. The best order seen is
kept, and the sweeps stop once a few in a row found nothing better; crossings are
counted with a Fenwick tree (O(E log E) per pair of columns), so big diagrams stay fast.
Feedback wires get their rows afterwards (see feedback). Without Qt.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Mapping, Protocol, Sequence

SWEEPS = 12
PATIENCE = 4  # sweeps without a better order before giving up
TRANSPOSE_LIMIT = 60  # columns longer than this skip the pairwise swaps (cost ~ n^2)

Link = tuple[Any, float, float]  # (other node key, own port fraction, other port fraction)


class Node(Protocol):
    key: Any
    order: float


class Orderer:
    """Orders the columns of one layout in place.

    `succ[key]` links a node to nodes of the next column, `pred[key]` to the column before
    (with the fraction of the block height where each end's port sits).
    """

    def __init__(self, nodes: Mapping[Any, Node], succ: Mapping[Any, Sequence[Link]],
                 pred: Mapping[Any, Sequence[Link]]):
        self.nodes = nodes
        self.succ = succ
        self.pred = pred

    def run(self, layers: list[list[Node]]) -> list[list[Node]]:
        number(layers)
        best = [list(layer) for layer in layers]
        best_cross, best_sweep = self.crossings(layers), -1
        for sweep in range(SWEEPS):
            if sweep - best_sweep > PATIENCE:
                break  # sweeps only cycle between the same orders now
            down = sweep % 2 == 0
            indices = range(1, len(layers)) if down else range(len(layers) - 2, -1, -1)
            for i in indices:
                self._sort(layers[i], down)
            for i in indices:
                self._transpose(layers, i)
            crossings = self.crossings(layers)
            if crossings < best_cross:
                best, best_cross = [list(layer) for layer in layers], crossings
                best_sweep = sweep
            if best_cross == 0:
                break
        number(best)
        return best

    def _sort(self, layer: list[Node], down: bool) -> None:
        """Sort by the mean position of the ports wired to (barycentre)."""
        nodes = self.nodes
        centers = {}
        for node in layer:
            if down:  # pred links are (other, other's fraction, own fraction)
                nbrs = [nodes[k].order + fa for k, fa, _ in self.pred.get(node.key, ())]
            else:  # succ links are (other, own fraction, other's fraction)
                nbrs = [nodes[k].order + fb for k, _, fb in self.succ.get(node.key, ())]
            centers[node.key] = sum(nbrs) / len(nbrs) if nbrs else node.order + 0.5
        layer.sort(key=lambda n: (centers[n.key], n.order))
        for pos, node in enumerate(layer):
            node.order = pos

    def _transpose(self, layers: list[list[Node]], i: int) -> None:
        """Swap neighbours in column i while that lowers the crossings with both sides."""
        layer = layers[i]
        if len(layer) > TRANSPOSE_LIMIT:
            return
        # where each node's wires end in the columns either side (fixed while swapping here)
        ends = {}
        for node in layer:
            ends[node.key] = tuple(
                sorted(self.nodes[link[0]].order + link[other] for link in table.get(node.key, ()))
                for table, other in ((self.pred, 1), (self.succ, 2)))
        for _ in range(4):
            improved = False
            for k in range(len(layer) - 1):
                a, b = layer[k], layer[k + 1]
                if _pair_crossings(ends[b.key], ends[a.key]) < \
                        _pair_crossings(ends[a.key], ends[b.key]):
                    layer[k], layer[k + 1] = b, a
                    a.order, b.order = b.order, a.order
                    improved = True
            if not improved:
                break

    def crossings(self, layers: list[list[Node]]) -> int:
        total = 0
        for layer in layers[:-1]:
            pairs = [(node.order + fa, self.nodes[b].order + fb)
                     for node in layer for b, fa, fb in self.succ.get(node.key, ())]
            total += count_inversions(pairs)
        return total


def _pair_crossings(upper: tuple[list[float], ...], lower: tuple[list[float], ...]) -> int:
    """Crossings between the wires of two neighbours when `upper` is above `lower`: per
    side, pairs whose far ends are the other way round (the lists are sorted)."""
    return sum(bisect_left(lows, u) for ups, lows in zip(upper, lower) for u in ups)


def number(layers: list[list[Node]]) -> None:
    for layer in layers:
        for pos, node in enumerate(layer):
            node.order = pos


def count_inversions(pairs: list[tuple[float, float]]) -> int:
    """Pairs (a1, b1), (a2, b2) with a1 < a2 and b1 > b2: crossing wires between two
    columns (wires from one port never cross each other)."""
    if len(pairs) < 2:
        return 0
    pairs.sort()
    values = sorted({b for _, b in pairs})
    tree = [0] * (len(values) + 1)
    inserted = 0
    total = 0
    i = 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        for _, b in pairs[i:j]:  # earlier wires whose other end is lower down
            k, below = bisect_right(values, b), 0
            while k > 0:
                below += tree[k]
                k -= k & -k
            total += inserted - below
        for _, b in pairs[i:j]:
            k = bisect_right(values, b)
            while k <= len(values):
                tree[k] += 1
                k += k & -k
            inserted += 1
        i = j
    return total
