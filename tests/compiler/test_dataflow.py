"""The dataflow analysis reads plain assignments without parsing them (`dataflow._simple`):
for every statement of the generated code of every example diagram, and of hand-written
edge cases, it must say exactly what parsing says, or decline."""
from pathlib import Path

import pytest

import blocksim
from blocksim.compiler import dataflow

DIAGRAMS = Path(__file__).resolve().parents[2] / "diagrams"


def agrees(lines: list[str]) -> bool:
    """True if the fast reading declines or equals the parsed one; False if it differs."""
    fast = dataflow._simple(lines[0], 7) if len(lines) == 1 else None
    return fast is None or fast == dataflow._parsed(lines, 7)


@pytest.mark.parametrize("path", sorted(DIAGRAMS.glob("*.json")), ids=lambda p: p.name)
def test_the_fast_reading_agrees_with_parsing_on_generated_code(path):
    model = blocksim.compile(blocksim.load(path))
    statements = [st for fn in dataflow.split(model.code).values() for st in fn.statements]
    read_fast = [st for st in statements
                 if len(st.lines) == 1 and dataflow._simple(st.lines[0], None) is not None]
    assert read_fast  # every diagram has plain assignments
    assert [st.lines for st in statements if not agrees(st.lines)] == []


@pytest.mark.parametrize("line", [
    "s1 = x_[3] * s0", "dx_[2] = x_[1] - x_[2]", "g_[0] = (-(x_[1]) if z_[0] < 0.0 else x_[1])",
    "s2 = x_[s1]", "s2 = x_[1:3]", "s2 = x_[-1]", "s2 = x_[x_[0]] + 1.5e-3", "s3 = x_",
    "s4 = math.sin(s3) + np.pi", "s5 = foo(a=1)", "s6 = [v for v in x_]", "s7 = lambda: 1",
    "s8 = 'x_[1]'", "s9 = ev.append((1, 'on'))", "s9 = ev.append(s1)", "q[2] = s1",
    "m_[1] = 0.0 if s1 is None else not s2", "s10 = (s11 := 2)", "s12 = s1 == s2 >= s3",
    "x_[4] = x_[4] + 1", "s13 = 1.e5 + 2.5E-3 + abs(s1).real", "return [s0, s1, x_[2]]",
    "return dx_", "return None", "return", "return ev.append(s1)", "return s1 if s2 else s3",
    "s3 = x_[12]", "s3 = m_[0]", "s3 = z_[2]", "s3 = s2", "s3 = t", "s3 = x_[1] ",
    "s3 = dx_[1]", "s3 = s2.real", "s3 = x", "s3 = tt",
])
def test_the_fast_reading_agrees_with_parsing_on_edge_cases(line):
    assert agrees([line])


def test_split_statements_are_analysed_on_first_use_as_an_eager_analysis_would():
    """`split` defers each statement's analysis (most of a large model's are never
    asked); what it gives when asked is exactly `_analyse`'s."""
    model = blocksim.compile(blocksim.load(DIAGRAMS / "bouncing_ball.json"))
    functions = dataflow.split(model.code, model.line_owner)
    statements = [st for fn in functions.values() for st in fn.statements]
    assert statements and all(st._facts is None for st in statements)  # none analysed yet
    for st in statements:
        eager = dataflow._analyse(st.lines, st.owner)
        assert (st.writes, st.reads, st.states, st.dynamic_state, st.stores) == (
            eager.writes, eager.reads, eager.states, eager.dynamic_state, eager.stores)
        assert st == eager
    given = dataflow.Statement(["s1 = s0"], 3, {"s1"}, {"s0"}, set(), False, set())
    assert given._facts is not None and given == dataflow._analyse(["s1 = s0"], 3)
