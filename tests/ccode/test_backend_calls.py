"""The C backend's calls: a plain run is one call from its start to its stop time, the
start settled in C (or in Python where C cannot), and repeated runs reuse the C instance
and its buffers (`ccode.loop`), nested runs included; the library is compiled for this CPU."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.ccode import cc, loop
from blocksim.errors import SimulationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).parent))
from both_backends import HAS_CC, assert_same  # noqa: E402
from builders import block, diagram  # noqa: E402
from calls import counted, never_settling_start  # noqa: E402

pytestmark = pytest.mark.skipif(not HAS_CC, reason="no C compiler")
ROOT = Path(__file__).resolve().parents[2]
STATS = ("steps", "events", "restarts", "hits")


def _chain(n: int = 5, **simulation):
    blocks = [block("step", "Step", time=0.0)]
    blocks += [block(f"lag{k}", "TransferFunction", num=1.0, den=[1.0, 1.0]) for k in range(n)]
    blocks += [block("y", "Output")]
    wires = [("step.y", "lag0.u")] + [(f"lag{k}.y", f"lag{k + 1}.u") for k in range(n - 1)]
    return diagram(blocks, wires + [(f"lag{n - 1}.y", "y.u")], stop=10.0, **simulation)


def _same_stats(py, c) -> None:
    assert {k: c.stats[k] for k in STATS} == {k: py.stats[k] for k in STATS}


def test_a_plain_run_is_one_call_with_the_start_settled_in_c(monkeypatch):
    model = blocksim.compile(_chain())
    py = blocksim.simulate(model)
    counting = counted(model, monkeypatch)
    c = blocksim.simulate(model, backend="c")
    assert counting.calls == 1 and c.stats["python_events"] == 0
    assert_same(py, c, atol=1e-12)
    _same_stats(py, c)


def test_sample_hits_and_log_entries_at_the_start_are_settled_in_c(monkeypatch):
    # A pulse (a time event at 0 and every 0.25 s) into a discrete-time integrator sampled
    # from t = 0, and a Step at 0 that logs its event at the start.
    blocks = [block("p", "Pulse", period=0.5, width=50.0), block("s", "Step", time=0.0),
              block("add", "Sum", signs="++"), block("d", "DiscreteIntegrator", sample_time=0.1),
              block("i", "Integrator"), block("y", "Output"), block("q", "Output")]
    wires = [("p.y", "add.u1"), ("s.y", "add.u2"), ("add.y", "d.u"), ("d.y", "i.u"),
             ("i.y", "y.u"), ("d.y", "q.u")]
    model = blocksim.compile(diagram(blocks, wires, stop=1.0, output_interval=0.05))
    py = blocksim.simulate(model)
    counting = counted(model, monkeypatch)
    c = blocksim.simulate(model, backend="c")
    assert counting.calls == 1 and c.stats["python_events"] == 0
    assert_same(py, c, atol=1e-12)
    _same_stats(py, c)
    assert py.stats["hits"] > 0 and any(e.time == 0.0 for e in py.events)


def test_a_stop_at_the_start_ends_the_run_as_on_python():
    blocks = [block("c", "Clock"), block("k", "CompareToConstant", operator=">=",
                                         constant=-1.0),
              block("s", "Stop"), block("i", "Integrator"), block("y", "Output")]
    wires = [("c.y", "k.u"), ("k.y", "s.u"), ("k.y", "i.u"), ("k.y", "y.u")]
    model = blocksim.compile(diagram(blocks, wires, stop=2.0))
    py = blocksim.simulate(model)
    c = blocksim.simulate(model, backend="c")
    assert py.status == "stopped" and len(py.time) == 1
    assert_same(py, c, atol=1e-12)
    _same_stats(py, c)


def test_a_start_c_cannot_settle_fails_with_pythons_message():
    # x' = +1 if x < 0 else -1 from x = 0: the start's event iteration never settles.
    model = never_settling_start()
    errors = []
    for backend in ("python", "c"):
        with pytest.raises(SimulationError) as info:
            blocksim.simulate(model, backend=backend)
        errors.append(info.value)
    py, c = errors
    assert "did not settle" in str(c) and str(c) == str(py) and c.time == py.time == 0.0
    assert c.results.stats["python_events"] == 1  # the start, handed to Python
    assert len(c.results.time) == len(py.results.time)


def test_a_run_inside_a_progress_callback_takes_its_own_instance(monkeypatch):
    # 8000 grid rows fill the call's buffer: the run returns to Python (progress) midway,
    # its C instance holding the run's state; the nested run must not disturb it.
    model = blocksim.compile(_chain(output_interval=10.0 / 8000))
    monkeypatch.setitem(model.shared, loop.POOL, [])
    alone = blocksim.simulate(model, backend="c")
    nested = []

    def progress(t):
        if not nested:
            nested.append(blocksim.simulate(model, backend="c"))
    outer = blocksim.simulate(model, backend="c", progress=progress)
    assert nested, "the run never returned to Python for its progress"
    for r in (outer, nested[0]):
        assert_same(alone, r, atol=0.0, event_atol=0.0)
    assert len(model.shared[loop.POOL]) == 2


def test_repeated_runs_with_other_parameters_and_settings_equal_fresh_ones():
    ball = ROOT / "diagrams" / "bouncing_ball.json"
    model = blocksim.compile(blocksim.load(ball))
    first = blocksim.simulate(model, backend="c", stop_time=3.0)
    other = model.with_params({"g": 5.0, "x0": 3.0})
    changed = blocksim.simulate(other, backend="c", stop_time=3.0, rtol=1e-9)
    assert_same(blocksim.simulate(other, stop_time=3.0, rtol=1e-9), changed, atol=1e-9)
    again = blocksim.simulate(model, backend="c", stop_time=3.0)
    assert_same(first, again, atol=0.0, event_atol=0.0)
    assert np.array_equal(first.time, again.time) and first.stats == {
        **again.stats, "wall_time": first.stats["wall_time"]}


def test_the_backend_library_is_compiled_for_this_cpu_and_an_fmu_for_any(monkeypatch):
    sources = {"a.c": "int f(void) { return 1; }\n"}
    with pytest.raises(FileNotFoundError) as portable:
        cc.cached_library(sources, probe=True)
    with pytest.raises(FileNotFoundError) as here:
        cc.cached_library(sources, probe=True, native=True)
    monkeypatch.setattr(cc, "cpu_identity", lambda: "another CPU")
    with pytest.raises(FileNotFoundError) as there:
        cc.cached_library(sources, probe=True, native=True)
    assert len({str(portable.value), str(here.value), str(there.value)}) == 3
    assert "-march=native" in cc.NATIVE_FLAGS and "-march=native" not in cc.FLAGS
    assert "-ffp-contract=off" in cc.NATIVE_FLAGS


def test_a_reused_instance_starts_its_input_histories_afresh_at_the_runs_atol():
    # Transport delays keep rings in m and their run state in the C instance: a later run
    # on the same instance, with another atol, equals a fresh run of its own.
    model = blocksim.compile(blocksim.load(ROOT / "diagrams" / "dde_delay.json"))
    first = blocksim.simulate(model, backend="c")
    tight = blocksim.simulate(model, backend="c", atol=1e-10)
    again = blocksim.simulate(model, backend="c")
    assert_same(first, again, atol=0.0, event_atol=0.0)
    assert_same(blocksim.simulate(model, atol=1e-10), tight, atol=1e-9)
    assert not any("backend c" in w for w in tight.warnings)
