"""The safe expression language of block parameters and formulas: parsed with `ast`, never eval'ed.

Diagram files come from strangers, so text is parsed into a Python syntax tree, checked against a
whitelist of node types and evaluated by walking the tree here. Everything is a float or a numpy
float array; comparisons and `and`/`or`/`not` give 1.0/0.0. Every failure is an ExpressionError.
"""
from __future__ import annotations

import ast
import collections
import functools
import keyword
import math
import reprlib
import sys
import time
import warnings
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from blocksim.expressions import param_slots

from blocksim.expressions import scalar_functions
from blocksim.errors import ExpressionError

MAX_LENGTH = 10_000        # characters of expression text
MAX_DEPTH = 100            # levels of the syntax tree (keeps tree walks off the stack limit)
MAX_ELEMENTS = 10_000_000  # elements of any one array
MAX_WORK = 30_000_000      # array elements produced by one evaluation, in total (240 MB)
MAX_SECONDS = 2.0          # wall time of one evaluation

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "inf": math.inf}
"""Built-in constants. `inf` is reserved (limits are written with it); `pi` and `e` may be
shadowed by a diagram parameter or an Expression input of that name (SHADOWABLE), so a
formula of a restitution coefficient `e` reads the diagram's value."""
SHADOWABLE = frozenset({"pi", "e"})

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _count(n: Any) -> int:
    """An array length argument: a whole number from 0 to MAX_ELEMENTS."""
    if np.ndim(n) != 0 or not math.isfinite(n) or n != int(n) or n < 0:
        raise ValueError(f"the length must be a whole number >= 0, not {n!r}")
    if n > MAX_ELEMENTS:
        raise ValueError(f"the length {n:g} is too large (at most {MAX_ELEMENTS})")
    return int(n)


def _scalar(x: Any) -> float:
    if np.ndim(x) != 0:
        raise ValueError("the bounds must be scalars")
    return float(x)


