"""More of Simulink's library through an import, each against its closed form: Signal
Generator (rad/s), Repeating Sequence, Chirp Signal, Quantizer, Rounding, Polynomial,
Multiport Switch, Algebraic Constraint, Math Function, MinMax, Relational Operator."""
from __future__ import annotations

import numpy as np

import blocksim
from slx_fixtures import B, L, Model, mdl_text, slx_bytes

CONFIG = {"SolverName": "ode45", "StopTime": "2", "RelTol": "1e-10", "AbsTol": "1e-12"}


def _outputs(tmp_path, model: Model, form: str = "slx"):
    path = tmp_path / f"m.{form}"
    if form == "slx":
        path.write_bytes(slx_bytes(model))
    else:
        path.write_text(mdl_text(model))
    result = blocksim.import_simulink(path)
    assert result.report.count("placeholder") == 0, result.report.lines()
    return result, blocksim.simulate(result.diagram, output_interval=0.01)


def _outs(n: int, first_sid: int = 100) -> list[B]:
    return [B("Outport", f"y{k}", first_sid + k, {"Port": str(k + 1)}) for k in range(n)]


def test_sources(tmp_path):
    rep = B("Reference", "saw", 2, {"SourceBlock": "simulink/Sources/Repeating\nSequence",
                                    "rep_seq_t": "[0 0.5]", "rep_seq_y": "[0 1]"})
    chirp = B("Reference", "chirp", 3, {"SourceBlock": "simulink/Sources/Chirp Signal",
                                        "f1": "0.5", "T": "2", "f2": "2"})
    model = Model([B("SignalGenerator", "sq", 1, {"WaveForm": "square", "Amplitude": "2",
                                                  "Frequency": "2*pi"}), rep, chirp, *_outs(3)],
                  [L(1, "out:1", (100, "in:1")), L(2, "out:1", (101, "in:1")),
                   L(3, "out:1", (102, "in:1"))], config=CONFIG)
    _, res = _outputs(tmp_path, model)
    t = res.time
    smooth = np.abs(t * 2 - np.round(t * 2)) > 1e-9  # off the jumps (both limits are logged)
    assert np.allclose(res["y0"][smooth], np.where((t % 1.0) < 0.5, 2.0, -2.0)[smooth])
    assert np.allclose(res["y1"][smooth], ((t % 0.5) / 0.5)[smooth], atol=1e-12)
    assert np.allclose(res["y2"], np.sin(2 * np.pi * (0.5 * t + 1.5 * t ** 2 / 4)), atol=1e-8)


def test_math_and_discontinuities(tmp_path):
    model = Model(
        [B("Clock", "t", 1), B("Quantizer", "q", 2, {"QuantizationInterval": "0.25"}),
         B("Rounding", "r", 3, {"Operator": "ceil"}),
         B("Polyval", "p", 4, {"coefs": "[1 0 -2]"}),
         B("Math", "m", 5, {"Operator": "square"}), B("MinMax", "mm", 6, {"Function": "max",
                                                                          "Inputs": "2"}),
         B("Constant", "half", 7, {"Value": "0.5"}),
         B("RelationalOperator", "rel", 8, {"Operator": "~="}),
         B("Sqrt", "sq", 9, {"Operator": "signedSqrt"}), B("RateTransition", "rt", 10),
         *_outs(8)],
        [L(1, "out:1", (2, "in:1"), (3, "in:1"), (4, "in:1"), (5, "in:1"), (6, "in:1"),
           (8, "in:1")),
         L(7, "out:1", (6, "in:2"), (8, "in:2")),
         *[L(k, "out:1", (98 + k, "in:1")) for k in (2, 3, 4, 5, 6)], L(8, "out:1", (105, "in:1")),
         L(4, "out:1", (9, "in:1"), (10, "in:1")), L(9, "out:1", (106, "in:1")),
         L(10, "out:1", (107, "in:1"))],
        config=CONFIG)
    _, res = _outputs(tmp_path, model, "mdl")
    t = res.time
    inside = np.abs(4 * t - np.round(4 * t)) > 1e-9
    between = np.abs(4 * t - 0.5 - np.round(4 * t - 0.5)) > 1e-9  # levels change at 0.125 + k/4
    assert np.allclose(res["y0"][between], (0.25 * np.floor(t / 0.25 + 0.5))[between])
    assert np.allclose(res["y1"][inside], np.ceil(t)[inside])
    assert np.allclose(res["y2"], t ** 2 - 2) and np.allclose(res["y3"], t ** 2)
    assert np.allclose(res["y4"], np.maximum(t, 0.5))
    assert np.allclose(res["y5"][inside], (t != 0.5)[inside])
    assert np.allclose(res["y6"], np.sign(t ** 2 - 2) * np.sqrt(np.abs(t ** 2 - 2)))
    assert np.allclose(res["y7"], t ** 2 - 2)


