"""A block's formula failing at run time is said in words, naming the block."""
import pytest

import blocksim
from blocksim.engine.arithmetic import describe_arithmetic
from blocksim.errors import SimulationError
from builders import diagram


@pytest.mark.parametrize("formula, words", [
    ("sqrt(-1 - u)", "outside its domain"),
    ("1 / (u - u)", "division by zero"),
    ("exp(1000 + u)", "too large for a float"),
    ("(u - u) ** -1", "zero to a negative power"),
])
def test_a_failing_formula_names_the_block_and_the_failure_without_python_names(formula,
                                                                                  words):
    d = diagram([{"id": "c", "type": "Clock"},
                 {"id": "f", "type": "Expression", "params": {"formula": formula}},
                 {"id": "y", "type": "Output"}],
                [("c.y", "f.u"), ("f.y", "y.u")], stop=1.0)
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(d)
    message = str(info.value)
    assert "block 'f'" in message and words in message
    assert "Error" not in message


def test_unknown_messages_pass_through_without_the_class_name():
    assert describe_arithmetic(ArithmeticError("algebraic loop: no root")) == \
        "algebraic loop: no root"
    assert describe_arithmetic(ZeroDivisionError()) == "division by zero"
