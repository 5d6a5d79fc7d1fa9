"""Run every benchmark diagram headless and write a Markdown table of the results.

    python benchmarks/report.py [--out docs/benchmarks.md] [--only math003 ...]

Reference values come from tests/references.py (../shared/benchmarks/BENCHMARKS.md).
"""
from __future__ import annotations

import argparse
import datetime
import logging
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy

import blocksim

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import references as ref

DIAGRAMS = ROOT / "diagrams"
log = logging.getLogger("benchmarks.report")



@dataclass(frozen=True)
class Run:
    """One simulation: its results, settings and cost."""

    results: blocksim.Results
    solver: str
    tolerance: str
    wall: float


@dataclass(frozen=True)
class Row:
    case: str
    run: Run
    quantity: str
    value: float
    reference: float
    error: float
    limit: float | None = None

    @property
    def ok(self) -> bool:
        return self.limit is None or bool(self.error < self.limit)


def simulate(name: str, **options) -> Run:
    """Run diagrams/NAME; a failed run is logged and its partial results are reported."""
    diagram = blocksim.load(DIAGRAMS / name)
    settings = diagram.simulation.replaced(**{k: v for k, v in options.items()
                                              if k in ("rtol", "atol")})
    start = time.perf_counter()
    try:
        results = blocksim.simulate(diagram, **options)
    except blocksim.SimulationError as exc:
        log.error("%s failed: %s", name, exc)
        results = exc.results
    wall = time.perf_counter() - start
    tol = f"fixed step {settings.step:g}" if settings.solver == "rk4" else \
        f"rtol {settings.rtol:g}, atol {settings.atol:g}"
    log.info("%s (%s, %s): %.2f s, %d events", name, settings.solver, tol, wall,
             len(results.events))
    return Run(results, settings.solver, tol, wall)


def max_error(values, reference) -> float:
    values, reference = np.asarray(values, float), np.asarray(reference, float)
    if len(values) < len(reference):
        return float("inf")
    return float(np.max(np.abs(values[:len(reference)] - reference)))


def times(run: Run, kinds: tuple[str, ...], block: str | None = None) -> list[float]:
    return [e.time for e in run.results.events
            if e.kind in kinds and (block is None or e.block == block)]


def value_at(run: Run, name: str, t: float) -> float:
    rows = np.flatnonzero(np.abs(run.results.time - t) < 1e-9 * abs(t))
    return float(run.results[name][rows[-1]]) if len(rows) else float("nan")


def scalar_row(case, run, quantity, value, reference, limit=None) -> Row:
    return Row(case, run, quantity, value, reference, abs(value - reference), limit)


# ---------------------------------------------------------------- cases
def case_math003() -> list[Row]:
    run = simulate("math003.json", rtol=1e-6)
    state = times(run, ("state",))
    return [Row("Math 003", run, "max error of the 3 state event times", state[-1] if state
                else float("nan"), ref.MATH003_STATE_EVENTS[-1],
                max_error(state, ref.MATH003_STATE_EVENTS), 1e-7)]


def c5(tol: float, switch_limit: float, y1_limit: float | None) -> list[Row]:
    run = simulate("c5_two_state.json", rtol=tol, atol=tol)
    switches = times(run, ("on", "off"))
    case = "EUROSIM C5"
    return [Row(case, run, "max error of the 5 switch times", switches[-1] if switches
                else float("nan"), ref.C5_SWITCHES[-1], max_error(switches, ref.C5_SWITCHES),
                switch_limit),
            scalar_row(case, run, "y1(5)", float(run.results["y1"][-1]), ref.C5_Y1_END,
                       y1_limit)]


def case_c5_1e6() -> list[Row]:
    return c5(1e-6, 1e-5, 0.3)


def case_c5_1e10() -> list[Row]:
    return c5(1e-10, 1e-8, 5e-3)


def case_c5_1e14() -> list[Row]:
    return c5(1e-14, 1e-10, 1e-5)


