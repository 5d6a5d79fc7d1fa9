"""`deriv` with the lines that read only modes and parameters computed once per mode set.

Between two events the modes (the discrete-state array m) do not change, so a derivative
line that reads only m_ and parameters (a relay's output, a switch's choice, a constant
times either) has the same value at every stage of every step of a segment, and again in
the event iteration's look-ahead until the modes change. The relay oscillators of
`benchmarks/relays.py` are the extreme case: their whole derivative is such lines, so each
of the nine derivative evaluations of an event evaluated every block again for the same
numbers.

The memoised function keeps those lines' results keyed on the bytes of the mode slots they
read (so -0.0 and 0.0, or two NaNs, count as different) and runs only the other lines on
each call. The same expressions are evaluated on the same values, so the results are the
very same floats. Which lines qualify is decided from `dataflow`'s analysis, strictly:
reads of m_ at constant indices, of numbers in the generated namespace (parameter slots,
inf) and of what such lines wrote; no call, no t, x or z, no side effect.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from blocksim.compiler import dataflow

# Fewer such lines and the key's check costs about what the lines would.
MIN_LINES = 8
_HEAD = re.compile(r"^(x_|m_|z_) = (x|m|z)\.tolist\(\)$")
_RESULT_INIT = re.compile(r"^dx_ = \[0\.0\] \* \d+$")
_MODE_SLOT = re.compile(r"\bm_\[(\d+)\]")
_MODE_ANY = re.compile(r"\bm_\b(?!\[\d+\])")


@dataclass
class Split:
    """`deriv`'s statements parted into those fixed by the modes and the others."""

    fixed: list[dataflow.Statement]  # in order; the result list's initialisation first
    rest: list[dataflow.Statement]  # in order, without the list heads and the return
    heads: dict[str, str]  # "x_" -> "x_ = x.tolist()" for the lists the rest reads
    carried: list[str]  # names the fixed lines write that the rest reads (dx_ aside)
    mode_span: tuple[int, int] | None  # m[lo:hi] holds every mode slot the fixed lines read


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def split(fn: dataflow.Function, namespace: Mapping[str, Any]) -> Split | None:
    """`fn` (the generated `deriv`) parted, or None when fewer than MIN_LINES lines are
    fixed by the modes or when the parts cannot run one after the other unchanged."""
    body = fn.statements
    if not body or body[-1].lines != ["return dx_"]:
        return None
    heads: dict[str, str] = {}
    fixed: list[dataflow.Statement] = []
    rest: list[dataflow.Statement] = []
    fixed_names: set[str] = set()
    for st in body[:-1]:
        line = st.lines[0]
        head = _HEAD.match(line) if len(st.lines) == 1 else None
        if head is not None:
            heads[head.group(1)] = line
            continue
        if (not fixed and not rest and len(st.lines) == 1 and _RESULT_INIT.match(line)):
            fixed.append(st)
            fixed_names.add("dx_")
            continue
        if "dx_" in fixed_names and _fixed_by_modes(st, fixed_names, namespace):
            fixed.append(st)
            fixed_names |= st.writes
        else:
            rest.append(st)
    if len(fixed) - 1 < MIN_LINES:
        return None
    rest_writes = set().union(*(st.writes for st in rest)) if rest else set()
    rest_stores = set().union(*(st.stores for st in rest)) if rest else set()
    fixed_stores = set().union(*(st.stores for st in fixed))
    if rest_writes & fixed_names or "*" in rest_stores or rest_stores & fixed_stores:
        return None  # a later line would overwrite what the memo hands back
    rest_reads = set().union(*(st.reads for st in rest)) if rest else set()
    carried = sorted((fixed_names - {"dx_"}) & rest_reads)
    lines = [ln for st in fixed for ln in st.lines]
    if any(_MODE_ANY.search(ln) for ln in lines):
        return None  # m_ used whole or at a computed index
    slots = [int(k) for ln in lines for k in _MODE_SLOT.findall(ln)]
    span = (min(slots), max(slots) + 1) if slots else None
    needed = {name: text for name, text in heads.items() if name in rest_reads}
    return Split(fixed, rest, needed, carried, span)


def _fixed_by_modes(st: dataflow.Statement, known: set[str],
                    namespace: Mapping[str, Any]) -> bool:
    """Whether `st` reads only m_, numbers of the generated namespace and names in
    `known`, calls nothing and stores at most into dx_ slots."""
    if st.dynamic_state or st.states or any(not s.startswith("dx_[") for s in st.stores):
        return False
    if any(_CALL.search(ln) for ln in st.lines):
        return False
    for name in st.reads:
        if name == "m_" or name in known:
            continue
        if name in namespace and _is_number(namespace[name]):
            continue
        return False
    return True


# "(" after a name other than a keyword, or after a subscript or a call: a call.
_CALL = re.compile(r"(?<!\w)(?!(?:if|else|and|or|not|in|is)\b)[A-Za-z_]\w*\s*\(|[\])]\s*\(")


def source(parts: Split, name: str) -> str:
    """Source of `make(memo, np)`, which returns `name(t, x, m, z)`: `deriv` as an array,
    the fixed lines run only when the mode slots they read differ from those of the last
    call that ran them (`memo`: [key, result list or array, carried values])."""
    span = parts.mode_span
    key = f"m[{span[0]}:{span[1]}].tobytes()" if span else "b''"
    mode_list = f"m[:{span[1]}].tolist()" if span else None
    out = ["def make(memo, np):", f"    def {name}(t, x, m, z):", f"        key = {key}",
           "        if key != memo[0]:"]
    if mode_list is not None:
        out.append(f"            m_ = {mode_list}")
    for st in parts.fixed:
        out += ["            " + ln for ln in st.lines]
    whole = not parts.rest
    out.append("            memo[1] = np.array(dx_)" if whole else "            memo[1] = dx_")
    out.append(f"            memo[2] = ({''.join(n + ', ' for n in parts.carried)})")
    out.append("            memo[0] = key")
    if whole:
        out += ["        return memo[1].copy()", f"    return {name}", ""]
        return "\n".join(out)
    out.append("        dx_ = memo[1][:]")
    if parts.carried:
        out.append(f"        {''.join(n + ', ' for n in parts.carried)}= memo[2]")
    out += ["        " + text for text in parts.heads.values()]
    for st in parts.rest:
        out += ["        " + ln for ln in st.lines]
    out += ["        return np.array(dx_)", f"    return {name}", ""]
    return "\n".join(out)
