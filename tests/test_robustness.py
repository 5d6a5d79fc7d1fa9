"""Property tests: mutated diagrams never produce anything but a blocksim error message."""
import copy
import json
import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blocksim.compiler import check_run, compile_diagram
from blocksim.errors import BlocksimError, CompileError
from blocksim.diagram.format import diagram_from_dict

DIAGRAMS = Path(__file__).resolve().parents[1] / "diagrams"
BASE = json.loads((DIAGRAMS / "math003.json").read_text())

values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
                   st.text(max_size=12), st.sampled_from(["+-", "u2 != 0", "x4_max", "1/0",
                                                          "nope.y", "part1.x1", "Gain",
                                                          "Integrator", "[1, 2]", "-1e308*10",
                                                          "1e999", "-inf", "9" * 5000,
                                                          "[1] * 1e9", "ones(2e5)", "zeros(1e7)",
                                                          "+" * 2000, "1e-300", "euler"]),
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


numbers = st.one_of(st.floats(), st.sampled_from([0.0, -1.0, 1e-300, 1e-9, 1e300, 5e-324]))


MODEL = compile_diagram(diagram_from_dict(BASE, source="math003.json"))


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional={
    "start": numbers, "stop": numbers, "rtol": numbers, "atol": numbers, "max_step": numbers,
    "output_interval": st.one_of(st.none(), numbers), "step": st.one_of(st.none(), numbers),
    "solver": st.sampled_from(["dopri5", "rk4", "euler", "radau", "ode45"]),
    "backend": st.sampled_from(["python", "numba", "cuda"])}))
def test_any_settings_are_accepted_or_refused_in_one_line(changes):
    """Settings as the CLI and API apply them over the file's (`check_run` makes the checks
    of `compile_diagram`): accepted only if a run can honour them."""
    settings = MODEL.settings.replaced(**changes)
    try:
        check_run(MODEL, settings)
    except CompileError as exc:
        assert str(exc).startswith(f"{MODEL.source}: simulation setting '")
        assert "\n" not in str(exc)
        return
    assert math.isfinite(settings.start) and math.isfinite(settings.stop)
    assert settings.stop > settings.start and settings.rtol > 0 and settings.atol > 0
    assert settings.max_step > 0
    assert settings.solver not in ("rk4", "euler") or 0 < settings.step < math.inf
