"""Continuous linear systems: transfer functions and state-space models.

Both become straight-line generated code (sums of products with exact coefficient
literals, zero coefficients left out), so a linear block costs no Python call and no
matrix product per evaluation.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from blocksim.blocktypes.blockspec import BlockType, Emit, Param, Port, Sizes, broadcast, lit, size_of


def _combo(terms: Sequence[tuple[float, str]]) -> str:
    """Source of sum(c * name), skipping zero coefficients and unit factors ("0.0" if empty)."""
    text = ""
    for c, name in terms:
        if c == 0.0:
            continue
        term = name if abs(c) == 1.0 else f"{lit(abs(c))} * {name}"
        if not text:
            text = term if c > 0.0 else f"-{term}"
        else:
            text += f" + {term}" if c > 0.0 else f" - {term}"
    return text or "0.0"


def _values(value: Any) -> tuple[float, ...]:
    """A coefficient parameter as a hashable tuple (the key of the caches below)."""
    if isinstance(value, float):
        return (value,)
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype == float:
        return tuple(value.tolist())  # a resolved vector parameter: the common case
    return tuple(np.atleast_1d(np.asarray(value, dtype=float)).ravel().tolist())


# A large diagram repeats a few transfer functions many times, and each is asked for its
# coefficients several times (check, feedthrough, output, derivative): compute each once.
@functools.lru_cache(maxsize=4096)
def _coefficients(num: tuple[float, ...], den: tuple[float, ...]
                  ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    num_arr, den_arr = np.array(num), np.array(den)
    nz = np.flatnonzero(num_arr)
    num_arr = num_arr[nz[0]:] if len(nz) else np.zeros(1)
    pad = np.concatenate([np.zeros(len(den_arr) - len(num_arr)), num_arr]) / den_arr[0]
    return tuple(float(v) for v in pad), tuple(float(v) for v in den_arr / den_arr[0])


@functools.lru_cache(maxsize=4096)
def _num_degree(num: tuple[float, ...]) -> int:
    nz = [k for k, v in enumerate(num) if v != 0.0]
    return len(num) - 1 - nz[0] if nz else 0


@functools.lru_cache(maxsize=4096)
def _check_coefficients(num: tuple[float, ...], den: tuple[float, ...]) -> str | None:
    for name, values in (("num", num), ("den", den)):
        problem = _finite(name, np.array(values))
        if problem:
            return problem
    if den[0] == 0.0:
        return f"the leading denominator coefficient den[0] is zero (den = {list(den)})"
    if _num_degree(num) > len(den) - 1:
        return (f"improper transfer function: numerator degree {_num_degree(num)} "
                f"exceeds denominator degree {len(den) - 1}")
    return None


def _finite(name: str, arr: np.ndarray) -> str | None:
    if not np.all(np.isfinite(arr)):
        return f"'{name}' must contain finite numbers only, got {arr.tolist()}"
    return None


class TransferFunction(BlockType):
    """A SISO transfer function num(s)/den(s), coefficients given highest power first.

    It is realised in controllable canonical form (one state per order of den, zero
    initial state) and applied elementwise to a vector input. It must be proper
    (deg num <= deg den); the output depends directly on the input only when the degrees
    are equal, so a strictly proper transfer function breaks algebraic loops like an
    integrator does.
    """

    name = "TransferFunction"
    category = "Continuous"
    params = (
        Param("num", "vector", 1.0, "numerator coefficients, highest power of s first"),
        Param("den", "vector", [1.0, 1.0], "denominator coefficients, highest power of s first"),
    )
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "output"),)

    @staticmethod
    def coefficients(p) -> tuple[list[float], list[float]]:
        """(b, a): numerator padded to the order n, both divided by den[0]; a[0] == 1."""
        b, a = _coefficients(_values(p.num), _values(p.den))
        return list(b), list(a)

    @staticmethod
    def _num_degree(p) -> int:
        return _num_degree(_values(p.num))

    def check(self, p):
        for name in ("num", "den"):
            if not isinstance(p[name], float):
                arr = np.asarray(p[name], dtype=float)
                if arr.ndim > 1:
                    return f"'{name}' must be a vector of coefficients, got shape {arr.shape}"
        return _check_coefficients(_values(p.num), _values(p.den))

    def feedthrough(self, p):
        try:
            biproper = self._num_degree(p) == size_of(p.den) - 1
        except (ValueError, TypeError):
            biproper = True
        return {"y": ("u",) if biproper else ()}

    def sizes(self, p, in_widths):
        w = in_widths.get("u") or 1
        return Sizes({"y": w}, states=(size_of(p.den) - 1) * w)

    def output(self, e: Emit):
        b, a = self.coefficients(e.p)
        n = len(a) - 1
        lines = []
        for j, y in enumerate(e.y["y"]):
            xs = e.x[j * n:(j + 1) * n]
            # y = sum_k (b[n-k] - a[n-k] b0) x_k + b0 u, state x_k of order k (k = 0..n-1)
            terms = [(b[n - k] - a[n - k] * b[0], xs[k]) for k in range(n)]
            terms.append((b[0], _pick(e.u["u"], j)))
            lines.append(f"{y} = {_combo(terms)}")
        return {"y": lines}

    def derivative(self, e: Emit):
        _, a = self.coefficients(e.p)
        n = len(a) - 1
        if n == 0:
            return []  # a pure gain
        lines = []
        for j in range(len(e.y["y"])):
            xs, dxs = e.x[j * n:(j + 1) * n], e.dx[j * n:(j + 1) * n]
            lines += [f"{dxs[k]} = {xs[k + 1]}" for k in range(n - 1)]
            terms = [(1.0, _pick(e.u["u"], j))] + [(-a[n - k], xs[k]) for k in range(n)]
            lines.append(f"{dxs[n - 1]} = {_combo(terms)}")
        return lines


def _matrix(value: Any) -> np.ndarray:
    """A 2-D float array from a matrix parameter; a scalar is 1x1. ValueError otherwise."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    if arr.ndim != 2:
        raise ValueError(f"is not a matrix (give nested lists such as [[1, 0]]), "
                         f"got {arr.ndim}-D data")
    return arr


