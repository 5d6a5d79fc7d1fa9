"""The block library: every declaration documents itself and is found through the registry."""
import inspect

import pytest

from blocksim.blocktypes import registry
from blocksim.blocktypes.blockspec import BlockType, Param, PARAM_KINDS, ParamValues
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


MAX_SUMMARY = 90  # `blocksim blocks` keeps a type to one line of ~115 characters


@pytest.mark.parametrize("name", sorted(TYPES))
def test_every_blocks_summary_is_one_complete_sentence(name):
    """`blocksim blocks` lists the first sentence of each type's documentation: whole
    (it once stopped at the end of the docstring's first line: Counter, ZeroPole)."""
    summary = TYPES[name].summary()
    first_paragraph = " ".join(inspect.cleandoc(TYPES[name].doc or TYPES[name].__doc__)
                               .split("\n\n")[0].split())
    assert first_paragraph.startswith(summary)
    assert summary.endswith(".") and (summary[0].isupper() or summary[0].isdigit()), summary
    assert len(summary) <= MAX_SUMMARY, summary


def test_a_summary_ends_at_the_first_sentence_not_at_an_abbreviation():
    class Probe(BlockType):
        """Count 0, 1, 2, ... and so on, e.g. the hits; i.e. x.
        Never this. Nor this."""
        name = "Probe"
        category = "Math"
    assert Probe.summary() == "Count 0, 1, 2, ... and so on, e.g. the hits; i.e. x."


@pytest.mark.parametrize("name", ["PID", "Derivative"])
def test_a_block_continuous_by_default_says_so(name):
    line = next(line for line in TYPES[name].describe().splitlines()
                if line.startswith("Sample time:"))
    assert line.startswith("Sample time: continuous by default (sample_time 0); discrete with "
                           "a sample_time > 0")
    default = next(prm.default for prm in TYPES[name].params if prm.name == "sample_time")
    rate = TYPES[name]().sample_time(ParamValues({"sample_time": default}))
    assert rate.kind == "continuous"  # what the line says first is the default


def test_duplicate_names_are_refused():
    class Gain2(BlockType):
        name = "Gain"
        category = "Math"
    with pytest.raises(BlocksimError):
        registry.register(Gain2, dict(TYPES), "test")
