"""What the code generator leaves out: outputs no block of a function reads, functions no
block writes, copies of states; and the derived variants of its functions agree with it."""
import numpy as np
import pytest

import blocksim
from blocksim.compiler import compile_diagram, dataflow
from blocksim.engine import derived
from builders import DIAGRAMS, block, diagram


def function_text(model, name: str) -> str:
    code = model.code
    start = code.index(f"def {name}(")
    end = code.find("\ndef ", start + 1)
    return code[start:] if end < 0 else code[start:end]


def classic_ball():
    """The C21 ball built Simulink's classic way: a limited Integrator "position" whose sat
    output falling to -1 resets a ResetIntegrator "velocity" to -mu times its state (what
    diagrams/bouncing_ball.json was before its SecondOrderIntegrator)."""
    blocks = [block("gravity", "Constant", value="-g"), block("speed", "Abs"),
              block("v_times_speed", "Product", ops="**"), block("drag", "Gain", k="-beta"),
              block("acceleration", "Sum", signs="++"),
              block("velocity", "ResetIntegrator", initial="v0", edge="falling"),
              block("restitution", "Gain", k="-mu"),
              block("position", "Integrator", x0="x0", lower=0), block("x", "Scope"),
              block("v", "Scope")]
    wires = [("velocity.y", "speed.u"), ("velocity.y", "v_times_speed.u1"),
             ("speed.y", "v_times_speed.u2"), ("v_times_speed.y", "drag.u"),
             ("gravity.y", "acceleration.u1"), ("drag.y", "acceleration.u2"),
             ("acceleration.y", "velocity.u"), ("position.sat", "velocity.reset"),
             ("velocity.state", "restitution.u"), ("restitution.y", "velocity.x0"),
             ("velocity.y", "position.u"), ("position.y", "x.u"), ("velocity.y", "v.u")]
    return diagram(blocks, wires, {"x0": 10.0, "v0": 0.0, "g": 9.81, "mu": 0.9, "beta": 0.002},
                   stop=30.0)


@pytest.fixture(scope="module")
def ball():
    return blocksim.compile(classic_ball())


def test_update_of_the_shipped_ball_reads_no_air_resistance():
    shipped = blocksim.compile(blocksim.load(DIAGRAMS / "bouncing_ball.json"))
    update = function_text(shipped, "update")
    assert shipped.signal_names.index("restitution.y") in _assigned(update)
    for name in ("gravity.y", "speed.y", "v_times_speed.y", "drag.y", "acceleration.y"):
        assert shipped.signal_names.index(name) not in _assigned(update), name


def test_update_computes_only_the_outputs_its_blocks_read(ball):
    update = function_text(ball, "update")
    # The reset reads restitution.y (-mu * velocity.state), the limit reads velocity.y:
    # nothing of the air resistance (gravity, |v|, v|v|, drag, the sum) is computed.
    assert ball.signal_names.index("restitution.y") in _assigned(update)
    assert ball.signal_names.index("velocity.y") in _assigned(update)
    for name in ("gravity.y", "speed.y", "v_times_speed.y", "drag.y", "acceleration.y"):
        assert ball.signal_names.index(name) not in _assigned(update), name
    assert len(_assigned(update)) < len(ball.signal_names) // 2


def _assigned(text: str) -> set[int]:
    return {int(line.split("=")[0].strip()[1:]) for line in text.splitlines()
            if line.strip().startswith("s") and "=" in line and line.strip()[1].isdigit()}


def test_functions_without_block_code_are_empty_and_marked(ball):
    assert ball.empty == {"sample"}  # no discrete block (the ResetIntegrator holds `state`)
    plain = compile_diagram(diagram([block("c", "Clock"), block("i", "Integrator"),
                                     block("y", "Output")], [("c.y", "i.u"), ("i.y", "y.u")],
                                    stop=1.0))
    assert plain.empty == {"update", "pre_event", "after_event", "sample"}
    assert function_text(plain, "pre_event").strip().endswith("return None")
    assert function_text(plain, "after_event").split() == ["def", "after_event(t,", "x,", "m,",
                                                           "z):", "return", "False"]
    memory = diagram([block("c", "Clock"), block("mem", "Memory"), block("y", "Output")],
                     [("c.y", "mem.u"), ("mem.y", "y.u")], stop=1.0)
    assert "pre_event" not in compile_diagram(memory).empty


def test_copies_of_states_are_read_directly_in_deriv_and_zc():
    blocks = [block("step", "Step", time=0.0)]
    blocks += [block(f"lag{k}", "TransferFunction", num=1.0, den=[1.0, 1.0]) for k in range(5)]
    wires = [("step.y", "lag0.u")] + [(f"lag{k}.y", f"lag{k + 1}.u") for k in range(4)]
    model = compile_diagram(diagram(blocks + [block("y", "Output")],
                                    wires + [("lag4.y", "y.u")], stop=1.0))
    deriv = function_text(model, "deriv")
    assert "dx_[3] = x_[2] - x_[3]" in deriv and "= x_[2]\n" not in deriv
    assert "s3 = x_[2]" in function_text(model, "outputs")  # outputs keeps every signal


def test_heads_convert_only_the_arrays_a_function_uses(ball):
    assert "zn_ = zn.tolist()" in function_text(ball, "update")
    assert "z_ = z.tolist()" not in function_text(ball, "zc")  # g = x, m, limits: no sign