def case_ball_no_air() -> list[Row]:
    run = simulate("bouncing_ball.json", rtol=1e-10, atol=1e-10, params={"beta": 0})
    bounces = times(run, ("reset",), "ball")
    expected = ref.ball_bounce_times_no_air(100)
    t, x = run.results.time, run.results["x"]
    resting = x[t > ref.BALL_T_INF_NO_AIR + 1e-6]
    rest = float(np.max(np.abs(resting))) if len(resting) else float("nan")
    case = "C21 ball, beta = 0"
    return [Row(case, run, "max error of the first 100 bounce times",
                bounces[99] if len(bounces) >= 100 else float("nan"), expected[-1],
                max_error(bounces, expected), 1e-8),
            Row(case, run, "max x after t_inf (at rest)", rest, 0.0, rest, 1e-6)]


def case_ball_air() -> list[Row]:
    run = simulate("bouncing_ball.json", rtol=1e-10, atol=1e-10, params={"beta": 0.002})
    bounces = times(run, ("reset",), "ball")
    return [Row("C21 ball, beta = 0.002", run, "max error of the first 5 bounce times",
                bounces[4] if len(bounces) >= 5 else float("nan"), ref.BALL_BOUNCES_AIR[-1],
                max_error(bounces, ref.BALL_BOUNCES_AIR), 1e-8)]


def case_contact() -> list[Row]:
    run = simulate("bouncing_ball_contact.json", rtol=1e-10, atol=1e-10)
    starts = times(run, ("on",), "contact")
    ends = times(run, ("off",), "contact")
    case = "C21 ball, dynamic contact"
    first = lambda ts: ts[0] if ts else float("nan")
    return [scalar_row(case, run, "contact 1 start", first(starts), ref.CONTACT_STARTS[0], 1e-8),
            scalar_row(case, run, "contact 1 end", first(ends), ref.CONTACT_ENDS[0], 1e-8)]


def case_diode_ideal() -> list[Row]:
    run = simulate("diode_ideal.json", rtol=1e-10)
    switches = times(run, ("on", "off"), "diode")
    numbers = sorted(ref.DIODE_SWITCHES)
    got = [switches[n - 1] if n <= len(switches) else float("nan") for n in numbers]
    expected = [ref.DIODE_SWITCHES[n] for n in numbers]
    uc_ref = ref.DIODE_AT_5US["uC"]
    case = "C21 ideal diode"
    return [Row(case, run, f"max error of switches {','.join(map(str, numbers))}", got[-1],
                expected[-1], float(np.max(np.abs(np.subtract(got, expected)))), 1e-11),
            scalar_row(case, run, "uC(5e-6)", value_at(run, "uC", 5e-6), uc_ref, 1e-7 * uc_ref)]


def case_diode_realtime() -> list[Row]:
    run = simulate("diode_realtime.json")
    return [scalar_row("C21 real-time diode", run, "uC(1e-4)", float(run.results["uC"][-1]),
                       ref.SHOCKLEY_UC_END, 1e-3 * ref.SHOCKLEY_UC_END)]


def case_diode_shockley() -> list[Row]:
    run = simulate("diode_shockley.json", rtol=1e-8)
    switches = times(run, ("state",), "conducting")
    ud_ref = ref.SHOCKLEY_AT_2_2US["uD"]
    case = "C21 Shockley diode"
    return [scalar_row(case, run, "first switch", switches[0] if switches else float("nan"),
                       ref.SHOCKLEY_FIRST_SWITCHES[0], 1e-10),
            scalar_row(case, run, "uD(2.2e-6)", value_at(run, "uD", 2.2e-6), ud_ref,
                       1e-6 * ud_ref)]


def pwl(n: int) -> list[Row]:
    run = simulate("diode_pwl.json", params={"N": n})
    expected = ref.PWL_ID_AT_2_2US[n]
    return [scalar_row(f"C21 PWL diode, N = {n}", run, "iD(2.2e-6)",
                       value_at(run, "iD", 2.2e-6), expected, 1e-4 * expected)]


