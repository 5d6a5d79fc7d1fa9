"""A diagram that names a Python file of user blocks runs it only when trusted: without
--trust (or blocksim.load's trust=) the CLI exits 2 with one line saying how, and the
file's top level never runs (it would write a marker file). What runs is exactly the bytes
that were hashed: never a shipped .pyc, never a file swapped after the check; the
allow-list cannot be injected, loses no entry to concurrent `blocksim trust` calls, and a
broken one is one line (issue 25)."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import marshal
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.blocktypes import registry
from blocksim.cli.main import main
from blocksim.diagram.format import diagram_from_dict, diagram_to_dict
from blocksim.user import allowlist, trust

BLOCKS = '''
from pathlib import Path
Path(__file__).with_name("imported.marker").write_text("the top level ran")

from blocksim.blocktypes.blockspec import Param, Port
from blocksim.user import UserBlock, State


class TrustedDecay(UserBlock):
    """y' = -y / tau."""
    name = "TrustedDecay"
    params = (Param("tau", default=1.0, unit="s"),)
    outputs = (Port("y"),)
    states = (State("y", start=1.0),)
    feedthrough_outputs = False

    @staticmethod
    def out(t, x, d, u, p):
        return x

    @staticmethod
    def der(t, x, d, u, p):
        return (-x[0] / p.tau,)


