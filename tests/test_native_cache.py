"""The numba kernel cache is cleared when any compiled engine source changes.

numba alone would keep a cached kernel whose inlined callees (in other files) changed.
"""
from blocksim.engine import native_cache


def test_refresh_clears_stale_kernels_once(tmp_path):
    kernel = tmp_path / "native_kernel.run_segment-40.py311.nbi"
    data = tmp_path / "native_kernel.run_segment-40.py311.1.nbc"
    other = tmp_path / "somebody_else.f-1.py311.nbi"
    for path in (kernel, data, other):
        path.write_bytes(b"cached")
    assert native_cache.refresh(tmp_path) is True  # no stamp: an older version's cache
    assert not kernel.exists() and not data.exists() and other.exists()
    kernel.write_bytes(b"compiled again")
    assert native_cache.refresh(tmp_path) is False  # same sources: kept
    assert kernel.exists()
    (tmp_path / native_cache.STAMP).write_text("another version", encoding="utf-8")
    assert native_cache.refresh(tmp_path) is True and not kernel.exists()


def test_fingerprint_covers_the_compiled_sources():
    for name in native_cache.SOURCES:
        assert (native_cache.ENGINE / name).exists(), name
    assert native_cache.fingerprint() == native_cache.fingerprint()
