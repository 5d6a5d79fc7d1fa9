"""An editor process for the autosave tests: `python autosave_child.py DIAGRAM K`.

It starts as `blocksim-gui` does (offering recovery, which it declines and reports on
stdout as "offered: ..."), opens DIAGRAM, sets block y1_rate's gain to K, autosaves, prints
"ready <autosave file>" and runs until killed.
"""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from blocksim.gui.window import app  # noqa: E402

from blocksim.gui.window import dialogs
from blocksim.gui.document.commands import SetParams  # noqa: E402


def main() -> None:
    diagram, k = sys.argv[1], float(sys.argv[2])
    qapp = QApplication([])

    def decline(parent, texts):
        for text in texts:
            print(f"offered: {text}", flush=True)
        return [False] * len(texts)
    dialogs.ask_recover = decline
    window = app.create_window(diagram)
    window.doc.push(SetParams(window.doc, (), "y1_rate", {"k": k}))
    assert window.autosaver.tick()
    print(f"ready {window.autosaver.file}", flush=True)
    qapp.exec()


if __name__ == "__main__":
    main()
