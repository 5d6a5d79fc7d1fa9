"""Simulation settings that cannot work are CompileErrors naming the setting and its value,
so `blocksim validate` and `blocksim run` exit 2 before anything runs."""
import json
import logging
import math

import pytest
from builders import block, diagram

import blocksim
from blocksim.cli.main import main
from blocksim.compiler import check_run, compile_diagram
from blocksim.errors import CompileError

LAG = {
    "format": "blocksim", "version": 1, "parameters": {"tau": 0.5},
    "simulation": {"stop": 2.0},
    "blocks": [{"id": "src", "type": "Step", "params": {"time": 1.0}},
               {"id": "int", "type": "Integrator"}, {"id": "y", "type": "Output"}],
    "wires": [{"src": "src.y", "dst": "int.u"}, {"src": "int.y", "dst": "y.u"}],
}


def lag(**simulation):
    return diagram([block("src", "Step", time=1.0), block("int", "Integrator"),
                    block("y", "Output")], [("src.y", "int.u"), ("int.y", "y.u")],
                   **simulation)


def refused(**settings) -> str:
    d = lag()
    with pytest.raises(CompileError) as info:
        compile_diagram(d, settings=d.simulation.replaced(**settings))
    assert info.value.block is None and "\n" not in str(info.value)
    return info.value.detail


NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("settings, message", [
    ({"stop": 0.0}, "simulation setting 'stop' = 0.0: the stop time must be after the start "
                    "time (start = 0.0)"),
    ({"stop": -1.0}, "simulation setting 'stop' = -1.0: the stop time must be after the start "
                     "time (start = 0.0)"),
    ({"start": 5.0, "stop": 5.0}, "'stop' = 5.0: the stop time must be after the start time "
                                  "(start = 5.0)"),
    ({"stop": NAN}, "simulation setting 'stop' = nan: must be a finite number"),
    ({"stop": INF}, "simulation setting 'stop' = inf: must be a finite number"),
    ({"start": -INF}, "simulation setting 'start' = -inf: must be a finite number"),
    ({"start": -1.7e308, "stop": 1.7e308}, "stop - start overflows"),
    ({"start": 1e16, "stop": 1e16 + 20}, "spans fewer than 10000 distinct time values"),
    ({"stop": "10"}, "simulation setting 'stop' = '10': must be a number"),
    ({"solver": "ode45"}, "simulation setting 'solver' = 'ode45': unknown solver; choose one of "
                          "dopri5, dop853, radau, bdf, euler, rk4"),
    ({"rtol": NAN}, "simulation setting 'rtol' = nan: must be a finite number"),
    ({"rtol": 0.0}, "simulation setting 'rtol' = 0.0: must be a finite number > 0"),
    ({"rtol": -1e-6}, "simulation setting 'rtol' = -1e-06: must be a finite number > 0"),
    ({"rtol": 1e-20}, "'rtol' = 1e-20: below the resolution of double precision (eps = "
                      "2.22e-16); the solvers honour at most 2.22e-14"),
    ({"atol": NAN}, "simulation setting 'atol' = nan: must be a finite number"),
    ({"atol": INF}, "simulation setting 'atol' = inf: must be a finite number"),
    ({"atol": 0.0}, "simulation setting 'atol' = 0.0: must be a finite number > 0"),
    ({"solver": "euler"}, "simulation setting 'step' is missing: the fixed-step solver 'euler' "
                          "needs a step size"),
    ({"solver": "rk4", "step": 0.0}, "simulation setting 'step' = 0.0: must be a number > 0"),
    ({"solver": "rk4", "step": -0.1}, "simulation setting 'step' = -0.1: must be a number > 0"),
    ({"solver": "rk4", "step": NAN}, "simulation setting 'step' = nan: must be a finite number"),
    ({"solver": "rk4", "step": INF}, "simulation setting 'step' = inf: must be a finite number"),
    ({"solver": "rk4", "step": 1e-20}, "'step' = 1e-20: below 100 units of roundoff of the time "
                                       "scale 10 (1.78e-13)"),
    ({"solver": "euler", "step": 1e-8}, "simulation setting 'step' = 1e-08: a run of 10 s would "
                                        "need 1e+09 steps (at most 1e+08)"),
    ({"start": 1e9, "stop": 1e9 + 10, "solver": "rk4", "step": 1e-6},
     "'step' = 1e-06: below 100 units of roundoff of the time scale 1e+09"),
    ({"max_step": 0.0}, "simulation setting 'max_step' = 0.0: must be a number > 0 (or left "
                        "out: no limit)"),
    ({"max_step": NAN}, "simulation setting 'max_step' = nan: must be a finite number"),
    ({"max_step": 1e-8}, "simulation setting 'max_step' = 1e-08: a run of 10 s would need 1e+09 "
                         "steps (at most 1e+08); use a larger max_step or a shorter run"),
    ({"output_interval": 0.0}, "simulation setting 'output_interval' = 0.0: must be a number > 0"),
    ({"output_interval": -1.0}, "'output_interval' = -1.0: must be a number > 0"),
    ({"output_interval": INF}, "'output_interval' = inf: must be a finite number"),
    ({"output_interval": 1e-30}, "'output_interval' = 1e-30: below 100 units of roundoff"),
    ({"backend": "gpu"}, "simulation setting 'backend' = 'gpu': unknown backend; choose one of "
                         "python, numba"),
])
def test_settings_that_cannot_work_are_refused(settings, message):
    assert message in refused(**settings)


