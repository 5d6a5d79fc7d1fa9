"""Property fuzzing over VALID diagrams: random small graphs of library blocks, random solvers.

Invariant: a run finishes (sane results) or raises a BlocksimError with a one-line message;
never another exception, never a hang (a wall-clock cap per example). Bounded for CI: a few
dozen examples on the default backend, a handful on numba (compiling a model is slow).
Failures print the diagram and the settings (shrinking is left to `benchmarks/fuzz.py`, where
a hang costs its cap once per shrink step). The known findings are regression tests below.
"""
from __future__ import annotations

import importlib.util
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from blocksim.diagram.format import diagram_from_dict
from hostile.graphs import describe, diagrams, run_example

CAP = 10.0  # seconds per example (an example normally takes well under one)
HAS_NUMBA = importlib.util.find_spec("numba") is not None

CI = settings(max_examples=300, deadline=None, derandomize=True, database=None,
              phases=(Phase.explicit, Phase.generate), report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck))


def _check(document: dict, simulate: dict, backend: str = "python", cap: float = CAP) -> None:
    kind, detail = run_example(document, simulate, backend, cap)
    if kind and not kind.startswith("soft:"):
        pytest.fail(f"{kind}: {detail}\n{describe(document, simulate, backend)}",
                    pytrace=False)


@CI
@given(diagrams())
def test_random_diagram_runs_or_fails_cleanly(example):
    document, simulate = example
    _check(document, simulate)


@settings(CI, max_examples=60)
@given(diagrams(max_blocks=12, solvers=("radau", "bdf")))
def test_random_diagram_on_implicit_solvers(example):
    document, simulate = example
    _check(document, simulate)


@pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
@settings(CI, max_examples=4)
@given(diagrams(max_blocks=5, solvers=("dopri5",)))
def test_random_diagram_on_numba(example):
    document, simulate = example
    _check(document, simulate, backend="numba", cap=120.0)  # compiling a model takes seconds


# ---------------------------------------------------------------------------------------------
# Known findings, as regression tests (each must finish or fail cleanly, quickly)


def _doc(blocks, wires, **simulation):
    return {"format": "blocksim", "version": 1, "parameters": {}, "simulation": simulation,
            "blocks": [{"id": i, "type": t, "params": p} for i, t, p in blocks],
            "wires": [{"src": s, "dst": d} for s, d in wires]}


RAMP_COMPARE = _doc([("r", "Ramp", {"slope": 1}),
                     ("cmp", "CompareToConstant", {"operator": ">=", "constant": 0.5}),
                     ("y", "Output", {})], [("r.y", "cmp.u"), ("cmp.y", "y.u")], stop=1.0)


@pytest.mark.parametrize("solver", ["radau", "bdf", "dopri5"])
def test_zero_crossing_without_continuous_state(solver):
    """radau died with AttributeError: 'NoStateStepper' object has no attribute 'solve_to'."""
    _check(RAMP_COMPARE, {"solver": solver})
    import blocksim

    results = blocksim.simulate(diagram_from_dict(RAMP_COMPARE), solver=solver)
    assert results.events_of() and results["y"][-1] == 1.0


def test_stiff_transfer_function_on_dopri5_ends_quickly():
    """den [2, 1e9] on dopri5 never finished a 0.1 s run: finish or fail, in seconds."""
    document = _doc([("c", "Step", {"time": 0}),
                     ("tf", "TransferFunction", {"num": [1], "den": [2, 1e9]}),
                     ("y", "Output", {})], [("c.y", "tf.u"), ("tf.y", "y.u")], stop=0.1)
    t0 = time.monotonic()
    _check(document, {}, cap=10.0)
    assert time.monotonic() - t0 < 30.0  # 10 s of CPU, on a machine that may be busy


def test_pulse_faster_than_the_run_ends_quickly():
    """A Pulse with a 1e-9 s period on a 0.1 s run spun through 2e8 time events."""
    document = _doc([("p", "Pulse", {"period": 1e-9}), ("y", "Output", {})],
                    [("p.y", "y.u")], stop=0.1)
    _check(document, {}, cap=10.0)


@pytest.mark.parametrize("setting, value", [
    ("rtol", float("nan")), ("rtol", float("inf")), ("rtol", -1.0), ("rtol", 0.0),
    ("atol", float("nan")), ("atol", 0.0), ("stop_time", float("nan")),
    ("stop_time", float("inf")), ("output_interval", float("nan")), ("max_step", -1.0)])
def test_impossible_setting_is_refused(setting, value):
    """--rtol nan made the run loop for ever: impossible settings are refused up front."""
    import blocksim

    document = _doc([("c", "Constant", {}), ("i", "Integrator", {}), ("y", "Output", {})],
                    [("c.y", "i.u"), ("i.y", "y.u")], stop=1.0)
    kind, detail = run_example(document, {setting: value}, cap=5.0)
    assert kind is None or kind.startswith("soft:"), f"{kind}: {detail}"
    with pytest.raises(blocksim.BlocksimError):
        blocksim.simulate(diagram_from_dict(document), **{setting: value})


def test_strategy_builds_loadable_diagrams():
    """The generator itself: everything it builds passes the file format."""
    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(diagrams(max_blocks=10), st.just(None))
    def inner(example, _):
        diagram_from_dict(example[0], source="generated")
    inner()


def test_a_mux_fed_by_its_own_output_is_refused_not_compiled_exponentially():
    """Found by the 30-minute fuzzer: Mux(z, sign, sign) feeding the Sign that feeds it grew
    the widths to 2**14 - 1 in the passes allowed and generated 98,000 lines of code (10 s
    of CPU before the run): widths that never settle are a CompileError naming the loop."""
    import blocksim

    document = _doc([("c", "Constant", {}), ("m", "Mux", {"inputs": 3}),
                     ("s", "Sign", {}), ("y", "Output", {})],
                    [("c.y", "m.u1"), ("s.y", "m.u2"), ("s.y", "m.u3"), ("m.y", "s.u"),
                     ("m.y", "y.u")], stop=1.0)
    with pytest.raises(blocksim.BlocksimError, match="widths never settle"):
        blocksim.simulate(diagram_from_dict(document))
