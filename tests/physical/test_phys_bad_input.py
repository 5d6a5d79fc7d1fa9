"""Networks that cannot work are compile errors naming the components, through the API and
as exit 2 from `blocksim validate` and `run` (never a traceback, never a run). The same
diagrams are cases of the hostile corpus (tests/hostile/cases/physical.py), which runs
them under its contract (one line, naming the file, within a budget)."""
import json

import pytest

from blocksim.api.builder import BuildError, DiagramBuilder
from blocksim.cli.main import main
from blocksim.errors import CompileError
from hostile.cases.physical import _across_source, _rc, _two_pin
from hostile.cases.base import blk, doc


def compile_error(data: dict) -> str:
    d = DiagramBuilder.wrap(_load(data))
    with pytest.raises(CompileError) as info:
        d.compile()
    return str(info.value)


def _load(data: dict):
    from blocksim.diagram.format import diagram_from_dict

    return diagram_from_dict(data, source="d.json")


def cli(tmp_path, data: dict, capsys, command: str = "validate") -> tuple[int, str]:
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    args = [command, str(path)] + (["-q", "--out", str(tmp_path / "o.csv")]
                                   if command == "run" else [])
    code = main(args)
    err = capsys.readouterr().err
    return code, err


def test_an_unconnected_pin_is_named(tmp_path, capsys):
    blocks, wires = _rc()
    data = doc(blocks, [w for w in wires if w != ("C.n", "V.n")], stop=0.01)
    assert "block 'C' port 'n': physical port 'n' is not connected" in compile_error(data)
    for command in ("validate", "run"):
        code, err = cli(tmp_path, data, capsys, command)
        assert code == 2 and "d.json" in err and "'C'" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()  # nothing ran


def test_a_circuit_without_ground_names_its_components():
    blocks, wires = _rc(ground=False)
    message = compile_error(doc(blocks, wires, stop=0.01))
    assert "the circuit of C, R, V has no Ground" in message


def test_two_domains_cannot_be_joined(tmp_path, capsys):
    blocks, wires = _rc()
    data = doc(blocks + [blk("m", "Mass")], wires + [("m.flange_a", "C.p")], stop=0.01)
    message = compile_error(data)
    assert "translational port 'm.flange_a'" in message and "electrical port 'C.p'" in message
    assert cli(tmp_path, data, capsys)[0] == 2


@pytest.mark.parametrize("extra, wire, port", [
    (blk("y", "Output"), ("C.p", "y.u"), "C.p"),
    (blk("k", "Constant"), ("k.y", "R.p"), "R.p"),
], ids=["pin-to-input", "output-to-pin"])
def test_a_physical_port_is_not_a_signal_port(tmp_path, capsys, extra, wire, port):
    blocks, wires = _rc()
    data = doc(blocks + [extra], wires + [wire], stop=0.01)
    code, err = cli(tmp_path, data, capsys)
    assert code == 2 and port in err and "physical" in err
    with pytest.raises(BuildError):  # the builder refuses the connection outright
        d = DiagramBuilder()
        r, sink = d.add("Resistor", id="R"), d.add(extra["type"], id=extra["id"])
        if wire[0].startswith(extra["id"]):
            d.connect(sink.y, r.p)
        else:
            d.connect(r.p, sink.u)


def test_over_and_under_determined_networks_name_the_component():
    over = _across_source(blk("D", "Over"), [_two_pin("Over", ["v = 2*i", "i = 1", "x = 0",
                                                               "y = 0"])])
    message = compile_error(over)
    assert "block 'D'" in message and "over-determined" in message
    assert "the equations of D, V conflict ('v = 2*i'" in message
    under = _across_source(blk("D", "Under"), [_two_pin("Under", ["x = 0", "y = 0"])])
    message = compile_error(under)
    assert "under-determined: nothing determines D.i" in message and "components: D" in message


def test_a_redundant_equation_is_found():
    # x + y = v is an alias (x = v - y), after which 2x + 2y = 2v says 0 = 0
    data = _across_source(blk("D", "Twice"), [_two_pin("Twice", ["i = x", "x + y = v",
                                                                 "2*x + 2*y = 2*v"])])
    message = compile_error(data)
    assert "block 'D'" in message and "the equations of D conflict" in message
    assert "'2*x + 2*y = 2*v' has no unknown left" in message


def test_a_numerically_singular_network_names_the_component():
    # structurally fine (x and y in two equations each), but the matrix has rank 1
    data = _across_source(blk("D", "Rank1"), [_two_pin("Rank1", ["i = x", "x + 2*y = v",
                                                                 "2*x + 4*y = 3*v"])])
    message = compile_error(data)
    assert "the equations of D are singular" in message and "D.y" in message


def _voltage_loop():
    return doc([blk("V1", "ConstantVoltage", V=1.0), blk("V2", "ConstantVoltage", V=2.0),
                blk("g", "Ground")], [("V1.p", "V2.p"), ("V1.n", "V2.n"), ("V2.n", "g.p")],
               stop=0.01)


def _current_cut():
    return doc([blk("I1", "ConstantCurrent", I=1.0), blk("I2", "ConstantCurrent", I=2.0),
                blk("g", "Ground")], [("I1.n", "I2.p"), ("I1.p", "I2.n"), ("I2.n", "g.p")],
               stop=0.01)


@pytest.mark.parametrize("data", [_voltage_loop(), _current_cut()], ids=["loop", "cut"])
def test_a_structurally_singular_network_is_a_compile_error(tmp_path, capsys, data):
    assert "over-determined" in compile_error(data)
    code, err = cli(tmp_path, data, capsys, "run")
    assert code == 2 and "d.json" in err and "Traceback" not in err


@pytest.mark.parametrize("data, names", [(_voltage_loop(), "V1, V2"), (_current_cut(), "I1, I2")],
                         ids=["loop", "cut"])
def test_a_structurally_singular_network_names_every_component_involved(data, names):
    assert f"the equations of {names}" in compile_error(data)


def test_the_derivative_of_a_signal_is_refused_naming_the_file(tmp_path, capsys):
    data = doc([blk("s", "Sine"), blk("I", "SignalCurrent"), blk("L", "Inductor"),
                blk("g", "Ground")],
               [("s.y", "I.u"), ("I.p", "g.p"), ("I.n", "L.p"), ("L.n", "g.p")], stop=0.01)
    code, err = cli(tmp_path, data, capsys)
    assert code == 2 and "block 'I' port 'u'" in err and "derivative" in err
    assert "d.json" in err
