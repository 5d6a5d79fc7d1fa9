"""A diagram built with blocksim.DiagramBuilder and saved opens in the editor as built (laid
out, nothing to repair, no problems), runs there with the in-Python results, and shows
itself in Jupyter as the editor's SVG."""
import numpy as np
import pytest

pytest.importorskip("PySide6")

from editor_helpers import snapshot  # noqa: E402

from blocksim.diagram.format import diagram_to_dict  # noqa: E402
from test_builder import ball  # noqa: E402


def built_with_subsystem():
    """The ball, its height also passed through a subsystem (scaled by a subsystem
    parameter) to a second scope."""
    d = ball()
    scaled = d.subsystem("scaled", parameters={"factor": 2.0})
    inner = scaled.inner
    inner.add("Inport", id="x_in") >> inner.add("Gain", id="times", k="factor") \
        >> inner.add("Outport", id="x_out")
    d["position"].y >> scaled.x_in
    scaled.x_out >> d.add("Scope", id="x2").u
    return d


def test_saved_diagram_opens_in_the_editor_as_built_and_runs_the_same(window, qtbot,
                                                                     tmp_path):
    d = built_with_subsystem()
    path = tmp_path / "built.json"
    d.save(path)
    assert window.files.open_path(path)
    doc = window.doc
    assert not doc.dirty and doc.repaired == []
    assert snapshot(doc.diagram) == diagram_to_dict(d.model)  # positions included
    assert window.sim.validate() == []
    in_python = d.simulate()
    runner = window.sim.runner
    with qtbot.waitSignal(runner.finished, timeout=60000) as blocker:
        window.sim.run()
    in_editor = blocker.args[0]
    assert in_editor.status == "finished"
    np.testing.assert_array_equal(in_editor.time, in_python.time)
    for name in ("x", "v", "x2"):
        np.testing.assert_array_equal(in_editor[name], in_python[name])
    np.testing.assert_array_equal(in_python["x2"], 2 * in_python["x"])


def test_a_diagram_shows_itself_as_the_editors_svg(qapp):
    d = built_with_subsystem()
    picture = d._repr_svg_()
    assert picture is not None and "<svg" in picture and "velocity" in picture
    inner = d["scaled"].inner._repr_svg_()
    assert "times" in inner and "velocity" not in inner
    assert d.model.blocks[0].layout is None  # drawing did not lay out the caller's model
