"""`blocksim sweep`: a grid or Monte Carlo sweep of a diagram from the command line.

Exit status as for `blocksim run`: 0 every run finished, 1 the sweep went through but some
runs failed (their rows say why), 2 bad input (before anything runs), 130 Ctrl-C, 143
SIGTERM, 129 SIGHUP (the finished runs are in --out; `--resume` carries on from them).
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from blocksim.cli import main as cli
from blocksim.cli import signals
from blocksim.diagram.examples import diagram_path
from blocksim.errors import BlocksimError
from blocksim.diagram.model import BACKENDS

if TYPE_CHECKING:
    from blocksim.sweeps.table import SweepTable

GOOD = ("finished", "stopped")


def add_parser(sub: Any) -> None:
    """Register `blocksim sweep` on the CLI's subparsers."""
    p = sub.add_parser("sweep", help="run a diagram over a grid of parameter values or "
                       "Monte Carlo draws, one row of metrics per run")
    p.add_argument("diagram", help="diagram file, or the name of an example")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a fixed parameter value for every run (repeatable)")
    p.add_argument("--grid", action="append", default=[], metavar="NAME=START:STOP:N",
                   help="N values from START to STOP; several --grid make a product")
    p.add_argument("--sample", action="append", default=[],
                   metavar="NAME=normal(MU,SIGMA)|uniform(A,B)",
                   help="a Monte Carlo parameter, drawn -n times (per grid point)")
    p.add_argument("-n", type=int, help="the number of Monte Carlo draws")
    p.add_argument("--seed", type=int, help="the seed of the draws (the same runs whatever "
                   "the number of workers)")
    p.add_argument("--metric", action="append", default=[], metavar="SPEC",
                   help="final:SIGNAL, min:SIGNAL, max:SIGNAL, at:SIGNAL:TIME, "
                        "count:BLOCK.KIND or time:BLOCK.KIND:K; a column named as written")
    p.add_argument("--workers", type=int, help="local worker processes (default: every "
                   "core; 1 runs in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask cluster (tcp://host:8786) instead of locally")
    p.add_argument("--backend", choices=BACKENDS)
    p.add_argument("--stop-time", type=float)
    p.add_argument("--out", required=True, help="the table of runs (.csv or .parquet)")
    p.add_argument("--resume", action="store_true",
                   help="skip the runs already in --out (same sweep, same seed)")
    p.add_argument("--batch-size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--strict", action="store_true",
                   help="a logged signal that becomes NaN or infinite fails the run")
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("--trust", action="append", default=[], metavar="FILE", help=cli._TRUST)
    p.add_argument("--allow-write", action="append", default=[], metavar="PATH",
                   help=cli._ALLOW_WRITE + "; each run writes it again")
    p.set_defaults(func=cmd_sweep, signals=True)  # SIGTERM, SIGHUP: as Ctrl-C


def _pairs(option: str, items: Sequence[str]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise BlocksimError(f"{option} expects NAME=VALUE, got '{item}'")
        if name.strip() in pairs:
            raise BlocksimError(f"{option} {name.strip()} is given twice")
        pairs[name.strip()] = value.strip()
    return pairs


class SweepProgress:
    """`sweep: [####......] 120/1000 runs, 2 failed, ETA 0:45` on stderr, if a terminal."""

    def __init__(self, stream: Any = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.t0 = time.monotonic()
        self.start_done: int | None = None
        self.shown = False
        self.last = 0.0

    def __call__(self, table: "SweepTable") -> None:
        if not self.enabled:
            return
        done, total = len(table), max(table.total, 1)
        if self.start_done is None:
            self.start_done = done - 1  # the rows found by --resume are not this pace
        now = time.monotonic()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        elapsed = now - self.t0
        new = done - self.start_done
        eta = elapsed / new * (total - done) if new > 0 else 0.0
        bad = sum(n for status, n in table.counts().items() if status not in GOOD)
        filled = int(20 * done / total)
        self.shown = self._write(f"\rsweep: [{'#' * filled}{'.' * (20 - filled)}] "
                                 f"{done}/{total} runs, {bad} failed, ETA {_clock(eta)}  ")

    def done(self) -> None:
        if self.shown:
            self.shown = not self._write("\r" + " " * 72 + "\r")

    def _write(self, text: str) -> bool:
        try:
            self.stream.write(text)
            self.stream.flush()
        except OSError:  # the terminal has gone (closed: SIGHUP follows); the sweep goes on
            self.enabled = False
            return False
        return True


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def cmd_sweep(args: argparse.Namespace) -> int:
    # Here, not at the top: `blocksim --help` builds this parser and needs none of them.
    from blocksim.cli.outputs import Output, check_outputs, count
    from blocksim.sweeps import scheduler
    from blocksim.sweeps.api import SweepInterrupted, sweep
    from blocksim.sweeps.files import counts_line

    path = diagram_path(args.diagram)
    check_outputs(path, [Output("--out", Path(args.out), None, None)])
    draws = _pairs("--sample", args.sample)
    if draws and args.n is None:
        raise BlocksimError("--sample needs -n N, the number of draws")
    if args.n is not None and not draws:
        raise BlocksimError("-n is the number of Monte Carlo draws: give --sample too")
    client = scheduler.connect(args.scheduler) if args.scheduler else None
    progress = SweepProgress()
    started = time.monotonic()
    engine_log = logging.getLogger("blocksim.engine")
    level = engine_log.level
    if not args.verbose:  # each run's warnings are in its row's message, not 10,000 lines
        engine_log.setLevel(logging.ERROR)
    try:
        table = sweep(path, grid=_pairs("--grid", args.grid), draws=draws, n=args.n,
                      seed=args.seed, metrics=args.metric, params=cli._parse_set(args.set),
                      workers=args.workers, client=client, backend=args.backend,
                      stop=args.stop_time, strict=args.strict, out=args.out,
                      resume=args.resume, batch_size=args.batch_size, trust=args.trust,
                      allow_write=args.allow_write, progress=progress)
    except SweepInterrupted as exc:
        progress.done()
        by = f" by {signals.current.name}" if signals.current.received else ""
        print(f"blocksim: {path}: sweep interrupted{by} after {len(exc.table)}"
              f" of {count(exc.table.total, 'run')}; the finished runs are in {args.out} "
              f"(--resume carries on)", file=sys.stderr)
        return cli.EXIT_INTERRUPTED
    finally:
        engine_log.setLevel(level)
        progress.done()
        if client is not None:
            client.close()
    counts = table.counts()
    if not args.quiet:
        print(f"blocksim: wrote {args.out} ({count(len(table), 'row')})", file=sys.stderr)
        found = f" ({table.resumed} found in {args.out})" if table.resumed else ""
        print(f"{path}: {count(table.total, 'run')}{found}: {counts_line(counts)}; "
              f"{time.monotonic() - started:.3f} s", file=sys.stderr)
    return cli.EXIT_OK if all(status in GOOD for status in counts) else cli.EXIT_FAILED
