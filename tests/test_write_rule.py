"""The write rule (issue 25): a diagram's blocks write only inside the diagram's folder unless
the user allows the file, never onto a FIFO, never onto a file the run reads or writes; the
user's --out/--events never onto the diagram's inputs either. Each refusal is one line
naming the block (or option) and the file, before anything runs."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from builders import block, diagram
from hostile.cases.writes import writer

import blocksim
from blocksim.cli.main import main
from blocksim.engine import Simulator
from blocksim.errors import BlocksimError
from blocksim.files import write_rule
from blocksim.files.write_rule import WriteRefused
from blocksim.user import trust

USERS = "the user's own file\n"


def project(tmp_path: Path, *files: str, reader: str | None = None, name: str = "d.json",
            python: str | None = None, sub: bool = False) -> Path:
    """A cloned project: tmp_path/proj/`name`, a Constant (or a FromFile reading `reader`)
    into ToFile blocks `log`, `log2`, ... writing `files` (the first inside a subsystem
    `sub` if asked); tmp_path itself stands for the user's home."""
    folder = tmp_path / "proj"
    folder.mkdir(exist_ok=True)
    d = writer(*files, reader=reader, python=python, inside="sub" if sub else "", ids="log")
    (folder / name).write_text(json.dumps(d))
    if reader and not (folder / reader).exists():
        (folder / reader).write_text("time,y\n0,1\n1,2\n")
    return folder / name


def files_of(path: Path, trusted=()) -> write_rule.RunFiles:
    return blocksim.compile(blocksim.load(path, trust=list(trusted))).files


def refusal(path: Path, outputs=(), allow=(), runs=1, trusted=()) -> WriteRefused:
    with pytest.raises(WriteRefused) as info:
        write_rule.check(files_of(path, trusted), list(outputs), allow, runs)
    assert "\n" not in str(info.value)
    return info.value


# ----- the folder -----

@pytest.mark.parametrize("name, file", [("absolute", "{home}/exp.csv"),
                                        ("dotdot", "../exp.csv"),
                                        ("dotdot-through-a-folder", "sub/../../exp.csv")])
def test_a_file_outside_the_folder_is_refused_naming_block_file_and_how_to_allow(
        tmp_path, name, file):
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    path = project(tmp_path, file.format(home=tmp_path))
    error = refusal(path)
    target = str(tmp_path / "exp.csv")
    assert error.block == "log" and error.allowable == (target,)
    assert f"'{file.format(home=tmp_path)}'" in str(error)
    assert f"outside the diagram's folder {tmp_path / 'proj'}" in str(error)
    assert f"--allow-write {target}" in str(error)


def test_a_symlink_shipped_in_the_project_is_followed(tmp_path):
    """The issue's case: `results.csv -> ../../.bashrc` in a cloned repository."""
    (tmp_path / ".bashrc").write_text(USERS)
    path = project(tmp_path, "results.csv")
    (path.parent / "results.csv").symlink_to("../.bashrc")
    error = refusal(path)
    assert error.allowable == (str(tmp_path / ".bashrc"),)
    assert f"'results.csv' (a symlink leads it to {tmp_path / '.bashrc'})" in str(error)
    # a dangling one too: the file it would create is outside
    (path.parent / "results.csv").unlink()
    (path.parent / "results.csv").symlink_to("../new.csv")
    assert refusal(path).allowable == (str(tmp_path / "new.csv"),)


def test_a_symlinked_folder_that_leaves_the_project_is_followed(tmp_path):
    path = project(tmp_path, "out/r.csv")
    (path.parent / "out").symlink_to(tmp_path)
    assert refusal(path).allowable == (str(tmp_path / "r.csv"),)


def test_inside_the_folder_is_allowed_however_named(tmp_path):
    folder = tmp_path / "proj"
    (folder / "out" / "deep").mkdir(parents=True)
    (folder / "real").mkdir()
    (folder / "link.csv").symlink_to("real/target.csv")  # a symlink that stays inside
    for file in ("r.csv", "out/deep/r.csv", "out/../r2.csv", str(folder / "abs.csv"),
                 "link.csv"):
        write_rule.check(files_of(project(tmp_path, file)))


def test_a_project_reached_through_a_symlink_is_judged_where_it_is(tmp_path):
    path = project(tmp_path, "r.csv")
    (tmp_path / "alias").symlink_to(path.parent)
    write_rule.check(files_of(tmp_path / "alias" / "d.json"))


def test_a_block_in_a_subsystem_is_named_by_its_path(tmp_path):
    error = refusal(project(tmp_path, "../x.csv", sub=True))
    assert error.block == "sub/log" and "block 'sub/log'" in str(error)


