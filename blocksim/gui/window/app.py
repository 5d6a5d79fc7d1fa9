"""Entry point of the desktop editor: `blocksim gui [DIAGRAM]` and `blocksim-gui [DIAGRAM]`."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Sequence

from blocksim.diagram.examples import find_example

log = logging.getLogger(__name__)


_extra_windows: list = []  # windows opened for further recovered work, alive until closed


def create_window(diagram: str | None = None):
    """A shown main window, after offering recovery of autosaved work, with `diagram` (a
    file, or a shipped example's name: opened as an untitled copy, as from the menu) open.

    Work left by several crashed editors opens in one window each."""
    from blocksim.gui.window.mainwindow import MainWindow

    window = MainWindow()
    window.show()
    recovered = window.offer_recovery(new_window=_extra_window)
    if diagram and not recovered:
        example = None if _exists(diagram) else find_example(diagram)
        if example is not None:  # `blocksim gui bouncing_ball`, as `blocksim run` takes it
            window.files.open_example(example)
        else:
            window.files.open_path(diagram, ask=False)
    return window


def _exists(name: str) -> bool:
    try:
        return Path(name).exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def extra_windows() -> list:
    """The windows `create_window` opened for recovered work besides its own."""
    return list(_extra_windows)


def _extra_window():
    from PySide6.QtCore import Qt

    from blocksim.gui.window.mainwindow import MainWindow

    window = MainWindow()
    window.setAttribute(Qt.WA_DeleteOnClose)
    key = id(window)
    window.destroyed.connect(lambda *_: _forget(key))
    _extra_windows.append(window)
    window.show()
    return window


def _forget(key: int) -> None:
    _extra_windows[:] = [w for w in _extra_windows if id(w) != key]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the editor until its last window closes; `argv` without the program name.

    Exit status 2, with one line on stderr, when no window can be opened (the gui extra not
    installed, no display, a system library missing for Qt's platform plugin)."""
    args = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="blocksim-gui", description="blocksim diagram editor")
    parser.add_argument("diagram", nargs="?", help="a diagram file to open")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    options = parser.parse_args(args)
    logging.basicConfig(level=logging.INFO if options.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    from blocksim.gui import extra
    from blocksim.gui.window import display

    try:
        extra.require("the editor")
    except extra.GuiExtraMissing as exc:
        print(f"blocksim: {exc}", file=sys.stderr)
        return display.EXIT_NO_DISPLAY
    problem = display.missing_display()
    if problem:
        print(f"blocksim: {problem}", file=sys.stderr)
        return display.EXIT_NO_DISPLAY
    from PySide6.QtWidgets import QApplication

    from blocksim.gui.window import gcguard

    from blocksim.gui.window import qtmessages
    from blocksim.gui.window.qtcompat import protect_none

    qtmessages.install()  # Qt's warnings to logging: quiet unless -v
    protect_none()
    with qtmessages.fatal_hook(display.explain_platform_failure):
        app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "blocksim"])
    app.setApplicationName("blocksim")
    app.setOrganizationName("blocksim")
    with gcguard.holding():  # garbage collection on the GUI thread only, while the editor runs
        window = create_window(options.diagram)
        code = app.exec()
        del window
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
