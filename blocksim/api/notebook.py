"""How a diagram built in Python shows itself: an SVG drawn by the editor's renderer in
Jupyter, a text summary where Qt (PySide6) is absent or cannot start.

Only blocksim.gui imports Qt, and only when a picture is asked for.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from blocksim.diagram.model import Diagram

log = logging.getLogger(__name__)

MAX_SHOWN_BLOCKS = 60  # a summary longer than this says how many it left out


def summary(title: str, model: Diagram, top: bool) -> str:
    """Blocks (id, type, parameters), wires and, at the top, parameters and settings, under
    `title` (the builder's repr)."""
    lines = [title]
    if top:
        sim = model.simulation
        lines.append(f"  simulation: {sim.start:g} .. {sim.stop:g} s, {sim.solver}, "
                     f"rtol {sim.rtol:g}, atol {sim.atol:g}")
    if model.parameters:
        lines.append("  parameters: " + ", ".join(f"{k} = {v!r}"
                                                 for k, v in model.parameters.items()))
    for block in model.blocks[:MAX_SHOWN_BLOCKS]:
        params = ", ".join(f"{k}={v!r}" for k, v in block.params.items())
        inner = f" [{len(block.subsystem.blocks)} blocks inside]" if block.subsystem else ""
        lines.append(f"  {block.id}: {block.type}({params}){inner}")
    if len(model.blocks) > MAX_SHOWN_BLOCKS:
        lines.append(f"  ... and {len(model.blocks) - MAX_SHOWN_BLOCKS} more blocks")
    wires = [f"{w.src} -> {w.dst}" for w in model.wires]
    if wires:
        shown = wires[:MAX_SHOWN_BLOCKS]
        lines.append("  wires: " + ", ".join(shown)
                     + (f", ... ({len(wires)} in all)" if len(wires) > len(shown) else ""))
    return "\n".join(lines)


def svg(top: Diagram, level: tuple[str, ...]) -> str | None:
    """The `level` (a path of subsystem ids) of the diagram `top` drawn as the editor draws
    it, as SVG text; None (Jupyter then shows the text summary) without the gui extra
    (PySide6), quietly since the summary is the designed fallback, or when Qt cannot draw."""
    try:
        from blocksim.gui.canvas.render import render_diagram  # Qt only inside, when drawing
        from blocksim.gui.extra import GuiExtraMissing
    except ImportError as exc:
        log.debug("no diagram picture: %s", exc)
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="blocksim-svg-") as folder:
            out = render_diagram(top, Path(folder) / "diagram.svg", level=level)
            return out.read_text(encoding="utf-8")
    except GuiExtraMissing as exc:
        log.debug("no diagram picture: %s", exc)
        return None
    except Exception as exc:  # a picture is a nicety: never break the notebook for it
        log.warning("cannot draw the diagram (%s); showing its summary", exc)
        return None
