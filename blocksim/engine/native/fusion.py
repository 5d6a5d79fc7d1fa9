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

The generator orders blocks by their data flow, so a bank of relay oscillators comes out
relay, gain, bias, relay, gain, bias, ...: no two neighbours alike, 150 straight lines
for 50 oscillators, which numba took 2 to 3 s to type and lower (most of a new 202-block
model's first compile). In large functions (MIN_CHUNKS chunks and up) a repeating group
of up to MAX_PERIOD chunks becomes one loop too, each iteration running one group's
lines in their order: exactly the straight-line order, so nothing is reordered and the
values are the same to the bit.
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
# Functions of at least this many chunks (blocks' code) fuse repeating groups of chunks
# too (`fuse`'s max_period): smaller ones compile fast anyway, and straight-line code
# with constant indices is what runs fastest.
MIN_CHUNKS = 32
MAX_PERIOD = 8
_PLACEHOLDER = re.compile(r"(?<!\{)\{\d+\}(?!\})")  # "{3}" of a template, not "{{"


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


def periodic_end(templated: list[Templated], i: int, period: int) -> int:
    """The end (exclusive) of the periodic run starting at chunk i: consecutive groups of
    `period` chunks, each group the same templates in the same order as the first (a bank
    of oscillators generated relay, gain, bias per oscillator), of other blocks."""
    first = templated[i:i + period]
    if (len(first) < period or any(owner is None for owner, _, _ in first)
            or any("{{" in text for _, text, _ in first)):  # literal braces: not renumbered
        return i
    wanted = [(text, kinds(values)) for _, text, values in first]
    j = i + period
    while j + period <= len(templated):
        group = templated[j:j + period]
        if (any(owner is None for owner, _, _ in group)
                or [(text, kinds(values)) for _, text, values in group] != wanted
                or {owner for owner, _, _ in group} & {owner for owner, _, _ in
                                                          templated[j - period:j]}):
            break
        j += period
    return j


def _merged(templated: list[Templated], i: int, end: int, period: int) -> list[Templated]:
    """Each group of `period` chunks of a periodic run as one templated chunk (its lines in
    their order: the loop runs the groups one after the other, as the straight lines)."""
    merged = []
    for start in range(i, end, period):
        group = templated[start:start + period]
        text = "\n".join(t for _, t, _ in group)
        values = [v for _, _, vals in group for v in vals]
        count = 0

        def renumber(match: re.Match) -> str:
            nonlocal count
            count += 1
            return "{" + str(count - 1) + "}"
        # each chunk numbers its placeholders from 0: number them through the group
        merged.append((group[0][0], _PLACEHOLDER.sub(renumber, text), values))
    return merged


def fuse(chunks: list[Chunk], prefix: str, max_period: int = 0
         ) -> tuple[list[str], dict[str, np.ndarray]]:
    """Lines of a function body (indented 4) from (owner, lines) chunks, and the arrays
    (named `{prefix}I<n>` / `{prefix}P<n>`) that the generated loops index. With
    `max_period` > 1, repeating groups of up to that many chunks (not fused one kind at a
    time) become one loop too, each iteration running one group's lines in their order."""
    arrays: dict[str, np.ndarray] = {}
    templated = templates(chunks)
    out: list[str] = []
    i = 0
    while i < len(templated):
        j = run_end(templated, i)
        run = templated[i:j]
        if j - i < MIN_RUN:
            for period in range(2, max_period + 1):
                end = periodic_end(templated, i, period)
                if end - i >= MIN_RUN * period:
                    run, j = _merged(templated, i, end, period), end
                    break
        if len(run) < MIN_RUN:
            for _, t, vals in templated[i:j]:
                body = t.format(*[_plain(v) for v in vals])
                out += ["    " + line for line in body.split("\n")]
            i = j
            continue
        text, values = run[0][1:]
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
