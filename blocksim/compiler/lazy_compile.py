"""Large generated functions compiled on their first call instead of with the module.

Python's `compile()` costs about 13 µs a line, so the two 10,000-line functions of a
10,000-block model (`deriv`, `outputs`) cost a quarter of a second to compile, yet a run on
the Python backend often calls neither: it derives a vectorised `deriv` and a pruned
`observe` from their text (`engine/derived.py`), and calls the originals only to name the
block at fault after a failure. A function of at least `LAZY_LINES` lines is therefore
compiled as a small stub that, on its first call, compiles the function's own text (at its
own line numbers, so tracebacks still name blocks through `CompiledModel.line_owner`) and
calls it. The module text, and so every analysis of it, is unchanged.

The compiled code is made once per model structure; the function bound to a globals dict
once per dict (`with_params` rebinds the stub to a model's own globals, and the stub binds
the real code to whichever dict it runs in).
"""
from __future__ import annotations

import types
from typing import Any

from blocksim.errors import CompileError

# Below this many lines a function is compiled with the module: compiling it costs less
# than a millisecond more, and its calls skip the stub's (about 0.3 µs a call).
LAZY_LINES = 1000
HELPER = "_lazy_functions_"  # the stubs' name for the `LazyFunctions` in their globals
_BOUND = "_lazy_bound_"  # prefix of a globals dict's entries: its bound real functions


class LazyFunctions:
    """The text of the functions compiled on first call, and their code once compiled."""

    def __init__(self, lines: list[str], spans: dict[str, tuple[int, int]], filename: str):
        """`lines`: the module's lines; `spans`: per lazy function, its lines' range."""
        self._lines = lines
        self._spans = spans
        self._filename = filename
        self._codes: dict[str, types.CodeType] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._spans

    def code(self, name: str) -> types.CodeType:
        """The function's code, compiled from its own lines on the first request."""
        code = self._codes.get(name)
        if code is None:
            start, stop = self._spans[name]
            # Blank lines before it: its line numbers are those of the whole module.
            text = "\n" * start + "\n".join(self._lines[start:stop]) + "\n"
            try:
                module = compile(text, self._filename, "exec")
            except (SyntaxError, RecursionError, MemoryError) as exc:  # as with the module
                raise CompileError(f"code generation failed: the generated function "
                                   f"'{name}' does not compile "
                                   f"({type(exc).__name__}: {exc})") from None
            code = next(c for c in module.co_consts
                        if isinstance(c, types.CodeType) and c.co_name == name)
            self._codes[name] = code
        return code

    def bound(self, name: str, namespace: dict[str, Any]) -> types.FunctionType:
        """The compiled function reading its globals from `namespace` (made once per dict;
        an entry copied from another dict is not taken for this one's)."""
        key = _BOUND + name
        fn = namespace.get(key)
        if fn is None or fn.__globals__ is not namespace:
            fn = types.FunctionType(self.code(name), namespace, name)
            namespace[key] = fn
        return fn


def module_text(source: str, min_lines: int | None = None
                ) -> tuple[str, list[str], dict[str, tuple[int, int]]]:
    """The text to compile now (each function of at least `min_lines` lines replaced by a
    stub, padded with blank lines so that the functions after it keep their line
    numbers), the module's lines, and the stubbed functions' spans."""
    if min_lines is None:
        min_lines = LAZY_LINES
    lines = source.split("\n")
    starts = [k for k, line in enumerate(lines) if line.startswith("def ")]
    spans: dict[str, tuple[int, int]] = {}
    out: list[str] = []
    done = 0
    for k, start in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else len(lines)
        if stop - start < min_lines:
            continue
        head = lines[start]
        name, args = head[len("def "):].split("(", 1)
        args = args.rsplit(")", 1)[0]
        out += lines[done:start]
        out.append(head)
        out.append(f"    return {HELPER}.bound({name!r}, globals())({args})")
        out += [""] * (stop - start - 2)
        spans[name] = (start, stop)
        done = stop
    if not spans:
        return source, lines, spans
    out += lines[done:]
    return "\n".join(out), lines, spans
