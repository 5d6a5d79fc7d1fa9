"""The model's generated Python functions as C: a translator over the subset the blocks emit.

The code generator stays the single source of the model's equations (as for the numba
backend, `engine.native.codegen`): each generated function is parsed with `ast` and
written out as one C function of fixed signature over the engine's flat arrays. Signals
and block locals become C doubles (booleans are 0.0/1.0, as Python's comparisons read
them), parameter slots `_pN` read `c->P[N]`, the module's array constants become static
arrays (those a block writes, a Newton loop's warm start, live in the instance's work
array `c->W`), and an event entry `ev.append((block, 'kind'))` becomes `bs_log(c, block,
kind code)`. A `raise` records its message in the context and leaves the function; C has
no exceptions, so a formula's domain error gives NaN as in the numba backend.

A history ring's functions (transport delays) become calls of runtime/bs_history.c.
Anything outside the subset (a Python user block's function, numpy's linear algebra
beyond a solve) raises NotTranslatable naming the block whose statement it is.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field

import numpy as np

from blocksim.compiler import dataflow

# The C signatures (see runtime/bs_model.h).
MODEL_ARGS = "bs_ctx *c, double t, double *x, double *m, double *z, double *out"
EVENT_ARGS = "bs_ctx *c, double t, double *x, double *m, double *z, double *zn, int init"
SAMPLE_ARGS = "bs_ctx *c, double t, double *x, double *m, double *z, double *hits"
TIME_ARGS = "bs_ctx *c, double t, double *m"
MODEL_NAMES = ("deriv", "zc", "outputs", "observe", "probe")
EVENT_NAMES = ("update", "pre_event", "after_event")

_HEAD = re.compile(r"^(x_|m_|z_|zn_) = (x|m|z|zn)(\[:\d*\])?\.tolist\(\)$")
_BACK = re.compile(r"^(x|m)\[:\d*\] = (x_|m_)$")
_RESULT = re.compile(r"^(dx_|g_) = \[0\.0\] \* (\d+)$")
_MATH = {"sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log",
         "sqrt": "sqrt", "asin": "asin", "acos": "acos", "atan": "atan", "atan2": "atan2",
         "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "log10": "log10", "log2": "log2",
         "fabs": "fabs", "floor": "floor", "ceil": "ceil", "hypot": "hypot", "pow": "pow",
         "fmod": "fmod", "copysign": "copysign", "trunc": "trunc", "isfinite": "isfinite",
         "isnan": "isnan", "isinf": "isinf"}
# The formula functions (`expressions.SCALAR_FUNCTIONS`, as `_f_<name>`) and their C.
_FORMULAS = {"exp": "exp", "log": "bs_log_", "log10": "bs_log10", "log2": "bs_log2",
             "sqrt": "bs_sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "bs_asin",
             "acos": "bs_acos", "atan": "atan", "atan2": "atan2", "sinh": "sinh",
             "cosh": "cosh", "tanh": "tanh", "abs": "fabs", "sign": "bs_sign",
             "floor": "bs_floor", "ceil": "bs_ceil", "round": "bs_round", "mod": "bs_mod",
             "rem": "fmod", "hypot": "hypot", "pow": "bs_pow"}
# The history rings' functions (`blocktypes.history_ring`) and their C, with the kind of
# each argument: m, integer (i) or double (d).
_HISTORY = {"_hist_read": ("bs_hist_read", "miiiidid"), "_hist_due": ("bs_hist_due", "miiidd"),
            "_hist_later": ("bs_hist_later", "midd")}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _raise_message(exc: ast.expr | None) -> str:
    """The text a `raise` leaves in C: the exception's message as Python would show it
    (`algebraic loop: ...`, not the source `ArithmeticError('...' % _z)`), without the
    parts that format run-time values, which a constant C string cannot carry."""
    if exc is None:
        return "raise"
    arg = exc.args[0] if isinstance(exc, ast.Call) and exc.args else exc
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mod):
        arg = arg.left
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return ast.unparse(exc)[:200]
    text = re.sub(r"\s*\([^()]*%[-#0 +.\d]*[a-z][^()]*\)", "", arg.value)
    return re.sub(r"%[-#0 +.\d]*[a-z]", "?", text)[:200]


class NotTranslatable(Exception):
    """Generated code outside what the C translator takes; `owner` is the index of the
    block whose statement it is, when known."""

    def __init__(self, message: str, owner: int | None = None):
        super().__init__(message)
        self.owner = owner


@dataclass
class Constants:
    """The module's array constants as C: read-only ones static, written ones in W."""

    values: dict[str, np.ndarray]
    written: set[str] = field(default_factory=set)
    offsets: dict[str, int] = field(default_factory=dict)  # in W, of the written ones

    def shape(self, name: str) -> tuple[int, ...]:
        return self.values[name].shape

    def ref(self, name: str) -> str:
        return f"(c->W + {self.offsets[name]})" if name in self.written else name

    def w_size(self) -> int:
        return sum(self.values[n].size for n in self.written)

    def declarations(self) -> str:
        out = []
        for name in sorted(self.values):
            flat = self.values[name].astype(float).ravel()
            body = ", ".join(_float(v) for v in flat) or "0.0"
            qualifier = "static double" if name in self.written else "static const double"
            prefix = f"{name}_init" if name in self.written else name
            out.append(f"{qualifier} {prefix}[{max(flat.size, 1)}] = {{{body}}};")
        return "\n".join(out)

    def w_init(self) -> str:
        """C statements copying the written constants' initial values into W."""
        return "\n".join(f"    memcpy(W + {self.offsets[n]}, {n}_init, sizeof {n}_init);"
                         for n in sorted(self.written))


