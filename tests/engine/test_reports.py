"""What a run reports besides its results: non-finite logged signals (warnings, or errors
with strict=True), no numpy warnings on the terminal, Ctrl-C with the results so far, and
the notices of the numba backend."""
import _thread
import importlib.util
import logging
import sys
import threading
import time
import warnings

import numpy as np
import pytest
from helper_blocks import helper_lookup_registered
from builders import block, diagram

import blocksim
from blocksim.compiler import compile_diagram
from blocksim.diagram.format import save_diagram
from blocksim.engine import Simulator, notices
from blocksim.engine.native import cache
from blocksim.engine.results import Recorder
from blocksim.errors import SimulationError, SimulationInterrupted

HAS_NUMBA = importlib.util.find_spec("numba") is not None
needs_numba = pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
BACKENDS = ["python", pytest.param("numba", marks=needs_numba)]


def overflowing(nan: bool):
    """y = 1e309 * t, an overflow to +inf from t = 0.18 on (or, with `nan`, inf - inf);
    `t` logs the time itself, always finite."""
    blocks = [block("c", "Constant", value=1.0), block("i", "Integrator"),
              block("g", "Gain", k=1e308), block("g2", "Gain", k=10.0),
              block("y", "Output"), block("t", "Output")]
    wires = [("c.y", "i.u"), ("i.y", "g.u"), ("g.y", "g2.u"), ("i.y", "t.u")]
    if nan:
        blocks.append(block("d", "Sum", signs="+-"))
        wires += [("g2.y", "d.u1"), ("g2.y", "d.u2"), ("d.y", "y.u")]
    else:
        wires.append(("g2.y", "y.u"))
    return diagram(blocks, wires, stop=1.0, output_interval=0.02)


# ---------------------------------------------------------------- non-finite signals
@pytest.mark.parametrize("nan, shown", [(True, "NaN"), (False, "+inf")])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_non_finite_logged_signal_is_a_warning_naming_the_blocks(nan, shown, backend, caplog):
    with caplog.at_level(logging.WARNING, logger="blocksim.engine"):
        r = blocksim.simulate(overflowing(nan), backend=backend)
    assert r.status == "finished"
    first = 9 * 0.02  # the first grid point past 1.797e308 / 1e309
    assert r.warnings == (f"block 'y' logs {shown} from t = {first!r}; the first block with a "
                          f"non-finite output is 'g2'",)
    assert [m for m in caplog.messages if "logs" in m] == [f"<diagram>: {r.warnings[0]}"]
    bad = ~np.isfinite(r["y"])
    assert r.time[bad][0] == first and bad[r.time >= first].all()
    np.testing.assert_allclose(r["t"], r.time, atol=1e-12)  # the finite signal: no word


@pytest.mark.parametrize("backend", BACKENDS)
def test_strict_makes_a_non_finite_signal_an_error_with_the_results(backend):
    model = compile_diagram(overflowing(nan=True))
    settings = model.settings.replaced(backend=backend)
    with pytest.raises(SimulationError) as info:
        Simulator(model, settings, strict=True).run()
    err = info.value
    assert err.block == "g2" and err.time == 9 * 0.02 and "block 'y' logs NaN" in str(err)
    results = err.results
    assert results.status == "failed" and np.isnan(results["y"][results.time == err.time]).all()
    assert np.isfinite(results["y"][results.time < err.time]).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_warnings_stay_off_the_terminal_and_the_block_is_named(backend):
    # x' = 1e200 x from 1e200: the derivative overflows at once.
    blocks = [block("k", "Gain", k=1e200), block("i", "Integrator", x0=1e200),
              block("y", "Output")]
    d = diagram(blocks, [("i.y", "k.u"), ("k.y", "i.u"), ("i.y", "y.u")])
    with warnings.catch_warnings(record=True) as caught, pytest.raises(SimulationError) as info:
        warnings.simplefilter("always")
        blocksim.simulate(d, backend=backend)
    assert caught == [] and info.value.block == "k" and "infinite or NaN" in str(info.value)


# ---------------------------------------------------------------- Ctrl-C
def endless_oscillator():
    blocks = [block("k", "Gain", k=-1.0), block("v", "Integrator", x0=0.0),
              block("x", "Integrator", x0=1.0), block("y", "Output")]
    wires = [("x.y", "k.u"), ("k.y", "v.u"), ("v.y", "x.u"), ("x.y", "y.u")]
    return diagram(blocks, wires, stop=1e6, rtol=1e-12, atol=1e-12, output_interval=0.1)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="Ctrl-C reaches the main thread only")
