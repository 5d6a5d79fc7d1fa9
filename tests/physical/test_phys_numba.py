"""The physical examples on the numba backend: the same events at the same instants and
the same values as the Python backend (tests/both_backends.py), events settled in the
compiled loop. Few cases: numba compiles each model once (the first ever run also
compiles the engine's loop, about half a minute)."""
import numpy as np
import pytest

import blocksim
import references as ref
from both_backends import HAS_NUMBA, run_both
from builders import DIAGRAMS

pytestmark = pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")

PHYSICAL = DIAGRAMS / "physical"


def test_c21_ideal_diode_on_both_backends():
    r = run_both(blocksim.load(PHYSICAL / "c21_diode_ideal.json"))
    switches = [e.time for e in r.events if e.block == "D"]
    assert len(switches) == ref.DIODE_SWITCH_COUNT
    for number, t_ref in ref.DIODE_SWITCHES.items():
        assert abs(switches[number - 1] - t_ref) < 1e-11


def test_c21_piecewise_linear_diode_on_both_backends():
    model = blocksim.compile(blocksim.load(PHYSICAL / "c21_diode_pwl.json"), {"N": 3})
    r = run_both(model)
    k = np.flatnonzero(np.abs(r.time - 2.2e-6) < 1e-15)
    assert len(k) == 1 and abs(r["iD"][k[0]] - ref.PWL_ID_AT_2_2US[3]) < 1e-6 * ref.PWL_ID_AT_2_2US[3]


def test_ball_on_a_hardstop_on_both_backends():
    # 130 impacts before the accumulation point amplify the backends' different roundoff
    # (both_backends.py): 2e-12 in v near the end, so a looser atol
    r = run_both(blocksim.load(PHYSICAL / "c21_ball_hardstop.json"), atol=1e-10)
    impacts = [e.time for e in r.events if e.kind == "impact"]
    assert len(impacts) > 100
    assert [e.kind for e in r.events if e.block == "floor"][-1] == "rest"
    assert r["x"][-1] == 0.0 and r["v"][-1] == 0.0


def test_c21_shockley_diode_on_numba_gives_the_python_results():
    # Newton's method inside the network may raise (no convergence): numba cannot report
    # that, so the run falls back to Python, says so, and gives the same results
    model = blocksim.compile(blocksim.load(PHYSICAL / "c21_diode_shockley.json"))
    py = blocksim.simulate(model)
    nb = blocksim.simulate(model, backend="numba")
    assert [(e.block, e.kind) for e in nb.events] == [(e.block, e.kind) for e in py.events]
    assert np.allclose([e.time for e in nb.events], [e.time for e in py.events], rtol=0,
                       atol=1e-15)
    assert any("runs in Python" in w for w in nb.warnings)
    for name in ("uC", "i", "uD", "iD"):
        np.testing.assert_allclose(nb[name], py[name], rtol=1e-12, atol=1e-15, err_msg=name)


@pytest.mark.xfail(strict=True, reason="known limitation (docs/physical.md): "
                   "a network with a Newton block raises in its generated code, so numba "
                   "runs it in Python")
def test_c21_shockley_diode_runs_compiled():
    model = blocksim.compile(blocksim.load(PHYSICAL / "c21_diode_shockley.json"))
    r = blocksim.simulate(model, backend="numba")
    assert not any("Python" in w for w in r.warnings)