@pytest.mark.parametrize("name", ["bouncing_ball.json", "math003.json", "diode_ideal.json",
                                  "rotating_pendulum.json"])
def test_derived_functions_agree_with_the_generated_ones(name):
    model = blocksim.compile(blocksim.load(DIAGRAMS / name))
    rng = np.random.default_rng(7)
    deriv_l, zc_l = derived.list_function(model, "deriv"), derived.list_function(model, "zc")
    for _ in range(20):
        t = float(rng.uniform(0, 1))
        x = rng.normal(size=model.n_states)
        m = model.m0.copy()
        z = rng.choice([-1.0, 0.0, 1.0], size=model.n_zc)
        dx = model.functions["deriv"](t, x, m, z)
        g = model.functions["zc"](t, x, m, z)
        assert deriv_l(t, x.tolist(), m.tolist(), z.tolist()) == dx
        assert zc_l(t, x.tolist(), m.tolist(), z.tolist()) == g
        for i in range(model.n_zc):
            assert derived.zc_component(model, i)(t, x.tolist(), m.tolist(), z.tolist()) == g[i]


def test_zero_crossings_that_do_not_move_with_the_flow(ball):
    # velocity.reset reads position.sat, a mode: its look-ahead never needs repeating.
    moves = derived.zc_moves(ball)
    reset = ball.zc_owner.index(ball.block_ids.index("velocity"))
    assert not moves[reset] and moves.sum() == ball.n_zc - 1


def test_vectorised_deriv_of_a_chain_matches_the_straight_line_one():
    n = 40
    blocks = [block("step", "Step", time=0.0)]
    blocks += [block(f"lag{k}", "TransferFunction", num=1.0, den=[1.0, 0.5 + k / n])
               for k in range(n)]
    wires = [("step.y", "lag0.u")] + [(f"lag{k}.y", f"lag{k + 1}.u") for k in range(n - 1)]
    model = compile_diagram(diagram(blocks + [block("y", "Output")],
                                    wires + [(f"lag{n - 1}.y", "y.u")], stop=1.0))
    vector = derived.vector_deriv(model)
    assert vector is not None
    rng = np.random.default_rng(3)
    for _ in range(10):
        x = rng.normal(size=n)
        m = np.array([float(rng.integers(0, 2))])
        expected = model.functions["deriv"](0.5, x, m, np.zeros(0))
        np.testing.assert_array_equal(vector(0.5, x, m, np.zeros(0)), expected)  # exactly


def test_observe_reads_and_state_selection(ball):
    assert derived.observed_states(ball) == [1, 0]  # the Scopes log position, velocity
    assert derived.observe_reads(ball) == [0, 1]
    text = dataflow.observe_source(derived.functions(ball), derived.logged_indices(ball))
    assert "drag" not in text and text.count("\n") < 8


_HEAD_OR_TAIL = ("def ", "return", "changed = False", "x_ = x.tolist()", "m_ = m.tolist()",
                 "z_ = z.tolist()", "zn_ = zn.tolist()", "dx_ = [0.0] * ", "g_ = [0.0] * ",
                 "x[:] = x_", "m[:] = m_")


@pytest.mark.parametrize("name", ["bouncing_ball.json", "math003.json", "diode_shockley.json",
                                  "rotating_pendulum.json"])
def test_every_generated_line_of_block_code_names_its_block(name):
    model = blocksim.compile(blocksim.load(DIAGRAMS / name))
    lines = model.code.splitlines()
    assert len(lines) == len(model.line_owner)
    for line, owner in zip(lines, model.line_owner):
        if line.strip() and not line.strip().startswith(_HEAD_OR_TAIL):
            assert owner is not None, line
            assert model.block_ids[owner]


def _overflowing():
    """dx = exp(1000 * x): the derivative overflows at x = 1."""
    return compile_diagram(diagram(
        [block("x", "Integrator"), block("k", "Gain", k=1000.0),
         block("fn", "MathFunction", function="exp"), block("y", "Output")],
        [("x.y", "k.u"), ("k.y", "fn.u"), ("fn.y", "x.u"), ("x.y", "y.u")]))


def test_derived_functions_carry_the_blocks_of_their_lines():
    model = _overflowing()
    functions = dataflow.split(model.code, model.line_owner)
    text = dataflow.list_source(functions["deriv"], "deriv_list")
    assert len(text.owners) == text.count("\n")
    named = {model.block_ids[o] for o in text.owners if o is not None}
    assert named == {"k", "fn", "x"} or named == {"k", "fn"}
    for built in (dataflow.observe_source(functions, [0]),
                  dataflow.component_source(functions["deriv"], "dx_", 0, "d0")):
        assert len(built.owners) == built.count("\n") and built.owners[0] is None


def test_an_exception_in_a_derived_function_names_its_block():
    model = _overflowing()
    functions = dataflow.split(model.code, model.line_owner)
    text = dataflow.list_source(functions["deriv"], "deriv_list")
    scope: dict = {}
    exec(compile(text, "<blocksim generated list function>", "exec"),
         model.functions["deriv"].__globals__, scope)
    with pytest.raises(OverflowError) as info:
        scope["deriv_list"](0.0, [1.0], [], [])
    assert model.block_of_exception(info.value) is None  # not registered: unknown
    model.register_lines("<blocksim generated list function>", "deriv_list", text)
    assert model.block_of_exception(info.value) == "fn"
