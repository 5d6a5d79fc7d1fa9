"""Event code of many blocks of one type compiles as one loop (`native.fusion`), with the
same events as the straight-line code would give: checked against the Python backend and
against the closed-form switching times of relay oscillators."""
from __future__ import annotations

import numpy as np
import pytest
from both_backends import HAS_NUMBA, run_both

import blocksim
from blocksim.engine.native import fusion
from blocksim.diagram.format import diagram_from_dict

N = 6  # oscillators: above fusion.MIN_RUN, so their relays' event code becomes a loop


def relay_bank(n: int, stop: float = 6.0):
    """x_k' = b_k + g_k * relay(x_k): a triangle wave between -1 and 1 per oscillator."""
    blocks, wires = [], []
    for k in range(n):
        blocks += [{"id": f"x{k}", "type": "Integrator"},
                   {"id": f"r{k}", "type": "Relay",
                    "params": {"on_point": 1.0, "off_point": -1.0, "on_value": -1.0,
                               "off_value": 1.0}},
                   {"id": f"g{k}", "type": "Gain", "params": {"k": 1.0 + 0.37 * k}},
                   {"id": f"b{k}", "type": "Bias", "params": {"bias": 0.05 * k}}]
        wires += [(f"x{k}.y", f"r{k}.u"), (f"r{k}.y", f"g{k}.u"), (f"g{k}.y", f"b{k}.u"),
                  (f"b{k}.y", f"x{k}.u")]
    blocks.append({"id": "y", "type": "Output"})
    wires.append((f"x{n - 1}.y", "y.u"))
    return diagram_from_dict({
        "format": "blocksim", "version": 1, "parameters": {},
        "simulation": {"stop": stop, "rtol": 1e-10, "atol": 1e-12},
        "blocks": blocks, "wires": [{"src": s, "dst": d} for s, d in wires]})


def switch_times(k: int, stop: float) -> list[float]:
    """Closed form: from x = 0 rising with slope g + b to 1, falling with g - b to -1, ..."""
    g, b = 1.0 + 0.37 * k, 0.05 * k
    times, t, x, rising = [], 0.0, 0.0, True
    while True:
        t += (1.0 - x) / (g + b) if rising else (x + 1.0) / (g - b)
        if t > stop:
            return times
        times.append(t)
        x, rising = (1.0, False) if rising else (-1.0, True)


def test_event_entries_of_a_run_of_blocks_become_one_loop():
    chunks = [(4 * k + 1, [f"if zn_[{k}] >= 0.0:", f"    m_[{k}] = 1.0; _log(ev, {4 * k + 1}, 1)"])
              for k in range(N)]
    lines, arrays = fusion.fuse(chunks, "_update_")
    assert lines[0] == f"    for _k in range({N}):"
    assert "_log(ev, 1 + 4 * _k, 1)" in lines[-1] and not arrays
    scattered = [(b, [f"_log(ev, {b}, 2)"]) for b in (3, 4, 9, 20, 21)]
    lines, arrays = fusion.fuse(scattered, "_update_")  # uneven blocks: an index array
    assert lines == ["    for _k in range(5):", "        _log(ev, _update_0[_k], 2)"]
    assert arrays["_update_0"].tolist() == [3, 4, 9, 20, 21]


@pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed")
def test_fused_relays_switch_when_the_closed_form_says():
    results = run_both(relay_bank(N))  # numba: events settled in the compiled loop
    for k in range(N):
        got = [e.time for e in results.events if e.block == f"r{k}" and e.kind in ("on", "off")]
        want = switch_times(k, 6.0)
        assert len(got) == len(want) > 2
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert blocksim.compile(relay_bank(N)).n_zc == N