def test_several_files_outside_are_all_allowable_at_once(tmp_path):
    error = refusal(project(tmp_path, "../a.csv", "in.csv", "../b.csv"))
    assert error.allowable == (str(tmp_path / "a.csv"), str(tmp_path / "b.csv"))
    assert "(and 1 other file outside it)" in str(error)


# ----- allowing -----

def test_allow_write_names_a_file_or_a_folder_around_it(tmp_path):
    (tmp_path / "data").mkdir()
    files = files_of(project(tmp_path, "../data/exp.csv"))
    write_rule.check(files, allow=[tmp_path / "data" / "exp.csv"])
    write_rule.check(files, allow=[tmp_path / "data"])
    write_rule.check(files, allow=[str(tmp_path)])
    (tmp_path / "data-link").symlink_to(tmp_path / "data")
    write_rule.check(files, allow=[tmp_path / "data-link"])  # judged where it leads
    for other in (tmp_path / "data" / "other.csv", tmp_path / "proj",
                  tmp_path / "dat"):  # (a name that begins the same is not a folder above)
        with pytest.raises(WriteRefused):
            write_rule.check(files, allow=[other])


@pytest.mark.parametrize("bad", ["", "a\x00b", None])
def test_an_empty_allowance_is_refused_not_taken_for_the_current_folder(tmp_path, bad):
    files = files_of(project(tmp_path, "r.csv"))
    with pytest.raises(BlocksimError, match="--allow-write needs the path"):
        write_rule.check(files, allow=[bad])


def test_a_diagram_without_a_file_is_its_authors_own_but_collisions_still_count(tmp_path):
    d = diagram([block("c", "Constant"), block("log", "ToFile", file=str(tmp_path / "x.csv"))],
                [("c.y", "log.u")], stop=1.0)
    model = blocksim.compile(d)
    assert model.files.folder is None
    write_rule.check(model.files)
    two = diagram([block("c", "Constant"), block("a", "ToFile", file=str(tmp_path / "x.csv")),
                   block("b", "ToFile", file=str(tmp_path / "x.csv"))],
                  [("c.y", "a.u"), ("c.y", "b.u")], stop=1.0)
    with pytest.raises(WriteRefused, match="block 'b'.*also the file block 'a' writes"):
        write_rule.check(blocksim.compile(two).files)


# ----- collisions: never, whatever is allowed -----

def test_a_diagram_saved_as_csv_that_writes_itself_is_refused(tmp_path):
    path = project(tmp_path, "d.csv", name="d.csv")
    error = refusal(path, allow=[tmp_path])
    assert error.allowable == () and "is the diagram being run" in str(error)


def test_writing_the_diagram_through_a_symlink_is_refused(tmp_path):
    path = project(tmp_path, "results.csv")
    (path.parent / "results.csv").symlink_to("d.json")
    assert "the diagram being run" in str(refusal(path))


def test_writing_its_own_fromfile_input_is_refused(tmp_path):
    path = project(tmp_path, "data.csv", reader="data.csv")
    assert "is the file block 'src' reads" in str(refusal(path))
    link = project(tmp_path, "copy.csv", reader="data.csv")
    (link.parent / "copy.csv").symlink_to("data.csv")
    assert "block 'log'" in str(refusal(link))


def test_two_blocks_on_one_file_are_refused_naming_both(tmp_path):
    error = refusal(project(tmp_path, "o.csv", "./sub/../o.csv"))
    assert error.block == "log2" and "also the file block 'log' writes" in str(error)


def test_a_hard_link_is_the_same_file(tmp_path):
    path = project(tmp_path, "alias.csv", reader="data.csv")
    os.link(path.parent / "data.csv", path.parent / "alias.csv")
    assert "the file block 'src' reads" in str(refusal(path))


def test_writing_a_trusted_python_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(trust.ALLOW_LIST_ENV, str(tmp_path / "allow.txt"))
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "wr_blocks.py").write_text(
        "from blocksim.blocktypes.blockspec import Port\nfrom blocksim.user import UserBlock\n"
        "class WriteRuleOne(UserBlock):\n    name = 'WriteRuleOne'\n"
        "    outputs = (Port('y'),)\n    @staticmethod\n    def out(t, x, d, u, p):\n"
        "        return (1.0,)\nBLOCK_TYPES = (WriteRuleOne,)\n")
    path = project(tmp_path, "blocks.csv", python="wr_blocks.py")
    (folder / "blocks.csv").symlink_to("wr_blocks.py")
    error = refusal(path, trusted=[folder / "wr_blocks.py"])
    assert "the Python file 'wr_blocks.py' of the diagram's block types" in str(error)
    out = write_rule.output_use("--out", folder / "wr_blocks.py")
    with pytest.raises(WriteRefused, match="--out .*wr_blocks.py: that is the Python file"):
        write_rule.check(files_of(project(tmp_path, python="wr_blocks.py", name="e.json"),
                                  [folder / "wr_blocks.py"]), [out])


