"""Outputs of `blocksim run` never destroy data: paths are checked before the run, a write
that fails after it keeps the results elsewhere, Ctrl-C keeps what was computed."""
import csv
import hashlib
from pathlib import Path

import pytest

from test_cli import LAG, run, write

ROOT = Path(__file__).resolve().parents[1]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("option", ["--out", "--events"])
@pytest.mark.parametrize("spelling", ["same", "relative", "dotted", "symlink"])
def test_an_output_that_is_the_diagram_is_refused_and_the_diagram_kept(tmp_path, capsys,
                                                                         monkeypatch, option,
                                                                         spelling):
    path = write(tmp_path, LAG)
    before = digest(path)
    monkeypatch.chdir(tmp_path)
    if spelling == "symlink":
        (tmp_path / "link.json").symlink_to(path)
    target = {"same": path, "relative": "d.json", "dotted": tmp_path / "x" / ".." / "d.json",
              "symlink": tmp_path / "link.json"}[spelling]
    code, out, err = run(["run", path, option, target], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "the diagram being run" in err and option in err
    assert digest(path) == before and out == ""


def test_two_outputs_on_one_file_are_refused(tmp_path, capsys):
    path = write(tmp_path, LAG)
    code, _, err = run(["run", path, "--out", tmp_path / "r.npz", "--events",
                        tmp_path / "r.npz"], capsys)
    assert code == 2 and "also the --out file" in err
    assert not (tmp_path / "r.npz").exists()


@pytest.mark.parametrize("case", ["missing folder", "a folder", "read-only"])
def test_unwritable_outputs_are_refused_before_the_run(tmp_path, capsys, monkeypatch, case):
    path = write(tmp_path, LAG)
    ran = []
    from blocksim.engine import Simulator
    monkeypatch.setattr(Simulator, "run", lambda self: ran.append(1))
    if case == "missing folder":
        out, expected = tmp_path / "nowhere" / "r.csv", "does not exist"
    elif case == "a folder":
        out, expected = tmp_path, "is a folder"
    else:
        # /proc refuses new files even to root (a chmod would not stop root)
        out, expected = Path("/proc/blocksim-results.csv"), "cannot write in /proc"
    code, _, err = run(["run", path, "--out", out], capsys)
    assert code == 2 and expected in err and err.count("\n") == 1
    assert ran == []


def test_a_write_that_fails_after_the_run_keeps_the_results_beside(tmp_path, capsys,
                                                                     monkeypatch):
    path = write(tmp_path, LAG)
    outdir = tmp_path / "out"
    outdir.mkdir()
    from blocksim.engine import Simulator
    real_run = Simulator.run

    def run_then_lose_the_folder(self):
        results = real_run(self)
        outdir.rmdir()  # the folder disappears while the run goes on
        return results

    monkeypatch.setattr(Simulator, "run", run_then_lose_the_folder)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["run", path, "--out", outdir / "r.csv"], capsys)
    assert code == 1
    assert "cannot write --out" in err and "written to" in err
    rescued = Path(err.split("written to ")[1].split(" instead")[0])
    assert rescued.parent == tmp_path and rescued.name.startswith("r.unsaved-")
    rows = list(csv.reader(rescued.open()))
    assert rows[0] == ["time", "y"] and len(rows) == 7


def test_run_and_render_name_the_files_they_wrote(tmp_path, capsys):
    path = write(tmp_path, LAG)
    code, _, err = run(["run", path, "--out", tmp_path / "r.csv", "--events",
                        tmp_path / "e.csv"], capsys)
    assert code == 0
    assert f"wrote {tmp_path / 'r.csv'} (6 rows), {tmp_path / 'e.csv'} (1 event)" in err
    pytest.importorskip("PySide6")
    code, _, err = run(["render", path, "--out", tmp_path / "d.svg"], capsys)
    assert code == 0 and err == f"blocksim: wrote {tmp_path / 'd.svg'}\n"


def test_the_table_without_out_says_it_is_the_last_rows(tmp_path, capsys):
    path = write(tmp_path, {**LAG, "simulation": {"stop": 2.0, "output_interval": 0.1}})
    code, out, err = run(["run", path], capsys)
    assert code == 0 and "the last 12 of 22 rows" in err
    assert len(out.splitlines()) == 13


OVERFLOW = {"format": "blocksim", "version": 1, "simulation": {"stop": 1.0},
            "blocks": [{"id": "c", "type": "Constant", "params": {"value": 1e308}},
                       {"id": "k", "type": "Gain", "params": {"k": 10}},
                       {"id": "y", "type": "Output"}],
            "wires": [{"src": "c.y", "dst": "k.u"}, {"src": "k.y", "dst": "y.u"}]}


