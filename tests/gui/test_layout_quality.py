"""The automatic layout on big generated diagrams and its parts: columns, crossing counts,
feedback rows, the readability score. Geometry only; no timing (see benchmarks/editor.py)."""
import copy
import itertools
import random

import pytest

pytest.importorskip("PySide6")

from builders import benchmark_script  # noqa: E402

from blocksim.diagram.format import diagram_to_dict, load_diagram  # noqa: E402
from blocksim.gui.layout.autolayout import layout_diagram, needs_layout  # noqa: E402
from blocksim.gui.window.files import examples  # noqa: E402
from blocksim.gui.canvas.geometry import LABEL_HEIGHT, label_width  # noqa: E402
from blocksim.gui.layout.layering import Layering  # noqa: E402
from blocksim.gui.layout.layoutscore import measure  # noqa: E402
from blocksim.gui.layout.ordering import count_inversions  # noqa: E402
from blocksim.gui.canvas.portinfo import block_placement, port_info, scope_names  # noqa: E402
from blocksim.gui.canvas.routing import route  # noqa: E402

@pytest.fixture(scope="module")
def generate():
    with benchmark_script("editor.py", "editor_benchmark_for_layout") as module:
        yield module.generate


def _drawing(diagram):
    """Block boxes (body, label) and wire routes as the canvas draws them."""
    names = scope_names(diagram)
    places, boxes = {}, {}
    for blk in diagram.blocks:
        info = port_info(blk, names, diagram.wires)
        place = block_placement(blk, info)
        places[blk.id] = (place, info)
        x, y, w, h = place.rect
        lw = label_width(blk.id)
        boxes[blk.id] = [(x, y, w, h), (x + w / 2 - lw / 2, y + h, lw, LABEL_HEIGHT)]
    routes = []
    for wire in diagram.wires:
        (ps, si), (pd, di) = places[wire.src.block], places[wire.dst.block]
        start = ps.port("out", si.outputs.index(wire.src.port), len(si.outputs))
        end = pd.port("in", di.inputs.index(wire.dst.port), len(di.inputs))
        routes.append((str(wire.src), route(start[0], start[1], end[0], end[1], wire.points,
                                            ps.rect, pd.rect)))
    return boxes, routes