def test_a_fifo_is_never_written_by_a_block(tmp_path):
    path = project(tmp_path, "pipe.csv")
    os.mkfifo(path.parent / "pipe.csv")
    error = refusal(path, allow=[path.parent / "pipe.csv"])
    assert "is a FIFO (named pipe), not a regular file" in str(error)


def test_a_symlink_loop_is_one_line(tmp_path):
    path = project(tmp_path, "loop.csv")
    (path.parent / "loop.csv").symlink_to("loop.csv")
    assert "cannot write its file 'loop.csv'" in str(refusal(path))


@pytest.mark.parametrize("option", ["--out", "--events"])
def test_outputs_onto_the_runs_files_are_refused_naming_both(tmp_path, option):
    path = project(tmp_path, "o.csv")
    error = refusal(path, [write_rule.output_use(option, path.parent / "o.csv")])
    assert str(error).startswith(f"{option} {path.parent / 'o.csv'}: that is also the file "
                                 f"block 'log' writes")
    reader = project(tmp_path, reader="data.csv", name="r.json")
    error = refusal(reader, [write_rule.output_use(option, reader.parent / "data.csv")])
    assert "that is the file block 'src' reads" in str(error)


def test_a_device_output_collides_with_nothing(tmp_path):
    write_rule.check(files_of(project(tmp_path, "o.csv")),
                     [write_rule.output_use("--out", os.devnull),
                      write_rule.output_use("--events", os.devnull)])


# ----- sweeps: each run would write the file again -----

def test_in_a_sweep_a_block_file_needs_an_allowance(tmp_path):
    files = files_of(project(tmp_path, "o.csv"))
    write_rule.check(files, runs=1)
    with pytest.raises(WriteRefused, match="written again by each of the 4 runs") as info:
        write_rule.check(files, runs=4)
    assert info.value.allowable == (str(tmp_path / "proj" / "o.csv"),)
    write_rule.check(files, allow=[tmp_path / "proj" / "o.csv"], runs=4)


# ----- the API -----

def test_simulate_applies_the_rule_to_a_diagram_from_a_file_and_its_model(tmp_path):
    (tmp_path / "exp.csv").write_text(USERS)
    path = project(tmp_path, "../exp.csv")
    d = blocksim.load(path)
    with pytest.raises(WriteRefused):
        blocksim.simulate(d)
    with pytest.raises(WriteRefused):
        blocksim.simulate(blocksim.compile(d))
    assert (tmp_path / "exp.csv").read_text() == USERS
    r = blocksim.simulate(d, allow_write=[tmp_path / "exp.csv"])
    assert r.written == (("log", f"{tmp_path / 'exp.csv'} (3 rows)"),)
    assert np.loadtxt(tmp_path / "exp.csv", delimiter=",", skiprows=1).shape == (3, 2)


def test_results_say_where_a_symlink_led_the_write(tmp_path):
    path = project(tmp_path, "link.csv")
    (path.parent / "real").mkdir()
    (path.parent / "link.csv").symlink_to("real/data.csv")
    r = blocksim.simulate(blocksim.load(path))
    assert r.written == (("log", f"{path.parent / 'link.csv'} (-> "
                                 f"{path.parent / 'real' / 'data.csv'}) (3 rows)"),)


def test_a_diagram_built_in_python_writes_where_its_author_says(tmp_path):
    d = diagram([block("c", "Constant"), block("log", "ToFile", file=str(tmp_path / "x.csv"))],
                [("c.y", "log.u")], stop=1.0, output_interval=0.5)
    assert blocksim.simulate(d).written[0][0] == "log"
    assert (tmp_path / "x.csv").exists()


# ----- the command line -----

