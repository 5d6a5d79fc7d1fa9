"""FMUs on the command line: trust (an untrusted FMU's binary never loads), one clear line
for every bad FMU, and `blocksim describe FILE.fmu`."""
from __future__ import annotations

import zipfile

import pytest

from blocksim.cli.main import main

from fmu_helpers import place, write_diagram


def cli(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_fmu(tmp_path, name, **params):
    blocks = [{"id": "ball", "type": "FMU", "params": {"file": name, **params}},
              {"id": "h", "type": "Output"}]
    return write_diagram(tmp_path, blocks, [{"src": "ball.h", "dst": "h.u"}], stop=0.5)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("version", (2, 3))
def test_an_untrusted_fmu_is_refused_and_its_binary_never_loaded(tmp_path, build_fmu,
                                                                 capsys, version):
    touched = tmp_path / "touched"
    fmu = build_fmu("ball", version, "_touch", {"TOUCH_FILE": f'"{touched}"'})
    path = one_fmu(tmp_path, place(fmu, tmp_path, "evil.fmu"))
    for command in (["run", path], ["validate", path], ["describe", path]):
        code, _, err = cli(command, capsys)
        line = one_line(err)
        assert code == 2
        assert "--trust evil.fmu" in line or "--trust " in line and "evil.fmu" in line
        assert "blocksim trust" in line
    assert not touched.exists()
    # the control: trusted, the same FMU does write its file when it is instantiated
    code, _, err = cli(["trust", tmp_path / "evil.fmu"], capsys)
    assert code == 0, err
    code, _, err = cli(["run", path, "-q"], capsys)
    assert code == 0, err
    assert touched.exists()


def test_an_fmu_changed_after_it_was_trusted_is_refused(tmp_path, build_fmu, capsys):
    name = place(build_fmu("ball", 2), tmp_path, "m.fmu")
    path = one_fmu(tmp_path, name)
    assert cli(["trust", tmp_path / name], capsys)[0] == 0
    assert cli(["run", path, "-q"], capsys)[0] == 0
    place(build_fmu("square", 2), tmp_path, name)  # another FMU under the trusted name
    code, _, err = cli(["run", path], capsys)
    assert code == 2 and "changed since you trusted it" in one_line(err)


def test_trust_on_the_command_line_runs_it(tmp_path, build_fmu, capsys):
    name = place(build_fmu("ball", 3), tmp_path)
    path = one_fmu(tmp_path, name)
    code, _, err = cli(["run", path, "--trust", tmp_path / name, "-q"], capsys)
    assert code == 0, err


def _zip(path, entries):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)


def bad_fmus(tmp_path, build_fmu):
    """(file name, what the line says) of FMUs that cannot be used."""
    good = build_fmu("ball", 2)
    with zipfile.ZipFile(good) as zf:
        xml = zf.read("modelDescription.xml").decode()
    (tmp_path / "plain.fmu").write_text("not a zip at all")
    _zip(tmp_path / "nomd.fmu", {"readme.txt": "hello"})
    _zip(tmp_path / "invalid.fmu", {"modelDescription.xml": xml.replace(
        'name="v"', 'name="h"')})  # two variables of one name
    _zip(tmp_path / "noxml.fmu", {"modelDescription.xml": "<fmiModelDescription"})
    _zip(tmp_path / "nobinary.fmu", {"modelDescription.xml": xml})
    return [("missing.fmu", "does not exist"), ("plain.fmu", "not a zip archive"),
            ("nomd.fmu", "no modelDescription.xml"), ("invalid.fmu", "does not validate"),
            ("noxml.fmu", "cannot be read"), ("nobinary.fmu", "no binary for this platform")]


def test_each_bad_fmu_is_one_line_naming_block_and_file(tmp_path, build_fmu, capsys):
    for name, says in bad_fmus(tmp_path, build_fmu):
        path = one_fmu(tmp_path, name)
        code, _, err = cli(["validate", path, "--trust", tmp_path / name], capsys)
        line = one_line(err)
        assert code == 2, line
        assert "block 'ball'" in line and name in line and says in line, line


@pytest.mark.parametrize("version", (2, 3))
def test_an_fmu_that_fails_to_instantiate_is_one_line(tmp_path, build_fmu, capsys, version):
    fmu = build_fmu("ball", version, "_noinst", {"FAIL_INSTANTIATE": "1"})
    name = place(fmu, tmp_path)
    path = one_fmu(tmp_path, name)
    code, _, err = cli(["run", path, "--trust", tmp_path / name], capsys)
    line = one_line(err)
    assert code == 2
    assert "block 'ball'" in line and name in line and "cannot start" in line
    assert "always fails to instantiate" in line  # the FMU's own log message


def test_an_error_status_during_the_run_exits_1_with_one_line(tmp_path, build_fmu, capsys):
    fmu = build_fmu("ball", 2, "_fails", {"FAIL_AT_TIME": "0.2"})
    name = place(fmu, tmp_path)
    path = one_fmu(tmp_path, name)
    code, _, err = cli(["run", path, "--trust", tmp_path / name, "-q"], capsys)
    assert code == 1
    assert "failed on purpose" in one_line(err)


