"""The numba kernel cache is cleared when any compiled engine source changes.

numba alone would keep a cached kernel whose inlined callees (in other files) changed.
"""
from blocksim.engine.native import cache


def test_refresh_clears_stale_kernels_once(tmp_path):
    kernel = tmp_path / "kernel.run_segment-40.py311.nbi"
    data = tmp_path / "kernel.run_segment-40.py311.1.nbc"
    other = tmp_path / "somebody_else.f-1.py311.nbi"
    for path in (kernel, data, other):
        path.write_bytes(b"cached")
    assert cache.refresh(tmp_path) is True  # no stamp: an older version's cache
    assert not kernel.exists() and not data.exists() and other.exists()
    kernel.write_bytes(b"compiled again")
    assert cache.refresh(tmp_path) is False  # same sources: kept
    assert kernel.exists()
    (tmp_path / cache.STAMP).write_text("another version", encoding="utf-8")
    assert cache.refresh(tmp_path) is True and not kernel.exists()


def test_fingerprint_covers_the_compiled_sources():
    for name in cache.SOURCES:
        assert (cache.PACKAGE / name).exists(), name
    assert cache.fingerprint() == cache.fingerprint()
