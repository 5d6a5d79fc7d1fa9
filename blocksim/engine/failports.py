"""Which port a run's failure concerns, so an editor can mark it next to the block.

A non-finite value is found per signal, and a signal is one output port ("block.port"):
that port is exact. A block's formula that raises (a math function outside its domain, an
AlgebraicConstraint whose Newton iteration does not converge, a user block's function
failing) is known by its generated line, which names the block; while the signals are
computed, the value that could not be computed is the block's output, named when the
block has only one output port. Both backends find the port here, from the same Python
functions, so they report the same one.
"""
from __future__ import annotations

from blocksim.compiler.compiled import GENERATED_FILENAME, CompiledModel

# Generated functions that compute signals (outputs, the sampled ones, a delay's probe):
# a failure there is the failure to compute an output.
SIGNAL_FUNCTIONS = frozenset({"outputs", "sample", "probe"})


def signal_port(model: CompiledModel, index: int) -> tuple[str, str]:
    """(block, output port) of signal `index`."""
    block, _, port = model.signal_names[index].rpartition(".")
    return block, port.split("[", 1)[0]


def output_ports(model: CompiledModel, block: str) -> list[str]:
    """The output ports of a block that carry signals, in the model's order."""
    if "output_ports" not in model.derived:
        found: dict[str, dict[str, None]] = {}
        for index in range(len(model.signal_names)):
            owner, port = signal_port(model, index)
            found.setdefault(owner, {})[port] = None
        model.derived["output_ports"] = {b: list(p) for b, p in found.items()}
    return model.derived["output_ports"].get(block, [])


def exception_origin(model: CompiledModel, exc: BaseException) -> tuple[str | None, str | None]:
    """(block, port) of a formula that raised `exc` during a run (port None when the
    failure is not the computing of one output port)."""
    block = model.block_of_exception(exc)
    if block is None:
        return None, None
    function = None
    registered = model.derived.get("line_owners", {})  # `CompiledModel.register_lines`
    tb = exc.__traceback__
    while tb is not None:  # the deepest generated (or registered) function it went through
        code = tb.tb_frame.f_code
        if code.co_filename == GENERATED_FILENAME or \
                (code.co_filename, code.co_name) in registered:
            function = code.co_name
        tb = tb.tb_next
    ports = output_ports(model, block)
    return block, ports[0] if function in SIGNAL_FUNCTIONS and len(ports) == 1 else None
