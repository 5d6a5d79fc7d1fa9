"""A linear model as data another tool reads: the JSON document of `blocksim linearize
--json` and the variables of its `--mat` file (MATLAB's StateName/InputName/OutputName
cells, Ts). One layout, shared by the command line and the editor's Export."""
from __future__ import annotations

from typing import Any

import numpy as np


def complex_list(values: np.ndarray) -> list[list[float]]:
    """Sorted complex numbers as [re, im] pairs (JSON has no complex type)."""
    return [[float(v.real), float(v.imag)] for v in np.sort_complex(np.asarray(values))]


def as_dict(model: Any, poles: np.ndarray, zeros: np.ndarray, source: str, at: str
            ) -> dict[str, Any]:
    """The `--json` document: where it came from, the matrices with their names, poles,
    zeros and the library's notes."""
    return {"diagram": source, "at": at, "dt": model.dt,
            "states": model.state_labels, "inputs": model.input_labels,
            "outputs": model.output_labels,
            "A": model.A.tolist(), "B": model.B.tolist(), "C": model.C.tolist(),
            "D": model.D.tolist(), "poles": complex_list(poles),
            "zeros": complex_list(zeros), "notes": model.notes}


def mat_arrays(model: Any, poles: np.ndarray, zeros: np.ndarray) -> dict[str, Any]:
    """The `--mat` variables (names as MATLAB cell columns)."""
    def names(values: list[str]) -> np.ndarray:
        return np.array(values, dtype=object).reshape(-1, 1)

    return {"A": model.A, "B": model.B, "C": model.C, "D": model.D, "Ts": model.dt,
            "StateName": names(model.state_labels), "InputName": names(model.input_labels),
            "OutputName": names(model.output_labels),
            "poles": np.asarray(poles, dtype=complex).reshape(-1, 1),
            "zeros": np.asarray(zeros, dtype=complex).reshape(-1, 1)}