BLOCK_TYPES = (TrustedDecay,)
'''


@pytest.fixture(autouse=True)
def own_allow_list(tmp_path, monkeypatch):
    monkeypatch.setenv(trust.ALLOW_LIST_ENV, str(tmp_path / "allow" / "trusted.txt"))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "my_blocks.py").write_text(BLOCKS)
    doc = {"format": "blocksim", "version": 1, "python": ["my_blocks.py"],
           "simulation": {"stop": 1.0, "rtol": 1e-10, "atol": 1e-12, "output_interval": 0.5},
           "blocks": [{"id": "d", "type": "TrustedDecay", "params": {"tau": 0.5}},
                      {"id": "y", "type": "Output", "params": {}}],
           "wires": [{"src": "d.y", "dst": "y.u"}]}
    (tmp_path / "decay.json").write_text(json.dumps(doc))
    yield tmp_path
    registry.unregister("TrustedDecay")
    trust._IMPORTED.clear()


@pytest.mark.parametrize("command", ["run", "validate"])
def test_untrusted_file_exits_2_in_one_line_and_never_runs(files, capsys, command):
    code = main([command, str(files / "decay.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "my_blocks.py" in err and "--trust" in err
    assert not (files / "imported.marker").exists()


def test_trusted_file_runs(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    out = files / "out.csv"
    assert main(["run", "decay.json", "--trust", "my_blocks.py", "--out", str(out), "-q"]) == 0
    assert (files / "imported.marker").exists()
    data = np.genfromtxt(out, delimiter=",", names=True)
    np.testing.assert_allclose(data["y"], np.exp(-data["time"] / 0.5), rtol=1e-9)
    capsys.readouterr()
    assert main(["describe", "decay.json", "--trust", "my_blocks.py"]) == 0
    assert "TrustedDecay" in capsys.readouterr().out


def test_python_api_needs_trust(files):
    with pytest.raises(trust.UntrustedCodeError, match="trust"):
        blocksim.load(files / "decay.json")
    assert not (files / "imported.marker").exists()
    with pytest.raises(trust.UntrustedCodeError):  # trusting another file does not do
        blocksim.load(files / "decay.json", trust=[files / "other.py"])
    d = blocksim.load(files / "decay.json", trust=True)
    assert blocksim.simulate(d)["y"][-1] == pytest.approx(np.exp(-2.0), rel=1e-9)
    with pytest.raises(trust.UntrustedCodeError):  # the builder asks too
        blocksim.DiagramBuilder.load(files / "decay.json")
    assert blocksim.DiagramBuilder.load(files / "decay.json", trust=True).simulate()
    # a second load reuses the import; the field survives a save
    d = blocksim.load(files / "decay.json", trust=[files / "my_blocks.py"])
    assert diagram_to_dict(d)["python"] == ["my_blocks.py"]


def test_files_without_the_field_stay_valid_and_bad_names_are_refused():
    base = {"format": "blocksim", "version": 1, "blocks": [], "wires": []}
    assert diagram_from_dict(dict(base)).python == []
    assert "python" not in diagram_to_dict(diagram_from_dict(dict(base)))
    with pytest.raises(blocksim.DiagramFileError, match="python"):
        diagram_from_dict({**base, "python": ["blocks.txt"]})


def test_a_file_without_block_types_is_one_line(files):
    (files / "my_blocks.py").write_text("X = 1\n")
    with pytest.raises(blocksim.DiagramFileError, match="no BLOCK_TYPES"):
        blocksim.load(Path(files / "decay.json"), trust=True)


def test_the_allow_list_trusts_a_file_until_it_changes(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    assert main(["trust", "my_blocks.py"]) == 0
    assert "trusted" in capsys.readouterr().out
    assert main(["validate", "decay.json"]) == 0
    assert (files / "imported.marker").exists()
    (files / "imported.marker").unlink()
    (files / "my_blocks.py").write_text(BLOCKS + "\n# edited\n")
    trust._IMPORTED.clear()
    assert main(["validate", "decay.json"]) == 2  # an edited file is not trusted any more
    assert "blocksim trust my_blocks.py" in capsys.readouterr().err
    assert not (files / "imported.marker").exists()
    assert main(["trust", "missing.py"]) == 2


# ----- the bytes run are the bytes hashed (issue 25) -----
EVIL = 'from pathlib import Path\nPath(__file__).with_name("PWNED").write_text("evil ran")\n'


def _pyc(code_text: str, header: bytes) -> bytes:
    return importlib.util.MAGIC_NUMBER + header + marshal.dumps(
        compile(code_text, "my_blocks.py", "exec"))


@pytest.mark.parametrize("kind", ["unchecked-hash", "timestamp"])
def test_a_shipped_pyc_beside_a_trusted_py_never_runs(files, kind, monkeypatch):
    """Python's import system would run __pycache__/my_blocks.cpython-3X.pyc instead of
    the reviewed my_blocks.py: an unchecked-hash pyc whatever the source says (and it
    survives `git clone`), a timestamp pyc whose header copies the source's mtime and size."""
    source = files / "my_blocks.py"
    info = source.stat()
    if kind == "unchecked-hash":
        header = (1).to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes())
    else:
        header = ((0).to_bytes(4, "little") + (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(
            4, "little") + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir()
    pyc.write_bytes(_pyc(EVIL + BLOCKS, header))
    monkeypatch.chdir(files)
    assert main(["trust", "my_blocks.py"]) == 0
    assert main(["validate", "decay.json"]) == 0
    assert (files / "imported.marker").exists()  # the reviewed source ran
    assert not (files / "PWNED").exists()  # the shipped pyc did not
    assert pyc.read_bytes() == _pyc(EVIL + BLOCKS, header)  # nor was it rewritten


def test_running_a_trusted_file_writes_no_pyc(files):
    blocksim.load(files / "decay.json", trust=True)
    assert not (files / "__pycache__").exists()


def test_a_file_swapped_after_trust_is_refused(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    assert main(["trust", "my_blocks.py"]) == 0
    (files / "my_blocks.py").write_text(EVIL + BLOCKS)
    assert main(["run", "decay.json", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "changed since you trusted it" in err
    assert not (files / "PWNED").exists() and not (files / "imported.marker").exists()


@pytest.mark.parametrize("how", ["allow-list", "--trust"])
def test_the_bytes_run_are_the_bytes_hashed(files, monkeypatch, how):
    """The file swapped at the worst moment, just after blocksim read it to hash: what runs
    is what was read (a second read, as the import system made, would run the swap)."""
    monkeypatch.chdir(files)
    if how == "allow-list":
        assert main(["trust", "my_blocks.py"]) == 0
    read = trust.read_regular_file

    def read_then_swap(path, limit):
        data = read(path, limit)
        Path(path).write_text(EVIL + BLOCKS)
        return data

    monkeypatch.setattr(trust, "read_regular_file", read_then_swap)
    extra = ["--trust", "my_blocks.py"] if how == "--trust" else []
    assert main(["validate", "decay.json", *extra]) == 0
    assert (files / "imported.marker").exists() and not (files / "PWNED").exists()


def test_a_newline_in_a_path_cannot_add_an_entry(files, capsys):
    """The old list was "sha256<TAB>path" lines: trusting a file whose path holds
    "\\n<digest of evil.py><TAB>/path/of/evil.py" trusted evil.py as well."""
    evil = files / "evil.py"
    evil.write_text(EVIL + BLOCKS)
    digest = hashlib.sha256(evil.read_bytes()).hexdigest()
    decoy = files / f"a\n{digest}\t" / str(evil).lstrip("/")
    decoy.parent.mkdir(parents=True)
    decoy.write_text(BLOCKS)
    assert main(["trust", str(decoy)]) == 0
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1  # the path shown escaped, on one line
    assert set(allowlist.entries()) == {str(decoy.resolve())}
    doc = json.loads((files / "decay.json").read_text())
    (files / "decay.json").write_text(json.dumps({**doc, "python": ["evil.py"]}))
    assert main(["validate", str(files / "decay.json")]) == 2
    assert "evil.py" in capsys.readouterr().err
    assert not (files / "PWNED").exists()


def _trust_at_once(barrier, path):
    barrier.wait(10)
    trust.remember([path])


def test_concurrent_trust_calls_lose_no_entry(tmp_path):
    """20 processes trusting 20 files at the same moment: every entry is kept (the list
    is read, changed and replaced under a lock)."""
    context = multiprocessing.get_context("fork")
    names = []
    for i in range(20):
        names.append(tmp_path / f"blocks{i}.py")
        names[-1].write_text(f"# file {i}\n")
    barrier = context.Barrier(len(names))
    workers = [context.Process(target=_trust_at_once, args=(barrier, name)) for name in names]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert [w.exitcode for w in workers] == [0] * len(workers)
    listed = allowlist.entries()
    assert set(listed) == {str(name.resolve()) for name in names}
    assert all(listed[str(n.resolve())] == hashlib.sha256(n.read_bytes()).hexdigest()
               for n in names)


def test_the_old_list_is_read_and_moved_to_json(files, monkeypatch):
    old = allowlist.location()
    old.parent.mkdir(parents=True)
    source = (files / "my_blocks.py").resolve()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    old.write_text(f"{digest}\t{source}\n")
    assert blocksim.load(files / "decay.json").python == ["my_blocks.py"]  # trusted by it
    other = files / "other.py"
    other.write_text("# another\n")
    trust.remember([other])
    data = json.loads(old.read_text())
    assert data["format"] == allowlist.FORMAT
    assert data["files"] == {str(source): digest, str(other.resolve()):
                             hashlib.sha256(other.read_bytes()).hexdigest()}


def test_the_default_list_reads_the_old_txt_until_the_json_exists(tmp_path, monkeypatch):
    monkeypatch.delenv(trust.ALLOW_LIST_ENV)
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / ".config" / "blocksim"
    folder.mkdir(parents=True)
    (folder / "trusted-python.txt").write_text(f"{'0' * 64}\t/x/old.py\n")
    assert allowlist.entries() == {"/x/old.py": "0" * 64}
    new = tmp_path / "new.py"
    new.write_text("# new\n")
    assert trust.remember([new])
    assert allowlist.location() == folder / "trusted-python.json"
    assert set(json.loads((folder / "trusted-python.json").read_text())["files"]) == {
        "/x/old.py", str(new.resolve())}


@pytest.mark.parametrize("content", [b"\xff\xfe not utf-8", b"{\"format\": ", b"[1, 2]",
                                     b"{\"format\": \"blocksim-trusted-python\", \"files\": "
                                     b"{\"/x.py\": \"abc\"}}", b"no tab here\n"])
def test_a_corrupt_list_is_one_line_and_is_never_overwritten(files, capsys, content):
    listed = allowlist.location()
    listed.parent.mkdir(parents=True)
    listed.write_bytes(content)
    assert main(["validate", str(files / "decay.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(listed) in err and "fix or delete it" in err
    assert main(["trust", str(files / "my_blocks.py")]) == 2
    assert str(listed) in capsys.readouterr().err
    assert listed.read_bytes() == content
    assert not (files / "imported.marker").exists()


@pytest.mark.parametrize("kind", ["fifo", "directory", "dev-zero", "huge", "pyc", "missing"])
def test_trust_refuses_what_is_not_a_python_file_in_one_line(tmp_path, capsys, kind):
    target = tmp_path / ("comp.pyc" if kind == "pyc" else "blocks.py")
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    elif kind == "dev-zero":
        target.symlink_to("/dev/zero")
    elif kind == "huge":
        with open(target, "wb") as fh:
            fh.truncate(trust.MAX_SOURCE_BYTES + 1)
    elif kind == "pyc":
        target.write_bytes(_pyc("X = 1", (0).to_bytes(12, "little")))
    assert main(["trust", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and target.name in err
    words = {"fifo": "FIFO", "directory": "directory", "dev-zero": "character device",
             "huge": "larger than", "pyc": "only .py files", "missing": "does not exist"}
    assert words[kind] in err
    assert not allowlist.location().exists()


def test_a_diagram_naming_a_pyc_says_only_py_files_can_be_trusted(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"format": "blocksim", "version": 1, "python": ["comp.pyc"],
                                "blocks": [], "wires": []}))
    with pytest.raises(blocksim.DiagramFileError, match=r"comp\.pyc.*only \.py files can be "
                                                        r"trusted"):
        blocksim.load(path, trust=True)