def _float(value: float) -> str:
    value = float(value)
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    text = repr(value)
    if "e" not in text and "." not in text:
        text += ".0"
    return text


class _Function:
    """One generated function's statements as C body lines."""

    def __init__(self, name: str, constants: Constants, kinds: list[str],
                 user_names: set[str]):
        self.name = name
        self.constants = constants
        self.kinds = kinds
        self.user_names = user_names
        self.locals: set[str] = set()
        self.loop_vars: set[str] = set()
        # np arrays of a network's linear solve: those a name holds at this point of the
        # text (a later scalar assignment makes it a scalar again), and all to declare
        self.arrays_local: dict[str, tuple[int, ...]] = {}
        self.arrays_decl: dict[str, tuple[int, ...]] = {}
        self.owner: int | None = None
        self.arrays = {"x", "m", "z", "zn", "hits", "out"}
        self.aliases: dict[str, str] = {}  # x_ -> x, dx_ -> out, ...
        self.ret = {"next_time": "double", "update": "int", "pre_event": "int",
                    "after_event": "int"}.get(name, "void")
        self.fail_return = {"double": "return NAN;", "int": "return 0;", "void": "return;"}[
            self.ret]

    # ----- expressions -----
    def expr(self, node: ast.AST) -> str:
        method = getattr(self, "_e_" + type(node).__name__, None)
        if method is None:
            raise NotTranslatable(f"{self.name}: {type(node).__name__} "
                                  f"({ast.unparse(node)[:60]})", self.owner)
        return method(node)

    def _e_Constant(self, node: ast.Constant) -> str:
        if isinstance(node.value, bool):
            return "1.0" if node.value else "0.0"
        if isinstance(node.value, (int, float)):
            return _float(node.value)
        raise NotTranslatable(f"{self.name}: constant {node.value!r}", self.owner)

    def _e_Name(self, node: ast.Name) -> str:
        name = node.id
        if name in self.arrays_local:
            return "arr" + name  # (a block's scalar local may have the same name)
        if name in ("inf",):
            return "INFINITY"
        if name == "nan":
            return "NAN"
        if name in ("t", "init", "changed"):
            return name
        if name in self.locals or name in self.loop_vars:
            return name
        if re.fullmatch(r"_p\d+", name):
            return f"c->P[{name[2:]}]"
        if name in self.aliases:
            return self.aliases[name]
        if name in self.arrays:
            return name
        if name in self.constants.values:
            return self.constants.ref(name)
        if name in self.user_names:
            raise NotTranslatable(f"{self.name} calls a Python function ({name})", self.owner)
        raise NotTranslatable(f"{self.name}: unknown name {name}", self.owner)

    def _e_BinOp(self, node: ast.BinOp) -> str:
        a, b = self.expr(node.left), self.expr(node.right)
        op = type(node.op)
        if op in _BINOPS:
            return f"({a} {_BINOPS[op]} {b})"
        if op is ast.Pow:
            return f"pow({a}, {b})"
        if op is ast.Mod:
            return f"bs_pymod({a}, {b})"
        if op is ast.FloorDiv:
            return f"floor({a} / {b})"
        raise NotTranslatable(f"{self.name}: operator {op.__name__}", self.owner)

    def _e_UnaryOp(self, node: ast.UnaryOp) -> str:
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            return f"(-{operand})"
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            return f"(!{operand})"
        raise NotTranslatable(f"{self.name}: operator {type(node.op).__name__}", self.owner)

    def _e_BoolOp(self, node: ast.BoolOp) -> str:
        op = " && " if isinstance(node.op, ast.And) else " || "
        return "(" + op.join(f"({self.expr(v)} != 0)" if not self._is_test(v)
                             else self.expr(v) for v in node.values) + ")"

    @staticmethod
    def _is_test(node: ast.AST) -> bool:
        return isinstance(node, (ast.Compare, ast.BoolOp)) or (
            isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))

    def _e_Compare(self, node: ast.Compare) -> str:
        parts, left = [], self.expr(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            if type(op) not in _CMP:
                raise NotTranslatable(f"{self.name}: comparison {type(op).__name__}",
                                      self.owner)
            right = self.expr(right_node)
            parts.append(f"({left} {_CMP[type(op)]} {right})")
            left = right
        return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"

    def _e_IfExp(self, node: ast.IfExp) -> str:
        return f"({self.test(node.test)} ? {self.expr(node.body)} : {self.expr(node.orelse)})"

    def test(self, node: ast.AST) -> str:
        text = self.expr(node)
        return text if self._is_test(node) else f"({text} != 0)"

    def _e_Subscript(self, node: ast.Subscript) -> str:
        base = node.value
        if not isinstance(base, ast.Name):
            raise NotTranslatable(f"{self.name}: subscript of {ast.unparse(base)}", self.owner)
        name = base.id
        index = node.slice
        if name in self.arrays_local:
            shape = self.arrays_local[name]
            parts = index.elts if isinstance(index, ast.Tuple) else [index]
            if len(parts) != len(shape):
                raise NotTranslatable(f"{self.name}: index of {name}", self.owner)
            flat = self.index(parts[0])
            for k in range(1, len(parts)):
                flat = f"({flat}) * {shape[k]} + {self.index(parts[k])}"
            return f"arr{name}[{flat}]"
        if name in self.constants.values:
            shape = self.constants.shape(name)
            ref = self.constants.ref(name)
            if isinstance(index, ast.Tuple):
                if len(index.elts) != len(shape):
                    raise NotTranslatable(f"{self.name}: index of {name}", self.owner)
                flat, stride = [], 1
                for k in reversed(range(len(shape))):
                    flat.append(f"{self.index(index.elts[k])} * {stride}" if stride != 1
                                else self.index(index.elts[k]))
                    stride *= shape[k]
                return f"{ref}[{' + '.join(reversed(flat))}]"
            if len(shape) != 1:
                raise NotTranslatable(f"{self.name}: row of {name}", self.owner)
            return f"{ref}[{self.index(index)}]"
        array = self._e_Name(base)
        if isinstance(index, ast.Slice):
            raise NotTranslatable(f"{self.name}: slice of {name}", self.owner)
        return f"{array}[{self.index(index)}]"

    def index(self, node: ast.AST) -> str:
        """An array index as a C integer expression."""
        if isinstance(node, ast.Constant) and isinstance(node.value, int) \
                and not isinstance(node.value, bool):
            return str(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "int" and len(node.args) == 1:
            return f"(long)({self.expr(node.args[0])})"
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult):
            return f"({self.index(node.left)} {_BINOPS[type(node.op)]} {self.index(node.right)})"
        return f"(long)({self.expr(node)})"

    def _e_Call(self, node: ast.Call) -> str:
        func = ast.unparse(node.func)
        args = node.args
        if node.keywords and func != "np.searchsorted":
            raise NotTranslatable(f"{self.name}: keyword arguments to {func}", self.owner)
        if func in ("min", "max") and len(args) >= 2:
            out = self.expr(args[0])
            for a in args[1:]:
                out = f"bs_{func}({out}, {self.expr(a)})"
            return out
        if func == "abs" and len(args) == 1:
            return f"fabs({self.expr(args[0])})"
        if func in ("float", "bool") and len(args) == 1:
            inner = self.expr(args[0])
            return f"((double)({inner}))" if func == "float" else f"(({inner}) != 0)"
        if func == "int" and len(args) == 1:
            return f"((double)(long)({self.expr(args[0])}))"
        if func.startswith("math.") and func[5:] in _MATH:
            return f"{_MATH[func[5:]]}({', '.join(self.expr(a) for a in args)})"
        if func.startswith("_f_") and func[3:] in _FORMULAS:
            return f"{_FORMULAS[func[3:]]}({', '.join(self.expr(a) for a in args)})"
        if func == "np.searchsorted" and len(args) == 2:
            side = "left"
            for kw in node.keywords:
                if kw.arg == "side" and isinstance(kw.value, ast.Constant):
                    side = kw.value.value
            if not isinstance(args[0], ast.Name) or args[0].id not in self.constants.values:
                raise NotTranslatable(f"{self.name}: searchsorted over "
                                      f"{ast.unparse(args[0])}", self.owner)
            table = args[0].id
            n = self.constants.values[table].size
            return (f"((double)bs_searchsorted({self.constants.ref(table)}, {n}, "
                    f"{self.expr(args[1])}, {1 if side == 'right' else 0}))")
        if func == "np.floor" and len(args) == 1:
            return f"floor({self.expr(args[0])})"
        if func in _HISTORY and len(args) == len(_HISTORY[func][1]):
            return self._history_call(func, args)
        if func in self.user_names:
            raise NotTranslatable(f"{self.name} calls a Python function ({func})", self.owner)
        raise NotTranslatable(f"{self.name}: call of {func}", self.owner)

    def _history_call(self, func: str, args: list[ast.expr]) -> str:
        """A history ring's reader (`history_ring`, C in runtime/bs_history.c): the ring's
        array m, its integer layout arguments and the times and values as doubles."""
        c_name, kinds = _HISTORY[func]
        if not (isinstance(args[0], ast.Name) and self._e_Name(args[0]) == "m"):
            raise NotTranslatable(f"{self.name}: a history ring outside m", self.owner)
        parts = ["m"] + [self.index(a) if kind == "i" else self.expr(a)
                         for a, kind in zip(args[1:], kinds[1:])]
        call = f"{c_name}({', '.join(parts)})"
        return f"((double){call})" if func == "_hist_due" else call

    # ----- statements -----
    def body(self, nodes: list[ast.stmt], depth: int) -> list[str]:
        out: list[str] = []
        for node in nodes:
            out += self.stmt(node, depth)
        return out

    def stmt(self, node: ast.stmt, depth: int) -> list[str]:
        pad = "    " * depth
        if isinstance(node, ast.Assign):
            return self._assign(node, pad)
        if isinstance(node, ast.AugAssign):
            target = self.target(node.target)
            value = self.expr(ast.BinOp(node.target, node.op, node.value))
            return [f"{pad}{target} = {value};"]
        if isinstance(node, ast.If):
            lines = [f"{pad}if ({self.test(node.test)}) {{"] + self.body(node.body, depth + 1)
            if node.orelse:
                lines += [f"{pad}}} else {{"] + self.body(node.orelse, depth + 1)
            return lines + [f"{pad}}}"]
        if isinstance(node, ast.For):
            return self._for(node, depth)
        if isinstance(node, ast.While):
            if node.orelse:
                raise NotTranslatable(f"{self.name}: while-else", self.owner)
            return ([f"{pad}while ({self.test(node.test)}) {{"] + self.body(node.body, depth + 1)
                    + [f"{pad}}}"])
        if isinstance(node, ast.Break):
            return [f"{pad}break;"]
        if isinstance(node, ast.Continue):
            return [f"{pad}continue;"]
        if isinstance(node, ast.Pass):
            return []
        if isinstance(node, ast.Try):
            # No exceptions in C: a failing formula gives NaN, which the code after it
            # tests (the Newton loops' residual checks), so the handler is not needed.
            if node.finalbody or node.orelse:
                raise NotTranslatable(f"{self.name}: try with else/finally", self.owner)
            return self.body(node.body, depth)
        if isinstance(node, ast.Raise):
            text = _raise_message(node.exc).replace("\\", "\\\\").replace('"', '\\"')
            return [f"{pad}{{ bs_fail(c, {self.owner if self.owner is not None else -1}, "
                    f"\"{text}\"); {self.fail_return} }}"]
        if isinstance(node, ast.Expr):
            return self._expr_stmt(node, pad)
        if isinstance(node, ast.Return):
            return self._return(node, pad)
        raise NotTranslatable(f"{self.name}: statement {type(node).__name__}", self.owner)

    def _for(self, node: ast.For, depth: int) -> list[str]:
        pad = "    " * depth
        it = node.iter
        if not (isinstance(node.target, ast.Name) and isinstance(it, ast.Call)
                and ast.unparse(it.func) == "range" and 1 <= len(it.args) <= 2
                and not node.orelse):
            raise NotTranslatable(f"{self.name}: loop {ast.unparse(node.iter)[:40]}",
                                  self.owner)
        var = node.target.id
        self.loop_vars.add(var)
        lo = self.expr(it.args[0]) if len(it.args) == 2 else "0.0"
        hi = self.expr(it.args[-1])
        return ([f"{pad}for ({var} = {lo}; {var} < {hi}; {var} += 1.0) {{"]
                + self.body(node.body, depth + 1) + [f"{pad}}}"])

    def target(self, node: ast.AST) -> str:
        if isinstance(node, ast.Name):
            if node.id in self.arrays or node.id in self.aliases:
                raise NotTranslatable(f"{self.name}: rebinding {node.id}", self.owner)
            self.locals.add(node.id)
            self.arrays_local.pop(node.id, None)  # a scalar from here on
            return node.id
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id in self.constants.values \
                    and node.value.id not in self.constants.written:
                raise NotTranslatable(f"{self.name}: writes {node.value.id}", self.owner)
            return self._e_Subscript(node)
        raise NotTranslatable(f"{self.name}: assignment to {ast.unparse(node)[:40]}",
                              self.owner)

    def _array_assign(self, target: str, call: ast.Call, pad: str) -> list[str] | None:
        """`np.zeros(shape)`, `np.empty(n)`, `np.full(n, v)` and `np.linalg.solve(A, b)`
        assigned to a local name (a physical network's linear solve), or None."""
        func = ast.unparse(call.func)
        if func not in ("np.zeros", "np.empty", "np.full", "np.linalg.solve"):
            return None
        if func == "np.linalg.solve":
            a, b = (arg.id if isinstance(arg, ast.Name) else None for arg in call.args[:2])
            if a not in self.arrays_local or b not in self.arrays_local:
                raise NotTranslatable(f"{self.name}: solve of {ast.unparse(call)[:40]}",
                                      self.owner)
            n = self.arrays_local[b][0]
            self._declare(target, (n,))
            return [f"{pad}bs_solve(arr{a}, arr{b}, arr{target}, {n});"]
        try:
            shape = ast.literal_eval(call.args[0])
        except ValueError:
            raise NotTranslatable(f"{self.name}: array shape {ast.unparse(call)[:40]}",
                                  self.owner) from None
        shape = tuple(shape) if isinstance(shape, tuple) else (int(shape),)
        self._declare(target, shape)
        size = math.prod(shape)
        if func == "np.empty":
            return []
        value = "0.0" if func == "np.zeros" else self.expr(call.args[1])
        return [f"{pad}for (long _k = 0; _k < {size}; _k++) arr{target}[_k] = {value};"]

    def _declare(self, name: str, shape: tuple[int, ...]) -> None:
        known = self.arrays_decl.get(name)
        if known is not None and known != shape:
            raise NotTranslatable(f"{self.name}: {name} changes shape", self.owner)
        self.arrays_local[name] = self.arrays_decl[name] = shape

    def _assign(self, node: ast.Assign, pad: str) -> list[str]:
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)):
            lines = self._array_assign(node.targets[0].id, node.value, pad)
            if lines is not None:
                return lines
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            target = node.targets[0]
            if not isinstance(node.value, ast.Tuple) or len(node.value.elts) != len(target.elts):
                raise NotTranslatable(f"{self.name}: unpacking {ast.unparse(node)[:40]}",
                                      self.owner)
            temps = [f"{{ double _tmp{k} = {self.expr(v)};" if k == 0 else
                     f"double _tmp{k} = {self.expr(v)};" for k, v in enumerate(node.value.elts)]
            sets = [f"{self.target(tg)} = _tmp{k};" for k, tg in enumerate(target.elts)]
            return [pad + " ".join(temps + sets) + " }"]
        value = self.expr(node.value)
        lines = []
        targets = [self.target(tg) for tg in node.targets]
        first = targets[-1]
        lines.append(f"{pad}{first} = {value};")
        for other in targets[:-1]:
            lines.append(f"{pad}{other} = {first};")
        return lines

    def _expr_stmt(self, node: ast.Expr, pad: str) -> list[str]:
        call = node.value
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "ev.append":
            entry = call.args[0] if len(call.args) == 1 else None
            if not (isinstance(entry, ast.Tuple) and len(entry.elts) == 2
                    and isinstance(entry.elts[1], ast.Constant)):
                raise NotTranslatable(f"{self.name}: event entry {ast.unparse(call)[:40]}",
                                      self.owner)
            kind = entry.elts[1].value
            if kind not in self.kinds:
                self.kinds.append(kind)
            return [f"{pad}bs_log(c, {self.index(entry.elts[0])}, {self.kinds.index(kind)});"]
        if isinstance(call, ast.Constant):
            return []  # a docstring or a bare constant
        raise NotTranslatable(f"{self.name}: expression statement {ast.unparse(call)[:40]}",
                              self.owner)

    def _return(self, node: ast.Return, pad: str) -> list[str]:
        value = node.value
        if self.name in EVENT_NAMES:
            if value is None or (isinstance(value, ast.Constant) and value.value is None):
                return [f"{pad}return 0;"]
            return [f"{pad}return ({self.test(value)}) ? 1 : 0;"]
        if self.name == "next_time":
            return [f"{pad}return {self.expr(value)};"]
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return [f"{pad}return;"]
        if isinstance(value, ast.Name) and value.id in self.aliases:
            return [f"{pad}return;"]  # dx_ / g_ are `out` itself
        if isinstance(value, ast.List):
            return [f"{pad}out[{k}] = {self.expr(v)};" for k, v in enumerate(value.elts)] \
                + [f"{pad}return;"]
        raise NotTranslatable(f"{self.name}: return {ast.unparse(value)[:40]}", self.owner)


