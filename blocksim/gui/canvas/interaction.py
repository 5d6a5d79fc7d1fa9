"""Mouse gestures on the canvas, each ending in exactly one undo command.

* drag from an output port to an input port (or back): a new wire;
* drag from a physical port to another of its domain: a connection (a wire whose
  direction means nothing; a physical port takes any number of them);
* drag from a connected input port: take that wire's end to another input (reconnect);
* drag from a wire: a branch, a new wire from the same source port (from a connection: a
  new connection from its net);
* Shift+drag a wire's inner segment: move that segment (new bend points);
* drag blocks: one Move command for the whole drag, wires between moved blocks going along.
"""
from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsSceneMouseEvent

from blocksim.gui.document.commands import AddItems, ChangeLayout, ChangeWire
from blocksim.gui.canvas.geometry import snap
from blocksim.gui.canvas.items import domain_colour
from blocksim.gui.canvas.reroute import settle_wire
from blocksim.gui.canvas.routing import bend_points, route, simplify
from blocksim.diagram.model import PortRef, Wire

if TYPE_CHECKING:
    from blocksim.gui.canvas.items import BlockItem, WireItem
    from blocksim.gui.canvas.scene import DiagramScene

log = logging.getLogger(__name__)

DRAG_START = 4.0  # pixels the mouse must travel before a press on a wire becomes a branch
_RUBBER_PEN = QPen(QColor("#1c6ed6"), 1.4, Qt.DashLine)
_REFUSED_PEN = QPen(QColor("#d62728"), 1.4, Qt.DashLine)  # over a port it cannot take


class _WireDrag:
    """A rubber wire following the mouse from a fixed end."""

    def __init__(self, scene: "DiagramScene", anchor: QPointF, anchor_dir, from_output: bool,
                 fixed: PortRef, prefix: list, reconnect: int | None = None,
                 domain: str | None = None):
        self.scene = scene
        self.anchor = (anchor.x(), anchor.y())
        self.anchor_dir = anchor_dir
        self.from_output = from_output  # the fixed end is a source (or a physical port)
        self.fixed = fixed
        self.prefix = prefix  # bend points before the free end (a branch follows its wire)
        self.reconnect = reconnect
        self.domain = domain  # a connection from a physical port of this domain
        self.pen = _RUBBER_PEN
        if domain is not None:
            self.pen = QPen(domain_colour(domain), 1.6, Qt.DashLine)
        self.item = QGraphicsPathItem()
        self.item.setPen(self.pen)
        self.item.setZValue(10)
        scene.addItem(self.item)
        self.target = None
        self.refusal: str | None = None  # why the port under the mouse cannot take it

    def move(self, pos: QPointF) -> None:
        self.refusal = None
        self.target = self.scene.gestures.target_for(self, pos)
        self.item.setPen(_REFUSED_PEN if self.refusal is not None else self.pen)
        if self.target is not None:
            item, kind, name = self.target
            end, end_dir = item.port_position(kind, name)
        else:
            end, end_dir = (pos.x(), pos.y()), (-self.anchor_dir[0], -self.anchor_dir[1])
        if self.from_output:
            pts = route(self.anchor, self.anchor_dir, end, end_dir, self.prefix)
        else:
            pts = route(end, end_dir, self.anchor, self.anchor_dir)
        path = QPainterPath(QPointF(*pts[0]))
        for x, y in pts[1:]:
            path.lineTo(x, y)
        self.item.setPath(path)

    def finish(self) -> None:
        self.scene.removeItem(self.item)
        if self.target is None:
            if self.refusal is not None:  # said, not done
                self.scene.gestures.notice(self.refusal)
            return
        item, kind, name = self.target
        scene = self.scene
        free = PortRef(item.block_id, name)
        if self.domain is not None:
            points = scene.gestures.clear_path(self.fixed, free, self.prefix)
            scene.doc.push(AddItems(scene.doc, scene.level, wires=[Wire(self.fixed, free, points)],
                                    text=f"Connect {self.fixed} to {free}"))
            return
        if self.reconnect is not None:
            old = scene.doc.level(scene.level).wires[self.reconnect]
            if old.dst == free:
                return
            new = Wire(copy.deepcopy(old.src), free,
                       scene.gestures.clear_path(old.src, free, index=self.reconnect), old.name,
                       old.analysis)
            scene.doc.push(ChangeWire(scene.doc, scene.level, self.reconnect, new,
                                      f"Reconnect {old.src} to {free}"))
            return
        src, dst = (self.fixed, free) if self.from_output else (free, self.fixed)
        points = scene.gestures.clear_path(src, dst, self.prefix)
        wire = Wire(src, dst, points)
        scene.doc.push(AddItems(scene.doc, scene.level, wires=[wire],
                                text=f"Connect {src} to {dst}"))


