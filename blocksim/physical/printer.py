"""sympy expressions printed as the Python of generated code.

Only what the physical passes produce is printed: arithmetic, the functions of the
expression language (as the `_f_` functions of generated code, which raise on domain errors
in the Python backend and follow IEEE arithmetic in numba), if-expressions (Piecewise) and
conditions. Each symbol is printed by a callback (a state slot, a parameter slot, a local
variable), so the printer knows nothing of where values live.
"""
from __future__ import annotations

from typing import Callable

import sympy as sp

_FUNCTIONS = {sp.exp: "_f_exp", sp.log: "_f_log", sp.sin: "_f_sin", sp.cos: "_f_cos",
              sp.tan: "_f_tan", sp.asin: "_f_asin", sp.acos: "_f_acos", sp.atan: "_f_atan",
              sp.sinh: "_f_sinh", sp.cosh: "_f_cosh", sp.tanh: "_f_tanh", sp.Abs: "_f_abs",
              sp.sign: "_f_sign", sp.atan2: "_f_atan2"}
_RELATIONS = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">",
              sp.GreaterThan: ">=", sp.Equality: "==", sp.Unequality: "!="}


class Printer:
    """Prints expressions with `symbol(sym) -> str` for every free symbol."""

    def __init__(self, symbol: Callable[[sp.Symbol], str]):
        self.symbol = symbol

    def __call__(self, expr: sp.Basic) -> str:
        return self.p(expr)

    def p(self, e: sp.Basic) -> str:
        if e.is_Symbol:
            return self.symbol(e)
        if e.is_Number or e in (sp.pi, sp.E):
            value = float(e)
            text = repr(value)
            return f"({text})" if value < 0 or text in ("inf", "-inf", "nan") else text
        if e is sp.true or e == sp.true:
            return "True"
        if e is sp.false or e == sp.false:
            return "False"
        if e.is_Add:
            return "(" + " + ".join(self.p(a) for a in e.args) + ")"
        if e.is_Mul:
            return self._mul(e)
        if e.is_Pow:
            return self._pow(e)
        if isinstance(e, sp.Piecewise):
            return self._piecewise(e)
        if isinstance(e, (sp.Min, sp.Max)):
            name = "min" if isinstance(e, sp.Min) else "max"
            return f"{name}({', '.join(self.p(a) for a in e.args)})"
        if isinstance(e, sp.And):
            return "(" + " and ".join(self.p(a) for a in e.args) + ")"
        if isinstance(e, sp.Or):
            return "(" + " or ".join(self.p(a) for a in e.args) + ")"
        if isinstance(e, sp.Not):
            return f"(not {self.p(e.args[0])})"
        if type(e) in _RELATIONS:
            return f"({self.p(e.lhs)} {_RELATIONS[type(e)]} {self.p(e.rhs)})"
        if isinstance(e, sp.Function) and e.func in _FUNCTIONS:
            return f"{_FUNCTIONS[e.func]}({', '.join(self.p(a) for a in e.args)})"
        raise ValueError(f"cannot generate code for {e!r}")

    def _mul(self, e: sp.Mul) -> str:
        numerator, denominator = [], []
        for factor in e.args:
            if factor.is_Pow and factor.exp.is_Number and factor.exp < 0:
                denominator.append(sp.Pow(factor.base, -factor.exp))
            elif factor.is_Rational and not factor.is_Integer:
                numerator.append(sp.Integer(factor.p))
                denominator.append(sp.Integer(factor.q))
            else:
                numerator.append(factor)
        text = " * ".join(self.p(f) for f in numerator) if numerator else "1.0"
        if denominator:
            text += " / (" + " * ".join(self.p(f) for f in denominator) + ")"
        return f"({text})"

    def _pow(self, e: sp.Pow) -> str:
        base, exp = e.base, e.exp
        if exp == sp.Rational(1, 2):
            return f"_f_sqrt({self.p(base)})"
        if exp.is_Integer and 0 < exp <= 4:
            b = self.p(base)
            return "(" + " * ".join([b] * int(exp)) + ")"
        if exp.is_Number and exp < 0:
            return f"(1.0 / {self._pow(sp.Pow(base, -exp))})"
        return f"_f_pow({self.p(base)}, {self.p(exp)})"

    def _piecewise(self, e: sp.Piecewise) -> str:
        text = None
        for value, cond in reversed(e.args):
            if text is None or cond == sp.true:
                text = self.p(value)  # the last piece: its condition holds otherwise
            else:
                text = f"({self.p(value)} if {self.p(cond)} else {text})"
        return text
