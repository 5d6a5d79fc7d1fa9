"""Functions and patterns derived from a compiled model's code, built once per model.

The output grid needs only the logged signals, not all of them: `observe` is `outputs`
pruned to what the logging blocks read. Implicit solvers of large diagrams need the
Jacobian's sparsity pattern, which follows from the signal graph as written in `deriv`.
Both are cached in `CompiledModel.derived`.
"""
from __future__ import annotations

import logging
from typing import Callable

import numpy as np

from blocksim.compiler import dataflow
from blocksim.compiler.compiled import CompiledModel

log = logging.getLogger(__name__)

OBSERVE_FILENAME = "<blocksim generated observe>"
# Below this many states a dense Jacobian is cheaper than scipy's sparse LU.
SPARSE_MIN_STATES = 64


def functions(model: CompiledModel) -> dict[str, dataflow.Function]:
    """The generated functions split into statements (cached)."""
    if "split" not in model.derived:
        model.derived["split"] = dataflow.split(model.code, model.line_owner)
    return model.derived["split"]


def logged_indices(model: CompiledModel) -> list[int]:
    return [i for sig in model.logged for i in sig.indices]


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
