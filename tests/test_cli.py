"""The `blocksim` command as a user meets it: exit codes, one-line errors, CSV outputs."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from blocksim.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
LAG = {
    "format": "blocksim", "version": 1, "parameters": {"tau": 0.5},
    "simulation": {"stop": 2.0, "output_interval": 0.5},
    "blocks": [{"id": "src", "type": "Step", "params": {"time": 1.0}},
               {"id": "sum", "type": "Sum", "params": {"signs": "+-"}},
               {"id": "k", "type": "Gain", "params": {"k": "1/tau"}},
               {"id": "int", "type": "Integrator"}, {"id": "y", "type": "Output"}],
    "wires": [{"src": "src.y", "dst": "sum.u1"}, {"src": "int.y", "dst": "sum.u2"},
              {"src": "sum.y", "dst": "k.u"}, {"src": "k.y", "dst": "int.u"},
              {"src": "int.y", "dst": "y.u"}],
}


def write(tmp_path, data, name="d.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_run_writes_csv_with_events_twice(tmp_path, capsys):
    path = write(tmp_path, LAG)
    out_csv, ev_csv = tmp_path / "r.csv", tmp_path / "e.csv"
    code, _, err = run(["run", path, "--out", out_csv, "--events", ev_csv], capsys)
    assert code == 0, err
    rows = list(csv.reader(out_csv.open()))
    assert rows[0] == ["time", "y"]
    times = [float(r[0]) for r in rows[1:]]
    assert times == [0.0, 0.5, 1.0, 1.0, 1.5, 2.0]
    assert list(csv.reader(ev_csv.open())) == [["time", "block", "kind"], ["1.0", "src", "step"]]


def test_set_overrides_a_parameter(tmp_path, capsys):
    path = write(tmp_path, LAG)
    out_csv = tmp_path / "r.csv"
    assert run(["run", path, "--set", "tau=1e9", "--out", out_csv], capsys)[0] == 0
    last = list(csv.reader(out_csv.open()))[-1]
    assert float(last[1]) == pytest.approx(1e-9, rel=1e-6)


def test_npz_output(tmp_path, capsys):
    import numpy as np
    path = write(tmp_path, LAG)
    assert run(["run", path, "--out", tmp_path / "r.npz"], capsys)[0] == 0
    data = np.load(tmp_path / "r.npz")
    assert list(data["time"]) == [0.0, 0.5, 1.0, 1.0, 1.5, 2.0]
    assert list(data["event_kind"]) == ["step"]


@pytest.mark.parametrize("mutate, expected", [
    (lambda p: p.with_name("missing.json"), "missing.json"),
    (lambda p: write(p.parent, json.dumps(LAG)[:-40], "trunc.json"), "trunc.json"),
    (lambda p: write(p.parent, {**LAG, "blocks": LAG["blocks"][:3] + [
        {"id": "int", "type": "Integrater"}] + LAG["blocks"][4:]}, "t.json"), "block 'int'"),
    (lambda p: write(p.parent, {**LAG, "wires": LAG["wires"][:4] + [
        {"src": "int.y", "dst": "y.in"}]}, "w.json"), "block 'y' port 'in'"),
    (lambda p: write(p.parent, {**LAG, "wires": LAG["wires"][1:]}, "m.json"), "block 'sum' port 'u1'"),
    (lambda p: write(p.parent, {**LAG, "parameters": {"tau": "__import__('os').getcwd()"}},
                     "x.json"), "x.json"),
    (lambda p: write(p.parent, {**LAG, "blocks": LAG["blocks"][:2] + [
        {"id": "k", "type": "Gain", "params": {"k": "().__class__.__bases__[0]"}}]
        + LAG["blocks"][3:]}, "code.json"), "block 'k'"),
])
def test_bad_input_is_exit_2_with_one_line_naming_file_and_block(tmp_path, capsys, mutate,
                                                                 expected):
    path = mutate(write(tmp_path, LAG))
    code, out, err = run(["run", path], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert path.name in lines[0] and expected in lines[0]


def test_failed_simulation_is_exit_1_and_keeps_partial_results(tmp_path, capsys):
    data = {"format": "blocksim", "version": 1,
            "simulation": {"stop": 3.0, "output_interval": 0.1},
            "blocks": [{"id": "zero", "type": "Constant", "params": {"value": 0}},
                       {"id": "up", "type": "Constant", "params": {"value": 1}},
                       {"id": "down", "type": "Constant", "params": {"value": -1}},
                       {"id": "neg", "type": "RelationalOperator"},
                       {"id": "sw", "type": "Switch", "params": {"criterion": "u2 != 0"}},
                       {"id": "i", "type": "Integrator", "params": {"x0": 1}},
                       {"id": "x", "type": "Output"}],
            "wires": [{"src": "i.y", "dst": "neg.u1"}, {"src": "zero.y", "dst": "neg.u2"},
                      {"src": "up.y", "dst": "sw.u1"}, {"src": "neg.y", "dst": "sw.u2"},
                      {"src": "down.y", "dst": "sw.u3"}, {"src": "sw.y", "dst": "i.u"},
                      {"src": "i.y", "dst": "x.u"}]}
    path = write(tmp_path, data)
    out_csv = tmp_path / "r.csv"
    code, _, err = run(["run", path, "--out", out_csv], capsys)
    assert code == 1 and "did not settle" in err and path.name in err
    rows = list(csv.reader(out_csv.open()))
    assert float(rows[-1][0]) == pytest.approx(1.0)


def test_validate_blocks_and_describe(tmp_path, capsys):
    code, out, _ = run(["validate", write(tmp_path, LAG)], capsys)
    assert code == 0 and "ok" in out
    code, out, _ = run(["blocks"], capsys)
    assert code == 0 and "Integrator" in out and "Continuous:" in out
    listed = [line.split(None, 1) for line in out.splitlines() if line.startswith("  ")]
    assert [text for _, text in listed if not text.endswith(".")] == []  # whole sentences
    code, out, _ = run(["describe", "Integrator"], capsys)
    assert code == 0 and "lower" in out and "Parameters:" in out
    code, _, err = run(["describe", "Nope"], capsys)
    assert code == 2 and "unknown block type 'Nope'" in err


def test_console_script_is_installed():
    done = subprocess.run([sys.executable, "-m", "blocksim.cli.main", "describe", "Gain"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and "Gain" in done.stdout
