"""A diagram parameter or an Expression input may shadow the built-in constants e and pi
inside that diagram (the diagram's value wins, also in subsystems that see it); `blocksim
validate` notes each shadowed constant once. inf stays reserved."""
import json
import math

import numpy as np
import pytest
from builders import DIAGRAMS, block, diagram

import blocksim
from blocksim.cli.main import main
from blocksim.errors import CompileError
from references import ball_bounce_times_no_air


def ball_with_restitution_e(tmp_path):
    """diagrams/bouncing_ball.json with its restitution coefficient named e (not mu)."""
    text = (DIAGRAMS / "bouncing_ball.json").read_text()
    data = json.loads(text)
    data["parameters"] = {("e" if k == "mu" else k): v for k, v in data["parameters"].items()}
    data["parameters"]["beta"] = 0.0
    text = json.dumps(data).replace('"-mu"', '"-e"')
    assert '"-e"' in text and "mu" not in json.loads(text)["parameters"]
    path = tmp_path / "ball_e.json"
    path.write_text(text)
    return path


def test_a_bouncing_ball_with_restitution_parameter_e_runs(tmp_path):
    path = ball_with_restitution_e(tmp_path)
    r = blocksim.simulate(blocksim.load(path))
    bounces = np.array([ev.time for ev in r.events_of("reset")])
    np.testing.assert_allclose(bounces[:100], ball_bounce_times_no_air(100), rtol=0, atol=1e-8)
    slower = blocksim.simulate(blocksim.load(path), params={"e": 0.5})  # --set e=0.5 too
    first = [ev.time for ev in slower.events_of("reset")][:2]
    t1 = math.sqrt(2 * 10.0 / 9.81)
    np.testing.assert_allclose(first, [t1, t1 + 2 * 0.5 * t1], rtol=0, atol=1e-8)


def test_validate_notes_the_shadowing_once(tmp_path, capsys):
    path = ball_with_restitution_e(tmp_path)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if "note:" in line]
    assert len(notes) == 1, out
    assert "'e' shadows the built-in constant e = 2.718281828459045" in notes[0]
    assert "diagram parameter" in notes[0]
    assert main(["validate", str(DIAGRAMS / "bouncing_ball.json")]) == 0
    assert "note:" not in capsys.readouterr().out  # no shadowing, no note


def test_expression_inputs_named_e_and_pi_shadow_the_constants(tmp_path, capsys):
    d = diagram([block("a", "Constant", value=3.0), block("b", "Constant", value=0.5),
                 block("f", "Expression", formula="e * 2 + pi", inputs="e, pi"),
                 block("g", "Expression", formula="e + pi"), block("y", "Output"),
                 block("z", "Output")],
                [("a.y", "f.e"), ("b.y", "f.pi"), ("f.y", "y.u"), ("a.y", "g.u"),
                 ("g.y", "z.u")], stop=1.0)
    r = blocksim.simulate(d)
    assert r["y"][-1] == 6.5  # the inputs
    assert r["z"][-1] == math.e + math.pi  # elsewhere the constants
    path = tmp_path / "expr.json"
    path.write_text(json.dumps({"format": "blocksim", "version": 1, "blocks": [
        block("a", "Constant", value=3.0), block("f", "Expression", formula="e", inputs="e"),
        block("k", "Expression", formula="e + 1", inputs="e"), block("y", "Output")],
        "wires": [{"src": "a.y", "dst": "f.e"}, {"src": "a.y", "dst": "k.e"},
                  {"src": "f.y", "dst": "y.u"}]}))
    assert main(["validate", str(path)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if "note:" in line]
    assert len(notes) == 1 and "input of Expression 'f'" in notes[0]
    assert "input of Expression 'k'" in notes[0]


def test_parameters_formulas_and_subsystems_see_the_shadowing_value():
    inner = {"parameters": {"k": "2 * e"},
             "blocks": [block("u", "Inport"), block("f", "Expression", formula="k * u + pi"),
                        block("y", "Outport")],
             "wires": [{"src": "u.y", "dst": "f.u"}, {"src": "f.y", "dst": "y.u"}]}
    d = diagram([block("c", "Constant", value="e"), {"id": "sub", "type": "Subsystem",
                                                      "diagram": inner},
                 block("z", "Output"), block("w", "Output")],
                [("c.y", "sub.u"), ("sub.y", "z.u"), ("c.y", "w.u")],
                parameters={"e": 0.25, "pi": "4 * e"}, stop=1.0)
    r = blocksim.simulate(d)
    assert r["w"][-1] == 0.25
    assert r["z"][-1] == 2 * 0.25 * 0.25 + 1.0


def test_inf_stays_reserved():
    d = diagram([block("c", "Constant"), block("y", "Output")], [("c.y", "y.u")],
                parameters={"inf": 3.0}, stop=1.0)
    with pytest.raises(CompileError, match="clashes with the constant inf"):
        blocksim.compile(d)
