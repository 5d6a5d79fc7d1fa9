"""Cost per bounce of ModiaMath's bouncing ball written as ONE Python block (a
blocksim.UserBlock) on the numba backend, where its functions are compiled and called from
the compiled loop (no Python per step or per event: stats["python_events"] is checked).

    python benchmarks/user_ball.py [--repeats 20]

Cases: ModiaMath's ball (h0 = 1, e = 0.7, g = 9.81, resting once a rebound is under
0.01 m/s: 18 impacts in [0, 3]), and the same ball with e = 1 bouncing forever over
[0, 1000] (1,107 impacts: the cost of a bounce without the per-run overhead). Both are
checked against their closed-form impact times (1e-9); the fallback (the ball with an
event numba cannot compile, its events in Python) and the ball of library blocks
(diagrams/modiamath_ball.json) is timed for comparison. Times are the best of `repeats`
runs after one warm-up (compilation), all in this process; the target is 30 us a bounce.
"""
from __future__ import annotations

import argparse
import math
import sys
import time

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import blocksim  # noqa: E402
from blocksim.blocktypes import registry  # noqa: E402
from blocksim.user import CONTINUE, rising  # noqa: E402
from modia_user_blocks import ModiaBall  # noqa: E402
from references import modia_ball_impacts  # noqa: E402

TARGET_US = 30.0


class BenchBall(ModiaBall):
    """The tests' ModiaMath ball (tests/modia_user_blocks.py), under its own type name."""

    name = "BenchModiaBall"


class FallbackBall(ModiaBall):
    """The same ball whose event numba cannot compile (math.fsum): its events run in
    Python, its continuous segments in the compiled loop (the documented fallback)."""

    name = "BenchFallbackBall"

    @staticmethod
    def event(t, x, d, u, p, zo, zn, init):
        if not init and rising(zo[0], zn[0]):
            v = math.fsum((-p.e * x[1],))
            if v < p.v_small:
                return ((x[0], 0.0), (0.0,), CONTINUE)
            return ((x[0], v), d, CONTINUE)
        return (x, d, CONTINUE)


def case(e: float, v_small: float, stop: float, repeats: int,
         kind: str = "BenchModiaBall") -> tuple[int, float]:
    """(impacts, best seconds of one simulate call) on the numba backend."""
    d = blocksim.DiagramBuilder(stop=stop, solver="dopri5", rtol=1e-12, atol=1e-12,
                                output_interval=stop / 100, backend="numba")
    ball = d.add(kind, id="ball", e=e, v_small=v_small)
    ball.h >> d.add("Output", id="h").u
    model = d.compile()
    expected = modia_ball_impacts(1.0, e, 9.81, v_small, stop)
    best = math.inf
    for k in range(repeats + 1):
        started = time.perf_counter()
        r = blocksim.simulate(model, backend="numba")
        elapsed = time.perf_counter() - started
        if k:
            best = min(best, elapsed)
    times = [ev.time for ev in r.events if ev.kind == "reset"]
    assert len(times) == len(expected), (len(times), len(expected))
    assert max(abs(a - b) for a, b in zip(times, expected)) < 1e-9
    fallback = kind != "BenchModiaBall"
    assert (r.stats["python_events"] > 0) == fallback
    assert model.derived["native"].events != fallback
    return len(times), best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    registry.register(BenchBall, source="benchmarks")
    registry.register(FallbackBall, source="benchmarks")
    ok = True
    for label, e, v_small, stop in (("ModiaMath ball, 18 impacts in [0, 3]", 0.7, 0.01, 3.0),
                                    ("elastic ball (e = 1) over [0, 1000]", 1.0, 0.0, 1000.0)):
        n, best = case(e, v_small, stop, args.repeats)
        per = best / n * 1e6
        ok &= per < TARGET_US
        print(f"{label}: {n} impacts in {best * 1e3:.2f} ms, {per:.1f} us per bounce "
              f"({'meets' if per < TARGET_US else 'misses'} the {TARGET_US:.0f} us target)")
    n, best = case(0.7, 0.01, 3.0, args.repeats, "BenchFallbackBall")
    print(f"fallback (an event numba cannot compile runs in Python): {n} impacts in "
          f"{best * 1e3:.2f} ms, {best / n * 1e6:.1f} us per bounce")
    n, best = library_ball(args.repeats)
    print(f"for comparison, the same ball from library blocks (diagrams/modiamath_ball.json): "
          f"{n} impacts in {best * 1e3:.2f} ms, {best / n * 1e6:.1f} us per bounce")
    return 0 if ok else 1


def library_ball(repeats: int) -> tuple[int, float]:
    from blocksim.diagram.examples import examples_dir
    model = blocksim.compile(blocksim.load(examples_dir() / "modiamath_ball.json"))
    best = math.inf
    for k in range(repeats + 1):
        started = time.perf_counter()
        r = blocksim.simulate(model, backend="numba")
        if k:
            best = min(best, time.perf_counter() - started)
    return len([e for e in r.events if e.block == "velocity" and e.kind == "reset"]), best


if __name__ == "__main__":
    sys.exit(main())
