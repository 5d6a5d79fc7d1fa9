"""GUI tests run without a display."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

try:  # PySide6 6.12 on Python < 3.12 leaks references to None (see blocksim/gui/qtcompat.py)
    from blocksim.gui.qtcompat import protect_none
    protect_none()
except ImportError:  # no PySide6: the GUI tests skip themselves
    pass
