"""Export of what a plot shows: the visible curves inside the visible range as CSV, the
plot as PNG or SVG. Every file is written atomically; a failure keeps the old file and
raises OSError naming the file.
"""
from __future__ import annotations

import csv
import importlib
import io
from contextlib import contextmanager
from typing import Iterator, Sequence

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import QBuffer, QByteArray, QIODevice

from blocksim.files.safe import atomic_write


def _write(path: str, data: bytes | str) -> None:
    binary = isinstance(data, bytes)
    try:
        atomic_write(path, lambda fh: fh.write(data), binary=binary)
    except (OSError, ValueError) as exc:
        raise OSError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc


def visible_rows(x: np.ndarray, x_range: tuple[float, float]) -> np.ndarray:
    """Indices of the rows whose x lies in the visible range (ends included)."""
    lo, hi = sorted(x_range)
    return np.flatnonzero((x >= lo) & (x <= hi))


def table_csv(header: Sequence[str], columns: Sequence[np.ndarray]) -> str:
    """CSV text of equal-length columns, full precision (repr of each float)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in zip(*columns):
        writer.writerow([repr(float(v)) for v in row])
    return out.getvalue()


def write_csv(path: str, header: Sequence[str], columns: Sequence[np.ndarray]) -> None:
    """Write the table as CSV, atomically."""
    _write(path, table_csv(header, columns))


def write_png(item: pg.PlotItem, path: str, width: int = 1000) -> None:
    """The plot as a PNG image `width` pixels wide."""
    exporter = pyqtgraph.exporters.ImageExporter(item)
    exporter.parameters()["width"] = width
    image = exporter.export(toBytes=True)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.WriteOnly)
    if image is None or image.isNull() or not image.save(buffer, "PNG"):
        raise OSError(f"{path}: the plot could not be drawn as a PNG")
    buffer.close()
    _write(path, bytes(data.data()))


@contextmanager
def _closed_paths_tolerated() -> Iterator[None]:
    """pyqtgraph 0.14's SVG exporter fails on a closed path (a "Z" token in the path data
    Qt writes: pyqtgraph issue #3495). While exporting, drop the Z tokens before it reads
    the coordinates: Qt draws each closing segment explicitly, so the picture is the same."""
    module = importlib.import_module("pyqtgraph.exporters.SVGExporter")
    original = module.correctCoordinates

    def tolerant(node, defs, item, options):
        for element in node.getElementsByTagName("path"):
            data = element.getAttribute("d")
            if "Z" in data or "z" in data:
                element.setAttribute("d", " ".join(t for t in data.split() if t not in "Zz"))
        return original(node, defs, item, options)

    module.correctCoordinates = tolerant
    try:
        yield
    finally:
        module.correctCoordinates = original


def write_svg(item: pg.PlotItem, path: str) -> None:
    """The plot as an SVG drawing (curves as vector paths)."""
    exporter = pyqtgraph.exporters.SVGExporter(item)
    with _closed_paths_tolerated():
        text = exporter.export(toBytes=True)
    if not text:
        raise OSError(f"{path}: the plot could not be drawn as SVG")
    _write(path, text if isinstance(text, bytes) else str(text).encode("utf-8"))
