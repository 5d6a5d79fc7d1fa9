"""A diagram that names a Python file of user blocks imports it only when trusted: without
--trust (or blocksim.load's trust=) the CLI exits 2 with one line saying how, and the
file's top level never runs (it would write a marker file)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.blocktypes import registry
from blocksim.cli.main import main
from blocksim.diagram.format import diagram_from_dict, diagram_to_dict
from blocksim.user import trust

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
