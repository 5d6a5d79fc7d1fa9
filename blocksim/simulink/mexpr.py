"""MATLAB expressions, as Simulink saves block parameters, into blocksim's expression
language (blocksim.expressions.language): translated, never evaluated.

What translates: numbers (1e-3, .5, eps, inf, pi), variables, + - * / ^ and their
element-wise forms, unary minus, comparisons, && || ~, parentheses, matrices [1 2; 3 4] with
MATLAB's whitespace rules ([1 -2] is two elements, [1 - 2] one), literal ranges [0:0.1:1],
transposes of vectors, and the common functions (sin, exp, sqrt, abs, mod, zeros(1,n), ...).
Anything else (strings, cell arrays, struct fields, indexing by a variable, calls of unknown
functions) raises Untranslatable with the reason, and the importer asks the user for a value.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

EPS = 2.220446049250313e-16
MAX_RANGE = 100_000

# MATLAB name -> blocksim name (same meaning, elementwise)
_FUNCS = {name: name for name in (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "log10",
    "log2", "sqrt", "abs", "sign", "floor", "ceil", "round", "mod", "rem", "hypot", "min", "max",
    "sum", "atan2")}
_FUNCS.update({"power": "pow"})
_CONSTANTS = {"pi": "pi", "inf": "inf", "Inf": "inf", "eps": repr(EPS), "true": "1",
              "false": "0"}
_RESERVED = {"and", "or", "not", "if", "else", "in", "is", "lambda", "for", "while", "def",
             "class", "return", "import", "from", "as", "with", "try", "except", "finally",
             "raise", "pass", "break", "continue", "del", "global", "nonlocal", "yield",
             "assert", "async", "await", "None", "True", "False", "e", "inf", "nan"}

_TOKEN = re.compile(r"""
    (?P<ws>[ \t]+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eEdD][+-]?\d+)?[ij]?)
  | (?P<name>[A-Za-z][A-Za-z0-9_]*)
  | (?P<op>\.\*|\./|\.\^|\.'|==|~=|<=|>=|&&|\|\||[-+*/^\\<>()\[\],;:'~&|=!{}.@"])
""", re.VERBOSE)


class Untranslatable(ValueError):
    """An expression outside what translates (the message says which part)."""


@dataclass
class Translation:
    """The blocksim text of an expression, the variables it uses, and, for a matrix
    literal, its rows of element texts (Zero-Pole lists, State-Space matrices)."""

    text: str
    names: set[str] = field(default_factory=set)
    rows: list[list[str]] | None = None


def _tokens(text: str) -> list[tuple[str, str, bool]]:
    """(kind, text, space_before) triples."""
    out, pos, space = [], 0, False
    text = text.replace("...", " ")
    while pos < len(text):
        if text[pos] in "\r\n":
            out.append(("op", ";", space))  # a new line inside brackets ends a row
            pos += 1
            space = False
            continue
        m = _TOKEN.match(text, pos)
        if not m:
            raise Untranslatable(f"unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind == "ws":
            space = True
        else:
            out.append((kind, m.group(), space))
            space = False
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.names: set[str] = set()
        self.bracket = 0  # inside [ ]: whitespace separates elements
        self.columns: dict[str, list[list[str]]] = {}  # column vectors written, by their text

    def peek(self, k: int = 0) -> tuple[str, str, bool]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("end", "", False)

    def take(self, value: str | None = None) -> tuple[str, str, bool]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise Untranslatable(f"expected '{value}' in {self.text!r}")
        self.i += 1
        return tok

    def at(self, *values: str) -> bool:
        return self.peek()[0] == "op" and self.peek()[1] in values

    def element_break(self) -> bool:
        """Inside brackets, whitespace before a token that starts a new element ends the
        current one ([1 -2], [a b], [1 (2)])."""
        if not self.bracket:
            return False
        kind, value, space = self.peek()
        if not space or kind == "end":
            return False
        if kind in ("num", "name") or value in ("(", "[", "~"):
            return True
        if value in ("+", "-"):
            nxt = self.peek(1)
            return not nxt[2]  # "+2" after a space: a signed element
        return False

    # precedence climbing, MATLAB's order
    def expr(self) -> str:
        left = self.and_expr()
        while self.at("||", "|") and not self.element_break():
            self.take()
            left = f"({left} or {self.and_expr()})"
        return left

    def and_expr(self) -> str:
        left = self.cmp_expr()
        while self.at("&&", "&") and not self.element_break():
            self.take()
            left = f"({left} and {self.cmp_expr()})"
        return left

    def cmp_expr(self) -> str:
        left = self.range_expr()
        while self.at("==", "~=", "<", "<=", ">", ">=") and not self.element_break():
            op = self.take()[1]
            op = "!=" if op == "~=" else op
            left = f"({left} {op} {self.range_expr()})"
        return left

    def range_expr(self) -> str:
        first = self.add_expr()
        if not self.at(":") or self.element_break():
            return first
        self.take()
        second = self.add_expr()
        third = None
        if self.at(":"):
            self.take()
            third = self.add_expr()
        start, step, stop = (first, "1", second) if third is None else (first, second, third)
        return _literal_range(start, step, stop)

    def add_expr(self) -> str:
        left = self.mul_expr()
        while self.at("+", "-") and not self.element_break():
            op = self.take()[1]
            left = f"{left} {op} {self.mul_expr()}"
        return left

    def mul_expr(self) -> str:
        left = self.unary()
        while self.at("*", "/", ".*", "./", "\\") and not self.element_break():
            op = self.take()[1]
            if op == "\\":
                raise Untranslatable("left division '\\' is not translated")
            right = self.unary()
            if op == "*" and left.startswith("[") and right.startswith("["):
                raise Untranslatable("a product of two vectors or matrices is not translated")
            if op in ("*", "/") and (_is_matrix(left) or _is_matrix(right)):
                if op == "/" or (_is_matrix(left) and _is_matrix(right)):
                    raise Untranslatable("matrix products are not translated")
            left = f"{left} {op.lstrip('.')} {right}"
        return left

    def unary(self) -> str:
        if self.at("-", "+"):
            op = self.take()[1]
            operand = self.unary()
            return f"-{operand}" if op == "-" else operand
        if self.at("~", "!"):
            self.take()
            return f"(not {self.unary()})"
        return self.power()

    def power(self) -> str:
        base = self.postfix()
        if self.at("^", ".^") and not self.element_break():
            self.take()
            if self.at("-", "+"):  # 2^-1
                sign = self.take()[1]
                exponent = ("-" if sign == "-" else "") + self.postfix()
            else:
                exponent = self.postfix()
            if self.at("^", ".^"):
                raise Untranslatable("chained powers a^b^c (MATLAB reads them left to right)")
            return f"({base} ** {exponent})"
        return base

    def postfix(self) -> str:
        value = self.primary()
        while self.at("'", ".'") and not self.peek()[2]:
            self.take()
            value = _transpose(value)
        return value

    def primary(self) -> str:
        kind, value, _ = self.peek()
        if kind == "num":
            self.take()
            return _number(value)
        if kind == "name":
            self.take()
            if self.at("(") and not (self.bracket and self.peek()[2]):
                return self.call(value)
            if value in _CONSTANTS:
                return _CONSTANTS[value]
            if value in ("NaN", "nan"):
                raise Untranslatable("NaN is not a parameter value blocksim accepts")
            if value in _RESERVED:
                raise Untranslatable(f"the name '{value}' is reserved in blocksim")
            self.names.add(value)
            return value
        if value == "(":
            self.take()
            saved, self.bracket = self.bracket, 0
            inner = self.expr()
            self.bracket = saved
            self.take(")")
            return inner if _is_atom(inner) else f"({inner})"
        if value == "[":
            return self.matrix()
        if kind == "end":
            raise Untranslatable("the expression ends too early")
        raise Untranslatable(f"'{value}' is not translated")

    def call(self, name: str) -> str:
        self.take("(")
        saved, self.bracket = self.bracket, 0
        args = []
        if not self.at(")"):
            args.append(self.expr())
            while self.at(","):
                self.take()
                args.append(self.expr())
        self.take(")")
        self.bracket = saved
        if name in ("zeros", "ones"):
            counts = [a for a in args if a.strip() != "1"] or ["1"]
            if len(counts) != 1:
                raise Untranslatable(f"{name}() of a matrix is not translated")
            return f"{name}({counts[0]})"
        if name == "fix":
            (arg,) = args
            return f"(sign({arg}) * floor(abs({arg})))"
        if name == "deg2rad":
            return f"({args[0]} * pi / 180)"
        if name == "rad2deg":
            return f"({args[0]} * 180 / pi)"
        if name == "exp" and len(args) == 1:
            return f"exp({args[0]})"
        if name in _FUNCS:
            return f"{_FUNCS[name]}({', '.join(args)})"
        if name in _CONSTANTS and not args:
            return _CONSTANTS[name]
        if len(args) == 1 and re.fullmatch(r"\d+", args[0]) and name not in _RESERVED:
            # a variable indexed by a literal, v(2): 0-based in blocksim
            self.names.add(name)
            return f"{name}[{int(args[0]) - 1}]"
        raise Untranslatable(f"the function or indexing '{name}(...)' is not translated")

    def matrix(self) -> str:
        self.take("[")
        self.bracket += 1
        rows: list[list[str]] = [[]]
        while not self.at("]"):
            if self.peek()[0] == "end":
                raise Untranslatable("a '[' is not closed")
            if self.at(";"):
                self.take()
                rows.append([])
                continue
            if self.at(","):
                self.take()
                continue
            rows[-1].append(self.expr())
        self.take("]")
        self.bracket -= 1
        rows = [r for r in rows if r]
        flat = [x for x in rows[0]] if len(rows) == 1 else None
        if not rows:
            return "[]"
        if len(rows) == 1:  # a row vector, possibly concatenating ranges
            items = [x for item in flat for x in _items(item)]
            return items[0] if len(items) == 1 else f"[{', '.join(items)}]"
        if all(len(r) == 1 for r in rows):  # a column vector: blocksim vectors have no orientation
            self.columns[f"[{', '.join(r[0] for r in rows)}]"] = [[r[0]] for r in rows]
            return f"[{', '.join(r[0] for r in rows)}]"
        if len({len(r) for r in rows}) > 1:
            raise Untranslatable("matrix rows of different lengths")
        return "[" + ", ".join("[" + ", ".join(r) + "]" for r in rows) + "]"


def _items(text: str) -> list[str]:
    """The elements a concatenated item contributes: a literal vector spreads out."""
    if text.startswith("[") and text.endswith("]") and "[" not in text[1:-1]:
        return [t.strip() for t in text[1:-1].split(",") if t.strip()]
    return [text]


def _is_atom(text: str) -> bool:
    return bool(re.fullmatch(r"[\w.]+(\[\d+\])?", text)) or (
        text.startswith("[") and text.endswith("]"))


def _is_matrix(text: str) -> bool:
    return text.startswith("[[")


def _number(text: str) -> str:
    text = text.replace("d", "e").replace("D", "e")
    if text[-1] in "ij":
        return text[:-1] + "j"
    value = float(text)
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _transpose(text: str) -> str:
    if _is_matrix(text):
        rows = _split_rows(text)
        if rows is None:
            raise Untranslatable("the transpose of a matrix expression is not translated")
        cols = list(zip(*rows))
        return "[" + ", ".join("[" + ", ".join(c) + "]" for c in cols) + "]"
    return text  # a scalar or a vector: blocksim vectors have no orientation


def _split_rows(text: str) -> list[list[str]] | None:
    inner = text[1:-1]
    rows = re.findall(r"\[([^\[\]]*)\]", inner)
    return [[x.strip() for x in row.split(",")] for row in rows] if rows else None


def _literal_range(start: str, step: str, stop: str) -> str:
    try:
        a, h, b = (float(eval_literal(x)) for x in (start, step, stop))
    except Untranslatable:
        raise Untranslatable("a range a:b over variables is not translated") from None
    if h == 0 or (b - a) / h < 0:
        return "[]"
    n = int(math.floor((b - a) / h * (1 + 1e-12) + 1e-10)) + 1
    if n > MAX_RANGE:
        raise Untranslatable(f"a range of {n} elements (at most {MAX_RANGE})")
    values = [a + k * h for k in range(n)]
    return "[" + ", ".join(_number(repr(v)) if not v.is_integer() else str(int(v))
                           for v in values) + "]"


def eval_literal(text: str) -> float:
    """The value of a translated text without names (a number, pi, eps...)."""
    from blocksim.errors import ExpressionError
    from blocksim.expressions.language import evaluate, names_in
    if names_in(text):
        raise Untranslatable("not a literal")
    try:
        return float(evaluate(text))
    except (ExpressionError, TypeError, ValueError) as exc:
        raise Untranslatable(str(exc)) from None


def translate(text: str) -> Translation:
    """The blocksim form of a MATLAB expression (Untranslatable says why not)."""
    source = text.strip()
    if not source:
        raise Untranslatable("the value is empty")
    if len(source) > 100_000:
        raise Untranslatable("the expression is longer than 100,000 characters")
    parser = _Parser(source)
    try:
        result = parser.expr()
    except RecursionError:
        raise Untranslatable("the expression is nested too deeply") from None
    if parser.peek()[0] != "end":
        raise Untranslatable(f"'{parser.peek()[1]}' is not translated here")
    rows = None
    if result in parser.columns:  # [0; 1]: rows kept (a State-Space B is n x 1)
        rows = parser.columns[result]
    elif result.startswith("["):
        rows = _split_rows(result) if _is_matrix(result) else [_items(result)]
    else:
        rows = [[result]]
    return Translation(_strip_outer(result), parser.names, rows)


def _strip_outer(text: str) -> str:
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for k, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(text) - 1:
                return text
        return text[1:-1]
    return text
