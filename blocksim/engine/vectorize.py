"""Runs of same-type blocks in `deriv` as numpy operations, for the Python path.

Straight-line Python costs tens of nanoseconds per line: a chain of 100 lags spends most of
a derivative evaluation on 100 nearly identical lines. Where consecutive blocks wrote the
same arithmetic line over different slots (after copy propagation a lag chain's derivative
is `dx_[k] = x_[k - 1] - x_[k]`), the run becomes one line over slices,

    dx_[1:100] = x[0:99] - x[1:100]

computed elementwise by numpy with the very same floating-point operations. Only lines of
+, - and * qualify: Python raises on a division by zero or a power's overflow where numpy
would return inf, and an error must name its block. The templates are those of the numba
backend's block-type kernels (`native.fusion`).

The lines left straight-line read the states as a Python list, `x_ = x.tolist()`; once the
runs are numpy lines they often read only the first few (the chain: `x_[0]`), and listing
only those (`x_ = x[:1].tolist()`) saves a microsecond per call of a 100-state model.
"""
from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from blocksim.compiler import dataflow
from blocksim.engine.native import fusion

MIN_RUN = 8  # shorter runs stay straight-line (a numpy call costs about a dozen lines)
_ARITHMETIC = re.compile(r"^[\s+\-*()]*$")  # what may surround the placeholders
_ARRAYS = {"x_": "x", "m_": "m", "z_": "z", "dx_": "dx_"}  # slot base -> the ndarray
_HEAD = re.compile(r"^(x_|m_|z_) = (x|m|z)\.tolist\(\)$")  # a list the plain lines read


def _listed_prefix(array: str, lines: list[str]) -> str | None:
    """`a[:k]` for the list `array` (x_, m_ or z_) when `lines` only read it at constant
    indices below k ("" when they do not read it at all); None when they use it otherwise
    (a computed index, a write, the whole list)."""
    uses = re.findall(rf"\b{array}\b(\[\d+\](?!\s*[-+*/%&|^@<>]*=(?!=)))?", "\n".join(lines))
    if not all(uses):
        return None
    indices = [int(use[1:-1]) for use in uses]
    return f"{array[:-1]}[:{max(indices) + 1}]" if indices else ""


def _trim_heads(body: list[str]) -> list[str]:
    """`body` with each `x_ = x.tolist()` (and m_, z_) listing only the leading elements
    the other lines read, or dropped if none is read (the same values, fewer converted)."""
    out = []
    for k, line in enumerate(body):
        head = _HEAD.match(line)
        prefix = _listed_prefix(head.group(1), body[:k] + body[k + 1:]) if head else None
        if prefix is None:
            out.append(line)
        elif prefix:
            out.append(f"{head.group(1)} = {prefix}.tolist()")
    return out


def _candidate(text: str) -> bool:
    """One assignment `{0} = <+, -, * of placeholders>`."""
    if "\n" not in text and text.startswith("{0} = "):
        rest = re.sub(r"\{\d+\}", "", text[len("{0} = "):])
        return "{0}" not in text[6:] and bool(_ARITHMETIC.match(rest))
    return False


def _slice(values: list[int]) -> str | None:
    """`a:b` or `a:b:d` for evenly spaced increasing indices, else None."""
    step = values[1] - values[0]
    if step <= 0 or any(b - a != step for a, b in zip(values, values[1:])):
        return None
    stop = values[-1] + step
    return f"{values[0]}:{stop}" if step == 1 else f"{values[0]}:{stop}:{step}"


def _vector_line(text: str, run: list[tuple[Any, str, list[tuple[str, str]]]],
                 arrays: dict[str, np.ndarray], slots: Mapping[str, Any]) -> str | None:
    """The run as one numpy line, or None if it does not qualify."""
    fields = []
    written = run[0][2][0][1].split("[", 1)[0]
    for p, (kind, token) in enumerate(run[0][2]):
        column = [r[2][p][1] for r in run]
        if p > 0 and all(c == token for c in column):
            if kind == "slot" and token.startswith(written + "["):
                return None  # reads what the run writes
            fields.append(token)
            continue
        if kind in ("num", "par"):  # a parameter slot: its value (`slots`)
            name = f"_V{len(arrays)}"
            arrays[name] = np.array([float(c if kind == "num" else slots[c]) for c in column])
            fields.append(name)
            continue
        base = token.split("[", 1)[0]
        if kind != "slot" or base not in _ARRAYS or (p > 0 and base == written):
            return None  # signals are Python locals: a varying one cannot be sliced
        indices = [int(c[len(base) + 1:-1]) for c in column]
        if p == 0 and len(set(indices)) != len(indices):
            return None
        where = _slice(indices)
        if where is None:
            name = f"_V{len(arrays)}"
            arrays[name] = np.array(indices, dtype=np.int64)
            where = name
        fields.append(f"{_ARRAYS[base]}[{where}]")
    return text.format(*fields)


def vector_source(fn: dataflow.Function, name: str, slots: Mapping[str, Any] = MappingProxyType({})
                  ) -> tuple[str, dict[str, np.ndarray]] | None:
    """Source of `name(t, x, m, z)`, `deriv` with its qualifying runs vectorised, and the
    index and parameter arrays it uses (parameter slots read from `slots`, the generated
    globals: the result holds their values); None if no run qualifies."""
    arrays: dict[str, np.ndarray] = {}
    chunks = fusion.group(fn.statements)
    templated = fusion.templates(chunks)
    body: list[str] = []
    found = False
    i = 0
    while i < len(templated):
        text = templated[i][1]
        j = fusion.run_end(templated, i) if _candidate(text) else i + 1
        line = _vector_line(text, templated[i:j], arrays, slots) if j - i >= MIN_RUN else None
        if line is not None:
            body.append(line)
            found = True
        else:
            for _, lines in chunks[i:j]:
                body += lines
        i = j
    if not found:
        return None
    out = [f"def {name}(t, x, m, z):"]
    for line in _trim_heads(body):
        if line.startswith("dx_ = [0.0] * "):
            line = f"dx_ = np.zeros({line.rsplit(' ', 1)[1]})"
        out += ["    " + part for part in line.split("\n")]
    return "\n".join(out) + "\n", arrays
