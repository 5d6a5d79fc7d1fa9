"""Time the desktop editor on 1,000-block diagrams: open, pan, zoom to fit, render.

    python benchmarks/editor.py [--blocks 1000] [--steps 60] [--repeats 3] [--moves 20]
                                [--out docs/editor-performance.md] [--show]

Issue 4's acceptance: "opening a diagram of 1,000 blocks takes under 2 s, and panning it
stays fluid". The diagram is generated (chains of damped oscillators with limiters,
switches, scopes and couplings between chains, see `generate`) and opened twice in the real
main window exactly as File > Open does: (a) with the layout saved in the file, as after a
save from the editor, and (b) without layout, so the automatic layout runs on open. An open
is timed from the call until the scene is populated, zoomed to fit and one frame painted.
Panning moves the view in `--steps` steps diagonally across the diagram at 100 % and at an
overview zoom, forcing a full repaint of the viewport at each step (more than Qt repaints
when a user drags, so the numbers are an upper bound). Before the pans, `--moves` blocks
are moved one by one as a mouse drag commits a move (one undo command, re-routing the wires
the move spoils), each timed until the scene shows it. The routing-quality check
(`blocksim.gui.canvas.routecheck`) is reported on the open diagrams after those moves and
on every example in diagrams/, with each example's crossings and bends next to those of
the layout before the pendulum work (see editor_quality). Runs offscreen unless `--show`.
Writes docs/editor-performance.md (generated: do not edit by hand).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import logging
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from editor_quality import (  # noqa: E402
    FAULT_KEYS,
    QUALITY_KEYS,
    example_quality,
    layout_section,
    quality_cells,
    routing_quality,
)
OPEN_TARGET = 2.0  # seconds (issue 4)
FRAME_BUDGET = 1 / 60  # seconds: a frame of a 60 Hz display
PAN_ZOOMS = (1.0, 0.4)  # working zoom and an overview where far more items show

log = logging.getLogger("benchmarks.editor")


# ---------------------------------------------------------------- the diagram
def generate(n_blocks: int = 1000, per_chain: int | None = None):
    """A diagram of exactly `n_blocks` blocks and no layout, built like a real model.

    Chains of second-order systems (Sum, Gain, two Integrators, damping and spring
    feedback Gains, a Saturation, a Switch with a Constant, a Scope: 10 blocks each),
    each driven by the one before it and every third one also by its neighbour chain, so
    there are feedback loops, fan-out, multi-input blocks and wires crossing between
    chains. Sources start the chains; extra Scopes on positions make up the exact count.
    """
    from blocksim.diagram.format import diagram_from_dict

    modules = max(1, (n_blocks - 1) // 11)
    chains = max(1, round(math.sqrt(modules)))
    while modules * 10 + chains > n_blocks and modules > 1:
        modules -= 1
    per_chain = per_chain or math.ceil(modules / chains)
    blocks: list[dict] = []
    wires: list[dict] = []
    positions: dict[tuple[int, int], str] = {}

    def add(block_id: str, block_type: str, **params) -> None:
        blocks.append({"id": block_id, "type": block_type, "params": params})

    def wire(src: str, dst: str) -> None:
        wires.append({"src": src, "dst": dst})

    made = 0
    for c in range(chains):
        if made >= modules:
            break
        source = f"src{c}"
        if c % 2:
            add(source, "Sine", frequency=0.5 + 0.1 * c)
        else:
            add(source, "Step", time=0.1 * c)
        drive = f"{source}.y"
        for m in range(per_chain):
            if made >= modules:
                break
            made += 1
            p = f"c{c}m{m}_"
            coupled = positions.get((c - 1, m - 1)) if m % 3 == 0 else None
            add(p + "sum", "Sum", signs="+--+" if coupled else "+--")
            add(p + "mass", "Gain", k="1 / m")
            add(p + "v", "Integrator", x0=0)
            add(p + "x", "Integrator", x0=0)
            add(p + "damp", "Gain", k=0.4)
            add(p + "spring", "Gain", k=2.0)
            add(p + "lim", "Saturation", lower=-1, upper=1)
            add(p + "off", "Constant", value=0)
            add(p + "sw", "Switch", threshold=0)
            add(p + "scope", "Scope")
            for src, dst in ((drive, "sum.u1"), ("sum.y", "mass.u"), ("mass.y", "v.u"),
                             ("v.y", "x.u"), ("v.y", "damp.u"), ("damp.y", "sum.u2"),
                             ("x.y", "spring.u"), ("spring.y", "sum.u3"), ("x.y", "lim.u"),
                             ("lim.y", "sw.u1"), ("v.y", "sw.u2"), ("off.y", "sw.u3"),
                             ("sw.y", "scope.u")):
                wire(src if src == drive else p + src, p + dst)
            if coupled:
                wire(coupled, p + "sum.u4")
            positions[(c, m)] = p + "x.y"
            drive = p + "sw.y"
    taps = list(positions.values())
    k = 0
    while len(blocks) < n_blocks:
        add(f"probe{k}", "Scope")
        wire(taps[(k * 7) % len(taps)], f"probe{k}.u")
        k += 1
    data = {"format": "blocksim", "version": 1, "parameters": {"m": 1.0},
            "simulation": {"stop": 10.0}, "blocks": blocks, "wires": wires}
    return diagram_from_dict(data, source=f"<editor benchmark, {n_blocks} blocks>")


def write_cases(folder: Path, n_blocks: int) -> dict[str, Path]:
    """(a) the diagram with its layout saved, as after a save from the editor; (b) without."""
    from blocksim.diagram.format import save_diagram
    from blocksim.gui.layout.autolayout import layout_diagram

    plain = generate(n_blocks)
    paths = {"without layout": folder / f"editor_{n_blocks}_plain.json",
             "with saved layout": folder / f"editor_{n_blocks}_laid_out.json"}
    save_diagram(plain, paths["without layout"])
    layout_diagram(plain)
    save_diagram(plain, paths["with saved layout"])
    return paths


# ---------------------------------------------------------------- measuring
@dataclass
class Frames:
    """Frame times of one pan, in seconds."""

    zoom: float
    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def p95(self) -> float:
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]

    @property
    def worst(self) -> float:
        return max(self.times)


@dataclass
class Case:
    """Everything measured on one diagram file."""

    name: str
    blocks: int
    wires: int
    opens: list[float] = field(default_factory=list)
    cpu_opens: list[float] = field(default_factory=list)  # CPU seconds of the same opens
    parts: dict[str, float] = field(default_factory=dict)  # load, layout, ... (outside)
    pans: list[Frames] = field(default_factory=list)
    fit: float = 0.0
    render: float = 0.0
    render_size: str = ""
    export: float = 0.0
    moves: list[float] = field(default_factory=list)  # seconds per block move
    quality: dict[str, int] = field(default_factory=dict)  # routecheck after the moves

    @property
    def open(self) -> float:
        return statistics.median(self.opens)


def make_app(show: bool):
    """The QApplication: offscreen unless the window should be seen."""
    if not show:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from blocksim.gui.window.qtcompat import protect_none

    protect_none()
    return QApplication.instance() or QApplication(["blocksim-editor-benchmark"])


def open_window(path: Path, cpu: list[float] | None = None):
    """Open `path` in a fresh, shown main window as File > Open does; (window, seconds).
    The process's CPU seconds for the same span are appended to `cpu` if given: on a
    machine busy with other work they say what the open costs better than the clock."""
    from PySide6.QtWidgets import QApplication

    from blocksim.gui.window.mainwindow import MainWindow

    window = MainWindow()
    window.show()
    QApplication.processEvents()
    started, cpu_started = time.perf_counter(), time.process_time()
    if not window.files.open_path(path, ask=False):
        raise RuntimeError(f"cannot open {path}")
    QApplication.processEvents()  # the deferred zoom to fit
    window.canvas.view.viewport().repaint()
    if cpu is not None:
        cpu.append(time.process_time() - cpu_started)
    return window, time.perf_counter() - started


def close_window(window) -> None:
    from PySide6.QtWidgets import QApplication

    window.doc.undo_stack.clear()
    window.close()
    window.deleteLater()
    QApplication.processEvents()


def pan(view, zoom: float, steps: int) -> Frames:
    """Move the view diagonally across the diagram in `steps` steps at `zoom`; each step
    waits for pending events and repaints the whole viewport."""
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    view.resetTransform()
    view.scale(zoom, zoom)
    rect = view.scene().diagram_rect()
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    x0, y0 = rect.left() + seen.width() / 2, rect.top() + seen.height() / 2
    x1, y1 = max(x0, rect.right() - seen.width() / 2), max(y0, rect.bottom() - seen.height() / 2)
    view.centerOn(QPointF(x0, y0))
    QApplication.processEvents()
    view.viewport().repaint()
    frames = Frames(zoom)
    for i in range(1, steps + 1):
        f = i / steps
        started = time.perf_counter()
        view.centerOn(QPointF(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f))
        QApplication.processEvents()
        view.viewport().repaint()
        frames.times.append(time.perf_counter() - started)
    return frames


def move_blocks(window, count: int, seed: int = 13) -> list[float]:
    """Move `count` blocks, one at a time, to free spots nearby as a drag commits them;
    seconds per move until the scene has followed (re-routing included)."""
    import random

    from PySide6.QtWidgets import QApplication

    from blocksim.gui.canvas.routecheck import draw
    from blocksim.gui.document.commands import ChangeLayout

    doc = window.doc
    rng = random.Random(seed)
    rects = draw(doc.diagram).rects
    times = []
    for block in rng.sample(doc.diagram.blocks, min(count, len(doc.diagram.blocks))):
        spot = _free_spot(rects, block.id, rng)
        if spot is None:
            continue
        layout = {**block.layout, "x": block.layout["x"] + spot[0],
                  "y": block.layout["y"] + spot[1]}
        started = time.perf_counter()
        doc.push(ChangeLayout(doc, (), {block.id: layout}, text=f"Move {block.id}"))
        QApplication.processEvents()
        window.canvas.view.viewport().repaint()
        times.append(time.perf_counter() - started)
        x, y, w, h = rects[block.id]
        rects[block.id] = (x + spot[0], y + spot[1], w, h)
    return times


def _free_spot(rects, block_id: str, rng, room: float = 60.0):
    """A move of up to 150 px leaving `room` to every other block, or None."""
    x, y, w, h = rects[block_id]
    near = [r for other, r in rects.items() if other != block_id
            and abs(r[0] - x) < 600 and abs(r[1] - y) < 600]
    for _ in range(40):
        dx = rng.choice((-1, 1)) * rng.randrange(2, 16) * 10.0
        dy = rng.choice((-1, 1)) * rng.randrange(2, 16) * 10.0
        if all(x + dx + w + room < ox or ox + ow + room < x + dx
               or y + dy + h + room < oy or oy + oh + room < y + dy
               for ox, oy, ow, oh in near):
            return dx, dy
    return None


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def fit_time(view) -> float:
    def run():
        view.fit()
        view.viewport().repaint()
    return timed(run)


def render_time(scene, longest: int = 4000) -> tuple[float, str]:
    """Draw the whole open scene into one image (at most `longest` pixels a side)."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QImage, QPainter

    source = scene.diagram_rect().adjusted(-20, -20, 20, 20)
    scale = min(1.0, longest / max(source.width(), source.height()))
    image = QImage(int(source.width() * scale), int(source.height() * scale),
                   QImage.Format_ARGB32)

    def run():
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        scene.render(painter, QRectF(image.rect()), source, Qt.KeepAspectRatio)
        painter.end()
    return timed(run), f"{image.width()} × {image.height()} px"