class _SegmentDrag:
    """Moving one inner segment of a wire sideways."""

    def __init__(self, scene: "DiagramScene", wire: "WireItem", segment: int, pos: QPointF):
        self.scene, self.wire, self.segment = scene, wire, segment
        self.route = list(wire.route)
        a, b = self.route[segment], self.route[segment + 1]
        self.vertical = a[0] == b[0]
        self.start = pos

    def move(self, pos: QPointF) -> None:
        pts = self.moved(pos)
        path = QPainterPath(QPointF(*pts[0]))
        for x, y in pts[1:]:
            path.lineTo(x, y)
        self.wire.setPath(path)

    def moved(self, pos: QPointF) -> list:
        pts = list(self.route)
        i = self.segment
        if self.vertical:
            x = snap(pts[i][0] + pos.x() - self.start.x())
            pts[i], pts[i + 1] = (x, pts[i][1]), (x, pts[i + 1][1])
        else:
            y = snap(pts[i][1] + pos.y() - self.start.y())
            pts[i], pts[i + 1] = (pts[i][0], y), (pts[i + 1][0], y)
        return pts

    def finish(self, pos: QPointF) -> None:
        pts = simplify(self.moved(pos))
        old = self.wire.wire
        points = bend_points(pts)
        if points == list(old.points):
            self.wire.update_path()
            return
        new = Wire(copy.deepcopy(old.src), copy.deepcopy(old.dst), points, old.name, old.analysis)
        self.scene.doc.push(ChangeWire(self.scene.doc, self.scene.level, self.wire.index, new,
                                       "Move wire segment"))


