"""The `blocksim` command: run, validate and inspect diagrams headless.

Exit status: 0 success, 1 failed simulation (partial results are still written),
2 bad input (missing file, invalid JSON, schema or compile error) with one clear line
on stderr and no traceback, 128 + the signal's number when Ctrl-C (130), SIGTERM (143) or
SIGHUP (129) interrupted it (the results so far are written).
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from blocksim.cli import signals
from blocksim.diagram.model import BACKENDS
from blocksim.errors import BlocksimError, SimulationError, SimulationInterrupted, shown
from blocksim.diagram.examples import diagram_path, examples, examples_dir, find_example
from blocksim.diagram.model import SOLVERS
from blocksim.files.interrupts import interrupts_deferred

# The compiler, the engine (numpy) and the block library are imported by the commands that
# use them, not here: `blocksim --help` or a mistyped command answers at once.
if TYPE_CHECKING:
    from blocksim.engine import Results
    from blocksim.cli.outputs import Output

log = logging.getLogger("blocksim")

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
# Messages a user should see on the terminal without -v (e.g. a long first compilation).
NOTICE_LOGGER = "blocksim.notice"


def _parse_set(items: Sequence[str]) -> dict[str, str]:
    overrides = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise BlocksimError(f"--set expects NAME=VALUE, got '{item}'")
        overrides[name.strip()] = value.strip()
    return overrides


def _exists(name: str) -> bool:
    try:
        return Path(name).exists()
    except OSError:  # a name too long for the file system: not a file
        return False


def _outputs(args: argparse.Namespace) -> list[Output]:
    from blocksim.cli.outputs import events_output, results_output

    outs = []
    if args.out:
        outs.append(results_output(args.out))
    if args.events:
        outs.append(events_output(args.events))
    return outs


def _summary(results: Results, source: str) -> str:
    from blocksim.cli.outputs import count, duration

    stats = results.stats
    return (f"{source}: {results.status} at t = {results.time[-1]:.10g}; "
            f"{count(len(results.time), 'row')}, {count(len(results.events), 'event')}, "
            f"{count(stats.get('steps', 0), 'step')}, {duration(stats.get('wall_time', 0.0))}")


def _deliver(results: Results, outputs: list[Output], quiet: bool) -> bool:
    """Write the outputs and say what was written; False if any write failed (the results
    then went beside, and the message says where)."""
    from blocksim.cli.outputs import write_outputs

    written, failed = write_outputs(results, outputs)
    if written and not quiet:
        print(f"blocksim: wrote {', '.join(written)}", file=sys.stderr)
    for block, what in () if quiet else results.written:  # ToFile: one line each
        print(f"blocksim: block '{shown(block)}' wrote {what}", file=sys.stderr)
    for line in failed:
        print(f"blocksim: {line}", file=sys.stderr)
    return not failed


def cmd_run(args: argparse.Namespace) -> int:
    from blocksim.api.facade import load
    from blocksim.compiler import compile_diagram
    from blocksim.engine import Simulator
    from blocksim.cli.outputs import check_outputs
    from blocksim.cli.progress import RunProgress

    path = diagram_path(args.diagram)
    outputs = _outputs(args)
    check_outputs(path, outputs)  # before anything runs: a long run is never wasted
    diagram = load(path, trust=args.trust)
    settings = diagram.simulation.replaced(stop=args.stop_time, solver=args.solver,
                                           rtol=args.rtol, atol=args.atol, step=args.step,
                                           output_interval=args.output_interval,
                                           backend=args.backend)
    model = compile_diagram(diagram, _parse_set(args.set), settings)
    check_outputs(path, outputs, model.files, args.allow_write)  # and what its blocks write
    progress = RunProgress(settings.start, settings.stop, quiet=args.quiet)
    try:
        results = Simulator(model, settings, progress=progress if progress.enabled else None,
                            strict=args.strict).run()
    except SimulationError as exc:
        progress.done()
        interrupted = isinstance(exc, SimulationInterrupted)
        if exc.results is not None and len(exc.results.time):
            try:
                with interrupts_deferred():  # the results so far are written whole
                    _deliver(exc.results, outputs, args.quiet)
            except KeyboardInterrupt:  # (said below: the run's own failure first)
                interrupted = True
        what = "interrupted" if isinstance(exc, SimulationInterrupted) else "simulation failed"
        print(f"blocksim: {diagram.source}: {what} at {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED if interrupted else EXIT_FAILED
    progress.done()
    with interrupts_deferred():  # Ctrl-C while writing: the files are finished first
        ok = _deliver(results, outputs, args.quiet)
    if not args.quiet:
        print(_summary(results, diagram.source), file=sys.stderr)
        if not outputs:
            _print_table(results)
    return EXIT_OK if ok else EXIT_FAILED


def cmd_trust(args: argparse.Namespace) -> int:
    from blocksim.user import trust
    for path, digest in trust.remember(args.files):  # all read before any is trusted
        print(f"blocksim: trusted {shown(path)} as it is now (SHA-256 {digest[:16]}..., "
              f"in {shown(trust.allow_list())})")
    return EXIT_OK


def _print_table(results: Results, max_rows: int = 12) -> None:
    """Without --out, show the last rows so a user sees something at once, and say so."""
    cols = list(results.columns())
    n = len(results.time)
    shown = min(n, max_rows)
    if shown < n:
        print(f"blocksim: the last {shown} of {n} rows (--out FILE.csv writes them all):",
              file=sys.stderr)
    print(",".join(name for name, _ in cols))
    for i in range(n - shown, n):
        print(",".join(f"{values[i]:.10g}" for _, values in cols))


def cmd_validate(args: argparse.Namespace) -> int:
    from blocksim.api.facade import load
    from blocksim.compiler import compile_diagram
    from blocksim.cli.outputs import count
    from blocksim.expressions.shadowing import shadowing_notes
    from blocksim.files import write_rule

    diagram = load(diagram_path(args.diagram), trust=args.trust)
    model = compile_diagram(diagram, _parse_set(args.set))
    write_rule.check(model.files, allow=args.allow_write)  # as `run` would refuse it
    logs = ", ".join(s.name for s in model.logged) or "none"
    print(f"{diagram.source}: ok ({count(len(model.block_ids), 'block')}, "
          f"{count(model.n_states, 'state')}, {count(model.n_zc, 'zero crossing')}, "
          f"logs: {logs})")
    for note in shadowing_notes(diagram):
        print(f"{diagram.source}: {note}")
    return EXIT_OK


def cmd_examples(args: argparse.Namespace) -> int:
    from blocksim.cli.outputs import count

    found = examples()
    if not found:
        raise BlocksimError(f"no example diagrams found (looked in {examples_dir()})")
    width = max(len(ex.name) for ex in found)
    for ex in found:
        print(f"{ex.name:{width}s}  {ex.summary}")
    print(f"\n{count(len(found), 'example')} in {examples_dir()}; "
          f"run one with: blocksim run NAME")
    return EXIT_OK


def cmd_blocks(args: argparse.Namespace) -> int:
    from blocksim.blocktypes import registry

    category = None
    types = registry.all_types()
    width = max(map(len, types), default=0)
    for name, block_type in types.items():
        if block_type.category != category:
            category = block_type.category
            print(f"{category}:")
        print(f"  {name:{width}s} {block_type.summary()}")
    return EXIT_OK


def cmd_describe(args: argparse.Namespace) -> int:
    from blocksim.blocktypes import registry

    block_type = registry.get(args.type)
    if block_type is not None:
        print(block_type.describe(), end="")
        return EXIT_OK
    if args.type.lower().endswith(".fmu"):  # what an FMU declares (nothing of it runs)
        from blocksim.fmi.describe import describe
        print(describe(args.type), end="")
        return EXIT_OK
    if args.type.endswith(".json") or find_example(args.type) or _exists(args.type):
        return _describe_diagram(diagram_path(args.type), _parse_set(args.set), args.trust)
    close = difflib.get_close_matches(args.type, registry.all_types(), n=3)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise BlocksimError(f"unknown block type '{shown(args.type)}', and no diagram file or "
                        f"example of that name ({hint}see `blocksim blocks`)")


def _describe_diagram(path: Path, overrides: dict[str, str], trust: list[str]) -> int:
    """Every block of a compiled diagram with its type and resolved sample time."""
    from blocksim.blocktypes import registry
    from blocksim.api.facade import load
    from blocksim.compiler import compile_diagram
    from blocksim.cli.outputs import count

    diagram = load(path, trust=trust)
    model = compile_diagram(diagram, overrides)
    declared = {c.get("name") for c in diagram.components}  # the file's own components
    impls = {rec.flat.path: rec.flat.impl for rec in model.runtime.structure.blocks} \
        if model.runtime is not None else {}
    shown = []
    for bid, kind, rate in zip(model.block_ids, model.block_types, model.block_rates):
        summary = getattr(impls.get(bid), "structure_summary", None)
        if summary is not None:  # a physical network: what the compiler made of it
            shown.append((bid, kind, summary()))
        elif registry.get(kind) is not None or kind in declared:  # not gates, holds
            shown.append((bid, kind, str(rate)))
    width = max(len(bid) for bid, _, _ in shown)
    type_width = max(len(kind) for _, kind, _ in shown)
    print(f"{diagram.source}: {count(len(shown), 'block')}, "
          f"{count(len(model.rates), 'discrete rate')}")
    for bid, kind, rate in shown:
        print(f"  {bid:{width}s}  {kind:{type_width}s}  {rate}")
    return EXIT_OK


_TRUST = ("run this Python file of user block types (or load this .fmu) that the diagram "
          "names, as it is now (repeat for several); an untrusted file never runs")
_ALLOW_WRITE = ("let the diagram's blocks (ToFile) write this file, or into this folder, "
                "outside the diagram's folder (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="blocksim", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="simulate a diagram (a file or an example's name)")
    run.add_argument("diagram", help="diagram file, or the name of an example")
    run.add_argument("--stop-time", type=float)
    run.add_argument("--solver", choices=SOLVERS)
    run.add_argument("--rtol", type=float)
    run.add_argument("--atol", type=float)
    run.add_argument("--step", type=float, help="fixed step size (euler, rk4)")
    run.add_argument("--output-interval", type=float)
    run.add_argument("--backend", choices=BACKENDS,
                     help="python (default) or numba: dopri5 segments in a compiled loop")
    run.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                     help="override a diagram parameter (repeatable)")
    run.add_argument("--out", help="results file (.csv or .npz)")
    run.add_argument("--events", help="event log file (.csv)")
    run.add_argument("--strict", action="store_true",
                     help="a logged signal that becomes NaN or infinite fails the run "
                          "(exit 1) instead of a warning")
    run.add_argument("-q", "--quiet", action="store_true")
    run.add_argument("--trust", action="append", default=[], metavar="FILE", help=_TRUST)
    run.add_argument("--allow-write", action="append", default=[], metavar="PATH",
                     help=_ALLOW_WRITE)
    run.set_defaults(func=cmd_run, signals=True)

    val = sub.add_parser("validate", help="load and compile a diagram without running it")
    val.add_argument("diagram", help="diagram file, or the name of an example")
    val.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    val.add_argument("--trust", action="append", default=[], metavar="FILE", help=_TRUST)
    val.add_argument("--allow-write", action="append", default=[], metavar="PATH",
                     help=_ALLOW_WRITE)
    val.set_defaults(func=cmd_validate)

    sub.add_parser("examples", help="list the example diagrams shipped with blocksim"
                   ).set_defaults(func=cmd_examples)
    sub.add_parser("blocks", help="list the block types").set_defaults(func=cmd_blocks)
    trust = sub.add_parser("trust", help="trust Python files of user block types, or FMUs, "
                           "that diagrams name, as they are now (an edit needs trusting again)")
    trust.add_argument("files", nargs="+", metavar="FILE")
    trust.set_defaults(func=cmd_trust)
    desc = sub.add_parser("describe", help="a block type's ports, parameters and documentation; "
                          "a diagram's blocks with their resolved sample times; or an .fmu's "
                          "variables and capabilities")
    desc.add_argument("type", metavar="TYPE|DIAGRAM|FMU")
    desc.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    desc.add_argument("--trust", action="append", default=[], metavar="FILE", help=_TRUST)
    desc.set_defaults(func=cmd_describe)

    gui = sub.add_parser("gui", help="open the desktop editor")
    gui.add_argument("diagram", nargs="?")
    gui.set_defaults(func=cmd_gui)

    render = sub.add_parser("render", help="draw a diagram as the editor shows it (PNG or SVG)")
    render.add_argument("diagram", help="diagram file, or the name of an example")
    render.add_argument("--out", required=True, help="picture file (.png or .svg)")
    render.add_argument("--level", default="",
                        help="draw a subsystem's inside instead, e.g. part2 or part2/inner")
    render.add_argument("--trust", action="append", default=[], metavar="FILE", help=_TRUST)
    render.set_defaults(func=cmd_render)

    from blocksim.sweeps.command import add_parser as add_sweep_parser  # (its own package)
    add_sweep_parser(sub)
    from blocksim.cli.linearize import add_parser as add_linearize_parser
    add_linearize_parser(sub)
    from blocksim.cli.import_cmd import add_parser as add_import_parser  # Simulink models
    add_import_parser(sub)
    from blocksim.export.command import add_parser as add_export_parser
    add_export_parser(sub)
    return parser


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from blocksim.gui.window.app import main as gui_main  # only the editor imports Qt
    except ImportError as exc:
        raise BlocksimError(f"the editor is not available: {exc}") from None
    return gui_main([args.diagram] if args.diagram else [])


def cmd_render(args: argparse.Namespace) -> int:
    if not str(args.out).lower().endswith((".png", ".svg")):
        raise BlocksimError(f"{args.out}: the picture must be a .png or .svg file")
    from blocksim.api.facade import load
    from blocksim.cli.outputs import Output, check_outputs

    path = diagram_path(args.diagram)
    check_outputs(path, [Output("--out", Path(args.out), None, None)])
    diagram = load(path, trust=args.trust)
    from blocksim.gui.canvas.render import render_diagram  # only the editor imports Qt
    level = tuple(part for part in args.level.split("/") if part)
    try:
        written = render_diagram(diagram, args.out, level=level)
    except KeyError as exc:
        raise BlocksimError(f"{diagram.source}: no subsystem {exc} at level "
                            f"'{args.level}'") from None
    except OSError as exc:  # render's messages name the file
        raise BlocksimError(str(exc)) from None
    except ValueError as exc:
        raise BlocksimError(f"cannot write {args.out}: {exc}") from None
    print(f"blocksim: wrote {written}", file=sys.stderr)
    return EXIT_OK


class _TerminalFormatter(logging.Formatter):
    """`blocksim: message` for notices, `blocksim: warning: message` for warnings; with -v,
    the logger's name too."""

    def __init__(self, verbose: bool):
        super().__init__()
        self.verbose = verbose

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and self.verbose:
            message += "\n" + self.formatException(record.exc_info)
        if self.verbose:
            return f"blocksim: {record.levelname.lower()} {record.name}: {message}"
        if record.levelno >= logging.WARNING:
            return f"blocksim: {record.levelname.lower()}: {message}"
        return f"blocksim: {message}"


