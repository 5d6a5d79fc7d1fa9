"""The lag-chain benchmark model: a unit step into n first-order lags 1/(s + 1) in series.

blocksim's version is an ordinary diagram (Step, n TransferFunction blocks, one Output),
built in memory exactly as a JSON file would describe it. The exact solution is known:
lag k (1-based) of a chain driven by a unit step at t = 0 is the regularized lower
incomplete gamma function P(k, t), so every benchmark run is checked against it.
"""
from __future__ import annotations

import numpy as np
from scipy import integrate
from scipy.special import gammainc

from blocksim.diagram.format import diagram_from_dict
from blocksim.diagram.model import Diagram

T_END, RTOL, ATOL = 10.0, 1e-6, 1e-8


PROBE = 10  # besides the last lag, lag PROBE (1-based) is logged: it visibly moves by t = 10


def probe(n: int) -> int:
    return min(n, PROBE)


def diagram(n: int, t_end: float = T_END, rtol: float = RTOL, atol: float = ATOL,
            log_all: bool = False) -> Diagram:
    """The chain as a blocksim diagram, logging lag `probe(n)` as "yp" and the last as "y";
    with `log_all`, every lag k (0-based) besides, as "y<k>"."""
    blocks = [{"id": "step", "type": "Step", "params": {"time": 0.0}}]
    blocks += [{"id": f"lag{k}", "type": "TransferFunction",
                "params": {"num": 1.0, "den": [1.0, 1.0]}} for k in range(n)]
    blocks += [{"id": "yp", "type": "Output"}, {"id": "y", "type": "Output"}]
    wires = [("step.y", "lag0.u")] + [(f"lag{k}.y", f"lag{k + 1}.u") for k in range(n - 1)]
    wires += [(f"lag{probe(n) - 1}.y", "yp.u"), (f"lag{n - 1}.y", "y.u")]
    if log_all:
        blocks += [{"id": f"y{k}", "type": "Output"} for k in range(n)]
        wires += [(f"lag{k}.y", f"y{k}.u") for k in range(n)]
    data = {"format": "blocksim", "version": 1, "parameters": {},
            "simulation": {"stop": t_end, "rtol": rtol, "atol": atol},
            "blocks": blocks, "wires": [{"src": s, "dst": d} for s, d in wires]}
    return diagram_from_dict(data, source=f"<lag chain {n}>")


def error(results, n: int) -> float:
    """Max abs error of the logged lags over the whole output grid against P(k, t)."""
    ref = exact(n, results.time)
    errors = [np.max(np.abs(results["yp"] - ref[:, probe(n) - 1])),
              np.max(np.abs(results["y"] - ref[:, n - 1]))]
    if "y0" in results.signals:
        errors += [np.max(np.abs(results[f"y{k}"] - ref[:, k])) for k in range(n)]
    return float(max(errors))


def exact(n: int, t: float | np.ndarray) -> np.ndarray:
    """Outputs of lags 1..n at time(s) t (rows: times, columns: lags)."""
    k = np.arange(1, n + 1)
    return gammainc(k, np.atleast_1d(t)[:, None])


def scipy_vectorised(n: int, t_end: float = T_END, rtol: float = RTOL, atol: float = ATOL,
                     grid: np.ndarray | None = None) -> np.ndarray:
    """The same system as one vectorised right-hand side in scipy's RK45: the final state,
    or with `grid` every lag at those times (rows: times), as a tool logging every lag."""
    def rhs(t, x):
        dx = -x
        dx[0] += 1.0
        dx[1:] += x[:-1]
        return dx

    sol = integrate.solve_ivp(rhs, (0.0, t_end), np.zeros(n), rtol=rtol, atol=atol,
                              t_eval=grid)
    return sol.y.T if grid is not None else sol.y[:, -1]
