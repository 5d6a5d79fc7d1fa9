"""Real Simulink models from public repositories (tests/simulink/corpus, MIT-licensed, saved by
R2019b and R2024b) import with nothing left as a placeholder and run to the independent
references of benchmarks/simulink_corpus_refs.py; the corpus benchmark's own entry point
checks one of them end to end through the command line."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from builders import benchmark_script

import blocksim

CORPUS = Path(__file__).parent / "corpus"


@pytest.fixture(scope="module")
def refs():
    with benchmark_script("simulink_corpus_refs.py", "simulink_corpus_refs") as module:
        yield module


def _import_and_run(name: str, **settings):
    result = blocksim.import_simulink(CORPUS / name)
    assert result.report.placeholders == [] and result.report.count("placeholder") == 0
    return result, blocksim.simulate(result.diagram, rtol=1e-10, atol=1e-12, **settings)


def _relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))


def test_r2024b_pid_loop_matches_its_reference(refs):
    """slpidlib PID Controller (parallel, N = 100) on 1/(s^2 + 1.2 s + 1): InstanceData,
    PortCounts, SolverName-only configSet, To Workspace blocks logged as their variables."""
    result, res = _import_and_run("pid_ai_second_order_demo.slx")
    assert result.report.release == "R2024b"
    expected = refs.pidwb_second_order(res.time)
    for variable in ("y", "u"):  # (the Step is named r too, so its To Workspace logs as r_2)
        assert _relative_error(res[variable], expected[variable]) <= 1e-6, variable


def test_r2019b_cascaded_drive_matches_its_reference(refs):
    """Nine transfer functions in two nested loops (Sum '-+|' with a trailing spacer)."""
    result, res = _import_and_run("DC_motor_drive_system.slx", solver="radau")
    assert result.report.release == "R2019b"
    assert result.diagram.simulation.stop == 0.8
    assert _relative_error(res["Scope"], refs.motor_drive(res.time)["speed"]) <= 1e-6


def test_corpus_benchmark_checks_a_model_through_the_cli(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "models").mkdir(parents=True)
    shutil.copy(CORPUS / "pid_ai_second_order_demo.slx",
                corpus / "models" / "pidwb__pid_ai_second_order_demo.slx")
    out = tmp_path / "outcomes.json"
    with benchmark_script("simulink_corpus.py", "simulink_corpus") as bench:
        assert bench.main([str(corpus), "--json", str(out), "--work", str(tmp_path / "w"),
                           "--markdown", str(tmp_path / "table.md")]) == 0
    (outcome,) = json.loads(out.read_text())
    assert outcome["imported"] and outcome["ran"] and outcome["placeholders"] == []
    assert outcome["error_tight"] <= 1e-6 and outcome["verdict"].startswith("matches")
    table = (tmp_path / "table.md").read_text()
    assert "1 of 1 (100 %)" in table
