"""Dataflow over the generated functions' text: which statements feed which results.

The generated functions are straight-line code (compound statements only inside one block's
lines), so a single pass over their top-level statements tells what each result depends
on. The engine uses it to derive cheaper functions from the six generated ones without
touching the code generator: `observe` computes only the logged signals (the output grid
calls it hundreds of times per run), one zero crossing alone for event location, list
variants for small models, which zero crossings move with the flow, and the Jacobian's
sparsity pattern for the implicit solvers from which states each derivative reads.
"""
from __future__ import annotations

import ast
import keyword
import re
import textwrap
from dataclasses import dataclass

_DEF = re.compile(r"^def (\w+)\((.*)\):$")
_ARRAYS = ("x_", "dx_", "m_", "z_", "g_", "zn_")
_SIDE_EFFECTS = ("ev", "raise")
# The end of a generated line that only the Python backend runs: a failure report that
# compiled code cannot raise (the compiled loop calls the model's functions through their
# addresses, where numba prints an exception and drops it) and that needs no stand-in
# there, because the lines before it made the values concerned NaN: the compiled loop
# hands such a grid row or failed step over to Python, where the line raises.
PYTHON_ONLY = "  # python only"


def compiled_only(lines: list[str]) -> list[str]:
    """The lines that compiled code runs: without those that only Python runs."""
    return [line for line in lines if not line.endswith(PYTHON_ONLY)]


class Statement:
    """One top-level statement of a generated function (a compound one with its body).

    What it reads and writes is worked out on first use: most analyses need only some
    functions' statements (a run on the Python backend reads `deriv`'s lines, never its
    dataflow), and a 10,000-block model has 20,000 statements."""

    __slots__ = ("lines", "owner", "_facts")
    _FIELDS = ("writes", "reads", "states", "dynamic_state", "stores")

    def __init__(self, lines: list[str], owner: int | None, writes: set[str] | None = None,
                 reads: set[str] | None = None, states: set[int] | None = None,
                 dynamic_state: bool = False, stores: set[str] | None = None):
        """With `writes` None, the facts are analysed from `lines` when first asked."""
        self.lines = lines  # without the function's indentation
        self.owner = owner
        self._facts: tuple | None = None if writes is None else (
            writes, reads if reads is not None else set(),
            states if states is not None else set(), dynamic_state,
            stores if stores is not None else set())

    def _known(self) -> tuple:
        if self._facts is None:
            st = _analyse(self.lines, self.owner)
            self._facts = st._facts
        return self._facts

    @property
    def writes(self) -> set[str]:
        """Names assigned."""
        return self._known()[0]

    @property
    def reads(self) -> set[str]:
        """Names read."""
        return self._known()[1]

    @property
    def states(self) -> set[int]:
        """x_[k] read with a constant k."""
        return self._known()[2]

    @property
    def dynamic_state(self) -> bool:
        """x_ read with a computed index."""
        return self._known()[3]

    @property
    def stores(self) -> set[str]:
        """Array slots written, e.g. "dx_[3]"; a non-slot array written: "*"."""
        return self._known()[4]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Statement):
            return NotImplemented
        return (self.lines, self.owner, self._known()) == (other.lines, other.owner,
                                                            other._known())

    def __repr__(self) -> str:
        facts = ", ".join(f"{name}={value!r}" for name, value in zip(self._FIELDS,
                                                                       self._known()))
        return f"Statement(lines={self.lines!r}, owner={self.owner!r}, {facts})"


@dataclass
class Function:
    name: str
    args: str
    statements: list[Statement]


def split(source: str, owners: tuple[int | None, ...] | list[int | None] = ()) -> dict[str, Function]:
    """The generated module's functions, each as its list of top-level statements."""
    functions: dict[str, Function] = {}
    current: Function | None = None
    lines = source.split("\n")
    group: list[str] = []
    group_owner: int | None = None

    def flush() -> None:
        if current is not None and group:
            current.statements.append(Statement(group, group_owner))  # analysed on use

    for no, line in enumerate(lines):
        match = _DEF.match(line) if line.startswith("def ") else None
        if match:
            flush()
            group = []
            current = Function(match.group(1), match.group(2), [])
            functions[current.name] = current
            continue
        if not line.strip() or current is None:
            continue
        body = line[4:]
        continuation = body.startswith((" ", "elif ", "else:", "except", "finally:"))
        if continuation and group:
            group.append(body)
            continue
        flush()
        group = [body]
        group_owner = owners[no] if no < len(owners) else None
    flush()
    return functions


def _analyse(lines: list[str], owner: int | None) -> Statement:
    """What one statement reads and writes: most generated statements are one plain
    assignment (`s12 = x_[3] * s11`, `dx_[3] = s12`), read by regular expressions; any
    other statement is parsed. A 10,000-block model has 20,000 statements, and parsing
    each took most of its first simulate."""
    if len(lines) == 1:
        simple = _simple(lines[0], owner)
        if simple is not None:
            return simple
    return _parsed(lines, owner)


