"""The FMI tests' FMUs: built once per session from tests/fmi/c with the system C compiler
(`testfmu_build.build`); without fmpy or a C compiler the tests that need them skip."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import testfmu_build as fmus  # noqa: E402


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