def export_time(path: Path, folder: Path, longest: int = 4000) -> float:
    """File > Export Picture: a new scene of the file's diagram drawn to a PNG."""
    from blocksim.diagram.format import load_diagram
    from blocksim.gui.layout.autolayout import layout_diagram
    from blocksim.gui.canvas.render import render_diagram

    diagram = load_diagram(path)
    layout_diagram(diagram)  # the editor's document is laid out before an export
    xs = [b.layout["x"] for b in diagram.blocks] + [b.layout["y"] for b in diagram.blocks]
    scale = min(2.0, longest / max(max(xs) - min(xs) + 200, 1.0))
    return timed(lambda: render_diagram(diagram, folder / "export.png", scale=scale))


def measure(name: str, path: Path, steps: int, repeats: int, moves: int = 0) -> Case:
    """Open `path` `repeats` times (each in a new window), then move blocks, pan, fit and
    render."""
    import copy

    from blocksim.diagram.format import load_diagram
    from blocksim.gui.layout.autolayout import layout_diagram, needs_layout

    diagram = load_diagram(path)
    case = Case(name, len(diagram.blocks), len(diagram.wires))
    case.parts["read and check the file"] = timed(lambda: load_diagram(path))
    if needs_layout(diagram):
        trial = copy.deepcopy(diagram)  # the copy is not part of the layout's time
        case.parts["automatic layout"] = timed(lambda: layout_diagram(trial))
    window = None
    for _ in range(repeats):
        if window is not None:
            close_window(window)
        window, seconds = open_window(path, case.cpu_opens)
        case.opens.append(seconds)
        log.info("%s: opened in %.3f s", name, seconds)
    view = window.canvas.view
    if moves:
        case.moves = move_blocks(window, moves)
        log.info("%s: %d moves, median %.1f ms, max %.1f ms", name, len(case.moves),
                 statistics.median(case.moves) * 1e3, max(case.moves) * 1e3)
    case.quality = routing_quality(window.doc.diagram)
    for zoom in PAN_ZOOMS:
        frames = pan(view, zoom, steps)
        case.pans.append(frames)
        log.info("%s: pan at %.0f %%: median %.2f ms, p95 %.2f ms, max %.2f ms", name,
                 zoom * 100, frames.median * 1e3, frames.p95 * 1e3, frames.worst * 1e3)
    case.fit = fit_time(view)
    case.render, case.render_size = render_time(window.canvas.scene)
    close_window(window)
    case.export = export_time(path, path.parent)
    log.info("%s: fit %.3f s, render %.3f s, export %.3f s", name, case.fit, case.render,
             case.export)
    return case


