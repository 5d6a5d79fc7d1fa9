"""numba versions of the formula functions that generated code calls (`_f_<name>`).

They mirror `expressions.SCALAR_FUNCTIONS` for scalar arguments. Where Python raises on a
domain error (log of a negative number), numba code returns NaN instead; the engine then
re-evaluates the Python functions at that state to name the block (see `native.py`).
The variadic ones (min, max, sum, index over a vector) are not here: a model that uses
them runs its functions in Python. `_log` is what an event entry becomes in compiled event
code (see `native.codegen`).
"""
from __future__ import annotations

import math

from numba import njit

__all__ = ["_f_exp", "_f_log", "_f_log10", "_f_log2", "_f_sqrt", "_f_sin", "_f_cos", "_f_tan",
           "_f_asin", "_f_acos", "_f_atan", "_f_atan2", "_f_sinh", "_f_cosh", "_f_tanh",
           "_f_abs", "_f_sign", "_f_floor", "_f_ceil", "_f_round", "_f_mod", "_f_rem",
           "_f_hypot", "_f_pow", "_log", "_hist_read", "_hist_due",
           "_hist_later"]

_f_exp, _f_log, _f_log10, _f_log2 = math.exp, math.log, math.log10, math.log2
_f_sqrt, _f_sin, _f_cos, _f_tan = math.sqrt, math.sin, math.cos, math.tan
_f_asin, _f_acos, _f_atan, _f_atan2 = math.asin, math.acos, math.atan, math.atan2
_f_sinh, _f_cosh, _f_tanh, _f_abs = math.sinh, math.cosh, math.tanh, math.fabs
_f_rem, _f_hypot, _f_pow = math.fmod, math.hypot, math.pow
# Input histories (transport delays): `blocksim.blocktypes.history_ring`'s readers, compiled.
from blocksim.engine.native.rings import hist_due as _hist_due  # noqa: E402
from blocksim.engine.native.rings import hist_read as _hist_read  # noqa: E402
from blocksim.engine.native.rings import later as _hist_later  # noqa: E402


@njit(cache=True)
def _f_sign(x: float) -> float:
    if x != x:
        return x
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


@njit(cache=True)
def _f_floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


@njit(cache=True)
def _f_ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


@njit(cache=True)
def _f_round(x: float) -> float:
    if not math.isfinite(x):
        return x
    t = float(math.trunc(x))
    return t + math.copysign(1.0, x) if abs(x - t) >= 0.5 else t


@njit(cache=True)
def _f_mod(x: float, y: float) -> float:
    if y == 0:
        return math.nan  # Python raises; the engine names the block from the NaN
    return x - y * math.floor(x / y)


@njit(cache=True, inline="always")
def _log(ev, block: int, kind: int) -> None:
    """Append the event entry (block, kind code) to ev (count in ev[0]); past the end of
    the array only the count grows, which tells the loop to hand the event to Python."""
    n = ev[0]
    if 2 * n + 2 < ev.size:
        ev[2 * n + 1] = block
        ev[2 * n + 2] = kind
    ev[0] = n + 1
