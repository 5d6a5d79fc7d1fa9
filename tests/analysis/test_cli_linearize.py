"""`blocksim linearize`: the printed model, --json, --mat, and one clear line with exit 2
for bad input, exit 1 with the residuals when no operating point is found."""
import json

import numpy as np
import pytest

from blocksim.cli.main import main
from builders import DIAGRAMS

MOTOR = str(DIAGRAMS / "dc_motor_pid.json")


def cli(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_matrices_with_names_poles_and_zeros(capsys):
    code, out, err = cli(["linearize", MOTOR, "--input", "pid.u", "--output", "w",
                          "--open", "pid.u", "--at", "trim"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == (f"{MOTOR} linearised at trim: continuous-time, 2 states, 1 inputs, "
                        f"1 outputs")
    assert "  current        -1000         -100" in out  # -R/L, -Ke/L
    assert "poles: -998.999, -1.1011" in out and "zeros: none" in out
    assert "note: loop opened at pid.u" in out


def test_json_has_everything(capsys):
    code, out, _ = cli(["linearize", DIAGRAMS / "pi_1khz.json", "--input", "r",
                        "--output", "y", "--at", "trim", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["dt"] == 0.001 and data["states"] == ["plant", "pi.d[1]"]
    assert np.array(data["A"]).shape == (2, 2) and len(data["poles"]) == 2
    assert all(abs(complex(*p)) < 1 for p in data["poles"])  # a stable discrete loop


def test_mat_file(tmp_path, capsys):
    scipy_io = pytest.importorskip("scipy.io")
    target = tmp_path / "motor.mat"
    code, out, err = cli(["linearize", MOTOR, "--input", "setpoint", "--output", "w",
                          "--at", "trim", "--mat", target], capsys)
    assert code == 0 and out == "" and "wrote" in err
    data = scipy_io.loadmat(target)
    assert data["A"].shape == (4, 4) and data["B"].shape == (4, 1)
    assert [str(n[0][0]) for n in data["StateName"]] == ["pid[0]", "pid[1]", "current", "speed"]
    code, _, err = cli(["linearize", MOTOR, "--input", "setpoint", "--output", "w",
                        "--mat", tmp_path / "missing" / "x.mat"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--mat" in err


@pytest.mark.parametrize("args, message", [
    (["--input", "nope", "--output", "w"], "unknown analysis point 'nope': no block 'nope'"),
    (["--input", "pid.x", "--output", "w"], "block 'pid' has no wired port 'x' (wired: e, u)"),
    (["--input", "pid", "--output", "w", "--at", "soon"], "--at expects initial, trim, "),
    (["--input", "pid", "--output", "w", "--delay-order", "-1"], "--delay-order must be"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    code, out, err = cli(["linearize", MOTOR, *args], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_several_sample_rates_are_refused(capsys):
    code, _, err = cli(["linearize", DIAGRAMS / "multi_clock.json", "--input", "wave",
                        "--output", "y"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "several sample rates (0.333333 s, 0.5 s): linearize supports one" in err


def test_no_operating_point_is_exit_1_with_the_residuals(tmp_path, capsys):
    # x' = -x^2 - 1 has no rest point
    path = tmp_path / "none.json"
    path.write_text(json.dumps({
        "format": "blocksim", "version": 1, "simulation": {"stop": 1.0},
        "blocks": [{"id": "c", "type": "Constant", "params": {"value": -1.0}},
                   {"id": "f", "type": "Expression", "params": {"inputs": "x, c",
                                                                 "formula": "-x**2 + c"}},
                   {"id": "x", "type": "Integrator", "params": {}},
                   {"id": "y", "type": "Output", "params": {}}],
        "wires": [{"src": "c.y", "dst": "f.c"}, {"src": "x.y", "dst": "f.x"},
                  {"src": "f.y", "dst": "x.u"}, {"src": "x.y", "dst": "y.u"}]}))
    code, out, err = cli(["linearize", path, "--input", "c", "--output", "y", "--at", "trim"],
                         capsys)
    assert code == 1 and out == ""
    first = err.splitlines()[0]
    assert first.startswith(f"blocksim: {path}: no operating point found: the condition "
                            f"'d x/dt' is off by")
    assert "conditions (residual):" in err and "<- does not hold" in err
    assert "Traceback" not in err


def test_at_a_time_and_at_the_steady_state(capsys):
    square = str(DIAGRAMS / "pid_trim_square.json")
    outs = []
    for at in ("steady", "trim", "15"):
        code, out, err = cli(["linearize", square, "--input", "r", "--output", "x",
                              "--at", at, "--json"], capsys)
        assert code == 0, err
        outs.append(json.loads(out))
    for data in outs[1:]:  # the run has settled by 15 s (to 1e-5): the same model
        np.testing.assert_allclose(data["A"], outs[0]["A"], rtol=1e-4, atol=1e-6)
    code, _, err = cli(["linearize", square, "--input", "r", "--output", "x", "--at",
                        "inf"], capsys)
    assert code == 2 and "--at: the time must be finite" in err


def test_all_states(capsys):
    code, out, _ = cli(["linearize", MOTOR, "--input", "pid.u", "--output", "w", "--open",
                        "pid.u", "--at", "trim", "--all-states", "--json"], capsys)
    assert code == 0 and json.loads(out)["states"] == ["pid[0]", "pid[1]", "current", "speed"]
