"""Property tests: mutated diagrams never produce anything but a blocksim error message."""
import copy
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blocksim.compiler import compile_diagram
from blocksim.errors import BlocksimError
from blocksim.format import diagram_from_dict

DIAGRAMS = Path(__file__).resolve().parents[1] / "diagrams"
BASE = json.loads((DIAGRAMS / "math003.json").read_text())

values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
                   st.text(max_size=12), st.sampled_from(["+-", "u2 != 0", "x4_max", "1/0",
                                                          "nope.y", "part1.x1", "Gain",
                                                          "Integrator", "[1, 2]", "-1e308*10"]),
                   st.lists(st.floats(-3, 3), max_size=3))


def _paths(node, prefix=()):
    """Every (container, key) pair inside the JSON tree."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(
        node, list) else ()
    for key, child in items:
        yield node, key
        yield from _paths(child, prefix + (key,))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_diagram_gives_a_message_never_a_traceback(data):
    doc = copy.deepcopy(BASE)
    spots = list(_paths(doc))
    for _ in range(data.draw(st.integers(1, 3))):
        container, key = data.draw(st.sampled_from(spots))
        action = data.draw(st.sampled_from(["replace", "delete"]))
        try:
            if action == "delete":
                del container[key]
            else:
                container[key] = data.draw(values)
        except (KeyError, IndexError):
            pass
        spots = list(_paths(doc))
        if not spots:
            break
    try:
        compile_diagram(diagram_from_dict(doc, source="mutated.json"))
    except BlocksimError as exc:
        assert str(exc).strip() and "\n" not in str(exc)
