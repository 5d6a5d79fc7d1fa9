"""Writing a linear model's A, B, C, D (with its names and sample period) to a file another
tool reads: NumPy .npz, MATLAB .mat (scipy.io) or JSON. The file is written atomically, so a
failed export leaves an existing file untouched.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO

import numpy as np

from blocksim.files.safe import atomic_write
from blocksim.gui.analysis.response import LinearModel

FORMATS = {".npz": "NumPy arrays", ".mat": "MATLAB", ".json": "JSON"}
FILTER = ";;".join(f"{name} (*{suffix})" for suffix, name in FORMATS.items())


class ExportError(Exception):
    """One line naming the file and what went wrong."""


def write_model(model: LinearModel, path: str | os.PathLike[str]) -> None:
    """Write `model` to `path`, in the format its suffix names (FORMATS)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ExportError(f"{path}: unknown file type '{suffix or '(none)'}'; use "
                          + ", ".join(FORMATS))
    try:
        if suffix == ".json":
            atomic_write(path, lambda fh: _write_json(model, fh))
        elif suffix == ".npz":
            arrays = {"A": model.A, "B": model.B, "C": model.C, "D": model.D,
                      "dt": np.float64(model.dt), "states": np.array(model.states, dtype=str),
                      "inputs": np.array(model.inputs, dtype=str),
                      "outputs": np.array(model.outputs, dtype=str)}
            atomic_write(path, lambda fh: np.savez(fh, **arrays), binary=True)
        else:
            import scipy.io

            def write(fh: IO) -> None:
                scipy.io.savemat(fh, {
                    "A": model.A, "B": model.B, "C": model.C, "D": model.D,
                    "dt": model.dt,
                    # cell arrays of names, as MATLAB's ss object keeps them
                    "StateName": np.array(model.states, dtype=object).reshape(-1, 1),
                    "InputName": np.array(model.inputs, dtype=object).reshape(-1, 1),
                    "OutputName": np.array(model.outputs, dtype=object).reshape(-1, 1)})
            atomic_write(path, write, binary=True)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ExportError(f"{path}: cannot write: {exc}") from None


def _write_json(model: LinearModel, fh: IO) -> None:
    json.dump({"A": model.A.tolist(), "B": model.B.tolist(), "C": model.C.tolist(),
               "D": model.D.tolist(), "dt": model.dt, "states": model.states,
               "inputs": model.inputs, "outputs": model.outputs},
              fh, indent=2, allow_nan=False)
    fh.write("\n")
