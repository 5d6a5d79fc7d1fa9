"""Import and run every model of a Simulink corpus with blocksim, and compare each run
with an independent reference (simulink_corpus_refs.py, simulink_corpus_sampled.py).

    python benchmarks/simulink_corpus.py CORPUS [--only TEXT] [--json FILE] [--markdown FILE]

CORPUS (or the environment variable BLOCKSIM_SIMULINK_CORPUS) is a folder with models/
(the .slx/.mdl files), params/NAME.m (workspace values a model needs, passed with
--params) and optionally manifest.json (repository, release, licence of each model). The
corpus itself is not in this repository: most models' licences do not allow it; models that
are absent are skipped. Each model goes through the command line as a user would:

    blocksim import MODEL --out NAME.json --report NAME.md [--params params/NAME.m]
    blocksim run NAME.json --out NAME.own.csv              # the model's own solver settings
    blocksim run NAME.json --out NAME.tight.csv --rtol 1e-10 --atol 1e-12 [--solver S]

and the tight run is compared with the reference on blocksim's output grid (at an event's
time, the value just after it): the largest
error of any logged signal, relative to that signal's largest magnitude (absolute where the
signal is identically 0). A model matches when that is at most 1e-6; the own-settings run's
error is reported beside it (it reflects the model's own, usually loose, tolerances).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import simulink_corpus_refs as refs  # noqa: E402
import simulink_corpus_sampled as sampled  # noqa: E402
from simulink_corpus_refs import Case  # noqa: E402

MATCH = 1e-6
TIMEOUT = 300.0


def _c(reference, **signals):
    return {"reference": reference, "signals": {k: tuple(v) for k, v in signals.items()}}


DERIVATIVE = ("blocksim's Derivative is filtered; s/(tau s + 1), where Simulink's is a "
              "difference quotient over the last two major steps")
CASES: dict[str, Case] = {
    # ---- Liu Jinkun's PID book, Simulink 6.3 (R14SP3) and 7.7 (R2011a)
    "pid__chap2_1sim.mdl": Case(True, **_c(refs.chap2_1, y=["y", "To Workspace1"])),
    "pid__chap2_2sim.mdl": Case(True, **_c(refs.chap2_2, y=["y", "To Workspace1"]),
                                note=DERIVATIVE),
    "pid__chap2_11sim.mdl": Case(True, **_c(refs.chap2_11, y=["Out1", "Scope"]),
                                 params="pid__chap2_11sim.m", note=DERIVATIVE),
    "pid__chap2_12sim.mdl": Case(True, params="pid__chap2_12sim.m",
                                 note="no reference: the derivative of the step at t = 1 "
                                      "goes into a Rate Limiter (step-size dependent)"),
    "pid__chap1_11.mdl": Case(True, note="no reference: Unit Delays inheriting the continuous "
                                         "rate run at the fixed step (ode5, 1 ms)"),
    "pid__chap1_14.mdl": Case(True, **_c(sampled.chap1_14, y=["y", "To Workspace1"]),
                              params="pid__chap1_14.m"),
    "pid__chap5_5sim.mdl": Case(True, **_c(refs.chap5_5, d1=["d1", "To Workspace1"],
                                           d=["d", "To Workspace2"]),
                                params="pid__chap5_5sim.m", tight_solver="radau"),
    "pid__chap1_8.mdl": Case(False, note="S-Function"),
    "pid__chap3_7sim.mdl": Case(False, note="powerlib_extras Discrete PID Controller"),
    "pid__chap7_4sim.mdl": Case(False, note="S-Functions"),
    # ---- lab models with a powergui block (Simscape Electrical) in a signal-flow diagram
    "lab__Secondorder.mdl": Case(False, **_c(refs.lab_second_order, under=["Scope"],
                                             undamped=["Scope1"], critical=["Scope2"]),
                                 breaks=(1.0,), note="powerlib/powergui"),
    "lab__Firstordercontrolsystem.mdl": Case(False, note="powerlib/powergui; no reference: "
                                                         "the Derivative of a step"),
    # ---- KTH ABS models (R2009b)
    "kth__Vehiclemodel.mdl": Case(True, **_c(refs.vehicle_coasting, wheel=["Wheel Speed"],
                                             vehicle=["Vehicle Speed"]),
                                  params="kth__Vehiclemodel.m"),
    "kth__BrakeActuator.mdl": Case(True, **_c(refs.zeros_everywhere, zero=["Brake torque"]),
                                   params="kth__BrakeActuator.m"),
    "kth__ABS.mdl": Case(True, **_c(refs.abs_bang_bang, force=["BrakeForceout"])),
    # ---- Apress: Practical MATLAB Modeling with Simulink (R2009b-R2019b)
    "apress2__Example_2_1ODE.mdl": Case(True, **_c(refs.example_2_1, y=["Out1", "simout"])),
    "apress2__HIRES_sim.mdl": Case(True, **_c(refs.hires, bus=["Out1"]), tight_solver="radau"),
    "apress2__Sim_Model_2ndODE_ex1.mdl": Case(True, **_c(refs.ode_ex1, x=["Out1"])),
    "apress2__Sim_Model_2ndODE_ex2.mdl": Case(True, **_c(refs.ode_ex2, x=["Out1"]),
                                              params="apress2__Sim_Model_2ndODE_ex2.m"),
    "apress2__ICs_non_Zero_2ODE_EX4.mdl": Case(True, **_c(refs.ics_ex4, x=["Scope1"],
                                                          z=["Scope2"], bus=["Scope"])),
    "apress2__Two_DOF_SMsys.mdl": Case(True, **_c(refs.two_dof, x1=["Out1"], x2=["Out2"]),
                                       params="apress2__Two_DOF_SMsys.m"),
    "apress2__IMPLICIT_2ODE_EX4_sim.mdl": Case(True, **_c(refs.implicit_ex4, x=["Out1"],
                                                          v=["Out2"]),
                                               note="an algebraic loop (Sum -> Exp -> Sum)"),
    "apress2__Robertson_problem.slx": Case(True, **_c(refs.robertson, bus=["Scope3"]),
                                           tight_solver="radau"),
    "apress2__DC__motor.slx": Case(True, **_c(refs.dc_motor, bus=["Scope"]), breaks=(1.0,),
                                   tight_solver="dopri5"),
    "apress2__Microphone_Model.slx": Case(True, **_c(refs.microphone, x=["x(t)"], i=["i(t)"]),
                                          breaks=(48e-4,)),
    "apress2__DC_Motor_w_Load.slx": Case(True, **_c(
        refs.dc_motor_load, tau_m=["tau_m"], theta_2=["theta_2"], tau_f=["tau_f"],
        theta_1=["theta_1"], Tau_f=["Tau_f"]), breaks=(1.0,), tight_solver="radau"),
    "apress1__Ex4_Discrete_Continuous_Sys.slx": Case(
        True, **_c(sampled.ex4_discrete_continuous, bus=["Scope"]),
        params="apress1__Ex4_Discrete_Continuous_Sys.m"),
    # ---- electromechanical course models (R2017a .mdl)
    "emech__DualPotentiometerPositionServoSystem.mdl": Case(
        True, **_c(refs.dual_pot_servo, y=["Out1"]), breaks=(1.0,)),
    "emech__SimulationOfSystemVariableStepResponseCurve.mdl": Case(
        True, **_c(refs.variable_step_curve, y=["Out1"]), breaks=(1.0,)),
    "emech__TheStepResponseCurveBeforeAndAfterCorrection.mdl": Case(
        True, **_c(refs.before_after_correction, y=["Scope"]), breaks=(1.0,)),
    # ---- Bilkent EEE342 labs (R2016b, R2018b)
    "bilkent__Check2_3.slx": Case(True, **_c(refs.check2_3, sim_Z1=["sim_Z1", "To Workspace"],
                                             sim_Z2=["sim_Z2", "To Workspace1"],
                                             sim_Z3=["sim_Z3", "To Workspace2"]),
                                  params="bilkent__Check2_3.m"),
    "bilkent__prelab2_step_resp.slx": Case(
        True, **_c(refs.prelab2, s1_step_resp=["s1_step_resp", "To Workspace"],
                   s2_step_resp2=["s2_step_resp2", "To Workspace1"],
                   s3_step_resp3=["s3_step_resp3", "To Workspace2"]),
        params="bilkent__prelab2_step_resp.m", tight_solver="dopri5"),
    "bilkent__lab_1_position_sim.slx": Case(True, **_c(sampled.position_lab,
                                                       pos=["pos_sim", "To Workspace"]),
                                            tight_solver="dopri5",
                                            note="Coulomb friction at u = 0 at t = 0; blocksim "
                                                 "gives -offset for a velocity starting at 0 and "
                                                 "rising, Simulink's sign(0) gives 0 (with that "
                                                 "first sample as blocksim's: 7e-12)"),
    # ---- IST modelling course (R2019b)
    "ist__pendulo.slx": Case(True, **_c(refs.pendulo, theta1=["theta1", "To Workspace"],
                                        theta2=["theta2", "To Workspace2"],
                                        p1=["p1", "To Workspace1"], p2=["p2", "To Workspace3"]), params="ist__pendulo.m"),
    # ---- MATLAB and Simulink Crash Course for Engineers (R2020a)
    "crash__PID.slx": Case(True, **_c(refs.crash_pid, y=["Scope"]), params="crash__PID.m",
                           breaks=(1.0,)),
    "crash__OpenLoop.slx": Case(True, **_c(refs.crash_openloop, y=["Scope"]), breaks=(1.0,)),
    "crash__DerivativeIntegrator.slx": Case(True, **_c(refs.ramp_derivative, scope=["Scope"]),
                                            breaks=(0.0,), note=DERIVATIVE),
    "crash__PulseGen.slx": Case(True, **_c(refs.crash_pulse, y=["Scope"]),
                                breaks=tuple(np.arange(0, 10.01, 2.0)) + tuple(np.arange(0.2, 10, 2.0))),
    "crash__MATLAB_function.slx": Case(False, note="MATLAB Function block"),
    # ---- Engineering Control Systems (R2021a), MathWorks toolkit (R2023a), PID workbench (R2024b)
    "downey__Tutorial_1.slx": Case(True, **_c(refs.downey_tutorial, y=["Scope"])),
    "mw__StabilityControlSystem.slx": Case(True, **_c(
        refs.zeros_everywhere, zero=["FrontLeftBrakeTorque", "FrontRightBrakeTorque",
                                     "RearLeftBrakeTorque", "RearRightBrakeTorque"]),
        note="root inports read 0"),
    "pidwb__pid_ai_second_order_demo.slx": Case(True, **_c(refs.pidwb_second_order, r=["r", "to_r"],
                                                           u=["u", "to_u"], y=["y", "to_y"])),
    "pidwb__pid_ai_cascade_two_pid_demo.slx": Case(True, **_c(refs.pidwb_cascade, r=["r", "to_r"],
                                                              u=["u", "to_u"], y=["y", "to_y"])),
    # ---- second round: more releases and block kinds
    "pid__chap1_2.mdl": Case(True, **_c(refs.chap1_2, yd=["yd", "To Workspace1"],
                                        y=["y", "To Workspace2"]), note=DERIVATIVE),
    "mw__StabilityControlSystemMessy.slx": Case(True, **_c(
        refs.zeros_everywhere, zero=["FrontLeftBrakeTorque", "FrontRightBrakeTorque",
                                     "RearLeftBrakeTorque", "RearRightBrakeTorque"]),
        note="root inports read 0; Goto/From across subsystems"),
    "fsm__traffic_light.slx": Case(False, note="Stateflow chart"),
    "fsm__DC_motor.slx": Case(False, note="Simscape (fl_lib, elec_lib) network"),
    "fsm__sinwave.slx": Case(True, **_c(refs.sinwave, sum=["sumout", "To Workspace", "Scope1"])),
    "fsm__Quarter_car_suspension.slx": Case(True, **_c(refs.quarter_car, xc=["Scope"],
                                                       xs=["Scope1"]),
                                            params="fsm__Quarter_car_suspension.m",
                                            breaks=(1.0,)),
    "fsm__TANK_level_controller.slx": Case(True, **_c(refs.tank_level, h=["Scope"]),
                                           params="fsm__TANK_level_controller.m",
                                           note="blocksim's Derivative is filtered; here inside "
                                                "an algebraic loop: the same loop with the filter "
                                                "agrees to 9e-12"),
    "tony__DC_motor_position.slx": Case(True, **_c(sampled.sampled_motor_position, theta=["Scope"]),
                                        params="tony__DC_motor_position.m",
                                        tight_solver="radau"),
    "learn__cruise_control_sim.slx": Case(True, note="no reference: needs a From Workspace "
                                                     "drive cycle"),
    "mcq__DC_motor_drive_system.slx": Case(True, **_c(refs.motor_drive, speed=["Scope"]),
                                           tight_solver="radau"),
}


@dataclass
class Outcome:
    model: str
    std: bool
    imported: bool = False
    import_message: str = ""
    placeholders: list[str] = field(default_factory=list)
    mapped: str = ""  # from the report: "mapped of blocks"
    ran: bool = False
    run_message: str = ""
    error_own: float | None = None
    error_tight: float | None = None
    verdict: str = ""
    seconds: float = 0.0


def blocksim(*args: str, timeout: float = TIMEOUT) -> tuple[int, str]:
    """Run the blocksim command line; (exit status, its last non-empty stderr/stdout line)."""
    try:
        done = subprocess.run([sys.executable, "-m", "blocksim", *args], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout:.0f} s"
    lines = [ln for ln in (done.stderr + "\n" + done.stdout).splitlines() if ln.strip()]
    errors = [ln for ln in done.stderr.splitlines() if ln.strip()]
    return done.returncode, (errors or lines or [""])[-1].strip()


def placeholders_in(report: Path) -> list[str]:
    """Names of the blocks the import report's block table marks as placeholders."""
    if not report.exists():
        return []
    names = []
    for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and len(cells) >= 3 and cells[2] == "placeholder":
            names.append(cells[0] or cells[1])
    return names


