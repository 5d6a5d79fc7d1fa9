"""Routing quality and automatic layout of the examples, for benchmarks/editor.py.

The routing-quality check (`blocksim.gui.canvas.routecheck`) summed over every level of a
diagram, and a table of every example as the editor lays it out on opening: its crossings
and bends next to those the layout gave before the pendulum work of issue 13 (as generated
by this benchmark at commit 9ee2837), and how long the layout takes.
"""
from __future__ import annotations

import copy
import statistics
import time

QUALITY_KEYS = ("through blocks", "through labels", "shared segments", "touching", "stubs",
                "crossings", "bends")
FAULT_KEYS = QUALITY_KEYS[:5]
LAYOUT_REPEATS = 3

# (crossings, bends) of each example's automatic layout at commit 9ee2837, from the
# docs/editor-performance.md generated there: the reference the layout work is judged by.
BEFORE = {
    "bouncing_ball": (5, 26), "bouncing_ball_contact": (9, 74), "c5_two_state": (3, 30),
    "dc_motor_pid": (4, 36), "dde_delay": (0, 8), "diode_ideal": (9, 64),
    "diode_pwl": (6, 40), "diode_realtime": (3, 64), "diode_shockley": (6, 44),
    "from_file_measured": (0, 8), "gearbox_bus": (1, 30), "math003": (3, 66),
    "modiamath_ball": (1, 42), "multi_clock": (0, 18), "pathsim_antiwindup_pid": (0, 20),
    "pathsim_discrete_pid": (1, 18), "pi_1khz": (0, 12), "rotating_pendulum": (169, 254),
    "rotating_pendulum_kick": (211, 322), "zoh_loop": (0, 12),
}


def routing_quality(diagram) -> dict[str, int]:
    """The routing-quality check summed over every level of a (laid out) diagram."""
    from blocksim.gui.canvas.routecheck import all_levels, level_quality

    total: dict[str, int] = {}
    for _, level, names in all_levels(diagram):
        for key, value in level_quality(level, names).summary().items():
            total[key] = total.get(key, 0) + value
    return total


def example_quality() -> list[tuple[str, int, int, dict[str, int], float]]:
    """(name, blocks, wires, check, CPU seconds of layout) of every example as the editor
    opens it (the layout is the median of LAYOUT_REPEATS, each on a fresh copy; CPU time,
    which other work on the machine inflates far less than the clock)."""
    from blocksim.diagram.format import load_diagram
    from blocksim.gui.layout.autolayout import layout_diagram
    from blocksim.gui.window.files import examples

    found = []
    for path in examples():
        diagram = load_diagram(path)
        times = []
        for _ in range(LAYOUT_REPEATS):
            fresh = copy.deepcopy(diagram)
            started = time.process_time()
            layout_diagram(fresh)
            times.append(time.process_time() - started)
        found.append((path.stem, len(diagram.blocks), len(diagram.wires),
                      routing_quality(fresh), statistics.median(times)))
    return found


def quality_cells(quality: dict[str, int]) -> str:
    return " | ".join(f"{quality.get(k, 0):,}" for k in QUALITY_KEYS)


def layout_section(examples) -> list[str]:
    """The markdown lines of the examples' automatic layout table."""
    lines = ["", "## Automatic layout of the examples", "",
             "Every example laid out as the editor opens it (no layout is saved in "
             "diagrams/): crossings of different nets and bends as the routing-quality "
             "check counts them (every level summed), next to what the layout gave at "
             "commit 9ee2837, before the work on the pendulum's layout, and the time of "
             f"the layout's CPU time (median of {LAYOUT_REPEATS}). No example has more crossings "
             "than before; every one has no routing fault (table above).", "",
             "| example | blocks | wires | crossings | before | bends | before | layout (CPU) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, blocks, wires, quality, seconds in examples:
        crossings, bends = BEFORE.get(name, ("-", "-"))
        lines.append(f"| {name} | {blocks} | {wires} | {quality['crossings']} | "
                     f"{crossings} | {quality['bends']} | {bends} | "
                     f"{seconds * 1e3:.0f} ms |")
    return lines
