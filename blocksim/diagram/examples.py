"""The example diagrams shipped with blocksim, found by name in a checkout or an installed wheel.

The repository keeps them in diagrams/ beside the package; a wheel carries them as the
package data of blocksim.diagrams (see pyproject.toml). `blocksim examples` lists them,
`blocksim run NAME`, `blocksim.load(NAME)` and `blocksim.sweep(NAME, ...)` accept a name
(`diagram_path`, the one place that resolves it), and the editor's Examples menu shows them.
A topic with several examples has a folder of its own one level down (diagrams/physical/):
its examples are named with the folder, `physical/c21_diode_ideal`.
"""
from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from blocksim.errors import DiagramFileError

log = logging.getLogger(__name__)

SUFFIX = ".json"
MAX_SUMMARY = 90


def examples_dir() -> Path:
    """The folder of example diagrams: diagrams/ in a checkout (and an editable install),
    blocksim/diagrams in a wheel."""
    here = Path(__file__).resolve().parent.parent  # the blocksim package
    candidates = (here / "diagrams", here.parent / "diagrams")
    for folder in candidates:
        if folder.is_dir() and any(folder.glob(f"*{SUFFIX}")):
            return folder
    return candidates[0]


def example_paths() -> list[Path]:
    """Every example diagram file: those of the folder, then those of its topic folders
    (one level down), each sorted by name."""
    folder = examples_dir()
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"*{SUFFIX}")) + sorted(folder.glob(f"*/*{SUFFIX}"))


def example_name(path: Path) -> str:
    """The name of an example file: its stem, with its topic folder if it has one
    (`physical/c21_diode_ideal`)."""
    path = Path(path)
    folder = examples_dir()
    try:
        return path.resolve().relative_to(folder.resolve()).with_suffix("").as_posix()
    except ValueError:  # not an example file: its stem
        return path.stem


@dataclass(frozen=True)
class Example:
    """One shipped example: its name (`example_name`), file and first sentence of its
    description."""

    name: str
    path: Path
    summary: str


def _summary(path: Path) -> str:
    """The first sentence of a diagram's description, read without compiling anything."""
    try:
        text = json.loads(path.read_text(encoding="utf-8")).get("description", "")
    except (OSError, ValueError, AttributeError) as exc:
        log.warning("cannot read the description of %s: %s", path, exc)
        return ""
    text = " ".join(str(text).split())
    ends = [i for i in (text.find(". "), text.find(": ")) if i > 0]
    text = text[:min(ends)] if ends else text.rstrip(".")
    text = re.sub(r"\s*\([^()]*\)$", "", text)  # a closing reference, e.g. "(BENCHMARKS.md ...)"
    return text if len(text) <= MAX_SUMMARY else text[:MAX_SUMMARY - 3].rstrip() + "..."


def examples() -> list[Example]:
    """The shipped examples with their one-line summaries."""
    return [Example(example_name(p), p, _summary(p)) for p in example_paths()]


def find_example(name: str) -> Path | None:
    """The file of the example called `name` (with or without .json; `topic/name` for
    one in a topic folder), or None."""
    stem = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    parts = stem.split("/")
    if len(parts) > 2 or "\\" in stem or any(
            not part or part.startswith(".") for part in parts):
        return None
    path = examples_dir().joinpath(*parts[:-1], f"{parts[-1]}{SUFFIX}")
    try:
        return path if path.is_file() else None
    except OSError:  # a name too long for the file system: no example has it
        return None


def diagram_path(name: str | os.PathLike[str]) -> Path:
    """A diagram file, or else the name of a shipped example (`bouncing_ball`): the CLI,
    `blocksim.load` and sweeps accept the same names. A file of that name wins over an
    example, so a user's own `bouncing_ball` in the current folder is the one read."""
    text = os.fspath(name)
    path = Path(text)
    try:
        if path.exists():
            return path
    except OSError as exc:  # a name too long for the file system, ...
        raise DiagramFileError(str(exc.strerror or exc), file=text) from None
    except ValueError:  # a NUL byte in the name: load_diagram says so
        return path
    example = find_example(text)
    if example is not None:
        return example
    hint = " (see `blocksim examples`)" if "/" not in text and "\\" not in text else ""
    raise DiagramFileError(f"no such file, and no example of that name{hint}", file=text)