def test_multiport_switch_and_algebraic_constraint(tmp_path):
    model = Model(
        [B("Step", "sel", 1, {"Time": "1", "Before": "1", "After": "2"}),
         B("Constant", "a", 2, {"Value": "10"}), B("Constant", "b", 3, {"Value": "20"}),
         B("MultiPortSwitch", "mps", 4, {"Inputs": "2"}),
         B("AlgebraicConstraint", "z", 5, {"InitialGuess": "1"}),
         B("Math", "sq", 6, {"Operator": "square"}), B("Constant", "four", 7, {"Value": "4"}),
         B("Sum", "res", 8, {"Inputs": "+-"}), *_outs(2)],
        [L(1, "out:1", (4, "in:1")), L(2, "out:1", (4, "in:2")), L(3, "out:1", (4, "in:3")),
         L(4, "out:1", (100, "in:1")), L(5, "out:1", (6, "in:1"), (101, "in:1")),
         L(6, "out:1", (8, "in:1")), L(7, "out:1", (8, "in:2")), L(8, "out:1", (5, "in:1"))],
        config=CONFIG)
    _, res = _outputs(tmp_path, model)
    t = res.time
    assert np.allclose(res["y0"][t < 0.999], 10) and np.allclose(res["y0"][t > 1.001], 20)
    assert np.allclose(res["y1"], 2.0, atol=1e-10)


def test_from_workspace_of_a_matrix_from_params(tmp_path):
    script = tmp_path / "data.m"
    script.write_text("simin = [0 0; 1 2; 3 2];\nheld = [0 1; 1 5];\n")
    model = Model([B("FromWorkspace", "ramp", 1, {"VariableName": "simin",
                                                  "OutputAfterFinalValue": "Setting to zero"}),
                   B("FromWorkspace", "steps", 2, {"VariableName": "held", "Interpolate": "off",
                                                   "OutputAfterFinalValue": "Holding final value"}),
                   *_outs(2)], [L(1, "out:1", (100, "in:1")), L(2, "out:1", (101, "in:1"))],
                  config={**CONFIG, "StopTime": "4"})
    path = tmp_path / "fw.mdl"
    path.write_text(mdl_text(model))
    result = blocksim.import_simulink(path, params=[script])
    assert result.report.count("placeholder") == 0
    res = blocksim.simulate(result.diagram, output_interval=0.25)
    at = {t: (a, b) for t, a, b in zip(res.time, res["y0"], res["y1"])}
    assert at[0.5] == (1.0, 1.0) and at[2.0] == (2.0, 5.0) and at[3.5] == (0.0, 5.0)


def test_selector_by_index_vector(tmp_path):
    newer = B("Selector", "pick", 2, {"IndexOptionArray": "{'Index vector (dialog)'}",
                                      "IndexParamArray": "{'[3 1]'}"})
    older = B("Selector", "zero", 3, {"IndexOptions": "Index vector (dialog)", "Indices": "[1]",
                                      "IndexMode": "Zero-based"})
    model = Model([B("Constant", "v", 1, {"Value": "[10 20 30]"}), newer, older, *_outs(2)],
                  [L(1, "out:1", (2, "in:1"), (3, "in:1")), L(2, "out:1", (100, "in:1")),
                   L(3, "out:1", (101, "in:1"))], config=CONFIG)
    _, res = _outputs(tmp_path, model)
    assert list(res["y0"][-1]) == [30.0, 10.0] and res["y1"][-1] == 20.0


def test_rate_limiter_after_a_step_is_exact_and_after_a_sine_close(tmp_path):
    model = Model([B("Step", "s", 1, {"Time": "0.5", "After": "2"}),
                   B("RateLimiter", "rl", 2, {"RisingSlewLimit": "1", "FallingSlewLimit": "-1"}),
                   B("Sin", "w", 3, {"Frequency": "2*pi", "Amplitude": "1"}),
                   B("RateLimiter", "rl2", 4, {"RisingSlewLimit": "2", "FallingSlewLimit": "-2"}),
                   *_outs(2)],
                  [L(1, "out:1", (2, "in:1")), L(2, "out:1", (100, "in:1")),
                   L(3, "out:1", (4, "in:1")), L(4, "out:1", (101, "in:1"))],
                  config={**CONFIG, "StopTime": "3"})
    result, res = _outputs(tmp_path, model)
    t = res.time
    assert np.allclose(res["y0"], np.clip(t - 0.5, 0, 2), atol=1e-9)  # a ramp of slope 1
    assert result.diagram.simulation.solver == "radau"  # (the derivative filter is stiff)

    h = 1e-5  # the rate limiter's definition, stepped finely: y moves towards u at most 2 h
    grid = np.arange(0, 3 + h / 2, h)
    u, y = np.sin(2 * np.pi * grid), np.zeros_like(grid)
    for k in range(1, len(grid)):
        y[k] = y[k - 1] + min(max(u[k] - y[k - 1], -2 * h), 2 * h)
    assert np.max(np.abs(res["y1"] - np.interp(t, grid, y))) < 1e-3  # du/dt filtered, tau 1e-4
