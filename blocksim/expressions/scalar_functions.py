"""Fast float versions of the functions for generated code; they raise ZeroDivisionError,
ValueError or OverflowError where `evaluate` reports division by zero, domain errors or overflow."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np


def _s_sign(x: float) -> float:
    # No arithmetic on the comparisons: x may be a numpy scalar (scipy's implicit solvers
    # pass the time as numpy.float64), whose booleans refuse to subtract.
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return x if x != x else 0.0


def _s_integral(to_int: Callable) -> Callable:
    return lambda x: float(to_int(x)) if math.isfinite(x) else x  # math.floor gives an int


def _s_round(x: float) -> float:
    if not math.isfinite(x):
        return x
    t = float(math.trunc(x))
    return t + math.copysign(1.0, x) if abs(x - t) >= 0.5 else t


def _s_mod(x: float, y: float) -> float:
    if y == 0:
        raise ZeroDivisionError("mod by zero")
    return float(x % y)


def _s_extreme(pick: Callable) -> Callable:
    def f(*args: Any) -> float:
        if len(args) == 1 and not isinstance(args[0], (int, float)) and np.ndim(args[0]):
            return float(pick(args[0]))
        return float(pick(args))
    return f


def _s_sum(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) or np.ndim(x) == 0 else float(np.sum(x))


def _s_index(seq: Any, i: float) -> float:
    # ValueError: the engine reports it as the block's formula failing, naming the block.
    if i != int(i):
        raise ValueError(f"index must be a whole number, not {i!r}")
    if np.ndim(seq) == 0:
        raise ValueError(f"cannot index a number ({seq!r}[{int(i)}]): only a vector has elements")
    if not -len(seq) <= int(i) < len(seq):
        raise ValueError(f"index {int(i)} is outside a vector of {len(seq)} elements")
    return float(seq[int(i)])


SCALAR_FUNCTIONS: dict[str, Callable] = {
    "_f_" + name: f for name, f in {
        "exp": math.exp, "log": math.log, "log10": math.log10, "log2": math.log2,
        "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
        "acos": math.acos, "atan": math.atan, "atan2": math.atan2, "sinh": math.sinh,
        "cosh": math.cosh, "tanh": math.tanh, "abs": math.fabs, "sign": _s_sign,
        "floor": _s_integral(math.floor), "ceil": _s_integral(math.ceil), "round": _s_round,
        "min": _s_extreme(min), "max": _s_extreme(max), "mod": _s_mod, "rem": math.fmod,
        "hypot": math.hypot, "pow": math.pow, "sum": _s_sum, "index": _s_index,
    }.items()}
