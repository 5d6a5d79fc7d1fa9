"""Where the automatic layout runs feedback wires: one straight row each, chosen among rows
that hug the loop and rows round every block the loop spans. Without Qt.

A feedback wire leaves its source to the right, runs back along a row and enters its
destination from the left. Going round everything it spans (the usual textbook picture)
is clean for small loops but sends a long loop of a big diagram round the whole drawing;
hugging the blocks of the loop itself is short but may cross other wires or need blocks
moved aside. So each wire's candidate rows (just below or above its loop's blocks, just
below or above every block of the columns it spans) are scored by the crossings they
cause, the blocks they push aside and their length, and the cheapest wins. The row gets a
slot in every column it passes, and blocks in the way move down: wires never run through
blocks. Inner loops are placed first, so loops nest.
"""
from __future__ import annotations

import logging
from bisect import bisect_right
from collections import defaultdict
from typing import Any, Callable, Mapping, Sequence

from blocksim.gui.layout.autoroute import TRACK
from blocksim.gui.canvas.geometry import LABEL_HEIGHT, snap

log = logging.getLogger(__name__)

CROSSING_PX = 150.0  # how many pixels of extra wire one avoided crossing is worth
PUSH = 1.5  # a block moved aside counts as this many crossings
BENT = 6.0  # ... and another feedback row bent out of line
ABOVE = 0.3  # below is the convention: above must be clearly better


