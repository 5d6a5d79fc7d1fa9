"""blocksim's exported FMUs run through two importers that are not fmpy: the FMI Compliance
Checker (FMI 2.0; its ME run is forward Euler at a fixed step, its CS run a fixed
communication step) and the Modelica Association's fmusim (FMI 2.0 and 3.0; ME on its CVode
at rtol 1e-10, CS at the FMU's own tolerance). Every exportable shipped diagram (or those
named), FMI 2 and 3, ME and CS; fmusim's and the checker's CS results are compared with
blocksim's own run at their output points.

Build the two programs first (benchmarks/build_fmi_checkers.sh says how, offline), then

    python benchmarks/fmi_checkers.py --checker .../fmuCheck.linux64 --fmusim .../fmusim \\
        [--out report.md] [diagrams/bouncing_ball.json ...]

Exit status 0 when every run passes. tests/fmi/test_fmi_checkers.py runs the same checks
when BLOCKSIM_FMU_CHECKER and BLOCKSIM_FMUSIM name the programs.
"""
from __future__ import annotations

import argparse
import csv
import math
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600.0
SPAN = 5.0          # seconds of each diagram at most (as tests/ccode/test_fmu_export.py)
POINTS = 200        # output points in that span, about (a power-of-2 step)
ME_RTOL = 1e-10     # fmusim's CVode and blocksim's run, model exchange
# the checker's forward Euler needs a step its explicit stability allows on the stiff ones
# (at its default step, 1/500 of the span, the states grow without bound until an event
# indicator is NaN or a network's solve fails, and the FMU says so with fmi2Error)
EULER_STEP = {"c5_two_state": 5e-7, "bouncing_ball_contact": 1e-5, "dc_motor_pid": 1e-5,
              "diode_pwl": 1e-8, "diode_shockley": 1e-8, "c21_ball_elastogap": 1e-5,
              "c21_diode_pwl": 1e-8, "dc_motor_emf": 1e-5}
# what fmusim's CVode says of a model whose event indicator is 0 over an interval (a
# state resting on a table's breakpoint, a source that is 0 until it starts): a remark on
# the importer's root finding, not a fault of the FMU
SOLVER_REMARK = "there are still some root functions identically 0"


@dataclass
class Outcome:
    """One importer's run of one FMU."""
    tool: str
    fmu: str
    ok: bool
    note: str = ""
    worst: float | None = None          # largest |importer - blocksim| / scale
    counts: dict[str, int] = field(default_factory=dict)


def read_csv(path: Path) -> dict[str, np.ndarray]:
    """A CSV of time and outputs (header of names, quoted or not) as columns."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    names = [n.strip() for n in rows[0]]
    body = np.array([[float(v) for v in row] for row in rows[1:] if row], dtype=float)
    body = body.reshape(-1, len(names))
    return {name: body[:, k] for k, name in enumerate(names)}


def right_limits(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The last row at each time (an event's right limit)."""
    t = columns["time"]
    last = [i for i in range(len(t)) if i + 1 == len(t) or t[i + 1] != t[i]]
    return {k: v[last] for k, v in columns.items()}


def compare(result, columns: dict[str, np.ndarray], names: list[str]) -> float:
    """Largest difference between an importer's outputs and blocksim's run at the importer's
    output points, relative to the signals' scale (at least 1). Times must be equal, not
    close: an importer that adds up its steps (the checker) reaches 0.19999999999999998,
    not 0.2, and a sample hit at 0.2 rightly has not happened there (the step is a power
    of 2 so that sums are exact)."""
    columns = right_limits(columns)
    last = {float(t): k for k, t in enumerate(result.time)}
    scale = max(1.0, *(float(np.max(np.abs(result[n]))) for n in names))
    worst, compared = 0.0, 0
    for t, *values in zip(columns["time"], *(columns[n] for n in names)):
        k = last.get(float(t))
        if k is not None:
            compared += 1
            worst = max(worst, *(abs(result[n][k] - v) for n, v in zip(names, values)))
    if compared < min(10, len(columns["time"])):
        raise AssertionError(f"only {compared} of the importer's times are blocksim's")
    return worst / scale


def run_checker(checker: str, fmu: Path, folder: Path, stop: float, step: float | None
                ) -> tuple[int, str, Path]:
    """The Compliance Checker on one FMU: exit status, its log, its result CSV."""
    out, log = folder / (fmu.stem + ".checker.csv"), folder / (fmu.stem + ".checker.log")
    cmd = [checker, "-t", str(folder), "-o", str(out), "-e", str(log), "-s", repr(stop),
           "-l", "3"]
    if step:
        cmd += ["-h", repr(step)]
    proc = subprocess.run(cmd + [str(fmu)], capture_output=True, text=True, timeout=TIMEOUT)
    text = log.read_text(errors="replace") if log.exists() else proc.stderr
    return proc.returncode, text, out


def checker_counts(log: str) -> dict[str, int]:
    """The checker's summary: the FMU's own warnings/errors, the checker's."""
    def number(pattern: str) -> int:
        m = re.search(pattern, log)
        return int(m.group(1)) if m else -1
    return {"fmu": number(r"FMU reported:\s*(\d+) warning"),
            "warnings": number(r"(\d+) Warning\(s\)"), "errors": number(r"(\d+) Error\(s\)")}


