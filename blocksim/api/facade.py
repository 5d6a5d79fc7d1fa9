"""The Python API: load a diagram, compile it, simulate it, with the CLI's options."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from blocksim.compiler import CompiledModel, compile_diagram
from blocksim.engine import Results, Simulator
from blocksim.diagram.examples import diagram_path
from blocksim.diagram.format import load_diagram
from blocksim.diagram.model import Diagram
from blocksim.files import write_rule

if TYPE_CHECKING:
    from blocksim.user.trust import Trust


def load(path: str | os.PathLike, *, trust: Trust = ()) -> Diagram:
    """Read a diagram file, or a shipped example by name (`load("bouncing_ball")`, as
    `blocksim run` takes it); DiagramFileError names the file and block on any problem.

    A diagram that names Python files of user block types imports them only if `trust`
    says so: True (every file it names) or the paths trusted; else UntrustedCodeError
    before anything is imported. The same holds for the .fmu files of its FMU blocks
    (UntrustedFmuError), whose binaries are native code.
    """
    diagram = load_diagram(diagram_path(path))
    if diagram.python:  # the import machinery of user block types only when it is needed
        from blocksim.user.trust import import_trusted
        import_trusted(diagram, trust)
    from blocksim.fmi import trust as fmu_trust
    fmu_trust.check_diagram(diagram, trust)  # FMUs are native code: trusted, or refused
    return diagram


def compile(diagram: Diagram, params: Mapping[str, Any] | None = None, **settings: Any
            ) -> CompiledModel:
    """Check and compile; `params` override diagram parameters, `settings` the simulation."""
    return compile_diagram(diagram, params, diagram.simulation.replaced(**settings))


def simulate(diagram: Diagram | CompiledModel, *, stop_time: float | None = None,
             start_time: float | None = None, solver: str | None = None,
             rtol: float | None = None, atol: float | None = None,
             max_step: float | None = None, output_interval: float | None = None,
             step: float | None = None, params: Mapping[str, Any] | None = None,
             backend: str | None = None,
             progress: Callable[[float], None] | None = None,
             should_stop: Callable[[], bool] | None = None, strict: bool = False,
             allow_write: Iterable[str | os.PathLike] = ()) -> Results:
    """Run a diagram; on failure a SimulationError carries the results computed so far.

    `backend` "numba" runs continuous segments of dopri5 in a compiled loop (needs numba;
    compiled once per model and cached on disk); "python" (the default) needs nothing.
    A logged signal that becomes NaN or infinite is a warning (`Results.warnings`), or
    with `strict` a SimulationError naming the block. Ctrl-C raises SimulationInterrupted,
    which carries the results so far too.

    The files its blocks write (ToFile) are checked first (`blocksim.files.write_rule`): a
    diagram from a file writes only inside its folder, or into a file or folder that
    `allow_write` names; a diagram built in Python (no file) anywhere; none writes a file
    the run reads or another block's file. WriteRefused (a CompileError) says which.
    """
    if (isinstance(diagram, CompiledModel) and (backend or diagram.settings.backend) == "c"
            and progress is None and should_stop is None and not params and not allow_write
            and stop_time is None and start_time is None and solver is None and rtol is None
            and atol is None and max_step is None and output_interval is None
            and step is None):  # a plain run with the model's settings
        # (`blocksim.ccode.fast_run`: one call into C, no Simulator, where that settles it)
        results = _fast_run().simulate(diagram, backend, strict)
        if results is not None:
            return results
    changes = dict(stop=stop_time, start=start_time, solver=solver, rtol=rtol, atol=atol,
                   max_step=max_step, output_interval=output_interval, step=step,
                   backend=backend)
    if isinstance(diagram, CompiledModel):  # new values need no new code (`with_params`)
        model = diagram.with_params(params) if params else diagram
        settings = model.settings.replaced(**changes)
    else:
        settings = diagram.simulation.replaced(**changes)
        model = compile_diagram(diagram, params, settings)
    write_rule.check(model.files, allow=allow_write)
    if progress is None and should_stop is None and settings.resolved_backend == "c":
        return _fast_run().run(model, settings, strict)  # (`blocksim.ccode.fast_run`)
    return Simulator(model, settings, progress=progress, should_stop=should_stop,
                     strict=strict).run()


_fast_run_module = None


def _fast_run():
    """`blocksim.ccode.fast_run`, imported on the first run on backend c (not with the API)."""
    global _fast_run_module
    if _fast_run_module is None:
        from blocksim.ccode import fast_run
        _fast_run_module = fast_run
    return _fast_run_module
