"""Hostile or unusual Simulink files: one clear line, exit 2, nothing run; placeholders
that `validate` names; the report; MATLAB expressions; parameter files."""
from __future__ import annotations

import io
import struct
import zipfile

import numpy as np
import pytest
import scipy.io

import blocksim
from blocksim.cli.main import main
from blocksim.simulink.mexpr import Untranslatable, translate
from slx_fixtures import B, L, Model, mdl_text, slx_bytes


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, raw in members.items():
            archive.writestr(name, raw)
    return buf.getvalue()


def _declare_size(raw: bytes, member: str, size: int) -> bytes:
    data, name = bytearray(raw), member.encode()
    for sig, off, field_ in ((b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)):
        at = data.find(sig)
        while data[at + off:at + off + len(name)] != name:
            at = data.find(sig, at + 4)
        struct.pack_into("<L", data, at + field_, size)
    return bytes(data)


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


HOSTILE = {
    "bomb": (lambda: _zip({"simulink/blockdiagram.xml": b" " * (20 * 2**20)}), "zip bomb"),
    "declared-1GB": (lambda: _declare_size(_zip({"simulink/blockdiagram.xml": b"<a/>"}),
                                           "simulink/blockdiagram.xml", 2**30), "uncompressed"),
    "lying-header": (lambda: _declare_size(_zip({"simulink/blockdiagram.xml": b"<a/>" + b" " * (70 * 2**20)}),
                                           "simulink/blockdiagram.xml", 100), "cannot be read"),
    "dotdot": (lambda: _zip({"../../evil.xml": b"<a/>"}), "outside"),
    "malformed": (lambda: _zip({"simulink/blockdiagram.xml": b"<ModelInformation><Model>"}),
                  "not well-formed"),
    "entities": (lambda: _zip({"simulink/blockdiagram.xml": b'<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>'}),
                 "DTD"),
    "not-a-zip": (lambda: b"hello", "not a zip"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_slx_is_one_line_exit_2(tmp_path, capsys, case):
    make, words = HOSTILE[case]
    model = tmp_path / "m.slx"
    model.write_bytes(make())
    code, out, err = _cli(capsys, "import", str(model), "--out", str(tmp_path / "d.json"))
    assert code == 2
    assert err.count("\n") == 1 and "m.slx" in err and words in err, err
    assert not (tmp_path / "d.json").exists()
    assert not (tmp_path.parent / "evil.xml").exists()


def test_truncated_mdl_names_the_section(tmp_path, capsys):
    model = tmp_path / "m.mdl"
    model.write_text('Model {\n  Name "m"\n  System {\n    Block {\n')
    code, _, err = _cli(capsys, "import", str(model), "--out", str(tmp_path / "d.json"))
    assert code == 2 and "not closed" in err and err.count("\n") == 1


def chart_model() -> Model:
    chart = B("SubSystem", "Controller", 2, {"SFBlockType": "MATLAB Function", "Ports": "[1, 1]"},
              (100, 40, 160, 80),
              system=Model([B("Inport", "u", 21, {"Port": "1"}), B("Outport", "y", 22, {"Port": "1"})],
                           []))
    return Model(
        blocks=[B("Step", "Step", 1, {}, (30, 40, 60, 70)), chart,
                B("Gain", "Gain", 3, {"Gain": "gains.K"}, (200, 40, 230, 70)),
                B("Scope", "Scope", 4, {}, (260, 40, 290, 70))],
        lines=[L(1, "out:1", (2, "in:1")), L(2, "out:1", (3, "in:1")), L(3, "out:1", (4, "in:1"))],
        config={"StopTime": "1"},
        callbacks={"InitFcn": "system('rm -rf ~'); eval('x=1'); k = 3"})


def test_placeholder_keeps_ports_and_validate_names_it(tmp_path, capsys):
    model = tmp_path / "chart.slx"
    model.write_bytes(slx_bytes(chart_model()))
    out = tmp_path / "chart.json"
    report = tmp_path / "chart.md"
    code, printed, err = _cli(capsys, "import", str(model), "--out", str(out), "--report", str(report))
    assert code == 0
    assert "placeholder: Controller [SubSystem]: a MATLAB Function block" in printed
    assert "set parameter Gain_Gain" in printed
    text = report.read_text()
    assert "## Placeholders to fill in" in text and "system('rm -rf ~')" in text
    code, _, err = _cli(capsys, "validate", str(out))
    assert code == 2 and "parameter 'Gain_Gain': expression is empty: give it a value" in err
    code, _, err = _cli(capsys, "validate", str(out), "--set", "Gain_Gain=2")
    assert code == 2 and "Controller/placeholder" in err and "MATLAB Function" in err
    diagram = blocksim.load(out)
    ctrl = diagram.block("Controller")
    assert {w.dst.port for w in diagram.wires if w.dst.block == "Controller"} == {"u"}
    assert {(b.id, b.type) for b in ctrl.subsystem.blocks} == {
        ("u", "Inport"), ("placeholder", "Placeholder"), ("y", "Outport")}  # its own names
    assert diagram.parameters["k"] == 3 and diagram.parameters["Gain_Gain"] == ""
    assert not (tmp_path / "x").exists()


def test_mat_and_set_give_values(tmp_path):
    scipy.io.savemat(tmp_path / "p.mat", {"K": np.array([[2.5]]), "v": np.arange(3.0),
                                          "name": "text"})
    model = Model([B("Constant", "C", 1, {"Value": "K*v(2)+w"}, (0, 0, 30, 30)),
                   B("Outport", "y", 2, {"Port": "1"})], [L(1, "out:1", (2, "in:1"))],
                  config={"StopTime": "1"})
    path = tmp_path / "c.mdl"
    path.write_text(mdl_text(model))
    result = blocksim.import_simulink(path, params=[tmp_path / "p.mat"], overrides={"w": "1/4"})
    assert result.diagram.parameters["K"] == 2.5 and result.diagram.parameters["w"] == 0.25
    assert any("'name'" in line for line in result.report.skipped_code)
    res = blocksim.simulate(result.diagram)
    assert res["y"][-1] == pytest.approx(2.5 * 1 + 0.25)


@pytest.mark.parametrize("source, expected", [
    ("[1 -2]", "[1, -2]"), ("[1 - 2]", "1 - 2"), ("K1*2", "K1 * 2"), ("-2^2", "-(2 ** 2)"),
    ("[1 2; 3 4]", "[[1, 2], [3, 4]]"), ("[0:0.5:1]", "[0, 0.5, 1]"), ("a.^2 ./ b", "(a ** 2) / b"),
    ("x ~= 0 && y", "(x != 0) and y"), ("[1;2;3]'", "[1, 2, 3]"), ("zeros(1,3)", "zeros(3)"),
    ("u(2)", "u[1]"), ("1e-3", "0.001"), ("2*pi", "2 * pi"),
])
def test_matlab_expressions_translate(source, expected):
    assert translate(source).text == expected


@pytest.mark.parametrize("source", ["system('rm -rf ~')", "a.b", "{1, 2}", "x(k)", "A*B'\\c",
                                    "eval('1')", "[1 2]*[3; 4]"])
def test_matlab_expressions_refused(source):
    with pytest.raises(Untranslatable):
        translate(source)


@pytest.mark.parametrize("form", ["slx", "mdl"])
def test_damaged_models_fail_cleanly_or_import_valid_diagrams(tmp_path, form):
    """Random damage (bytes cut, braces and quotes inserted, bytes flipped) in the XML or
    the text: a BlocksimError or a diagram that saves and loads back, never a traceback."""
    import random

    from blocksim.diagram.format import load_diagram, save_diagram
    from test_import_runs import tf_subsystem_model
    from slx_fixtures import xml_parts

    rng = random.Random(7)
    clean = (mdl_text(tf_subsystem_model()).encode() if form == "mdl"
             else xml_parts(tf_subsystem_model(), True)["simulink/systems/system_2.xml"].encode())
    outcomes = {"error": 0, "imported": 0}
    for trial in range(60):
        data = bytearray(clean)
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(len(data))
            kind = rng.random()
            if kind < 0.35:
                del data[i:i + rng.randint(1, 60)]
            elif kind < 0.7:
                data[i:i] = rng.choice([b"{", b"}", b'"', b"[", b"]", b"\n", b"<", b">", b"&",
                                        b"\\", b"#", b"Block {\n", b"1e999"])
            else:
                data[i] = rng.randrange(256)
        path = tmp_path / f"m{trial}.{form}"
        if form == "mdl":
            path.write_bytes(bytes(data))
        else:
            parts = {k: v.encode() for k, v in xml_parts(tf_subsystem_model(), True).items()}
            parts["simulink/systems/system_2.xml"] = bytes(data)
            path.write_bytes(_zip(parts))
        try:
            result = blocksim.import_simulink(path)
        except blocksim.BlocksimError as exc:
            assert "\n" not in str(exc) and str(path) in str(exc)
            outcomes["error"] += 1
            continue
        save_diagram(result.diagram, tmp_path / "d.json")
        load_diagram(tmp_path / "d.json")
        outcomes["imported"] += 1
    assert outcomes["error"] and outcomes["imported"]
