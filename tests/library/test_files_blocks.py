"""FromFile and ToFile: a measured signal beside its diagram (moved together, from any
working folder), the model's response against scipy's exact first-order-hold solution,
zoh and NPZ inputs, clear errors naming the block and the file, and files written
atomically at the end of every run (also a failed one, with what was computed)."""
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest
from both_backends import HAS_NUMBA, run_both
from builders import DIAGRAMS, block, diagram
from scipy import signal

import blocksim
from blocksim.cli.main import main
from blocksim.errors import CompileError, SimulationError, SimulationInterrupted
from blocksim.diagram.format import save_diagram

MEASURED = "from_file_measured.json"
CSV = "measured_signal.csv"


def measured_rows():
    data = np.loadtxt(DIAGRAMS / CSV, delimiter=",", comments="#", skiprows=2)
    return data[:, 0], data[:, 1]


def moved(tmp_path):
    """The example diagram and its CSV copied together into a fresh folder."""
    folder = tmp_path / "elsewhere" / "deeper"
    folder.mkdir(parents=True)
    shutil.copy(DIAGRAMS / MEASURED, folder)
    shutil.copy(DIAGRAMS / CSV, folder)
    return folder / MEASURED


def check_measured_run(r):
    """The voltage is the CSV interpolated linearly, the speed K/(tau s + 1) of it: scipy's
    lsim holds the input linear between samples too, so its answer is exact."""
    t, u = measured_rows()
    np.testing.assert_allclose(r["voltage"], np.interp(r.time, t, u), rtol=0, atol=1e-14)
    _, y, _ = signal.lsim(([1.5], [0.5, 1.0]), u, t)
    on_grid = np.isin(r.time, t)
    speed = np.interp(r.time[on_grid], t, y)
    np.testing.assert_allclose(r["speed"][on_grid], speed, rtol=0, atol=1e-8)
    # every sample time is an event (the first, at the start time, too)
    assert [e.time for e in r.events_of(block="measured")] == list(t)


def test_the_measured_example_matches_scipy_on_both_backends():
    d = blocksim.load(DIAGRAMS / MEASURED)
    # rtol 1e-10: a step one backend accepts and the other rejects (rounding of the host's
    # BLAS, tests/both_backends.py) parts the runs by up to about the run's tolerance
    check_measured_run(run_both(d, atol=1e-9))


def test_the_example_moved_with_its_csv_runs_from_another_working_folder(tmp_path, monkeypatch):
    path = moved(tmp_path)
    monkeypatch.chdir(tmp_path)  # neither the diagram's folder nor the repository
    check_measured_run(blocksim.simulate(blocksim.load(path)))
    out = tmp_path / "out.csv"
    assert main(["run", str(path), "--out", str(out), "-q"]) == 0
    assert out.stat().st_size > 1000


def test_the_file_is_read_at_compile_time(tmp_path):
    path = moved(tmp_path)
    model = blocksim.compile(blocksim.load(path))
    (path.parent / CSV).unlink()  # the compiled model holds the data
    check_measured_run(blocksim.simulate(model))


def test_a_diagram_without_a_file_reads_from_the_working_folder(tmp_path, monkeypatch):
    (tmp_path / "u.csv").write_text("0,1\n2,3\n")
    monkeypatch.chdir(tmp_path)
    d = diagram([block("f", "FromFile", file="u.csv"), block("y", "Output")],
                [("f.y", "y.u")], stop=3.0, output_interval=0.5)
    r = blocksim.simulate(d)
    np.testing.assert_allclose(r["y"], np.interp(r.time, [0.0, 2.0], [1.0, 3.0]), atol=1e-15)


def file_diagram(folder: Path, file: str, interpolation="linear", width=1, stop=5.0):
    """A diagram file in `folder` reading `file` into an Output `y` and an integrator
    logged as `area`."""
    d = diagram([block("f", "FromFile", file=file, interpolation=interpolation),
                 block("i", "Integrator", x0=[0.0] * width), block("y", "Output"),
                 block("area", "Output")],
                [("f.y", "i.u"), ("f.y", "y.u"), ("i.y", "area.u")], stop=stop,
                output_interval=0.25, rtol=1e-12, atol=1e-12)
    save_diagram(d, folder / "d.json")
    return blocksim.load(folder / "d.json")


