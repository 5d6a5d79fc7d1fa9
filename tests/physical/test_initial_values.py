"""Initial values: the chosen states take their start values; a `fixed` start must hold,
else a compile error says which variable determines it."""
import pytest

from blocksim.api.builder import DiagramBuilder
from blocksim.errors import CompileError


def _two_masses(fixed_first: bool, fixed_second: bool, s2: float = 0.6) -> DiagramBuilder:
    """Two masses joined by a Rod (one position between them), each declared here with a
    start position that may be fixed."""
    d = DiagramBuilder(stop=0.1)
    for name, fixed, start in (("M1", fixed_first, 0.0), ("M2", fixed_second, s2)):
        d.component({"name": name, "connectors": [{"name": "flange", "domain": "translational"}],
                     "variables": [{"name": "s", "start": start, "fixed": fixed},
                                   {"name": "v", "start": 0.0}],
                     "equations": ["flange.s = s", "v = der(s)", "1.0*der(v) = flange.f"]})
    m1, m2 = d.add("M1", id="m1"), d.add("M2", id="m2")
    rod = d.add("Rod", id="rod", L=0.6)
    d.connect(m1.flange, rod.flange_a)
    d.connect(rod.flange_b, m2.flange)
    p1, p2 = d.add("PositionSensor", id="p1"), d.add("PositionSensor", id="p2")
    d.connect(p1.flange, m1.flange)
    d.connect(p2.flange, m2.flange)
    p1.s >> d.add("Output", id="x1").u
    p2.s >> d.add("Output", id="x2").u
    return d


def test_a_fixed_start_value_makes_its_variable_the_state():
    r = _two_masses(False, True, s2=2.0).simulate()
    assert r["x2"][0] == 2.0 and r["x1"][0] == pytest.approx(1.4, abs=1e-15)


def test_two_fixed_start_values_agree_or_are_refused():
    r = _two_masses(True, True, s2=0.6).simulate()  # consistent with the rod's length
    assert r["x1"][0] == 0.0 and r["x2"][0] == pytest.approx(0.6, abs=1e-15)
    with pytest.raises(CompileError, match="the fixed start values of m1.s and m2.s disagree"):
        _two_masses(True, True, s2=2.0).compile()


def test_a_fixed_start_on_a_variable_the_constraints_determine_is_refused():
    """A rod between a wall and a mass: the mass's position is not free, so a fixed start
    position cannot hold."""
    d = DiagramBuilder(stop=0.1)
    d.component({"name": "M", "connectors": [{"name": "flange", "domain": "translational"}],
                 "variables": [{"name": "s", "start": 5.0, "fixed": True}, {"name": "v"}],
                 "equations": ["flange.s = s", "v = der(s)", "1.0*der(v) = flange.f"]})
    wall, rod, m = d.add("Fixed", id="wall"), d.add("Rod", id="rod", L=1.0), d.add("M", id="m")
    d.connect(wall.flange, rod.flange_a)
    d.connect(rod.flange_b, m.flange)
    with pytest.raises(CompileError, match="block 'm'.*fixed"):
        d.compile()
