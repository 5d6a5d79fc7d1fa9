"""Writing a linear model's A, B, C, D (with its names, sample period, poles, zeros and the
library's notes) to a file another tool reads: JSON and MATLAB .mat in the layouts of
`blocksim linearize --json` and `--mat` (the JSON built by the CLI's own function), or NumPy
.npz with the same keys. Written atomically: a failed export leaves an existing file as it
was.
"""
from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import IO, Any

import numpy as np

from blocksim.analysis.statespace import LinearModel as Named
from blocksim.analysis.export import as_dict, mat_arrays
from blocksim.files.safe import atomic_write
from blocksim.gui.analysis.response import LinearModel

FORMATS = {".npz": "NumPy arrays", ".mat": "MATLAB", ".json": "JSON"}
FILTER = ";;".join(f"{name} (*{suffix})" for suffix, name in FORMATS.items())


class ExportError(Exception):
    """One line naming the file and what went wrong."""


def export_data(model: LinearModel, notes: list[str], source: str, at: str) -> dict[str, Any]:
    """The JSON document of `blocksim linearize --json` for this model."""
    named = Named(model.A, model.B, model.C, model.D, model.dt, list(model.states),
                  list(model.inputs), list(model.outputs), list(notes))
    return as_dict(named, named.poles(), named.zeros(), source, at)


def write_model(model: LinearModel, path: str | os.PathLike[str], notes: list[str] = (),
                source: str = "<diagram>", at: str = "initial") -> None:
    """Write `model` to `path`, in the format its suffix names (FORMATS); `source` and
    `at` say where it came from (the diagram, "initial" or "trim")."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ExportError(f"{path}: unknown file type '{suffix or '(none)'}'; use "
                          + ", ".join(FORMATS))
    data = export_data(model, list(notes), source, at)
    try:
        if suffix == ".json":
            atomic_write(path, lambda fh: _write_json(data, fh))
        else:
            arrays = _arrays(model, data)
            write = _savemat if suffix == ".mat" else _savez
            atomic_write(path, lambda fh: write(fh, arrays), binary=True)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except ValueError as exc:  # NaN in JSON, a NUL in the path
        raise ExportError(f"{path}: cannot write: {exc}") from None


def _write_json(data: dict[str, Any], fh: IO) -> None:
    json.dump(data, fh, indent=2, allow_nan=False)
    fh.write("\n")


def _arrays(model: LinearModel, data: dict[str, Any]) -> dict[str, Any]:
    """The .mat variables of `blocksim linearize --mat`."""
    named = Named(model.A, model.B, model.C, model.D, model.dt, list(data["states"]),
                  list(data["inputs"]), list(data["outputs"]))
    return mat_arrays(named, *(np.array([complex(re, im) for re, im in data[key]],
                                        dtype=complex) for key in ("poles", "zeros")))


def _savemat(fh: IO, arrays: dict[str, Any]) -> None:
    import scipy.io

    buffer = io.BytesIO()  # savemat seeks; the handle may be a pipe
    scipy.io.savemat(buffer, arrays)
    fh.write(buffer.getvalue())


def _savez(fh: IO, arrays: dict[str, Any]) -> None:
    plain = {key: (np.array([str(v) for v in value.ravel()], dtype=str)
                   if getattr(value, "dtype", None) == object else value)
             for key, value in arrays.items()}
    np.savez(fh, **plain)
