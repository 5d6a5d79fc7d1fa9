"""A run's failure names the port it concerns (issue 13: Diagnostics "with block and port
filled in"), the same on both backends: a non-finite output names that output, a formula
that cannot be computed (a math function outside its domain, an algebraic loop whose
Newton iteration does not converge, a user block's `out` raising) names the block's output;
a failure of a state's derivative or of the event logic names no port."""
import importlib.util

import numpy as np
import pytest
from builders import block, diagram

from blocksim.compiler import compile_diagram
from blocksim.engine import Simulator
from blocksim.errors import SimulationError

HAS_NUMBA = importlib.util.find_spec("numba") is not None
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    not HAS_NUMBA, reason="numba is not installed"))]


def _failure(d, backend, strict=False):
    model = compile_diagram(d)
    with pytest.raises(SimulationError) as info:
        Simulator(model, model.settings.replaced(backend=backend), strict=strict).run()
    return info.value


def _formula(formula, **simulation):
    return diagram([block("c", "Clock"), block("f", "Expression", formula=formula),
                    block("out", "Output")], [("c.y", "f.u"), ("f.y", "out.u")], stop=1.0,
                   **simulation)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_formula_outside_its_domain_names_the_output_it_could_not_compute(backend):
    err = _failure(_formula("sqrt(-1 - u)"), backend)
    assert (err.block, err.port, err.time) == ("f", "y", 0.0)
    assert str(err).startswith("t = 0, block 'f' port 'y': a math function outside")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_formula_failing_on_the_grid_reports_that_row_and_keeps_the_rows_before(backend):
    # no state: one step spans the grid, and the numba loop runs on past the failing row;
    # the failure's time is the row's (not the step's start), later rows are not results
    err = _failure(_formula("sqrt(0.5 - u)", output_interval=1e-3), backend)
    assert (err.block, err.port) == ("f", "y") and err.time == pytest.approx(0.501, abs=1e-12)
    kept = err.results
    assert len(kept.time) == 501 and kept.time[-1] == pytest.approx(0.5, abs=1e-12)
    assert kept["out"][-1] == 0.0 and np.isfinite(kept["out"]).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_formula_failing_in_a_derivative_names_its_block_on_both_backends(backend):
    # compiled code gets NaN where Python raises: the numba backend retries the step it
    # could not take in Python, which reports the failure as the Python backend does
    d = diagram([block("c", "Clock"), block("f", "Expression", formula="sqrt(0.5 - u)"),
                 block("i", "Integrator"), block("out", "Output")],
                [("c.y", "f.u"), ("f.y", "i.u"), ("i.y", "out.u")], stop=1.0)
    err = _failure(d, backend)
    assert err.block == "f" and "a math function outside its domain" in err.detail
    assert 0.45 < err.time <= 0.5 and err.results.time[-1] <= err.time


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_algebraic_loop_that_does_not_converge_names_the_unknown(backend):
    d = diagram([block("solve", "AlgebraicConstraint", z0=0.5),  # z^2 + 1 = 0: no root
                 block("res", "Expression", formula="z**2 + 1", inputs="z"),
                 block("out", "Output")],
                [("solve.z", "res.z"), ("res.y", "solve.f"), ("solve.z", "out.u")], stop=1.0)
    err = _failure(d, backend)
    assert (err.block, err.port) == ("solve", "z") and "did not converge" in err.detail


def _overflow():
    """y = 1e309 * t (from t = 0.18 on): g2's output becomes +inf, its input is finite
    until then."""
    blocks = [block("c", "Constant", value=1.0), block("i", "Integrator"),
              block("g", "Gain", k=1e308), block("g2", "Gain", k=10.0), block("y", "Output")]
    wires = [("c.y", "i.u"), ("i.y", "g.u"), ("g.y", "g2.u"), ("g2.y", "y.u")]
    return diagram(blocks, wires, stop=1.0, output_interval=0.02)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_non_finite_output_names_that_output(backend):
    err = _failure(_overflow(), backend, strict=True)
    assert (err.block, err.port) == ("g2", "y") and "logs +inf" in err.detail


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_state_blowing_up_names_the_output_that_is_not_finite(backend):
    # x' = 1e200 x from 1e200: k's output overflows at once and feeds the integrator
    d = diagram([block("k", "Gain", k=1e200), block("i", "Integrator", x0=1e200),
                 block("y", "Output")], [("i.y", "k.u"), ("k.y", "i.u"), ("i.y", "y.u")])
    err = _failure(d, backend)
    assert (err.block, err.port) == ("k", "y")


def _user(name, out=None, der=None):
    from blocksim.blocktypes.blockspec import Port
    from blocksim.user import State, UserBlock
    return type(name, (UserBlock,), {
        "name": name, "outputs": (Port("y"),), "states": (State("x", 1.0),),
        "feedthrough_outputs": False,
        "out": staticmethod(out or (lambda t, x, d, u, p: (x[0],))),
        "der": staticmethod(der or (lambda t, x, d, u, p: (-x[0],)))})


def _bad_out(t, x, d, u, p):
    if t > 0.5:
        return {}["missing"]
    return (x[0],)


def _bad_der(t, x, d, u, p):
    if t > 0.5:
        return {}["missing"]
    return (-x[0],)


@pytest.mark.parametrize("kind", ["out", "der"])
def test_a_user_block_raising_names_its_output_only_from_out(kind):
    from blocksim.blocktypes import registry

    user = _user(f"Raises{kind.title()}", **{kind: _bad_out if kind == "out" else _bad_der})
    registry.register(user, source="tests")
    try:
        d = diagram([block("r", user.name), block("y", "Output")], [("r.y", "y.u")],
                    stop=1.0)
        err = _failure(d, "python")
    finally:
        registry.unregister(user.name)
    assert err.block == "r" and f"{user.name}.{kind} raised KeyError" in err.detail
    assert err.port == ("y" if kind == "out" else None)
    assert ("port 'y'" in str(err)) == (kind == "out")


def test_an_error_without_a_block_has_no_port():
    err = SimulationError("stopped", 1.0, None, None, port="y")
    assert err.port is None and str(err) == "t = 1: stopped"
