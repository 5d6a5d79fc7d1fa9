"""The C backend: the Python backend's results from generated C, compiled once per model."""
from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from both_backends import HAS_CC, assert_same  # noqa: E402
from builders import block, diagram  # noqa: E402
from helper_blocks import helper_lookup_registered  # noqa: E402

pytestmark = pytest.mark.skipif(not HAS_CC, reason="no C compiler")
ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(glob.glob(str(ROOT / "diagrams" / "*.json"))
                 + glob.glob(str(ROOT / "diagrams" / "physical" / "*.json")))
# What runs in Python on backend c, and the reason its warning gives.
IN_PYTHON = {"c5_two_state.json": "solver 'radau'",
             "multi_clock.json": "without continuous states",
             "zoh_loop.json": None, "rotating_pendulum_kick.json": None}
LONG = {"pi_1khz.json": 5.0}  # (1000 s of 1 kHz hits in Python: 5 s of them)
# Runs where one backend accepts a step the other rejects (roundoff of the error norm)
# early on, after which they part by the global error of rtol 1e-10: up to 9e-9 in the
# motor current of dc_motor_pid.json (7,447 steps against 7,448).
PARTED = {"dc_motor_pid.json", "dc_motor_emf.json", "drivetrain_friction.json"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: Path(p).name)
def test_shipped_diagram_on_c_equals_python(path):
    name = Path(path).name
    model = blocksim.compile(blocksim.load(path))
    options = {"stop_time": LONG[name]} if name in LONG else {}
    py = blocksim.simulate(model, **options)
    c = blocksim.simulate(model, backend="c", **options)
    reason = IN_PYTHON.get(name)
    if reason is not None:
        assert any(reason in w for w in c.warnings), c.warnings
    if model.history:  # transport delays run in C
        assert not any("backend c:" in w for w in c.warnings), c.warnings
    # To rounding, or, where a step accepted on one backend is rejected on the other (the
    # Python backend's sums are BLAS dot products, C adds in stage order), to the runs'
    # global error (PARTED).
    if name == "c21_pendulum_cartesian.json":  # phi = atan2(y, x) at +-pi by roundoff
        for f in (np.cos, np.sin):
            assert np.allclose(f(py["phi"]), f(c["phi"]), rtol=0, atol=1e-12)
        py.signals["phi"] = c.signals["phi"] = np.zeros(len(py.time))
    if name in PARTED:
        assert_same(py, c, atol=1e-7, event_atol=1e-10)
    else:
        assert_same(py, c, atol=max(1e-10, model.settings.rtol))


def test_code_c_cannot_take_runs_in_python_naming_the_block():
    blocks = [block("pulse", "Pulse", period=0.3, width=0.4), block("i", "Integrator"),
              block("lut", "HelperLookup", breakpoints=[0.0, 0.1, 0.2], table=[0.0, 1.0, 0.0]),
              block("y", "Output")]
    with helper_lookup_registered():
        d = diagram(blocks, [("pulse.y", "i.u"), ("i.y", "lut.u"), ("lut.y", "y.u")], stop=1.0)
        model = blocksim.compile(d)
    c = blocksim.simulate(model, backend="c")
    assert any("backend c:" in w and "block 'lut' (HelperLookup)" in w for w in c.warnings)
    assert_same(blocksim.simulate(model), c, atol=1e-12)


def test_library_is_compiled_once_and_loaded_from_the_disk_cache(tmp_path):
    # A new process finds the library its predecessor compiled: no compile notice.
    env = dict(os.environ, BLOCKSIM_CACHE_DIR=str(tmp_path))
    args = [sys.executable, "-m", "blocksim", "run", str(ROOT / "diagrams" / "bouncing_ball.json"),
            "--backend", "c", "--out", str(tmp_path / "r.csv")]
    first = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "backend c: compiling" in first.stderr
    second = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 0 and "compiling" not in second.stderr
    assert list((tmp_path / "c").glob("bs_*.so"))


def test_new_parameter_values_reuse_the_library():
    model = blocksim.compile(blocksim.load(ROOT / "diagrams" / "bouncing_ball.json"))
    blocksim.simulate(model, backend="c", stop_time=2.0)
    other = model.with_params({"g": 5.0, "x0": 3.0})
    assert other.shared.get("c_library") is model.shared.get("c_library")
    assert_same(blocksim.simulate(other, stop_time=2.0),
                blocksim.simulate(other, backend="c", stop_time=2.0), atol=1e-12)
