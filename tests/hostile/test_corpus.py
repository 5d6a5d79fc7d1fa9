"""The hostile corpus under pytest: one test per case (ids name category/case/command).

The cases selected for this session run up front in worker processes (hostile.supervisor:
a 3 GB address-space limit, a per-case alarm, a hard deadline that kills a stuck worker);
each test then asserts its own outcome, so a failure names its case and its symptoms.
Two workers by default where there are two cores (HOSTILE_JOBS sets it): the budgets
are CPU seconds, so a busy machine does not turn a slow case into a false hang. `pytest tests/hostile -k numerics` runs a part.
"""
from __future__ import annotations

import os

import pytest

from hostile import supervisor
from hostile.corpus import build_corpus

CASES = build_corpus()

# The supervisor bounds every case (budget + grace, then the worker is killed), so the
# suite-wide per-test timeout must not cut the session fixture that runs them all.
pytestmark = pytest.mark.timeout(0)


@pytest.fixture(scope="session")
def outcomes(request):
    selected = [item.callspec.params["case"] for item in request.session.items
                if getattr(item, "originalname", "") == "test_hostile_case"
                and hasattr(item, "callspec")]
    jobs = int(os.environ.get("HOSTILE_JOBS", str(min(2, os.cpu_count() or 1))))
    return supervisor.run(selected or CASES, jobs=jobs)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_case(case, outcomes):
    outcome = outcomes[case.id]
    if outcome.get("symptoms"):
        argv = " ".join(a if len(a) <= 120 else a[:100] + f"...({len(a)} chars)"
                        for a in case.argv) if case.argv is not None else f"API {case.api}"
        pytest.fail(f"{case.id}: {'; '.join(outcome['symptoms'])}\n"
                    f"  input: {argv}\n  exit: {outcome.get('exit')}  "
                    f"stderr: {outcome.get('stderr', '')[:300]}\n"
                    f"  files: cd tests && python -m hostile.corpus --show {case.id}\n"
                    f"  replay: cd tests && python -m hostile --only {case.id} -v",
                    pytrace=False)


def test_corpus_is_large_and_deterministic():
    again = build_corpus()
    assert len(CASES) >= 1000
    assert [c.id for c in again] == [c.id for c in CASES]
    assert [c.files for c in again[:200]] == [c.files for c in CASES[:200]]
    categories = {c.category for c in CASES}
    assert {"malformed", "paths", "cli-args", "cli-set", "outputs", "expressions", "numerics",
            "mutants", "handpicked", "huge", "render", "trust"} <= categories
