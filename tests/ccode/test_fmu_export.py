"""FMU export: fmpy validates the FMUs and runs them (not blocksim) to blocksim's results."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.ccode.model_source import ExportError
from blocksim.cli.main import main as cli
from blocksim.diagram.format import save_diagram

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from builders import block, diagram  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BALL = ROOT / "diagrams" / "bouncing_ball.json"


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    """The ball exported four ways, once for the module."""
    folder = tmp_path_factory.mktemp("fmus")
    return {(fmi, kind): blocksim.export_fmu(BALL, folder / f"ball_{fmi}_{kind}.fmu", fmi=fmi,
                                             kind=kind).path
            for fmi in (2, 3) for kind in ("me", "cs")}


def _bounces(result) -> np.ndarray:
    """Impact times in fmpy's results with record_events: v jumps from < 0 to > 0."""
    t, v = result["time"], result["v"]
    return np.array([t[i] for i in range(1, len(t))
                     if t[i] == t[i - 1] and v[i - 1] < 0 < v[i]])


def _on_grid(res, times, values, name) -> float:
    """Largest difference at the points in `times` (blocksim's last row at a time: the
    right limit of an event there)."""
    last = {round(float(t), 9): k for k, t in enumerate(res.time)}
    diffs = [abs(res[name][last[round(float(t), 9)]] - v)
             for t, v in zip(times, values) if round(float(t), 9) in last]
    assert len(diffs) > 10
    return max(diffs)


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("kind", ["me", "cs"])
def test_exported_fmu_passes_fmpy_validation(fmus, fmi, kind):
    assert validate_fmu(str(fmus[fmi, kind])) == []


@pytest.mark.parametrize("fmi", [2, 3])
def test_ball_model_exchange_bounces_as_blocksim(fmus, fmi):
    # fmpy's own CVode integrates the FMU; the events are the FMU's (blocksim's latched
    # signs and resets). At fmpy's default tolerance (the FMU's default experiment) the
    # impacts agree to 1e-6 s, with rtol 1e-13 on both sides to 1e-9 s: the first 30, to
    # 24.5 s (closer to the Zeno point, at 25.6 s, CVode crawls and resolves less).
    path = str(fmus[fmi, "me"])
    ours = np.array([e.time for e in blocksim.simulate(blocksim.load(BALL)).events
                     if e.kind == "reset"])
    stop = ours[29] + 0.05
    default = _bounces(fmpy.simulate_fmu(path, stop_time=stop, record_events=True))
    assert len(default) == 30
    np.testing.assert_allclose(default, ours[:30], rtol=0, atol=1e-6)
    tight = np.array([e.time for e in blocksim.simulate(blocksim.load(BALL), rtol=1e-13,
                                                        atol=1e-13).events
                      if e.kind == "reset"])
    fine = _bounces(fmpy.simulate_fmu(path, stop_time=stop, record_events=True,
                                      relative_tolerance=1e-13))
    np.testing.assert_allclose(fine[:30], tight[:30], rtol=0, atol=1e-9)


@pytest.mark.parametrize("fmi", [2, 3])
def test_ball_co_simulation_locates_bounces_inside_the_steps(fmus, fmi):
    # Communication step 0.01 s: the FMU takes blocksim's own steps (not cut at the
    # points) and locates each impact inside them, so x and v at every point are
    # blocksim's to roundoff, and with them the impact times (|v| > 0.1 m/s there).
    res = blocksim.simulate(blocksim.load(BALL))
    r = fmpy.simulate_fmu(str(fmus[fmi, "cs"]), stop_time=30, output_interval=0.01)
    assert len(r) == 3001
    assert _on_grid(res, r["time"], r["x"], "x") < 1e-11
    assert _on_grid(res, r["time"], r["v"], "v") < 1e-10


@pytest.mark.parametrize("fmi", [2, 3])
def test_discrete_pid_co_simulation_equals_blocksim(tmp_path, fmi):
    d = blocksim.load(ROOT / "diagrams" / "pi_1khz.json")
    path = blocksim.export_fmu(d, tmp_path / "pi.fmu", fmi=fmi, kind="cs").path
    # (5 s of the 1000 s run: 5,000 sample hits, each settled inside a step of 0.01 s)
    res = blocksim.simulate(d, stop_time=5.0, output_interval=0.01)
    r = fmpy.simulate_fmu(str(path), stop_time=5.0, output_interval=0.01)
    assert len(r) == 501
    for name in ("y", "u"):
        assert _on_grid(res, r["time"], r[name], name) <= 1e-9


