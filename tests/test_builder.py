"""The Python builder (blocksim.DiagramBuilder): diagrams built in code run as files do, save
to files that the CLI runs with identical results, and mistakes fail at the call that made
them, naming the block, the port and the close names."""
import csv
import inspect
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
import references as ref
from blocksim.api.builder import BuildError, PortNameError
from blocksim.cli.main import main
from blocksim.errors import CompileError, DiagramFileError
from blocksim.diagram.format import load_diagram

ROOT = Path(__file__).resolve().parents[1]


def ball(**settings) -> blocksim.DiagramBuilder:
    """C21 ball with beta = 0, as diagrams/python/bouncing_ball.py builds it."""
    d = blocksim.DiagramBuilder(**{"stop": 12, "rtol": 1e-10, "atol": 1e-10,
                                   "output_interval": 0.01, **settings},
                                parameters={"x0": 10.0, "v0": 0.0, "g": 9.81, "mu": 0.9})
    gravity = d.add("Constant", id="gravity", value="-g")
    velocity = d.add("ResetIntegrator", id="velocity", initial="v0", edge="falling")
    restitution = d.add("Gain", id="restitution", k="-mu")
    position = d.add("Integrator", id="position", x0="x0", lower=0)
    gravity.y >> velocity.u
    position.sat >> velocity.reset
    velocity.state >> restitution.u >> velocity.x0
    velocity.y >> position.u
    position.y >> d.add("Scope", id="x").u
    velocity.y >> d.add("Scope", id="v").u
    return d


def bounce_times(results) -> np.ndarray:
    return np.array([e.time for e in results.events_of("reset")])


def test_built_ball_bounces_at_the_closed_form_times():
    times = bounce_times(ball().simulate())
    assert len(times) == 6  # the seventh (13.47 s) is after the stop time
    assert np.max(np.abs(times - ref.ball_bounce_times_no_air(6))) < 1e-8


