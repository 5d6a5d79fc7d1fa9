"""Run a diagram on the Python backend and, where numba is installed, on the numba backend
too, and check that they agree: the same event entries at the same instants (to a few
ulp; within 1e-12 where a shallow crossing amplifies roundoff), the same rows, the same
values to rounding, with events settled in the compiled loop.

"To rounding" depends on the machine: the Python backend's stage sums and error norms are
numpy dot products, computed by the host's BLAS, whose kernels sum in an order of their own
(OpenBLAS on an AVX-512 CPU rounds differently from its Haswell kernel, which happens to
match the compiled loop's plain sums bit for bit). A run that accepts a step on one backend
and rejects it on the other then parts by up to the run's tolerance: such runs pass a
looser `atol`."""
from __future__ import annotations

import importlib.util
import math

import numpy as np

import blocksim

HAS_NUMBA = importlib.util.find_spec("numba") is not None
HAS_CC = True  # the C backend: a C compiler (else its runs go to Python, said in warnings)
try:
    from blocksim.ccode.cc import NoCompiler, compiler
    compiler()
except NoCompiler:
    HAS_CC = False
SIN = 1.0 / (2.0 * math.pi)  # a Sine block's frequency for sin(t): 2*pi*SIN is exactly 1.0


def run_both(d, events_compiled: bool = True, atol: float = 1e-12, **options):
    """Results of the Python run, after checking the numba run and the C run against it
    (`d`: a diagram or a compiled model)."""
    model = d if isinstance(d, blocksim.CompiledModel) else blocksim.compile(d)
    py = blocksim.simulate(model, **options)
    if HAS_CC:
        assert_same(py, blocksim.simulate(model, backend="c", **options), atol)
    if not HAS_NUMBA:
        return py
    nb = blocksim.simulate(model, backend="numba", **options)
    if events_compiled:
        assert model.derived["native"].events, "events were not settled in the compiled loop"
    assert_same(py, nb, atol)
    return py


def assert_same(py, nb, atol: float, event_atol: float = 1e-12) -> None:
    """The run `nb` of another backend is the Python run `py` to rounding (`atol` on the
    values, `event_atol` on the event instants)."""
    assert [(e.block, e.kind) for e in nb.events] == [(e.block, e.kind) for e in py.events]
    for a, b in zip(py.events, nb.events):  # (a shallow crossing amplifies roundoff)
        assert abs(a.time - b.time) <= event_atol, (a, b)
    assert len(nb.time) == len(py.time)
    np.testing.assert_allclose(nb.time, py.time, rtol=0, atol=event_atol)  # event instants too
    for name in py.signals:
        np.testing.assert_allclose(nb[name], py[name], rtol=atol, atol=atol, err_msg=name)
    assert nb.status == py.status
