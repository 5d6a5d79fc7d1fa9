"""One compiled model as a C translation unit: its functions, constants and sizes.

`model_source(model)` gives the text of `model.c` (with `runtime/bs_model.h`): the
generated functions translated by `ccode.translate`, the model's initial arrays and, for a
caller that loads the file as a shared library (the tests, the C backend), exported entry
points `bs_api_*` under `#ifdef BS_API`. What cannot be translated raises ExportError with
one line naming the block.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from blocksim.compiler.compiled import CompiledModel
from blocksim.ccode.translate import (EVENT_NAMES, Constants, NotTranslatable, _float,
                                      translate_function)
from blocksim.engine import derived
from blocksim.errors import BlocksimError

RUNTIME = Path(__file__).with_name("runtime")
FUNCTIONS = ("deriv", "zc", "outputs", "observe", "update", "pre_event", "after_event",
             "sample", "next_time")
MAX_TABLE = 1_000_000
_STORED = re.compile(r"^\s*(C\d+)\[[^\]]*\] = ", re.M)  # numbers of array constants a generated file carries at most


class ExportError(BlocksimError):
    """The model cannot leave blocksim as C; the message names the block and why."""


@dataclass(frozen=True)
class ModelC:
    """The C text of one model and what its callers need to drive it."""

    text: str
    kinds: tuple[str, ...]  # event entry kinds by code (0: "state")
    n_states: int
    n_m: int
    n_zc: int
    n_signals: int
    n_slots: int
    n_w: int
    n_logged: int


def param_vector(model: CompiledModel) -> np.ndarray:
    """The values of the model's parameter slots, in order: `native.build.param_vector`'s
    reading (the same cache entry), without importing the numba backend (0.23 s)."""
    found = model.derived.get("param_vector")
    if found is None:
        from blocksim.expressions import param_slots

        namespace = model.functions["deriv"].__globals__
        count = model.runtime.structure.n_slots if model.runtime is not None else 0
        found = np.array([namespace[param_slots.slot_name(k)] for k in range(count)],
                         dtype=float)
        model.derived["param_vector"] = found
    return found


def _array(name: str, values, kind: str = "double") -> str:
    if kind == "int":
        flat = [str(int(v)) for v in values] or ["0"]
        return f"static const int {name}[{len(flat)}] = {{{', '.join(flat)}}};"
    flat = [_float(v) for v in np.asarray(values, dtype=float).ravel()] or ["0.0"]
    return f"static const {kind} {name}[{len(flat)}] = {{{', '.join(flat)}}};"


def model_source(model: CompiledModel, values: bool = True) -> ModelC:
    """The C text of the model (ExportError naming the block if a part cannot be C).
    Without `values`, the initial states and parameter slots are left out (zeros): the C
    backend passes them at run time, so models differing only in them share a library."""
    functions = dict(derived.functions(model))
    functions["observe"] = derived.observe_function(model)
    namespace = model.functions["outputs"].__globals__
    arrays = {name: np.asarray(value) for name, value in namespace.items()
              if name[:1] == "C" and name[1:].isdigit() and isinstance(value, np.ndarray)}
    too_big = sum(a.size for a in arrays.values())
    if too_big > MAX_TABLE:
        largest = max(arrays, key=lambda name: arrays[name].size)
        owner = next((st.owner for fn in functions.values() for st in fn.statements
                      if st.owner is not None and re.search(rf"\b{largest}\b",
                                                            "\n".join(st.lines))), None)
        who = (f"block '{model.block_ids[owner]}' ({model.block_types[owner]}): its table "
               f"holds {arrays[largest].size} numbers" if owner is not None
               else f"the model's tables hold {too_big} numbers")
        raise ExportError(f"{model.source}: {who}; at most {MAX_TABLE} go into generated C")
    from blocksim.user import functions as user

    user_names = {name for name, value in namespace.items() if user.is_user_function(value)}
    constants = Constants(arrays)
    # Constants a block writes (a Newton loop's warm start) live in the work array W.
    constants.written = {name for name in _STORED.findall(model.code) if name in arrays}
    offset = 0
    for name in sorted(constants.written):
        constants.offsets[name] = offset
        offset += constants.values[name].size
    kinds = ["state"]
    parts = []
    n_slots = model.runtime.structure.n_slots if model.runtime is not None else 0
    for name in FUNCTIONS:
        try:
            parts.append(translate_function(functions[name], name, constants, kinds,
                                            user_names))
        except NotTranslatable as exc:
            raise ExportError(_refusal(model, exc)) from None
    n_logged = len(derived.logged_indices(model))
    header = [
        "/* Generated by blocksim from " + _comment(str(model.source)) + ". */",
        '#include "bs_model.h"',
        "",
        f"#define BS_NX {model.n_states}",
        f"#define BS_NM {len(model.m0)}",
        f"#define BS_NZ {model.n_zc}",
        f"#define BS_NSIG {len(model.signal_names)}",
        f"#define BS_NP {n_slots}",
        f"#define BS_NW {max(constants.w_size(), 1)}",
        f"#define BS_NLOG {n_logged}",
        _array("bs_x0", model.x0 if values else np.zeros(model.n_states)),
        _array("bs_m0", model.m0 if values else np.zeros(len(model.m0))),
        _array("bs_P0", param_vector(model) if values else np.zeros(n_slots)),
        _array("bs_zmove", derived.zc_moves(model).astype(float)),
        _array("bs_zdir", np.asarray(model.zc_direction, dtype=float)),
        _array("bs_zc_owner", model.zc_owner, "int"),
        f"#define BS_NOBS {len(derived.observe_reads(model))}",
        _array("bs_observed", derived.observe_reads(model), "int"),
        constants.declarations(),
        "",
        "static void bs_init_W(double *W) {",
        "    (void)W;",
        constants.w_init(),
        "}",
        "",
    ]
    text = "\n".join(header) + "\n" + "\n".join(parts) + _api()
    return ModelC(text, tuple(kinds), model.n_states, len(model.m0), model.n_zc,
                  len(model.signal_names), n_slots, max(constants.w_size(), 1), n_logged)


def _comment(text: str) -> str:
    return text.replace("*/", "* /")


def _refusal(model: CompiledModel, exc: NotTranslatable) -> str:
    if exc.owner is not None:
        return (f"{model.source}: block '{model.block_ids[exc.owner]}' "
                f"({model.block_types[exc.owner]}) cannot be exported to C: {exc}")
    return f"{model.source}: the model cannot be exported to C: {exc}"


def _api() -> str:
    """Exported entry points for a caller loading model.c as a shared library."""
    model_fns = "\n".join(
        f"BS_API_EXPORT void bs_api_{n}(const double *P, double *W, double t, double *x, "
        f"double *m, double *z, double *out) {{\n"
        f"    bs_ctx c; memset(&c, 0, sizeof c); c.P = P; c.W = W;\n"
        f"    bs_{n}(&c, t, x, m, z, out);\n}}\n" for n in ("deriv", "zc", "outputs", "observe"))
    event_fns = "\n".join(
        f"BS_API_EXPORT int bs_api_{n}(const double *P, double *W, double t, double *x, "
        f"double *m, double *z, double *zn, int init, int *log) {{\n"
        f"    bs_ctx c; int r, k; memset(&c, 0, sizeof c); c.P = P; c.W = W;\n"
        f"    r = bs_{n}(&c, t, x, m, z, zn, init);\n"
        f"    log[0] = c.n_ev;\n"
        f"    for (k = 0; k < c.n_ev && k < BS_EV_MAX; k++) {{ log[1 + 2 * k] = c.ev_block[k]; "
        f"log[2 + 2 * k] = c.ev_kind[k]; }}\n"
        f"    return c.failed ? -1 : r;\n}}\n" for n in EVENT_NAMES)
    return f"""
#ifdef BS_API
#if defined(_WIN32)
#define BS_API_EXPORT __declspec(dllexport)
#else
#define BS_API_EXPORT __attribute__((visibility("default")))
#endif
{model_fns}
{event_fns}
BS_API_EXPORT void bs_api_sample(const double *P, double *W, double t, double *x, double *m,
                                 double *z, double *hits) {{
    bs_ctx c; memset(&c, 0, sizeof c); c.P = P; c.W = W;
    bs_sample(&c, t, x, m, z, hits);
}}

BS_API_EXPORT double bs_api_next_time(const double *P, double *W, double t, double *m) {{
    bs_ctx c; memset(&c, 0, sizeof c); c.P = P; c.W = W;
    return bs_next_time(&c, t, m);
}}

BS_API_EXPORT void bs_api_init_W(double *W) {{ bs_init_W(W); }}
#endif
"""