# One assignment to a name or a constant slot, or a return, whose value has no string, comment, colon
# (slice, lambda, dict), semicolon, assignment of its own (keyword argument, walrus) or
# comprehension.
_SIMPLE = re.compile(r"^(?:([A-Za-z_]\w*)(?:\[(\d+)\])? = |return )([^'\"#;:]*)$")
# A signal that copies a slot of x_, m_ or z_, another signal or the time: (signal, source,
# the source's array and index when it is a slot). Also codegen's copy propagation.
COPY_LINE = re.compile(r"^(s\d+) = ((x_|m_|z_)\[(\d+)\]|s\d+|t)$")
_NOT_SIMPLE = re.compile(r"(?<![=!<>])=(?!=)|\blambda\b|\bfor\b")
# A name (not an attribute, not inside a number), with what follows it: [constant] or [.
_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(\[(?:(\d+)\])?)?")
_EFFECT_CALL = re.compile(r"(?<![\w.])(?:" + "|".join(_SIDE_EFFECTS) + r")\.\w+\(")
_NOT_NAMES = frozenset(keyword.kwlist)  # and/or/not/if/else/in/is, True/False/None


def _simple(line: str, owner: int | None) -> Statement | None:
    """`_parsed`'s result for a plain assignment or return, without parsing; None for any
    other statement."""
    copy = COPY_LINE.match(line)
    if copy is not None:  # the commonest line of all: `s12 = x_[3]`
        target, source, array, index = copy.groups()
        if array is None:
            return Statement([line], owner, {target}, {source}, set(), False, set())
        states = {int(index)} if array == "x_" else set()
        return Statement([line], owner, {target}, {array}, states, False, set())
    match = _SIMPLE.match(line)
    if match is None:
        return None
    target, index, value = match.groups()
    if ("=" in value or "lambda" in value or "for" in value) and _NOT_SIMPLE.search(value):
        return None
    reads: set[str] = set()
    states: set[int] = set()
    dynamic = False
    for name, subscript, constant in _NAME.findall(value):
        if name in _NOT_NAMES:
            continue
        reads.add(name)
        if name == "x_" and subscript:
            if constant:
                states.add(int(constant))
            else:
                dynamic = True
    if target is None:  # return VALUE
        writes, stores = set(), set()
    elif index is None:
        writes, stores = {target}, set()
    else:  # a slot: the array is read (loaded, then stored into), the slot stored
        writes = set()
        reads.add(target)
        stores = {f"{target}[{int(index)}]" if target in _ARRAYS else "*"}
    if "(" in value and _EFFECT_CALL.search(value):
        stores.add("*")
    return Statement([line], owner, writes, reads, states, dynamic, stores)