@contextlib.contextmanager
def _terminal_logging(verbose: bool, quiet: bool) -> Iterator[None]:
    """Warnings always reach the terminal, notices unless -q, everything with -v; the
    logging set-up of the caller comes back afterwards (`main` called in a process that
    goes on, such as a test or a notebook, keeps no handler on a stream it may close)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_TerminalFormatter(verbose))
    root, notice = logging.getLogger(), logging.getLogger(NOTICE_LOGGER)
    saved = root.handlers[:], root.level, notice.level
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    notice.setLevel(logging.WARNING if quiet else logging.INFO)
    try:
        yield
    finally:
        root.handlers[:], level, notice_level = saved
        root.setLevel(level)
        notice.setLevel(notice_level)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with _terminal_logging(args.verbose, getattr(args, "quiet", False)):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The command's exit status. SIGTERM and SIGHUP end a command that computes results
    (run, sweep: `signals=True` on its parser) as Ctrl-C does, with 128 + the signal's
    number (`blocksim.cli.signals`); the others (the editor among them) keep the default."""
    interrupts = signals.begin(getattr(args, "signals", False))
    try:
        with interrupts:
            code = args.func(args)
    except BlocksimError as exc:
        print(f"blocksim: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        by = f" by {interrupts.name}" if interrupts.received else ""
        print(f"blocksim: interrupted{by}", file=sys.stderr)
        code = EXIT_INTERRUPTED
    except BrokenPipeError:  # `blocksim run d.json | head`: the reader has gone, stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    return interrupts.exit_status if code == EXIT_INTERRUPTED else code


if __name__ == "__main__":
    sys.exit(main())