def run_fmusim(fmusim: str, fmu: Path, folder: Path, kind: str, stop: float, step: float,
               rtol: float | None) -> tuple[int, str, Path]:
    """fmusim on one FMU: exit status, its output, its result CSV."""
    out = folder / f"{fmu.stem}.fmusim.csv"
    cmd = [fmusim, "--interface-type", kind, "--stop-time", repr(stop), "--set-stop-time",
           "--output-interval", repr(step), "--output-file", str(out), "--log-level", "warning"]
    if kind == "me":
        cmd += ["--solver", "cvode"]
    if rtol:
        cmd += ["--tolerance", repr(rtol)]
    proc = subprocess.run(cmd + [str(fmu)], capture_output=True, text=True, timeout=TIMEOUT)
    return proc.returncode, (proc.stdout + proc.stderr).strip(), out


def exportable(paths: list[Path]) -> list[Path]:
    """The diagrams among `paths` that export (a transport delay does not)."""
    import blocksim
    from blocksim.ccode.model_source import ExportError

    keep = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            try:
                blocksim.export_fmu(path, Path(tmp) / "probe.fmu", kind="cs")
            except ExportError:
                continue
            keep.append(path)
    return keep


def check_diagram(path: Path, checker: str | None, fmusim: str | None, folder: Path
                  ) -> list[Outcome]:
    """Export one diagram four ways and run the importers on each FMU."""
    import blocksim

    d = blocksim.load(path)
    stop = d.simulation.start + min(d.simulation.stop - d.simulation.start, SPAN)
    if path.stem == "c5_two_state":
        stop = 4.9  # (a switch at 4.9999998 s on radau comes after 5 s on dopri5)
    step = 2.0 ** math.floor(math.log2((stop - d.simulation.start) / POINTS))
    runs = {rtol: blocksim.simulate(d, stop_time=stop, rtol=rtol, atol=rtol,
                                    output_interval=step) for rtol in (None, ME_RTOL)}
    # CS equals blocksim's own steps on dopri5 diagrams; others run on dopri5 in the FMU
    cs_limit = 1e-9 if d.simulation.solver == "dopri5" else 1e-4
    me_limit = 5e-2 if path.stem == "c5_two_state" else 1e-4
    outcomes = []
    for fmi in (2, 3):
        for kind in ("me", "cs"):
            fmu = folder / f"{path.stem}_fmi{fmi}_{kind}.fmu"
            exported = blocksim.export_fmu(d, fmu, fmi=fmi, kind=kind)
            names = [o.name for o in exported.variables.outputs]
            if checker and fmi == 2:
                euler = EULER_STEP.get(path.stem) if kind == "me" else step
                code, log, out = run_checker(checker, fmu, folder, stop, euler)
                counts = checker_counts(log)
                ok = code == 0 and counts == {"fmu": 0, "warnings": 0, "errors": 0}
                o = Outcome("checker", fmu.name, ok, counts=counts)
                if not ok:
                    o.note = " ".join(line.strip() for line in log.splitlines()
                                      if "[ERROR]" in line or "[FATAL]" in line
                                      or "[WARNING]" in line)[:300] or f"exit {code}"
                elif kind == "cs":
                    o.worst = compare(runs[None], read_csv(out), names)
                    o.ok = o.worst <= cs_limit
                outcomes.append(o)
            if fmusim:
                rtol = ME_RTOL if kind == "me" else None
                code, text, out = run_fmusim(fmusim, fmu, folder, kind, stop, step, rtol)
                remark = SOLVER_REMARK in text
                faults = [line for line in text.splitlines() if line.strip()
                          and "CVODE WARNING" not in line and "CVode" not in line
                          and SOLVER_REMARK not in line]
                note = ("; ".join(faults) if faults else
                        "CVode: an event indicator is 0 after the first step" if remark else "")
                o = Outcome("fmusim", fmu.name, code == 0 and not faults, note[:300])
                if code == 0:
                    o.worst = compare(runs[rtol], read_csv(out), names)
                    o.ok = o.ok and o.worst <= (cs_limit if kind == "cs" else me_limit)
                outcomes.append(o)
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    lines = ["| FMU | importer | result | max difference from blocksim (of scale) |",
             "|---|---|---|---|"]
    for o in outcomes:
        counts = (f" ({o.counts['fmu']} FMU, {o.counts['warnings']} warnings, "
                  f"{o.counts['errors']} errors)") if o.counts else ""
        worst = "" if o.worst is None else f"{o.worst:.1e}"
        lines.append(f"| {o.fmu} | {o.tool} | {'pass' if o.ok else 'FAIL'}{counts} "
                     f"{o.note} | {worst} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("diagrams", nargs="*", type=Path)
    p.add_argument("--checker", help="fmuCheck.linux64 (FMI Compliance Checker)")
    p.add_argument("--fmusim", help="fmusim (Reference-FMUs)")
    p.add_argument("--out", type=Path, help="write the table here too")
    p.add_argument("--keep", type=Path, help="keep the FMUs and results in this folder")
    args = p.parse_args(argv)
    if not (args.checker or args.fmusim):
        p.error("give --checker, --fmusim or both")
    shipped = (sorted((ROOT / "diagrams").glob("*.json"))
               + sorted((ROOT / "diagrams" / "physical").glob("*.json")))
    paths = args.diagrams or exportable(shipped)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for path in paths:
            found = check_diagram(path, args.checker, args.fmusim, folder)
            for o in found:
                print(f"{o.fmu:40s} {o.tool:8s} {'pass' if o.ok else 'FAIL'} "
                      f"{'' if o.worst is None else f'{o.worst:.1e}'} {o.note}", flush=True)
            outcomes += found
    text = table(outcomes)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
