"""The generated code that solves a block of a network's equations at run time.

A linear block is one `np.linalg.solve` (LU with partial pivoting). A nonlinear block is
solved by Newton's method with its exact Jacobian, from the last solution: in one unknown
safeguarded by a bracket (a step that leaves the interval where the residual changes sign
is a bisection, a step to where the residual cannot be computed, such as an exponential
that overflows, goes back halfway), which makes a diode's exponential converge from any
start; in several, damped by halving the step until the residual decreases.

A failure (a singular matrix, no convergence) makes the unknowns NaN and then raises,
naming the equations; the raise is Python's only (`dataflow.PYTHON_ONLY`): compiled code
goes on with the NaN, and the numba backend's loop hands it to Python, which raises there.
"""
from __future__ import annotations

from blocksim.compiler.dataflow import PYTHON_ONLY

MAX_ITERATIONS = 100
TOLERANCE = 1e-12  # of the step, relative to 1 + |x|
MAX_HALVINGS = 40
# What a residual that cannot be computed raises in the Python backend (the `_f_`
# functions: OverflowError, ValueError, ZeroDivisionError); compiled code gives inf or NaN
# there instead, and numba catches only `Exception` as a whole.
_BAD = "Exception"


def linear(names: list[str], matrix: list[list[str]], rhs: list[str], what: str) -> list[str]:
    """Lines solving matrix @ names = rhs (entries already printed); `what` names the
    equations in the failure message (a singular matrix: no unique solution)."""
    n = len(names)
    if n == 1:  # a zero coefficient: ZeroDivisionError in Python, inf or NaN compiled
        return [f"{names[0]} = {rhs[0]} / {matrix[0][0]}"]
    lines = [f"_A = np.zeros(({n}, {n}))", f"_b = np.empty({n})"]
    for i, row in enumerate(matrix):
        lines += [f"_A[{i}, {j}] = {c}" for j, c in enumerate(row) if c != "0.0"]
    lines += [f"_b[{i}] = {r}" for i, r in enumerate(rhs)]
    lines += ["try:",
              "    _s = np.linalg.solve(_A, _b)",
              "except Exception:",  # numba's LinAlgError, which compiled code cannot report
              *_fail(what, "have no unique solution (singular matrix)", ["_s"], 4,
                     f"np.full({n}, nan)")]
    lines += [f"{name} = _s[{k}]" for k, name in enumerate(names)]
    return lines


def newton(names: list[str], residuals: list[str], jacobian: list[list[str]], warm: str,
           what: str, starts: list[str | None] | None = None) -> list[str]:
    """Lines solving residuals(names) = 0 from the values in the array `warm`, which keeps
    the solution for the next call, or from `starts` where given (a variable that has a
    state slot starts from it: the branch of a constraint it is on); `what` names the
    equations in the failure message."""
    first = [s or f"{warm}[{k}]" for k, s in enumerate(starts or [None] * len(names))]
    if len(names) == 1:
        lines = _scalar(names[0], residuals[0], jacobian[0][0], first[0], what)
    else:
        lines = _damped(names, residuals, jacobian, first, what)
    # the solution warms the next call's start (numba's constant arrays cannot be written:
    # there each call starts from the array's first values, the bracket makes up for it)
    return lines + [f"{warm}[{k}] = {name}{PYTHON_ONLY}" for k, name in enumerate(names)]


def _fail(what: str, reason: str, names: list[str], spaces: int, nan: str = "nan"
          ) -> list[str]:
    """The report of a failed solution, indented by `spaces`: its unknowns made NaN (what
    compiled code sees, and hands over to Python), then, in Python, the error."""
    indent = " " * spaces
    return [indent + "; ".join(f"{name} = {nan}" for name in names),
            f"{indent}raise ArithmeticError({what + ' ' + reason!r}){PYTHON_ONLY}"]