def _round(x: Any) -> Any:
    """Round half away from zero, as MATLAB/Simulink do (numpy rounds half to even)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore"):
        t = np.trunc(x)
        r = np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)  # x - trunc(x) is exact
    return np.where(np.isfinite(x), r, x)


def _extreme(reduce: Callable, elementwise: Callable) -> Callable:
    def f(*args: Any) -> Any:
        if len(args) > 1:
            return functools.reduce(elementwise, args)
        if np.size(args[0]) == 0:
            raise ValueError("the array is empty")
        return reduce(args[0])
    return f


# name -> (numpy implementation, least and most number of arguments)
_FUNCTIONS: dict[str, tuple[Callable, int, float]] = {
    **{name: (f, 1, 1) for name, f in {
        "exp": np.exp, "log": np.log, "log10": np.log10, "log2": np.log2, "sqrt": np.sqrt,
        "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
        "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "abs": np.abs,
        "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "round": _round, "sum": np.sum,
        "array": lambda x: np.atleast_1d(np.asarray(x, dtype=float)),
        "zeros": lambda n: np.zeros(_count(n)), "ones": lambda n: np.ones(_count(n)),
    }.items()},
    **{name: (f, 2, 2) for name, f in {
        "atan2": np.arctan2, "mod": np.mod, "rem": np.fmod, "hypot": np.hypot, "pow": np.power,
    }.items()},
    "min": (_extreme(np.min, np.minimum), 1, math.inf),
    "max": (_extreme(np.max, np.maximum), 1, math.inf),
    "linspace": (lambda a, b, n: np.linspace(_scalar(a), _scalar(b), _count(n)), 3, 3),
}
_ARRAY_MAKERS = {"linspace", "zeros", "ones", "array"}  # not available in generated scalar code
_SLOW = (np.mod, np.fmod)  # up to microseconds per element: evaluated in chunks, on time
_CHUNK = 65_536

_BINOPS = {ast.Add: (np.add, "+"), ast.Sub: (np.subtract, "-"), ast.Mult: (np.multiply, "*"),
           ast.Div: (np.true_divide, "/"), ast.Pow: (np.power, "**"), ast.Mod: (np.mod, "%")}
_COMPARE = {ast.Lt: (np.less, "<"), ast.LtE: (np.less_equal, "<="), ast.Gt: (np.greater, ">"),
            ast.GtE: (np.greater_equal, ">="), ast.Eq: (np.equal, "=="),
            ast.NotEq: (np.not_equal, "!=")}
_ALLOWED = (ast.Expression, ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.BoolOp,
            ast.Compare, ast.IfExp, ast.List, ast.Tuple, ast.Call, ast.Subscript, ast.Load,
            ast.UAdd, ast.USub, ast.Not, ast.And, ast.Or, *_BINOPS, *_COMPARE)
_REFUSED = {ast.Attribute: "attribute access", ast.Lambda: "lambda",
            ast.keyword: "a keyword argument", **dict.fromkeys(
                (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp), "a comprehension"),
            ast.JoinedStr: "an f-string", ast.Starred: "a starred argument", ast.Slice: "a slice",
            ast.NamedExpr: "assignment (:=)", ast.Dict: "a dictionary", ast.Set: "a set",
            ast.FloorDiv: "operator '//'", ast.MatMult: "operator '@'", ast.BitAnd: "operator '&'",
            ast.BitOr: "operator '|'", ast.BitXor: "operator '^' (use ** for powers)",
            ast.LShift: "operator '<<'", ast.RShift: "operator '>>'", ast.Invert: "operator '~'",
            ast.Is: "operator 'is'", ast.IsNot: "operator 'is not'", ast.In: "operator 'in'",
            ast.NotIn: "operator 'not in'"}


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple = 3, 6, 6


def _q(text: Any) -> str:
    """The expression quoted for a one-line message, shortened if long."""
    text = text if isinstance(text, str) else _SHORT.repr(text)  # lists may nest deeply
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _fail(message: str) -> ExpressionError:
    return ExpressionError(" ".join(message.split("\n")))


def _check_node(node: ast.AST, text: str) -> None:
    """Refuse one syntax tree node unless it is part of the language."""
    kind = type(node)
    if kind in _REFUSED:
        raise _fail(f"{_REFUSED[kind]} is not allowed in {_q(text)}")
    if kind not in _ALLOWED:
        raise _fail(f"{kind.__name__} is not allowed in {_q(text)}")
    if kind is ast.Constant:
        value = node.value
        if isinstance(value, (str, bytes)):
            raise _fail(f"string literals are not allowed in {_q(text)}")
        if type(value) not in (int, float):
            raise _fail(f"'{value!r}' is not allowed (only numbers are) in {_q(text)}")
        if type(value) is int and abs(value) > sys.float_info.max:
            raise _fail(f"number too large in {_q(text)}")
    elif kind is ast.Call:
        if not isinstance(node.func, ast.Name):
            if isinstance(node.func, ast.Attribute):
                raise _fail(f"attribute access is not allowed in {_q(text)}")
            raise _fail(f"only named functions can be called in {_q(text)}")
        name = node.func.id
        if name not in _FUNCTIONS:
            raise _fail(f"'{name}' is not an allowed function in {_q(text)}")
        _, least, most = _FUNCTIONS[name]
        if not least <= len(node.args) <= most or node.keywords:
            if node.keywords:
                raise _fail(f"a keyword argument is not allowed in {_q(text)}")
            wanted = least if least == most else f"at least {least}"
            raise _fail(f"{name}() takes {wanted} argument{'s' if most > 1 else ''}, "
                        f"got {len(node.args)} in {_q(text)}")


def _too_many_digits(text: str) -> ExpressionError:
    """Python refuses integer literals longer than its int-string limit (4300 digits)."""
    return _fail(f"expression {_q(text)}: a number has more than "
                 f"{sys.get_int_max_str_digits()} digits")


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> ast.Expression:
    if not text.strip():  # (an import leaves the values it could not find empty, to be set)
        raise _fail("expression is empty: give it a value (--set NAME=VALUE, or in the "
                    "editor)")
    if len(text) > MAX_LENGTH:
        raise _fail(f"expression is too long ({len(text)} characters; at most {MAX_LENGTH})")
    try:
        with warnings.catch_warnings():  # e.g. "invalid decimal literal": an error follows anyway
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        if "integer string conversion" in str(exc.msg):
            raise _too_many_digits(text) from None
        where = f" at column {exc.offset}" if exc.offset else ""
        reason = exc.msg if len(exc.msg) < 80 else exc.msg[:77] + "..."
        raise _fail(f"expression {_q(text)}: syntax error ({reason}{where})") from None
    except ValueError as exc:  # the int-string limit, or a character the parser refuses
        if "integer string conversion" in str(exc):
            raise _too_many_digits(text) from None
        raise _fail(f"expression {_q(text)} cannot be parsed") from None
    except (OverflowError, RecursionError, MemoryError):
        raise _fail(f"expression {_q(text)} is too complex to parse") from None
    stack = [(tree, 0)]
    while stack:  # iterative, so deep trees cannot overflow the stack here
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _fail(f"expression {_q(text)} is nested too deeply (over {MAX_DEPTH} levels)")
        _check_node(node, text)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def parse(text: str) -> ast.Expression:
    """The validated syntax tree of `text` (shared and cached: do not modify it).

    Callers use it to inspect a formula; ExpressionError if it is not in the language.
    """
    if not isinstance(text, str):
        raise _fail(f"expected an expression string, got {type(text).__name__}")
    return _parse(text)


def names_in(text: str, constants: bool = False) -> set[str]:
    """The free variable names `text` uses (not functions; constants only if asked: a
    parameter may shadow pi or e): its dependencies."""
    tree = parse(text)
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    found = {node.id for node in ast.walk(tree)
             if isinstance(node, ast.Name) and id(node) not in called}
    return found if constants else found - CONSTANTS.keys()


def _fpe_reason(exc: FloatingPointError) -> str:
    """numpy's 'divide by zero encountered in log' etc. in the words of this language."""
    return next((reason for key, reason in (("divide", "division by zero"),
                 ("overflow", "overflow (result too large)")) if key in str(exc)),
                "math domain error (invalid value)")


