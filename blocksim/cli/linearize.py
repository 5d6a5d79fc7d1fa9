"""`blocksim linearize DIAGRAM --input PORT --output PORT [--open PORT] [--at WHERE]
[--json | --mat FILE]`: a diagram's linear model at an operating point, printed as A, B,
C, D with the names of states, inputs and outputs, its poles and zeros (docs/analysis.md).

Exit 2 for bad input (an unknown point, a model it cannot linearise), 1 when no operating
point is found (`--at trim` that does not converge: the residuals are printed). numpy is
imported by the command, not by the parser (`blocksim --help` stays light).
"""
from __future__ import annotations

import argparse
import io
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from blocksim.errors import BlocksimError

EXIT_OK, EXIT_FAILED = 0, 1
_AT = ("where to linearise: 'initial' (the diagram's initial values, default), 'trim' "
       "(the operating point blocksim.operating_point finds), 'steady' (where a run to the "
       "stop time ends, if it has settled) or a time in seconds (where a run is then)")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("linearize", help="the linear model (A, B, C, D, poles, zeros) "
                                         "between analysis points at an operating point")
    p.add_argument("diagram", help="diagram file, or the name of an example")
    p.add_argument("--input", action="append", required=True, metavar="POINT",
                   help="an input: an Inport's id, a block's id (its output), 'block.port' "
                        "(a signal) or 'block.inport' (one branch); repeatable")
    p.add_argument("--output", action="append", required=True, metavar="POINT",
                   help="an output point, as for --input; repeatable")
    p.add_argument("--open", action="append", default=[], metavar="POINT",
                   help="open the loop at this point (its readers see only the input "
                        "injected there); repeatable")
    p.add_argument("--at", default="initial", metavar="WHERE", help=_AT)
    p.add_argument("--all-states", action="store_true",
                   help="keep every continuous state (default: only those on a path from "
                        "an input to an output)")
    p.add_argument("--delay-order", type=int, default=None, metavar="N",
                   help="Pade order of TransportDelays (default 6)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a diagram parameter (repeatable)")
    p.add_argument("--trust", action="append", default=[], metavar="FILE",
                   help="run this Python file of user block types that the diagram names")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true",
                     help="print the model as JSON (matrices, names, poles, zeros, notes)")
    fmt.add_argument("--mat", metavar="FILE",
                     help="write the model as a MATLAB .mat file (A, B, C, D, Ts, names)")
    p.set_defaults(func=cmd_linearize)


def cmd_linearize(args: argparse.Namespace) -> int:
    from blocksim.analysis import OperatingPointError, linearize, operating_point, steady_state
    from blocksim.analysis.export import as_dict
    from blocksim.analysis.model import DEFAULT_DELAY_ORDER
    from blocksim.analysis.statespace import transmission_zeros
    from blocksim.api.facade import load
    from blocksim.cli.main import _parse_set
    from blocksim.diagram.examples import diagram_path

    if args.delay_order is not None and args.delay_order < 0:
        raise BlocksimError(f"--delay-order must be >= 0, got {args.delay_order}")
    at_time = _at_time(args.at)
    path = diagram_path(args.diagram)
    if args.mat:
        from blocksim.cli.outputs import Output, check_outputs

        check_outputs(path, [Output("--mat", Path(args.mat), None, None)])
    diagram = load(path, trust=args.trust)
    params = _parse_set(args.set)
    try:
        if args.at == "trim":
            at: Any = operating_point(diagram, params=params)
        elif args.at == "steady":
            at = steady_state(diagram, params=params)
        else:
            at = at_time
    except OperatingPointError as exc:
        print(f"blocksim: {exc}", file=sys.stderr)
        print(exc.point.report(), file=sys.stderr)
        return EXIT_FAILED
    model = linearize(diagram, args.input, args.output, at=at, open_loops=args.open,
                      params=params, use_control=False, reduce=not args.all_states,
                      delay_order=DEFAULT_DELAY_ORDER if args.delay_order is None
                      else args.delay_order)
    poles = model.poles()
    zeros = transmission_zeros(model.A, model.B, model.C, model.D)
    if args.json:
        print(json.dumps(as_dict(model, poles, zeros, diagram.source, args.at), indent=2))
    elif args.mat:
        _write_mat(Path(args.mat), model, poles, zeros)
        print(f"blocksim: wrote {args.mat}", file=sys.stderr)
    else:
        print(_as_text(model, poles, zeros, diagram.source, args.at))
    return EXIT_OK


def _at_time(text: str) -> float | None:
    if text in ("initial", "trim", "steady"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise BlocksimError(f"--at expects initial, trim, steady or a time in seconds, "
                            f"got '{text}'") from None
    if not math.isfinite(value):
        raise BlocksimError(f"--at: the time must be finite, got '{text}'")
    return value


def _write_mat(path: Path, model: Any, poles: np.ndarray, zeros: np.ndarray) -> None:
    import scipy.io

    from blocksim.analysis.export import mat_arrays
    from blocksim.files.safe import atomic_write

    data = mat_arrays(model, poles, zeros)

    def write(handle: Any) -> None:
        buffer = io.BytesIO()
        scipy.io.savemat(buffer, data)
        handle.write(buffer.getvalue())

    try:
        atomic_write(path, write, binary=True)
    except (OSError, ValueError) as exc:
        raise BlocksimError(f"--mat {path}: cannot write: {exc}") from None


def _matrix(name: str, values: np.ndarray, rows: list[str], cols: list[str]) -> list[str]:
    if not values.size:
        return [f"{name}: empty ({values.shape[0]} x {values.shape[1]})"]
    width = max([12] + [len(c) for c in cols]) + 1
    left = max([4] + [len(r) for r in rows])
    lines = [f"{name}:", " " * (left + 2) + "".join(f"{c:>{width}s}" for c in cols)]
    for label, row in zip(rows, values):
        lines.append(f"  {label:<{left}s}" + "".join(f"{v:>{width}.6g}" for v in row))
    return lines


def _as_text(model: Any, poles: np.ndarray, zeros: np.ndarray, source: str, at: str) -> str:
    import numpy as np

    kind = (f"discrete-time, sample time {model.dt:g} s" if model.dt else "continuous-time")
    s, u, y = model.state_labels, model.input_labels, model.output_labels
    lines = [f"{source} linearised at {at}: {kind}, {len(s)} states, {len(u)} inputs, "
             f"{len(y)} outputs"]
    lines += _matrix("A", model.A, s, s) + _matrix("B", model.B, s, u)
    lines += _matrix("C", model.C, y, s) + _matrix("D", model.D, y, u)
    lines.append("poles: " + (", ".join(_shown(p) for p in np.sort_complex(poles)) or "none"))
    lines.append("zeros: " + (", ".join(_shown(z) for z in np.sort_complex(zeros)) or "none"))
    lines += [f"note: {note}" for note in model.notes]
    return "\n".join(lines)


def _shown(value: complex) -> str:
    if abs(value.imag) <= 1e-12 * max(1.0, abs(value.real)):
        return f"{value.real:.6g}"
    return f"{value.real:.6g}{value.imag:+.6g}j"
