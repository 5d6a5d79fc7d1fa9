"""Parameter values as the editors show them, and back (Qt-free).

A field shows numbers and number arrays as literals and keeps anything else as expression
text, so what a user types round-trips into the same value the file format stores.
"""
from __future__ import annotations

import json
import math
from typing import Any

UNSET: Any = object()
"""An empty field: the parameter is left out of the block, so its declared default applies."""


def value_to_text(value: Any) -> str:
    """The text a field shows for a stored value (number, array, bool or expression)."""
    if value is None or value is UNSET:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number(value)
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return value_to_text(tolist())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_to_text(v) for v in value) + "]"
    return str(value)


def _number(value: float) -> str:
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))  # 30, not 30.0: every number is a real number anyway
    return repr(value)


def text_to_value(text: str) -> Any:
    """The value to store for a field's text: UNSET if empty, a number or number array if
    the text is a literal, else the text itself (an expression the compiler evaluates)."""
    text = text.strip()
    if not text:
        return UNSET
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return text
    return value if _is_numeric(value) else text


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # NaN/Infinity are not literals here: "inf" stays an expression


def _is_numeric(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    if isinstance(value, list):
        return bool(value) and all(_is_numeric(v) for v in value)
    return False
