"""Goto/From tags resolved while flattening: which Goto each From reads, by tag and
visibility, so that later stages see one ordinary connection and no tag at all.

Visibility of a Goto (as in Simulink, with "scoped" needing no GotoTagVisibility block):
  * local: Froms at the Goto's own subsystem level only;
  * scoped: Froms at its level and in every subsystem nested inside it;
  * global: Froms anywhere in the diagram.
Two Gotos with one tag clash when some level could see both; a From must see exactly one.
A tag never crosses the boundary of a triggered or enabled subsystem: its ports are where
the holds of those subsystems act, and a tag would bypass them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from blocksim.errors import CompileError, shown


@dataclass(frozen=True)
class Tagged:
    """One Goto or From: its flat path, its level's prefix ("" at the top, "a/b/" inside
    subsystem b of subsystem a), its tag, and the conditional subsystems around it."""

    path: str
    level: str
    tag: str
    visibility: str = "local"
    context: tuple = ()


def visible(goto: Tagged, level: str) -> bool:
    """Whether a From at `level` sees `goto`."""
    if goto.visibility == "global":
        return True
    if goto.visibility == "local":
        return level == goto.level
    return level.startswith(goto.level)  # scoped: its level and below


def _where(goto: Tagged) -> str:
    level = goto.level.rstrip("/") or "the top level"
    return f"'{shown(goto.path)}' ({goto.visibility}, at {level})"


@dataclass
class Tags:
    """The Gotos and Froms met while flattening, resolved once every level is added."""

    gotos: list[Tagged] = field(default_factory=list)
    froms: list[Tagged] = field(default_factory=list)

    def resolve(self, error: Callable[..., CompileError]) -> dict[str, str]:
        """{From path: the path of the Goto it reads}; CompileError names the block and tag."""
        by_tag: dict[str, list[Tagged]] = {}
        for goto in self.gotos:
            for other in by_tag.get(goto.tag, ()):
                if visible(goto, other.level) or visible(other, goto.level):
                    raise error(f"Goto tag '{shown(goto.tag)}' is already used by Goto "
                                f"{_where(other)}, and some level sees both (this one is "
                                f"{goto.visibility})", block=goto.path)
            by_tag.setdefault(goto.tag, []).append(goto)
        found = {}
        for frm in self.froms:
            same = by_tag.get(frm.tag, [])
            if not same:
                tags = ", ".join(sorted(f"'{shown(t)}'" for t in by_tag)) or "none"
                raise error(f"From tag '{shown(frm.tag)}' matches no Goto (Goto tags in the "
                            f"diagram: {tags})", block=frm.path)
            seen = [goto for goto in same if visible(goto, frm.level)]
            if not seen:
                others = ", ".join(_where(goto) for goto in same)
                raise error(f"From tag '{shown(frm.tag)}': no Goto with this tag is visible "
                            f"here (Goto {others}; make it scoped or global)", block=frm.path)
            goto = seen[0]  # one at most: clashing Gotos were refused above
            if goto.context != frm.context:
                raise error(f"From tag '{shown(frm.tag)}' would cross the boundary of a "
                            f"triggered or enabled subsystem (Goto '{shown(goto.path)}'): "
                            f"wire the signal through its ports instead", block=frm.path)
            found[frm.path] = goto.path
        return found
