"""The canvas view: zoom (wheel, Ctrl +/-), pan (middle drag or Space+drag), fit to view.

The dotted grid is drawn here, not by the scene, so rendered pictures stay clean. It is
cached with the background, so a pan copies it and draws only the strip it uncovers.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPen,
    QPixmapCache,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsView, QWidget

from blocksim.gui.canvas.geometry import GRID
from blocksim.gui.canvas.scene import DiagramScene

MIN_ZOOM, MAX_ZOOM = 0.1, 8.0
STEP = 1.2
PIXMAP_CACHE_KB = 128 * 1024  # block pixmaps of a big diagram at full zoom (Qt's default: 10 MB)


_GRID_PEN = QPen(QColor("#d0d4da"), 0)  # cosmetic: one device pixel at every zoom


class DiagramView(QGraphicsView):
    """A QGraphicsView with the editor's navigation."""

    def __init__(self, scene: DiagramScene, parent: QWidget | None = None):
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setDragMode(QGraphicsView.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.IntersectsItemShape)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.BoundingRectViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        # Every item sets the pen, brush, font and hints it uses: no save/restore per item.
        self.setOptimizationFlags(QGraphicsView.OptimizationFlag.DontSavePainterState
                                  | QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing)
        if QPixmapCache.cacheLimit() < PIXMAP_CACHE_KB:
            QPixmapCache.setCacheLimit(PIXMAP_CACHE_KB)
        self.setAcceptDrops(True)
        self.setFocusPolicy(Qt.StrongFocus)
        self._space = False
        self._pan_from: QPointF | None = None
        self._show_grid = True

    # ----- zoom -----
    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float) -> None:
        target = min(max(self.zoom * factor, MIN_ZOOM), MAX_ZOOM)
        if self.zoom:
            factor = target / self.zoom
            self.scale(factor, factor)

    def zoom_in(self) -> None:
        self.zoom_by(STEP)

    def zoom_out(self) -> None:
        self.zoom_by(1 / STEP)

    def reset_zoom(self) -> None:
        self.resetTransform()

    def fit(self) -> None:
        """Show the whole diagram, at most at 150 %."""
        rect = self.scene().diagram_rect()
        if rect.isEmpty():
            rect = QRectF(0, 0, 400, 300)
        rect = rect.adjusted(-30, -30, 30, 30)
        self.fitInView(rect, Qt.KeepAspectRatio)
        if self.zoom > 1.5:
            self.resetTransform()
            self.scale(1.5, 1.5)
            self.centerOn(rect.center())

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.ShiftModifier:
            super().wheelEvent(event)  # Shift+wheel scrolls
            return
        delta = event.angleDelta().y()
        if delta:
            self.zoom_by(STEP ** (delta / 120))
        event.accept()

    # ----- pan -----
    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key_Space and not event.isAutoRepeat():
            self._space = True
            self.viewport().setCursor(Qt.OpenHandCursor)
            event.accept()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key_Space and not event.isAutoRepeat():
            self._space = False
            self.viewport().unsetCursor()
            event.accept()
            return
        super().keyReleaseEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MiddleButton or (self._space and event.button() == Qt.LeftButton):
            self._pan_from = event.position()
            self.viewport().setCursor(Qt.ClosedHandCursor)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - delta.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - delta.y())
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None:
            self._pan_from = None
            if self._space:
                self.viewport().setCursor(Qt.OpenHandCursor)
            else:
                self.viewport().unsetCursor()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def focusOutEvent(self, event) -> None:
        self._space = False
        super().focusOutEvent(event)

    # ----- grid -----
    @property
    def show_grid(self) -> bool:
        return self._show_grid

    @show_grid.setter
    def show_grid(self, show: bool) -> None:
        self._show_grid = bool(show)
        self.resetCachedContent()  # the cached background has (or lacks) the dots
        self.viewport().update()

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        super().drawBackground(painter, rect)
        if not self.show_grid or self.zoom < 0.5:
            return
        # A diagonal pan uncovers an L-shaped strip; `rect` is its bounding box, the clip
        # is the strip itself: dots only where they can show.
        areas = [QRectF(r).adjusted(-1, -1, 1, 1).intersected(rect)
                 for r in painter.clipRegion()] if painter.hasClipping() else [rect]
        painter.setPen(_GRID_PEN)
        for area in areas:
            points = _grid_points(area)
            if points:
                painter.drawPoints(points)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.ShortcutOverride and isinstance(event, QKeyEvent) \
                and event.key() == Qt.Key_Space:
            event.accept()  # Space pans here; it must not trigger a toolbar button
            return True
        return super().event(event)


def _grid_points(rect: QRectF, step: float = GRID * 2) -> list[QPointF]:
    """The grid dots inside `rect` (none if there would be absurdly many)."""
    left, top = int(rect.left() // step), int(rect.top() // step)
    columns = int(rect.right() // step) - left + 1
    rows = int(rect.bottom() // step) - top + 1
    if rect.isEmpty() or columns * rows >= 40000:
        return []
    xs = [(left + i) * step for i in range(columns)]
    return [QPointF(x, (top + j) * step) for j in range(rows) for x in xs]
