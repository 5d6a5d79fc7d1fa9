"""A diagram naming Python files of user block types, opened in the editor (issue 25): a file
not trusted yet is named in a dialog with its path and SHA-256; "Trust and load" puts it on
the allow-list and loads its blocks (as `blocksim trust` then the CLI would); Cancel opens
the diagram without running anything; a file already trusted loads without asking."""
import hashlib
import json

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QMessageBox  # noqa: E402

from blocksim.blocktypes import registry  # noqa: E402
from blocksim.cli.main import main  # noqa: E402
from blocksim.gui.window import dialogs  # noqa: E402
from blocksim.gui.window.mainwindow import MainWindow  # noqa: E402
from blocksim.user import allowlist, trust  # noqa: E402

BLOCKS = '''
from pathlib import Path
Path(__file__).with_name("ran.marker").write_text("the top level ran")

from blocksim.blocktypes.blockspec import Port
from blocksim.user import UserBlock


class {name}(UserBlock):
    """A constant one."""
    name = "{name}"
    category = "Mine"
    outputs = (Port("y"),)
    feedthrough_outputs = False

    @staticmethod
    def out(t, x, d, u, p):
        return (1.0,)


BLOCK_TYPES = ({name},)
'''


@pytest.fixture
def files(tmp_path, request):
    """A diagram naming my_blocks.py, whose block type is named after the test."""
    name = "Trusted" + "".join(part.title() for part in request.node.name.split("_")[2:5])
    name = "".join(ch for ch in name if ch.isalnum())
    (tmp_path / "my_blocks.py").write_text(BLOCKS.format(name=name))
    doc = {"format": "blocksim", "version": 1, "python": ["my_blocks.py"],
           "blocks": [{"id": "one", "type": name, "params": {}},
                      {"id": "y", "type": "Output", "params": {}}],
           "wires": [{"src": "one.y", "dst": "y.u"}]}
    (tmp_path / "uses_python.json").write_text(json.dumps(doc))
    yield tmp_path, name
    registry.unregister(name)
    trust._IMPORTED.clear()


@pytest.fixture
def window(qtbot, env):
    win = MainWindow()
    qtbot.addWidget(win)
    return win


def _asked(monkeypatch, answer):
    asked = []

    def ask(parent, diagram, sources):
        asked.append((diagram, [(s.name, s.path, s.digest, s.changed) for s in sources]))
        return answer

    monkeypatch.setattr(dialogs, "ask_trust", ask)
    return asked


def test_trust_and_load_names_the_file_then_loads_its_blocks(window, files, env, monkeypatch,
                                                             capsys):
    folder, name = files
    asked = _asked(monkeypatch, True)
    assert window.files.open_path(folder / "uses_python.json")
    digest = hashlib.sha256((folder / "my_blocks.py").read_bytes()).hexdigest()
    assert asked == [(str(folder / "uses_python.json"),
                      [("my_blocks.py", (folder / "my_blocks.py").resolve(), digest, False)])]
    assert (folder / "ran.marker").exists()
    assert window.canvas.scene.blocks["one"].info.known  # drawn as a real block
    assert name in window.panels.palette.visible_types()
    assert not [m for m in env if m[0] == "Unknown block types"]
    assert allowlist.entries() == {str((folder / "my_blocks.py").resolve()): digest}
    # the command line trusts it too now: the same allow-list
    assert main(["validate", str(folder / "uses_python.json")]) == 0
    assert "ok" in capsys.readouterr().out


def test_cancel_opens_it_without_running_anything(window, files, env, monkeypatch):
    folder, name = files
    asked = _asked(monkeypatch, False)
    assert window.files.open_path(folder / "uses_python.json")
    assert len(asked) == 1
    assert not (folder / "ran.marker").exists()
    assert registry.get(name) is None
    assert not window.canvas.scene.blocks["one"].info.known  # drawn grey
    assert not [m for m in env if "installed" in m[1]]  # no advice to install a library
    status = window.statusBar().currentMessage()
    assert "not trusted" in status and "one" in status
    assert allowlist.entries() == {}


def test_a_file_trusted_on_the_command_line_loads_without_asking(window, files, env,
                                                                 monkeypatch):
    folder, name = files
    assert main(["trust", str(folder / "my_blocks.py")]) == 0
    asked = _asked(monkeypatch, False)
    assert window.files.open_path(folder / "uses_python.json")
    assert asked == [] and registry.get(name) is not None and not env


def test_an_edited_file_is_asked_about_again(window, files, env, monkeypatch):
    folder, name = files
    assert main(["trust", str(folder / "my_blocks.py")]) == 0
    (folder / "my_blocks.py").write_text(BLOCKS.format(name=name) + "\n# edited\n")
    asked = _asked(monkeypatch, False)
    assert window.files.open_path(folder / "uses_python.json")
    assert asked[0][1][0][3] is True  # shown as changed since trusted
    assert not (folder / "ran.marker").exists()


def test_a_type_the_files_do_not_define_is_said_so(window, files, env, monkeypatch):
    folder, name = files
    doc = json.loads((folder / "uses_python.json").read_text())
    doc["blocks"][0]["type"] = "Misspelt"
    (folder / "uses_python.json").write_text(json.dumps(doc))
    _asked(monkeypatch, True)
    assert window.files.open_path(folder / "uses_python.json")
    title, text = env[-1]
    assert title == "Unknown block types" and "Misspelt" in text and "my_blocks.py" in text
    assert "installed" not in text


def test_a_file_that_fails_is_one_message_naming_it(window, files, env, monkeypatch):
    folder, name = files
    (folder / "my_blocks.py").write_text("raise RuntimeError('broken on purpose')\n")
    _asked(monkeypatch, True)
    assert window.files.open_path(folder / "uses_python.json")
    title, text = env[-1]
    assert "Python blocks" in title and "my_blocks.py" in text and "broken on purpose" in text
    assert not window.canvas.scene.blocks["one"].info.known


def test_the_dialog_shows_each_path_and_digest(qtbot, files, monkeypatch):
    """The real dialog (not answered by a test double): its text, and Cancel by default."""
    folder, _ = files
    from blocksim.diagram.format import load_diagram

    sources = trust.read_sources(load_diagram(folder / "uses_python.json"))
    shown = {}

    def exec_(box):
        shown["text"], shown["buttons"] = box.text(), [b.text() for b in box.buttons()]
        shown["default"] = box.defaultButton().text()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    assert dialogs.ask_trust(None, str(folder / "uses_python.json"), sources) is False
    assert str(sources[0].path) in shown["text"] and sources[0].digest in shown["text"]
    assert "Trust and load" in shown["buttons"] and shown["default"] != "Trust and load"
