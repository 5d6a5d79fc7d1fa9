"""Flattening resolves a library block like an earlier one (same type, same file values,
same scope) once: a block in another scope, or with a value of another JSON type, is
resolved on its own, and every block keeps lists of its own."""
from builders import block, diagram

import blocksim
from blocksim.blocktypes import registry
from blocksim.compiler.flatten import _same_key, flatten


def sub(name: str, value: float) -> dict:
    """A subsystem with its own parameter `a` whose Constant outputs "2 * a"."""
    inner = {"parameters": {"a": value},
             "blocks": [block("c", "Constant", value="2 * a"), block("o", "Outport")],
             "wires": [{"src": "c.y", "dst": "o.u"}]}
    return {"id": name, "type": "Subsystem", "diagram": inner}


def test_the_same_formula_in_two_scopes_keeps_each_scopes_value():
    d = diagram([sub("s1", 1.5), sub("s2", 4.0), block("c", "Constant", value="2 * a"),
                 block("y1", "Output"), block("y2", "Output"), block("y3", "Output")],
                [("s1.o", "y1.u"), ("s2.o", "y2.u"), ("c.y", "y3.u")],
                parameters={"a": -1.0}, stop=1.0)
    values = {b.path: b.p.value for b in flatten(d).blocks if b.block_type.name == "Constant"}
    assert values == {"s1/c": 3.0, "s2/c": 8.0, "c": -2.0}
    res = blocksim.simulate(blocksim.compile(d))
    assert res["y1"][-1] == 3.0 and res["y2"][-1] == 8.0 and res["y3"][-1] == -2.0


def test_repeated_blocks_get_their_own_ports_and_values():
    d = diagram([block("c", "Constant", value=1.0), block("g1", "Gain", k=[2.0, 3.0]),
                 block("g2", "Gain", k=[2.0, 3.0]), block("y", "Output")],
                [("c.y", "g1.u"), ("g1.y", "g2.u"), ("g2.y", "y.u")], stop=1.0)
    g1, g2 = (b for b in flatten(d).blocks if b.block_type.name == "Gain")
    assert g1.p is not g2.p and g1.inputs is not g2.inputs and g1.feedthrough is not g2.feedthrough
    assert list(g1.p.k) == list(g2.p.k) == [2.0, 3.0]
    res = blocksim.simulate(blocksim.compile(d))
    assert res["y"][-1].tolist() == [4.0, 9.0]


def test_the_key_tells_json_types_apart_and_skips_what_is_not_json():
    gain = registry.get("Gain")
    keys = {_same_key(gain, {"k": v}, {}) for v in (1, 1.0, True, "1", [1.0], [1], (1.0,))}
    assert len(keys) == 7 and None not in keys
    assert _same_key(gain, {"k": object()}, {}) is None
    names_a, names_b = {}, {}
    assert _same_key(gain, {"k": "a"}, names_a) != _same_key(gain, {"k": "a"}, names_b)
