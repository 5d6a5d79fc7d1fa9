"""Make the README's picture of the rotating pendulum as the automatic layout draws it.

Run on a display (e.g. under Xvfb) from the repository root:
    python docs/make_pendulum_image.py [--wait SECONDS] [--diagram NAME]
It opens diagrams/rotating_pendulum.json (which has no layout, so the automatic layout and
the wire router place everything), hides the docks, zooms to fit and saves
docs/images/editor_pendulum.png. Settings and autosaves go to a temporary folder.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

IMAGES = Path(__file__).parent / "images"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=1.0, help="seconds to let it paint")
    parser.add_argument("--diagram", default="rotating_pendulum", help="example to draw")
    parser.add_argument("--out", type=Path, default=IMAGES / "editor_pendulum.png")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    os.environ["BLOCKSIM_SETTINGS"] = str(folder / "settings.ini")
    os.environ["BLOCKSIM_AUTOSAVE_DIR"] = str(folder / "autosave")
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from blocksim.diagram.examples import examples_dir
    from blocksim.gui.window import app

    QApplication.instance() or QApplication([])
    path = folder / f"{args.diagram}.json"
    shutil.copy(examples_dir() / f"{args.diagram}.json", path)
    window = app.create_window(str(path))
    for dock in window.panels.docks.values():
        dock.hide()
    window.resize(1600, 1000)
    loop = QEventLoop()
    QTimer.singleShot(int(args.wait * 1000), loop.quit)
    loop.exec()
    window.canvas.view.fit()
    QTimer.singleShot(int(args.wait * 1000), loop.quit)
    loop.exec()
    args.out.parent.mkdir(exist_ok=True)
    window.grab().save(str(args.out))
    window.doc.undo_stack.setClean()
    window.close()
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
