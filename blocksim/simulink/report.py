"""The import report: every block with what became of it (mapped exactly, mapped with a
note, placeholder, skipped), the parameters the user must set, what the scripts and
callbacks held that was not taken, and the solver chosen."""
from __future__ import annotations

from dataclasses import dataclass, field

STATUSES = ("exact", "note", "placeholder", "skipped")
_LABEL = {"exact": "mapped exactly", "note": "mapped with a note", "placeholder": "placeholder",
          "skipped": "skipped"}


@dataclass
class Entry:
    path: str
    simulink_type: str
    status: str
    blocksim: str
    note: str = ""
    block_id: str = ""


@dataclass
class Report:
    model: str = ""
    format: str = ""
    release: str = ""
    entries: list[Entry] = field(default_factory=list)
    to_set: dict[str, str] = field(default_factory=dict)       # parameter -> why/where
    workspace: dict[str, str] = field(default_factory=dict)    # variable -> origin
    skipped_code: list[str] = field(default_factory=list)
    solver: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add(self, path: str, simulink_type: str, status: str, blocksim: str, note: str = "",
            block_id: str = "") -> None:
        self.entries.append(Entry(path, simulink_type, status, blocksim, note, block_id))

    def note_on(self, block_id: str, system_path: str, text: str) -> None:
        """A note found after the block was mapped (an unconnected input)."""
        for entry in reversed(self.entries):
            parent = entry.path.rpartition("/")[0]
            if entry.block_id == block_id and parent == system_path:
                entry.note = f"{entry.note}; {text}" if entry.note else text
                if entry.status == "exact":
                    entry.status = "note"
                return
        self.warnings.append(f"{system_path}/{block_id}: {text}")

    def note_block(self, block_path: str, text: str) -> None:
        """A note on the block with this blocksim path (sub/inner), found after mapping."""
        *outer, block_id = block_path.split("/")
        for entry in self.entries:
            if entry.block_id == block_id and len(entry.path.split("/")) == len(outer) + 1:
                entry.note = f"{entry.note}; {text}" if entry.note else text
                if entry.status == "exact":
                    entry.status = "note"
                return
        self.warnings.append(f"{block_path}: {text}")

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def count(self, status: str) -> int:
        return sum(e.status == status for e in self.entries)

    @property
    def placeholders(self) -> list[Entry]:
        return [e for e in self.entries if e.status == "placeholder"]

    def summary(self) -> str:
        """One line: how many blocks went which way."""
        parts = [f"{self.count(s)} {_LABEL[s]}" for s in STATUSES if self.count(s)]
        text = f"{len(self.entries)} blocks: " + ", ".join(parts)
        if self.to_set:
            text += f"; {len(self.to_set)} parameter(s) to set"
        return text

    def lines(self) -> list[str]:
        """The report as terminal lines (what `blocksim import` prints)."""
        out = [f"{self.model} ({self.format}, {self.release or 'release unknown'}): "
               f"{self.summary()}"]
        for entry in self.entries:
            if entry.status == "exact":
                continue
            out.append(f"  {_LABEL[entry.status]}: {entry.path} [{entry.simulink_type}]"
                       + (f": {entry.note}" if entry.note else ""))
        for name, why in self.to_set.items():
            out.append(f"  set parameter {name}: {why}")
        for line in self.solver:
            out.append(f"  solver: {line}")
        for line in self.skipped_code:
            out.append(f"  not run: {line}")
        for line in self.warnings:
            out.append(f"  warning: {line}")
        return out

    def markdown(self) -> str:
        rows = ["| block | Simulink type | result | blocksim | note |", "|---|---|---|---|---|"]
        for e in self.entries:
            rows.append(f"| {_cell(e.path)} | {_cell(e.simulink_type)} | {_LABEL[e.status]} | "
                        f"{_cell(e.blocksim)} | {_cell(e.note)} |")
        parts = [f"# Import report: {self.model}", "",
                 f"Format: {self.format}; saved by: {self.release or 'unknown'}.", "",
                 self.summary() + ".", "", "## Blocks", "", *rows, ""]
        if self.placeholders:
            parts += ["## Placeholders to fill in", "",
                      "`blocksim validate` fails, naming each, until its subsystem is built "
                      "and its Placeholder block deleted.", ""]
            parts += [f"- {e.path} [{e.simulink_type}]: {e.note}" for e in self.placeholders]
            parts.append("")
        if self.to_set:
            parts += ["## Parameters to set", "",
                      "Each is a diagram parameter left empty: give it a value in the editor "
                      "or with `--set NAME=VALUE`.", ""]
            parts += [f"- `{name}`: {why}" for name, why in self.to_set.items()]
            parts.append("")
        if self.workspace:
            parts += ["## Variables taken", ""]
            parts += [f"- `{name}` from {origin}" for name, origin in self.workspace.items()]
            parts.append("")
        if self.skipped_code:
            parts += ["## Code not run", "", "Callbacks and scripts are read as plain "
                      "assignments; these statements were not taken (nothing is ever "
                      "evaluated).", ""]
            parts += [f"- {_cell(line)}" for line in self.skipped_code]
            parts.append("")
        if self.solver:
            parts += ["## Solver", ""] + [f"- {line}" for line in self.solver] + [""]
        if self.warnings:
            parts += ["## Warnings", ""] + [f"- {_cell(line)}" for line in self.warnings] + [""]
        return "\n".join(parts).rstrip("\n") + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")