@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_raises_simulation_interrupted_with_the_results(backend):
    model = blocksim.compile(endless_oscillator())
    blocksim.simulate(model, backend=backend, stop_time=1.0)  # compile the numba functions
    # As a SIGINT does: the main thread gets KeyboardInterrupt at its next Python
    # instruction, for numba when the compiled loop returns (it does so regularly).
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(SimulationInterrupted) as info:
            Simulator(model, model.settings.replaced(backend=backend)).run()
    finally:
        timer.cancel()
    err = info.value
    results = err.results
    assert results.status == "interrupted" and "Ctrl-C" in results.message
    assert results.events[-1].kind == "interrupted" and results.events[-1].time == err.time
    assert 0.0 < results.time[-1] <= err.time + 0.1 and len(results.time) == len(results["y"])
    np.testing.assert_allclose(results["y"], np.cos(results.time), atol=1e-8)


def test_results_of_an_interrupted_append_keep_complete_rows_only():
    recorder = Recorder(["y"], [[0]])
    recorder.add_logged(0.0, [1.0])
    recorder._times.append(0.1)  # Ctrl-C between the two appends of add_logged
    r = recorder.results("interrupted")
    assert r.time.tolist() == [0.0] and r["y"].tolist() == [1.0]
    recorder.add_rows(np.array([0.2]), np.array([[2.0]]))
    recorder._t_parts.append(np.array([0.3]))  # ... or of add_rows
    assert recorder.results().time.tolist() == [0.0, 0.2]


# ---------------------------------------------------------------- numba notices
@pytest.fixture
def notice_log(caplog):
    notices.forget()
    caplog.set_level(logging.INFO, logger=notices.LOGGER)
    yield lambda: [r.getMessage() for r in caplog.records if r.name == notices.LOGGER]
    notices.forget()


def lag(**sim):
    blocks = [block("c", "Constant", value=1.0),
              block("tf", "TransferFunction", num=1.0, den=[1.0, 1.0]), block("y", "Output")]
    return diagram(blocks, [("c.y", "tf.u"), ("tf.y", "y.u")], stop=1.0, **sim)


RADAU_IN_PYTHON = "backend numba: it runs solver dopri5 only; solver 'radau' runs in Python"


@needs_numba
def test_numba_with_another_solver_says_it_runs_python_once(notice_log):
    """A notice once (the terminal), and in the warnings of every such run (the API)."""
    runs = [blocksim.simulate(lag(solver="radau"), backend="numba") for _ in range(2)]
    assert notice_log() == [RADAU_IN_PYTHON]
    assert [r.warnings for r in runs] == [(RADAU_IN_PYTHON,)] * 2
    assert blocksim.simulate(lag(solver="radau")).warnings == ()  # asked for Python


@needs_numba
def test_the_cli_says_once_that_numba_runs_radau_in_python(tmp_path, capsys):
    from blocksim.cli.main import main

    path = tmp_path / "lag.json"
    save_diagram(lag(solver="radau"), path)
    notices.forget()
    assert main(["run", str(path), "--backend", "numba", "--out", str(tmp_path / "o.csv")]) == 0
    assert capsys.readouterr().err.count("solver 'radau' runs in Python") == 1


@needs_numba
def test_numba_without_continuous_state_says_it_runs_python(notice_log):
    blocks = [block("s", "Sine"), block("y", "Output")]
    r = blocksim.simulate(diagram(blocks, [("s.y", "y.u")], stop=1.0), backend="numba")
    message = "backend numba: a diagram without continuous states runs in Python"
    assert notice_log() == [message] and r.warnings == (message,)


@needs_numba
def test_numba_names_the_block_whose_events_need_python(notice_log):
    # A third-party block whose update calls Python helpers (its table's search).
    blocks = [block("c", "Constant"), block("i", "Integrator"),
              block("lut", "HelperLookup", breakpoints=[0.0, 0.5, 1.0], table=[0.0, 1.0, 0.0]),
              block("y", "Output")]
    with helper_lookup_registered():
        d = diagram(blocks, [("c.y", "i.u"), ("i.y", "lut.u"), ("lut.y", "y.u")], stop=1.0)
        r = blocksim.simulate(d, backend="numba")
    assert r["y"][-1] == pytest.approx(0.0, abs=1e-12)
    (message,) = notice_log()
    assert "block 'lut' (HelperLookup)" in message and "handled in Python" in message


