"""The generated code that solves a network's blocks of equations, run as each backend runs
it: Python raises a failure naming the equations; numba, whose functions cannot report one,
compiles the same lines without the report (`dataflow.PYTHON_ONLY`) and gets NaN there,
which its loop hands over to Python. Solutions that exist agree."""
import math

import numpy as np
import pytest

from blocksim.compiler.dataflow import compiled_only
from blocksim.physical import solvers
from both_backends import HAS_NUMBA

BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    not HAS_NUMBA, reason="numba is not installed"))]
WHAT = "the equations of R1"


def _function(lines: list[str], names: list[str], backend: str):
    """f(a) running `lines` (which may read the number a and the array W) and returning
    the unknowns `names`, compiled as the numba backend compiles generated code."""
    if backend == "numba":
        lines = compiled_only(lines)
    source = "\n".join(["def f(a):"] + ["    " + line for line in lines]
                       + [f"    return ({', '.join(names)},)"])
    namespace = {"np": np, "nan": math.nan, "inf": math.inf, "W": np.array([3.0, 1.0])}
    exec(source, namespace)
    if backend == "numba":
        from numba import njit
        return njit(error_model="numpy")(namespace["f"])
    return namespace["f"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_linear_block_solves_or_reports_a_singular_matrix(backend):
    # a*x0 + x1 = 1, x0 + x1 = 2: singular at a = 1
    f = _function(solvers.linear(["x0", "x1"], [["a", "1.0"], ["1.0", "1.0"]],
                                 ["1.0", "2.0"], WHAT), ["x0", "x1"], backend)
    assert f(2.0) == pytest.approx((-1.0, 3.0), abs=1e-15)
    if backend == "python":
        with pytest.raises(ArithmeticError, match=f"^{WHAT} have no unique solution "
                           r"\(singular matrix\)$"):
            f(1.0)
    else:
        assert all(math.isnan(v) for v in f(1.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_newton_in_two_unknowns_solves_or_reports_a_singular_jacobian(backend):
    # x0^2 + x1^2 = a, x0 = x1: from the warm start (3, 1) to (1, 1) for a = 2; for
    # a = -1 there is no solution, and the iteration ends where the Jacobian is singular
    residuals = ["x0*x0 + x1*x1 - a", "x0 - x1"]
    jacobian = [["2.0*x0", "2.0*x1"], ["1.0", "-1.0"]]
    f = _function(solvers.newton(["x0", "x1"], residuals, jacobian, "W", WHAT),
                  ["x0", "x1"], backend)
    assert f(2.0) == pytest.approx((1.0, 1.0), rel=1e-12)
    if backend == "python":
        with pytest.raises(ArithmeticError, match=f"^{WHAT} (do not determine their "
                           "unknowns|did not converge)"):
            f(-1.0)
    else:
        assert all(math.isnan(v) for v in f(-1.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_newton_in_one_unknown_solves_or_reports_no_solution(backend):
    # x^2 = a from the warm start 3: sqrt(a), or no solution for a < 0
    f = _function(solvers.newton(["x"], ["x*x - a"], [["2.0*x"]], "W", WHAT), ["x"], backend)
    assert f(2.0)[0] == pytest.approx(math.sqrt(2.0), rel=1e-14)
    if backend == "python":
        with pytest.raises(ArithmeticError, match=f"^{WHAT} "):
            f(-1.0)
    else:
        assert math.isnan(f(-1.0)[0])
