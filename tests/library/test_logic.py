"""LogicalOperator truth tables, the SR flip-flop and Memory (a one-event delay)."""
import math

import numpy as np
import pytest
from builders import block, diagram

import blocksim
from blocksim.errors import CompileError


def constant_inputs(op, columns, **params):
    """Output of LogicalOperator `op` on constant vector inputs u1, u2, ..."""
    blocks = [block(f"c{i}", "Constant", value=col) for i, col in enumerate(columns)]
    blocks += [block("l", "LogicalOperator", operator=op, inputs=len(columns), **params),
               block("y", "Output")]
    wires = [(f"c{i}.y", f"l.u{i + 1}") for i in range(len(columns))] + [("l.y", "y.u")]
    r = blocksim.simulate(diagram(blocks, wires, stop=1.0, output_interval=1.0))
    return r["y"][-1]


# Inputs other than 0 and 1 check that "true" means nonzero (negative and NaN-free values).
A = [0.0, 0.0, 1.0, -2.5]
B = [0.0, 3.0, 0.0, 1e-300]


@pytest.mark.parametrize("op, expected", [
    ("AND", [0, 0, 0, 1]), ("OR", [0, 1, 1, 1]), ("NAND", [1, 1, 1, 0]),
    ("NOR", [1, 0, 0, 0]), ("XOR", [0, 1, 1, 0]),
])
def test_two_input_truth_tables(op, expected):
    np.testing.assert_array_equal(constant_inputs(op, [A, B]), expected)


def test_three_inputs_and_xor_parity():
    bits = np.array([[(i >> k) & 1 for i in range(8)] for k in (2, 1, 0)], dtype=float)
    columns = bits.tolist()
    np.testing.assert_array_equal(constant_inputs("AND", columns), bits.prod(axis=0))
    np.testing.assert_array_equal(constant_inputs("OR", columns), bits.max(axis=0))
    np.testing.assert_array_equal(constant_inputs("XOR", columns), bits.sum(axis=0) % 2)


def test_not_and_scalar_expansion():
    r = blocksim.simulate(
        diagram([block("c", "Constant", value=[0.0, 7.0]),
                 block("l", "LogicalOperator", operator="NOT"), block("y", "Output")],
                [("c.y", "l.u1"), ("l.y", "y.u")], stop=1.0, output_interval=1.0))
    np.testing.assert_array_equal(r["y"][-1], [1.0, 0.0])
    # A scalar input combines with every element of a vector input.
    np.testing.assert_array_equal(constant_inputs("AND", [[1.0], [0.0, 1.0, 2.0]]),
                                  [0.0, 1.0, 1.0])


@pytest.mark.parametrize("op, expected", [("AND", 0.0), ("OR", 1.0), ("XOR", 1.0),
                                          ("NOR", 0.0)])
def test_one_input_reduces_over_its_elements(op, expected):
    assert constant_inputs(op, [[1.0, 0.0, 1.0, 1.0]]).tolist() == expected


def test_logic_of_relational_outputs_changes_only_at_their_events():
    # (cos t > 0) AND (sin t > 0): true in the first quadrant of each period.
    r = blocksim.simulate(
        diagram([block("sin", "Integrator", x0=0.0), block("cos", "Integrator", x0=1.0),
                 block("neg", "Gain", k=-1.0),
                 block("pc", "CompareToConstant", operator=">", constant=0.0),
                 block("ps", "CompareToConstant", operator=">", constant=0.0),
                 block("l", "LogicalOperator", operator="AND"), block("y", "Output")],
                [("cos.y", "sin.u"), ("sin.y", "neg.u"), ("neg.y", "cos.u"),
                 ("cos.y", "pc.u"), ("sin.y", "ps.u"), ("pc.y", "l.u1"), ("ps.y", "l.u2"),
                 ("l.y", "y.u")], stop=8.0, output_interval=0.1, rtol=1e-12, atol=1e-12
                ))
    events = [e.time for e in r.events]
    np.testing.assert_allclose(events, np.arange(1, 6) * math.pi / 2, rtol=0, atol=1e-9)
    t = r.time
    ok = np.all(np.abs(t[:, None] - np.array(events)[None, :]) > 1e-6, axis=1) & (t > 1e-6)
    expected = ((np.cos(t) > 0) & (np.sin(t) > 0)).astype(float)
    np.testing.assert_array_equal(r["y"][ok], expected[ok])


def test_logical_operator_needs_at_least_one_input():
    d = diagram([block("c", "Constant"), block("l", "LogicalOperator", inputs=0)],
                [("c.y", "l.u1")])
    with pytest.raises(CompileError) as exc:
        blocksim.simulate(d)
    assert exc.value.block == "l"