def signature(name: str) -> str:
    if name in EVENT_NAMES:
        return f"static int bs_{name}({EVENT_ARGS})"
    if name == "sample":
        return f"static void bs_{name}({SAMPLE_ARGS})"
    if name == "next_time":
        return f"static double bs_{name}({TIME_ARGS})"
    return f"static void bs_{name}({MODEL_ARGS})"


def translate_function(fn: dataflow.Function, name: str, constants: Constants,
                       kinds: list[str], user_names: set[str]) -> str:
    """One generated function as the text of a C function (NotTranslatable if it cannot)."""
    tr = _Function(name, constants, kinds, user_names)
    if name == "sample":
        tr.aliases["hits_"] = "hits"
    body: list[str] = []
    for st in fn.statements:
        lines = dataflow.compiled_only(st.lines)
        if not lines:
            continue
        tr.owner = st.owner
        first = lines[0]
        head = _HEAD.match(first)
        if head and len(lines) == 1:
            tr.aliases[head.group(1)] = head.group(2)
            continue
        if _BACK.match(first) and len(lines) == 1:
            continue  # x_ and m_ are x and m themselves
        if first == "hits_ = hits":
            tr.aliases["hits_"] = "hits"
            continue
        result = _RESULT.match(first)
        if result and len(lines) == 1:
            tr.aliases[result.group(1)] = "out"
            body.append(f"    for (long _k = 0; _k < {result.group(2)}; _k++) out[_k] = 0.0;")
            continue
        try:
            tree = ast.parse("\n".join(lines))
        except SyntaxError as exc:
            raise NotTranslatable(f"{name}: {exc.msg}", st.owner) from None
        body += tr.body(tree.body, 1)
    if tr.ret == "int" and (not body or not body[-1].strip().startswith("return")):
        body.append("    return 0;")
    if tr.ret == "double" and (not body or not body[-1].strip().startswith("return")):
        body.append("    return INFINITY;")
    declared = sorted((tr.locals | tr.loop_vars) - {"changed"})
    decl = [f"    double {', '.join(declared)};"] if declared else []
    decl += [f"    double arr{name}[{max(math.prod(shape), 1)}];"
             for name, shape in sorted(tr.arrays_decl.items())]
    if name in EVENT_NAMES:
        decl.append("    double changed = 0.0;")
    unused = ["    (void)c; (void)t; (void)x; (void)m; (void)z;"]
    if name in MODEL_NAMES:
        unused[0] += " (void)out;"
    elif name in EVENT_NAMES:
        unused[0] += " (void)zn; (void)init;"
    elif name == "sample":
        unused[0] += " (void)hits;"
    else:
        unused = ["    (void)c; (void)t; (void)m;"]
    return "\n".join([signature(name) + " {"] + decl + unused + body + ["}"]) + "\n"
