"""A plain run on backend c settled by its one call into C builds no Simulator
(`ccode.fast_run`); a run whose first call returns anything else is handed over to the
Simulator's C loop, which takes that call as its own first (nothing is run twice). Either
way the results are those of the Simulator on backend c, exactly."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.ccode import loop
from blocksim.engine.simulator import Simulator
from blocksim.errors import SimulationError, SimulationInterrupted

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).parent))
from both_backends import HAS_CC, SIN, run_both  # noqa: E402
from builders import block, diagram  # noqa: E402
from calls import counted, never_settling_start  # noqa: E402

pytestmark = pytest.mark.skipif(not HAS_CC, reason="no C compiler")


def _runs(model, monkeypatch, **settings):
    """(the facade's run, the Simulator's run, Simulators the facade made, calls into C of
    each), both on backend c."""
    run_settings = model.settings.replaced(backend="c", **settings)
    blocksim.simulate(model, backend="c", **settings)  # the first run checks x0 (Simulator)
    made = []
    real_init = Simulator.__init__

    def counting_init(self, *args, **kwargs):
        made.append(self)
        real_init(self, *args, **kwargs)
    counting = counted(model, monkeypatch)
    monkeypatch.setattr(Simulator, "__init__", counting_init)
    fast = blocksim.simulate(model, backend="c", **settings)
    fast_calls, counting.calls = counting.calls, 0
    monkeypatch.setattr(Simulator, "__init__", real_init)
    ordinary = Simulator(model, run_settings).run()
    return fast, ordinary, len(made), (fast_calls, counting.calls)


def _identical(a, b) -> None:
    """Bit for bit, the wall time aside."""
    np.testing.assert_array_equal(a.time, b.time)
    assert a.signals.keys() == b.signals.keys()
    for name in a.signals:
        np.testing.assert_array_equal(a[name], b[name])
        assert a[name].shape == b[name].shape and a[name].flags.owndata
    assert a.events == b.events
    strip = lambda stats: {k: v for k, v in stats.items() if k != "wall_time"}  # noqa: E731
    assert strip(a.stats) == strip(b.stats)
    assert list(a.stats) == list(b.stats)
    assert (a.status, a.message, a.warnings, a.written) == (b.status, b.message,
                                                             b.warnings, b.written)


def _chain(n: int = 5, **simulation):
    blocks = [block("step", "Step", time=0.0)]
    blocks += [block(f"lag{k}", "TransferFunction", num=1.0, den=[1.0, 1.0]) for k in range(n)]
    blocks += [block("y", "Output"), block("v", "Output")]
    wires = [("step.y", "lag0.u")] + [(f"lag{k}.y", f"lag{k + 1}.u") for k in range(n - 1)]
    wires += [(f"lag{n - 1}.y", "y.u"), ("step.y", "v.u")]
    return diagram(blocks, wires, stop=10.0, **simulation)


def test_a_plain_run_settled_by_one_call_builds_no_simulator(monkeypatch):
    model = blocksim.compile(_chain())
    fast, ordinary, simulators, calls = _runs(model, monkeypatch)
    assert simulators == 0 and calls == (1, 1)
    _identical(fast, ordinary)
    assert fast.events  # the Step's event at the start, from C's event log


def test_sample_hits_from_the_start_take_the_fast_path_too(monkeypatch):
    blocks = [block("p", "Pulse", period=0.5, width=50.0), block("d", "DiscreteIntegrator",
                                                                  sample_time=0.1),
              block("i", "Integrator"), block("y", "Output"), block("q", "Output")]
    wires = [("p.y", "d.u"), ("d.y", "i.u"), ("i.y", "y.u"), ("d.y", "q.u")]
    model = blocksim.compile(diagram(blocks, wires, stop=1.0, output_interval=0.05))
    fast, ordinary, simulators, calls = _runs(model, monkeypatch)
    assert simulators == 0 and calls == (1, 1) and fast.stats["hits"] > 0
    _identical(fast, ordinary)


def test_a_run_with_more_rows_than_a_call_holds_is_handed_over_mid_way(monkeypatch):
    # 10001 rows: the first call returns with its buffer full (4096 rows), the Simulator
    # goes on from there: three calls, as a run that began in the Simulator makes.
    model = blocksim.compile(_chain(output_interval=0.001))
    fast, ordinary, simulators, calls = _runs(model, monkeypatch)
    assert simulators == 1 and calls == (3, 3) and len(fast.time) == 10001
    _identical(fast, ordinary)
    run_both(model, output_interval=0.001)  # and the python backend's run, to rounding


def _both_raise(model, error: type):
    """The facade's run on backend c and the Simulator's raise the same `error`, at the same
    time, with identical results so far; the facade's error."""
    errors = []
    for run in (lambda: blocksim.simulate(model, backend="c"),
                lambda: Simulator(model, model.settings.replaced(backend="c")).run()):
        with pytest.raises(error) as info:
            run()
        errors.append(info.value)
    fast, ordinary = errors
    assert str(fast) == str(ordinary) and fast.time == ordinary.time
    _identical(fast.results, ordinary.results)
    return fast


