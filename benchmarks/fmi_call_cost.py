"""What an FMU call costs blocksim: one FMI function through fmpy's ctypes bindings, and one
evaluation of an FMU block's derivatives (setTime, setContinuousStates, getDerivatives) as
the generated code makes it, against the same equations as blocksim blocks.

Builds the tests' bouncing-ball FMU (tests/fmi/c, needs a C compiler and fmpy) and prints
microseconds per call:

    python benchmarks/fmi_call_cost.py
"""
from __future__ import annotations

import ctypes
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fmi"))


def per_call(fn, n: int = 20000) -> float:
    """Microseconds per call (best of three batches)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def main() -> int:
    import testfmu_build as fmus
    import blocksim
    from blocksim.fmi import trust
    from blocksim.fmi.archive import read_fmu
    from blocksim.fmi.session import FmuSession

    with tempfile.TemporaryDirectory() as tmp:
        fmu = fmus.build("ball", 2, Path(tmp))
        info = read_fmu(fmu).info
        trust.trust_now(fmu)
        session = FmuSession("ball", fmu.name, info, "model_exchange", trust.is_trusted)
        session.open([], 0.0, 3.0, 1e-6, 0.0)
        try:
            raw = session.fmu
            dx = (ctypes.c_double * 2)()
            rows = [
                ("fmi2SetTime (fmpy, ctypes)", lambda: raw.setTime(0.1)),
                ("fmi2GetDerivatives (fmpy, ctypes)", lambda: raw.getDerivatives(dx, 2)),
                ("fmi2GetReal of 2 outputs (fmpy getReal)", lambda: raw.getReal([0, 1])),
            ]
            x = [[0.5, -1.0], [0.6, -1.1]]
            k = [0]

            def derivative() -> None:  # a new (t, x) each call, as a solver stage
                k[0] ^= 1
                session.der(0.1 + k[0] * 1e-3, x[k[0]], ())
            rows.append(("block derivatives: setTime + setContinuousStates + "
                         "getDerivatives", derivative))

            def output() -> None:  # the same, reading the outputs (arrays made once)
                k[0] ^= 1
                session.out_at(0, (), 0.1 + k[0] * 1e-3, x[k[0]], ())
            rows.append(("block outputs: setTime + setContinuousStates + getReal of 4",
                         output))
            for name, fn in rows:
                print(f"{per_call(fn):8.2f} us  {name}")
        finally:
            session.close()
        # a whole run: per right-hand-side evaluation, FMU against blocks
        folder = Path(tmp)
        (folder / "ball.fmu").write_bytes(fmu.read_bytes())
        trust.trust_now(folder / "ball.fmu")  # (a diagram built in Python)
        builder = blocksim.DiagramBuilder(stop=3.0, rtol=1e-8, atol=1e-8)
        ball = builder.add("FMU", id="ball", file=str(folder / "ball.fmu"))
        builder.connect(ball.h, builder.add("Output", id="h"))
        model = builder.compile()
        start = time.perf_counter()
        results = blocksim.simulate(model)
        wall = time.perf_counter() - start
        session = FmuSession("ball", fmu.name, info, "model_exchange", trust.is_trusted)
        start = time.perf_counter()
        for _ in range(10):
            session.open([], 0.0, 3.0, 1e-6, 0.0)
            session.close()
        opening = (time.perf_counter() - start) / 10
        print(f"{opening * 1e3:8.2f} ms  to open and close a run's FMU (unpack, load, "
              f"instantiate, initialize, free, remove)")
        print(f"{wall * 1e3:8.2f} ms  a whole run of the FMU ball to t = 3 "
              f"({results.stats['nfev']} derivative evaluations, {len(results.events)} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
