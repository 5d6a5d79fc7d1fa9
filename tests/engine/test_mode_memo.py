"""`deriv` with the lines fixed by the modes memoised (`engine/mode_memo.py`) gives the very
same floats as the generated `deriv`, whatever the modes do between calls."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.compiler import dataflow
from blocksim.engine import derived, mode_memo

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import relays  # noqa: E402


def _made(source: str, namespace: dict, name: str = "deriv"):
    """(generated deriv, memoised deriv or None, split) of a hand-written `deriv`."""
    fn = dataflow.split(source)[name]
    scope: dict = {}
    exec(compile(source, "<test deriv>", "exec"), namespace, scope)
    parts = mode_memo.split(fn, namespace)
    if parts is None:
        return scope[name], None, None
    made: dict = {}
    exec(compile(mode_memo.source(parts, "memo_deriv"), "<test memo>", "exec"), namespace,
         made)
    return scope[name], made["make"]([None, None, None], np), parts


def _mixed_source(n: int) -> str:
    """n relay-like lines fixed by the modes, a state-dependent line reading two of them,
    and a line reading a latched sign."""
    lines = ["def deriv(t, x, m, z):", "    x_ = x.tolist()", "    m_ = m.tolist()",
             "    z_ = z.tolist()", f"    dx_ = [0.0] * {n + 1}"]
    for i in range(n):
        lines += [f"    a{i} = (_p0 if m_[{i}] else _p1)", f"    b{i} = _p2 * a{i} - {i}.5"]
    lines += [f"    dx_[{i}] = b{i}" for i in range(n)]
    lines += [f"    c = x_[0] * a0 + b1 * t + (x_[1] if z_[0] > 0.0 else -x_[1])",
              f"    dx_[{n}] = c", "    return dx_"]
    return "\n".join(lines) + "\n"


NAMESPACE = {"_p0": 1.5, "_p1": -0.25, "_p2": 3.0, "inf": math.inf}


def test_memoised_deriv_equals_the_generated_one_on_random_inputs():
    n = 12
    deriv, memo, parts = _made(_mixed_source(n), dict(NAMESPACE))
    assert memo is not None
    assert len(parts.fixed) - 1 == 3 * n  # the result list's initialisation aside
    assert parts.carried == ["a0", "b1"]
    assert set(parts.heads) == {"x_", "z_"}
    rng = np.random.default_rng(7)
    m = np.zeros(n)
    for k in range(300):
        if k % 3 == 0:  # modes that stay, modes that change, and -0.0 against 0.0
            m = rng.choice([0.0, -0.0, 1.0, 2.0], size=n)
        x, z = rng.normal(size=n + 1), rng.choice([-1.0, 0.0, 1.0], size=1)
        t = float(rng.uniform(0, 10))
        got, want = memo(t, x, m, z), np.array(deriv(t, x, m, z))
        assert got.dtype == want.dtype
        assert np.array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_negative_zero_modes_are_a_new_key():
    source = "\n".join(["def deriv(t, x, m, z):", "    m_ = m.tolist()",
                        "    dx_ = [0.0] * 8"]
                       + [f"    dx_[{i}] = m_[{i}] * _p2" for i in range(8)]
                       + ["    return dx_"]) + "\n"
    deriv, memo, _ = _made(source, dict(NAMESPACE))
    x, z = np.zeros(8), np.zeros(0)
    for m in (np.zeros(8), -np.zeros(8), np.zeros(8)):
        got = memo(0.0, x, m, z)
        assert np.array_equal(np.signbit(got), np.signbit(np.array(deriv(0.0, x, m, z))))


def test_a_result_returned_is_not_the_memo():
    deriv, memo, _ = _made(_mixed_source(9), dict(NAMESPACE))
    x, m, z = np.ones(10), np.ones(9), np.ones(1)
    first = memo(0.0, x, m, z)
    first[:] = 99.0
    assert np.array_equal(memo(0.0, x, m, z), np.array(deriv(0.0, x, m, z)))


def test_too_few_fixed_lines_leave_deriv_as_it_is():
    _, memo, _ = _made(_mixed_source(2), dict(NAMESPACE))
    assert memo is None


@pytest.mark.parametrize("line", [
    "s = _f(m_[0])",  # a call (a helper may read anything)
    "s = m_[0] + t",  # time
    "s = m_[0] + z_[0]",  # a latched sign: it changes within a segment
    "s = m[0] * 2.0",  # the array itself (history rings live in it)
    "s = _table * m_[0]",  # a global that is not a number
])
def test_lines_that_read_more_than_modes_and_numbers_are_not_fixed(line):
    source = "\n".join(["def deriv(t, x, m, z):", "    m_ = m.tolist()",
                        "    z_ = z.tolist()", "    dx_ = [0.0] * 9", "    " + line,
                        "    dx_[8] = s"]
                       + [f"    dx_[{i}] = (_p0 if m_[{i}] else _p1)" for i in range(8)]
                       + ["    return dx_"]) + "\n"
    namespace = {**NAMESPACE, "_f": abs, "_table": np.ones(3)}
    fn = dataflow.split(source)["deriv"]
    parts = mode_memo.split(fn, namespace)
    assert parts is not None
    assert [st.lines[0] for st in parts.rest] == [line, "dx_[8] = s"]


def test_a_fixed_slot_written_again_later_is_not_memoised():
    source = "\n".join(["def deriv(t, x, m, z):", "    x_ = x.tolist()", "    m_ = m.tolist()",
                        "    dx_ = [0.0] * 8"]
                       + [f"    dx_[{i}] = (_p0 if m_[{i}] else _p1)" for i in range(8)]
                       + ["    dx_[3] = x_[0]", "    return dx_"]) + "\n"
    assert mode_memo.split(dataflow.split(source)["deriv"], NAMESPACE) is None


def test_modes_read_at_a_computed_index_are_not_memoised():
    source = "\n".join(["def deriv(t, x, m, z):", "    m_ = m.tolist()", "    dx_ = [0.0] * 8"]
                       + [f"    dx_[{i}] = m_[{i}] * _p0" for i in range(7)]
                       + ["    dx_[7] = m_[int(_p0)]", "    return dx_"]) + "\n"
    parts = mode_memo.split(dataflow.split(source)["deriv"], NAMESPACE)
    assert parts is None or all("int(" not in st.lines[0] for st in parts.fixed)


def test_a_failing_fixed_line_fails_as_the_generated_one_and_is_not_kept():
    source = "\n".join(["def deriv(t, x, m, z):", "    m_ = m.tolist()", "    dx_ = [0.0] * 8"]
                       + [f"    dx_[{i}] = _p0 / m_[{i}]" for i in range(8)]
                       + ["    return dx_"]) + "\n"
    deriv, memo, _ = _made(source, dict(NAMESPACE))
    x, z = np.zeros(8), np.zeros(0)
    bad = np.ones(8)
    bad[5] = 0.0
    for function in (deriv, memo):
        with pytest.raises(ZeroDivisionError):
            function(0.0, x, bad, z)
    with pytest.raises(ZeroDivisionError):
        memo(0.0, x, bad, z)  # nothing was kept from the failed call
    good = np.full(8, 2.0)
    assert np.array_equal(memo(0.0, x, good, z), np.array(deriv(0.0, x, good, z)))


def test_the_relay_bank_derivative_is_fixed_by_the_modes_alone():
    model = blocksim.compile(relays.diagram(9, 5.0))
    make = derived.mode_memo_deriv(model)
    assert make is not None
    memo = make([None, None, None], np)
    deriv = model.functions["deriv"]
    rng = np.random.default_rng(3)
    for _ in range(50):
        m = rng.choice([0.0, 1.0], size=len(model.m0))
        x, z = rng.normal(size=model.n_states), rng.choice([-1.0, 1.0], size=model.n_zc)
        assert np.array_equal(memo(0.0, x, m, z), np.array(deriv(0.0, x, m, z)))


def test_runs_with_and_without_the_memo_are_the_same(monkeypatch):
    model = blocksim.compile(relays.diagram(20, 2.9))
    assert derived.mode_memo_deriv(model) is not None
    with_memo = blocksim.simulate(model, backend="python")
    plain = blocksim.compile(relays.diagram(20, 2.9))
    monkeypatch.setattr(derived, "mode_memo_deriv", lambda model: None)
    without = blocksim.simulate(plain, backend="python")
    assert np.array_equal(with_memo.time, without.time)
    assert with_memo.signals.keys() == without.signals.keys()
    for name in with_memo.signals:
        assert np.array_equal(with_memo.signals[name], without.signals[name])
    assert with_memo.events == without.events
    assert with_memo.status == without.status == "finished"
    assert relays.error(with_memo, 20, 2.9) < 1e-9


def _relays_with_gain_parameter(n: int):
    """The relay bank with oscillator i's gain `k * (1 + i)`, k a diagram parameter."""
    return relays.diagram(n, 3.0, gain=lambda i: f"k * {1 + i}", parameters={"k": 1.0})


def test_models_from_with_params_use_their_own_values():
    model = blocksim.compile(_relays_with_gain_parameter(9))
    first = blocksim.simulate(model, backend="python")
    other = model.with_params({"k": 2.5})
    make = derived.mode_memo_deriv(other)
    assert make.__code__ is derived.mode_memo_deriv(model).__code__  # compiled once
    assert make.__globals__ is other.functions["deriv"].__globals__
    memo = make([None, None, None], np)
    m = np.ones(len(other.m0))
    x, z = np.zeros(other.n_states), np.zeros(other.n_zc)
    got = memo(0.0, x, m, z)
    assert np.array_equal(got, np.array(other.functions["deriv"](0.0, x, m, z)))
    assert not np.array_equal(got, np.array(model.functions["deriv"](0.0, x, m, z)))
    fresh = blocksim.compile(_relays_with_gain_parameter(9), params={"k": 2.5})
    swapped, compiled = (blocksim.simulate(mod, backend="python") for mod in (other, fresh))
    assert np.array_equal(swapped.time, compiled.time)
    assert swapped.events == compiled.events
    assert not np.array_equal(first.time, swapped.time)