def _parsed(lines: list[str], owner: int | None) -> Statement:
    tree = ast.parse(textwrap.dedent("\n".join(lines)))
    writes, reads, states, stores = set(), set(), set(), set()
    dynamic = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (writes if isinstance(node.ctx, ast.Store) else reads).add(node.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            name = node.value.id
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if isinstance(node.ctx, ast.Store):
                stores.add(f"{name}[{index}]" if name in _ARRAYS and isinstance(index, int)
                           else "*")
            elif name == "x_":
                if isinstance(index, int):
                    states.add(index)
                else:
                    dynamic = True
        elif isinstance(node, (ast.Raise, ast.Call)) and _effect(node):
            stores.add("*")
    return Statement(lines, owner, writes, reads, states, dynamic, stores)


def _effect(node: ast.AST) -> bool:
    """A statement that must run even if nobody reads what it assigns."""
    if isinstance(node, ast.Raise):
        return True
    func = node.func  # type: ignore[attr-defined]
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
        and func.value.id in _SIDE_EFFECTS


class Source(str):
    """Generated text that knows, for each of its lines, the index of the block that wrote
    it (None for function heads and tails), so that an exception raised in a function
    derived from the generated ones still names its block (`CompiledModel.register_lines`)."""

    owners: tuple[int | None, ...] = ()
    function: "Function | None" = None  # the text's one function, split, when known


def _source(lines: list[tuple[str, int | None]]) -> Source:
    text = Source("\n".join(line for line, _ in lines) + "\n")
    text.owners = tuple(owner for _, owner in lines)
    return text


def _indented(st: Statement) -> list[tuple[str, int | None]]:
    return [("    " + line, st.owner) for line in st.lines]


def observe_source(functions: dict[str, Function], signals: list[int],
                   name: str = "observe") -> Source:
    """Source of `observe(t, x, m, z)` (or `name`): the logged signals only (or any
    others), pruned from `outputs`."""
    outputs = functions["outputs"]
    body = [st for st in outputs.statements if not st.lines[0].startswith("return")]
    needed = {f"s{i}" for i in signals}
    kept: list[Statement] = []
    for st in reversed(body):
        if st.writes & needed or "*" in st.stores or not st.writes:
            kept.append(st)
            needed |= st.reads
    lines: list[tuple[str, int | None]] = [(f"def {name}({outputs.args}):", None)]
    for st in reversed(kept):
        lines += _indented(st)
    result = f"return [{', '.join(f's{i}' for i in signals)}]"
    lines.append(("    " + result, None))
    text = _source(lines)
    # What `split(text)[name]` would give, kept: the engine reads it again (which signals
    # are copies of states), and splitting a 10,000-block model's text again is not free.
    text.function = Function(name, outputs.args, kept[::-1] + [_analyse([result], None)])
    return text


def list_source(function: Function, name: str) -> str:
    """Source of `name(t, x_, m_, z_)`: a function of (t, x, m, z) taking Python lists.

    For small models the engine keeps its event-time values in lists; converting them to
    arrays only for the generated code to convert them back would cost more than the code.
    """
    # `m`: the whole array, as a list (history rings are read from it, `history_ring`).
    lines: list[tuple[str, int | None]] = [(f"def {name}(t, x_, m_, z_):", None),
                                           ("    m = m_", None)]
    for st in function.statements:
        if not _LIST_HEAD.match(st.lines[0]):
            lines += _indented(st)
    return _source(lines)


_LIST_HEAD = re.compile(r"^(x_|m_|z_) = (x|m|z)(\[:\d+\])?\.tolist\(\)$")


def component_source(function: Function, slot: str, index: int, name: str) -> str:
    """Source of `name(t, x_, m_, z_)`: one slot of a function's result (say g_[2] of zc),
    pruned to the statements it needs, taking its arrays as Python lists.

    Event location evaluates one zero crossing a dozen times per event: without the other
    crossings, the array conversions and the result list, each evaluation costs a fraction.
    """
    target = f"{slot}[{index}]"
    lines: list[tuple[str, int | None]] = [(f"def {name}(t, x_, m_, z_):", None),
                                           ("    m = m_", None), (f"    {slot} = {{}}", None)]
    for st in _slot_statements(function, slot, index):
        lines += _indented(st)
    lines.append((f"    return {target}", None))
    return _source(lines)


def component_states(function: Function, slot: str, index: int) -> list[int] | None:
    """The states (indices of x_) that `component_source`'s function reads, or None if it
    may read any (x_ indexed by a computed value, or used whole): event location
    interpolates only these at each trial time, however many states the model has."""
    found: set[int] = set()
    for st in _slot_statements(function, slot, index):
        if st.dynamic_state or any(_WHOLE_X.search(_X_SLOT.sub("", ln)) for ln in st.lines):
            return None
        found |= st.states
    return sorted(found)


_X_SLOT = re.compile(r"\bx_\[\d+\]")
_WHOLE_X = re.compile(r"\bx_?\b")  # x_ (or the array x) other than as x_[constant]


def _slot_statements(function: Function, slot: str, index: int) -> list[Statement]:
    """The statements of `function` that slot[index] of its result needs, in order."""
    target = f"{slot}[{index}]"
    body = [st for st in function.statements
            if not st.lines[0].startswith("return") and not _is_head(st, slot)]
    needed: set[str] = set()
    kept: list[Statement] = []
    for st in reversed(body):
        if target in st.stores or "*" in st.stores or st.writes & needed:
            kept.append(st)
            needed |= st.reads
    return kept[::-1]


def _is_head(st: Statement, slot: str) -> bool:
    """`x_ = x.tolist()` and the like, or the result's initialisation `g_ = [0.0] * n`."""
    first = st.lines[0]
    return bool(_LIST_HEAD.match(first)) or first.startswith(f"{slot} = [0.0] * ")


def moving_slots(function: Function, slot: str, count: int,
                 moving: frozenset[str] = frozenset({"t", "x", "x_"})) -> list[bool]:
    """For each slot `slot[k]` of a function's result, whether it may change along the
    flow: whether it reads t or the state (the names `moving`), directly or through
    earlier statements.

    A zero crossing that reads neither (a mode, a latched sign, a constant) has the same
    value at every point of an event's look-ahead, which then need not be repeated for it.
    """
    moving = set(moving)
    result = [False] * count
    prefix = slot + "["
    for st in function.statements:
        if not st.reads & moving:
            continue
        moving |= st.writes
        for store in st.stores:
            if store == "*":
                return [True] * count
            if store.startswith(prefix):
                result[int(store[len(prefix):-1])] = True
    return result


def jacobian_sparsity(functions: dict[str, Function]) -> list[tuple[int, int]] | None:
    """(i, j) pairs where d dx_i / d x_j may be nonzero (dx_i reads x_j); None if unknown."""
    deps: dict[str, frozenset[int]] = {}
    entries: list[tuple[int, int]] = []
    for st in functions["deriv"].statements:
        if st.dynamic_state:
            return None
        found = set(st.states)
        for name in st.reads:
            found |= deps.get(name, frozenset())
        for name in st.writes:
            deps[name] = deps.get(name, frozenset()) | found
        for store in st.stores:
            if store.startswith("dx_["):
                row = int(store[4:-1])
                entries += [(row, col) for col in found]
            elif store == "*":
                return None
    return entries
