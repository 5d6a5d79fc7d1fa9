"""The FMI tests' FMUs: built once per session from tests/fmi/c with the system C compiler
(`fmus.build`); without fmpy or a C compiler the tests that need them skip."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import fmus  # noqa: E402


@pytest.fixture(scope="session")
def fmu_cache(tmp_path_factory):
    pytest.importorskip("fmpy", reason="FMU tests need fmpy (pip install 'blocksim[fmi]')")
    if fmus.compiler() is None:
        pytest.skip("no C compiler (cc, gcc or clang) to build the test FMUs")
    return tmp_path_factory.mktemp("fmus")


@pytest.fixture
def build_fmu(fmu_cache):
    """build_fmu(model, version, variant="", defines=None) -> path of the cached .fmu."""
    def build(model: str, version: int, variant: str = "", defines=None) -> Path:
        return fmus.build(model, version, fmu_cache, variant, defines)
    return build


@pytest.fixture(autouse=True)
def _own_allow_list(tmp_path, monkeypatch):
    """Every test with an allow-list of its own (never the user's)."""
    from blocksim.user import allowlist

    monkeypatch.setenv(allowlist.ENV, str(tmp_path / "allow" / "trusted.json"))


def write_diagram(folder: Path, blocks, wires, stop=3.0, name="d.json", **simulation):
    """A diagram file in `folder` (the FMUs beside it)."""
    sim = {"start": 0, "stop": stop, "solver": "dopri5", "rtol": 1e-10, "atol": 1e-10,
           "output_interval": 0.01, **simulation}
    path = folder / name
    path.write_text(json.dumps({"format": "blocksim", "version": 1, "simulation": sim,
                                "blocks": blocks, "wires": wires}))
    return path


def place(fmu: Path, folder: Path, name: str | None = None) -> str:
    """Copy an FMU next to a diagram; its file name."""
    target = folder / (name or fmu.name)
    target.write_bytes(fmu.read_bytes())
    return target.name
