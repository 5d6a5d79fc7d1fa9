"""Pictures of diagrams (PNG, SVG) drawn by the editor's own scene and items.

Used by `blocksim render DIAGRAM --out FILE`, the editor's Export Picture and tests: what you
get is exactly what the editor shows, without the grid. Works headless (on Linux the offscreen
Qt platform is used). Pictures are written atomically.
"""
from __future__ import annotations

import copy
import logging
import math
import os
import sys
from pathlib import Path

from blocksim.files.safe import atomic_write
from blocksim.gui.canvas.geometry import has_position
from blocksim.diagram.model import Diagram

log = logging.getLogger(__name__)

SCALE = 2.0  # PNG pixels per canvas unit
MARGIN = 20.0
MAX_PNG_SIDE = 1_000_000  # libpng refuses wider or taller images
MAX_PNG_PIXELS = 250_000_000  # 1 GB of pixels in memory: beyond this, SVG is the format


def ensure_app():
    """The running QApplication, or a new one: on Linux offscreen (unless QT_QPA_PLATFORM
    says otherwise), since drawing a picture needs no display, nor the X11 libraries.
    GuiExtraMissing (an ImportError) without PySide6."""
    from blocksim.gui import extra

    extra.require("drawing a diagram", modules=("PySide6.QtWidgets",))
    from PySide6.QtWidgets import QApplication

    from blocksim.gui.window import display

    from blocksim.gui.window import qtmessages
    from blocksim.gui.window.qtcompat import protect_none

    protect_none()
    app = QApplication.instance()
    if app is None:
        if sys.platform.startswith("linux"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        qtmessages.install()  # Qt's warnings to logging, as in the editor
        with qtmessages.fatal_hook(display.explain_platform_failure):
            app = QApplication(["blocksim-render"])
    return app


def render_diagram(diagram: Diagram, out: str | os.PathLike[str],
                   level: tuple[str, ...] = (), scale: float = SCALE) -> Path:
    """Draw one level of `diagram` to a .png or .svg file; returns the path written.

    The picture is drawn in memory and then written atomically: a failure (a picture too
    large for PNG, a full disk) raises OSError naming the file and leaves any old file as it
    was. ValueError for another suffix, KeyError if there is no such subsystem.
    """
    suffix = Path(out).suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"{out}: the picture must be a .png or .svg file")
    ensure_app()
    from PySide6.QtCore import QRectF

    from blocksim.gui.document.document import DiagramDocument
    from blocksim.gui.canvas.scene import DiagramScene

    out = Path(out)
    doc = DiagramDocument(copy.deepcopy(diagram))  # placing blocks must not touch the caller's
    shown = doc.level(tuple(level))  # KeyError if there is no such subsystem
    if suffix == ".png":  # a picture too large is refused before the scene is built
        _check_png_size(*_span(shown), scale, out)
    scene = DiagramScene(doc, cache_items=False)  # vectors in an SVG, not cached pixmaps
    try:
        if level:
            scene.set_level(tuple(level))
        source = scene.diagram_rect()
        if source.isEmpty():
            source = QRectF(0, 0, 200, 100)
        source = source.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
        if suffix == ".svg":
            data = _svg(scene, source, diagram)
        else:
            data = _png(scene, source, scale, out)
    finally:
        scene.clear_items()
    try:
        atomic_write(out, lambda fh: fh.write(data), binary=True)
    except (OSError, ValueError) as exc:
        raise OSError(f"{out}: {getattr(exc, 'strerror', None) or exc}") from exc
    log.info("rendered %s (%d bytes)", out, len(data))
    return out


def png_size(width: float, height: float, scale: float = SCALE) -> tuple[int, int]:
    """The pixel size of a PNG of a `width` x `height` canvas area."""
    return max(1, math.ceil(width * scale)), max(1, math.ceil(height * scale))


def _span(diagram: Diagram) -> tuple[float, float]:
    """Width and height, with margins, that the blocks' positions alone already need (the
    picture is at least this large)."""
    xs = [float(b.layout["x"]) for b in diagram.blocks if has_position(b.layout)]
    ys = [float(b.layout["y"]) for b in diagram.blocks if has_position(b.layout)]
    if not xs:
        return 0.0, 0.0
    return max(xs) - min(xs) + 2 * MARGIN, max(ys) - min(ys) + 2 * MARGIN


def _check_png_size(width: float, height: float, scale: float, out: Path) -> tuple[int, int]:
    """The PNG's pixel size; OSError naming `out` if it is too large to make."""
    pixels = png_size(width, height, scale)
    if max(pixels) > MAX_PNG_SIDE or pixels[0] * pixels[1] > MAX_PNG_PIXELS:
        raise OSError(f"{out}: the picture would be {pixels[0]:,} x {pixels[1]:,} pixels, too "
                      f"large for a PNG (at most {MAX_PNG_SIDE:,} pixels a side and "
                      f"{MAX_PNG_PIXELS:,} in all); write an SVG instead, or draw one "
                      f"subsystem (--level)")
    return pixels


def _png(scene, source, scale: float, out: Path) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
    from PySide6.QtGui import QColor, QImage, QPainter

    width, height = _check_png_size(source.width(), source.height(), scale, out)
    image = QImage(width, height, QImage.Format_ARGB32)
    if image.isNull():
        raise OSError(f"{out}: not enough memory for a {width:,} x {height:,} pixel picture; "
                      f"write an SVG instead, or draw one subsystem (--level)")
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:  # a painter left active on a dead device would crash the process
        painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        scene.render(painter, QRectF(image.rect()), source, Qt.KeepAspectRatio)
    finally:
        painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError(f"{out}: the {width:,} x {height:,} pixel picture could not be encoded "
                      f"as PNG")
    buffer.close()
    return bytes(data.data())


def _svg(scene, source, diagram: Diagram) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, QSize
    from PySide6.QtGui import QColor, QPainter
    from PySide6.QtSvg import QSvgGenerator

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(math.ceil(source.width()), math.ceil(source.height())))
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle(diagram.path.name if diagram.path else "blocksim diagram")
    generator.setDescription(diagram.description or "drawn by blocksim")
    painter = QPainter(generator)
    try:
        painter.fillRect(QRectF(0, 0, source.width(), source.height()), QColor("white"))
        scene.render(painter, QRectF(0, 0, source.width(), source.height()), source)
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())
