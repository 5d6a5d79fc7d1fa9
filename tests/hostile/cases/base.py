"""What every category of the hostile corpus builds on: the Case record, the Corpus
that collects cases, and small diagram factories."""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

SEED = 20240917
DIAGRAMS = Path(__file__).resolve().parents[3] / "diagrams"
DIR = "@DIR@"
MARK = "@DIR@/PWNED"
DIAGRAM = "@DIR@/d.json"

ANY = (0, 1, 2)
BAD = (2,)
RUN_OK_OR_FAIL = (0, 1)


@dataclass
class Case:
    """One hostile input and the contract it must meet."""

    id: str
    category: str
    argv: list[str] | None = None            # CLI arguments (after `blocksim`)
    api: dict[str, Any] | None = None        # or an API call: op load|compile|simulate
    files: dict[str, bytes] = field(default_factory=dict)
    setup: list[tuple] = field(default_factory=list)  # ("fifo", name), ("mkdir", name), ...
    exits: tuple[int, ...] = ANY             # allowed CLI exit statuses (API: mapped)
    mentions: tuple[str, ...] = ()           # words the error line must contain
    unchanged: tuple[str, ...] = ()          # files that must stay byte-identical
    absent: tuple[str, ...] = ()             # files that must not exist afterwards
    keep_fifo: tuple[str, ...] = ()          # special files (FIFO, device) that must keep
                                             # their file type: never replaced by a file
    budget: float = 5.0                      # seconds of wall time
    note: str = ""
    env: dict[str, str] = field(default_factory=dict)  # environment variables for the case

    @property
    def kind(self) -> str:
        return "api" if self.api is not None else "cli"


# ---------------------------------------------------------------------------------------------
# Building blocks of diagrams


def blk(block_id: str, block_type: str, **params: Any) -> dict:
    return {"id": block_id, "type": block_type, "params": params}


def doc(blocks: list[dict], wires: Iterable[tuple[str, str]], parameters: dict | None = None,
        **simulation: Any) -> dict:
    return {"format": "blocksim", "version": 1, "parameters": parameters or {},
            "simulation": simulation, "blocks": blocks,
            "wires": [{"src": s, "dst": d} for s, d in wires]}


def lag(**simulation: Any) -> dict:
    """The first-order lag of docs/format.md: Step -> Sum -> Integrator, Gain 1/tau back."""
    sim = {"stop": 5.0, "output_interval": 0.01, **simulation}
    return doc([blk("step", "Step", time=1, before=0, after=1), blk("sum", "Sum", signs="+-"),
                blk("integ", "Integrator", x0=0), blk("fb", "Gain", k="1 / tau"),
                {"id": "y", "type": "Output", "params": {}, "layout": {"x": 340, "y": 100}}],
               [("step.y", "sum.u1"), ("sum.y", "integ.u"), ("integ.y", "fb.u"),
                ("fb.y", "sum.u2"), ("integ.y", "y.u")], {"tau": 0.5}, **sim)


def example(name: str) -> dict:
    return json.loads((DIAGRAMS / name).read_text())


def dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------------------------------------
# Case factories


class Corpus:
    def __init__(self) -> None:
        self.cases: list[Case] = []
        self.rng = random.Random(SEED)

    def add(self, case: Case) -> None:
        self.cases.append(case)

    def diagram_cases(self, category: str, name: str, content: bytes | dict, *,
                      exits: tuple[int, ...] = BAD, validate_exits: tuple[int, ...] | None = None,
                      mentions: tuple[str, ...] = (), budget: float = 5.0, note: str = "",
                      commands: tuple[str, ...] = ("validate", "run", "api"),
                      run_args: tuple[str, ...] = ()) -> None:
        """One diagram file through `validate`, `run` and the API."""
        raw = content if isinstance(content, bytes) else dumps(content)
        files = {"d.json": raw}
        ment = ("d.json", *mentions)
        if "validate" in commands:
            self.add(Case(f"{category}/{name}/validate", category,
                          ["validate", DIAGRAM], files=files,
                          exits=validate_exits or exits, mentions=ment, unchanged=("d.json",),
                          budget=budget, note=note))
        if "run" in commands:
            self.add(Case(f"{category}/{name}/run", category,
                          ["run", DIAGRAM, "-q", "--out", f"{DIR}/out.csv", *run_args],
                          files=files, exits=exits, mentions=ment, unchanged=("d.json",),
                          budget=budget, note=note))
        if "api" in commands:
            self.add(Case(f"{category}/{name}/api", category,
                          api={"op": "simulate", "path": DIAGRAM, "settings": {}},
                          files=files, exits=exits, unchanged=("d.json",), budget=budget,
                          note=note))

    def run_case(self, category: str, name: str, data: dict | bytes, args: Iterable[str] = (),
                 *, exits: tuple[int, ...] = ANY, mentions: tuple[str, ...] = (),
                 budget: float = 5.0, note: str = "", extra_files: dict | None = None,
                 setup: list[tuple] | None = None, unchanged: tuple[str, ...] = ("d.json",),
                 keep_fifo: tuple[str, ...] = (), command: str = "run") -> None:
        raw = data if isinstance(data, bytes) else dumps(data)
        files = {"d.json": raw, **(extra_files or {})}
        argv = [command, DIAGRAM, *args]
        self.add(Case(f"{category}/{name}", category, argv, files=files, setup=setup or [],
                      exits=exits, mentions=mentions, unchanged=unchanged, keep_fifo=keep_fifo,
                      budget=budget, note=note))

    def api_case(self, category: str, name: str, data: dict | bytes, *, op: str = "simulate",
                 params: dict | None = None, settings: dict | None = None,
                 exits: tuple[int, ...] = ANY, budget: float = 5.0, note: str = "",
                 path: str = DIAGRAM, setup: list[tuple] | None = None) -> None:
        raw = data if isinstance(data, bytes) else dumps(data)
        self.add(Case(f"{category}/{name}", category,
                      api={"op": op, "path": path, "params": params or {},
                           "settings": settings or {}},
                      files={"d.json": raw}, setup=setup or [], exits=exits,
                      unchanged=("d.json",), budget=budget, note=note))

