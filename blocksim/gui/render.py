"""Pictures of diagrams (PNG, SVG) drawn by the editor's own scene and items.

Used by `blocksim render DIAGRAM --out FILE` and by tests: what you get is exactly what the
editor shows, without the grid. Works headless (the offscreen Qt platform is chosen when
there is no display).
"""
from __future__ import annotations

import copy
import logging
import os
import sys
from pathlib import Path

from blocksim.model import Diagram

log = logging.getLogger(__name__)

SCALE = 2.0  # PNG pixels per canvas unit
MARGIN = 20.0


def ensure_app():
    """The running QApplication, or a new one (offscreen when there is no display)."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from blocksim.gui.qtcompat import protect_none

    protect_none()
    return QApplication.instance() or QApplication(["blocksim-render"])


def render_diagram(diagram: Diagram, out: str | os.PathLike[str],
                   level: tuple[str, ...] = (), scale: float = SCALE) -> Path:
    """Draw one level of `diagram` to a .png or .svg file; returns the path written."""
    ensure_app()
    from PySide6.QtCore import QRectF, QSize, Qt
    from PySide6.QtGui import QColor, QImage, QPainter

    from blocksim.gui.document import DiagramDocument
    from blocksim.gui.scene import DiagramScene

    out = Path(out)
    doc = DiagramDocument(copy.deepcopy(diagram))  # placing blocks must not touch the caller's
    doc.level(tuple(level))  # KeyError if there is no such subsystem
    scene = DiagramScene(doc, cache_items=False)  # vectors in an SVG, not cached pixmaps
    if level:
        scene.set_level(tuple(level))
    source = scene.diagram_rect()
    if source.isEmpty():
        source = QRectF(0, 0, 200, 100)
    source = source.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
    suffix = out.suffix.lower()
    if suffix == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        generator = QSvgGenerator()
        generator.setFileName(str(out))
        generator.setSize(QSize(int(source.width()), int(source.height())))
        generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
        generator.setTitle(diagram.path.name if diagram.path else "blocksim diagram")
        generator.setDescription(diagram.description or "drawn by blocksim")
        painter = QPainter(generator)
        painter.fillRect(QRectF(0, 0, source.width(), source.height()), QColor("white"))
        scene.render(painter, QRectF(0, 0, source.width(), source.height()), source)
        painter.end()
    elif suffix == ".png":
        image = QImage(int(source.width() * scale), int(source.height() * scale),
                       QImage.Format_ARGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        scene.render(painter, QRectF(image.rect()), source, Qt.KeepAspectRatio)
        painter.end()
        if not image.save(str(out)):
            raise OSError(f"cannot write {out}")
    else:
        raise ValueError(f"{out}: the picture must be a .png or .svg file")
    scene.clear_items()
    log.info("rendered %s", out)
    return out
