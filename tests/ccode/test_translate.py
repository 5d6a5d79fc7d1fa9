"""The C translation of the generated functions gives the Python functions' numbers."""
from __future__ import annotations

import glob
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

import blocksim
from blocksim.ccode.model_source import ExportError, model_source
from blocksim.diagram.format import diagram_from_dict
from blocksim.errors import CompileError

sys.path.insert(0, str(Path(__file__).parent))
from builders import block, diagram  # noqa: E402
from compare import compare_model  # noqa: E402
from helper_blocks import helper_lookup_registered  # noqa: E402
from hostile.graphs import diagrams  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(glob.glob(str(ROOT / "diagrams" / "*.json"))
                 + glob.glob(str(ROOT / "diagrams" / "physical" / "*.json")))
# What C does not take yet, each refused with one line naming the block.
REFUSED: dict[str, str] = {}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: Path(p).name)
def test_shipped_diagram_in_c_equals_python(path, tmp_path, monkeypatch):
    monkeypatch.setenv("BLOCKSIM_CACHE_DIR", str(tmp_path))
    model = blocksim.compile(blocksim.load(path))
    name = Path(path).name
    if name in REFUSED:
        with pytest.raises(ExportError) as err:
            model_source(model)
        message = str(err.value)
        assert REFUSED[name] in message and "\n" not in message
        return
    assert compare_model(model, draws=30) > 0


def test_block_calling_python_is_refused_naming_it():
    # A block whose event code calls Python helpers cannot become C: one line names it.
    blocks = [block("pulse", "Pulse", period=0.3, width=0.4), block("i", "Integrator"),
              block("lut", "HelperLookup", breakpoints=[0.0, 0.1, 0.2], table=[0.0, 1.0, 0.0]),
              block("y", "Output")]
    with helper_lookup_registered():
        model = blocksim.compile(diagram(blocks, [("pulse.y", "i.u"), ("i.y", "lut.u"),
                                                  ("lut.y", "y.u")]))
    with pytest.raises(ExportError) as err:
        model_source(model)
    assert "block 'lut' (HelperLookup)" in str(err.value)
    assert "\n" not in str(err.value)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
@given(diagrams())
def test_random_diagram_in_c_equals_python(example):
    document, _ = example
    try:
        model = blocksim.compile(diagram_from_dict(document, "fuzz.json"))
    except CompileError:
        return
    try:
        compare_model(model, draws=8)
    except ExportError as exc:
        assert "\n" not in str(exc) and "block '" in str(exc), str(exc)


def test_table_too_large_is_refused_naming_the_block(monkeypatch):
    from blocksim.ccode import model_source as ms

    model = blocksim.compile(blocksim.load(ROOT / "diagrams" / "from_file_measured.json"))
    monkeypatch.setattr(ms, "MAX_TABLE", 10)
    with pytest.raises(ExportError) as err:
        model_source(model)
    assert "block '" in str(err.value) and "numbers" in str(err.value)
    assert "\n" not in str(err.value)