@needs_numba
def test_the_first_compilation_of_the_numba_backend_is_announced(notice_log, monkeypatch):
    # As on a machine without the cache: the backend module is imported afresh and the
    # cache looks empty (the kernels themselves stay loaded: this takes no time here).
    blocksim.simulate(lag(), backend="numba")
    monkeypatch.delitem(sys.modules, "blocksim.engine.native.loop")
    monkeypatch.setattr(cache, "kernels_cached", lambda: False)
    blocksim.simulate(lag(), backend="numba")
    first, last = notice_log()
    assert first.startswith("compiling the numba backend, once per machine; this takes about")
    assert last.startswith("numba backend compiled in ")


def test_without_numba_one_notice_says_how_to_install_it(notice_log, monkeypatch, capsys):
    # As on a machine without numba (the backend module not loaded yet): the run goes on
    # in Python, and one line says why and what to install; nothing says "compiling".
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.delitem(sys.modules, "blocksim.engine.native.loop", raising=False)
    r = blocksim.simulate(lag(), backend="numba")
    assert r.status == "finished"
    assert notice_log() == ["backend numba: numba is not installed (pip install "
                            "'blocksim[fast]'); running in Python"]
    notices.forget()
    from blocksim.cli.main import main

    capsys.readouterr()
    assert main(["run", "bouncing_ball", "--backend", "numba"]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "numba" in line]
    assert said == ["blocksim: backend numba: numba is not installed (pip install "
                    "'blocksim[fast]'); running in Python"]


_KEPT: list = []


@needs_numba
def test_a_long_compilation_says_what_numba_compiles(notice_log):
    import numba

    from blocksim.engine.native import heartbeat

    def probe(x):
        total = 0.0
        for k in range(x.size):
            total += np.sin(x[k]) * np.exp(-x[k])
        return total
    probe.__module__, probe.__qualname__ = "blocksim.engine.native.probe", "probe"  # as if
    # one of the engine's functions
    compiled = numba.njit(probe)
    # Kept for the session: numba's compiled module refers back to its library through a
    # weak proxy, which other tests' walks over gc.get_objects() must not find dead.
    _KEPT.append(compiled)
    with heartbeat.compiling("compiling the probe", interval=0.01):
        assert compiled(np.ones(3)) == pytest.approx(3 * np.sin(1) * np.exp(-1))
        time.sleep(0.05)  # a beat after it is done
    said = notice_log()
    assert said and all(line.startswith("compiling the probe: ") for line in said)
    assert any(line.endswith(" s so far, now probe.probe") for line in said), said
    assert said[-1].endswith(" s so far, 1 function done"), said
    count = threading.active_count()
    time.sleep(0.03)
    assert notice_log() == said and threading.active_count() == count  # the beat stopped


def test_q_silences_the_compilation_heartbeat(caplog):
    from blocksim.engine.native import heartbeat

    caplog.set_level(logging.WARNING, logger=notices.LOGGER)
    before = threading.active_count()
    with heartbeat.compiling("compiling", interval=0.005):
        assert threading.active_count() == before  # no thread at all
        time.sleep(0.03)
    assert not [r for r in caplog.records if r.name == notices.LOGGER]


def test_the_kernel_cache_is_found_where_numba_keeps_it(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert not cache.kernels_cached(tmp_path)
    (tmp_path / "kernel._segment-170.py311.nbi").write_bytes(b"")
    assert cache.kernels_cached(tmp_path)
    elsewhere = tmp_path / "numba"
    (elsewhere / "engine" / "native").mkdir(parents=True)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(elsewhere))
    assert not cache.kernels_cached(tmp_path / "none")
    (elsewhere / "engine" / "native" / "kernel._segment-170.py311.nbi").write_bytes(b"")
    assert cache.kernels_cached(tmp_path / "none")


@needs_numba
def test_numba_runs_python_when_the_output_grid_exceeds_its_buffers(notice_log, monkeypatch):
    # The compiled loop allocates the whole output grid at once; the Python path records
    # rows as they come (a run stopped early needs only those). The compiler's budget keeps
    # results under 1 GiB, about the buffers' size: a smaller buffer shows the rule.
    from blocksim.engine.native import loop as native

    monkeypatch.setattr(native, "BUFFER_VALUES", 1_000_000)
    r = blocksim.simulate(lag(), backend="numba", stop_time=1e4, output_interval=0.01,
                          should_stop=lambda: True)
    assert r.status == "stopped" and r.time[0] == 0.0
    (message,) = notice_log()
    assert "1e+06 rows" in message and "runs in Python" in message
    assert r.warnings == (message,)
