"""The Modelica Association's Reference FMUs run by blocksim's FMU block, each in a one-block
diagram, model exchange and co-simulation, FMI 2.0 and 3.0, compared with each model's own
reference result (<Model>/<Model>_out.csv) by the FMI cross-check's tube (fmpy's
`validate_signal`), plus the exact-event checks of docs/fmi.md: BouncingBall's first impact
at sqrt(2 h0 / g) and Stair's time events at t = 1, 2, ..., 9.

The Reference FMUs are not part of blocksim: build them yourself (BSD-2, github
modelica/Reference-FMUs) and point this script at the source tree, whose build folders hold
the .fmu files:

    git clone https://github.com/modelica/Reference-FMUs && cd Reference-FMUs
    cmake -S . -B build2 -DFMI_VERSION=2 && cmake --build build2
    cmake -S . -B build3 -DFMI_VERSION=3 && cmake --build build3
    python benchmarks/fmi_reference.py /path/to/Reference-FMUs

(--fmi2 and --fmi3 name the folders of .fmu files if they are elsewhere). Exit status 0
when every comparison passes.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

MODELS = ("BouncingBall", "Dahlquist", "Feedthrough", "Resource", "Stair", "VanDerPol",
          "StateSpace", "Clocks")


def reference(root: Path, model: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The reference result: time and the numeric columns."""
    with open(root / model / f"{model}_out.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    columns: dict[str, list[float]] = {}
    for row in body:
        for name, text in zip(header, row):
            parts = text.split() if " " in text.strip() else [text]
            for j, part in enumerate(parts):  # an array's elements: NAME[j]
                key = f"{name}[{j}]" if len(parts) > 1 else name
                try:
                    value = {"true": 1.0, "false": 0.0}.get(part, None)
                    number = float(part) if value is None else value
                except ValueError:
                    number = math.nan
                columns.setdefault(key, []).append(number)
    data = {name: np.array(v) for name, v in columns.items()}
    time = data.pop(header[0])
    return time, {k: v for k, v in data.items() if np.all(np.isfinite(v))}


def _driven(root: Path, model: str) -> set[str]:
    """The outputs that follow an input the reference result drives from <Model>_in.csv
    (Feedthrough's integer inputs): a one-block diagram holds its inputs at their start
    values, so those outputs are not compared."""
    path = root / model / f"{model}_in.csv"
    if not path.exists():
        return set()
    with open(path, newline="") as fh:
        header = next(csv.reader(fh))
    return {name.replace("_input", "_output") for name in header[1:]}


def one_block(folder: Path, fmu: Path, interface: str, outputs: list[str], stop: float,
              interval: float, step: float | None, inputs) -> Path:
    """The FMU with an Output per compared output and, where it has inputs, a Constant at
    each input's start value (blocksim wants every input connected)."""
    shutil.copy(fmu, folder / fmu.name)
    params = {"file": fmu.name, "interface": interface}
    if step:
        params["communication_step"] = step
    blocks = [{"id": "fmu", "type": "FMU", "params": params}]
    blocks += [{"id": f"o_{k}", "type": "Output"} for k in range(len(outputs))]
    wires = [{"src": f"fmu.{port}", "dst": f"o_{k}.u"} for k, port in enumerate(outputs)]
    for k, var in enumerate(inputs):
        values = var.start_values()
        blocks.append({"id": f"i_{k}", "type": "Constant",
                       "params": {"value": values if var.shape else values[0]}})
        wires.append({"src": f"i_{k}.y", "dst": f"fmu.{var.port}"})
    path = folder / f"{fmu.stem}_{interface}.json"
    path.write_text(json.dumps({
        "format": "blocksim", "version": 1, "blocks": blocks, "wires": wires,
        "simulation": {"start": 0.0, "stop": stop, "solver": "dopri5", "rtol": 1e-10,
                       "atol": 1e-10, "output_interval": interval}}))
    return path


def check(fmu: Path, root: Path, version: int, interface: str) -> tuple[bool, str]:
    import blocksim
    from blocksim.fmi.archive import read_fmu
    from fmpy.util import validate_signal

    model = fmu.stem
    info = read_fmu(fmu).info
    if interface not in info.interfaces:
        return True, "not offered"
    t_ref, columns = reference(root, model)
    ports = {v.name: v.port for v in info.outputs}
    driven = _driven(root, model)  # outputs whose inputs the reference drives from a file
    compared = [name for name in columns if name.split("[")[0] in ports
                and name.split("[")[0] not in driven]
    wired = list(dict.fromkeys(name.split("[")[0] for name in compared))
    if not compared:
        skipped = "; ".join(info.skipped) or "no outputs"
        return False, f"nothing to compare (blocksim takes scalar numbers: {skipped})"
    stop = float(info.stop_time or t_ref[-1])
    interval = float(np.median(np.diff(t_ref)))
    interval_step = float(np.median(np.diff(t_ref)))
    step = (info.step_size or interval_step) if interface == "co_simulation" else None
    with tempfile.TemporaryDirectory() as tmp:
        path = one_block(Path(tmp), fmu, interface, [ports[c] for c in wired], stop,
                         interval, step, info.inputs)
        results = blocksim.simulate(blocksim.load(path, trust=True))
    notes, ok = [], True
    last = np.append(results.time[1:] != results.time[:-1], True)  # right limits
    t = results.time[last]
    for name in compared:
        base, _, rest = name.partition("[")
        y = np.asarray(results[f"o_{wired.index(base)}"])
        y = (y[:, int(rest[:-1])] if rest else y.reshape(len(y), -1)[:, 0])[last]
        outside = np.count_nonzero(validate_signal(t, y, t_ref.copy(), columns[name])[3])
        dev = np.max(np.abs(np.interp(t_ref, t, y) - columns[name]))
        ok &= outside == 0
        notes.append(f"{name}: {outside} of {len(t)} outside the tube, max |diff| {dev:.3g}")
    if model == "BouncingBall" and interface == "model_exchange":
        impact = next(ev.time for ev in results.events if ev.kind == "event")
        exact = math.sqrt(2 * 1.0 / 9.81)
        ok &= abs(impact - exact) < 1e-12
        notes.append(f"first impact {impact!r}, sqrt(2 h0/g) = {exact!r}, "
                     f"diff {abs(impact - exact):.2g}")
    if model == "Stair" and interface == "model_exchange":
        times = [ev.time for ev in results.events if ev.kind == "event"]
        want = [float(k) for k in range(1, 10)]
        ok &= times[:9] == want
        notes.append(f"time events at {times[:10]}")
    return ok, "; ".join(notes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the Reference-FMUs source tree")
    parser.add_argument("--fmi2", type=Path, help="folder of the FMI 2.0 .fmu files "
                        "(default ROOT/build2/fmus)")
    parser.add_argument("--fmi3", type=Path, help="folder of the FMI 3.0 .fmu files "
                        "(default ROOT/build3/fmus)")
    args = parser.parse_args(argv)
    folders = {2: args.fmi2 or args.root / "build2" / "fmus",
               3: args.fmi3 or args.root / "build3" / "fmus"}
    failures = 0
    for version, folder in folders.items():
        for model in MODELS:
            fmu = folder / f"{model}.fmu"
            if not fmu.exists():
                continue
            for interface in ("model_exchange", "co_simulation"):
                try:
                    ok, note = check(fmu, args.root, version, interface)
                except Exception as exc:  # a report, not a traceback per model
                    ok, note = False, f"{type(exc).__name__}: {exc}"
                failures += not ok
                print(f"FMI {version} {model:12s} {interface:15s} {'ok  ' if ok else 'FAIL'} "
                      f"{note}")
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