@pytest.mark.parametrize("settings", [
    {"start": -5.0, "stop": -1.0}, {"max_step": INF}, {"max_step": 1e-3},
    {"solver": "rk4", "step": 1e-7, "stop": 1.0}, {"rtol": 1e-3, "atol": 1e-300},
    {"start": 1e9, "stop": 1e9 + 10, "output_interval": 0.01}, {"backend": "numba"},
])
def test_unusual_but_sound_settings_compile(settings):
    d = lag()
    model = compile_diagram(d, settings=d.simulation.replaced(**settings))
    assert model.settings.replaced() == d.simulation.replaced(**settings)


def test_rtol_below_100_eps_compiles_with_a_warning(caplog):
    d = lag()
    with caplog.at_level(logging.WARNING, logger="blocksim.compiler.settings"):
        compile_diagram(d, settings=d.simulation.replaced(rtol=1e-15))
    assert "simulation setting 'rtol' = 1e-15 is below 100 eps: the solvers work to 2.22e-14" \
        in caplog.text


def test_backend_from_the_environment_is_checked(monkeypatch):
    monkeypatch.setenv("BLOCKSIM_BACKEND", "fortran")
    assert "'backend' = 'fortran': unknown backend (from the BLOCKSIM_BACKEND environment " \
           "variable)" in refused()


def test_without_settings_the_diagrams_own_are_checked():
    with pytest.raises(CompileError, match=r"'stop' = 1.0: the stop time must be after the "
                                           r"start time \(start = 2.0\)"):
        compile_diagram(lag(start=2.0, stop=1.0))


def test_the_api_checks_its_overrides_before_running():
    with pytest.raises(CompileError, match="'rtol' = nan"):
        blocksim.simulate(lag(), rtol=math.nan)
    with pytest.raises(CompileError, match="'step' = 0.5: a run of 1e\\+09 s would need 2e\\+09"):
        blocksim.simulate(lag(), stop_time=1e9, solver="euler", step=0.5)


def test_check_run_checks_a_compiled_model_with_new_settings():
    model = compile_diagram(lag())
    check_run(model, model.settings.replaced(stop=3.0))
    with pytest.raises(CompileError, match="'max_step' = -1.0"):
        check_run(model, model.settings.replaced(max_step=-1.0))


def write(tmp_path, simulation):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({**LAG, "simulation": simulation}))
    return path


@pytest.mark.parametrize("command", ["validate", "run"])
def test_validate_and_run_exit_2_on_settings_in_the_file(tmp_path, capsys, command):
    path = write(tmp_path, {"start": 3.0, "stop": 2.0})
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"blocksim: {path}: simulation setting 'stop' = 2.0: the stop time must be "
                   f"after the start time (start = 3.0)\n")


@pytest.mark.parametrize("args, message", [
    (["--stop-time", "0"], "simulation setting 'stop' = 0.0: the stop time must be after the "
                           "start time (start = 0.0)"),
    (["--stop-time", "nan"], "simulation setting 'stop' = nan: must be a finite number"),
    (["--rtol", "nan"], "simulation setting 'rtol' = nan: must be a finite number"),
    (["--atol", "-1"], "simulation setting 'atol' = -1.0: must be a finite number > 0"),
    (["--solver", "rk4"], "simulation setting 'step' is missing"),
    (["--output-interval", "1e-9"], "'output_interval' = 1e-09: the run would log about 2e+09 "
                                    "rows of 2 columns"),
])
def test_run_exits_2_before_running_on_bad_overrides(tmp_path, capsys, args, message):
    out = tmp_path / "r.csv"
    assert main(["run", str(write(tmp_path, {"stop": 2.0})), "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()
