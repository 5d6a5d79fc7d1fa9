"""The safe expression language of parameters and formulas, and how parameter values enter generated code."""
