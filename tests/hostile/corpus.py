"""The hostile corpus: every case a user (or an attacker) could hand blocksim, built
deterministically so that a failure reproduces from its case id alone.

A Case is data: the files to create in a fresh folder, the CLI arguments or the API call,
and what the contract allows (exit statuses, words the one-line message must contain, files
that must be left byte-identical). `build_corpus()` returns the same list on every call.
Paths inside cases use the placeholder @DIR@ (the case's folder) and @MARK@ (a marker file
that must never exist: every code-execution payload tries to create it).

    python -m hostile.corpus --list            # ids and notes
    python -m hostile.corpus --write FOLDER    # the files of every case, for manual replay
"""
from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from hostile.cases.base import DIR, Case, Corpus, blk, doc, dumps  # noqa: F401 (the API)
from hostile.cases.commandline import cli_args, outputs
from hostile.cases.discrete import discrete
from hostile.cases.expressions import expressions
from hostile.cases.malformed import malformed, special_paths
from hostile.cases.mutants import handpicked, mutants
from hostile.cases.numerics import numerics
from hostile.cases.physical import physical
from hostile.cases.usercode import user_code
from hostile.cases.writes import writes
from hostile.cases.signal_files import signal_files
from hostile.cases.simulink import simulink


def build_corpus() -> list[Case]:
    """Every case, in a fixed order; ids are unique."""
    c = Corpus()
    handpicked(c)
    malformed(c)
    special_paths(c)
    cli_args(c)
    outputs(c)
    writes(c)
    expressions(c)
    numerics(c)
    physical(c)
    discrete(c)
    signal_files(c)
    mutants(c)
    user_code(c)
    simulink(c)
    ids = [case.id for case in c.cases]
    dupes = {i for i in ids if ids.count(i) > 1} if len(set(ids)) != len(ids) else set()
    if dupes:
        raise AssertionError(f"duplicate case ids: {sorted(dupes)[:5]}")
    return c.cases


def materialize(case: Case, folder: Path) -> None:
    """Create the case's files and special files in `folder` (which exists)."""
    root = str(folder)
    for name, raw in case.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)  # (__pycache__/x.pyc, proj/d.json)
        (folder / name).write_bytes(raw.replace(DIR.encode(), root.encode()))
    for op in case.setup:
        kind, name = op[0], op[1]
        path = folder / name
        if kind == "mkdir":
            path.mkdir(parents=True, exist_ok=True)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "chardev":  # like /dev/null (1, 3); a FIFO where mknod is refused
            try:
                os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            except OSError:
                os.mkfifo(path)
        elif kind == "symlink":
            os.symlink(op[2], path)
        elif kind == "copy":
            path.write_bytes((folder / op[2]).read_bytes())
        elif kind == "sparse":  # a large file of zeros that takes no room on disk
            with open(path, "wb") as fh:
                fh.truncate(op[2])
        elif kind == "chmod":
            os.chmod(path, op[2])
        elif kind == "fill":  # ("fill", name, chunk, count): append chunk count times
            with open(path, "ab") as fh:
                fh.write(op[2] * op[3])
        elif kind == "extend":  # ("extend", name, size): a sparse tail of zeros
            os.truncate(path, op[2])
        else:
            raise ValueError(f"unknown setup {op}")


def substitute(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(DIR, root)
    if isinstance(value, list):
        return [substitute(v, root) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, root) for k, v in value.items()}
    return value


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--write", metavar="FOLDER")
    parser.add_argument("--only", default="", help="ids starting with this")
    parser.add_argument("--show", metavar="ID", help="print one case: command and files")
    args = parser.parse_args(argv)
    if args.show:
        case = next((c for c in build_corpus() if c.id == args.show), None)
        if case is None:
            print(f"no case {args.show}", file=sys.stderr)
            return 2
        print(f"{case.id}  (allowed exit {'/'.join(map(str, case.exits))}) {case.note}")
        print("  blocksim " + " ".join(json.dumps(a) if not a or " " in a else a
                                       for a in case.argv) if case.argv is not None
              else f"  API {case.api}")
        for op in case.setup:
            print(f"  setup: {op}")
        for name, raw in case.files.items():
            text = raw.decode("utf-8", "backslashreplace")
            print(f"  {name} ({len(raw)} bytes): "
                  + (text if len(text) <= 1200 else text[:600] + " ... " + text[-300:]))
        return 0
    cases = [case for case in build_corpus() if case.id.startswith(args.only)]
    if args.write:
        out = Path(args.write)
        for case in cases:
            folder = out / case.id.replace("/", "__")
            folder.mkdir(parents=True, exist_ok=True)
            for name, raw in case.files.items():
                (folder / name).write_bytes(raw)
            (folder / "case.json").write_text(json.dumps(
                {"id": case.id, "argv": case.argv, "api": case.api, "setup": case.setup,
                 "exits": case.exits, "mentions": case.mentions, "note": case.note},
                indent=1, ensure_ascii=True))
    if args.list or not args.write:
        counts: dict[str, int] = {}
        for case in cases:
            counts[case.category] = counts.get(case.category, 0) + 1
            if args.list:
                print(f"{case.id}\t{case.note}")
        print(f"{len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
