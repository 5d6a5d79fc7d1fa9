"""Load numba's cached machine code without first installing every implementation registry.

numba's on-disk cache (`cache=True`) refreshes the target context before each load:
it imports and installs the implementation registries of everything numba can compile
(numpy, linear algebra, which imports scipy.linalg, random, typed containers, ...). A
cached function needs none of that: it is machine code, rebuilt from its object file, and
needs only numba's runtime (NRT) symbols. The refresh was 0.7 s of the 1.7 s CPU of a warm
`blocksim run --backend numba` of the ball. `deferred` loads without it, and only the
engine's own loads (the compiled loop, a model's functions); a load that misses the cache
compiles, and numba's compiler refreshes the context itself before it compiles anything.

If numba's `Cache.load_overload` is not the one this was written against (another numba
version), nothing is changed.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Iterator

_EXPECTED = "target_context.refresh()"  # what numba 0.60 to 0.68 do before each load


def _load_without_refresh(self, sig, target_context):
    """`numba.core.caching.Cache.load_overload` with only the runtime initialised."""
    from numba.core.runtime import rtsys

    rtsys.initialize(target_context)  # NRT's symbols, which cached code links against
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)


def _compatible(original) -> bool:
    try:
        source = inspect.getsource(original)
    except (OSError, TypeError):
        return False
    return (_EXPECTED in source and "_guard_against_spurious_io_errors" in source
            and "self._load_overload(sig, target_context)" in source)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Within: numba loads cached functions without refreshing its registries."""
    from numba.core import caching

    original = caching.Cache.load_overload
    if original is _load_without_refresh or not _compatible(original):
        yield
        return
    caching.Cache.load_overload = _load_without_refresh
    try:
        yield
    finally:
        caching.Cache.load_overload = original
