"""The compiler: a diagram in, a frozen CompiledModel out (see `compile_diagram`)."""
from blocksim.compiler.compiled import CompiledModel, compile_diagram

__all__ = ["CompiledModel", "compile_diagram"]