def _overlap(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def _assert_clean(diagram):
    """No block or label overlaps another; wires are orthogonal and never cross a block."""
    boxes, routes = _drawing(diagram)
    cells = {}  # a coarse grid, so that big diagrams check quickly
    for block_id, parts in boxes.items():
        for part in parts:
            for cx in range(int(part[0] // 200), int((part[0] + part[2]) // 200) + 1):
                for cy in range(int(part[1] // 200), int((part[1] + part[3]) // 200) + 1):
                    cells.setdefault((cx, cy), []).append((block_id, part))
    for members in cells.values():
        for (a, pa), (b, pb) in itertools.combinations(members, 2):
            assert a == b or not _overlap(pa, pb), (a, b)
    for net, points in routes:
        for p, q in zip(points, points[1:]):
            assert p[0] == q[0] or p[1] == q[1], net
            segment = (min(p[0], q[0]), min(p[1], q[1]),
                       abs(p[0] - q[0]) or 1e-3, abs(p[1] - q[1]) or 1e-3)
            near = set()
            for cx in range(int(segment[0] // 200), int((segment[0] + segment[2]) // 200) + 1):
                for cy in range(int(segment[1] // 200),
                                int((segment[1] + segment[3]) // 200) + 1):
                    near.update(b for b, _ in cells.get((cx, cy), ()))
            for block_id in near:
                body = boxes[block_id][0]
                inner = (body[0] + 1, body[1] + 1, body[2] - 2, body[3] - 2)
                assert not _overlap(segment, inner), (net, block_id)


@pytest.mark.parametrize("n", [40, 300])
def test_generated_diagrams_get_clean_deterministic_layouts(generate, n):
    diagram, again = generate(n), generate(n)
    layout_diagram(diagram)
    layout_diagram(again)
    assert diagram_to_dict(diagram) == diagram_to_dict(again)
    _assert_clean(diagram)


def test_feedback_hugs_its_loop_in_a_big_diagram(generate):
    """Each damping or spring loop closes next to its blocks, not round the whole drawing
    (which is what rows round everything a loop spans did on big diagrams)."""
    diagram = generate(300)
    layout_diagram(diagram)
    _, routes = _drawing(diagram)
    height = max(y for _, points in routes for _, y in points) - \
        min(y for _, points in routes for _, y in points)
    rows = 0
    for _, points in routes:
        back = [(a, b) for a, b in zip(points, points[1:]) if a[1] == b[1] and b[0] < a[0]]
        if back:
            rows += 1
            row = back[0][0][1]
            assert min(abs(row - points[0][1]), abs(row - points[-1][1])) < 0.15 * height
    assert rows >= 50  # every module has two loops


def auto_laid_out_examples():
    """The examples the editor lays out (diagrams/physical/ is drawn by hand)."""
    return [p for p in examples() if needs_layout(load_diagram(p))]


def test_feedback_rows_are_straight_on_the_examples():
    """A feedback wire runs back along one row (no staircase) on the smaller examples."""
    for path in auto_laid_out_examples():
        if path.stem.startswith("rotating_pendulum"):
            continue  # the densest: a shared row may have to bend once
        diagram = load_diagram(path)
        layout_diagram(diagram, recursive=False)
        for net, points in _drawing(diagram)[1]:
            back = [1 for a, b in zip(points, points[1:]) if a[1] == b[1] and b[0] < a[0]]
            assert len(back) <= 1, (path.stem, net)


def test_examples_read_better_than_before():
    """Crossings over all examples: 427 before feedback rows hugged loops and small
    levels were laid out several ways; a guard against quietly getting worse."""
    total = 0
    for path in auto_laid_out_examples():
        diagram = load_diagram(path)
        layout_diagram(diagram, recursive=False)
        total += measure(_drawing(diagram)[1])[0]
    assert total < 400


def test_columns_keep_forward_wires_forward(generate):
    diagram = generate(200)
    edges = []

    class Edge:
        def __init__(self, index, wire):
            self.wire, self.src, self.dst = index, wire.src.block, wire.dst.block

    edges = [Edge(i, w) for i, w in enumerate(diagram.wires)]
    types = {b.id: b.type for b in diagram.blocks}
    stateful = {b.id for b in diagram.blocks if b.type == "Integrator"}
    choices = Layering([b.id for b in diagram.blocks], edges, types, stateful).choices()
    assert choices and len({frozenset(back) for back, _ in choices}) == len(choices)
    for back, layer in choices:
        for e in edges:
            if e.wire in back:
                assert layer[e.dst] <= layer[e.src]  # feedback really goes back
            else:
                assert layer[e.dst] > layer[e.src]
        scopes = [b.id for b in diagram.blocks if b.type == "Scope"]
        assert max(layer[s] for s in scopes) == max(layer.values())  # loggers at the end


def test_greedy_feedback_choice_breaks_every_cycle_of_a_big_ring():
    class Edge:
        def __init__(self, wire, src, dst):
            self.wire, self.src, self.dst = wire, src, dst

    n = 2000  # the old quadratic version took minutes here
    ids = [f"b{i}" for i in range(n)]
    edges = [Edge(i, ids[i], ids[(i + 1) % n]) for i in range(n)]
    edges += [Edge(n + i, ids[i], ids[(i + 7) % n]) for i in range(0, n, 5)]
    layering = Layering(ids, edges, dict.fromkeys(ids, "Gain"), ())
    back = layering._greedy_fas()
    forward = {e.wire: e for e in edges if e.wire not in back}
    order = {}  # a topological order of what is left exists: no cycle remains
    indegree = dict.fromkeys(ids, 0)
    for e in forward.values():
        indegree[e.dst] += 1
    ready = [i for i in ids if indegree[i] == 0]
    while ready:
        node = ready.pop()
        order[node] = len(order)
        for e in forward.values():
            pass
        for e in (e for e in edges if e.src == node and e.wire in forward):
            indegree[e.dst] -= 1
            if indegree[e.dst] == 0:
                ready.append(e.dst)
    assert len(order) == n and 1 <= len(back) < n // 10


def test_count_inversions_matches_brute_force():
    rng = random.Random(4)
    for _ in range(50):
        pairs = [(rng.randint(0, 6) + rng.choice((0, 0.25, 0.5)), rng.randint(0, 6) + 0.5)
                 for _ in range(rng.randint(0, 25))]
        brute = sum(1 for (a1, b1), (a2, b2) in itertools.combinations(pairs, 2)
                    if (a1 - a2) * (b1 - b2) < 0)
        assert count_inversions(list(pairs)) == brute


def test_readability_counts_crossings_of_different_nets_only():
    plus = [("a", [(0, 5), (10, 5)]), ("b", [(5, 0), (5, 10)])]
    assert measure(plus) == (1, 20, 0)
    same_net = [("a", [(0, 5), (10, 5)]), ("a", [(5, 0), (5, 10)])]
    assert measure(same_net)[0] == 0
    touching = [("a", [(0, 5), (10, 5)]), ("b", [(10, 0), (10, 10)])]  # at an end
    assert measure(touching)[0] == 0
    bent = [("a", [(0, 0), (10, 0), (10, 10), (20, 10)])]
    assert measure(bent) == (0, 30, 2)


def test_layout_does_not_touch_a_copy_it_was_not_given():
    diagram = load_diagram(examples()[0])
    before = copy.deepcopy(diagram_to_dict(diagram))
    trial = copy.deepcopy(diagram)
    layout_diagram(trial)
    assert diagram_to_dict(diagram) == before


# Crossings (every level, as routecheck counts them) of the pendulum examples' automatic
# layout: 169 and 211 at commit 9ee2837; 116 and 157 after the wider feedback search,
# row-order restarts and sifted tracks (docs/editor-performance.md). The limits sit about
# 12 % above the measurement, well below the old counts: a change that loses the gain
# fails, a small shift of a track or two does not.
PENDULUM_CROSSINGS = {"rotating_pendulum": 130, "rotating_pendulum_kick": 175}


@pytest.mark.parametrize("name", sorted(PENDULUM_CROSSINGS))
def test_pendulum_layout_crosses_little_and_routes_clean(name):
    from blocksim.gui.canvas.routecheck import all_levels, level_quality

    path = next(p for p in examples() if p.stem == name)
    diagram = load_diagram(path)
    layout_diagram(diagram)
    crossings = faults = 0
    for _, level, names in all_levels(diagram):
        quality = level_quality(level, names)
        crossings += quality.crossings
        faults += quality.faults
    assert faults == 0
    assert crossings < PENDULUM_CROSSINGS[name]


def test_exact_track_order_is_the_cheapest_of_all_orders():
    """The dynamic programme over subsets finds the order brute force finds."""
    from blocksim.gui.layout.autoroute import _exact_order

    rng = random.Random(13)
    for n in range(1, 7):
        for _ in range(20):
            cost = [{j: float(rng.randint(0, 12)) for j in range(n)
                     if j != i and rng.random() < 0.7} for i in range(n)]

            def total(order):
                return sum(cost[order[i]].get(order[j], 0.0)
                           for i in range(n) for j in range(i + 1, n))

            best = min(total(p) for p in itertools.permutations(range(n)))
            order = _exact_order(cost)
            assert sorted(order) == list(range(n))
            assert total(order) == best


def test_generated_layout_needs_no_rerouting(generate, monkeypatch):
    """The plan of a big generated diagram leaves no two nets in one line (spare tracks
    keep pieces that would continue each other apart), so no wire is re-routed after it,
    and the routing-quality check finds no fault."""
    from blocksim.gui.canvas.routecheck import level_quality
    from blocksim.gui.layout import autolayout

    calls = []
    monkeypatch.setattr(autolayout, "repair", lambda *args: calls.append(args) or 0)
    diagram = generate(300)
    layout_diagram(diagram)
    assert calls == []
    assert level_quality(diagram).faults == 0