class Feedback:
    """Places the feedback wires of one layered layout (see autolayout._Layered)."""

    def __init__(self, nodes: dict[Any, Any], edges: Sequence[Any],
                 succ: Mapping[Any, list], pred: Mapping[Any, list],
                 make_slot: Callable[[Any, int], Any], outside: float = 0.5):
        self.nodes = nodes
        self.outside = outside  # added to the cost of rows round everything spanned
        self.edges = edges
        self.succ = succ
        self.pred = pred
        self.make_slot = make_slot
        self.runs: dict[int, list[tuple[float, float]]] = defaultdict(list)  # gap -> spans
        self.pieces: dict[int, list[float]] = defaultdict(list)  # gap -> horizontal wire ys
        self.placed: set[Any] = set()  # the feedback slots so far: other rows keep clear

    def place(self, layers: list[list[Any]]) -> bool:
        """Give every feedback edge its chain of slots, in the columns' order where its row
        goes (moving blocks out of the way); False if there is no feedback."""
        back = [e for e in self.edges if e.back]
        if not back:
            return False
        self._index_wires()
        back.sort(key=lambda e: (self.nodes[e.src].layer - self.nodes[e.dst].layer, e.wire))
        for edge in back:
            src, dst = self.nodes[edge.src], self.nodes[edge.dst]
            columns = range(src.layer, dst.layer - 1, -1)
            keys = [("dummy", edge.net, layer) for layer in columns]
            if any(k not in self.nodes for k in keys):
                shared = [self.nodes[k] for k in keys if k in self.nodes]
                # a net's feedback wires share their row: one trunk with branches
                row = shared[-1].y + shared[-1].extent / 2 if shared else \
                    self._best_row(edge, layers)
                for key, layer in zip(keys, columns):
                    if key not in self.nodes:
                        self._insert(layers[layer], self.make_slot(key, layer), row)
                        self.placed.add(key)
                self._record(edge, row)
            edge.chain = [edge.src, *keys, edge.dst]
        top = min(n.y for n in self.nodes.values())
        for node in self.nodes.values():
            node.y = snap(node.y - top)
        return True

    # ----- what is in the way -----
    def _index_wires(self) -> None:
        """The vertical runs and horizontal pieces of the forward wires, per gap."""
        for edge in self.edges:
            if edge.back:
                continue
            chain = [self.nodes[k] for k in edge.chain]
            ys = ([chain[0].y + chain[0].port_y("out", edge.src_port)]
                  + [n.y + n.port_y("in", 0) for n in chain[1:-1]]
                  + [chain[-1].y + chain[-1].port_y("in", edge.dst_port)])
            for k in range(len(ys) - 1):
                gap = chain[0].layer + k
                self.pieces[gap] += [ys[k], ys[k + 1]]
                if ys[k] != ys[k + 1]:
                    self.runs[gap].append((min(ys[k], ys[k + 1]), max(ys[k], ys[k + 1])))

    def _record(self, edge: Any, row: float) -> None:
        """A placed feedback wire is in the way of the next ones too."""
        src, dst = self.nodes[edge.src], self.nodes[edge.dst]
        sy = src.y + src.port_y("out", edge.src_port)
        dy = dst.y + dst.port_y("in", edge.dst_port)
        for gap, y in ((src.layer, sy), (dst.layer - 1, dy)):
            self.runs[gap].append((min(y, row), max(y, row)))
            self.pieces[gap] += [y, row]
        for gap in range(dst.layer, src.layer):
            self.pieces[gap].append(row)

    # ----- choosing the row -----
    def _best_row(self, edge: Any, layers: list[list[Any]]) -> float:
        src, dst = self.nodes[edge.src], self.nodes[edge.dst]
        spanned = [n for layer in layers[dst.layer:src.layer + 1] for n in layer]
        rows = sorted(n.y + n.extent / 2 for n in spanned if n.key in self.placed)
        loop = self._loop(edge)
        candidates = []
        for group, extra in (([n for n in spanned if n.key in loop], 0.0),
                             (spanned, self.outside)):
            top = min(_top(n) for n in group)
            bottom = max(_bottom(n) for n in group)
            candidates += [(_clear(snap(bottom + TRACK), rows, 1), extra),
                           (_clear(snap(top - 2 * TRACK), rows, -1), extra + ABOVE)]
        columns = layers[dst.layer:src.layer + 1]
        scored = [(self._cost(edge, row, columns) + extra, i, row)
                  for i, (row, extra) in enumerate(candidates)]
        log.debug("feedback %s -> %s: %s", edge.src, edge.dst, scored)
        return min(scored)[2]

    def _cost(self, edge: Any, row: float, columns: list[list[Any]]) -> float:
        src, dst = self.nodes[edge.src], self.nodes[edge.dst]
        sy = src.y + src.port_y("out", edge.src_port)
        dy = dst.y + dst.port_y("in", edge.dst_port)
        cost = (abs(sy - row) + abs(dy - row)) / CROSSING_PX
        for gap in range(dst.layer, src.layer):  # the row crosses vertical runs
            cost += sum(1 for lo, hi in self.runs.get(gap, ()) if lo < row < hi)
        for gap, y in ((src.layer, sy), (dst.layer - 1, dy)):  # its ends cross pieces
            lo, hi = min(y, row), max(y, row)
            cost += sum(1 for p in self.pieces.get(gap, ()) if lo < p < hi)
        for column in columns:
            for node, y in self._room(column, row)[1]:  # a nudge costs less than a move
                cost += BENT if node.key in self.placed else \
                    PUSH * min(1.0, (y - node.y) / node.extent)
        return cost

    def _loop(self, edge: Any) -> set[Any]:
        """The nodes on forward paths from the feedback wire's destination to its source."""
        lo, hi = self.nodes[edge.dst].layer, self.nodes[edge.src].layer

        def reach(start: Any, table: Mapping[Any, list]) -> set[Any]:
            seen, todo = {start}, [start]
            while todo:
                for other, *_ in table.get(todo.pop(), ()):
                    if other not in seen and lo <= self.nodes[other].layer <= hi:
                        seen.add(other)
                        todo.append(other)
            return seen

        return (reach(edge.dst, self.succ) & reach(edge.src, self.pred)) | {edge.src, edge.dst}

    # ----- making room -----
    @staticmethod
    def _room(column: list[Any], row: float) -> tuple[int, list[tuple[Any, float]]]:
        """Where a slot with its wire at `row` goes in a column, and the nodes that must
        move down for it (with their new y): what would touch the wire (block, label or
        another wire), and what follows as far as needed."""
        # a column's drawings go down in order, so the first that reaches the row is found
        # by bisection (a long column is searched for every candidate row)
        at = bisect_right(column, row - TRACK, key=_bottom)
        moves: list[tuple[Any, float]] = []
        for node in column[at:]:
            # the first one's drawing starts a track below the wire; the rest stack up
            need = moves[-1][1] + moves[-1][0].extent if moves else \
                row + TRACK - (_top(node) - node.y)
            if node.y >= need:
                break  # this one stays, so the rest are clear already
            moves.append((node, need))
        return at, moves

    def _insert(self, column: list[Any], slot: Any, row: float) -> None:
        at, moves = self._room(column, row)
        for node, y in moves:
            node.y = y
        column.insert(at, slot)
        slot.y = row - slot.extent / 2
        for i in range(at, len(column)):
            column[i].order = i


def _clear(row: float, taken: list[float], direction: int) -> float:
    """`row`, moved outwards (down for +1, up for -1) past the rows already taken, so that
    feedback rows never touch and outer loops go round inner ones."""
    while any(abs(row - y) < TRACK for y in taken):
        row += direction * TRACK
    return row


def _top(node: Any) -> float:
    """Where a node's drawing starts (a slot: its wire)."""
    return node.y + (node.extent / 2 if node.dummy else node.top_pad)


def _bottom(node: Any) -> float:
    """Where a node's drawing ends (a block: below its label)."""
    return node.y + (node.extent / 2 if node.dummy else node.top_pad + node.height
                     + LABEL_HEIGHT)