class Gestures:
    """Interprets presses, moves and releases on the scene."""

    def __init__(self, scene: "DiagramScene"):
        self.scene = scene
        self.drag: _WireDrag | None = None
        self.segment: _SegmentDrag | None = None
        self.pending_branch: tuple["WireItem", QPointF] | None = None
        # Where gestures tell the user why nothing happened (the window: its status bar).
        self.notice: Callable[[str], None] = lambda text: log.info("%s", text)

    # ----- press -----
    def press(self, event: QGraphicsSceneMouseEvent) -> bool:
        """True if the press starts a gesture of ours (the scene then does nothing else)."""
        if event.button() != Qt.LeftButton:
            return False
        scene, pos = self.scene, event.scenePos()
        hit = scene.port_at(pos)
        if hit is not None:
            self._start_from_port(*hit)
            event.accept()
            return True
        wire = scene.wire_at(pos)
        if wire is not None and wire.route and scene.block_at(pos) is None:
            segment = _segment_at(wire.route, pos)
            inner = segment is not None and 0 < segment < len(wire.route) - 2
            if event.modifiers() & (Qt.ShiftModifier | Qt.AltModifier) and inner:
                self.segment = _SegmentDrag(scene, wire, segment, pos)
            else:
                scene.clearSelection()
                wire.setSelected(True)
                self.pending_branch = (wire, pos)
            event.accept()
            return True
        return False

    def _start_from_port(self, item: "BlockItem", kind: str, name: str) -> None:
        scene = self.scene
        point, direction = item.port_position(kind, name)
        anchor = QPointF(*point)
        if kind == "phys":  # a connection: any number may start here
            self.drag = _WireDrag(scene, anchor, direction, True, PortRef(item.block_id, name),
                                  [], domain=item.info.domain_of(name))
            return
        if kind == "out":
            self.drag = _WireDrag(scene, anchor, direction, True, PortRef(item.block_id, name), [])
            return
        ref = PortRef(item.block_id, name)
        for wire in scene.wires:
            if wire.wire.dst == ref:  # pick up the end of the wire that feeds this input
                src = scene.blocks.get(wire.wire.src.block)
                found = src.port_position("out", wire.wire.src.port) if src else None
                if found is None:
                    return
                self.drag = _WireDrag(scene, QPointF(*found[0]), found[1], True,
                                      wire.wire.src, [], reconnect=wire.index)
                return
        self.drag = _WireDrag(scene, anchor, direction, False, ref, [])

    # ----- move / release -----
    def move(self, event: QGraphicsSceneMouseEvent) -> bool:
        pos = event.scenePos()
        if self.pending_branch is not None:
            wire, start = self.pending_branch
            if (pos - start).manhattanLength() < DRAG_START:
                return True
            self.pending_branch = None
            at = _project(wire.route, start)
            prefix = _prefix(wire.route, at)
            src = self.scene.blocks.get(wire.wire.src.block)
            kind = src.kind_of(wire.wire.src.port, "out") if src else "out"
            found = src.port_position(kind, wire.wire.src.port) if src else None
            if found is None:
                return True
            self.drag = _WireDrag(self.scene, QPointF(*found[0]), found[1], True,
                                  wire.wire.src, prefix, domain=wire.domain)
        if self.drag is not None:
            self.drag.move(pos)
            return True
        if self.segment is not None:
            self.segment.move(pos)
            return True
        return False

    def release(self, event: QGraphicsSceneMouseEvent) -> bool:
        if self.pending_branch is not None:
            self.pending_branch = None
            return True
        if self.drag is not None:
            drag, self.drag = self.drag, None
            drag.move(event.scenePos())
            drag.finish()
            return True
        if self.segment is not None:
            segment, self.segment = self.segment, None
            segment.finish(event.scenePos())
            return True
        return False

    def after_release(self, event: QGraphicsSceneMouseEvent) -> None:
        """A finished block drag becomes one Move command."""
        self.commit_moves()

    def commit_moves(self) -> None:
        scene = self.scene
        moved = {bid: item for bid, item in scene.blocks.items() if item.pos() != item.model_pos}
        if not moved:
            return
        diagram = scene.doc.level(scene.level)
        layouts = {}
        for block_id, item in moved.items():
            layout = dict(diagram.block(block_id).layout or {})
            layout["x"], layout["y"] = item.pos().x(), item.pos().y()
            layouts[block_id] = layout
        points = {}
        for index, wire in enumerate(diagram.wires):
            a, b = moved.get(wire.src.block), moved.get(wire.dst.block)
            if a is None or b is None or not wire.points:
                continue
            da, db = a.pos() - a.model_pos, b.pos() - b.model_pos
            if da == db:
                points[index] = [(x + da.x(), y + da.y()) for x, y in wire.points]
        count = len(moved)
        text = f"Move {next(iter(moved))}" if count == 1 else f"Move {count} blocks"
        scene.doc.push(ChangeLayout(scene.doc, scene.level, layouts, points, text))

    # ----- paths -----
    def clear_path(self, src: PortRef, dst: PortRef, points=(), index: int | None = None
                   ) -> list[tuple[float, float]]:
        """Bend points for a new wire (or for wire `index` reconnected): `points` if the
        route through them is clean, else none if the plain route is, else a path found
        round the blocks and other nets' wires (see `reroute`)."""
        scene = self.scene
        wire = Wire(src, dst, [(float(x), float(y)) for x, y in points])
        return settle_wire(scene.doc.level(scene.level), scene.doc.names(scene.level),
                           wire, index)

    # ----- targets -----
    def target_for(self, drag: _WireDrag, pos: QPointF):
        """The port a rubber wire would connect to at `pos`, or None (then `drag.refusal`
        says why, if the mouse is on a port or block that cannot take it)."""
        if drag.domain is not None:
            return self._connection_target(drag, pos)
        scene = self.scene
        want = "in" if drag.from_output else "out"
        hit = scene.port_at(pos, radius=12.0)
        if hit is not None and hit[1] == "phys":
            drag.refusal = _not_physical(PortRef(hit[0].block_id, hit[2]),
                                         hit[0].info.domain_of(hit[2]),
                                         f"{drag.fixed} a signal port")
            return None
        candidates = []
        if hit is not None and hit[1] == want:
            candidates = [hit]
        else:
            item = scene.block_at(pos)
            if item is not None:
                candidates = sorted(
                    ((item, want, name) for name in item.ports(want)),
                    key=lambda c: _distance(c[0].port_position(want, c[2])[0], pos))
        for candidate in candidates:
            if self._accepts(drag, *candidate):
                return candidate
        occupied = None
        if hit is not None and hit[1] == want == "in":  # right on a port that has its wire
            occupied = PortRef(hit[0].block_id, hit[2])
        elif candidates and want == "in":  # on a block whose inputs all have theirs
            occupied = PortRef(candidates[0][0].block_id, candidates[0][2])
        if occupied is not None:
            drag.refusal = (f"{occupied} is already connected: an input takes one wire. Drag "
                            f"from {occupied} to move its wire, or delete that wire first.")
        return None

    def _connection_target(self, drag: _WireDrag, pos: QPointF):
        """The physical port of the drag's domain a connection would join at `pos`: the
        port under the mouse, else the nearest such port of the block under it."""
        scene = self.scene
        hit = scene.port_at(pos, radius=12.0)
        item = hit[0] if hit is not None else scene.block_at(pos)
        if item is None:
            return None
        if hit is not None and hit[1] != "phys":
            drag.refusal = _not_physical(drag.fixed, drag.domain,
                                         f"{PortRef(item.block_id, hit[2])} a signal port")
            return None
        names = [hit[2]] if hit is not None else sorted(
            item.ports("phys"), key=lambda n: _distance(item.port_position("phys", n)[0], pos))
        for name in names:
            ref = PortRef(item.block_id, name)
            domain = item.info.domain_of(name)
            if ref == drag.fixed:
                continue
            if domain != drag.domain:
                drag.refusal = (f"{drag.fixed} is {_a(drag.domain)} port and {ref} "
                                f"{_a(domain)} port: a connection joins ports of one domain.")
                continue
            if self._connected(drag.fixed, ref):
                drag.refusal = f"{drag.fixed} and {ref} are connected already."
                continue
            drag.refusal = None
            return item, "phys", name
        if not names and item.block_id != drag.fixed.block:
            drag.refusal = _not_physical(drag.fixed, drag.domain,
                                         f"{item.block_id} has none")
        return None

    def _connected(self, a: PortRef, b: PortRef) -> bool:
        """Whether a wire of the shown level joins these two ports already (either way)."""
        pair = {str(a), str(b)}
        return any({str(w.wire.src), str(w.wire.dst)} == pair for w in self.scene.wires)

    def _accepts(self, drag: _WireDrag, item: "BlockItem", kind: str, name: str) -> bool:
        if kind == "out":
            return True
        ref = PortRef(item.block_id, name)
        for wire in self.scene.wires:  # an input takes one wire
            if wire.wire.dst == ref and wire.index != drag.reconnect:
                return False
        return True