def _as_number(value: Any, copy: bool = False) -> float | np.ndarray:
    """A float for scalars, a float64 array otherwise (ValueError/TypeError if not numeric)."""
    if type(value) is float:  # most values: no numpy needed
        return value
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"{type(value).__name__} is not a number")
    array = np.array(value, dtype=float) if copy else np.asarray(value, dtype=float)
    return float(array) if array.ndim == 0 else array


class _Evaluator:
    """Walks a validated tree; scalars stay scalars so that `if`, `and`, `or` stay lazy."""

    def __init__(self, text: str, names: Mapping[str, Any]):
        self.text, self.names, self.work = text, names, 0
        self.deadline = time.monotonic() + MAX_SECONDS

    def fail(self, what: str) -> ExpressionError:
        return _fail(f"{what} in {_q(self.text)}")

    def __call__(self, node: ast.AST) -> float | np.ndarray:
        return getattr(self, "_" + type(node).__name__)(node)

    def in_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise self.fail(f"takes too long to evaluate (over {MAX_SECONDS:g} s)")

    def out(self, value: Any, copy: bool = False) -> float | np.ndarray:
        value = _as_number(value, copy)
        size = value.size if isinstance(value, np.ndarray) else 1
        self.work += size
        if size > MAX_ELEMENTS or self.work > MAX_WORK:
            raise self.fail("arrays too large")
        self.in_time()
        return value

    def chunked(self, func: Callable, args: list) -> np.ndarray:
        """func over large arrays in pieces, on time: mod and rem cost microseconds per
        element when the quotient is huge (1e308 % 1e-300)."""
        parts = [a.ravel() for a in np.broadcast_arrays(*[np.asarray(a) for a in args])]
        result = np.empty(parts[0].size)
        for start in range(0, result.size, _CHUNK):
            piece = slice(start, start + _CHUNK)
            result[piece] = func(*(p[piece] for p in parts))
            self.in_time()
        return result.reshape(np.broadcast_shapes(*[np.shape(a) for a in args]))

    def apply(self, func: Callable, args: list, what: str, divides: bool = False) -> Any:
        shapes = [np.shape(a) for a in args]
        try:
            size = math.prod(np.broadcast_shapes(*shapes))
        except ValueError:
            shown = " and ".join(map(str, shapes))
            raise self.fail(f"{what}: array shapes {shown} do not match") from None
        if size > MAX_ELEMENTS:
            raise self.fail(f"{what}: arrays too large")
        if divides and np.any(np.equal(args[1], 0)):
            raise self.fail("division by zero")
        try:
            if func in _SLOW and size > _CHUNK:
                return self.out(self.chunked(func, args))
            return self.out(func(*args))
        except FloatingPointError as exc:
            in_function = f" in {what}" if what.endswith("()") else ""
            raise self.fail(_fpe_reason(exc) + in_function) from None
        except (ValueError, TypeError, IndexError, OverflowError) as exc:
            raise self.fail(f"{what}: {exc}") from None

    def _Constant(self, node: ast.Constant) -> float:
        return float(node.value)

    def _Name(self, node: ast.Name) -> float | np.ndarray:
        name = node.id
        if name in CONSTANTS and not (name in SHADOWABLE and name in self.names):
            return CONSTANTS[name]
        if name not in self.names:
            raise self.fail(f"'{name}' is a function; call it like {name}(...)"
                            if name in _FUNCTIONS else f"unknown name '{name}'")
        value = self.names[name]
        if _is_frozen(value):  # a resolved parameter: shared, never copied (it cannot change)
            self.work += value.size
            return value
        try:
            return self.out(value, copy=True)  # results never alias the caller's arrays
        except (ValueError, TypeError, OverflowError):
            raise self.fail(f"name '{name}' has a non-numeric value") from None

    def _BinOp(self, node: ast.BinOp) -> Any:
        func, symbol = _BINOPS[type(node.op)]
        return self.apply(func, [self(node.left), self(node.right)], f"operator '{symbol}'",
                          divides=symbol in ("/", "%"))

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self(node.operand)
        if isinstance(node.op, ast.Not):
            return self.out(np.equal(value, 0))
        return self.out(np.negative(value)) if isinstance(node.op, ast.USub) else value

    def _BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        result: Any = None
        for operand in node.values:
            truth = np.not_equal(self(operand), 0)
            result = truth if result is None else self.apply(
                np.logical_and if is_and else np.logical_or, [result, truth], "'and'/'or'")
            if np.ndim(result) == 0 and bool(result) != is_and:
                break  # short-circuit on scalars, like Python and the generated code
        return self.out(result)

    def _Compare(self, node: ast.Compare) -> Any:
        left, result = self(node.left), None
        for op, comparator in zip(node.ops, node.comparators):
            func, symbol = _COMPARE[type(op)]
            right = self(comparator)
            truth = self.apply(func, [left, right], f"operator '{symbol}'")
            result = truth if result is None else self.apply(np.logical_and, [result, truth], "")
            if np.ndim(result) == 0 and not result:
                break
            left = right
        return self.out(result)

    def _IfExp(self, node: ast.IfExp) -> Any:
        test = self(node.test)
        if np.ndim(test) == 0:
            return self(node.body) if test != 0 else self(node.orelse)
        return self.apply(lambda c, a, b: np.where(c != 0, a, b),
                          [test, self(node.body), self(node.orelse)], "'if ... else'")

    def _List(self, node: ast.List | ast.Tuple) -> np.ndarray:
        items = [self(item) for item in node.elts]
        if len({np.shape(item) for item in items}) > 1:
            raise self.fail("array rows of different lengths")
        if len(items) * np.size(items[0] if items else 0) > MAX_ELEMENTS:
            raise self.fail("arrays too large")
        return self.out(np.array(items, dtype=float))

    _Tuple = _List

    def _Subscript(self, node: ast.Subscript) -> Any:
        value, index = self(node.value), self(node.slice)
        if np.ndim(value) == 0:
            raise self.fail("a scalar cannot be indexed")
        if np.ndim(index) != 0 or not math.isfinite(index) or index != int(index):
            raise self.fail(f"index must be a whole number, not {index!r}")
        if not -len(value) <= index < len(value):
            raise self.fail(f"index {int(index)} out of range for length {len(value)}")
        return self.out(value[int(index)])

    def _Call(self, node: ast.Call) -> Any:
        name = node.func.id  # type: ignore[attr-defined]
        func = _FUNCTIONS[name][0]
        return self.apply(func, [self(arg) for arg in node.args], f"{name}()",
                          divides=name in ("mod", "rem"))