def test_a_run_with_events_c_leaves_to_python_is_handed_over(monkeypatch):
    # x' = +1 if x < 0 else -1 from x = 0: no start C or Python can settle: the failure,
    # its message and the rows so far are the Simulator's.
    _both_raise(never_settling_start(), SimulationError)


def test_a_run_ended_by_a_stop_block_is_the_simulators(monkeypatch):
    # A sine crossing zero (a located event in C) and a Stop once a clock passes 1.5 s.
    blocks = [block("s", "Sine", frequency=SIN), block("i", "Integrator"),
              block("c", "Clock"), block("k", "CompareToConstant", operator=">=",
                                         constant=1.5),
              block("st", "Stop"), block("sgn", "Sign"), block("y", "Output"),
              block("g", "Output")]
    wires = [("s.y", "i.u"), ("c.y", "k.u"), ("k.y", "st.u"), ("s.y", "sgn.u"),
             ("i.y", "y.u"), ("sgn.y", "g.u")]
    model = blocksim.compile(diagram(blocks, wires, stop=10.0))
    fast, ordinary, _, calls = _runs(model, monkeypatch)
    assert fast.status == "stopped" and calls[0] == calls[1]
    _identical(fast, ordinary)


def test_strict_with_a_nonfinite_row_fails_as_the_simulator_does(monkeypatch):
    # 1 / (t - 1): infinite in the row at t = 1
    blocks = [block("c", "Clock"), block("k", "Bias", bias=-1.0),
              block("one", "Constant", value=1.0), block("d", "Product", ops="*/"),
              block("i", "Integrator"), block("y", "Output")]
    wires = [("c.y", "k.u"), ("one.y", "d.u1"), ("k.y", "d.u2"), ("one.y", "i.u"),
             ("d.y", "y.u")]
    model = blocksim.compile(diagram(blocks, wires, stop=2.0, output_interval=0.5))
    plain_fast, plain, _, _ = _runs(model, monkeypatch)
    _identical(plain_fast, plain)
    assert plain.warnings and math.isinf(plain["y"][2])
    errors = []
    for run in (lambda: blocksim.simulate(model, backend="c", strict=True),
                lambda: Simulator(model, model.settings.replaced(backend="c"),
                                  strict=True).run()):
        with pytest.raises(SimulationError) as info:
            run()
        errors.append(info.value)
    assert str(errors[0]) == str(errors[1])
    _identical(errors[0].results, errors[1].results)


def test_a_progress_callback_or_should_stop_takes_the_simulator(monkeypatch):
    model = blocksim.compile(_chain())
    blocksim.simulate(model, backend="c")
    made = []
    real_init = Simulator.__init__

    def counting_init(self, *args, **kwargs):
        made.append(self)
        real_init(self, *args, **kwargs)
    monkeypatch.setattr(Simulator, "__init__", counting_init)
    blocksim.simulate(model, backend="c", progress=lambda t: None)
    blocksim.simulate(model, backend="c", should_stop=lambda: False)
    assert len(made) == 2


def test_ctrl_c_at_the_call_is_an_interruption_with_the_start_logged(monkeypatch):
    model = blocksim.compile(_chain())
    blocksim.simulate(model, backend="c")
    lib = loop.library(model)

    class Interrupting:
        def __getattr__(self, name):
            found = getattr(lib, name)
            if name != "bs_api_run":
                return found

            def call(*args):
                found(*args)
                raise KeyboardInterrupt
            return call
    monkeypatch.setitem(model.shared, loop.SHARED, Interrupting())
    fast = _both_raise(model, SimulationInterrupted)
    assert fast.results.status == "interrupted" and len(fast.results.time) == 0
    assert [e.kind for e in fast.results.events] == ["interrupted"]
    assert len(model.shared[loop.POOL]) >= 1  # the instance went back to the pool
