"""Keep numba's on-disk cache of the engine's kernels in step with their sources.

numba (cache=True) re-compiles a function when its own file changes, but not when a function
it calls and inlines lives in another file that changed: after an update of, say,
native/settle.py, the cached native/kernel.py would silently keep the old event handling.
`refresh` stamps the cache with a hash of every compiled engine module (and the numba
version) and clears the engine's cached kernels when the stamp no longer matches. No Qt, no
numba import here: it runs before the kernels are imported.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

PACKAGE = Path(__file__).resolve().parent
# The modules whose njit functions are cached (all in this package), plus what they read at
# compile time; paths relative to this package.
SOURCES = ("settle.py", "formulas.py", "kernel.py", "locate.py", "layout.py", "rings.py",
           "calls.py", "../dopri5.py", "../events.py", "../../blocktypes/history_ring.py")
# Cached too, and cleared with the kernels (they read layout.py), but not in the stamp:
# numba notices a change of their own file (the sweeps' batch loop calls the kernel
# through its address, so the kernel is not compiled into it).
DEPENDENT = ("batch.py",)
STAMP = "blocksim-numba-stamp.txt"
COMPILE_SECONDS = 30  # what compiling the kernels takes (24 to 36 s on 2 CPUs)


def fingerprint() -> str:
    """A hash of the engine's compiled sources and the numba version."""
    digest = hashlib.sha256()
    for name in SOURCES:
        path = PACKAGE / name
        if path.exists():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    try:
        digest.update(importlib.metadata.version("numba").encode())
    except importlib.metadata.PackageNotFoundError:
        pass
    return digest.hexdigest()


def refresh(cache: Path = PACKAGE / "__pycache__") -> bool:
    """Clear the engine's cached kernels if their sources changed; True if it cleared."""
    stamp = cache / STAMP
    current = fingerprint()
    try:
        if stamp.read_text(encoding="utf-8") == current:
            return False
    except OSError:
        pass  # no stamp yet: clear whatever an older version left
    stems = tuple(name[:-3] + "." for name in SOURCES + DEPENDENT if "/" not in name)
    stale = [p for p in cache.glob("*.nb[ic]") if p.name.startswith(stems)]
    for path in stale:
        path.unlink(missing_ok=True)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        stamp.write_text(current, encoding="utf-8")
    except OSError as exc:  # a read-only install: numba caches elsewhere or not at all
        log.debug("cannot stamp the numba cache in %s: %s", cache, exc)
    if stale:
        log.info("engine sources changed: cleared %d cached numba kernels", len(stale))
    return bool(stale)


def kernels_cached(cache: Path = PACKAGE / "__pycache__", stem: str = "kernel") -> bool:
    """Whether numba's cache holds the compiled loop (else importing it compiles it), or
    the module `stem`'s compiled functions (`batch`: the sweeps' batch loop).

    numba keeps its cache next to the sources, or under NUMBA_CACHE_DIR when set (there in
    a tree named after the source directory): an index file of the kernel in either.
    """
    if any(cache.glob(f"{stem}.*.nbi")):
        return True
    root = os.environ.get("NUMBA_CACHE_DIR")
    return bool(root) and any(Path(root).rglob(f"native/{stem}.*.nbi"))
