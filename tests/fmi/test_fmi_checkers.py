"""blocksim's exported FMUs through two importers that are not fmpy, when the user has built
them (benchmarks/build_fmi_checkers.sh, offline) and names them: BLOCKSIM_FMU_CHECKER (the
FMI Compliance Checker, fmuCheck.linux64; FMI 2.0) and BLOCKSIM_FMUSIM (the Reference FMUs'
fmusim; FMI 2.0 and 3.0). Skipped otherwise. benchmarks/fmi_checkers.py runs every shipped
diagram the same way."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKER = os.environ.get("BLOCKSIM_FMU_CHECKER")
FMUSIM = os.environ.get("BLOCKSIM_FMUSIM")

pytestmark = pytest.mark.skipif(not (CHECKER or FMUSIM), reason=(
    "set BLOCKSIM_FMU_CHECKER and/or BLOCKSIM_FMUSIM (benchmarks/build_fmi_checkers.sh)"))


@pytest.fixture(scope="module")
def harness():
    pytest.importorskip("fmpy")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import fmi_checkers
    return fmi_checkers


@pytest.mark.parametrize("name", ["bouncing_ball", "pi_1khz", "dc_motor_pid", "math003",
                                  "diode_ideal"])
def test_shipped_diagram_passes_both_importers_and_equals_blocksim(harness, name, tmp_path):
    # every FMU (FMI 2 and 3, ME and CS): the checker finds no warning or error (FMI 2)
    # and fmusim runs it; their CS results and fmusim's ME (CVode at rtol 1e-10) are
    # blocksim's own within the limits of benchmarks/fmi_checkers.py
    outcomes = harness.check_diagram(ROOT / "diagrams" / f"{name}.json", CHECKER, FMUSIM,
                                     tmp_path)
    assert outcomes and all(o.ok for o in outcomes), harness.table(outcomes)


@pytest.mark.skipif(not FMUSIM, reason="set BLOCKSIM_FMUSIM")
@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("kind", ["me", "cs"])
def test_input_from_fmusim_drives_the_fmu(tmp_path, fmi, kind):
    # u steps from 1 to 3 at t = 1 (fmusim's input file), y = integral of 2u, and a relay
    # on y switches on at y = 3, at t = 7/6
    import blocksim

    blocks = [{"id": "u", "type": "Inport"}, {"id": "g", "type": "Gain", "params": {"k": 2}},
              {"id": "i", "type": "Integrator"}, {"id": "y", "type": "Outport"},
              {"id": "r", "type": "Relay", "params": {"on_point": 3.0, "off_point": 1.0}},
              {"id": "ry", "type": "Outport"}]
    wires = [("u.y", "g.u"), ("g.y", "i.u"), ("i.y", "y.u"), ("i.y", "r.u"), ("r.y", "ry.u")]
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps({
        "format": "blocksim", "version": 1,
        "simulation": {"start": 0, "stop": 2.0, "rtol": 1e-10, "atol": 1e-10},
        "blocks": [{"params": {}, **b} for b in blocks],
        "wires": [{"src": s, "dst": d} for s, d in wires]}))
    fmu = blocksim.export_fmu(path, tmp_path / "inputs.fmu", fmi=fmi, kind=kind).path
    (tmp_path / "u.csv").write_text('"time","u"\n0,1\n1,1\n1,3\n2,3\n')
    out = tmp_path / "out.csv"
    proc = subprocess.run([FMUSIM, "--interface-type", kind, "--solver", "cvode",
                           "--tolerance", "1e-10", "--stop-time", "2", "--set-stop-time",
                           "--output-interval", "0.125", "--input-file",
                           str(tmp_path / "u.csv"), "--output-file", str(out), str(fmu)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import fmi_checkers

    r = fmi_checkers.right_limits(fmi_checkers.read_csv(out))
    grid = np.arange(17) * 0.125
    at = [int(np.flatnonzero(r["time"] == t)[-1]) for t in grid]
    exact = np.where(grid <= 1, 2 * grid, 2 + 6 * (grid - 1))
    np.testing.assert_allclose(r["y"][at], exact, atol=1e-7)
    np.testing.assert_array_equal(r["ry"][at], (grid > 7 / 6).astype(float))
    if kind == "me":  # the switch, located by fmusim's CVode on the FMU's event indicator
        switch = r["time"][np.flatnonzero(np.diff(r["ry"]) > 0)[0] + 1]
        assert abs(switch - 7 / 6) < 1e-8