def test_a_logged_signal_that_overflows_is_a_warning_or_with_strict_a_failure(tmp_path, capsys):
    path = write(tmp_path, OVERFLOW)
    code, _, err = run(["run", path, "--out", tmp_path / "r.csv"], capsys)
    assert code == 0 and "warning" in err and "'k'" in err
    code, _, err = run(["run", path, "--out", tmp_path / "s.csv", "--strict"], capsys)
    assert code == 1 and "simulation failed" in err and "'k'" in err
    assert (tmp_path / "s.csv").exists()  # the rows up to the failure


def test_examples_are_listed_with_their_summaries_and_run_by_name(tmp_path, capsys,
                                                                  monkeypatch):
    from blocksim.diagram.examples import example_name, example_paths

    code, out, _ = run(["examples"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("bouncing_ball ")
    assert "ARGESIM C21 bouncing ball" in lines[0]
    assert [line.split()[0] for line in lines[:len(example_paths())]] == [
        example_name(p) for p in example_paths()]
    assert "physical/c21_diode_ideal" in out  # a topic folder's examples, named with it
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["validate", "math003"], capsys)
    assert code == 0
    code, _, err = run(["validate", "physical/c21_diode_ideal"], capsys)
    assert code == 0
    code, _, err = run(["validate", "physical/../math003"], capsys)
    assert code == 2
    code, _, err = run(["run", "no_such_example"], capsys)
    assert code == 2 and "no such file, and no example of that name" in err


def test_describe_a_diagram_lists_each_blocks_resolved_rate(capsys):
    code, out, _ = run(["describe", "zoh_loop"], capsys)
    lines = {line.split()[0]: line.split(None, 2)[2] for line in out.splitlines()[1:]}
    assert code == 0 and "1 discrete rate" in out.splitlines()[0]
    assert lines["hold"] == "discrete 0.1 s" and lines["u"] == "discrete 0.1 s"
    assert lines["plant"] == "continuous" and lines["step"] == "continuous"
    code, out, _ = run(["describe", "UnitDelay"], capsys)
    assert code == 0 and "Sample time: discrete, by its sample_time parameter" in out


def test_a_named_pipe_nobody_reads_is_refused_before_the_run(tmp_path, capsys):
    import os
    path = write(tmp_path, LAG)
    pipe = tmp_path / "pipe.csv"
    os.mkfifo(pipe)
    code, out, err = run(["run", path, "--out", pipe], capsys)
    assert code == 2 and "named pipe" in err and "no program reads" in err
    assert pipe.is_fifo()


def test_a_named_pipe_with_a_reader_gets_the_results(tmp_path, capsys):
    import os
    import threading
    path = write(tmp_path, LAG)
    pipe = tmp_path / "pipe.csv"
    os.mkfifo(pipe)
    received: list[bytes] = []
    fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # a reader, present before the run

    def read_all() -> None:
        import select
        chunks = []
        while True:
            select.select([fd], [], [], 10.0)
            data = os.read(fd, 65536)
            if not data and chunks:
                break
            chunks.append(data)
        received.append(b"".join(chunks))

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    code, _, err = run(["run", path, "--out", pipe], capsys)
    reader.join(30)
    os.close(fd)
    assert code == 0, err
    code, _, _ = run(["run", path, "--out", tmp_path / "file.csv"], capsys)
    assert received[0] == (tmp_path / "file.csv").read_bytes()


def test_describe_of_an_unknown_type_suggests_close_names_in_one_short_line(capsys):
    code, _, err = run(["describe", "Gian"], capsys)
    assert code == 2 and "did you mean Gain" in err and err.count("\n") == 1
    code, _, err = run(["describe", "G" * 100_000], capsys)
    assert code == 2 and err.count("\n") == 1


def test_a_diagram_name_too_long_for_the_file_system_is_a_message(tmp_path, capsys):
    code, _, err = run(["validate", str(tmp_path / ("n" * 300 + ".json"))], capsys)
    assert code == 2 and "too long" in err and "Traceback" not in err


def test_run_time_in_the_summary_reads_in_units_a_person_uses():
    from blocksim.cli.outputs import duration

    assert duration(2.4149) == "2.41 s"
    assert duration(0.0382) == "38.2 ms"
    assert duration(0.00059) == "590 µs"  # a C-backend run: was "0.001 s"
    assert duration(0.0) == "0 µs"
    assert duration(0.99996) == "1.00 s" and duration(0.0009999) == "1 ms"