def steps(name, times, signs):
    """Blocks and wires for a signal `name`.y = sum of unit steps (+/-) at the given times."""
    blocks = [block(f"{name}{i}", "Step", time=t, after=float(sg))
              for i, (t, sg) in enumerate(zip(times, signs))]
    blocks.append(block(name, "Sum", signs="+" * len(times)))
    wires = [(f"{name}{i}.y", f"{name}.u{i + 1}") for i in range(len(times))]
    return blocks, wires


def value_at(r, name, t):
    """(left limit, right limit) of a signal at an event time t."""
    rows = np.flatnonzero(r.time == t)
    assert len(rows) == 2, f"no event rows at t = {t}"
    return tuple(r[name][rows])


def test_sr_flip_flop_set_reset_and_both_keeps():
    # s: 1 on [1, 4); r: 1 on [2, 3) (while s is held: keep) and on [5, 6) (reset).
    sb, sw = steps("s", [1.0, 4.0], [1, -1])
    rb, rw = steps("r", [2.0, 3.0, 5.0, 6.0], [1, -1, 1, -1])
    r = blocksim.simulate(diagram(sb + rb + [block("f", "SRFlipFlop"), block("q", "Output"),
                                             block("qb", "Output")],
                                  sw + rw + [("s.y", "f.s"), ("r.y", "f.r"), ("f.q", "q.u"),
                                             ("f.qbar", "qb.u")], stop=7.0, output_interval=0.5))
    t = r.time
    grid = ~np.isin(t, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    np.testing.assert_array_equal(r["q"][grid], ((t >= 1) & (t < 5)).astype(float)[grid])
    np.testing.assert_array_equal(r["qb"], 1.0 - r["q"])
    assert value_at(r, "q", 1.0) == (0.0, 1.0)
    assert value_at(r, "q", 5.0) == (1.0, 0.0)
    assert [(e.time, e.kind) for e in r.events_of(block="f")] == [(1.0, "set"), (5.0, "reset")]


def test_sr_flip_flop_initial_state_and_set_at_the_start():
    def run(s, r_, initial):
        res = blocksim.simulate(
            diagram([block("s", "Constant", value=s), block("r", "Constant", value=r_),
                     block("f", "SRFlipFlop", initial=initial), block("q", "Output")],
                    [("s.y", "f.s"), ("r.y", "f.r"), ("f.q", "q.u")],
                    stop=1.0, output_interval=0.5))
        return res["q"].tolist()
    assert run(0.0, 0.0, True) == [1.0] * 3
    assert run(0.0, 0.0, False) == [0.0] * 3
    assert run(1.0, 0.0, False) == [1.0] * 3
    assert run(0.0, 1.0, True) == [0.0] * 3
    assert run(1.0, 1.0, True) == [1.0] * 3


def test_memory_outputs_the_value_before_the_most_recent_event():
    r = blocksim.simulate(
        diagram([block("st", "Step", time=1.0, before=0.0, after=2.0),
                 block("tick", "Step", time=3.0),
                 block("mem", "Memory", initial=-1.0), block("y", "Output")],
                [("st.y", "mem.u"), ("mem.y", "y.u")], stop=4.0, output_interval=0.5))
    t = r.time
    grid = ~np.isin(t, [1.0, 3.0])
    expected = np.where(t < 1.0, -1.0, np.where(t < 3.0, 0.0, 2.0))
    np.testing.assert_array_equal(r["y"][grid], expected[grid])
    # At the step the Memory still gives the value before it: it lags by one event.
    assert value_at(r, "y", 1.0) == (-1.0, 0.0)
    assert value_at(r, "y", 3.0) == (0.0, 2.0)


def test_memory_breaks_an_algebraic_loop_and_counts_events():
    # y = Memory(y) + 1 would be an algebraic loop without the memory's delay.
    r = blocksim.simulate(
        diagram([block("mem", "Memory", initial=[0.0, 10.0]), block("one", "Constant"),
                 block("p", "Sum"), block("t1", "Step", time=1.0), block("t2", "Step", time=2.0),
                 block("y", "Output")],
                [("mem.y", "p.u1"), ("one.y", "p.u2"), ("p.y", "mem.u"), ("mem.y", "y.u")],
                stop=3.0, output_interval=0.5))
    np.testing.assert_array_equal(r["y"][-1], [2.0, 12.0])
    rows = np.flatnonzero(r.time == 2.0)
    np.testing.assert_array_equal(r["y"][rows], [[1.0, 11.0], [2.0, 12.0]])
