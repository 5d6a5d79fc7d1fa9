"""Make the README's pictures of the scopes and the Data Inspector from the real editor.

Run on a display (e.g. under Xvfb) from the repository root:
    python docs/make_scope_images.py [--wait SECONDS]
It opens the bouncing ball, runs it, places two cursors on both scopes (side by side) and
saves docs/images/editor_ball_cursors.png; then runs it again with mu = 0.7 and saves the
Data Inspector comparing the two runs' heights (with cursors) as docs/images/data_inspector.png.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication

from blocksim.diagram.examples import examples_dir
from blocksim.gui.document.commands import SetDiagramParameters
from blocksim.gui.window import app

IMAGES = Path(__file__).parent / "images"


def settle(seconds: float) -> None:
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def run(window) -> object:
    window.actions_.run.trigger()
    began = time.perf_counter()
    while window.sim.runner.is_running():
        settle(0.05)
        if time.perf_counter() - began > 120:
            raise RuntimeError("the run did not end")
    settle(0.3)
    return window.sim.scopes.results


def apexes(results) -> np.ndarray:
    """Times of the ball's highest points (v changes sign from + to -)."""
    v = results["v"]
    return results.time[1:][(v[:-1] > 0) & (v[1:] <= 0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=1.0, help="seconds to let it paint")
    args = parser.parse_args()
    QApplication.instance() or QApplication([])
    folder = Path(tempfile.mkdtemp())
    path = folder / "bouncing_ball.json"
    shutil.copy(examples_dir() / "bouncing_ball.json", path)
    window = app.create_window(str(path))
    window.resize(1600, 1000)
    window.show()
    window.canvas.view.fit()
    panels = window.panels
    scopes = window.sim.scopes
    window.resizeDocks([panels.docks["scopes"]], [470], Qt.Vertical)
    results = run(window)
    scopes.side_by_side.setChecked(True)
    t1, t2 = apexes(results)[:2]
    for view in scopes.views.values():
        view.tools.cursors.setChecked(True)
        view.cursors.place(t1, t2)
        view.viewbox.setXRange(0, 12, padding=0.01)
    settle(args.wait)
    IMAGES.mkdir(exist_ok=True)
    window.grab().save(str(IMAGES / "editor_ball_cursors.png"))
    params = dict(window.doc.diagram.parameters, mu=0.7)
    window.doc.push(SetDiagramParameters(window.doc, (), params))
    run(window)
    window.actions_.data_inspector.trigger()
    inspector = panels.data_inspector
    inspector.set_checked(1, "x")
    inspector.set_checked(2, "x")
    inspector.viewbox.setXRange(0, 12, padding=0.01)
    inspector.cursor_button.setChecked(True)
    inspector.cursors.place(t1, t2)  # run 1's first two apexes, read on both runs
    settle(args.wait)
    window.grab().save(str(IMAGES / "data_inspector.png"))
    window.doc.undo_stack.setClean()
    window.close()
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