class StateSpace(BlockType):
    """A linear state-space model x' = A x + B u, y = C x + D u, with x(0) = x0.

    A is n x n, B n x m, C p x n and D p x m (a scalar 0 stands for the zero matrix); the
    input has width m and the output width p. The output depends directly on the input
    only when D has a nonzero entry, so with D = 0 the block breaks algebraic loops.
    """

    name = "StateSpace"
    category = "Continuous"
    params = (
        Param("A", "vector", doc="state matrix, n x n (nested lists; a scalar for 1 x 1)",
              table=True),
        Param("B", "vector", doc="input matrix, n x m", table=True),
        Param("C", "vector", doc="output matrix, p x n", table=True),
        Param("D", "vector", 0.0, "feedthrough matrix, p x m (a scalar 0: zero matrix)",
              table=True),
        Param("x0", "vector", 0.0, "initial state (length n, or a scalar for all)"),
    )
    inputs = (Port("u", "input, width m"),)
    outputs = (Port("y", "output, width p"),)

    @staticmethod
    def matrices(p) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        A, B, C = _matrix(p.A), _matrix(p.B), _matrix(p.C)
        D = np.asarray(p.D, dtype=float)
        D = np.zeros((C.shape[0], B.shape[1])) if D.ndim == 0 and D == 0.0 else _matrix(D)
        return A, B, C, D

    def check(self, p):
        try:
            mats = dict(zip("ABCD", self.matrices(p)))
        except ValueError as exc:
            bad = next(k for k in "ABCD" if np.asarray(p[k]).ndim not in (0, 2))
            return f"'{bad}' {exc}"
        for name, arr in mats.items():
            problem = _finite(name, arr)
            if problem:
                return problem
        A, B, C, D = mats.values()
        n = A.shape[0]
        if A.shape != (n, n):
            return f"A must be square, got {A.shape[0]} x {A.shape[1]}"
        if B.shape[0] != n:
            return f"B has {B.shape[0]} rows but A is {n} x {n}"
        if C.shape[1] != n:
            return f"C has {C.shape[1]} columns but A is {n} x {n}"
        if D.shape != (C.shape[0], B.shape[1]):
            return (f"D is {D.shape[0]} x {D.shape[1]} but must be {C.shape[0]} x {B.shape[1]} "
                    f"(rows of C x columns of B)")
        if size_of(p.x0) not in (1, n):
            return f"x0 has {size_of(p.x0)} elements but A is {n} x {n}"
        if np.asarray(p.x0).ndim > 1:
            return "x0 must be a vector"
        return _finite("x0", np.atleast_1d(np.asarray(p.x0, dtype=float)))

    def feedthrough(self, p):
        try:
            direct = bool(np.any(np.asarray(p.D, dtype=float) != 0.0))
        except (ValueError, TypeError):
            direct = True
        return {"y": ("u",) if direct else ()}

    def sizes(self, p, in_widths):
        A, B, C, _ = self.matrices(p)
        m, w = B.shape[1], in_widths.get("u")
        if w is not None and w != m:
            raise ValueError(f"the input has width {w} but B has {m} columns")
        return Sizes({"y": C.shape[0]}, states=A.shape[0])

    def initial_states(self, p, n):
        return broadcast(p.x0, n)

    def output(self, e: Emit):
        _, _, C, D = self.matrices(e.p)
        u = e.u["u"]
        return {"y": [f"{y} = " + _combo([*zip(C[i], e.x), *zip(D[i], u)])
                      for i, y in enumerate(e.y["y"])]}

    def derivative(self, e: Emit):
        A, B, _, _ = self.matrices(e.p)
        u = e.u["u"]
        return [f"{dx} = " + _combo([*zip(A[i], e.x), *zip(B[i], u)])
                for i, dx in enumerate(e.dx)]


def _pick(seq: list[str], k: int) -> str:
    return seq[k] if len(seq) > 1 else seq[0]


BLOCK_TYPES = (TransferFunction, StateSpace,)
