"""The Modelica Association's Reference FMUs (github modelica/Reference-FMUs), when the user
has built them and points BLOCKSIM_REFERENCE_FMUS at the source tree (with build2/fmus and
build3/fmus, as benchmarks/fmi_reference.py describes); skipped otherwise. Their code is
not part of blocksim."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = os.environ.get("BLOCKSIM_REFERENCE_FMUS")
MODELS = ("BouncingBall", "Dahlquist", "Feedthrough", "Resource", "Stair", "VanDerPol")

pytestmark = pytest.mark.skipif(not ROOT, reason="set BLOCKSIM_REFERENCE_FMUS to a built "
                                                 "Reference-FMUs tree to run these")


def _cases():
    if not ROOT:
        return []
    found = []
    for version in (2, 3):
        for model in MODELS + (("StateSpace",) if version == 3 else ()):
            fmu = Path(ROOT) / f"build{version}" / "fmus" / f"{model}.fmu"
            if fmu.exists():
                found += [(fmu, version, i) for i in ("model_exchange", "co_simulation")]
    return found


@pytest.mark.parametrize("fmu, version, interface", _cases(),
                         ids=lambda v: getattr(v, "stem", str(v)))
def test_reference_fmu_matches_its_reference_result(fmu, version, interface):
    pytest.importorskip("fmpy")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import fmi_reference

    ok, note = fmi_reference.check(fmu, Path(ROOT), version, interface)
    assert ok, note
