"""`blocksim export DIAGRAM --fmu OUT.fmu [--fmi 2|3] [--kind me|cs]`: the CLI of FMU export."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

_TRUST = "trust this Python file of user block types (repeatable)"


def add_parser(sub: Any) -> None:
    """Register `blocksim export` on the CLI's subparsers."""
    p = sub.add_parser("export", help="export a diagram as an FMU (FMI 2.0 or 3.0, model "
                       "exchange or co-simulation) with C sources and a binary for this machine")
    p.add_argument("diagram", help="diagram file, or the name of an example")
    p.add_argument("--fmu", required=True, metavar="OUT.fmu", help="the FMU file to write")
    p.add_argument("--fmi", type=int, choices=(2, 3), default=2, help="FMI version (default 2)")
    p.add_argument("--kind", choices=("me", "cs"), default="me",
                   help="model exchange (me, default) or co-simulation (cs)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter value to export with (repeatable)")
    p.add_argument("--trust", action="append", default=[], metavar="FILE", help=_TRUST)
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from blocksim.api.facade import load
    from blocksim.cli.main import EXIT_OK, _parse_set
    from blocksim.cli.outputs import Output, check_outputs
    from blocksim.diagram.examples import diagram_path
    from blocksim.export.fmu import export_fmu

    path = diagram_path(args.diagram)
    check_outputs(path, [Output("--fmu", Path(args.fmu), None, None)])
    diagram = load(path, trust=args.trust)
    done = export_fmu(diagram, args.fmu, fmi=args.fmi, kind=args.kind,
                      params=_parse_set(args.set))
    v = done.variables
    print(f"blocksim: wrote {done.path} (FMI {done.fmi}.0 "
          f"{'model exchange' if done.kind == 'me' else 'co-simulation'}; "
          f"{len(v.outputs)} outputs, {len(v.inputs)} inputs, {len(v.parameters)} parameters, "
          f"{len(v.states)} states)", file=sys.stderr)
    return EXIT_OK
