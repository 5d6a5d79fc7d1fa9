"""A model's C functions loaded in process (ctypes): the same calls as the Python ones.

`ModelLibrary.for_model(model)` translates, compiles (once, cached on disk) and loads the
model's C; its methods take and return numpy arrays like the generated Python functions,
which is what the tests compare them by, diagram by diagram.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from blocksim.compiler.compiled import CompiledModel
from blocksim.ccode import cc
from blocksim.ccode.model_source import RUNTIME, ModelC, model_source

_D = ctypes.POINTER(ctypes.c_double)
_I = ctypes.POINTER(ctypes.c_int)


def _ptr(a: np.ndarray):
    return a.ctypes.data_as(_D)


class ModelLibrary:
    """The model's C functions over numpy arrays (float64, contiguous)."""

    def __init__(self, model: CompiledModel, c: ModelC, path: Path):
        self.model, self.c, self.path = model, c, path
        self.lib = ctypes.CDLL(str(path))
        self.P = np.ascontiguousarray(model.param_vector(), dtype=float)
        if self.P.size == 0:
            self.P = np.zeros(1)
        self.W = np.zeros(c.n_w)
        self.lib.bs_api_init_W(_ptr(self.W))
        for name in ("deriv", "zc", "outputs", "observe"):
            getattr(self.lib, f"bs_api_{name}").argtypes = [_D, _D, ctypes.c_double, _D, _D,
                                                             _D, _D]
        for name in ("update", "pre_event", "after_event"):
            fn = getattr(self.lib, f"bs_api_{name}")
            fn.argtypes = [_D, _D, ctypes.c_double, _D, _D, _D, _D, ctypes.c_int, _I]
            fn.restype = ctypes.c_int
        self.lib.bs_api_sample.argtypes = [_D, _D, ctypes.c_double, _D, _D, _D, _D]
        self.lib.bs_api_next_time.argtypes = [_D, _D, ctypes.c_double, _D]
        self.lib.bs_api_next_time.restype = ctypes.c_double
        self._log = np.zeros(1 + 2 * 256, dtype=np.intc)

    @classmethod
    def for_model(cls, model: CompiledModel) -> "ModelLibrary":
        c = model_source(model)
        path = cc.cached_library({"model.c": c.text}, ("BS_API",), (RUNTIME,))
        return cls(model, c, path)

    def _model_fn(self, name: str, size: int, t: float, x, m, z) -> np.ndarray:
        out = np.zeros(max(size, 1))
        getattr(self.lib, f"bs_api_{name}")(_ptr(self.P), _ptr(self.W), t, _ptr(x), _ptr(m),
                                             _ptr(z), _ptr(out))
        return out[:size]

    def deriv(self, t, x, m, z):
        return self._model_fn("deriv", self.c.n_states, t, x, m, z)

    def zc(self, t, x, m, z):
        return self._model_fn("zc", self.c.n_zc, t, x, m, z)

    def outputs(self, t, x, m, z):
        return self._model_fn("outputs", self.c.n_signals, t, x, m, z)

    def observe(self, t, x, m, z):
        return self._model_fn("observe", self.c.n_logged, t, x, m, z)

    def event(self, name: str, t, x, m, z, zn, init: bool) -> tuple[int, list[tuple[int, str]]]:
        """(changed, event entries) of update / pre_event / after_event; x and m in place."""
        zn = zn if zn is not None else np.zeros(max(self.c.n_zc, 1))
        changed = getattr(self.lib, f"bs_api_{name}")(
            _ptr(self.P), _ptr(self.W), t, _ptr(x), _ptr(m), _ptr(z), _ptr(zn), int(init),
            self._log.ctypes.data_as(_I))
        n = int(self._log[0])
        entries = [(int(self._log[1 + 2 * k]), self.c.kinds[int(self._log[2 + 2 * k])])
                   for k in range(min(n, 256))]
        return changed, entries

    def sample(self, t, x, m, z, hits) -> None:
        h = np.ascontiguousarray(hits, dtype=float)
        if h.size == 0:
            h = np.zeros(1)
        self.lib.bs_api_sample(_ptr(self.P), _ptr(self.W), t, _ptr(x), _ptr(m), _ptr(z),
                               _ptr(h))

    def next_time(self, t, m) -> float:
        return self.lib.bs_api_next_time(_ptr(self.P), _ptr(self.W), t, _ptr(m))