def test_stiff_two_state_co_simulation_equals_blocksim_at_tight_tolerance(tmp_path):
    # c5_two_state runs on radau in blocksim; the FMU carries dopri5 (stability-limited
    # steps, 3.7 million of them in C). At rtol 1e-11 both are near the exact solution:
    # they agree to radau's own error there (4e-9), not to 1e-9.
    d = blocksim.load(ROOT / "diagrams" / "c5_two_state.json")
    path = blocksim.export_fmu(d, tmp_path / "c5.fmu", kind="cs").path
    res = blocksim.simulate(d, rtol=1e-11, atol=1e-11)
    r = fmpy.simulate_fmu(str(path), output_interval=0.01, relative_tolerance=1e-11)
    early = r["time"] < 4.99  # the last switch falls at 4.9999998 s
    for name in ("y1", "y2"):
        assert _on_grid(res, r["time"][early], r[name][early], name) < 1e-8


SHIPPED = sorted(list((ROOT / "diagrams").glob("*.json"))
                 + list((ROOT / "diagrams" / "physical").glob("*.json")))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_diagram_runs_as_fmu_like_blocksim(path, tmp_path):
    # 5 s (at most) of each: co-simulation takes blocksim's own dopri5 steps (1e-9 of the
    # signals' scale; diagrams on radau or rk4 are integrated by dopri5 in the FMU, to
    # their tolerance); model exchange by fmpy's CVode at rtol 1e-10, blocksim's too.
    d = blocksim.load(path)
    cs = blocksim.export_fmu(d, tmp_path / "cs.fmu", kind="cs")
    stop = min(d.simulation.stop, 5.0)
    if path.name == "c5_two_state.json":
        stop = 4.9  # (a switch at 4.9999998 s on radau comes after 5 s on dopri5 at rtol 1e-6)
    step = (stop - d.simulation.start) / 200
    names = [o.name for o in cs.variables.outputs]
    for kind, rtol in (("cs", None), ("me", 1e-10)):
        fmu = cs.path if kind == "cs" else blocksim.export_fmu(d, tmp_path / "me.fmu").path
        res = blocksim.simulate(d, stop_time=stop, rtol=rtol, atol=rtol)
        r = fmpy.simulate_fmu(str(fmu), stop_time=stop, output_interval=step,
                              relative_tolerance=rtol)
        last = [i for i in range(len(r)) if i + 1 == len(r) or r["time"][i + 1] != r["time"][i]]
        r = r[last]  # (fmpy's rows at an event on the grid: the right limit)
        scale = max(1.0, *(float(np.max(np.abs(res[n]))) for n in names))
        if path.name == "c21_pendulum_cartesian.json":  # phi = atan2(y, x): +-pi alike
            res.signals["phi"] = np.sin(res["phi"] / 2) ** 2
            r["phi"] = np.sin(r["phi"] / 2) ** 2
        worst = max(_on_grid(res, r["time"], r[n], n) for n in names)
        own = d.simulation.solver == "dopri5"
        if kind == "cs":
            limit = 1e-9 if own else 1e-4  # (radau at rtol 1e-6 against dopri5)
        else:
            limit = 1e-4 if path.name != "c5_two_state.json" else 5e-2  # (stiff switches)
        assert worst <= limit * scale, (kind, worst)


@pytest.mark.parametrize("kind", ["me", "cs"])
def test_parameters_are_fmu_parameters(fmus, kind):
    # g moves a parameter slot (tunable), x0 an initial state (fixed): set as start values.
    r = fmpy.simulate_fmu(str(fmus[2, kind]), start_values={"g": 5.0, "x0": 3.0},
                          output_interval=0.01, stop_time=5, relative_tolerance=1e-10)
    res = blocksim.simulate(blocksim.compile(blocksim.load(BALL), {"g": 5.0, "x0": 3.0}),
                            stop_time=5)
    assert _on_grid(res, r["time"], r["x"], "x") < 1e-7


def test_model_description_lists_blocksim_variables(fmus):
    md = fmpy.read_model_description(str(fmus[2, "me"]))
    kinds = {v.name: (v.causality, v.variability) for v in md.modelVariables}
    assert kinds["x"] == ("output", "continuous") and kinds["v"] == ("output", "continuous")
    assert kinds["g"] == ("parameter", "tunable") and kinds["x0"] == ("parameter", "fixed")
    assert md.numberOfEventIndicators == 5
    assert [d.variable.name for d in md.derivatives] == ["der(ball.x[0])", "der(ball.x[1])"]


