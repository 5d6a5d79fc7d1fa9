"""Linear analysis marks on wires (issue 29): read, written back in a fixed order, left out
when empty, refused with a message naming the wire when malformed; the points they name,
collected through subsystems."""
import json

import pytest

from blocksim.diagram.analysis_points import analysis_points, port_marks
from blocksim.diagram.format import diagram_from_dict, diagram_to_dict, load_diagram, save_diagram
from blocksim.diagram.model import PortRef
from blocksim.errors import DiagramFileError


def _document(*marks) -> dict:
    return {"format": "blocksim", "version": 1,
            "blocks": [{"id": "a", "type": "Constant"}, {"id": "g", "type": "Gain"},
                       {"id": "b", "type": "Output"}, {"id": "c", "type": "Output"}],
            "wires": [{"src": "a.y", "dst": "g.u", **({"analysis": marks[0]} if marks else {})},
                      {"src": "g.y", "dst": "b.u", **({"analysis": marks[1]} if marks[1:] else {})},
                      {"src": "g.y", "dst": "c.u"}]}


def test_marks_round_trip_through_a_file_in_a_fixed_order(tmp_path):
    diagram = diagram_from_dict(_document(["open", "input"], ["output"]))
    assert diagram.wires[0].analysis == ("input", "open")
    path = tmp_path / "marked.json"
    save_diagram(diagram, path)
    written = json.loads(path.read_text())
    assert written["version"] == 1
    assert written["wires"][0]["analysis"] == ["input", "open"]
    assert load_diagram(path).wires[1].analysis == ("output",)


def test_a_wire_without_marks_is_written_without_the_key():
    diagram = diagram_from_dict(_document())
    assert diagram.wires[0].analysis == ()
    assert "analysis" not in diagram_to_dict(diagram)["wires"][0]


@pytest.mark.parametrize("bad, says", [
    (["sideways"], "is not one of"),
    ("input", "expected array"),
    (["input", "input"], "names a mark twice"),
])
def test_bad_marks_are_refused_naming_the_wire(bad, says):
    with pytest.raises(DiagramFileError) as caught:
        diagram_from_dict(_document(bad), source="m.json")
    assert str(caught.value).startswith("m.json: wires[0].analysis")
    assert says in str(caught.value)


def test_a_mark_on_one_branch_marks_the_signal_of_its_source_port():
    diagram = diagram_from_dict(_document([], ["output", "open"]))
    assert port_marks(diagram, PortRef("g", "y")) == ("output", "open")
    assert port_marks(diagram, PortRef("a", "y")) == ()
    points = analysis_points(diagram)
    assert (points.inputs, points.outputs, points.openings) == ((), ("g.y",), ("g.y",))


def test_points_inside_subsystems_are_named_by_their_qualified_block():
    document = _document(["input"])
    document["blocks"].append({"id": "sub", "type": "Subsystem", "diagram": {
        "blocks": [{"id": "k", "type": "Constant"}, {"id": "o", "type": "Outport"}],
        "wires": [{"src": "k.y", "dst": "o.u", "analysis": ["output"]}]}})
    points = analysis_points(diagram_from_dict(document))
    assert points.inputs == ("a.y",) and points.outputs == ("sub/k.y",)
    assert not analysis_points(diagram_from_dict(_document()))