def _a(domain: str | None) -> str:
    """'an electrical' / 'a translational' (the article and the domain)."""
    return f"{'an' if (domain or 'x')[0] in 'aeiou' else 'a'} {domain}"


def _not_physical(physical: PortRef, domain: str | None, other: str) -> str:
    """Why a physical port cannot be joined to `other` (a signal port, or a block without
    physical ports), in the compiler's words."""
    return (f"{physical} is {_a(domain)} port and {other}: a physical port connects only "
            f"to physical ports of its domain (use a sensor or a source to turn it into a "
            f"signal).")


def _distance(point, pos: QPointF) -> float:
    return (point[0] - pos.x()) ** 2 + (point[1] - pos.y()) ** 2


def _segment_at(route: list, pos: QPointF, tolerance: float = 6.0) -> int | None:
    best = None
    for i, (a, b) in enumerate(zip(route, route[1:])):
        px, py = _clamp(a, b, pos)
        d = (px - pos.x()) ** 2 + (py - pos.y()) ** 2
        if d <= tolerance ** 2 and (best is None or d < best[0]):
            best = (d, i)
    return best[1] if best else None


def _clamp(a, b, pos: QPointF) -> tuple[float, float]:
    """The point of segment a-b nearest to pos."""
    if a[0] == b[0]:
        lo, hi = sorted((a[1], b[1]))
        return a[0], min(max(pos.y(), lo), hi)
    lo, hi = sorted((a[0], b[0]))
    return min(max(pos.x(), lo), hi), a[1]


def _project(route: list, pos: QPointF) -> tuple[int, tuple[float, float]]:
    """The segment of a route nearest to pos, and the grid point on it there."""
    segment = _segment_at(route, pos, tolerance=1e9) or 0
    a, b = route[segment], route[segment + 1]
    x, y = _clamp(a, b, pos)
    if a[0] == b[0]:
        y = min(max(snap(y), min(a[1], b[1])), max(a[1], b[1]))
    else:
        x = min(max(snap(x), min(a[0], b[0])), max(a[0], b[0]))
    return segment, (x, y)


def _prefix(route: list, at: tuple[int, tuple[float, float]]) -> list:
    """Bend points that make a branch follow its wire from the source up to the branch point."""
    segment, point = at
    return [tuple(p) for p in route[1:segment + 1]] + [point]
