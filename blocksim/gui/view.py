"""The canvas view: zoom (wheel, Ctrl +/-), pan (middle drag or Space+drag), fit to view.

The dotted grid is drawn here, not by the scene, so rendered pictures stay clean.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QKeyEvent, QMouseEvent, QPainter, QPen, QWheelEvent
from PySide6.QtWidgets import QGraphicsView, QWidget

from blocksim.gui.geometry import GRID
from blocksim.gui.scene import DiagramScene

MIN_ZOOM, MAX_ZOOM = 0.1, 8.0
STEP = 1.2


class DiagramView(QGraphicsView):
    """A QGraphicsView with the editor's navigation."""

    def __init__(self, scene: DiagramScene, parent: QWidget | None = None):
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setDragMode(QGraphicsView.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.IntersectsItemShape)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.BoundingRectViewportUpdate)
        self.setAcceptDrops(True)
        self.setFocusPolicy(Qt.StrongFocus)
        self._space = False
        self._pan_from: QPointF | None = None
        self.show_grid = True

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
    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        super().drawBackground(painter, rect)
        if not self.show_grid or self.zoom < 0.5:
            return
        step = GRID * 2
        pen = QPen(QColor("#d0d4da"), 0)  # cosmetic
        painter.setPen(pen)
        left = int(rect.left() // step) * step
        top = int(rect.top() // step) * step
        points = []
        y = top
        while y < rect.bottom():
            x = left
            while x < rect.right():
                points.append(QPointF(x, y))
                x += step
            y += step
        if len(points) < 40000:
            painter.drawPoints(points)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.ShortcutOverride and isinstance(event, QKeyEvent) \
                and event.key() == Qt.Key_Space:
            event.accept()  # Space pans here; it must not trigger a toolbar button
            return True
        return super().event(event)
