"""Seeded noise sources: Random Number and Band-Limited White Noise, held between hits.

The numbers come from L'Ecuyer's MRG32k3a generator in its floating-point form: six
integers below 2**32 held exactly in the block's float64 discrete slots, advanced by
products below 2**53 and exact reductions, so the Python and numba backends run the same
exact arithmetic and draw the same stream, run after run. Normal variates come from the
Box-Muller transform of two uniforms (a fixed number of draws per sample, no rejection
loop). The seed picks the starting state through splitmix64 at compile time.
"""
from __future__ import annotations

import math

from blocksim.blocktypes.blockspec import BlockType, Emit, Param, Port, Sizes, broadcast, lit, size_of
from blocksim.blocktypes.sampletime import parse_sample_time

from .nonlinear import sizes_problem

# MRG32k3a (P. L'Ecuyer, "Good parameters and implementations for combined multiple
# recursive random number generators", Operations Research 47(1), 1999).
M1, M2 = 4294967087.0, 4294944443.0
A12, A13N, A21, A23N = 1403580.0, 810728.0, 527612.0, 1370589.0
NORM = 2.328306549295727688e-10  # 1 / (M1 + 1)
STATE = 6  # s10, s11, s12 (first component), s20, s21, s22 (second)

_MASK = (1 << 64) - 1


def seed_state(seed: int) -> list[float]:
    """The generator's six state values for a seed: splitmix64 outputs reduced modulo m1
    (first three) and m2 (last three); a component that came out all zero gets a 1."""
    x, state = seed & _MASK, []
    for k in range(STATE):
        x = (x + 0x9E3779B97F4A7C15) & _MASK
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        state.append(float(z % int(M1 if k < 3 else M2)))
    for part in (slice(0, 3), slice(3, 6)):
        if not any(state[part]):
            state[part.start] = 1.0
    return state


def _mod(value: str, modulus: float, target: str) -> list[str]:
    """Lines setting `target` to `value` mod `modulus` (in [0, modulus)), exactly: the
    quotient's floor may be off by one after rounding, which the two tests put right."""
    m = lit(modulus)
    return [f"{target} = {value}",
            f"{target} -= _f_floor({target} / {m}) * {m}",
            f"if {target} < 0.0: {target} += {m}",
            f"if {target} >= {m}: {target} -= {m}"]


def _step(s: list[str], u: str, tmp: str) -> list[str]:
    """Lines advancing the state variables `s` by one draw and setting `u` in (0, 1)."""
    a, b = f"{tmp}a", f"{tmp}b"
    return [*_mod(f"{lit(A12)} * {s[1]} - {lit(A13N)} * {s[0]}", M1, a),
            *_mod(f"{lit(A21)} * {s[5]} - {lit(A23N)} * {s[3]}", M2, b),
            f"{s[0]}, {s[1]}, {s[2]} = {s[1]}, {s[2]}, {a}",
            f"{s[3]}, {s[4]}, {s[5]} = {s[4]}, {s[5]}, {b}",
            f"{u} = (({a} - {b} + {lit(M1)}) if {a} <= {b} else ({a} - {b})) * {lit(NORM)}"]


def _check_sample_time(p) -> str | None:
    try:
        rate = parse_sample_time(p.sample_time)
    except ValueError as exc:
        return f"parameter 'sample_time' {exc}"
    if not rate.discrete:
        return (f"parameter 'sample_time' must be a period > 0 (or [period, offset]): a noise "
                f"source has no input to inherit a rate from, got {rate.kind}")
    return None


SEED_DOC = ("picks the stream: the same seed gives the same numbers on every run and on "
            "both backends")
SAMPLE_DOC = "sample period Ts, or [Ts, offset] with 0 <= offset < Ts"


