"""The README's commands work as a newcomer types them: its test command is what CI runs (in a
fresh virtual environment), and its Python API snippet runs outside a clone."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language: str, under: str) -> list[str]:
    """The ```language blocks of the README section whose heading is `under`."""
    start = README.index(f"\n## {under}\n")
    end = README.find("\n## ", start + 1)
    section = README[start:end if end > 0 else None]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def test_ci_runs_the_readmes_test_command_in_a_fresh_venv():
    ci = [line for line in (ROOT / ".ci/run").read_text().splitlines()
          if line and not line.startswith("#")]
    commands = blocks("sh", "Try it (fresh clone)")
    assert len(commands) == 2  # install and run the ball; run the tests
    test_command = commands[1].strip()
    assert ci[-1] == test_command
    assert ci[-2] == "python -m venv .venv-ci && . .venv-ci/bin/activate"
    assert "rm -rf .venv-ci" in ci  # fresh every time
    assert commands[0].splitlines()[0] == "python -m venv .venv && . .venv/bin/activate"
    ignored = (ROOT / ".gitignore").read_text().split()
    assert ".venv/" in ignored and ".venv-ci/" in ignored


def test_the_python_api_snippet_runs_outside_a_clone(tmp_path):
    snippet = blocks("python", "Python API")[0]
    assert 'blocksim.load("bouncing_ball")' in snippet
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {p.name for p in tmp_path.iterdir()} == {"ball.csv", "ball.npz", "events.csv"}
