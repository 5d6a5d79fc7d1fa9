"""Physical networks in the rest of blocksim: subsystems with physical ports, new parameter
values without a compile, sweeps, components written in Python, both ways to declare one."""
import textwrap

import numpy as np
import pytest

import blocksim
from blocksim.api.builder import DiagramBuilder
from blocksim.errors import CompileError

RC = 1000.0 * 1e-6  # R*C of the circuits below


def _rc_in_subsystem() -> DiagramBuilder:
    """A constant source charging C through R, both inside a subsystem whose two
    ConnectionPorts are its physical ports."""
    d = DiagramBuilder(stop=5e-3, rtol=1e-10, atol=1e-12, output_interval=1e-4,
                       parameters={"R": 1000.0})
    sub = d.add("Subsystem", id="rc")
    r = sub.inner.add("Resistor", id="R", R="R")
    c = sub.inner.add("Capacitor", id="C", C=1e-6)
    a, b = sub.inner.add("ConnectionPort", id="a"), sub.inner.add("ConnectionPort", id="b")
    vs = sub.inner.add("VoltageSensor", id="vC")
    sub.inner.connect(a.p, r.p)
    sub.inner.connect(r.n, c.p, vs.p)
    sub.inner.connect(c.n, b.p, vs.n)
    vs.v >> sub.inner.add("Outport", id="vC_out").u
    src, gnd = d.add("ConstantVoltage", id="V", V=1.0), d.add("Ground", id="gnd")
    d.connect(src.p, sub.a)
    d.connect(sub.b, gnd.p, src.n)
    sub.vC_out >> d.add("Output", id="vC").u
    return d


def test_a_subsystem_exposes_physical_ports():
    r = _rc_in_subsystem().simulate()
    assert np.max(np.abs(r["vC"] - (1 - np.exp(-r.time / RC)))) < 1e-9


def test_new_parameter_values_replay_the_network_without_a_compile(tmp_path):
    d = _rc_in_subsystem()
    d.save(tmp_path / "rc.json")
    model = blocksim.compile(blocksim.load(tmp_path / "rc.json"))
    faster = blocksim.simulate(model.with_params({"R": 500.0}))
    fresh = blocksim.simulate(blocksim.compile(blocksim.load(tmp_path / "rc.json"), {"R": 500.0}))
    assert np.array_equal(faster["vC"], fresh["vC"])
    assert np.max(np.abs(faster["vC"] - (1 - np.exp(-faster.time / (RC / 2))))) < 1e-9


def test_a_sweep_over_a_component_parameter(tmp_path):
    d = _rc_in_subsystem()
    d.save(tmp_path / "rc.json")
    table = blocksim.sweep(str(tmp_path / "rc.json"), grid={"R": "500:1500:3"},
                           metrics=["at:vC:0.001"], workers=1)
    got = sorted((row["R"], row["at:vC:0.001"]) for row in table)
    assert len(got) == 3 and all(row["status"] == "finished" for row in table)
    for resistance, value in got:
        assert value == pytest.approx(1 - np.exp(-1e-3 / (resistance * 1e-6)), abs=1e-9)


@pytest.fixture
def leaky_registered():
    """The test's user component leaves the registry as it was (other tests list it)."""
    yield
    from blocksim.blocktypes import registry
    if registry.get("LeakyCapacitor") is not None:
        registry.unregister("LeakyCapacitor")


def test_a_component_written_in_python_from_a_trusted_file(tmp_path, leaky_registered):
    (tmp_path / "my_components.py").write_text(textwrap.dedent('''
        from blocksim.blocktypes.blockspec import Param
        from blocksim.physical.declare import Component, Connector, Variable

        class LeakyCapacitor(Component):
            """A capacitor with a parallel leakage resistance."""
            name = "LeakyCapacitor"
            category = "Electrical"
            params = (Param("C", "scalar", 1e-6, unit="F"), Param("Rp", "scalar", 1e3, unit="Ohm"))
            connectors = (Connector("p", "electrical"), Connector("n", "electrical"))
            variables = (Variable("v", "V", start=0.0, prefer=True), Variable("i", "A"))
            equations = ("v = p.v - n.v", "0 = p.i + n.i", "i = p.i", "i = C*der(v) + v/Rp")

        BLOCK_TYPES = (LeakyCapacitor,)
    '''))
    d = DiagramBuilder(stop=5e-3, rtol=1e-10, atol=1e-12, output_interval=1e-4)
    d.model.python.append("my_components.py")
    d.save(tmp_path / "leaky.json")
    diagram = blocksim.load(tmp_path / "leaky.json", trust=True)
    d = DiagramBuilder.load(tmp_path / "leaky.json", trust=True) if hasattr(
        DiagramBuilder, "load") else None
    src, r = d.add("ConstantVoltage", id="V", V=1.0), d.add("Resistor", id="R", R=1000.0)
    cap, gnd = d.add("LeakyCapacitor", id="C"), d.add("Ground", id="g")
    vs = d.add("VoltageSensor", id="vs")
    d.connect(src.p, r.p)
    d.connect(r.n, cap.p, vs.p)
    d.connect(cap.n, gnd.p, src.n, vs.n)
    vs.v >> d.add("Output", id="vC").u
    res = d.simulate()
    tau = RC / 2  # the Thevenin source seen by C: 1000 || 1000 ohm
    assert np.max(np.abs(res["vC"] - 0.5 * (1 - np.exp(-res.time / tau)))) < 1e-9
    assert diagram is not None


def test_a_component_declared_in_the_file_runs_no_code_and_names_bad_equations(tmp_path):
    d = DiagramBuilder(stop=1)
    with pytest.raises(CompileError, match="block 'b': Bad equations: only numbers are allowed"):
        d.component({"name": "Bad", "connectors": [{"name": "p", "domain": "electrical"}],
                     "equations": ["p.i = __import__('os').system('echo hi')"]})
        d.add("Bad", id="b")
        d.add("Ground", id="g")
        d.connect(d["b"].p, d["g"].p)
        d.compile()
