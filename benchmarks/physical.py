"""Compile times of physical networks: how long the component compiler (alias elimination,
index reduction, sorting, code generation) takes on large networks.

    python benchmarks/physical.py [--repeats 5] [--cases ladder100 chain50 c21]

Each measurement is a new Python process (nothing cached in memory: imports, sympy's
caches, the registry), which builds the diagram and times `blocksim.compile` alone; the
median of the repeats is printed with the fastest and slowest. The targets: the 100-stage
RC ladder and the 50-mass spring chain compile in under 2 s each.

The models and their references (scipy.integrate.solve_ivp of the same equations written
by hand) are also what tests/physical/test_phys_large_networks.py checks for accuracy.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_S = 2.0

# RC ladder: a 1 V source, then `n` stages of a series resistor and a capacitor to ground
LADDER_R, LADDER_C, LADDER_STOP = 100.0, 1e-6, 0.05
# spring chain: a wall, then `n` springs-dampers and masses in turn, a constant force on the last
CHAIN_M, CHAIN_C, CHAIN_D, CHAIN_F, CHAIN_STOP = 1.0, 100.0, 0.5, 1.0, 5.0


def ladder(n: int = 100, rtol: float = 1e-10, atol: float = 1e-12):
    """The RC ladder as a DiagramBuilder, logging every capacitor voltage (v0 ... v{n-1})."""
    from blocksim.api.builder import DiagramBuilder

    d = DiagramBuilder(stop=LADDER_STOP, rtol=rtol, atol=atol, output_interval=LADDER_STOP / 50)
    source, ground = d.add("ConstantVoltage", id="V", V=1.0), d.add("Ground", id="ground")
    d.connect(source.n, ground.p)
    node = source.p
    for k in range(n):
        r = d.add("Resistor", id=f"R{k}", R=LADDER_R)
        c = d.add("Capacitor", id=f"C{k}", C=LADDER_C)
        d.connect(node, r.p)
        d.connect(r.n, c.p)
        d.connect(c.n, ground.p)
        node = r.n
        if k in probes(n):
            sensor = d.add("VoltageSensor", id=f"vs{k}")
            d.connect(sensor.p, c.p)
            d.connect(sensor.n, ground.p)
            sensor.v >> d.add("Output", id=f"v{k}").u
    return d


def probes(n: int) -> list[int]:
    """The stages or masses whose values are logged: the first, a few inside, the last."""
    return sorted({0, n // 4, n // 2, n - 1})


def ladder_reference(n: int, times: np.ndarray) -> np.ndarray:
    """Capacitor voltages at `times` (rows) by solve_ivp (RK45, rtol 1e-12: the ladder is
    mildly stiff, so the explicit method's steps are small and it is within 3e-13 of the
    matrix exponential; Radau takes seconds, DOP853's error estimate lets 2e-9 through)."""
    from scipy.integrate import solve_ivp

    g = 1.0 / LADDER_R
    a = np.zeros((n, n))  # C dv_k/dt = (v_{k-1} - v_k)/R - (v_k - v_{k+1})/R
    for k in range(n):
        a[k, k] = -2 * g if k < n - 1 else -g
        if k > 0:
            a[k, k - 1] = g
        if k < n - 1:
            a[k, k + 1] = g
    a /= LADDER_C
    b = np.zeros(n)
    b[0] = g * 1.0 / LADDER_C
    sol = solve_ivp(lambda t, v: a @ v + b, (0.0, LADDER_STOP), np.zeros(n), method="RK45",
                    rtol=1e-12, atol=1e-14, t_eval=times)
    assert sol.success, sol.message
    return sol.y.T


def chain(n: int = 50, rtol: float = 1e-10, atol: float = 1e-12):
    """The spring chain as a DiagramBuilder, logging positions x{k} of the probed masses."""
    from blocksim.api.builder import DiagramBuilder

    d = DiagramBuilder(stop=CHAIN_STOP, rtol=rtol, atol=atol, output_interval=CHAIN_STOP / 100)
    flange = d.add("Fixed", id="wall").flange
    for k in range(n):
        spring = d.add("SpringDamper", id=f"k{k}", c=CHAIN_C, d=CHAIN_D)
        mass = d.add("Mass", id=f"m{k}", m=CHAIN_M, s0=0.0)
        d.connect(flange, spring.flange_a)
        d.connect(spring.flange_b, mass.flange_a)
        flange = mass.flange_b
        if k in probes(n):
            sensor = d.add("PositionSensor", id=f"ps{k}")
            d.connect(sensor.flange, mass.flange_a)
            sensor.s >> d.add("Output", id=f"x{k}").u
    force = d.add("ConstantForce", id="F", f=CHAIN_F)
    d.connect(flange, force.flange)
    return d


def chain_reference(n: int, times: np.ndarray) -> np.ndarray:
    """Mass positions at `times` (rows) by solve_ivp (DOP853, rtol 1e-12)."""
    from scipy.integrate import solve_ivp

    def rhs(t, y):
        x, v = y[:n], y[n:]
        left = np.concatenate(([0.0], x[:-1])), np.concatenate(([0.0], v[:-1]))
        f = CHAIN_C * (x - left[0]) + CHAIN_D * (v - left[1])  # tension of spring k
        a = (-f + np.concatenate((f[1:], [0.0]))) / CHAIN_M
        a[-1] += CHAIN_F / CHAIN_M
        return np.concatenate((v, a))

    sol = solve_ivp(rhs, (0.0, CHAIN_STOP), np.zeros(2 * n), method="DOP853", rtol=1e-12,
                    atol=1e-14, t_eval=times)
    assert sol.success, sol.message
    return sol.y[:n].T


def c21():
    """The C21 ideal-diode circuit from components (the shipped example)."""
    from blocksim.api.builder import DiagramBuilder

    return DiagramBuilder.load(ROOT / "diagrams" / "physical" / "c21_diode_ideal.json")


CASES = {"ladder100": (lambda: ladder(100), "100-stage RC ladder (100 states)"),
         "chain50": (lambda: chain(50), "50-mass spring chain (100 states)"),
         "c21": (c21, "C21 ideal-diode circuit (2 states, 1 switch)")}
TARGETS = {"ladder100": TARGET_S, "chain50": TARGET_S}


def measure_here(case: str) -> dict:
    """Build the case's diagram and time its compile, in this process."""
    import blocksim

    builder = CASES[case][0]()
    diagram = builder.top.model
    started = time.perf_counter()
    model = blocksim.compile(diagram)
    seconds = time.perf_counter() - started
    return {"case": case, "seconds": seconds, "states": len(model.x0)}


def measure(case: str) -> dict:
    """One measurement in a new process."""
    done = subprocess.run([sys.executable, __file__, "--one", case], capture_output=True,
                          text=True, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{case}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--one", choices=sorted(CASES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_here(args.one)))
        return 0
    print(f"compile time, median of {args.repeats} new processes (min - max)")
    missed = 0
    for case in args.cases:
        runs = [measure(case) for _ in range(args.repeats)]
        seconds = [r["seconds"] for r in runs]
        median = statistics.median(seconds)
        target = TARGETS.get(case)
        verdict = "" if target is None else (
            f"   target < {target:g} s: {'met' if median < target else 'NOT met'}")
        missed += target is not None and median >= target
        print(f"{case:10s} {CASES[case][1]:45s} {median:6.2f} s ({min(seconds):.2f} - "
              f"{max(seconds):.2f}), {runs[0]['states']} states{verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
