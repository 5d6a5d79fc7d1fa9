"""A failed run says so in one line: the warnings its error repeats (a stiff system before
the stiffness budget fails, a non-finite logged signal before the state becomes infinite)
stay in the results but are not logged; a run that survives its warnings logs them, at its
end or once they have been held for a second of a long run."""
import logging

import pytest
from builders import block, diagram

import blocksim
from blocksim.cli.main import main
from blocksim.engine import warnings_held
from blocksim.engine.warnings_held import NONFINITE, STIFF, HeldWarnings
from blocksim.errors import SimulationError
from blocksim.diagram.format import save_diagram


def decay(rate, **sim):
    """x' = -rate * x, x(0) = 1."""
    blocks = [block("k", "Gain", k=-rate), block("i", "Integrator", x0=1.0), block("y", "Output")]
    return diagram(blocks, [("i.y", "k.u"), ("k.y", "i.u"), ("i.y", "y.u")], **sim)


def fast_lag(**sim):
    """1 / (2 s + 1e9): stiff on dopri5; on euler with a step of 1e-3 it blows up to inf
    (the logged signal first, then the state)."""
    blocks = [block("c", "Constant", value=1.0),
              block("tf", "TransferFunction", num=1.0, den=[2.0, 1e9]), block("y", "Output")]
    return diagram(blocks, [("c.y", "tf.u"), ("tf.y", "y.u")], **sim)


def cli(tmp_path, capsys, d, *args):
    path = tmp_path / "d.json"
    save_diagram(d, path)
    code = main(["run", str(path), "-q", "--out", str(tmp_path / "r.csv"), *args])
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("d, args, said", [
    (decay(1e6, stop=10.0), (), "the system is stiff"),
    (fast_lag(stop=0.1), ("--solver", "dop853"), "the system is stiff"),
    (fast_lag(stop=0.1), ("--solver", "euler", "--step", "1e-3"), "infinite or NaN"),
])
def test_a_failed_run_prints_one_line(tmp_path, capsys, d, args, said):
    code, err = cli(tmp_path, capsys, d, *args)
    assert code == 1 and len(err) == 1, err
    assert "simulation failed" in err[0] and said in err[0] and "warning" not in err[0]
    assert (tmp_path / "r.csv").exists()  # the partial results are still written


def test_the_failed_runs_results_keep_the_warning():
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(fast_lag(stop=0.1), solver="euler", step=1e-3)
    (warning,) = info.value.results.warnings
    assert "block 'y' logs +inf" in warning and "'tf'" in warning
    assert "infinite or NaN" in str(info.value)


def test_a_successful_run_prints_its_warning(tmp_path, capsys):
    code, err = cli(tmp_path, capsys, decay(1e4, stop=2.0))
    assert code == 0 and len(err) == 1
    assert err[0].startswith("blocksim: warning: ") and "looks stiff" in err[0]


def test_a_warning_held_for_a_second_of_a_long_run_is_logged_while_it_runs(monkeypatch,
                                                                           caplog):
    # With no hold at all, the warning is logged at the next step, before the failure.
    monkeypatch.setattr(warnings_held, "HOLD_SECONDS", 0.0)
    with caplog.at_level(logging.WARNING, logger="blocksim.engine"), \
            pytest.raises(SimulationError):
        blocksim.simulate(fast_lag(stop=0.1), solver="euler", step=1e-3)
    assert [r.getMessage() for r in caplog.records if "logs +inf" in r.getMessage()]


def test_a_failure_supersedes_only_the_warnings_it_repeats(caplog):
    held = HeldWarnings("d.json")
    held.add("the system looks stiff", STIFF)
    held.add("block 'y' logs NaN", NONFINITE)
    held.add("block 'y' logs NaN", NONFINITE)  # once
    assert held.messages == ["the system looks stiff", "block 'y' logs NaN"]
    with caplog.at_level(logging.WARNING, logger="blocksim.engine"):
        held.release_due()  # held for less than a second: not yet
        assert caplog.messages == [] and held.pending
        held.supersede(NONFINITE)
    assert caplog.messages == ["d.json: the system looks stiff"] and not held.pending


def test_a_failure_about_something_else_logs_the_held_warnings_first(caplog):
    held = HeldWarnings("d.json")
    held.add("the system looks stiff", STIFF)
    with caplog.at_level(logging.WARNING, logger="blocksim.engine"):
        held.supersede(None)
        held.release_all()  # nothing left: logged once
    assert caplog.messages == ["d.json: the system looks stiff"]
