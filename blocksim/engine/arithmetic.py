"""A block's formula failing at run time (log of a negative number, division by zero, a
power too large for a float) said in the user's words, not as a Python exception name."""
from __future__ import annotations

_DOMAIN = ("a math function outside its domain (log or sqrt of a negative number, zero to a "
           "negative power, asin of more than 1, ...)")
_WORDS = {
    "math domain error": _DOMAIN,
    "math range error": "a result too large for a float (overflow)",
    "float division by zero": "division by zero",
    "division by zero": "division by zero",
    "integer division or modulo by zero": "division by zero",
    "float modulo": "the remainder of a division by zero",
    "mod by zero": "the remainder of a division by zero",
    "float floor division by zero": "division by zero",
    "0.0 cannot be raised to a negative power": "zero raised to a negative power (division by zero)",
    "int too large to convert to float": "a result too large for a float (overflow)",
    "(34, 'Numerical result out of range')": "a result too large for a float (overflow)",
}


def describe_arithmetic(exc: BaseException) -> str:
    """One line for a formula's failure: known Python messages in words, others as they are
    (prefixed by what kind of failure it was, never by the exception's class name)."""
    text = " ".join(str(exc).split())
    if text in _WORDS:
        return _WORDS[text]
    if isinstance(exc, ZeroDivisionError):
        return f"division by zero ({text})" if text else "division by zero"
    if isinstance(exc, OverflowError):
        return f"overflow ({text})" if text else "a result too large for a float (overflow)"
    if len(text) > 200:
        text = text[:197] + "..."
    return text or "an arithmetic error"
