"""The hostile-input suite: a generated corpus of bad diagrams, argument sets, expressions
and numerical traps, run against the documented contract of the CLI and the Python API.

corpus.py builds the cases (deterministic, seeded), harness.py runs one case in-process and
checks the contract, worker.py/supervisor.py run many cases under a memory limit and a per-case
time limit, test_corpus.py is the pytest face. `python -m hostile` (from tests/) prints the
summary table; see README in this folder's docstring of supervisor.py.
"""