def _is_frozen(value: Any) -> bool:
    """A read-only float64 array: safe to share between scopes and results."""
    return isinstance(value, np.ndarray) and value.dtype == np.float64 \
        and not value.flags.writeable


def freeze(value: float | np.ndarray) -> float | np.ndarray:
    """`value` made read-only, so scopes and blocks can share it instead of copying it."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    return value


def evaluate(value: Any, names: Mapping[str, float | np.ndarray] = _EMPTY,
             _depth: int = 0) -> float | np.ndarray:
    """The numeric value of a parameter: a number, a (nested) list or an expression string.

    Scalars come back as Python float, arrays as float64 numpy arrays, so callers need not care
    how the diagram file spelled the value. `names` gives the variables an expression may use.
    A read-only array in `names` may come back as itself (a bare name: no copy); any other
    array result is new.
    """
    if isinstance(value, str):
        tree = parse(value)
        try:
            with np.errstate(all="raise", under="ignore"):
                return _Evaluator(value, names)(tree.body)
        except ExpressionError:
            raise
        except RecursionError:
            raise _fail(f"expression {_q(value)} is nested too deeply") from None
        except (ArithmeticError, ValueError, TypeError, IndexError, MemoryError) as exc:
            raise _fail(f"cannot evaluate {_q(value)}: {exc}") from None
    if isinstance(value, (list, tuple)):
        if all(type(item) is float or (type(item) is int and abs(item) < 2 ** 1023)
               for item in value):
            return np.array(value, dtype=float)  # a plain vector: the common case, fast
        if _depth >= MAX_DEPTH:
            raise _fail(f"array nested too deeply (over {MAX_DEPTH} levels) in {_q(value)}")
        if len(value) > MAX_ELEMENTS:
            raise _fail(f"array too large ({len(value)} elements; at most {MAX_ELEMENTS})")
        items = [evaluate(item, names, _depth + 1) for item in value]
        if sum(np.size(item) for item in items) > MAX_ELEMENTS:
            raise _fail(f"array too large (more than {MAX_ELEMENTS} elements) in {_q(value)}")
        if len({np.shape(item) for item in items}) > 1:
            raise _fail(f"array rows of different lengths in {_q(value)}")
        return np.array(items, dtype=float)
    try:
        return _as_number(value, copy=True)
    except (ValueError, TypeError, OverflowError):
        raise _fail(f"not a number: {_q(value)} ({type(value).__name__})") from None


def _dependencies(value: Any) -> set[str]:
    """The names a parameter value (an expression, or nested lists of them) refers to."""
    found: set[str] = set()
    stack = [(value, 0)]
    while stack:  # iterative: a file may nest lists deeper than Python's stack
        item, depth = stack.pop()
        if isinstance(item, str):
            found |= names_in(item, constants=True)
        elif isinstance(item, (list, tuple)) and not all(type(v) in (int, float) for v in item):
            if depth >= MAX_DEPTH:
                raise _fail(f"array nested too deeply (over {MAX_DEPTH} levels)")
            stack.extend((v, depth + 1) for v in item)
    return found


def resolve_parameters(params: Mapping[str, Any], overrides: Mapping[str, Any] | None = None,
                       source: str = "", scope: Mapping[str, Any] = _EMPTY,
                       on_value: Callable[[str, Any], None] | None = None
                       ) -> dict[str, float | np.ndarray]:
    """Evaluate named parameters, which may refer to each other in any order.

    `overrides` (from `--set NAME=VALUE`) replace values before resolution. `scope` holds
    names already resolved around them (a subsystem sees its diagram's parameters); it is
    read, never copied, and `params` shadow it. Results are read-only, so inner scopes and
    blocks share them. `on_value(name, value)` sees each value as soon as it exists (the
    compiler keeps a memory budget with it). Errors name the parameter, the dependency cycle
    or the unknown override, prefixed by `source` if given.
    """
    prefix = f"{source}: " if source else ""
    values = dict(params)
    for name in values:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise _fail(f"{prefix}parameter name {name!r} is not a valid identifier")
        if name in CONSTANTS and name not in SHADOWABLE:
            raise _fail(f"{prefix}parameter name '{name}' clashes with the constant {name}")
    for name, value in (overrides or {}).items():
        if name not in values:
            known = ", ".join(sorted(values)) or "(none)"
            raise _fail(f"{prefix}unknown parameter '{name}'; known: {known}")
        values[name] = value
    done: dict[str, float | np.ndarray] = {}
    visible = collections.ChainMap(done, scope)  # what an expression sees: own names first

    def dependencies(name: str) -> list[str]:
        try:
            return sorted(_dependencies(values[name]) & values.keys())
        except ExpressionError as exc:
            raise _fail(f"{prefix}parameter '{name}': {exc}") from None

    def finish(name: str) -> None:
        try:
            done[name] = freeze(evaluate(values[name], visible))
        except ExpressionError as exc:
            raise _fail(f"{prefix}parameter '{name}': {exc}") from None
        if on_value is not None:
            on_value(name, done[name])

    for root in values:  # depth first, with an explicit stack: chains may be thousands long
        if root in done:
            continue
        path, on_path, pending = [root], {root}, [iter(dependencies(root))]
        while path:
            dep = next(pending[-1], None)
            if dep is None:
                pending.pop()
                on_path.discard(path[-1])
                finish(path.pop())
            elif dep in on_path:
                ring = path[path.index(dep):] + [dep]
                if len(ring) > 12:  # a long cycle: its start and end, and its length
                    ring = ring[:5] + [f"... ({len(ring) - 1} parameters) ..."] + ring[-5:]
                cycle = " -> ".join(ring)
                raise _fail(f"{prefix}parameters refer to each other in a cycle: {cycle}")
            elif dep not in done:
                path.append(dep)
                on_path.add(dep)
                pending.append(iter(dependencies(dep)))
    return {name: done[name] for name in values}


# ---- code generation ---------------------------------------------------------------------------

# The float functions generated code calls (`_f_<name>`): see scalar_functions.py.
SCALAR_FUNCTIONS = scalar_functions.SCALAR_FUNCTIONS


def _literal(value: float) -> str:
    text = repr(float(value))  # round-trips exactly; inf and nan print as names the caller binds
    return f"({text})" if text.startswith("-") else text


def to_code(text: str, name_map: Mapping[str, str],
            constants: Mapping[str, float | np.ndarray] = _EMPTY) -> str:
    """Translate a scalar formula into a Python expression for generated simulation code.

    Inputs (keys of `name_map`) become the given code, `constants` become exact float literals
    and functions become SCALAR_FUNCTIONS names, so the code never refers to anything else.
    """
    def fail(what: str) -> ExpressionError:
        return _fail(f"{what} in {_q(text)}")

    def code(node: ast.AST) -> str:
        if isinstance(node, ast.Constant):
            return _literal(node.value)
        if isinstance(node, ast.Name):
            name = node.id
            shadowed = name in SHADOWABLE and (name in name_map or name in constants)
            if name in CONSTANTS and not shadowed:
                return _literal(CONSTANTS[name])
            if name in name_map:
                target = str(name_map[name])
                return target if target.isidentifier() else f"({target})"
            if name in constants:
                try:
                    value = _as_number(constants[name])
                except (ValueError, TypeError, OverflowError):
                    raise fail(f"constant '{name}' is not a number") from None
                if np.ndim(value):
                    raise fail(f"constant '{name}' is an array; formulas take scalars only")
                finite = math.isfinite(value)  # inf stays a name, as in `blockspec.lit`
                return (finite and param_slots.slot(float(value))) or _literal(value)
            raise fail(f"'{name}' is a function; call it like {name}(...)"
                       if name in _FUNCTIONS else f"unknown name '{name}'")
        if isinstance(node, ast.BinOp):
            left, right = code(node.left), code(node.right)
            if isinstance(node.op, ast.Pow):
                return f"_f_pow({left}, {right})"
            if isinstance(node.op, ast.Mod):
                return f"_f_mod({left}, {right})"
            return f"({left} {_BINOPS[type(node.op)][1]} {right})"
        if isinstance(node, ast.UnaryOp):
            operand = code(node.operand)
            if isinstance(node.op, ast.Not):
                return f"(0.0 if {operand} else 1.0)"
            return f"(-{operand})" if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BoolOp):
            joined = f" {'and' if isinstance(node.op, ast.And) else 'or'} ".join(
                code(v) for v in node.values)
            return f"(1.0 if {joined} else 0.0)"
        if isinstance(node, ast.Compare):
            parts = [code(node.left)]
            for op, comparator in zip(node.ops, node.comparators):
                parts += [_COMPARE[type(op)][1], code(comparator)]
            return f"(1.0 if ({' '.join(parts)}) else 0.0)"
        if isinstance(node, ast.IfExp):
            return f"({code(node.body)} if {code(node.test)} else {code(node.orelse)})"
        if isinstance(node, ast.Subscript):
            return f"_f_index({code(node.value)}, {code(node.slice)})"
        if isinstance(node, ast.Call):
            name = node.func.id  # type: ignore[attr-defined]
            if name in _ARRAY_MAKERS:
                raise fail(f"{name}() makes an array; formulas take scalars only")
            return f"_f_{name}({', '.join(code(arg) for arg in node.args)})"
        raise fail("array literals are not allowed in formulas")  # List or Tuple

    tree = parse(text)
    try:
        return code(tree.body)
    except RecursionError:
        raise _fail(f"expression {_q(text)} is nested too deeply") from None
