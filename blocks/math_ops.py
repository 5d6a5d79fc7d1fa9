"""Math blocks: gains, sums, products and formulas, all elementwise with scalar expansion."""
from __future__ import annotations

from blocksim.blockspec import BlockType, Emit, Param, Port, Sizes, broadcast, each, lit, size_of


class Gain(BlockType):
    """Multiply the input by `k` (elementwise; a vector k widens a scalar input)."""

    name = "Gain"
    category = "Math"
    params = (Param("k", "vector", 1.0, "gain"),)
    inputs = (Port("u", "input"),)
    outputs = (Port("y", "k * u"),)

    def sizes(self, p, in_widths):
        return Sizes({"y": max(in_widths.get("u") or 1, size_of(p.k))})

    def output(self, e: Emit):
        k = [lit(v) for v in broadcast(e.p.k, len(e.y["y"]))]
        return {"y": each(e.y["y"], "{k} * {u}", k=k, u=e.u["u"])}


class Sum(BlockType):
    """Add and subtract inputs: `signs` such as "+-+" gives ports u1, u2, u3."""

    name = "Sum"
    category = "Math"
    params = (Param("signs", "signs", "++", "one + or - per input"),)
    outputs = (Port("y", "signed sum"),)

    def input_ports(self, p):
        return tuple(Port(f"u{i + 1}", f"input with sign {s}") for i, s in enumerate(p.signs))

    def check(self, p):
        if not p.signs or set(p.signs) - set("+-"):
            return f"signs must be a non-empty string of + and -, got {p.signs!r}"
        return None

    def output(self, e: Emit):
        signs = e.p.signs
        terms = []
        for i, s in enumerate(signs):
            terms.append((s, e.u[f"u{i + 1}"]))
        lines = []
        for k, target in enumerate(e.y["y"]):
            expr = ""
            for s, u in terms:
                v = u[k] if len(u) > 1 else u[0]
                expr += (f"{v}" if not expr and s == "+" else f" {s} {v}" if expr else f"-{v}")
            lines.append(f"{target} = {expr}")
        return {"y": lines}


BLOCK_TYPES = (Gain, Sum,)
