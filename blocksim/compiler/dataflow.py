"""Dataflow over the generated functions' text: which statements feed which results.

The generated functions are straight-line code (compound statements only inside one block's
lines), so a single pass over their top-level statements tells what each result depends
on. The engine uses it to derive cheaper functions from the six generated ones without
touching the code generator: `observe` computes only the logged signals (the output grid
calls it hundreds of times per run), and the Jacobian's sparsity pattern for the implicit
solvers follows from which states each derivative reads.
"""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

import numpy as np

_DEF = re.compile(r"^def (\w+)\((.*)\):$")
_ARRAYS = ("x_", "dx_", "m_", "z_", "g_", "zn_")
_SIDE_EFFECTS = ("ev", "raise")


@dataclass
class Statement:
    """One top-level statement of a generated function (a compound one with its body)."""

    lines: list[str]  # without the function's indentation
    owner: int | None
    writes: set[str]
    reads: set[str]
    states: set[int]  # x_[k] read with a constant k
    dynamic_state: bool  # x_ read with a computed index
    stores: set[str]  # array slots written, e.g. "dx_[3]"; a non-slot array written: "*"


@dataclass
class Function:
    name: str
    args: str
    statements: list[Statement]


def split(source: str, owners: tuple[int | None, ...] | list[int | None] = ()) -> dict[str, Function]:
    """The generated module's functions, each as its list of top-level statements."""
    functions: dict[str, Function] = {}
    current: Function | None = None
    lines = source.split("\n")
    group: list[str] = []
    group_owner: int | None = None

    def flush() -> None:
        if current is not None and group:
            current.statements.append(_analyse(group, group_owner))

    for no, line in enumerate(lines):
        match = _DEF.match(line)
        if match:
            flush()
            group = []
            current = Function(match.group(1), match.group(2), [])
            functions[current.name] = current
            continue
        if not line.strip() or current is None:
            continue
        body = line[4:]
        continuation = body.startswith((" ", "elif ", "else:", "except", "finally:"))
        if continuation and group:
            group.append(body)
            continue
        flush()
        group = [body]
        group_owner = owners[no] if no < len(owners) else None
    flush()
    return functions


def _analyse(lines: list[str], owner: int | None) -> Statement:
    tree = ast.parse(textwrap.dedent("\n".join(lines)))
    writes, reads, states, stores = set(), set(), set(), set()
    dynamic = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (writes if isinstance(node.ctx, ast.Store) else reads).add(node.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            name = node.value.id
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if isinstance(node.ctx, ast.Store):
                stores.add(f"{name}[{index}]" if name in _ARRAYS and isinstance(index, int)
                           else "*")
            elif name == "x_":
                if isinstance(index, int):
                    states.add(index)
                else:
                    dynamic = True
        elif isinstance(node, (ast.Raise, ast.Call)) and _effect(node):
            stores.add("*")
    return Statement(lines, owner, writes, reads, states, dynamic, stores)


def _effect(node: ast.AST) -> bool:
    """A statement that must run even if nobody reads what it assigns."""
    if isinstance(node, ast.Raise):
        return True
    func = node.func  # type: ignore[attr-defined]
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
        and func.value.id in _SIDE_EFFECTS


def observe_source(functions: dict[str, Function], signals: list[int]) -> str:
    """Source of `observe(t, x, m, z)`: the logged signals only, pruned from `outputs`."""
    outputs = functions["outputs"]
    body = [st for st in outputs.statements if not st.lines[0].startswith("return")]
    needed = {f"s{i}" for i in signals}
    kept: list[Statement] = []
    for st in reversed(body):
        if st.writes & needed or "*" in st.stores or not st.writes:
            kept.append(st)
            needed |= st.reads
    lines = [f"def observe({outputs.args}):"]
    for st in reversed(kept):
        lines += ["    " + line for line in st.lines]
    lines.append(f"    return [{', '.join(f's{i}' for i in signals)}]")
    return "\n".join(lines) + "\n"


def jacobian_sparsity(functions: dict[str, Function]) -> list[tuple[int, int]] | None:
    """(i, j) pairs where d dx_i / d x_j may be nonzero (dx_i reads x_j); None if unknown."""
    deps: dict[str, frozenset[int]] = {}
    entries: list[tuple[int, int]] = []
    for st in functions["deriv"].statements:
        if st.dynamic_state:
            return None
        found = set(st.states)
        for name in st.reads:
            found |= deps.get(name, frozenset())
        for name in st.writes:
            deps[name] = deps.get(name, frozenset()) | found
        for store in st.stores:
            if store.startswith("dx_["):
                row = int(store[4:-1])
                entries += [(row, col) for col in found]
            elif store == "*":
                return None
    return entries
