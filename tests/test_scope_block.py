"""The Scope block with several inputs: its ports (u, then u2, u3, ...), the logged columns
(the inputs one after the other, vectors element by element) against closed forms, on both
backends; and its parameters checked by the compiler."""
import numpy as np
import pytest

import blocksim
from blocksim.blocktypes.blockspec import ParamValues
from blocksim.errors import CompileError
from blocksim.diagram.model import Block, Diagram, PortRef, SimulationSettings, Wire

from both_backends import SIN, run_both


def scope_of_three(inputs: int = 3) -> Diagram:
    """sin t on u, (1, 2) on u2, t on u3."""
    blocks = [Block("s", "Sine", {"frequency": SIN}),
              Block("pair", "Constant", {"value": [1.0, 2.0]}), Block("t", "Clock"),
              Block("scope", "Scope", {"inputs": inputs, "units": "m"})]
    wires = [("s", "y", "u"), ("pair", "y", "u2"), ("t", "y", "u3")]
    return Diagram(blocks=blocks,
                   wires=[Wire(PortRef(a, p), PortRef("scope", q)) for a, p, q in wires],
                   simulation=SimulationSettings(stop=2.0, output_interval=0.05, rtol=1e-10,
                                                 atol=1e-12))


def test_inputs_are_logged_one_after_the_other():
    results = run_both(scope_of_three(), events_compiled=False)
    t = results.time
    logged = results["scope"]
    assert logged.shape == (len(t), 4)
    np.testing.assert_allclose(logged[:, 0], np.sin(t), atol=1e-9)
    np.testing.assert_array_equal(logged[:, 1:3], np.tile([1.0, 2.0], (len(t), 1)))
    np.testing.assert_allclose(logged[:, 3], t, rtol=0, atol=1e-15)
    assert [name for name, _ in results.columns()][1:] == [f"scope[{k}]" for k in range(4)]


def test_ports_follow_the_inputs_parameter():
    scope = blocksim.blocktypes.registry.get("Scope")()

    assert [p.name for p in scope.input_ports(ParamValues({"inputs": 1, "units": ""}))] == ["u"]
    assert [p.name for p in scope.input_ports(ParamValues({"inputs": 3, "units": ""}))] == [
        "u", "u2", "u3"]
    missing = scope_of_three()
    missing.wires = [w for w in missing.wires if w.dst.port != "u3"]
    with pytest.raises(CompileError, match="block 'scope' port 'u3'"):
        blocksim.compile(missing)
    with pytest.raises(CompileError, match="inputs"):
        blocksim.compile(scope_of_three(inputs=0))
    # A Scope as older files have it (no parameters): one input u, logged as a 1-D signal.
    plain = Diagram(blocks=[Block("s", "Sine", {"frequency": SIN}), Block("scope", "Scope")],
                    wires=[Wire(PortRef("s", "y"), PortRef("scope", "u"))],
                    simulation=SimulationSettings(stop=1.0, output_interval=0.1, rtol=1e-10,
                                                  atol=1e-12))
    results = blocksim.simulate(plain)
    assert results["scope"].ndim == 1
    np.testing.assert_allclose(results["scope"], np.sin(results.time), atol=1e-9)
