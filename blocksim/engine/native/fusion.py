"""Block-type kernels: runs of blocks that generate the same code become one loop.

Straight-line code is ideal for Python, but LLVM's compile time grows much faster than
linearly with the length of a function: a 1,000-block chain takes minutes. Most large
diagrams repeat a few block types, and each instance's lines differ only in which slots
they touch (signals, states, ...) and in their parameter literals. Replacing those by
placeholders gives a template; consecutive instances with the same template become

    for _k in range(count):
        S[I3[_k]] = x_[I4[_k]] - P5[_k] * S[I6[_k]]

over index and parameter arrays, in the original order (so the result is the same as the
straight-line code, dependencies between instances included). Signals live in one array S.
Event code is fused too: the block an event entry names (`_log(ev, block, kind)`) is one
more placeholder, so fifty relays settle in one loop rather than 500 lines of branches (a
numba compile of minutes: its passes grow with the branches of a function).
Evenly spaced indices need no array: `dx_[1 + _k] = x_[0 + _k] - x_[1 + _k]` is a chain
of lags, a loop LLVM vectorises.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

import numpy as np

_TOKEN = re.compile(
    r"(?P<slot>\b(?:x_|dx_|g_|m_|zn_|z_)\[\d+\])"
    r"|(?P<sig>\bs\d+\b)"
    r"|(?P<par>\b_p\d+\b)"  # a parameter slot (`param_slots`; S after the signals here)
    r"|(?P<blk>(?<=_log\(ev, )\d+)"  # the block an event entry names (compiled event code)
    r"|(?P<num>(?<![\w.])(?:\d+\.\d*(?:e[+-]?\d+)?|\d+e[+-]?\d+))")
MIN_RUN = 4  # shorter runs stay straight-line


def _template(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(text with placeholders {0}, {1}, ..., [(kind, token) per placeholder])."""
    values: list[tuple[str, str]] = []

    def repl(match: re.Match) -> str:
        kind = match.lastgroup or ""
        values.append((kind, match.group(0)))
        return "{" + str(len(values) - 1) + "}"

    return _TOKEN.sub(repl, text.replace("{", "{{").replace("}", "}}")), values


def _plain(token: tuple[str, str]) -> str:
    """A token in straight-line code: a signal becomes its element of S."""
    kind, text = token
    return f"S[{text[1:]}]" if kind == "sig" else text


def kinds(values: list[tuple[str, str]]) -> list[str]:
    """What each placeholder stands for: a signal, a number, or a slot of which array."""
    return [token.split("[", 1)[0] if kind == "slot" else kind for kind, token in values]


def _index(arrays: dict[str, np.ndarray], name: str, values: list[int]) -> str:
    """The index expression of a run's k-th element: `a + d * _k` when the indices are
    evenly spaced (what LLVM vectorises: a chain of lags reads x_[k] and writes dx_[k]),
    else an index array registered under `name`."""
    step = values[1] - values[0]
    if all(b - a == step for a, b in zip(values, values[1:])):
        return f"{values[0]} + _k" if step == 1 else f"{values[0]} + {step} * _k"
    arrays[name] = np.array(values, dtype=np.int64)
    return f"{name}[_k]"


Chunk = tuple[int | None, list[str]]  # (owning block, its lines)
Templated = tuple[int | None, str, list[tuple[str, str]]]  # (owner, template, tokens)


def group(statements: Iterable[Any]) -> list[Chunk]:
    """Consecutive statements (`dataflow.Statement`) of one block as one chunk: the unit
    whose template is compared with its neighbours'."""
    chunks: list[Chunk] = []
    for st in statements:
        if chunks and st.owner is not None and chunks[-1][0] == st.owner:
            chunks[-1][1].extend(st.lines)
        else:
            chunks.append((st.owner, list(st.lines)))
    return chunks


def templates(chunks: list[Chunk]) -> list[Templated]:
    return [(owner, *_template("\n".join(lines))) for owner, lines in chunks]


def run_end(templated: list[Templated], i: int) -> int:
    """The end (exclusive) of the run starting at chunk i: consecutive chunks of different
    blocks with the same template over the same kinds of placeholders."""
    owner, text, values = templated[i]
    j = i + 1
    if owner is None:
        return j
    wanted = kinds(values)
    while (j < len(templated) and templated[j][0] is not None
           and templated[j][1] == text and templated[j][0] != templated[j - 1][0]
           and kinds(templated[j][2]) == wanted):
        j += 1
    return j


def fuse(chunks: list[Chunk], prefix: str) -> tuple[list[str], dict[str, np.ndarray]]:
    """Lines of a function body (indented 4) from (owner, lines) chunks, and the arrays
    (named `{prefix}I<n>` / `{prefix}P<n>`) that the generated loops index."""
    arrays: dict[str, np.ndarray] = {}
    templated = templates(chunks)
    out: list[str] = []
    i = 0
    while i < len(templated):
        text, values = templated[i][1:]
        j = run_end(templated, i)
        if j - i < MIN_RUN:
            for _, t, vals in templated[i:j]:
                body = t.format(*[_plain(v) for v in vals])
                out += ["    " + line for line in body.split("\n")]
            i = j
            continue
        run = templated[i:j]
        fields = []
        for p, (kind, _) in enumerate(values):
            column = [r[2][p][1] for r in run]
            if all(c == column[0] for c in column):
                fields.append(_plain((kind, column[0])))
                continue
            name = f"{prefix}{len(arrays)}"
            if kind == "num":
                arrays[name] = np.array([float(c) for c in column])
                fields.append(f"{name}[_k]")
            elif kind == "blk":  # an int: the block of an event entry
                fields.append(_index(arrays, name, [int(c) for c in column]))
            elif kind == "sig":
                fields.append(f"S[{_index(arrays, name, [int(c[1:]) for c in column])}]")
            else:
                base = column[0].split("[", 1)[0]
                index = _index(arrays, name, [int(c[len(base) + 1:-1]) for c in column])
                fields.append(f"{base}[{index}]")
        body = text.format(*fields)
        out.append(f"    for _k in range({len(run)}):")
        out += ["        " + line for line in body.split("\n")]
        i = j
    return out, arrays