def case_pendulum() -> list[Row]:
    run = simulate("rotating_pendulum.json", rtol=1e-10, atol=1e-10)
    first = lambda ts: ts[0] if ts else float("nan")
    case = "C21 rotating pendulum"
    return [scalar_row(case, run, "swing -> flight", first(times(run, ("set",), "mode_latch")),
                       ref.PENDULUM_RELEASE, 1e-7),
            scalar_row(case, run, "flight -> swing", first(times(run, ("reset",), "mode_latch")),
                       ref.PENDULUM_CATCH, 1e-7),
            scalar_row(case, run, "stop", first(times(run, ("stop",), "stop")),
                       ref.PENDULUM_TURNING[-1], 1e-6)]


def case_pendulum_kick() -> list[Row]:
    run = simulate("rotating_pendulum_kick.json", rtol=1e-10, atol=1e-10)
    catches = times(run, ("reset",), "mode_latch")
    kicks = [t for t in times(run, ("reset",), "swing/omega_state") if t not in catches]
    return [scalar_row("C21 pendulum with kick", run, "kick", kicks[0] if kicks
                       else float("nan"), ref.PENDULUM_KICK, 1e-6)]


CASES: dict[str, Callable[[], list[Row]]] = {
    "math003": case_math003,
    "c5_1e-6": case_c5_1e6,
    "c5_1e-10": case_c5_1e10,
    "c5_1e-14": case_c5_1e14,
    "ball_no_air": case_ball_no_air,
    "ball_air": case_ball_air,
    "contact": case_contact,
    "diode_ideal": case_diode_ideal,
    "diode_realtime": case_diode_realtime,
    "diode_shockley": case_diode_shockley,
    "diode_pwl_3": lambda: pwl(3),
    "diode_pwl_5": lambda: pwl(5),
    "diode_pwl_10": lambda: pwl(10),
    "pendulum": case_pendulum,
    "pendulum_kick": case_pendulum_kick,
}


# ---------------------------------------------------------------- output
def header() -> str:
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return "\n".join([
        "# Benchmark results",
        "",
        "<!-- Generated by `python benchmarks/report.py`; do not edit by hand. -->",
        "",
        (f"Generated by `python benchmarks/report.py` on {now}. Do not edit by hand: "
        "rerun the script."),
        "",
        f"- Machine: `{platform.platform()}`",
        (f"- Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, blocksim {blocksim.__version__}"),
        ("- Errors are absolute; *limit* is the acceptance limit of the test suite; "
        "*events* counts every event of the run; wall time is per run (rows of one run share it)."),
        "- For a max-error row over several event times, *blocksim* and *reference* show the last one.",
        "",
    ])


def table(rows: list[Row]) -> str:
    lines = [("| case | solver | tolerance | quantity | blocksim | reference | error | limit "
             "| events | wall time |"),
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        limit = "—" if r.limit is None else f"{r.limit:.0e}"
        mark = "" if r.ok else " ✗"
        quantity = r.quantity.replace("|", "\\|")
        lines.append(f"| {r.case} | {r.run.solver} | {r.run.tolerance} | {quantity} "
                     f"| {f'{r.value:.12g}'} | {f'{r.reference:.12g}'} "
                     f"| {f'{r.error:.3e}'}{mark} | {limit} | {len(r.run.results.events)} "
                     f"| {r.run.wall:.2f} s |")
    return "\n".join(lines) + "\n"


def run_cases(names: list[str]) -> list[Row]:
    rows: list[Row] = []
    for name in names:
        log.info("case %s", name)
        rows.extend(CASES[name]())
    for r in rows:
        if not r.ok:
            log.warning("%s: %s error %.3e above limit %.0e", r.case, r.quantity, r.error,
                        r.limit)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), metavar="CASE",
                        help=f"run only these cases ({', '.join(CASES)})")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    rows = run_cases(args.only or list(CASES))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(header() + "\n" + table(rows), encoding="utf-8")
    log.info("wrote %s (%d rows)", args.out, len(rows))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
