"""Physical networks that cannot work: each is one line naming the components (exit 2 from
`validate` and `run`, before anything runs), never a traceback."""
from __future__ import annotations

from hostile.cases.base import MARK, Corpus, blk, doc


def _two_pin(name: str, equations: list[str]) -> dict:
    """A component declared in the diagram with two pins and the variables v, i, x, y."""
    return {"name": name,
            "connectors": [{"name": "p", "domain": "electrical"},
                           {"name": "n", "domain": "electrical"}],
            "variables": [{"name": v} for v in ("v", "i", "x", "y")],
            "equations": ["v = p.v - n.v", "0 = p.i + n.i", "i = p.i", *equations]}


def _across_source(block: dict, components: list[dict] | None = None) -> dict:
    """`block` (pins p, n) across a 1 V source, grounded."""
    d = doc([blk("V", "ConstantVoltage", V=1.0), block, blk("g", "Ground")],
            [("V.p", f"{block['id']}.p"), (f"{block['id']}.n", "V.n"), ("V.n", "g.p")],
            stop=0.01)
    if components:
        d["components"] = components
    return d


def _rc(ground: bool = True) -> tuple[list[dict], list[tuple[str, str]]]:
    blocks = [blk("V", "ConstantVoltage", V=1.0), blk("R", "Resistor", R=1.0),
              blk("C", "Capacitor", C=1e-3)]
    wires = [("V.p", "R.p"), ("R.n", "C.p"), ("C.n", "V.n")]
    if ground:
        blocks.append(blk("g", "Ground"))
        wires.append(("V.n", "g.p"))
    return blocks, wires


def physical(c: Corpus) -> None:
    cat = "physical"
    blocks, wires = _rc()
    cases: dict[str, tuple[dict, tuple[str, ...]]] = {}
    cases["unconnected-pin"] = (
        doc(blocks, [w for w in wires if w != ("C.n", "V.n")], stop=0.01),
        ("C", "n", "not connected"))
    blocks_ng, wires_ng = _rc(ground=False)
    cases["no-ground"] = (doc(blocks_ng, wires_ng, stop=0.01), ("C", "R", "V", "Ground"))
    cases["two-domains"] = (
        doc(blocks + [blk("m", "Mass")], wires + [("m.flange_a", "C.p")], stop=0.01),
        ("m.flange_a", "C.p", "translational", "electrical"))
    cases["pin-to-signal-input"] = (
        doc(blocks + [blk("y", "Output")], wires + [("C.p", "y.u")], stop=0.01), ("C.p",))
    cases["signal-output-to-pin"] = (
        doc(blocks + [blk("k", "Constant")], wires + [("k.y", "R.p")], stop=0.01), ("R.p",))
    cases["signal-input-left-open"] = (
        doc([blk("V", "SignalVoltage"), blk("R", "Resistor"), blk("g", "Ground")],
            [("V.p", "R.p"), ("R.n", "V.n"), ("V.n", "g.p")], stop=0.01), ("V", "u"))
    cases["over-determined"] = (
        _across_source(blk("D", "Over"), [_two_pin("Over", ["v = 2*i", "i = 1", "x = 0",
                                                            "y = 0"])]),
        ("D", "over-determined"))
    cases["under-determined"] = (
        _across_source(blk("D", "Under"), [_two_pin("Under", ["x = 0", "y = 0"])]),
        ("D", "under-determined"))
    cases["structurally-singular-voltage-loop"] = (
        doc([blk("V1", "ConstantVoltage", V=1.0), blk("V2", "ConstantVoltage", V=2.0),
             blk("g", "Ground")], [("V1.p", "V2.p"), ("V1.n", "V2.n"), ("V2.n", "g.p")],
            stop=0.01), ("V1", "V2"))
    cases["structurally-singular-current-cut"] = (
        doc([blk("I1", "ConstantCurrent", I=1.0), blk("I2", "ConstantCurrent", I=2.0),
             blk("g", "Ground")], [("I1.n", "I2.p"), ("I1.p", "I2.n"), ("I2.n", "g.p")],
            stop=0.01), ("I1", "I2"))
    cases["redundant-equation"] = (
        _across_source(blk("D", "Twice"), [_two_pin("Twice", ["i = x", "x + y = v",
                                                              "2*x + 2*y = 2*v"])]),
        ("D", "redundant"))
    cases["numerically-singular"] = (
        _across_source(blk("D", "Rank1"), [_two_pin("Rank1", ["i = x", "x + 2*y = v",
                                                              "2*x + 4*y = 3*v"])]),
        ("D", "singular"))
    cases["mass-between-two-walls"] = (
        doc([blk("m", "Mass", L=1.0), blk("w1", "Fixed"), blk("w2", "Fixed", s0=2.0)],
            [("m.flange_a", "w1.flange"), ("m.flange_b", "w2.flange")], stop=0.01),
        ("m", "w1", "w2"))
    cases["gear-fixed-on-both-sides"] = (
        doc([blk("gear", "IdealGear", ratio=2.0), blk("f1", "RotationalFixed"),
             blk("f2", "RotationalFixed")],
            [("gear.flange_a", "f1.flange"), ("gear.flange_b", "f2.flange")], stop=0.01),
        ("gear",))
    cases["index-needs-derivative-of-a-signal"] = (
        doc([blk("s", "Sine"), blk("I", "SignalCurrent"), blk("L", "Inductor"),
             blk("g", "Ground")],
            [("s.y", "I.u"), ("I.p", "g.p"), ("I.n", "L.p"), ("L.n", "g.p")], stop=0.01),
        ("I", "u", "derivative"))
    cases["component-equation-syntax"] = (
        _across_source(blk("D", "Broken"), [_two_pin("Broken", ["i = (v", "x = 0", "y = 0"])]),
        ("Broken",))
    cases["component-unknown-name"] = (
        _across_source(blk("D", "Typo"), [_two_pin("Typo", ["i = v/R0", "x = 0", "y = 0"])]),
        ("Typo", "R0"))
    cases["component-shadows-library"] = (
        _across_source(blk("D", "Resistor"), [_two_pin("Resistor", ["i = v", "x = 0",
                                                                    "y = 0"])]),
        ("Resistor",))
    cases["component-code-in-equation"] = (
        _across_source(blk("D", "Sneaky"), [_two_pin("Sneaky", [
            f"i = __import__('os').system('touch {MARK}')", "x = 0", "y = 0"])]),
        ("Sneaky",))
    for name, (data, mentions) in cases.items():
        c.diagram_cases(cat, name, data, mentions=mentions, commands=("validate", "run"))