def test_script_prints_the_first_five_bounce_times():
    done = subprocess.run([sys.executable, str(ROOT / "diagrams" / "python" / "bouncing_ball.py")],
                          capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert len(lines) == 5
    printed = np.array([float(line) for line in lines])
    assert np.max(np.abs(printed - ref.ball_bounce_times_no_air(5))) < 1e-8
    code = (ROOT / "diagrams" / "python" / "bouncing_ball.py").read_text()
    body = code.split("import blocksim\n", 1)[1]
    assert len([line for line in body.splitlines() if line.strip()]) <= 17  # "about 15"


def read_csv(path: Path) -> dict[str, np.ndarray]:
    rows = list(csv.reader(path.open()))
    data = np.array(rows[1:], dtype=float)
    return {name: data[:, i] for i, name in enumerate(rows[0])}


def test_saved_file_runs_from_the_cli_with_identical_results(tmp_path):
    d = ball()
    path = tmp_path / "ball.json"
    d.save(path)
    in_python = d.simulate()
    out, events = tmp_path / "out.csv", tmp_path / "events.csv"
    assert main(["run", str(path), "--out", str(out), "--events", str(events), "-q"]) == 0
    table = read_csv(out)
    assert np.array_equal(table["time"], in_python.time)  # %.17g round-trips exactly
    assert np.array_equal(table["x"], in_python["x"])
    assert np.array_equal(table["v"], in_python["v"])
    logged = [(float(t), b, k) for t, b, k in list(csv.reader(events.open()))[1:]]
    assert logged == [(e.time, e.block, e.kind) for e in in_python.events]


def test_save_then_load_gives_the_same_diagram(tmp_path):
    d = ball()
    d.description = "ball"
    d.save(tmp_path / "ball.json")
    assert all({"x", "y"} <= set(b.layout) for b in d.model.blocks)  # laid out for the editor
    again = blocksim.DiagramBuilder.load(tmp_path / "ball.json")
    assert again.to_dict() == d.to_dict()
    assert again.description == "ball" and again.simulation.stop == 12
    assert again["velocity"].params == {"initial": "v0", "edge": "falling"}
    assert again["velocity"].x0.source == again["restitution"].y


def test_ids_are_generated_from_the_type_name():
    d = blocksim.DiagramBuilder()
    ids = [d.add("Gain").id, d.add("Gain").id, d.add("Sum", id="gain3").id, d.add("Gain").id]
    assert ids == ["gain1", "gain2", "gain3", "gain4"]
    assert [h.id for h in d] == ids and len(d) == 4 and "gain3" in d


def test_ports_follow_the_parameters_and_complete():
    d = blocksim.DiagramBuilder()
    total = d.add("Sum", id="total", signs="+-+")
    assert [p.name for p in total.inputs] == ["u1", "u2", "u3"]
    assert {"u1", "u2", "u3", "y"} <= set(dir(total))
    assert isinstance(total.u3, blocksim.InPort) and isinstance(total.y, blocksim.OutPort)
    assert "Gain" in dir(d.new) and "Sum" in dir(d.new)
    signature = inspect.signature(d.new.Saturation)
    assert {"id", "lower", "upper"} <= set(signature.parameters)
    assert signature.parameters["id"].default is None
    assert {"stop_time", "params", "backend"} <= set(inspect.signature(d.simulate).parameters)
    gain = d.new.Gain(k=3, id="g")
    assert gain.type == "Gain" and gain.params == {"k": 3}
    assert total.set(signs="++").port_names() == (("u1", "u2"), ("y",))
    with pytest.raises(PortNameError, match="has no port 'u3'"):
        total.u3


def test_mistakes_fail_at_the_call_naming_block_port_and_close_names():
    d = blocksim.DiagramBuilder()
    g = d.add("Gain", id="g", k=2)
    s = d.add("Scope", id="s")
    with pytest.raises(BuildError, match=r"unknown block type 'Gian' \(did you mean 'Gain'\?\)"):
        d.add("Gian")
    with pytest.raises(BuildError, match=r"block 'g2': Gain has no parameter 'kk' "
                                         r"\(did you mean 'k'\?\) \(parameters: k\)"):
        d.add("Gain", id="g2", kk=1)
    with pytest.raises(PortNameError, match=r"block 'g' port 'yy': Gain has no port 'yy' "
                                            r"\(did you mean 'y'\?\) \(inputs: u; outputs: y\)"):
        g.yy
    assert not hasattr(g, "yy")  # an AttributeError too: introspection keeps working
    g.y >> s.u
    with pytest.raises(BuildError, match=r"block 's' port 'u': input already wired from g\.y"):
        d.add("Constant", id="c").y >> s.u
    with pytest.raises(BuildError, match=r"s\.u is an input: a wire goes from an output"):
        d.connect(s.u, g.u)
    with pytest.raises(BuildError, match=r"s\.u is an input: a wire goes from an output to "
                                         r"an input \(source\.y >> s\.u\)"):
        s.u >> g.u
    with pytest.raises(BuildError, match="block 'g': there is already a block of this id"):
        d.add("Gain", id="g")
    with pytest.raises(BuildError, match="'2x' is not a valid block id"):
        d.add("Gain", id="2x")
    with pytest.raises(BuildError, match=r"parameter 'k' = nan"):
        g.set(k=float("nan"))
    with pytest.raises(BuildError, match="choose one of 'rising'"):
        d.add("ResetIntegrator", edge="up")
    with pytest.raises(BuildError, match=r"unknown simulation setting 'stpo' \(did you mean"):
        d.set_simulation(stpo=3)
    with pytest.raises(BuildError, match=r"a Demux block has 2 outputs \(y1, y2\): name"):
        d.add("Demux", id="dm", outputs=2) >> d.add("Scope")
    assert [b.id for b in d.model.blocks] == ["g", "s", "c", "dm", "scope1"]
    assert len(d.model.wires) == 1  # nothing half-done by the failed calls


def test_validate_gives_the_messages_a_file_gets(tmp_path):
    d = blocksim.DiagramBuilder()
    g = d.add("Gain", id="g", k="2 * missing")
    d.add("Constant", id="c").y >> g.u
    g.y >> d.add("Scope", id="s").u
    d.save(tmp_path / "bad.json")
    with pytest.raises(CompileError) as from_file:
        blocksim.compile(load_diagram(tmp_path / "bad.json"))
    with pytest.raises(CompileError) as built:
        d.validate()
    assert built.value.detail == from_file.value.detail and built.value.block == "g"
    assert "missing" in built.value.detail
    d.parameters["1bad"] = 1
    with pytest.raises(DiagramFileError, match="parameters: '1bad' is not a valid name"):
        d.validate()


def test_fan_out_chains_and_subsystems_with_parameters():
    """A first-order lag x' = (u - x) / tau in a subsystem with its own parameter tau, fed
    by a unit step at t = 1: x = 1 - exp(-(t - 1) / tau) after the step."""
    d = blocksim.DiagramBuilder(stop=3, rtol=1e-10, atol=1e-12, output_interval=0.5)
    lag = d.subsystem("lag", parameters={"tau": 0.5})
    inner = lag.inner
    u = inner.add("Inport", id="u")
    diff = inner.add("Sum", id="diff", signs="+-")
    state = inner.add("Integrator", id="state")
    u.y >> diff.u1
    diff >> inner.add("Gain", id="rate", k="1 / tau") >> state
    state.y >> (diff.u2, inner.add("Outport", id="x").u)
    assert lag.port_names() == (("u",), ("x",))
    d.add("Step", id="step", time=1.0) >> lag.u
    lag.x >> d.add("Output", id="x").u
    with pytest.raises(BuildError, match="another diagram level"):
        d["step"].y >> inner["diff"].u1
    with pytest.raises(BuildError, match=r"no block 'stat' \(did you mean 'state'\?\) in "
                                         r"subsystem 'lag'"):
        inner["stat"]
    results = d.simulate()
    t = results.time
    assert [e.time for e in results.events_of("step")] == [1.0]
    expected = np.where(t < 1, 0.0, 1 - np.exp(-(t - 1) / 0.5))
    assert np.max(np.abs(results["x"] - expected)) < 1e-8
    assert math.isclose(results["x"][-1], 1 - math.exp(-4), rel_tol=1e-9)


def test_a_diagram_shows_a_text_summary_without_qt(monkeypatch):
    d = ball()
    text = d.summary()
    assert "velocity: ResetIntegrator(initial='v0', edge='falling')" in text
    assert "restitution.y -> velocity.x0" in text and "mu = 0.9" in text
    monkeypatch.setitem(sys.modules, "blocksim.gui.canvas.render", None)  # as if PySide6 were absent
    assert d._repr_svg_() is None  # Jupyter then shows _repr_pretty_, the summary

    class Printer:
        def text(self, value):
            self.value = value
    printer = Printer()
    d._repr_pretty_(printer, False)
    assert printer.value == text


def test_building_and_saving_import_no_qt(tmp_path):
    code = ("import sys, blocksim; d = blocksim.DiagramBuilder(); d.add('Gain'); d.summary(); "
            "print(any(m.startswith(('PySide6', 'blocksim.gui')) for m in sys.modules)); "
            f"d.save({str(tmp_path / 'g.json')!r}); "
            "print(any(m.startswith('PySide6') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.stdout.split() == ["False", "False"], done.stderr
    assert "x" in load_diagram(tmp_path / "g.json").blocks[0].layout  # laid out without Qt
