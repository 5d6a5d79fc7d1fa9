"""The start: the zero-crossing signs are latched from the model at t0 before any block
updates, so a block reading another's latched output in the first pass of the start's
event iteration sees the true relation, not the zeros the signs begin from (where
u >= c holds for every u, and a Stop behind it ended the run at t = 0)."""
import pytest
from both_backends import run_both
from builders import block, diagram


@pytest.mark.parametrize("operator, constant, stop_at", [
    (">=", 0.5, 0.5), ("<=", -1.0, None), (">", 0.25, 0.25), ("==", 0.0, None)])
def test_a_stop_behind_a_comparison_acts_only_where_it_holds(operator, constant, stop_at):
    # Clock -> CompareToConstant -> Stop: t >= 0.5 first holds at 0.5; t <= -1 never;
    # t == 0 neither: signs are read just after an instant (the flow one horizon on).
    blocks = [block("c", "Clock"), block("k", "CompareToConstant", operator=operator,
                                         constant=constant),
              block("s", "Stop"), block("i", "Integrator"), block("y", "Output")]
    wires = [("c.y", "k.u"), ("k.y", "s.u"), ("k.y", "i.u"), ("k.y", "y.u")]
    r = run_both(diagram(blocks, wires, stop=2.0, output_interval=0.125))
    if stop_at is None:
        assert r.status == "finished" and r.time[-1] == 2.0 and not r.events
    else:
        assert r.status == "stopped" and r.time[-1] == pytest.approx(stop_at, abs=1e-12)
        assert r["y"][0] == 0.0
