"""The contract in real processes: what the in-process corpus cannot see.

Ctrl-C gives exit status 130 and one line; a sample of corpus cases gives the same exit
status and message as a separate `python -m blocksim` process as it does in the in-process
harness (so the corpus measures what users get); non-files as the diagram path neither hang
nor allocate in a real process under a memory limit.
"""
from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hostile import harness
from hostile.corpus import DIR, build_corpus, doc, blk, dumps, materialize, substitute

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("BLOCKSIM_BACKEND", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def _limit_memory() -> None:
    limit = 2 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _blocksim(*args: str, cwd: Path, timeout: float = 30.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "blocksim", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, preexec_fn=_limit_memory)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_interrupt_gives_130_and_one_line(tmp_path):
    # a long but legitimate run: a fast sine integrated to a tight tolerance for hours
    slow = doc([blk("s", "Sine", frequency=10), blk("i", "Integrator"), blk("y", "Output")],
               [("s.y", "i.u"), ("i.y", "y.u")], stop=1e4, rtol=1e-10, atol=1e-12,
               output_interval=0.1)
    diagram = tmp_path / "slow.json"
    diagram.write_bytes(dumps(slow))
    before = diagram.read_bytes()
    proc = subprocess.Popen([sys.executable, "-m", "blocksim", "run", str(diagram), "-q",
                             "--out", str(tmp_path / "r.csv")], cwd=tmp_path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    time.sleep(8.0)  # past the imports (Ctrl-C during `import numpy` is Python's business)
    assert proc.poll() is None, f"the slow run ended early: {proc.communicate()}"
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("Ctrl-C did not end the run within 15 s")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(_lines(err)) == 1, err
    assert diagram.read_bytes() == before
    assert (tmp_path / "r.csv").exists(), "the results so far are written (README)"


SAMPLE = ["malformed/src-missing-port/run", "cli-args/rtol=word", "cli-set/value-word",
          "outputs/without-quiet/ok", "numerics/formula-sqrt-minus-1/dopri5",
          "outputs/missing-folder/ok"]


@pytest.mark.parametrize("case_id", SAMPLE)
def test_real_process_agrees_with_the_harness(case_id, tmp_path):
    case = next(c for c in build_corpus() if c.id == case_id)
    real_dir, harness_dir = tmp_path / "real", tmp_path / "harness"
    for folder in (real_dir, harness_dir):
        folder.mkdir()
        materialize(case, folder)
    proc = _blocksim(*substitute(case.argv, str(real_dir)), cwd=real_dir)
    result = harness.run_cli(substitute(case.argv, str(harness_dir)), case.budget)
    if result["exit"] == "uncaught":  # a real process prints the traceback and exits 1
        assert proc.returncode == 1 and "Traceback" in proc.stderr, proc.stderr
        return
    assert proc.returncode == result["exit"], (proc.stderr, result)
    real = [_normal(line, real_dir) for line in _lines(proc.stderr)]
    emulated = [_normal(line, harness_dir) for line in _lines(result["stderr"])]
    assert real == emulated


def _normal(line: str, folder: Path) -> str:
    """A stderr line without the case folder and the wall time of the run."""
    return re.sub(r"\d+(\.\d+)? (s|ms|µs)\b", "# s", line.replace(str(folder), DIR))


@pytest.mark.parametrize("path, command", [("/dev/zero", "validate"), ("/dev/urandom", "run"),
                                           ("fifo", "run"), ("folder", "validate")])
def test_non_files_neither_hang_nor_allocate(path, command, tmp_path):
    if path == "fifo":
        os.mkfifo(tmp_path / "p.json")
        path = str(tmp_path / "p.json")
    elif path == "folder":
        path = str(tmp_path)
    t0 = time.monotonic()
    try:
        proc = _blocksim(command, path, cwd=tmp_path, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail(f"blocksim {command} {path} still running after 15 s")
    assert proc.returncode == 2, proc.stderr[-500:]
    assert len(_lines(proc.stderr)) == 1 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert time.monotonic() - t0 < 15


def test_no_payload_ever_ran(tmp_path):
    """Every code payload of the corpus, as one diagram file per payload through `validate`
    in one real process each would be slow; instead: all of them in one process, then look
    for the marker (the corpus checks it per case too)."""
    cases = [c for c in build_corpus() if c.category == "expressions" and "code-" in c.id
             and c.kind == "cli"][:60]
    script = ("import sys, json\nfrom blocksim.cli.main import main\n"
              "for argv in json.load(open(sys.argv[1])):\n"
              "    try:\n        main(argv)\n    except BaseException:\n        pass\n")
    argvs = []
    for n, case in enumerate(cases):
        folder = tmp_path / f"c{n}"
        folder.mkdir()
        materialize(case, folder)
        argvs.append(substitute(case.argv, str(folder)))
    (tmp_path / "argvs.json").write_text(json.dumps(argvs))
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "argvs.json")], cwd=tmp_path,
                   env=_env(), capture_output=True, timeout=300, stdin=subprocess.DEVNULL,
                   preexec_fn=_limit_memory)
    assert not list(tmp_path.rglob("PWNED"))


@pytest.mark.parametrize("exists", [False, True])
def test_a_path_that_is_not_utf8_is_named_in_one_line(exists, tmp_path):
    """A file name with bytes that are not UTF-8 (argv decodes them as surrogates): the error
    line must still print, in a C locale too."""
    name = b"d\xff\xfe.json"
    if exists:
        (tmp_path / os.fsdecode(name)).write_bytes(b"{")
    env = {**_env(), "LC_ALL": "C", "LANG": "C"}
    proc = subprocess.run([os.fsencode(sys.executable), b"-m", b"blocksim", b"validate", name],
                          cwd=tmp_path, env=env, capture_output=True, timeout=60,
                          stdin=subprocess.DEVNULL, preexec_fn=_limit_memory)
    err = proc.stderr.decode("utf-8", "backslashreplace")
    assert proc.returncode == 2, err
    assert len(_lines(err)) == 1 and "Traceback" not in err, err