def mapped_in(report: Path) -> str:
    """'M of N': blocks mapped (exactly or with a note) of the blocks the report counts."""
    if not report.exists():
        return ""
    text = report.read_text(encoding="utf-8", errors="replace")
    total = re.search(r"(\d+) blocks?:", text)
    if not total:
        return ""
    mapped = sum(int(n) for n in re.findall(r"(\d+) mapped (?:exactly|with a note)",
                                             text.split("\n## ")[0]))
    return f"{mapped} of {total.group(1)}"


def norm(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def read_csv(path: Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    header, data = rows[0], np.array(rows[1:], dtype=float)
    return data[:, 0], {name: data[:, i] for i, name in enumerate(header) if i}


def columns_for(candidates: tuple[str, ...], columns: dict[str, np.ndarray]) -> list[str]:
    """The logged columns of a Simulink signal: its name exactly, or its elements
    (NAME[1], NAME_1, NAME.1, ...) in order; the first candidate name that matches wins."""
    for cand in candidates:
        if cand in columns:  # case matters first: tau_f and Tau_f are two outports
            return [cand]
        key = norm(cand)
        exact = [c for c in columns if norm(c) == key]
        if exact:
            return exact
        parts = [c for c in columns if re.fullmatch(re.escape(key) + r"_\d+", norm(c))]
        if parts:
            return sorted(parts, key=lambda c: int(norm(c).rsplit("_", 1)[1]))
        ending = [c for c in columns if norm(c).endswith("_" + key)]
        if len(ending) == 1:
            return ending
    return []


def compare(case: Case, csv_path: Path) -> tuple[float, str]:
    """Largest relative error of the run's logged signals against the reference."""
    t, columns = read_csv(csv_path)
    # blocksim logs an event's time twice (left and right limits): keep the right limit,
    # which is what the references give (a discrete output holds from its hit on)
    last = np.append(t[1:] != t[:-1], True)
    t, columns = t[last], {name: values[last] for name, values in columns.items()}
    keep = np.ones(len(t), bool)
    for b in case.breaks:
        keep &= np.abs(t - b) > 1e-9 * max(1.0, abs(b))
    expected = case.reference(t)
    worst, missing = 0.0, []
    for label, candidates in case.signals.items():
        names = columns_for(candidates, columns)
        ref = np.asarray(expected[label], float).reshape(len(t), -1)
        if len(candidates) > 1 and label == "zero":  # one reference for several outports
            names = [n for c in candidates for n in columns_for((c,), columns)]
            ref = np.zeros((len(t), len(names)))
        if not names or len(names) != ref.shape[1]:
            missing.append(f"{label} ({'/'.join(candidates)}: {len(names)} columns of "
                           f"{ref.shape[1]})")
            continue
        got = np.column_stack([columns[n] for n in names])
        for j in range(ref.shape[1]):
            scale = np.max(np.abs(ref[keep, j]))
            err = np.max(np.abs(got[keep, j] - ref[keep, j])) / (scale if scale > 0 else 1.0)
            worst = max(worst, float(err))
    if missing:
        return float("nan"), "signals not found in the run's output: " + "; ".join(missing) + \
            f" (columns: {', '.join(columns)[:200]})"
    return worst, ""


def check(model: Path, corpus: Path, work: Path) -> Outcome:
    case = CASES.get(model.name, Case(False, note="not in the case list"))
    out = Outcome(model.name, case.std)
    start = time.time()
    stem = work / model.stem
    diagram, report = stem.with_suffix(".json"), stem.with_suffix(".report.md")
    args = ["import", str(model), "--out", str(diagram), "--report", str(report)]
    if case.params and (corpus / "params" / case.params).exists():
        args += ["--params", str(corpus / "params" / case.params)]
    code, message = blocksim(*args)
    out.imported, out.import_message = code == 0, message
    out.placeholders = placeholders_in(report)
    out.mapped = mapped_in(report)
    if code != 0:
        out.verdict = f"import failed: {message}"
    elif out.placeholders:
        code, message = blocksim("validate", str(diagram))
        out.verdict = (f"imported with {len(out.placeholders)} placeholder(s) "
                       f"({', '.join(out.placeholders)[:120]}); validate: "
                       + (message.removeprefix("blocksim: ") if code else "passes (!)"))
    else:
        own = stem.with_suffix(".own.csv")
        code, message = blocksim("run", str(diagram), "--out", str(own), "-q")
        out.ran, out.run_message = code == 0, message
        if code != 0:
            out.verdict = f"run failed: {message}"
        elif case.reference is None:
            out.verdict = "ran; " + (case.note or "no reference")
        else:
            out.verdict = verdict_against_reference(case, diagram, stem, own, out)
    out.seconds = time.time() - start
    return out


def verdict_against_reference(case: Case, diagram: Path, stem: Path, own: Path,
                              out: Outcome) -> str:
    tight = stem.with_suffix(".tight.csv")
    args = ["run", str(diagram), "--out", str(tight), "-q", "--rtol", "1e-10", "--atol", "1e-12"]
    if case.tight_solver:
        args += ["--solver", case.tight_solver]
    code, message = blocksim(*args)
    if code != 0:
        return f"tight run failed: {message}"
    try:
        out.error_own, problem = compare(case, own)
        out.error_tight, problem = compare(case, tight)
    except Exception as exc:  # a reference that fails is reported, not fatal to the sweep
        return f"reference failed: {type(exc).__name__}: {exc}"
    if problem:
        return problem
    if out.error_tight <= MATCH:
        return f"matches reference ({out.error_tight:.1e}; own settings {out.error_own:.1e})"
    return (f"differs from reference: {out.error_tight:.1e} (own settings {out.error_own:.1e})"
            + (f"; {case.note}" if case.note else ""))


def short_result(o: Outcome) -> str:
    """The table's result cell: the verdict without paths, and errors to one digit."""
    note = CASES.get(o.model, Case(False)).note
    brief = note.split(";")[0].strip()
    if o.error_tight is not None and o.error_tight == o.error_tight:
        head = "matches" if o.error_tight <= MATCH else "differs"
        text = f"{head}: {o.error_tight:.0e} (own settings {o.error_own:.0e})"
        return text + (f"; {brief}" if head == "differs" and brief else "")
    if o.placeholders:
        return f"{len(o.placeholders)} placeholder(s): " + ", ".join(
            p.rsplit("/", 1)[-1] for p in o.placeholders)[:90]
    message = re.sub(r"^(blocksim: )?\S+\.json[:,] ", "", o.run_message or o.import_message)
    if not o.imported:
        return "import fails: " + message[:100]
    if not o.ran:
        return "run fails: " + re.sub(r"simulation failed at t = [\d.]+(, block '[^']+')?: ",
                                      "", message)[:100]
    return o.verdict.replace(f"ran; {note}", f"runs; {brief}") if note else o.verdict


def markdown(outcomes: list[Outcome], manifest: dict[str, dict]) -> str:
    lines = ["| model | source repository | release | blocks mapped | standard library only | "
             "imported / ran | result |", "|---|---|---|---|---|---|---|"]
    for o in outcomes:
        m = manifest.get(o.model, {})
        status = ("no" if not o.imported else
                  "placeholders" if o.placeholders else "yes / " + ("yes" if o.ran else "no"))
        lines.append(f"| {o.model.split('__', 1)[-1]} | {m.get('repo', '')} | "
                     f"{m.get('release', '')} | {o.mapped} | {'yes' if o.std else 'no'} | "
                     f"{status} | {short_result(o).replace('|', '/')} |")
    std = [o for o in outcomes if o.std]
    ok = [o for o in std if o.imported and not o.placeholders and o.ran]
    matched = [o for o in std if o.error_tight is not None and o.error_tight <= MATCH]
    lines += ["", f"Standard-library-only models that import and run with no edit: {len(ok)} of "
              f"{len(std)} ({100 * len(ok) / max(1, len(std)):.0f} %); matching their reference "
              f"within {MATCH:g}: {len(matched)}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", default=os.environ.get("BLOCKSIM_SIMULINK_CORPUS"))
    parser.add_argument("--only", help="check only the models whose file name contains this")
    parser.add_argument("--json", help="write every outcome to this JSON file")
    parser.add_argument("--markdown", help="write the corpus table to this Markdown file")
    parser.add_argument("--work", help="keep the imported diagrams and runs in this folder")
    args = parser.parse_args(argv)
    if not args.corpus or not (Path(args.corpus) / "models").is_dir():
        parser.error("give the corpus folder (with models/), or set BLOCKSIM_SIMULINK_CORPUS")
    corpus = Path(args.corpus)
    manifest_file = corpus / "manifest.json"
    manifest = ({m["model"]: m for m in json.loads(manifest_file.read_text())}
                if manifest_file.exists() else {})
    models = sorted(p for p in (corpus / "models").iterdir()
                    if p.suffix.lower() in (".slx", ".mdl") and (not args.only or args.only in p.name))
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="slxcorpus-"))
    work.mkdir(parents=True, exist_ok=True)
    outcomes = []
    for model in models:
        outcome = check(model, corpus, work)
        outcomes.append(outcome)
        print(f"{model.name:58s} {outcome.seconds:6.1f}s  {outcome.verdict}", flush=True)
    table = markdown(outcomes, manifest)
    print("\n" + table.splitlines()[-1])
    if args.json:
        Path(args.json).write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    if args.markdown:
        Path(args.markdown).write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