class _HeldNormal(BlockType):
    """Normal variates y = mean + scale * N(0, 1), drawn at each hit and held until the next.

    Slots: the held outputs, then the generator's state. An output vector draws its
    elements one after another from the one stream.
    """

    category = "Sources"
    discrete = True
    outputs = (Port("y", "the held sample"),)
    _VECTORS: tuple[str, ...] = ()

    @classmethod
    def _rate_text(cls) -> str:
        return "discrete, by its sample_time parameter (a period, or [period, offset])"

    def _mean_scale(self, p, n: int) -> tuple[list[float], list[float]]:
        raise NotImplementedError

    def check(self, p):
        return _check_sample_time(p) or sizes_problem(p, self._VECTORS)

    def sizes(self, p, in_widths):
        n = max(size_of(p[name]) for name in self._VECTORS)
        return Sizes({"y": n}, discrete=n + STATE)

    def initial_discrete(self, p, n):
        return [0.0] * (n - STATE) + seed_state(p.seed)

    def output(self, e: Emit):
        return {"y": [f"{y} = {m}" for y, m in zip(e.y["y"], e.m)]}

    def _locals(self, e: Emit) -> list[str]:
        return [f"_r{e.index}_{k}" for k in range(STATE)]

    def sample_output(self, e: Emit):
        """Draw from a copy of the state (the update advances the state itself)."""
        n = len(e.y["y"])
        s, state = self._locals(e), e.m[n:]
        mean, scale = self._mean_scale(e.p, n)
        u1, u2, tmp = f"_u{e.index}", f"_v{e.index}", f"_p{e.index}"
        lines = [f"{', '.join(s)} = {', '.join(state)}"]
        for k in range(n):
            lines += _step(s, u1, tmp) + _step(s, u2, tmp)
            normal = f"math.sqrt(-2.0 * math.log({u1})) * math.cos({lit(2.0 * math.pi)} * {u2})"
            value = f"{lit(scale[k])} * {normal}" + (f" + {lit(mean[k])}" if mean[k] else "")
            lines.append(f"{e.m[k]} = {value}")
        return {"y": lines}

    def sample_update(self, e: Emit):
        n = len(e.y["y"])
        s, state = self._locals(e), e.m[n:]
        u, tmp = f"_u{e.index}", f"_p{e.index}"
        lines = [f"{', '.join(s)} = {', '.join(state)}"]
        for _ in range(2 * n):
            lines += _step(s, u, tmp)
        return lines + [f"{', '.join(state)} = {', '.join(s)}"]


class RandomNumber(_HeldNormal):
    """Normally distributed numbers, a new one at each sample hit, held until the next.

    Simulink's Random Number: mean + sqrt(variance) * N(0, 1) (0 before the first hit,
    with an offset). Seeded: reproducible run to run and equal on both backends. `mean`
    and `variance` may be vectors (one element per output)."""

    name = "RandomNumber"
    params = (
        Param("mean", "vector", 0.0, "mean of the numbers"),
        Param("variance", "vector", 1.0, "variance of the numbers, >= 0", low=0.0),
        Param("seed", "int", 0, SEED_DOC, low=0),
        Param("sample_time", "vector", 0.1, SAMPLE_DOC, unit="s"),
    )
    _VECTORS = ("mean", "variance")

    def _mean_scale(self, p, n):
        return broadcast(p.mean, n), [math.sqrt(v) for v in broadcast(p.variance, n)]


class BandLimitedWhiteNoise(_HeldNormal):
    """White noise for a continuous system, held for a sample time Ts between hits.

    Simulink's Band-Limited White Noise: at each hit sqrt(noise_power / Ts) * N(0, 1).

    `noise_power` is the height of the noise's power spectral density; holding for Ts
    makes the variance noise_power / Ts, so that the noise integrated over a time T has
    variance noise_power * T, as white noise of that density would. Choose Ts well below
    the smallest time constant of the system. Seeded as RandomNumber (0 before the first
    hit, with an offset); `noise_power` may be a vector (one element per output).
    """

    name = "BandLimitedWhiteNoise"
    params = (
        Param("noise_power", "vector", 0.1, "height of the power spectral density, in the "
              "signal's units squared per Hz, >= 0", low=0.0),
        Param("sample_time", "vector", 0.1, SAMPLE_DOC, unit="s"),
        Param("seed", "int", 23341, SEED_DOC, low=0),
    )
    _VECTORS = ("noise_power",)

    def _mean_scale(self, p, n):
        period = parse_sample_time(p.sample_time).period
        return [0.0] * n, [math.sqrt(v / period) for v in broadcast(p.noise_power, n)]


BLOCK_TYPES = (RandomNumber, BandLimitedWhiteNoise)
