"""The compiler: a diagram in, a frozen CompiledModel out (see `compile_diagram`)."""
from blocksim.compiler.compiled import CompiledModel, check_run, compile_diagram
from blocksim.compiler.settings import check_settings

__all__ = ["CompiledModel", "check_run", "check_settings", "compile_diagram"]
