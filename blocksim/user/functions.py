"""The functions of user blocks, and their numba versions for the compiled loop.

Generated code calls a user block's functions through constants of the model's namespace
(the Python functions themselves on the Python backend). The numba backend asks
`compiled_version` for a numba dispatcher of each: the function compiled with numba, the
helpers of `blocksim.user` it names replaced by compiled twins. A function numba cannot
compile has none, and the model takes the documented fallback (events, or the whole model,
in Python) with a notice naming the block.
"""
from __future__ import annotations

import hashlib
import logging
import types
from typing import Any, Callable

log = logging.getLogger(__name__)

# function (or parameter tuple class) -> (block type name, role, sample arguments)
_REGISTERED: dict[Any, tuple[str, str, tuple]] = {}
_COMPILED: dict[Any, Any] = {}  # function -> dispatcher, or None when numba cannot
_HELPERS: dict[str, Any] = {}


def register_function(fn: Any, block: str, role: str, sample: tuple) -> None:
    """Note a user block's function; `sample`: arguments of the types it is called with."""
    _REGISTERED[fn] = (block, role, sample)


_RAW: dict[Any, Any] = {}  # guarded wrapper -> the user's function
_GUARDED: dict[Any, Any] = {}  # the user's function -> its guarded wrapper


def guarded(fn: Callable) -> Callable:
    """The function as the Python backend calls it: an exception other than an arithmetic
    one or a ValueError (which the engine reports naming the block) becomes a ValueError
    saying which user function raised what, so a bug in user code is one clear line."""
    if fn not in _GUARDED:
        label = owner(fn)

        def call(*args: Any) -> Any:
            try:
                return fn(*args)
            except (ArithmeticError, ValueError):
                raise
            except Exception as exc:
                raise ValueError(f"{label} raised {type(exc).__name__}: {exc}") from None
        _GUARDED[fn], _RAW[call] = call, fn
    return _GUARDED[fn]


def _raw(value: Any) -> Any:
    try:
        return _RAW.get(value, value)
    except TypeError:  # unhashable: not ours
        return value


def is_user_function(value: Any) -> bool:
    try:
        return _raw(value) in _REGISTERED
    except TypeError:  # unhashable: not ours
        return False


def owner(value: Any) -> str:
    """"Block.role" of a registered function, for messages."""
    block, role, _ = _REGISTERED[_raw(value)]
    return f"{block}.{role}"


def fingerprint(value: Any) -> str:
    """A digest of a user function's code, so that a changed function never reuses the
    machine code cached for the old one (numba's cache does not follow callees)."""
    if isinstance(value, type):
        return hashlib.sha256(repr(value._fields).encode()).hexdigest()[:16]
    code = _raw(value).__code__
    digest = hashlib.sha256()
    _code_bytes(code, digest)
    return digest.hexdigest()[:16]


def _code_bytes(code: types.CodeType, digest: Any) -> None:
    digest.update(code.co_code)
    digest.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_bytes(const, digest)
        else:
            digest.update(repr(const).encode())


def _helpers() -> dict[str, Any]:
    """The helpers of blocksim.user (rising, positive, ...) compiled, by identity."""
    if not _HELPERS:
        from numba import njit

        from blocksim.user import declare
        for name in ("positive", "negative", "rising", "falling", "change"):
            fn = getattr(declare, name)
            _HELPERS[id(fn)] = njit(fn)
    return _HELPERS


def compiled_version(value: Any) -> Any:
    """A numba-callable version of a user function or parameter tuple class, or None."""
    if isinstance(value, type):
        return value  # numba builds named tuples itself
    value = _raw(value)
    if value in _COMPILED:
        return _COMPILED[value]
    try:
        from numba import njit
        helpers = _helpers()
        names = value.__code__.co_names
        glb = value.__globals__
        swap = {n: helpers[id(glb[n])] for n in names if n in glb and id(glb[n]) in helpers}
        fn: Callable = value
        if swap:
            fn = types.FunctionType(value.__code__, {**glb, **swap}, value.__name__,
                                    value.__defaults__, value.__closure__)
        result = njit(fn)
        from numba import typeof
        result.compile(tuple(typeof(arg) for arg in _REGISTERED[value][2]))
    except Exception as exc:  # numba refuses: the Python path takes it
        log.info("user function %s cannot be compiled with numba: %s", value, exc)
        result = None
    _COMPILED[value] = result
    return result
