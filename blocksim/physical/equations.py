"""Component equations as sympy expressions, translated from the safe expression language.

The text is parsed by `blocksim.expressions.language` rules (Python syntax, a whitelist of
nodes, never eval; sympy's own parser, which evals, is never used): an equation is
`lhs = rhs`, a condition is a comparison or a discrete variable. Besides the language's
functions, an equation may call `der(x)` and `pre(x)`, and read `time`, a connector's
variables as `p.v`, signal inputs and outputs by port name.

Conditions (`a if s < 0 else b`, a `When` condition) become Boolean expressions. A relation
that involves a continuous quantity is latched Modelica-style: it becomes a Boolean symbol
that the generated code reads from the engine's latched sign of `g = lhs - rhs`, which
changes only at located events. A relation of discrete quantities only is evaluated as is.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable

import sympy as sp

from blocksim.errors import ExpressionError
from blocksim.expressions.language import CONSTANTS, MAX_DEPTH, MAX_LENGTH

TIME = sp.Symbol("time", real=True)

_FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], int]] = {
    "exp": (sp.exp, 1), "log": (sp.log, 1), "log10": (lambda x: sp.log(x, 10), 1),
    "sqrt": (sp.sqrt, 1), "sin": (sp.sin, 1), "cos": (sp.cos, 1), "tan": (sp.tan, 1),
    "asin": (sp.asin, 1), "acos": (sp.acos, 1), "atan": (sp.atan, 1), "atan2": (sp.atan2, 2),
    "sinh": (sp.sinh, 1), "cosh": (sp.cosh, 1), "tanh": (sp.tanh, 1), "abs": (sp.Abs, 1),
    "sign": (sp.sign, 1), "min": (sp.Min, 2), "max": (sp.Max, 2),
    "hypot": (lambda a, b: sp.sqrt(a**2 + b**2), 2),
}
_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_SYMPY_REL = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}
_ALLOWED = (ast.Expression, ast.Constant, ast.Name, ast.Attribute, ast.BinOp, ast.UnaryOp,
            ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.Load, ast.Add, ast.Sub,
            ast.Mult, ast.Div, ast.Pow, ast.UAdd, ast.USub, ast.Not, ast.And, ast.Or,
            *_OPS)
_REFUSED = {ast.BitXor: "operator '^' is not allowed (use ** for powers)",
            ast.Lambda: "lambda is not allowed", ast.Subscript: "indexing is not allowed",
            ast.keyword: "a keyword argument is not allowed"}
# One '=' that is not part of '==', '<=', '>=' or '!='.
_EQUALS = re.compile(r"(?<![<>=!])=(?!=)")


@dataclass(frozen=True)
class Relation:
    """A latched relation: `symbol` stands for `g op 0` with g's sign held between events."""

    symbol: sp.Symbol
    g: sp.Expr
    op: str
    owner: str


class Scope:
    """The names one component instance's equations may read (see `Translator`)."""

    def __init__(self, owner: str, names: dict[str, sp.Expr], continuous: set[sp.Symbol],
                 der: Callable[[sp.Symbol], sp.Symbol], pre: Callable[[sp.Symbol], sp.Symbol],
                 relation: Callable[[sp.Expr, str, str], sp.Symbol],
                 derivable: set[sp.Symbol]):
        self.owner = owner
        self.names = names          # local name -> symbol or value
        self.continuous = continuous  # symbols whose relations must be latched
        self.der, self.pre, self.relation = der, pre, relation
        self.derivable = derivable  # symbols der() may take


def split_equation(text: str, where: str) -> tuple[str, str]:
    """'lhs = rhs' as its two sides (ExpressionError naming `where` if not one '=')."""
    if not isinstance(text, str):
        raise ExpressionError(f"{where}: an equation must be text, got {type(text).__name__}")
    parts = _EQUALS.split(text)
    if len(parts) != 2:
        raise ExpressionError(f"{where}: {text!r} is not an equation 'lhs = rhs' (one '=')")
    return parts[0], parts[1]


def _tree(text: str, where: str) -> ast.AST:
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"{where}: the text is too long ({len(text)} characters)")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        reason = getattr(exc, "msg", None) or "cannot be parsed"
        raise ExpressionError(f"{where}: {text.strip()!r}: syntax error ({reason})") from None
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExpressionError(f"{where}: {text.strip()!r} is nested too deeply")
        if not isinstance(node, _ALLOWED):
            what = _REFUSED.get(type(node), f"{type(node).__name__} is not allowed")
            raise ExpressionError(f"{where}: {what} in {text.strip()!r}")
        if isinstance(node, ast.Constant) and type(node.value) not in (int, float, bool):
            raise ExpressionError(f"{where}: only numbers are allowed, not "
                                  f"{node.value!r}, in {text.strip()!r}")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree.body


