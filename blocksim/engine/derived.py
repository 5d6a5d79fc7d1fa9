"""Functions and patterns derived from a compiled model's code, built once per model.

The output grid needs only the logged signals, not all of them: `observe` is `outputs`
pruned to what the logging blocks read, and when those are states the grid is a slice of
the dense output (`observed_states`). Event look-ahead need only be repeated for the zero
crossings that move with t or x (`zc_moves`); event location evaluates one zero crossing
alone (`zc_component`); small models evaluate at events on Python lists (`list_function`);
runs of same-type blocks derive as numpy lines (`vector_deriv`); derivative lines fixed by the
modes are computed once per mode set (`mode_memo_deriv`). Implicit solvers of large
diagrams need the Jacobian's sparsity pattern, which follows from the signal graph as
written in `deriv`. All are cached in `CompiledModel.derived`; a generated function is the
single source of each.
"""
from __future__ import annotations

import logging
import re
from typing import Callable

import numpy as np

from blocksim.compiler import dataflow
from blocksim.compiler.compiled import CompiledModel
from blocksim.engine import mode_memo, vectorize
from blocksim.gc_pause import without_gc

log = logging.getLogger(__name__)

OBSERVE_FILENAME = "<blocksim generated observe>"
COMPONENT_FILENAME = "<blocksim generated zero crossing>"
LIST_FILENAME = "<blocksim generated list function>"
VECTOR_FILENAME = "<blocksim generated vectorised deriv>"
MEMO_FILENAME = "<blocksim generated mode-memo deriv>"
NEXT_TIME_FILENAME = "<blocksim generated next time event>"
# Below this many states a dense Jacobian is cheaper than scipy's sparse LU.
SPARSE_MIN_STATES = 64


@without_gc
def functions(model: CompiledModel) -> dict[str, dataflow.Function]:
    """The generated functions split into statements (cached)."""
    if "split" not in model.derived:
        model.derived["split"] = dataflow.split(model.code, model.line_owner)
    return model.derived["split"]


def output_order(model: CompiledModel) -> list[str]:
    """The blocks in the order `outputs` computes them (to name the first non-finite one)."""
    if "output_order" not in model.derived:
        order: dict[str, None] = {}
        for st in functions(model)["outputs"].statements:
            if st.owner is not None:
                order.setdefault(model.block_ids[st.owner])
        model.derived["output_order"] = list(order)
    return model.derived["output_order"]


def logged_indices(model: CompiledModel) -> list[int]:
    return [i for sig in model.logged for i in sig.indices]


@without_gc
def observe(model: CompiledModel) -> Callable:
    """observe(t, x, m, z) -> the logged signals, in the recorder's column order."""
    if "observe" not in model.derived:
        text = dataflow.observe_source(functions(model), logged_indices(model))
        namespace = model.functions["outputs"].__globals__  # the generated constants
        scope: dict = {}
        exec(compile(text, OBSERVE_FILENAME, "exec"), namespace, scope)  # our own text
        model.derived["observe"] = scope["observe"]
        model.derived["observe_source"] = text
    return model.derived["observe"]


def observe_function(model: CompiledModel) -> dataflow.Function:
    """`observe` split into statements (kept from when its text was made)."""
    observe(model)
    source = model.derived["observe_source"]
    return source.function or dataflow.split(source)["observe"]


def observe_reads(model: CompiledModel) -> list[int]:
    """The states `observe` reads (all of them if it indexes x_ with a computed index)."""
    if "observe_reads" not in model.derived:
        observe(model)
        found: set[int] = set()
        for st in observe_function(model).statements:
            if st.dynamic_state:
                found = set(range(model.n_states))
                break
            found |= st.states
        model.derived["observe_reads"] = sorted(found)
    return model.derived["observe_reads"]


def observed_states(model: CompiledModel) -> list[int] | None:
    """The state behind each logged signal, if every one is a plain copy of a state (then
    the output grid is a slice of the dense output, computed for many points at once)."""
    if "observed_states" not in model.derived:
        observe(model)
        copies: dict[str, int] = {}
        result: list[int] | None = None
        for st in observe_function(model).statements:
            line = st.lines[0]
            state, alias = _STATE_COPY.match(line), _SIGNAL_COPY.match(line)
            if len(st.lines) > 1:
                break
            if state:
                copies[state.group(1)] = int(state.group(2))
            elif alias and alias.group(2) in copies:
                copies[alias.group(1)] = copies[alias.group(2)]
            elif line.startswith("return ["):
                names = line[len("return ["):-1].split(", ") if line != "return []" else []
                if all(name in copies for name in names):
                    result = [copies[name] for name in names]
                break
            elif not line.endswith(".tolist()"):
                break
        model.derived["observed_states"] = result
    return model.derived["observed_states"]


_STATE_COPY = re.compile(r"^(s\d+) = x_\[(\d+)\]$")
_SIGNAL_COPY = re.compile(r"^(s\d+) = (s\d+)$")


def list_function(model: CompiledModel, name: str) -> Callable:
    """`name` ("deriv" or "zc") as f(t, x_, m_, z_) over Python lists, returning a list."""
    key = f"{name}_list"
    if key not in model.derived:
        text = dataflow.list_source(functions(model)[name], key)
        scope: dict = {}
        exec(compile(text, LIST_FILENAME, "exec"), model.functions[name].__globals__, scope)
        model.derived[key] = scope[key]
    return model.derived[key]