def cli(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_run_and_validate_refuse_in_one_line_and_nothing_runs(tmp_path, capsys, monkeypatch):
    (tmp_path / "exp.csv").write_text(USERS)
    path = project(tmp_path, "../exp.csv")
    ran = []
    monkeypatch.setattr(Simulator, "run", lambda self: ran.append(1))
    for command in (["run", path, "--out", tmp_path / "r.csv"], ["validate", path]):
        code, out, err = cli(command, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith(f"blocksim: {path}, block 'log': its file '../exp.csv'")
    assert ran == [] and not (tmp_path / "r.csv").exists()
    assert (tmp_path / "exp.csv").read_text() == USERS
    code, out, err = cli(["validate", path, "--allow-write", tmp_path / "exp.csv"], capsys)
    assert code == 0 and ": ok (" in out


def test_run_names_each_file_its_blocks_wrote_unless_quiet(tmp_path, capsys, monkeypatch):
    path = project(tmp_path, "a.csv", "out/b.npz")
    (path.parent / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(["run", path, "--out", "r.csv"], capsys)
    assert code == 0
    lines = err.splitlines()
    assert lines[:3] == ["blocksim: wrote r.csv (3 rows)",
                         f"blocksim: block 'log' wrote {path.parent / 'a.csv'} (3 rows)",
                         f"blocksim: block 'log2' wrote {path.parent / 'out' / 'b.npz'} "
                         f"(3 rows)"]
    code, out, err = cli(["run", path, "-q"], capsys)
    assert code == 0 and err == "" and out == ""


def test_run_allow_write_is_repeatable(tmp_path, capsys):
    path = project(tmp_path, "../a.csv", "../b/c.csv")
    (tmp_path / "b").mkdir()
    code, _, err = cli(["run", path, "-q", "--allow-write", tmp_path / "a.csv"], capsys)
    assert code == 2 and "block 'log2'" in err
    code, _, err = cli(["run", path, "-q", "--allow-write", tmp_path / "a.csv",
                        "--allow-write", tmp_path / "b"], capsys)
    assert code == 0 and (tmp_path / "b" / "c.csv").exists()


def test_out_onto_the_fromfile_data_is_refused_and_the_data_kept(tmp_path, capsys):
    path = project(tmp_path, reader="data.csv")
    data = (path.parent / "data.csv").read_text()
    for option in ("--out", "--events"):
        code, _, err = cli(["run", path, option, path.parent / "data.csv"], capsys)
        assert code == 2 and err.count("\n") == 1
        assert "that is the file block 'src' reads" in err
    assert (path.parent / "data.csv").read_text() == data
    assert cli(["run", path, "-q"], capsys)[0] == 0  # the next run still has its data


# ----- sweeps -----

def test_a_sweep_refuses_a_block_file_unless_allowed_then_each_run_writes_it(tmp_path, capsys):
    path = project(tmp_path, "o.csv")
    table = tmp_path / "runs.csv"
    args = ["sweep", path, "--grid", "k=1:3:3", "--workers", "1", "--metric", "final:log",
            "-q", "--out", table]
    code, _, err = cli(args, capsys)
    assert code == 2 and err.count("\n") == 1 and "block 'log'" in err
    assert "written again by each of the 3 runs" in err and "--allow-write" in err
    assert not table.exists() and not (path.parent / "o.csv").exists()
    code, _, err = cli([*args, "--allow-write", path.parent / "o.csv"], capsys)
    assert code == 0, err
    assert np.loadtxt(path.parent / "o.csv", delimiter=",", skiprows=1)[0, 1] in (1, 2, 3)


def test_a_sweeps_table_is_never_its_data_nor_a_block_file(tmp_path, capsys):
    reader = project(tmp_path, reader="data.csv")
    data = (reader.parent / "data.csv").read_text()
    code, _, err = cli(["sweep", reader, "--grid", "k=1:2:2", "--workers", "1", "-q",
                        "--out", reader.parent / "data.csv"], capsys)
    assert code == 2 and "--out" in err and "the file block 'src' reads" in err
    assert (reader.parent / "data.csv").read_text() == data
    writer = project(tmp_path, "o.csv", name="w.json")
    with pytest.raises(WriteRefused, match="also the file block 'log' writes"):
        blocksim.sweep(writer, grid={"k": [1.0, 2.0]}, workers=1, out=writer.parent / "o.csv",
                       allow_write=[writer.parent])


def test_a_sweep_of_a_diagram_built_in_python_also_asks_for_its_block_file(tmp_path):
    d = diagram([block("c", "Constant", value="k"),
                 block("log", "ToFile", file=str(tmp_path / "x.csv"))],
                [("c.y", "log.u")], {"k": 1.0}, stop=1.0)
    with pytest.raises(WriteRefused, match="each of the 2 runs"):
        blocksim.sweep(d, grid={"k": [1.0, 2.0]}, workers=1)
    table = blocksim.sweep(d, grid={"k": [1.0, 2.0]}, workers=1,
                           allow_write=[tmp_path / "x.csv"])
    assert table.counts() == {"finished": 2}
