"""The block library: every declaration documents itself and is found through the registry."""
import pytest

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import BlockType, Param, PARAM_KINDS
from blocksim.errors import BlocksimError

TYPES = registry.all_types()


def test_standard_library_has_the_blocks_users_expect():
    expected = {"Integrator", "ResetIntegrator", "TransferFunction", "StateSpace", "Saturation",
                "HitCrossing", "Switch", "Relay", "RelationalOperator", "LogicalOperator", "Abs",
                "Sign", "LookupTable1D", "Constant", "Step", "Sine", "Pulse", "Ramp", "Clock",
                "FromTable", "Gain", "Sum", "Product", "MathFunction", "Expression", "Mux",
                "Demux", "SRFlipFlop", "Memory", "Scope", "Output", "Stop", "Subsystem",
                "Inport", "Outport"}
    assert expected <= set(TYPES)


@pytest.mark.parametrize("name", sorted(TYPES))
def test_every_block_documents_itself(name):
    block_type = TYPES[name]
    assert block_type.name == name and block_type.category
    assert (block_type.doc or block_type.__doc__ or "").strip(), f"{name} has no documentation"
    for prm in block_type.params:
        assert isinstance(prm, Param) and prm.kind in PARAM_KINDS and prm.doc
        if prm.kind == "choice":
            assert prm.default in prm.choices
    text = block_type.describe()
    assert name in text and all(prm.name in text for prm in block_type.params)


def test_duplicate_names_are_refused():
    class Gain2(BlockType):
        name = "Gain"
        category = "Math"
    with pytest.raises(BlocksimError):
        registry.register(Gain2, dict(TYPES), "test")
