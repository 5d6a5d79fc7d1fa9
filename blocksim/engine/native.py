"""The numba backend: continuous segments run in the compiled loop, events stay in Python.

`Simulator` hands each segment (restart to next crossing or bound) to `NativeLoop.segment`,
which calls `native_kernel.segment` until the segment ends: there is no Python call per
step or per stage, and the output grid is copied to the recorder once per segment. The
event semantics are untouched: event iteration, probes, Zeno detection and the left/right
limit rows run in `simulator.py` with the generated Python functions, at events only.

A model whose code the backend cannot translate (a Python helper in a block's code, a
formula function it lacks) runs on the Python path with a warning: the choice of backend
never changes what a diagram means.
"""
from __future__ import annotations

import logging
import math
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np
from numba import types

from blocksim.compiler import dataflow
from blocksim.compiler.compiled import CompiledModel
from blocksim.engine import derived
from blocksim.engine import native_kernel as nk

if TYPE_CHECKING:
    from blocksim.engine.simulator import RunState, Segment, Simulator

log = logging.getLogger(__name__)

YIELD_EVERY = 2000  # steps between returns to Python when progress is reported


class NativeLoop:
    """The compiled functions of one model and the buffers of one run."""

    def __init__(self, functions: tuple, sim: "Simulator"):
        self.deriv, self.zc, self.observe = functions
        model = sim.model
        n_grid = int(math.floor((sim.settings.stop - sim.settings.start) / sim.interval + 1e-9))
        width = len(derived.logged_indices(model))
        self.out_t = np.empty(n_grid + 2)
        self.out_y = np.empty((n_grid + 2, width))
        self.fpar = np.zeros(nk.N_FPAR)
        self.ipar = np.zeros(nk.N_IPAR, dtype=np.int64)
        self.x_ev = np.empty(model.n_states)
        self.x_bad = np.empty(model.n_states)
        self.zdir = np.ascontiguousarray(model.zc_direction, dtype=float)

    @classmethod
    def for_model(cls, model: CompiledModel, sim: "Simulator") -> "NativeLoop | None":
        """The loop for this model, or None (with a warning) if it must run in Python."""
        if "native" not in model.derived:
            model.derived["native"] = _compile(model)
        functions = model.derived["native"]
        return cls(functions, sim) if functions is not None else None

    def segment(self, sim: "Simulator", st: "RunState", t_bound: float, t_time: float,
                first_step: float | None, k_grid: int, n_grid: int) -> "Segment":
        from blocksim.engine.simulator import Segment

        s = sim.settings
        fpar, ipar = self.fpar, self.ipar
        fpar[:] = (st.t, t_bound, first_step or 0.0, s.rtol, s.atol, s.max_step, s.start,
                   sim.interval, 0.0, float(t_bound == t_time), 0.0, math.nan)
        ipar[:] = (0, k_grid, n_grid, 0, -1, 0, 0,
                   YIELD_EVERY if sim.progress else 1 << 62, 0)
        nfev = 0
        while True:
            nk.segment(self.deriv, self.zc, self.observe, st.x, st.m, st.z, self.zdir,
                       fpar, ipar, self.out_t, self.out_y, self.x_ev, self.x_bad)
            rows = int(ipar[nk.I_ROWS])
            if rows:
                sim.recorder.add_rows(self.out_t[:rows], self.out_y[:rows])
            if not math.isnan(fpar[nk.F_BAD_T]):
                # Python raises where compiled code gave NaN: a formula failing on the grid.
                st.t = float(fpar[nk.F_BAD_T])
                sim._outputs(st.t, self.x_bad, st.m, st.z)
                fpar[nk.F_BAD_T] = math.nan
            sim.stats["steps"] += int(ipar[nk.I_STEPS])
            nfev += int(ipar[nk.I_NFEV])
            status = int(ipar[nk.I_STATUS])
            if status == nk.CROSSING:
                i = int(ipar[nk.I_EVENT])
                hit = (float(fpar[nk.F_EVENT_T]), self.x_ev.copy(),
                       [(sim.model.zc_owner[i], "state")])
                return Segment(hit, False, int(ipar[nk.I_GRID]), float(fpar[nk.F_STEP]), nfev)
            st.t = float(fpar[nk.F_T])
            if status == nk.BOUND:
                return Segment(None, t_bound == t_time and st.t >= t_bound,
                               int(ipar[nk.I_GRID]), float(fpar[nk.F_STEP]), nfev)
            if status == nk.YIELD:
                if sim.progress:
                    sim.progress(st.t)
                ipar[nk.I_RESUME] = 1
                continue
            message = ("the state became infinite or NaN" if status == nk.NONFINITE
                       else "step size too small (underflow)")
            block = _failing_block(sim, st)
            raise sim._fail(f"{message} (solver {s.solver}, numba)", st.t, block)


def _failing_block(sim: "Simulator", st: "RunState") -> str | None:
    """Name the block at fault by re-evaluating the Python functions at the last state
    (a domain error there raises where the compiled code returned NaN)."""
    try:
        sim._outputs(st.t, st.x, st.m, st.z)
        sim._deriv(st.t, st.x, st.m, st.z)
    except (ArithmeticError, ValueError) as exc:
        return sim.model.block_of_exception(exc)
    return sim._nonfinite_block(st, SimpleNamespace(t=st.t, x=st.x))


def _register_type() -> None:
    """numba types a _Pointer argument once, not by building a FunctionType per call."""
    from numba.core.typing.typeof import typeof_impl

    fn_type = types.FunctionType(nk.MODEL_SIGNATURE)
    typeof_impl.register(_Pointer)(lambda val, context: fn_type)


def _compile(model: CompiledModel) -> tuple | None:
    """Translate and load the model's numba functions (None: the model stays in Python)."""
    from blocksim.engine import native_source

    started = time.perf_counter()
    functions = dict(derived.functions(model))
    derived.observe(model)
    functions["observe"] = dataflow.split(model.derived["observe_source"])["observe"]
    constants = model.functions["outputs"].__globals__
    try:
        source = native_source.module_source(functions, constants, len(model.signal_names))
        module = native_source.load(source)
        compiled = tuple(getattr(module, name) for name in native_source.NAMES)
    except Exception as exc:  # numba's typing errors have no common base class
        log.warning("%s: numba backend unavailable for this model, running in Python "
                    "(%s: %s)", model.source, type(exc).__name__, str(exc).splitlines()[0]
                    if str(exc) else "")
        return None
    log.info("%s: numba functions ready in %.2f s", model.source, time.perf_counter() - started)
    return tuple(_Pointer(fn) for fn in compiled)


class _Pointer(types.WrapperAddressProtocol):
    """A compiled model function passed to the loop by its C address.

    Handing numba the dispatcher itself makes it look the address up on every call
    (tens of microseconds for three functions); the address never changes, so it is
    taken once. The object keeps the dispatcher, and so the machine code, alive.
    """

    def __init__(self, dispatcher):
        from numba.experimental.function_type import _get_wrapper_address

        self.dispatcher = dispatcher
        self.address = _get_wrapper_address(dispatcher, nk.MODEL_SIGNATURE)

    def __wrapper_address__(self) -> int:
        return self.address

    def signature(self):
        return nk.MODEL_SIGNATURE


_register_type()
