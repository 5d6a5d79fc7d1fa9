"""The benchmark models built with the peers' own public APIs: bdsim 1.4 and PathSim 0.27.

Each builder returns a `PeerRun` (wall times and what the result needs to be checked), or
raises `PeerMissing` when the package is not installed (`pip install -e ".[bench]"`).
Settings follow blocksim's for the same case: DOPRI5 (bdsim: scipy's RK45; PathSim: RKDP54),
the same rtol/atol, no maximum step (bdsim's default would cap it at T/100).
"""
from __future__ import annotations

import contextlib
import io
import logging
import time
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger("benchmarks.peers")


class PeerMissing(Exception):
    """The peer package is not installed."""


@dataclass
class PeerRun:
    build: float  # seconds to build (and compile) the model
    run: float  # seconds to simulate it
    final: np.ndarray = field(default_factory=lambda: np.zeros(0))  # chain: lag outputs at t_end
    events: list[float] = field(default_factory=list)  # ball: bounce times
    note: str = ""


@contextlib.contextmanager
def _quiet():
    """The peers print banners and progress: keep the benchmark output readable."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


# ------------------------------------------------------------------------------ bdsim
def bdsim_chain(n: int, t_end: float, rtol: float, atol: float) -> PeerRun:
    try:
        import bdsim
    except ImportError as exc:
        raise PeerMissing(f"bdsim: {exc}") from None
    with _quiet():
        started = time.perf_counter()
        sim = bdsim.BDSim(sysargs=False, graphics=False, animation=False, progress=False,
                          banner=False, quiet=True)
        bd = sim.blockdiagram()
        step = bd.STEP(T=0.0)
        lags = [bd.LTI_SISO(1, [1, 1]) for _ in range(n)]
        bd.connect(step, lags[0])
        for a, b in zip(lags, lags[1:]):
            bd.connect(a, b)
        bd.compile(report=False, verbose=False)
        built = time.perf_counter()
        out = sim.run(bd, T=t_end, solver="RK45", solver_args=dict(rtol=rtol, atol=atol),
                      max_step=np.inf)
        done = time.perf_counter()
    # Each LTI_SISO has one state; bdsim names them after the block (lti_siso.k).
    order = np.argsort([int(name.split(".")[1].split(":")[0]) for name in out.xnames])
    return PeerRun(built - started, done - built, np.asarray(out.x[-1])[order])


# ------------------------------------------------------------------------------ PathSim
def _pathsim():
    try:
        import pathsim
        from pathsim import blocks, events, solvers
    except ImportError as exc:
        raise PeerMissing(f"pathsim: {exc}") from None
    return pathsim, blocks, events, solvers


def pathsim_chain(n: int, t_end: float, rtol: float, atol: float) -> PeerRun:
    pathsim, blocks, _, solvers = _pathsim()
    started = time.perf_counter()
    src = blocks.StepSource(amplitude=1.0, tau=0.0)
    lags = [blocks.PT1(K=1.0, T=1.0) for _ in range(n)]
    conns = [pathsim.Connection(src, lags[0])]
    conns += [pathsim.Connection(a, b) for a, b in zip(lags, lags[1:])]
    sim = pathsim.Simulation([src, *lags], conns, dt=0.01, Solver=solvers.RKDP54,
                             tolerance_lte_rel=rtol, tolerance_lte_abs=atol, log=False)
    built = time.perf_counter()
    with _quiet():
        sim.run(t_end)
    done = time.perf_counter()
    final = np.array([float(np.ravel(lag.outputs[0])[0]) for lag in lags])
    return PeerRun(built - started, done - built, final)


def pathsim_ball(t_end: float, rtol: float, atol: float, x0: float = 10.0, g: float = 9.81,
                 mu: float = 0.9) -> PeerRun:
    """The C21 ball with PathSim's zero-crossing event resetting the velocity."""
    pathsim, blocks, events, solvers = _pathsim()
    started = time.perf_counter()
    gravity = blocks.Constant(-g)
    velocity = blocks.Integrator(0.0)
    position = blocks.Integrator(x0)
    conns = [pathsim.Connection(gravity, velocity), pathsim.Connection(velocity, position)]
    bounces: list[float] = []

    def height(t):
        return position.engine.get()

    def bounce(t):
        bounces.append(t)
        position.engine.set(abs(position.engine.get()))
        velocity.engine.set(-mu * velocity.engine.get())

    hit = events.ZeroCrossingDown(func_evt=height, func_act=bounce)
    sim = pathsim.Simulation([gravity, velocity, position], conns, [hit], dt=0.01,
                             Solver=solvers.RKDP54, tolerance_lte_rel=rtol,
                             tolerance_lte_abs=atol, log=False)
    built = time.perf_counter()
    with _quiet():
        sim.run(t_end)
    done = time.perf_counter()
    return PeerRun(built - started, done - built, events=bounces,
                   note=f"run to t = {t_end:g} s (before the accumulation point)")