@pytest.mark.parametrize("fmi", [2, 3])
def test_top_level_inport_is_an_input(tmp_path, fmi):
    d = diagram([block("u", "Inport"), block("g", "Gain", k=2), block("i", "Integrator"),
                 block("y", "Outport")], [("u.y", "g.u"), ("g.y", "i.u"), ("i.y", "y.u")],
                stop=2.0)
    path = blocksim.export_fmu(d, tmp_path / "in.fmu", fmi=fmi, kind="cs").path
    assert validate_fmu(str(path)) == []
    u = np.array([(0.0, 1.0), (1.0, 1.0), (1.0, 3.0), (2.0, 3.0)],
                 dtype=[("time", float), ("u", float)])
    r = fmpy.simulate_fmu(str(path), input=u, output_interval=0.1, stop_time=2.0)
    np.testing.assert_allclose(r["y"][[0, 10, 15, 20]], [0.0, 2.0, 5.0, 8.0], atol=1e-9)


def test_what_an_fmu_cannot_do_is_refused_in_one_line(tmp_path, capsys):
    # (A transport delay is exported: tests/ccode/test_fmu_delay.py.)
    d = diagram([block("s", "Sine"), block("i", "Integrator"),
                 block("f", "ToFile", file=str(tmp_path / "out.csv"))],
                [("s.y", "i.u"), ("i.y", "f.u")], stop=1.0)
    path = tmp_path / "tofile.json"
    save_diagram(d, path)
    with pytest.raises(ExportError) as err:
        blocksim.export_fmu(d, tmp_path / "d.fmu")
    assert "ToFile" in str(err.value)
    code = cli(["export", str(path), "--fmu", str(tmp_path / "d.fmu")])
    message = capsys.readouterr().err.strip()
    assert code == 2 and message.count("\n") == 0 and "ToFile" in message
    assert not (tmp_path / "d.fmu").exists()


def test_cli_exports_and_refuses_bad_settings(tmp_path, capsys):
    out = tmp_path / "ball.fmu"
    assert cli(["export", str(BALL), "--fmu", str(out), "--fmi", "3", "--kind", "cs"]) == 0
    assert "FMI 3.0 co-simulation" in capsys.readouterr().err
    assert validate_fmu(str(out)) == []
    assert cli(["export", str(BALL), "--fmu", str(tmp_path / "ball.zip")]) == 2
    assert ".fmu" in capsys.readouterr().err
    assert cli(["export", str(BALL), "--fmu", str(tmp_path / "no" / "b.fmu")]) == 2


# What a machine without blocksim has: fmpy and the packages it imports to run an FMU
# (found by running one here, as lxml is imported only when a model description is read).
_FMPY_IMPORTS = ("import sys, json, fmpy; fmpy.simulate_fmu(sys.argv[1], stop_time=0.1); "
                 "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")


def _venv_with_only_fmpy(root: Path, fmu: Path) -> Path:
    """A new virtual environment whose only packages are fmpy and what it imports: each
    linked from this interpreter's site-packages into one folder the venv's .pth names
    (no download, so no network). Returns its python."""
    import json
    import sysconfig
    import venv

    site = Path(sysconfig.get_paths()["purelib"])
    names = json.loads(subprocess.run([sys.executable, "-c", _FMPY_IMPORTS, str(fmu)],
                                      check=True,
                                      capture_output=True, text=True, timeout=120).stdout)
    packages = root / "fmpy_only"
    packages.mkdir()
    for name in names:
        for found in [site / name, *site.glob(f"{name}.*"),
                      *site.glob(f"{name}-*.dist-info")]:
            if found.exists() and not (packages / found.name).exists():
                (packages / found.name).symlink_to(found)
    assert (packages / "fmpy").exists()
    venv.EnvBuilder(with_pip=False).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    venv_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], check=True, capture_output=True,
                               text=True, timeout=60).stdout.strip()
    Path(venv_site, "fmpy_only.pth").write_text(str(packages) + "\n")
    return python


@pytest.mark.skipif(sys.platform == "win32", reason="the venv's layout is POSIX's here")
def test_fmu_runs_in_a_venv_that_has_only_fmpy(fmus, tmp_path):
    # The exported FMU needs no Python package of blocksim: a new venv holding only fmpy
    # (and what fmpy imports) loads the FMU's binary and runs it, from another folder.
    python = _venv_with_only_fmpy(tmp_path, fmus[3, "cs"])
    code = ("import importlib.util, fmpy; "
            "assert importlib.util.find_spec('blocksim') is None, 'blocksim importable'; "
            "r = fmpy.simulate_fmu(%r, stop_time=2, output_interval=0.01); "
            "print(r['x'][-1])" % str(fmus[3, "cs"]))
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    res = blocksim.simulate(blocksim.load(BALL), stop_time=2)
    assert abs(float(done.stdout) - res["x"][-1]) < 1e-11