def test_zoh_holds_each_row_and_every_time_is_an_exact_event(tmp_path):
    (tmp_path / "s.csv").write_text("t,u\n0.5,1\n1.25,-2\n2,4\n2,0\n3.5,7\n")
    d = file_diagram(tmp_path, "s.csv", "zoh")
    r = run_both(d)
    if HAS_NUMBA:
        model = blocksim.compile(d)
        blocksim.simulate(model, backend="numba")
        assert model.derived["native"].timed
    t = r.time
    right = np.zeros(len(t), dtype=bool)
    right[1:] = t[1:] == t[:-1]
    left = np.zeros(len(t), dtype=bool)
    left[:-1] = right[1:]
    times, values = [0.5, 1.25, 2.0, 3.5], [1.0, -2.0, 0.0, 7.0]
    probe = np.where(left, t - 1e-9, t)
    expected = np.array(values)[np.clip(np.searchsorted(times, probe, side="right") - 1, 0, 3)]
    np.testing.assert_array_equal(r["y"], expected)
    assert [e.time for e in r.events_of(block="f")] == times
    # The staircase's integral (1 up to 1.25, -2 to 2, 0 to 3.5, 7 to 5): exact only if no
    # step straddled a jump.
    assert r["area"][-1] == pytest.approx(1.25 - 1.5 + 0.0 + 10.5, abs=1e-12)


def test_npz_with_a_vector_signal(tmp_path):
    t = np.array([0.0, 1.0, 3.0])
    y = np.array([[0.0, 10.0], [2.0, 10.0], [-2.0, 4.0]])
    np.savez(tmp_path / "v.npz", t=t, y=y)
    r = run_both(file_diagram(tmp_path, "v.npz", width=2))
    expected = np.column_stack([np.interp(r.time, t, y[:, k]) for k in range(2)])
    np.testing.assert_allclose(r["y"], expected, rtol=0, atol=1e-14)
    np.savez(tmp_path / "w.npz", t=t, speed=y[:, 0])  # no 'y': its one other array
    r = blocksim.simulate(file_diagram(tmp_path, "w.npz"))
    np.testing.assert_allclose(r["y"], np.interp(r.time, t, y[:, 0]), rtol=0, atol=1e-14)


def test_a_path_outside_the_diagram_folder_works_and_is_named_when_missing(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "model").mkdir()
    (tmp_path / "data" / "u.csv").write_text("0,0\n1,1\n")
    r = blocksim.simulate(file_diagram(tmp_path / "model", "../data/u.csv"))
    assert r["y"][-1] == 1.0
    with pytest.raises(CompileError) as info:
        blocksim.compile(file_diagram(tmp_path / "model", "../data/gone.csv"))
    where = str(tmp_path / "data" / "gone.csv")
    assert info.value.block == "f"
    assert f"cannot read '../data/gone.csv' ({where}): no such file" in str(info.value)


@pytest.mark.parametrize("name, content, message", [
    ("a.csv", "0,0\n2,1\n1,1\n", "line 3: the time column decreases (1 after 2)"),
    ("a.csv", "time,u\n0,0\n1,x\n", "line 3, column 2: 'x' is not a number"),
    ("a.csv", "0,0\n1,1,5\n", "line 2 has 3 columns where the first row of numbers has 2"),
    ("a.csv", "0,0\n1,nan\n", "line 2: signal column 1 is nan"),
    ("a.csv", "0\n1\n", "line 1 has one column"),
    ("a.csv", "time,u\n", "it holds no rows of numbers"),
    ("a.csv", "0,0\n0,1\n0,2\n1,1\n", "line 3: time 0 appears a third time"),
    ("a.csv", "1,0\n1,1\n", "rows at two different times"),
    ("a.csv", b"\xff\xfe\x00\x01", "line 1 is not UTF-8 text"),
    ("a.npz", b"not a zip", "not a NumPy .npz archive"),
])
def test_bad_files_are_errors_naming_block_and_file(tmp_path, name, content, message):
    target = tmp_path / name
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    with pytest.raises(CompileError) as info:
        blocksim.compile(file_diagram(tmp_path, name))
    assert info.value.block == "f" and message in str(info.value)
    assert f"'{name}' ({target})" in str(info.value)


