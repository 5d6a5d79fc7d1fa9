"""`blocksim import`: translate a Simulink model (.slx, .mdl) into a blocksim diagram file,
printing the import report (and writing it as Markdown with --report).

Nothing in the model runs; the diagram (a .json) and the report (.md or .txt) are written
atomically, never over the model or a parameter file, checked before the model is read.
Exit 0 with placeholders too: the report names them, and `blocksim validate` fails on them
until they are filled in."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from blocksim.errors import BlocksimError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("import", help="translate a Simulink model (.slx or .mdl) into a "
                       "blocksim diagram, with a report of what was mapped")
    p.add_argument("model", metavar="MODEL.slx|MODEL.mdl")
    p.add_argument("--out", required=True, metavar="DIAGRAM.json", help="the diagram to write")
    p.add_argument("--params", action="append", default=[], metavar="FILE.m|FILE.mat",
                   help="workspace variables: a script of plain assignments (read, never "
                        "run) or a MAT-file (repeatable; later files win)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a workspace variable's value (MATLAB syntax; wins over the rest)")
    p.add_argument("--report", metavar="FILE.md", help="also write the report as Markdown")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")
    p.set_defaults(func=cmd_import)


def _check_output(path: Path, inputs: list[Path], what: str, suffixes: tuple[str, ...]) -> None:
    if path.suffix.lower() not in suffixes:
        raise BlocksimError(f"{path}: {what} must be a {' or '.join(suffixes)} file")
    for source in inputs:
        try:
            if path.exists() and source.exists() and path.samefile(source):
                raise BlocksimError(f"{path}: {what} would overwrite an input file")
        except OSError:
            continue
    if path.is_dir():
        raise BlocksimError(f"{path}: {what} is a directory")
    if not path.parent.exists() if str(path.parent) else False:
        raise BlocksimError(f"{path}: {what}'s folder does not exist")


def cmd_import(args: argparse.Namespace) -> int:
    from blocksim.cli.main import _parse_set
    from blocksim.diagram.format import save_diagram
    from blocksim.files.safe import atomic_write
    from blocksim.simulink.importer import import_simulink

    model, out = Path(args.model), Path(args.out)
    inputs = [model, *map(Path, args.params)]
    _check_output(out, inputs, "--out", (".json",))
    report_path = Path(args.report) if args.report else None
    if report_path is not None:
        _check_output(report_path, inputs + [out], "--report", (".md", ".txt"))
        if report_path.resolve() == out.resolve():
            raise BlocksimError(f"{report_path}: --report and --out are the same file")
    result = import_simulink(model, params=args.params, overrides=_parse_set(args.set))
    try:
        save_diagram(result.diagram, out)
    except OSError as exc:
        raise BlocksimError(f"cannot write {out}: {exc.strerror or exc}") from None
    report = result.report
    lines = report.lines()
    for line in (lines[:1] if args.quiet else lines):
        print(line)
    if report_path is not None:
        try:
            atomic_write(report_path, lambda fh: fh.write(report.markdown()))
        except OSError as exc:
            raise BlocksimError(f"cannot write {report_path}: {exc.strerror or exc}") from None
    written = ", ".join(str(p) for p in (out, report_path) if p is not None)
    print(f"blocksim: wrote {written}", file=sys.stderr)
    if report.placeholders or report.to_set:
        print(f"blocksim: {out} needs filling in before it runs (the report says what; "
              f"blocksim validate {out} names the first)", file=sys.stderr)
    return 0