class Translator:
    """Turns one component's equation and condition text into sympy (see module doc)."""

    def __init__(self, scope: Scope, where: str):
        self.scope, self.where = scope, where
        self.text = ""

    def fail(self, what: str) -> ExpressionError:
        return ExpressionError(f"{self.where}: {what} in {self.text.strip()!r}")

    def equation(self, text: str) -> sp.Expr:
        """The residual lhs - rhs of 'lhs = rhs'."""
        lhs, rhs = split_equation(text, self.where)
        self.text = text
        return self.expr(_tree(lhs, self.where)) - self.expr(_tree(rhs, self.where))

    def expression(self, text: str) -> sp.Expr:
        self.text = str(text)
        return self.expr(_tree(self.text, self.where))

    def condition(self, text: str) -> sp.Basic:
        self.text = text
        return self.cond(_tree(text, self.where))

    # ----- numbers -----
    def name(self, node: ast.AST) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return f"{node.value.id}.{node.attr}"
        raise self.fail("only a connector's variable (like p.v) may be written with a dot")

    def lookup(self, name: str) -> sp.Expr:
        if name == "time":
            return TIME
        names = self.scope.names
        if name in names:
            return names[name]
        if name in CONSTANTS and name != "inf":
            return sp.Float(CONSTANTS[name]) if name != "pi" else sp.pi
        raise self.fail(f"unknown name '{name}'")

    def expr(self, node: ast.AST) -> sp.Expr:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                return sp.Integer(int(value))
            return sp.Integer(value) if isinstance(value, int) else sp.Float(value)
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = self.lookup(self.name(node))
            if isinstance(value, sp.Basic) and value.is_Boolean:
                raise self.fail(f"the condition '{self.name(node)}' is used as a number")
            return value
        if isinstance(node, ast.BinOp):
            a, b = self.expr(node.left), self.expr(node.right)
            op = type(node.op)
            if op is ast.Add:
                return a + b
            if op is ast.Sub:
                return a - b
            if op is ast.Mult:
                return a * b
            if op is ast.Div:
                return a / b
            return a ** b
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                raise self.fail("'not' gives a condition, not a number")
            value = self.expr(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.IfExp):
            return sp.Piecewise((self.expr(node.body), self.cond(node.test)),
                                (self.expr(node.orelse), True))
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.fail("a condition is used as a number (write 'a if condition else b')")

    def call(self, node: ast.Call) -> sp.Expr:
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise self.fail("only named functions with plain arguments can be called")
        name = node.func.id
        if name in ("der", "pre"):
            if len(node.args) != 1:
                raise self.fail(f"{name}() takes one variable")
            target = self.lookup(self.name(node.args[0]))
            if name == "der":
                if target not in self.scope.derivable:
                    raise self.fail(f"der() of '{self.name(node.args[0])}', which is not a "
                                    f"continuous variable")
                return self.scope.der(target)
            if not isinstance(target, sp.Symbol):
                raise self.fail(f"pre() of '{self.name(node.args[0])}', which is not a variable")
            return self.scope.pre(target)
        if name not in _FUNCTIONS:
            raise self.fail(f"'{name}' is not an allowed function")
        function, count = _FUNCTIONS[name]
        if len(node.args) != count:
            raise self.fail(f"{name}() takes {count} argument{'s' if count > 1 else ''}")
        return function(*(self.expr(arg) for arg in node.args))

    # ----- conditions -----
    def cond(self, node: ast.AST) -> sp.Basic:
        if isinstance(node, ast.Constant):
            return sp.true if node.value else sp.false
        if isinstance(node, ast.BoolOp):
            parts = [self.cond(v) for v in node.values]
            return sp.And(*parts) if isinstance(node.op, ast.And) else sp.Or(*parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return sp.Not(self.cond(node.operand))
        if isinstance(node, ast.Compare):
            left = self.expr(node.left)
            parts = []
            for op, right_node in zip(node.ops, node.comparators):
                right = self.expr(right_node)
                parts.append(self.relation(left, _OPS[type(op)], right))
                left = right
            return sp.And(*parts) if len(parts) > 1 else parts[0]
        value = self.expr(node)
        if self._continuous(value):
            raise self.fail("a continuous value is used as a condition (compare it, e.g. x > 0)")
        return sp.Ne(value, 0)

    def _continuous(self, value: sp.Basic) -> bool:
        return bool(value.free_symbols & self.scope.continuous) or value.has(TIME)

    def relation(self, left: sp.Expr, op: str, right: sp.Expr) -> sp.Basic:
        g = left - right
        if not self._continuous(g):
            return _SYMPY_REL[op](g, 0)
        if op in ("==", "!="):
            raise self.fail(f"'{op}' on a continuous value never holds at an instant a "
                            f"solver can find (use <, <=, > or >=)")
        return self.scope.relation(g, op, self.scope.owner)