def test_bad_npz_arrays_are_errors(tmp_path):
    cases = [({"y": [1.0, 2.0]}, "it has no array 't'"),
             ({"t": [0.0, 1.0], "a": [1.0, 2.0], "b": [1.0, 2.0]}, "it has no array 'y'"),
             ({"t": [0.0, 1.0], "y": [1.0, 2.0, 3.0]}, "one value or one row per time (2)"),
             ({"t": [0.0, 1.0], "y": np.array(["a", "b"])}, "holds <U1 values, not numbers"),
             ({"t": [[0.0, 1.0]], "y": [1.0]}, "array 't' must be a vector")]
    for arrays, message in cases:
        np.savez(tmp_path / "b.npz", **arrays)
        with pytest.raises(CompileError, match="block 'f'") as info:
            blocksim.compile(file_diagram(tmp_path, "b.npz"))
        assert message in str(info.value)


@pytest.mark.parametrize("file, message", [
    ("signal.txt", "must end in .csv or .npz"), ("", "parameter 'file' is empty"),
])
def test_file_names_that_cannot_work_are_refused(tmp_path, file, message):
    reader = diagram([block("f", "FromFile", file=file), block("y", "Output")],
                     [("f.y", "y.u")])
    writer = diagram([block("c", "Constant"), block("f", "ToFile", file=file)],
                     [("c.y", "f.u")])
    for d in (reader, writer):
        with pytest.raises(CompileError) as info:
            blocksim.compile(d)
        assert info.value.block == "f" and message in str(info.value)


def test_a_folder_is_not_read(tmp_path):
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(CompileError, match="is a directory"):
        blocksim.compile(file_diagram(tmp_path, "dir.csv"))