@without_gc
def vector_deriv(model: CompiledModel) -> Callable | None:
    """`deriv` with runs of same-type blocks as numpy lines (`vectorize`), or None if the
    model has no such run; it returns an array."""
    if "deriv_vector" not in model.derived:
        made = vectorize.vector_source(functions(model)["deriv"], "deriv_vector",
                                       model.functions["deriv"].__globals__)
        function = None
        if made is not None:
            text, arrays = made
            scope = dict(model.functions["deriv"].__globals__)
            scope.update(arrays)
            exec(compile(text, VECTOR_FILENAME, "exec"), scope)  # our own text
            function = scope["deriv_vector"]
            log.debug("%s: deriv vectorised (%d lines)", model.source, text.count("\n"))
        model.derived["deriv_vector"] = function
    return model.derived["deriv_vector"]


@without_gc
def mode_memo_deriv(model: CompiledModel) -> Callable | None:
    """`make(memo, np)`, which returns `deriv` as an array with its lines fixed by the modes
    memoised in the list `memo` (`mode_memo`; one memo per run: it holds values of this
    model's parameters); None if too few lines are fixed by the modes."""
    if "deriv_mode_memo" not in model.derived:
        namespace = model.functions["deriv"].__globals__
        parts = mode_memo.split(functions(model)["deriv"], namespace)
        make = None
        if parts is not None:
            text = mode_memo.source(parts, "deriv_mode_memo")
            scope: dict = {}
            exec(compile(text, MEMO_FILENAME, "exec"), namespace, scope)  # our own text
            make = scope["make"]
            log.debug("%s: %d deriv lines fixed by the modes", model.source,
                      len(parts.fixed) - 1)
        model.derived["deriv_mode_memo"] = make
    return model.derived["deriv_mode_memo"]


def zc_component(model: CompiledModel, i: int) -> Callable:
    """g_i(t, x_, m_, z_) -> zero crossing i alone, from lists (event location)."""
    cache = model.derived.setdefault("zc_component", {})
    if i not in cache:
        name = f"zc_{i}"
        text = dataflow.component_source(functions(model)["zc"], "g_", i, name)
        namespace = model.functions["zc"].__globals__
        scope: dict = {}
        exec(compile(text, COMPONENT_FILENAME, "exec"), namespace, scope)  # our own text
        cache[i] = scope[name]
    return cache[i]


def zc_component_states(model: CompiledModel, i: int) -> tuple[int, ...] | None:
    """The states zero crossing i reads (`zc_component`'s), or None if it may read any."""
    cache = model.derived.setdefault("zc_component_states", {})
    if i not in cache:
        found = dataflow.component_states(functions(model)["zc"], "g_", i)
        cache[i] = None if found is None else tuple(found)
    return cache[i]


def next_time_parts(model: CompiledModel) -> list[tuple[int, Callable]]:
    """(block, f(t, m_)) for each block's own next time event, its lines of the generated
    `next_time` (`BlockType.next_time`): to name a block whose time event does not
    advance."""
    if "next_time_parts" not in model.derived:
        namespace = model.functions["next_time"].__globals__
        parts = []
        for st in functions(model)["next_time"].statements:
            if st.owner is None or st.lines[0].startswith("if "):
                continue  # `if _t3 < tn: tn = _t3`, `return tn`
            target = st.lines[0].split(" = ", 1)[0]
            text = "\n".join(["def part(t, m_):", "    m = m_",
                               *("    " + ln for ln in st.lines),
                              f"    return {target}", ""])
            scope: dict = {}
            exec(compile(text, NEXT_TIME_FILENAME, "exec"), namespace, scope)  # our own text
            parts.append((st.owner, scope["part"]))
        model.derived["next_time_parts"] = parts
    return model.derived["next_time_parts"]


def zc_moves(model: CompiledModel) -> np.ndarray:
    """For each zero crossing, whether it reads t or x (see `dataflow.moving_slots`)."""
    if "zc_moves" not in model.derived:
        moves = dataflow.moving_slots(functions(model)["zc"], "g_", model.n_zc)
        model.derived["zc_moves"] = np.array(moves, dtype=bool)
    return model.derived["zc_moves"]


def zc_reads_states(model: CompiledModel) -> np.ndarray:
    """For each zero crossing, whether it reads the state (a function of t alone, such as
    a ramp crossing a level, is located as exactly from the dense output as from states
    integrated to each trial time)."""
    if "zc_reads_states" not in model.derived:
        reads = dataflow.moving_slots(functions(model)["zc"], "g_", model.n_zc,
                                      frozenset({"x", "x_"}))
        model.derived["zc_reads_states"] = np.array(reads, dtype=bool)
    return model.derived["zc_reads_states"]


def jac_sparsity(model: CompiledModel):
    """A sparse pattern of d(deriv)/dx for scipy's implicit solvers, or None (dense)."""
    if "jac_sparsity" not in model.derived:
        pattern = None
        if model.n_states >= SPARSE_MIN_STATES:
            entries = dataflow.jacobian_sparsity(functions(model))
            if entries is not None:
                from scipy.sparse import coo_matrix

                n = model.n_states
                rows = [i for i, _ in entries] + list(range(n))  # Newton needs the diagonal
                cols = [j for _, j in entries] + list(range(n))
                pattern = coo_matrix((np.ones(len(rows), dtype=bool), (rows, cols)),
                                     shape=(n, n)).tocsc()
                log.debug("Jacobian sparsity: %d of %d entries", pattern.nnz, n * n)
        model.derived["jac_sparsity"] = pattern
    return model.derived["jac_sparsity"]
