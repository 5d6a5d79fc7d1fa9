"""Repeating groups of blocks (an oscillator's relay, gain and bias, then the next
oscillator's) compile as one loop per group in large numba functions (`fusion.fuse`'s
max_period): the same lines in the same order as the straight-line code, so the same
values to the bit, and a new model's compile in a fraction of the time."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from both_backends import HAS_NUMBA, run_both

from blocksim.engine.native import fusion
from test_native_fused_events import relay_bank, switch_times

N = 16  # oscillators: 4 N chunks in deriv, above fusion.MIN_CHUNKS


def oscillators(n: int) -> list[fusion.Chunk]:
    """relay -> gain -> bias per oscillator, then the derivatives: the generator's order."""
    chunks: list[fusion.Chunk] = []
    for k in range(n):
        chunks += [(4 * k + 1, [f"s{4 * k + 1} = (s{1000 + 2 * k} if m_[{k}] else s{1001 + 2 * k})"]),
                   (4 * k + 2, [f"s{4 * k + 2} = {1.0 + 0.37 * k!r} * s{4 * k + 1}"]),
                   (4 * k + 3, [f"s{4 * k + 3} = s{4 * k + 2} + 0.5"])]
    return chunks + [(4 * k, [f"dx_[{k}] = s{4 * k + 3}"]) for k in range(n)]


def run_lines(lines: list[str], arrays: dict[str, np.ndarray], m: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Execute a fused body in Python: (S, dx) after it."""
    S = np.arange(2000, dtype=float) * 0.25 - 3.0
    dx = np.zeros(N)
    source = "def f(S, m_, dx_):\n" + "\n".join(lines) + "\n"
    namespace: dict = dict(arrays)
    exec(compile(source, "<fused>", "exec"), namespace)  # our own generated text
    namespace["f"](S, m, dx)
    return S, dx


def test_repeating_groups_become_one_loop_with_the_same_values():
    chunks = oscillators(N)
    m = np.array([k % 3 == 0 for k in range(N)], dtype=float)
    straight, straight_arrays = fusion.fuse(chunks, "_deriv_")
    periodic, arrays = fusion.fuse(chunks, "_deriv_", fusion.MAX_PERIOD)
    assert len(straight) == 3 * N + 2  # one kind at a time, only the derivatives fuse
    assert periodic[0] == f"    for _k in range({N}):" and len(periodic) == 6
    assert [line.split(" = ")[0].strip() for line in periodic[1:4]] == [
        "S[1 + 4 * _k]", "S[2 + 4 * _k]", "S[3 + 4 * _k]"]  # the group's lines, in order
    for got, want in zip(run_lines(periodic, arrays, m), run_lines(straight, straight_arrays, m)):
        assert np.array_equal(got, want)


def test_without_max_period_or_with_a_break_nothing_changes():
    chunks = oscillators(N)
    assert fusion.fuse(chunks, "_p_") == fusion.fuse(chunks, "_p_", 0)
    # a line of no block between oscillators ends the run; fewer than MIN_RUN groups stay
    broken = chunks[:9] + [(None, ["s999 = 1.0"])] + chunks[9:3 * N]
    lines, _ = fusion.fuse(broken, "_p_", fusion.MAX_PERIOD)
    assert lines[:9] == fusion.fuse(chunks[:9], "_p_")[0]
    assert lines[9] == "    S[999] = 1.0" and lines[10] == f"    for _k in range({N - 3}):"
    odd = [(owner, [line.replace("+ 0.5", "- 0.5")]) if owner == 4 * 5 + 3 else (owner, [line])
           for owner, (line,) in chunks[:3 * N]]  # oscillator 5's bias differs
    lines, _ = fusion.fuse(odd, "_p_", fusion.MAX_PERIOD)
    assert lines[0] == "    for _k in range(5):" and "    S[23] = S[22] - 0.5" in lines


def test_literal_braces_are_left_straight():
    chunks = [(k, [f"s{k} = len({{1.0: x_[{k}]}})"]) for k in range(8)]
    chunks = [c for k in range(8) for c in (chunks[k], (100 + k, [f"s{100 + k} = 2.0 * s{k}"]))]
    lines, _ = fusion.fuse(chunks, "_p_", fusion.MAX_PERIOD)
    assert not any(line.startswith("    for") for line in lines)


@pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")
def test_a_relay_bank_compiles_its_oscillators_as_one_loop_and_matches_python():
    import blocksim

    model = blocksim.compile(relay_bank(N))
    py = run_both(model)
    module = sys.modules[model.derived["native"].dispatchers[0].py_func.__module__]
    source = Path(module.__file__).read_text(encoding="utf-8")
    deriv = source.split("def deriv(", 1)[1].split("\n\n", 1)[0]
    assert deriv.count("for _k in range") == 2 and deriv.count("\n") < 14
    for k in (0, N - 1):
        got = [e.time for e in py.events if e.block == f"r{k}" and e.kind in ("on", "off")]
        assert np.allclose(got, switch_times(k, 6.0), rtol=0, atol=1e-9)