def test_cli_reports_a_missing_file_in_one_line(tmp_path, capsys):
    path = moved(tmp_path)
    (path.parent / CSV).unlink()
    assert main(["run", str(path), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "block 'measured'" in err
    assert f"'{CSV}' ({path.parent / CSV}): no such file" in err


# ----- ToFile -----

def sink_diagram(folder: Path, file: str, stop=2.0, extra=(), wires=()):
    """A sine pair (a vector) into a ToFile `out` and an integrator, saved in `folder`."""
    d = diagram([block("s", "Sine", frequency=[1.0, 0.5]), block("i", "Integrator",
                                                                   x0=[0.0, 0.0]),
                 block("out", "ToFile", file=file), *extra],
                [("s.y", "out.u"), ("s.y", "i.u"), *wires], stop=stop, output_interval=0.1)
    save_diagram(d, folder / "sink.json")
    return blocksim.load(folder / "sink.json")


def test_to_file_writes_csv_and_npz_that_from_file_reads_back(tmp_path):
    r = run_both(sink_diagram(tmp_path, "sine.csv"))
    table = np.loadtxt(tmp_path / "sine.csv", delimiter=",", skiprows=1)
    header = (tmp_path / "sine.csv").read_text().splitlines()[0]
    assert header == "time,out[0],out[1]"
    np.testing.assert_array_equal(table[:, 0], r.time)
    np.testing.assert_array_equal(table[:, 1:], r["out"])  # full precision
    blocksim.simulate(sink_diagram(tmp_path, "sine.npz"))
    with np.load(tmp_path / "sine.npz") as z:
        np.testing.assert_array_equal(z["t"], r.time)
        np.testing.assert_array_equal(z["y"], r["out"])
    back = blocksim.simulate(file_diagram(tmp_path, "sine.npz", width=2, stop=2.0))
    on_rows = np.isin(back.time, r.time)  # between the rows FromFile interpolates
    assert on_rows.sum() > 20
    expected = np.column_stack([np.sin(2 * np.pi * back.time), np.sin(np.pi * back.time)])
    np.testing.assert_allclose(back["y"][on_rows], expected[on_rows], rtol=0, atol=1e-14)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json", "sine.csv", "sine.npz",
                                                         "sink.json"]  # no temporaries


def test_to_file_replaces_an_existing_file_and_writes_relative_to_the_diagram(tmp_path,
                                                                            monkeypatch):
    (tmp_path / "old.csv").write_text("stale\n")
    d = sink_diagram(tmp_path, "old.csv")
    monkeypatch.chdir(tmp_path.parent)
    blocksim.simulate(d)
    assert (tmp_path / "old.csv").read_text().startswith("time,out[0],out[1]\n0,0,0\n")


def test_a_failed_run_writes_what_was_computed(tmp_path):
    # sqrt(1 - t) fails past t = 1: the run ends there, the file holds the rows before.
    extra = [block("c", "Clock"), block("e", "Expression", formula="sqrt(1 - u)"),
             block("y", "Output")]
    d = sink_diagram(tmp_path, "partial.csv", stop=3.0, extra=extra,
                     wires=[("c.y", "e.u"), ("e.y", "y.u")])
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(d)
    table = np.loadtxt(tmp_path / "partial.csv", delimiter=",", skiprows=1)
    results = info.value.results
    assert results.status == "failed" and 0.9 <= table[-1, 0] <= 1.0
    np.testing.assert_array_equal(table[:, 0], results.time)
    np.testing.assert_array_equal(table[:, 1:], results["out"])


def test_a_stopped_run_writes_its_file(tmp_path):
    extra = [block("k", "Step", time=0.5), block("stop", "Stop")]
    d = sink_diagram(tmp_path, "stopped.csv", extra=extra, wires=[("k.y", "stop.u")])
    r = blocksim.simulate(d)
    assert r.status == "stopped"
    table = np.loadtxt(tmp_path / "stopped.csv", delimiter=",", skiprows=1)
    assert table[-1, 0] == 0.5 and len(table) == len(r.time)


def test_a_folder_that_does_not_exist_is_refused_before_the_run(tmp_path):
    with pytest.raises(CompileError) as info:
        blocksim.compile(sink_diagram(tmp_path, "missing/out.csv"))
    assert info.value.block == "out"
    assert f"cannot write 'missing/out.csv' ({tmp_path / 'missing' / 'out.csv'}): the folder " \
           f"does not exist" in str(info.value)
    (tmp_path / "taken.csv").mkdir()
    with pytest.raises(CompileError, match="cannot write 'taken.csv' .*: it is a folder"):
        blocksim.compile(sink_diagram(tmp_path, "taken.csv"))


def test_a_write_that_fails_after_the_run_fails_it_naming_block_and_file(tmp_path):
    (tmp_path / "gone").mkdir()
    model = blocksim.compile(sink_diagram(tmp_path, "gone/out.csv"))
    (tmp_path / "gone").rmdir()  # the folder went away during the run
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(model)
    assert info.value.block == "out"
    assert f"cannot write 'gone/out.csv' ({tmp_path / 'gone' / 'out.csv'})" in str(info.value)
    assert info.value.results.status == "failed" and info.value.results.time[-1] == 2.0


def test_the_csv_examples_ship_in_the_wheel():
    root = DIAGRAMS.parent
    setup = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert "*.csv" in setup["setuptools"]["package-data"]["blocksim.diagrams"]
    assert (DIAGRAMS / CSV).is_file()


def test_an_interrupted_run_writes_what_was_computed(tmp_path):
    def progress(fraction):
        if fraction > 0.4:
            raise KeyboardInterrupt
    d = sink_diagram(tmp_path, "cut.csv", stop=10.0)
    with pytest.raises(SimulationInterrupted) as info:
        blocksim.simulate(d, progress=progress)
    table = np.loadtxt(tmp_path / "cut.csv", delimiter=",", skiprows=1)
    results = info.value.results
    assert results.status == "interrupted" and 0.0 < table[-1, 0] < 10.0
    np.testing.assert_array_equal(table[:, 0], results.time)


def test_a_failed_run_keeps_its_own_error_when_the_write_fails_too(tmp_path):
    (tmp_path / "gone").mkdir()
    extra = [block("c", "Clock"), block("e", "Expression", formula="sqrt(1 - u)"),
             block("y", "Output")]
    model = blocksim.compile(sink_diagram(tmp_path, "gone/out.csv", stop=3.0, extra=extra,
                                          wires=[("c.y", "e.u"), ("e.y", "y.u")]))
    (tmp_path / "gone").rmdir()
    with pytest.raises(SimulationError) as info:
        blocksim.simulate(model)
    assert info.value.block == "e"  # the formula's failure, not the file's
    assert any("block 'out': cannot write 'gone/out.csv'" in w
               for w in info.value.results.warnings)
