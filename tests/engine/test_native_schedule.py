"""Blocks of one kind brought together in pure numba functions (`native.schedule`), so that
they fuse into loops, without moving anything across a dependency or a barrier."""
from __future__ import annotations

import numpy as np
import pytest
from both_backends import HAS_NUMBA, run_both

from blocksim.compiler import dataflow
from blocksim.engine.native import codegen, fusion, schedule
from test_native_fused_events import relay_bank, switch_times

N = schedule.MIN_CHUNKS  # oscillators: each gives three blocks' chunks to deriv


def statements(lines: list[tuple[int | None, str]]) -> list[dataflow.Statement]:
    """One function's statements from (owner, line) pairs."""
    text = "def f(t, x_, m_):\n" + "".join(f"    {line}\n" for _, line in lines)
    owners = (None,) + tuple(owner for owner, _ in lines)
    return dataflow.split(text, owners)["f"].statements


def oscillators(n: int) -> list[tuple[int | None, str]]:
    """relay -> gain -> bias per oscillator, then the derivatives: the generator's order."""
    lines = []
    for k in range(n):
        lines += [(4 * k + 1, f"s{4 * k + 1} = (s{1000 + 2 * k} if m_[{k}] else s{1001 + 2 * k})"),
                  (4 * k + 2, f"s{4 * k + 2} = 2.5 * s{4 * k + 1}"),
                  (4 * k + 3, f"s{4 * k + 3} = s{4 * k + 2} + 0.5")]
    return lines + [(4 * k, f"dx_[{k}] = s{4 * k + 3}") for k in range(n)]


def check_order(original: list[dataflow.Statement], chunks: list[fusion.Chunk]) -> None:
    """Every line kept once, and each name the function writes written before it is read."""
    lines = [line for _, chunk in chunks for line in chunk]
    assert sorted(lines) == sorted(line for st in original for line in st.lines)
    ordered = statements([(0, line) for line in lines])
    produced = set().union(*(st.writes for st in ordered))
    written: set[str] = set()
    for st in ordered:
        assert not (st.reads & produced) - written
        written |= st.writes


def test_interleaved_blocks_of_one_kind_become_runs_and_loops():
    original = statements(oscillators(N))
    chunks = schedule.cluster(original)
    check_order(original, chunks)
    lines, _ = fusion.fuse(chunks, "_deriv_")
    assert sum(line.startswith("    for _k") for line in lines) == 4  # relay, gain, bias, dx
    assert len(lines) == 8
    straight, _ = fusion.fuse(fusion.group(original), "_deriv_")
    assert len(straight) == 3 * N + 2  # only the derivatives fuse in the generator's order


def test_small_functions_keep_their_order():
    original = statements(oscillators(4))
    assert schedule.cluster(original) == fusion.group(original)


def test_nothing_moves_across_a_barrier():
    lines = oscillators(N)
    middle = 3 * (N // 2)  # after the first half of the oscillators
    barrier = [(None, "s9999 = _hist_read(m_, 0, t)")]  # an array used whole
    original = statements(lines[:middle] + barrier + lines[middle:])
    chunks = schedule.cluster(original)
    check_order(original, chunks)
    position = [chunk for _, chunk in chunks].index(["s9999 = _hist_read(m_, 0, t)"])
    before = {line for _, chunk in chunks[:position] for line in chunk}
    assert before == {line for _, line in lines[:middle]}


def test_a_reused_temporary_keeps_its_readers_in_place():
    """Two blocks writing the same local name: the second may not move before the first's
    reader (a write after read), nor the reader after the second write."""
    lines = [(k, f"s{k} = 1.5 * x_[{k}]") for k in range(N)]
    lines += [(100, "_t = x_[0] + 1.0"), (101, "s200 = _t * 2.0"),
              (102, "_t = x_[1] + 3.0"), (103, "s201 = _t * 2.0")]
    lines += [(k + 200, f"s{k + 300} = 1.5 * x_[{k}]") for k in range(N)]
    original = statements(lines)
    order = [chunk[0] for _, chunk in schedule.cluster(original)]
    assert order.index("s200 = _t * 2.0") < order.index("_t = x_[1] + 3.0")
    assert order.index("_t = x_[0] + 1.0") < order.index("s200 = _t * 2.0")
    assert order.index("_t = x_[1] + 3.0") < order.index("s201 = _t * 2.0")


def test_a_slot_written_then_read_keeps_its_order():
    lines = [(k, f"dx_[{k}] = 2.0 * x_[{k}]") for k in range(N)]
    lines.append((N, "s5 = dx_[3] + 1.0"))  # reads a slot written above
    lines += [(k + N + 1, f"dx_[{k + N}] = 2.0 * x_[{k + N}]") for k in range(N)]
    original = statements(lines)
    order = [chunk[0] for _, chunk in schedule.cluster(original)]
    assert order.index("dx_[3] = 2.0 * x_[3]") < order.index("s5 = dx_[3] + 1.0")


@pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
def test_a_relay_bank_compiles_its_blocks_as_loops_and_matches_python():
    import sys
    from pathlib import Path

    import blocksim

    model = blocksim.compile(relay_bank(N))
    py = run_both(model)
    module = sys.modules[model.derived["native"].dispatchers[0].py_func.__module__]
    source = Path(module.__file__).read_text(encoding="utf-8")
    deriv = source.split("def deriv(", 1)[1].split("\n\n", 1)[0]
    assert deriv.count("for _k in range") >= 3 and deriv.count("\n") < 20
    for k in (0, N - 1):
        got = [e.time for e in py.events if e.block == f"r{k}" and e.kind in ("on", "off")]
        assert np.allclose(got, switch_times(k, 6.0), rtol=0, atol=1e-9)
    assert "deriv" in codegen.PURE_NAMES
