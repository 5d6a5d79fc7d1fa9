"""Variables a model reads from MATLAB's workspace: plain assignments in its callbacks
(PreLoadFcn, InitFcn, ...), in its model workspace, in .m scripts given with --params, and
numeric arrays in .mat files (scipy.io.loadmat). Scripts are read, never run: a statement
that is not `name = expression` of a translatable expression is skipped and named in the
report (`system('rm -rf ~')` included).
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blocksim.files.safe import read_regular_file, why_unreadable
from blocksim.simulink.errors import SimulinkFileError
from blocksim.simulink.mexpr import Untranslatable, translate

MAX_SCRIPT = 4 * 2**20
MAX_MAT = 64 * 2**20
_ASSIGN = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*=(?!=)\s*(.+?)\s*$", re.S)


@dataclass
class Workspace:
    """Variables by name (a blocksim expression text or a number/list) with where each came
    from, and the statements that were skipped."""

    values: dict[str, Any] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def assign(self, name: str, value: Any, origin: str) -> None:
        self.values[name] = value
        self.origin[name] = origin


def _strip_comments(code: str) -> str:
    code = re.sub(r"(?ms)^\s*%\{.*?^\s*%\}\s*$", "", code)  # block comments
    out = []
    for line in code.splitlines():
        quote = False
        for k, ch in enumerate(line):
            if ch == "'" and (quote or k == 0 or not (line[k - 1].isalnum()
                                                     or line[k - 1] in ")]}'._")):
                quote = not quote
            elif ch == "'" and quote:
                quote = False
            elif ch in "%#" and not quote:
                line = line[:k]
                break
        out.append(line)
    return "\n".join(out)


def statements(code: str) -> list[str]:
    """The statements of a script: split at newlines, ';' and ',' outside brackets and
    parentheses, `...` continuations joined."""
    code = _strip_comments(code).replace("\r", "")
    code = re.sub(r"\.\.\.[^\n]*\n", " ", code)
    out, depth, current = [], 0, []
    for ch in code:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if depth == 0 and ch in ";,\n":
            out.append("".join(current))
            current = []
            continue
        if depth > 0 and ch == "\n":
            ch = ";"  # a new line inside brackets ends a matrix row
        current.append(ch)
    out.append("".join(current))
    return [s.strip() for s in out if s.strip()]


def read_assignments(code: str, origin: str, workspace: Workspace) -> None:
    """Take the plain assignments of MATLAB code into `workspace`; skip (and list) the
    rest. Nothing is evaluated."""
    for statement in statements(code):
        match = _ASSIGN.match(statement)
        if not match:
            workspace.skipped.append(f"{origin}: `{_short(statement)}` is not a plain "
                                     "assignment (not run)")
            continue
        name, expression = match.groups()
        try:
            text = translate(expression).text
        except Untranslatable as exc:
            workspace.skipped.append(f"{origin}: `{_short(statement)}`: {exc} (not run)")
            continue
        workspace.assign(name, _literal_or_text(text), origin)


def _literal_or_text(text: str) -> Any:
    """A number or a (nested) list where the translated text has no names (evaluated by
    blocksim's own safe evaluator), else the text: an expression over other variables."""
    from blocksim.errors import ExpressionError
    from blocksim.expressions.language import names_in
    from blocksim.simulink.mapping import literal
    try:
        return text if names_in(text) else literal(text)
    except ExpressionError:
        return text  # (1/0, ragged rows: the diagram parameter then says why)


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def read_script(path: Path, workspace: Workspace) -> None:
    try:
        raw = read_regular_file(path, MAX_SCRIPT)
    except (OSError, ValueError) as exc:
        raise SimulinkFileError(path, why_unreadable(exc, MAX_SCRIPT)) from None
    try:
        code = raw.decode("utf-8")
    except UnicodeDecodeError:
        code = raw.decode("latin-1")
    read_assignments(code, path.name, workspace)


def read_mat(path: Path, workspace: Workspace) -> None:
    """Numeric real arrays of a .mat file (v4 to v7; v7.3 is HDF5 and needs h5py: refused)."""
    try:
        raw = read_regular_file(path, MAX_MAT)
    except (OSError, ValueError) as exc:
        raise SimulinkFileError(path, why_unreadable(exc, MAX_MAT)) from None
    if raw[:19] == b"MATLAB 7.3 MAT-file" or raw[512:516] == b"\x89HDF":
        raise SimulinkFileError(path, "is a v7.3 (HDF5) MAT-file; save it with "
                                      "save(..., '-v7') to import it")
    try:
        data = _loadmat(raw)
    except Exception as exc:  # scipy raises many types for a damaged file
        raise SimulinkFileError(path, f"is not a readable MAT-file ({exc})") from None
    _take_arrays(data, path.name, workspace)


def _loadmat(raw: bytes) -> dict[str, Any]:
    from scipy.io import loadmat
    return loadmat(io.BytesIO(raw), squeeze_me=True, struct_as_record=False)


_MAT_HEADER = b"MATLAB 5.0 MAT-file, model workspace read by blocksim".ljust(116) + bytes(8)
_EMPTY_NAME = b"\x01\x00\x00\x00\x00\x00\x00\x00"  # miINT8, 0 bytes: an unnamed array


def read_model_workspace(part: str, raw: bytes, workspace: Workspace) -> None:
    """The model workspace's variables: simulink/modelworkspace.mat is a MAT-file;
    simulink/modelWorkspace.mxarray (R2019b on) is the same records after a 4-byte version
    and endian mark and 4 bytes of padding: one unnamed 1x1 struct whose fields are the
    variables. Given a header (and the struct a name scipy keeps) it reads as a MAT-file."""
    origin = "model workspace"
    if part.lower().endswith(".mxarray"):
        if len(raw) < 64 or raw[2:4] not in (b"IM", b"MI"):
            workspace.skipped.append(f"{origin}: its data part is not a MAT record stream "
                                     "(not read; give the variables with --params)")
            return
        body = bytearray(raw[:4] + raw[8:])
        if raw[2:4] == b"IM" and body[44:52] == _EMPTY_NAME:  # name it, in the same 8 bytes
            body[44:52] = b"\x01\x00\x02\x00ws\x00\x00"
        raw = _MAT_HEADER + bytes(body)
    try:
        data = _loadmat(raw)
    except Exception as exc:  # scipy raises many types for a damaged part
        workspace.skipped.append(f"{origin}: its data cannot be read ({exc}); give the "
                                 "variables with --params")
        return
    fields: dict[str, Any] = {}
    for name, value in data.items():
        if hasattr(value, "_fieldnames"):  # the struct of the workspace's variables
            fields.update({f: getattr(value, f) for f in value._fieldnames})
        elif not name.startswith("__"):
            fields[name] = value
    _take_arrays(fields, origin, workspace)


def _take_arrays(data: dict[str, Any], origin: str, workspace: Workspace) -> None:
    import numpy as np
    for name, value in data.items():
        if name.startswith("__"):
            continue
        array = np.asarray(value) if not isinstance(value, (str, bytes)) else None
        if array is None or array.dtype.kind not in "biuf" or array.size == 0:
            workspace.skipped.append(f"{origin}: variable '{name}' is not a real numeric "
                                     "array (not imported)")
            continue
        if array.ndim > 2 or not np.all(np.isfinite(array)):
            workspace.skipped.append(f"{origin}: variable '{name}' has more than 2 "
                                     "dimensions or non-finite values (not imported)")
            continue
        workspace.assign(name, array.astype(float).tolist() if array.ndim else float(array),
                         origin)


def read_params_file(path: str | Path, workspace: Workspace) -> None:
    path = Path(path)
    if path.suffix.lower() == ".mat":
        read_mat(path, workspace)
    elif path.suffix.lower() == ".m":
        read_script(path, workspace)
    else:
        raise SimulinkFileError(path, "--params takes .m scripts of assignments or .mat files")