# ---------------------------------------------------------------- report
def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def document(cases: list[Case], args: argparse.Namespace,
             examples: list[tuple[str, int, int, dict[str, int], float]] = ()) -> str:
    from PySide6 import __version__ as pyside_version
    from PySide6.QtGui import QGuiApplication

    import blocksim

    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    command = "python benchmarks/editor.py" + (
        f" --blocks {args.blocks}" if args.blocks != 1000 else "")
    screen = QGuiApplication.primaryScreen()
    lines = ["# Editor performance", "",
             "<!-- Generated by `python benchmarks/editor.py`; do not edit by hand. -->", "",
             f"Generated by `{command}` on {now}. Do not edit by hand: rerun the script.", "",
             f"- Machine: `{platform.platform()}`, {os.cpu_count()} CPUs",
             f"- Python {platform.python_version()}, PySide6 {pyside_version}, "
             f"blocksim {blocksim.__version__}, Qt platform "
             f"`{QGuiApplication.platformName()}`"
             + (f", screen {screen.size().width()} × {screen.size().height()}" if screen else ""),
             f"- Main window 1280 × 800; opens are the median of {args.repeats}, each in a "
             "new window; all numbers from one run on one machine.", "",
             "## Targets", "", "| target | measured | met |", "|---|---:|---|"]
    for case in cases:
        lines.append(f"| open {case.blocks:,} blocks {case.name} in under "
                     f"{OPEN_TARGET:.0f} s | {case.open:.2f} s | "
                     f"{'yes' if case.open < OPEN_TARGET else '**no**'} |")
    for case in cases:
        for frames in case.pans:
            lines.append(f"| pan {case.name} at {frames.zoom:.0%}: median frame under "
                         f"{ms(FRAME_BUDGET)} | {ms(frames.median)} | "
                         f"{'yes' if frames.median < FRAME_BUDGET else '**no**'} |")
    for case in cases:
        faults = sum(case.quality.get(k, 0) for k in FAULT_KEYS)
        lines.append(f"| {case.name}: no wire through a block or its label, on another "
                     f"net's line, touching one or doubling back | {faults} | "
                     f"{'yes' if faults == 0 else '**no**'} |")
    lines += ["", "## Opening", "",
              "From File > Open's call until the scene is populated, zoomed to fit and one "
              "frame painted. The parts are timed separately on the same file. CPU: the "
              "process's CPU time over the same opens (median), which a machine busy with "
              "other work inflates far less than the clock.", "",
              "| diagram | blocks | wires | open (median) | all opens | CPU | parts |",
              "|---|---:|---:|---:|---:|---:|---|"]
    for case in cases:
        parts = "; ".join(f"{k} {v:.2f} s" for k, v in case.parts.items())
        opens = ", ".join(f"{s:.2f}" for s in case.opens)
        cpu = f"{statistics.median(case.cpu_opens):.2f} s" if case.cpu_opens else "-"
        lines.append(f"| {case.name} | {case.blocks:,} | {case.wires:,} | {case.open:.2f} s "
                     f"| {opens} s | {cpu} | {parts} |")
    lines += ["", "## Panning", "",
              f"{args.steps} steps diagonally across the diagram; each step moves the view, "
              "processes pending events and repaints the whole viewport (Qt itself would "
              "repaint only the uncovered strip, so these are upper bounds).", "",
              "| diagram | zoom | median | 95th percentile | max | fps (median) |",
              "|---|---:|---:|---:|---:|---:|"]
    for case in cases:
        for f in case.pans:
            lines.append(f"| {case.name} | {f.zoom:.0%} | {ms(f.median)} | {ms(f.p95)} | "
                         f"{ms(f.worst)} | {1 / f.median:.0f} |")
    lines += ["", "## Moving blocks", "",
              "Blocks picked at random (fixed seed) are moved one at a time by up to 150 px "
              "to a spot that leaves 60 px to every other block, each as one Move command "
              "like a finished mouse drag: the wires the move spoils are re-routed in the "
              "same command. Timed from the push until the scene has followed and one "
              "frame is painted; the pans above were made after these moves.", "",
              "| diagram | moves | median | max |", "|---|---:|---:|---:|"]
    for case in cases:
        if case.moves:
            lines.append(f"| {case.name} | {len(case.moves)} | "
                         f"{ms(statistics.median(case.moves))} | {ms(max(case.moves))} |")
    lines += ["", "## Wire routing quality", "",
              "The routing-quality check (`blocksim/gui/canvas/routecheck.py`) over the "
              "routes the canvas draws, every level summed: wires through a block, wires "
              "over a block's label, pairs of wires of different nets on one line, pairs "
              "touching at a bend or end or in line with a short gap (all look joined), "
              "wires doubling back or crossing themselves, crossings of different nets, "
              "bends. The first five must be zero.", "",
              "| diagram | blocks | wires | " + " | ".join(QUALITY_KEYS) + " |",
              "|---|---:|---:|" + "---:|" * len(QUALITY_KEYS)]
    for case in cases:
        lines.append(f"| generated, {case.name}, after the moves | {case.blocks:,} | "
                     f"{case.wires:,} | {quality_cells(case.quality)} |")
    for name, blocks, wires, quality, _ in examples:
        lines.append(f"| example {name} | {blocks} | {wires} | {quality_cells(quality)} |")
    lines += layout_section(examples)
    lines += ["", "## Zoom to fit and whole-picture render", "",
              "Zoom to fit: View > Fit to View and one repaint, every item visible (texts "
              "are left out below 20 %, where they would be 2 px high). Render: the whole "
              "open scene drawn into one image. Export: File > Export Picture, a new "
              "uncached scene drawn to a PNG of at most 4000 px a side, encoding included.",
              "", "| diagram | zoom to fit | render | image | export (PNG) |",
              "|---|---:|---:|---|---:|"]
    for case in cases:
        lines.append(f"| {case.name} | {ms(case.fit)} | {ms(case.render)} | "
                     f"{case.render_size} | {ms(case.export)} |")
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def private_settings(folder: Path):
    """Recent files and autosaves of the benchmark's windows go to `folder`, not the
    user's; the environment is restored afterwards."""
    saved = {key: os.environ.get(key) for key in ("BLOCKSIM_SETTINGS", "BLOCKSIM_AUTOSAVE_DIR")}
    os.environ["BLOCKSIM_SETTINGS"] = str(folder / "settings.ini")
    os.environ["BLOCKSIM_AUTOSAVE_DIR"] = str(folder / "autosave")
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(args: argparse.Namespace) -> list[Case]:
    make_app(args.show)
    with tempfile.TemporaryDirectory() as tmp, private_settings(Path(tmp)):
        warm = Path(tmp) / "warm"
        warm.mkdir()
        paths = write_cases(warm, 30)  # imports and the block registry
        close_window(open_window(paths["with saved layout"])[0])
        paths = write_cases(Path(tmp), args.blocks)
        return [measure(name, paths[name], args.steps, args.repeats, args.moves)
                for name in ("with saved layout", "without layout")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=60, help="pan steps")
    parser.add_argument("--repeats", type=int, default=3, help="opens of each diagram")
    parser.add_argument("--moves", type=int, default=20, help="block moves on each diagram")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "editor-performance.md")
    parser.add_argument("--show", action="store_true", help="use the real display")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    cases = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(document(cases, args, example_quality()), encoding="utf-8")
    log.info("wrote %s", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
