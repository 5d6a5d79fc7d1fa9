"""Block parameter values: a file's value (number, list or expression) resolved to what the
block sees, checked against its declaration (kind, choices, bounds, finiteness, size).

The declaration (`blockspec.Param`) is the single source of these rules, so they hold for
third-party blocks as for the library: numbers are finite unless `allow_inf`, never NaN,
and a vector's length is held to the signal limit unless it is a `table`.
"""
from __future__ import annotations

import math
import reprlib
from typing import Any, Callable, Mapping

import numpy as np

from blocksim.expressions import language as expressions
from blocksim.blocktypes.blockspec import BlockType, Param, ParamValues
from blocksim.compiler import limits
from blocksim.compiler.budget import ParameterBudget
from blocksim.errors import CompileError, ExpressionError


def resolve_param(prm: Param, raw: Any, names: Mapping[str, Any], where: str) -> Any:
    """Turn a file value into the value a block sees, checking kind, choices, bounds, size
    and finiteness (CompileError naming the parameter and the value)."""
    kind = prm.kind
    try:
        if kind in ("text", "signs"):
            if not isinstance(raw, str):
                raise CompileError(f"parameter '{prm.name}' must be text, got {_short(raw)}")
            if kind == "signs" and len(raw) > limits.MAX_PORTS:
                raise CompileError(f"parameter '{prm.name}' has {len(raw)} signs, one per "
                                   f"port (at most {limits.MAX_PORTS})")
            return raw
        if kind == "choice":
            if not isinstance(raw, str) or raw not in prm.choices:
                raise CompileError(f"parameter '{prm.name}' is {_short(raw)}; "
                                   f"choose one of {', '.join(map(repr, prm.choices))}")
            return raw
        if kind == "bool" and isinstance(raw, bool):
            return raw
        if (type(raw) is float or (type(raw) is int and abs(raw) < _FLOAT_RANGE)) \
                and kind in ("scalar", "vector"):
            return _plain_number(prm, float(raw), raw)  # most parameters: no numpy needed
        value = expressions.evaluate(raw, names)
    except ExpressionError as exc:
        raise CompileError(f"parameter '{prm.name}': {exc}") from None
    if type(value) is float and kind in ("scalar", "vector"):  # an expression's number
        return _evaluated_number(prm, value, raw)
    arr = np.asarray(value, dtype=float)
    _check_values(prm, arr, raw)
    if kind == "bool":
        return bool(arr.ravel()[0]) if arr.size else False
    if kind in ("scalar", "int"):
        if arr.size != 1:
            raise CompileError(f"parameter '{prm.name}' must be one number, got {_short(raw)}")
        value = float(arr.ravel()[0])
        if kind == "int":
            if abs(value) > limits.MAX_INT or value != int(value):
                raise CompileError(f"parameter '{prm.name}' must be a whole number, got "
                                   f"{_short(raw)}")
            value = int(value)
    elif kind == "vector":
        if arr.size == 0:
            raise CompileError(f"parameter '{prm.name}' is empty")
        most = limits.MAX_TABLE_ELEMENTS if prm.table else limits.MAX_SIGNALS
        if arr.size > most:
            what = "a table" if prm.table else "a signal's width"
            raise CompileError(f"parameter '{prm.name}' has {arr.size} elements (at most "
                               f"{most} for {what})")
        value = float(arr) if arr.ndim == 0 else expressions.freeze(arr)  # tables may be 2-D
    return value


def _check_values(prm: Param, arr: np.ndarray, raw: Any) -> None:
    """NaN never; +-inf only where the declaration allows it; the declared bounds."""
    if arr.size == 0:
        return
    bad = np.flatnonzero(~np.isfinite(arr) if not prm.allow_inf else np.isnan(arr))
    if bad.size:
        raise _not_finite(prm, raw, float(arr.ravel()[bad[0]]),
                          int(bad[0]) if arr.size > 1 else None)
    if prm.low is not None and np.any(arr < prm.low):
        raise CompileError(f"parameter '{prm.name}' = {_shown(raw, arr)} is below its minimum "
                           f"{prm.low:g}")
    if prm.high is not None and np.any(arr > prm.high):
        raise CompileError(f"parameter '{prm.name}' = {_shown(raw, arr)} is above its maximum "
                           f"{prm.high:g}")


def _not_finite(prm: Param, raw: Any, value: float, element: int | None) -> CompileError:
    what = f": element {element} is {value}" if element is not None else f" is {value}"
    need = "a number (+-inf allowed)" if prm.allow_inf else "finite"
    return CompileError(f"parameter '{prm.name}' = {_short(raw)}{what}; it must be {need}")


_FLOAT_RANGE = 2 ** 1023  # ints below this convert to float without overflow


def _shown(raw: Any, arr: np.ndarray) -> str:
    """The file value, and what it evaluates to when that is an expression of one number."""
    return _shown_number(raw, float(arr.ravel()[0])) if arr.size == 1 else _short(raw)


def _short(raw: Any) -> str:
    """A file value for a one-line message, shortened if long."""
    text = repr(raw) if isinstance(raw, (str, int, float)) else _SHORT.repr(raw)
    return text if len(text) <= 80 else text[:77] + "..."


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxstring = 3, 6, 60


def _plain_number(prm: Param, value: float, raw: Any) -> float:
    """`resolve_param` of a number for a scalar or vector parameter: the same checks."""
    return _bounded(prm, value, raw, lambda: _short(raw), str)


def _evaluated_number(prm: Param, value: float, raw: Any) -> float:
    """`resolve_param` of a number an expression gave: `_check_values`'s checks and
    messages without numpy (new values of a sweep's parameters come this way)."""
    return _bounded(prm, value, raw, lambda: _shown_number(raw, value), "{:g}".format)


def _bounded(prm: Param, value: float, raw: Any, shown: Callable[[], str],
             limit: Callable[[float], str]) -> float:
    """`value` if finite (or an allowed infinity) and within the parameter's bounds; the
    messages show the value as `shown()` and a bound as `limit(bound)`."""
    if value != value or (not prm.allow_inf and value in (math.inf, -math.inf)):
        raise _not_finite(prm, raw, value, None)
    if prm.low is not None and value < prm.low:
        raise CompileError(f"parameter '{prm.name}' = {shown()} is below its minimum "
                           f"{limit(prm.low)}")
    if prm.high is not None and value > prm.high:
        raise CompileError(f"parameter '{prm.name}' = {shown()} is above its maximum "
                           f"{limit(prm.high)}")
    return value


def _shown_number(raw: Any, value: float) -> str:
    """`_shown` of a value that is one number."""
    return f"{_short(raw)} (= {value:g})" if isinstance(raw, str) else _short(raw)


def params_for(block_type: type[BlockType], raw: Mapping[str, Any], names: Mapping[str, Any],
                path: str, budget: ParameterBudget | None = None,
                folder: str | None = None) -> ParamValues:
    declared = {prm.name: prm for prm in block_type.params}
    unknown = sorted(set(raw) - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise CompileError(f"unknown parameter '{unknown[0]}' (parameters of "
                           f"{block_type.name}: {known})", block=path)
    values = {}
    for name, prm in declared.items():
        if name in raw:
            value = raw[name]
        elif prm.required:
            raise CompileError(f"missing parameter '{name}'", block=path)
        else:
            value = prm.default
        try:
            values[name] = resolve_param(prm, value, names, path)
        except CompileError as exc:
            raise CompileError(exc.detail, block=path) from None
        if budget is not None:
            budget.charge(values[name], f"parameter '{name}'", block=path)
    return ParamValues(values, names=names, folder=folder)
