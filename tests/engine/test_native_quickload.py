"""Cached numba code loads without numba's registries (`native.quickload`), and a model
compiled afterwards in the same process still compiles (numba's compiler refreshes them).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[2]

# A new process's prelude: count numba's registry refreshes (`refreshed`).
COUNT_REFRESHES = """
from numba.core import base
refreshed = []
original = base.BaseContext.refresh
def counting(self):
    refreshed.append(1)
    return original(self)
base.BaseContext.refresh = counting
"""

FRESH_PROCESS = COUNT_REFRESHES + """
import json
import numpy as np
import blocksim
from numba.core import caching
before = caching.Cache.load_overload
from blocksim.engine.native import loop  # the compiled loop, from numba's cache
after_import = len(refreshed)
model = blocksim.compile(blocksim.load("diagrams/bouncing_ball.json"))
fast = blocksim.simulate(model, backend="numba")  # the model's code: compiled here
slow = blocksim.simulate(model, backend="python")
print(json.dumps({
    "after_import": after_import, "after_compile": len(refreshed),
    "restored": caching.Cache.load_overload is before,
    "python_events": fast.stats["python_events"],
    "rows": [len(fast.time), len(slow.time)],
    "difference": float(np.max(np.abs(fast["x"] - slow["x"]))),
    "event_difference": max(abs(a.time - b.time) for a, b in zip(fast.events, slow.events)),
}))
"""


def test_loop_loads_without_registries_and_a_new_model_still_compiles(tmp_path):
    import blocksim

    blocksim.simulate(blocksim.compile(blocksim.load(ROOT / "diagrams/bouncing_ball.json")),
                      backend="numba")  # the loop compiled into numba's cache, if not yet
    env = dict(os.environ, BLOCKSIM_CACHE_DIR=str(tmp_path))  # no cached model code
    done = subprocess.run([sys.executable, "-c", FRESH_PROCESS], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["after_import"] == 0  # the loop came from the cache, no registries
    assert found["after_compile"] > 0  # compiling the model's functions refreshed them
    assert found["restored"]
    assert found["python_events"] == 0
    assert found["rows"][0] == found["rows"][1]
    assert found["difference"] < 1e-9 and found["event_difference"] < 1e-9


def test_unknown_numba_version_is_left_alone(monkeypatch):
    from numba.core import caching

    from blocksim.engine.native import quickload

    def load_overload(self, sig, target_context):  # not numba's: a different version
        return None

    monkeypatch.setattr(caching.Cache, "load_overload", load_overload)
    with quickload.deferred():
        assert caching.Cache.load_overload is load_overload
    assert caching.Cache.load_overload is load_overload


BATCH_PROCESS = COUNT_REFRESHES + """
import json, sys
from blocksim.engine.native import batch  # the sweeps' batch loop, from numba's cache
print(json.dumps({"refreshed": len(refreshed), "scipy": "scipy.linalg" in sys.modules,
                  "signatures": len(batch.runs.signatures)}))
"""


def test_batch_loop_loads_without_registries():
    """A new sweep worker (a Dask worker's first task, a pool worker) loads the batch loop
    without numba's registries, which import scipy.linalg."""
    from blocksim.engine.native import batch  # compiled into numba's cache, if not yet

    assert batch.runs.signatures
    done = subprocess.run([sys.executable, "-c", BATCH_PROCESS], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"refreshed": 0, "scipy": False, "signatures": 1}
