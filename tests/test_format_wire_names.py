"""A wire's optional signal name (issue 13): read, written back, left out when empty, and
refused with a message naming the wire when it is not one line of text. Old files (no name)
load unchanged and keep format version 1."""
import json

import pytest

from blocksim.errors import DiagramFileError
from blocksim.diagram.format import diagram_from_dict, diagram_to_dict, load_diagram, save_diagram
from blocksim.diagram.model import FORMAT_VERSION


def _document(**wire_extra) -> dict:
    return {"format": "blocksim", "version": 1,
            "blocks": [{"id": "a", "type": "Constant"}, {"id": "b", "type": "Output"}],
            "wires": [{"src": "a.y", "dst": "b.u", **wire_extra}]}


def test_a_named_wire_round_trips_through_a_file(tmp_path):
    diagram = diagram_from_dict(_document(name="velocity v [m/s]"))
    assert diagram.wires[0].name == "velocity v [m/s]"
    path = tmp_path / "named.json"
    save_diagram(diagram, path)
    written = json.loads(path.read_text())
    assert written["version"] == FORMAT_VERSION == 1  # an optional key keeps the version
    assert written["wires"][0]["name"] == "velocity v [m/s]"
    assert load_diagram(path).wires[0].name == "velocity v [m/s]"


def test_an_unnamed_wire_is_written_without_a_name_key():
    diagram = diagram_from_dict(_document())
    assert diagram.wires[0].name == ""
    assert "name" not in diagram_to_dict(diagram)["wires"][0]


@pytest.mark.parametrize("bad, says", [
    ("two\nlines", "is not a signal name"),
    ("x" * 201, "is not a signal name"),
    (3, "expected string"),
])
def test_a_bad_name_is_refused_naming_the_wire(bad, says):
    with pytest.raises(DiagramFileError) as caught:
        diagram_from_dict(_document(name=bad), source="n.json")
    assert str(caught.value).startswith("n.json: wires[0].name: ")
    assert says in str(caught.value)