def _scalar(x: str, r: str, dr: str, start: str, what: str) -> list[str]:
    return [
        f"{x} = {start}",
        "_a = nan; _b = nan; _good = nan; _done = False; _old = inf; _older = inf",
        f"for _it in range({MAX_ITERATIONS}):",
        "    try:",
        f"        _r = {r}",
        f"        _J = {dr}",
        f"    except {_BAD}:",
        "        _r = nan; _J = nan",
        "    if not abs(_r) < inf:",  # NaN or inf: too far; back towards the last good point
        "        if _good != _good:",
        *_fail(what, "cannot be computed at the start of Newton iteration", [x], 12),
        "            break",
        f"        {x} = 0.5 * ({x} + _good)",
        "        continue",
        f"    _good = {x}",
        "    if _r == 0.0:",
        "        _done = True",
        "        break",
        "    if _r < 0.0:",
        f"        _a = {x}",
        "    else:",
        f"        _b = {x}",
        "    _n = -_r / _J if _J != 0.0 and _J == _J else nan",
        f"    if abs(_n) <= {TOLERANCE} * (1.0 + abs({x})):",
        f"        {x} = {x} + _n",
        "        _done = True",
        "        break",
        f"    _next = {x} + _n",
        "    if _a == _a and _b == _b:",
        "        _lo = min(_a, _b); _hi = max(_a, _b)",
        # bisect where Newton leaves the bracket or does not halve its step every second
        # iteration (an exponential approached from its steep side moves by one thermal
        # voltage per step otherwise)
        "        if not (_lo < _next < _hi) or abs(_n) > 0.5 * _older:",
        "            _next = 0.5 * (_lo + _hi)",
        "    elif not abs(_next) < inf:",
        *_fail(what, "do not change with their unknown (zero derivative)", [x], 8),
        "        break",
        f"    if abs(_next - {x}) <= {TOLERANCE} * (1.0 + abs(_next)):",
        f"        {x} = _next",
        "        _done = True",
        "        break",
        f"    _older = _old; _old = abs(_next - {x})",
        f"    {x} = _next",
        "if not _done:",
        *_fail(what, f"did not converge (Newton, {MAX_ITERATIONS} iterations)", [x], 4),
    ]


def _damped(names: list[str], residuals: list[str], jacobian: list[list[str]],
            starts: list[str], what: str) -> list[str]:
    n = len(names)
    residual_names = [f"_r{k}" for k in range(n)]
    norm = " + ".join(f"abs({r})" for r in residual_names)
    lines = [f"{name} = {start}" for name, start in zip(names, starts)]
    lines += ["_done = False", f"for _it in range({MAX_ITERATIONS}):"]
    lines += [f"    _r{k} = {r}" for k, r in enumerate(residuals)]
    lines += [f"    _J = np.zeros(({n}, {n}))"]
    lines += [f"    _J[{i}, {j}] = {c}" for i, row in enumerate(jacobian)
              for j, c in enumerate(row) if c != "0.0"]
    lines += ["    try:",
              f"        _dv = np.linalg.solve(_J, np.array([{', '.join(residual_names)}]))",
              "    except Exception:",
              *_fail(what, "do not determine their unknowns (singular Jacobian)", names, 8),
              "        break"]
    lines += [f"    _d{k} = _dv[{k}]" for k in range(n)]
    lines += [f"    _x{k} = {name}" for k, name in enumerate(names)]
    lines += [f"    _norm0 = {norm}", f"    for _half in range({MAX_HALVINGS}):"]
    lines += [f"        {name} = _x{k} - _d{k}" for k, name in enumerate(names)]
    lines += ["        try:"]
    lines += [f"            _r{k} = {r}" for k, r in enumerate(residuals)]
    lines += [f"            if {norm} <= _norm0:",
              "                break",
              f"        except {_BAD}:",
              "            pass"]
    lines += [f"        _d{k} = 0.5 * _d{k}" for k in range(n)]
    lines += ["    if " + " and ".join(f"abs(_d{k}) <= {TOLERANCE} * (1.0 + abs({name}))"
                                      for k, name in enumerate(names)) + ":",
              "        _done = True",
              "        break",
              "if not _done:",
              *_fail(what, f"did not converge (Newton, {MAX_ITERATIONS} iterations)", names,
                     4)]
    return lines
