"""Where one run's time goes on the Python side: a cProfile of single warm runs, written into
docs/performance.md so the next person starts from numbers (issue 14).

Profiled: the bouncing ball to rest on the python backend (event location, event iteration,
DOPRI5 steps), the 100-lag chain on the python backend (steps and the dense output on the
grid), and, with numba, one `simulate` of the chain on the numba backend (the Python around
one call of the compiled loop). Each model is compiled and run once untimed first, so caches
are warm, as for a user's second run. cProfile adds a cost to every Python call, so the
profiled total is larger than the plain run time given beside it; the shares between
functions are what to read. docs/profile.md explains the numbers and what was cut.
"""
from __future__ import annotations

import cProfile
import pstats
import time
from pathlib import Path
from typing import Callable

import chain
from bench_suite import Suite, fmt_time

import blocksim

ROOT = Path(__file__).resolve().parents[1]
TOP = 12  # entries by own time per profile


def _where(key: tuple[str, int, str]) -> str:
    """`file:line function`, paths inside this checkout relative to it, others by their
    last two parts (numpy's, the standard library's), built-ins by name."""
    filename, line, function = key
    if filename == "~":
        return f"`{function}`"
    path = Path(filename)
    try:
        shown = path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        shown = "/".join(path.parts[-2:])
    return f"`{shown}:{line}` `{function}`"


def _profile(run: Callable[[], object], calls: int) -> tuple[pstats.Stats, float, float]:
    """(statistics of `calls` profiled runs, profiled seconds per run, plain seconds per
    run: the median of `calls` unprofiled runs, CPU time)."""
    plain = []
    for _ in range(calls):
        started = time.process_time()
        run()
        plain.append(time.process_time() - started)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for _ in range(calls):
        run()
    profiler.disable()
    stats = pstats.Stats(profiler)
    return stats, stats.total_tt / calls, sorted(plain)[len(plain) // 2]


def _rows(stats: pstats.Stats, calls: int) -> list[list[str]]:
    entries = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:TOP]
    total = stats.total_tt
    rows = []
    for key, (_, ncalls, own, cumulative, _) in entries:
        rows.append([_where(key), f"{ncalls / calls:,.0f}", fmt_time(own / calls),
                     f"{100 * own / total:.0f} %", fmt_time(cumulative / calls)])
    return rows


def _by_file(stats: pstats.Stats, shown: int = 8) -> str:
    """Own time summed per file (built-ins apart), the largest first, as shares."""
    own: dict[str, float] = {}
    for (filename, _, function), (_, _, tt, _, _) in stats.stats.items():
        name = "built-ins (numpy's and Python's C functions)" if filename == "~" else \
            _where((filename, 0, "")).split(":")[0].strip("`")
        own[name] = own.get(name, 0.0) + tt
    ranked = sorted(own.items(), key=lambda item: item[1], reverse=True)[:shown]
    return ", ".join(f"{name} {100 * tt / stats.total_tt:.0f} %" for name, tt in ranked)


def case_profile(suite: Suite) -> None:
    calls = 1 if suite.quick else 5
    ball = blocksim.compile(blocksim.load(ROOT / "diagrams" / "bouncing_ball.json"),
                            params={"beta": 0})
    n = 10 if suite.quick else 100
    lags = blocksim.compile(chain.diagram(n))
    runs = [("the bouncing ball to rest (beta = 0), python backend", ball, "python"),
            (f"the {n}-lag chain, python backend", lags, "python")]
    if "numba" in suite.backends:
        runs.append((f"the {n}-lag chain, one `simulate` on the numba backend", lags, "numba"))
    for title, model, backend in runs:
        def run(model=model, backend=backend) -> object:
            return blocksim.simulate(model, backend=backend)
        run()  # untimed: derived functions, run plans and numba code loaded
        stats, profiled, plain = _profile(run, calls)
        suite.section(
            f"Profile: {title}",
            f"cProfile of {calls} warm run(s) (CPU time), the {TOP} functions with the most "
            f"own time, per run. Plain run time {fmt_time(plain)} (median, unprofiled); "
            f"profiled {fmt_time(profiled)} (cProfile's cost per Python call inflates the "
            f"total; read the shares). Own time by file: {_by_file(stats)}. "
            "docs/profile.md explains them.",
            ["function", "calls", "own time", "share", "with callees"], _rows(stats, calls))