def test_an_interface_the_fmu_lacks_is_named(tmp_path, build_fmu, capsys):
    good = build_fmu("ball", 2)
    with zipfile.ZipFile(good) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    xml = entries["modelDescription.xml"].decode()
    start = xml.index("<CoSimulation")
    entries["modelDescription.xml"] = xml[:start] + xml[xml.index("/>", start) + 2:]
    _zip(tmp_path / "me.fmu", entries)
    path = one_fmu(tmp_path, "me.fmu", interface="co_simulation")
    code, _, err = cli(["validate", path, "--trust", tmp_path / "me.fmu"], capsys)
    assert code == 2 and "does not offer co_simulation" in one_line(err)


@pytest.mark.parametrize("version", (2, 3))
def test_describe_an_fmu_lists_variables_and_capabilities(tmp_path, build_fmu, capsys,
                                                          version):
    fmu = build_fmu("math003", version)
    code, out, err = cli(["describe", fmu], capsys)
    assert code == 0, err
    assert f"FMI {version}.0" in out
    assert "model exchange" in out and "co-simulation" in out
    for text in ("x1", "x2", "x3", "x4", "limit", "2.5", "states: 1", "event indicators: 2"):
        assert text in out, text
    assert "x3 <- x1, x2" in out  # an output's direct dependencies


def test_describe_a_bad_fmu_is_one_line(tmp_path, capsys):
    (tmp_path / "bad.fmu").write_bytes(b"PK\x03\x04 broken")
    code, _, err = cli(["describe", tmp_path / "bad.fmu"], capsys)
    assert code == 2 and "bad.fmu" in one_line(err)


def test_the_fmu_block_documents_itself(capsys):
    code, out, _ = cli(["describe", "FMU"], capsys)
    assert code == 0
    assert "model_exchange" in out and "communication_step" in out


def test_a_zip_entry_outside_its_folder_is_refused(tmp_path, build_fmu, capsys):
    good = build_fmu("ball", 2)
    with zipfile.ZipFile(good) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    entries["../../escaped.txt"] = b"x"
    _zip(tmp_path / "escape.fmu", entries)
    path = one_fmu(tmp_path, "escape.fmu")
    code, _, err = cli(["run", path, "--trust", tmp_path / "escape.fmu"], capsys)
    assert code == 2 and "outside its folder" in one_line(err)
    assert not (tmp_path.parent / "escaped.txt").exists()


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs here")
def test_an_fmu_that_is_a_fifo_is_one_line_and_no_hang(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "pipe.fmu")
    path = one_fmu(tmp_path, "pipe.fmu")
    code, _, err = cli(["validate", path], capsys)
    line = one_line(err)
    assert code == 2 and "block 'ball'" in line and "FIFO" in line


@pytest.mark.parametrize("version", (2, 3))
def test_an_fmu_that_crashes_as_it_starts_is_one_line(tmp_path, build_fmu, capsys, version):
    from blocksim.fmi import probe

    if not probe.can_probe():
        pytest.skip("no fork here, or other threads run: the crash is not caught")
    fmu = build_fmu("ball", version, "_crash", {"CRASH_INSTANTIATE": "1"})
    name = place(fmu, tmp_path)
    path = one_fmu(tmp_path, name)
    code, _, err = cli(["run", path, "--trust", tmp_path / name], capsys)
    line = one_line(err)
    assert code == 2
    assert "block 'ball'" in line and name in line and "segmentation fault" in line


def test_without_fmpy_an_fmu_diagram_says_what_to_install(tmp_path, capsys, monkeypatch):
    import sys

    from blocksim.fmi import archive

    monkeypatch.setitem(sys.modules, "fmpy", None)  # as if not installed
    monkeypatch.setattr(archive, "_CACHE", {})
    _zip(tmp_path / "m.fmu", {"modelDescription.xml": "<fmiModelDescription/>"})
    path = one_fmu(tmp_path, "m.fmu")
    code, _, err = cli(["validate", path, "--trust", tmp_path / "m.fmu"], capsys)
    assert code == 2 and "pip install 'blocksim[fmi]'" in one_line(err)


def test_set_on_the_command_line_reaches_the_fmu(tmp_path, build_fmu, capsys):
    import csv
    import json

    name = place(build_fmu("ball", 2), tmp_path)
    path = one_fmu(tmp_path, name, parameters="h0 = drop")
    data = json.loads(path.read_text())
    data["parameters"] = {"drop": 1.0}
    path.write_text(json.dumps(data))
    events = tmp_path / "ev.csv"
    code, _, err = cli(["run", path, "--trust", tmp_path / name, "--set", "drop=0.25",
                        "--events", events, "-q"], capsys)
    assert code == 0, err
    with open(events) as fh:
        first = next(float(row["time"]) for row in csv.DictReader(fh) if row["kind"] == "event")
    assert abs(first - (2 * 0.25 / 9.81) ** 0.5) < 1e-12
