"""One FMU instance for one simulation run, called from an FMU block's generated code.

The engine opens the session when a run starts (`open`: the trusted bytes unpacked into a
private temporary folder, the binary loaded through fmpy, instantiated, parameters set,
initialized) and closes it when the run ends, whatever the ending (`close`: terminate,
free, unload, folder removed). The FMU runs in the blocksim process: its calls are C
calls through fmpy's ctypes bindings; an FMU that crashes as it starts is caught by a
forked probe where fork is safe (`probe`), one that crashes later ends the process
(docs/fmi.md).

Model exchange keeps the FMU in Continuous-Time Mode whenever the engine evaluates it
(outputs, derivatives, event indicators, the engine's probes just after an event), where
every such call is legal in FMI 2.0 and 3.0; `event` runs one whole FMU event iteration
(Event Mode, inputs of every variability, newDiscreteStates / updateDiscreteStates until
the FMU has settled, back to Continuous-Time Mode) in each pass of blocksim's event
iteration, so the inputs other blocks change during blocksim's iteration reach the FMU
in its next pass. Co-simulation sets the inputs and calls doStep at each hit.

An FMI function that returns Error or Fatal raises `FmuRunError` (a ValueError: the run
fails with the results so far, naming the block) with the FMU's last log message.
"""
from __future__ import annotations

import ctypes
import io
import logging
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Callable, Sequence

from blocksim.errors import shown
from blocksim.fmi import FmuError
from blocksim.fmi.archive import MAX_FMU_BYTES, FmuInfo, Variable

log = logging.getLogger(__name__)

MAX_UNPACKED_BYTES = 4 << 30  # an archive that unpacks to more is a zip bomb, not an FMU
MAX_FMU_ITERATIONS = 1000  # newDiscreteStates calls of one FMU event iteration
_PROXY_TARGET: list[Any] = []  # what fmpy's logger proxy calls (see _instantiate)


class FmuRunError(ValueError):
    """An FMI call failed during a run; the message names the FMU and the call."""


def _method_names(var: Variable, major: int) -> tuple[str, str]:
    """fmpy's getter and setter for a variable's type."""
    if major == 2:
        kind = {"float": "Real", "integer": "Integer", "boolean": "Boolean"}[var.kind]
    else:
        kind = "Int64" if var.type == "Enumeration" else var.type
    return f"get{kind}", f"set{kind}"


class _Group:
    """Variables read or written with one fmpy call (one FMI type)."""

    def __init__(self, getter: str, setter: str):
        self.getter, self.setter = getter, setter
        self.vrs: list[int] = []
        self.elems: list[int] = []  # their elements' positions in the caller's flat tuple
        self.read: Any = None  # () -> the values, through arrays made once (`prepare`)

    def prepare(self, fmu: Any, major: int) -> None:
        """Read through fmpy's own binding of the FMI get function with ctypes arrays made
        once, not per call (fmpy's getReal makes both each time: 2.5 us of an output's
        3 us)."""
        from importlib import import_module

        module = import_module(f"fmpy.fmi{major}")
        kind = self.getter[len("get"):]
        vrs = (getattr(module, f"fmi{major}ValueReference") * len(self.vrs))(*self.vrs)
        values = (getattr(module, f"fmi{major}{kind}") * len(self.elems))()
        low = getattr(fmu, f"fmi{major}Get{kind}")
        n_vr, n_values, component = len(self.vrs), len(self.elems), fmu.component
        if major == 2:
            def read() -> list:
                low(component, vrs, n_vr, values)
                return values[:]
        else:
            def read() -> list:
                low(component, vrs, n_vr, values, n_values)
                return values[:]
        self.read = read


def _groups(variables: Sequence[Variable], major: int) -> list[_Group]:
    """The variables by type, each variable's elements at its place in the flat sequence
    of all their elements (an array's row by row, as FMI orders them)."""
    groups: dict[str, _Group] = {}
    position = 0
    for var in variables:
        getter, setter = _method_names(var, major)
        group = groups.get(getter)
        if group is None:
            group = groups[getter] = _Group(getter, setter)
        group.vrs.append(var.vr)
        group.elems.extend(range(position, position + var.size))
        position += var.size
    return list(groups.values())


def elements(variables: Sequence[Variable]) -> list[tuple[Variable, int]]:
    """(variable, element index) of every element, in the flat order."""
    return [(var, j) for var in variables for j in range(var.size)]


class FmuSession:
    """The FMU instance of one block during one run (see module docstring)."""

    def __init__(self, block: str, name: str, info: FmuInfo, interface: str,
                 is_trusted: Callable[[Path, str], bool]):
        self.block = block
        self.name = name  # the file as the diagram names it
        self.info = info
        self.interface = interface
        self.is_trusted = is_trusted
        self.me = interface == "model_exchange"
        major = info.fmi_version
        self.major = major
        self.outputs = _groups(info.outputs, major)
        self.n_out = sum(v.size for v in info.outputs)
        self.all_inputs = _groups(info.inputs, major)
        # In Continuous-Time Mode only continuous inputs may be set (FMI 2.0 and 3.0).
        flat_inputs = elements(info.inputs)
        self.ct_inputs = [k for k, (v, _) in enumerate(flat_inputs)
                          if v.continuous and v.kind == "float"]
        self.ct_group = _groups([v for v in info.inputs if v.continuous and v.kind == "float"],
                                major)
        self.fmu: Any = None
        self.folder: str | None = None
        self._keep: list[Any] = []  # ctypes callbacks alive while the instance is
        self.last_message = ""
        nx, nz = info.n_states if self.me else 0, info.n_indicators if self.me else 0
        self.nx, self.nz = nx, nz
        self._x = (ctypes.c_double * max(nx, 1))()
        self._dx = (ctypes.c_double * max(nx, 1))()
        self._z = (ctypes.c_double * max(nz, 1))()
        self._set: tuple | None = None  # (t, x) last given to the FMU
        self._u_now = [x for v in info.inputs for x in v.start_values()]
        self._is_ct = [k in self.ct_inputs for k in range(len(self._u_now))]
        self._outs: list[float] | None = None  # the outputs at what was last set
        self.stop_asked = False  # terminateSimulation (at initialization or a step's end)
        self.step = 0.0
        self.stop_time = float("inf")
        self.cs_time = 0.0  # co-simulation: the FMU's time (the end of its last step)
        self.terminated = False  # co-simulation: a doStep asked to terminate

    # ----- the run ---------------------------------------------------------------------------
    def open(self, values: Sequence[tuple[Variable, float]], start: float, stop: float,
             tolerance: float | None, step: float) -> tuple[list[float], float]:
        """Unpack, load, instantiate and initialize; (initial continuous states, next time
        event or inf). FmuError (one line) if the FMU cannot be started."""
        from blocksim.fmi import require_fmpy

        require_fmpy()
        if self.fmu is not None:
            raise FmuError(f"FMU '{self.name}' is already running in another simulation run "
                           f"of this compiled model; compile the diagram once per "
                           f"concurrent run")
        data = self._trusted_bytes()
        self.folder = tempfile.mkdtemp(prefix="blocksim-fmu-")  # mode 0700: private
        try:
            _unpack(data, self.folder, self.name)
            self._probe(values, start, stop, tolerance)
            self._load()
            self._instantiate()
            for group in self.outputs:
                group.prepare(self.fmu, self.major)
            self.step, self.stop_time, self.cs_time = step, stop, start
            return self._initialize(values, start, stop, tolerance)
        except FmuError:
            self.close()
            raise
        except Exception as exc:
            message = self._said(exc)
            self.close()
            raise FmuError(f"FMU '{self.name}' cannot start: {message}") from None
        except BaseException:  # Ctrl-C while it starts: nothing left behind
            self.close()
            raise

    def _probe(self, values, start, stop, tolerance) -> None:
        """FmuError if the FMU crashes (or hangs) as it starts, found in a forked child
        before this process loads it (`probe`)."""
        from blocksim.fmi import probe

        def start_and_free() -> None:
            self._load()
            self._instantiate()
            self._initialize(values, start, stop, tolerance)
            self.fmu.terminate()
            self.fmu.freeInstance()

        crash = probe.crashed_at_start(self.info.digest, start_and_free)
        if crash is not None:
            raise FmuError(f"FMU '{self.name}' crashed as it started (load, instantiate or "
                           f"initialize), with {crash}, in a separate process: blocksim did "
                           f"not load it")

    def _trusted_bytes(self) -> bytes:
        import hashlib

        from blocksim.files.safe import read_regular_file, why_unreadable
        from blocksim.fmi import trust

        path = self.info.path
        try:
            data = read_regular_file(path, MAX_FMU_BYTES)
        except (OSError, ValueError) as exc:
            raise FmuError(f"FMU file '{self.name}' {why_unreadable(exc, MAX_FMU_BYTES)}") from None
        digest = hashlib.sha256(data).hexdigest()
        if not self.is_trusted(path, digest):
            raise trust.untrusted(self.name, path.resolve(), False, None, None)
        if digest != self.info.digest:
            raise FmuError(f"FMU file '{self.name}' changed since the diagram was compiled; "
                           f"compile it again")
        return data

    def _load(self) -> None:
        from fmpy.fmi2 import FMU2Model, FMU2Slave
        from fmpy.fmi3 import FMU3Model, FMU3Slave

        classes = {(2, True): FMU2Model, (2, False): FMU2Slave, (3, True): FMU3Model,
                   (3, False): FMU3Slave}
        cls = classes[(self.major, self.me)]
        instance = shown(self.block).replace("/", ".") or "fmu"
        self.fmu = cls(guid=self.info.guid, unzipDirectory=self.folder,
                       modelIdentifier=self.info.identifier(self.interface),
                       instanceName=instance)

    def _instantiate(self) -> None:
        fmu = self.fmu
        if self.major == 2:
            from fmpy import calloc, free
            from fmpy.fmi2 import (fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                                   fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)

            callbacks = fmi2CallbackFunctions()
            callbacks.logger = fmi2CallbackLoggerTYPE(self._log2)
            callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
            callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
            try:
                from fmpy.logging import addLoggerProxy
                addLoggerProxy(ctypes.byref(callbacks))  # formats the printf arguments
                # The proxy keeps the logger in one process-wide slot, which every FMU 2
                # instance logs through: it must outlive this session (an FMU still running
                # would call a freed thunk and the process would die).
                _PROXY_TARGET[:] = [callbacks]
            except Exception:  # no proxy for this platform: the unformatted text
                log.debug("fmpy logger proxy unavailable", exc_info=True)
            self._keep.append(callbacks)
            fmu.instantiate(callbacks=callbacks)
        else:
            fmu.instantiate(logMessage=self._log3)

    def _initialize(self, values, start, stop, tolerance) -> tuple[list[float], float]:
        fmu = self.fmu
        if self.major == 2:
            fmu.setupExperiment(tolerance=tolerance, startTime=start,
                                stopTime=stop if self.me else None)
            self._set_values(values)
            fmu.enterInitializationMode()
            fmu.exitInitializationMode()
        else:
            self._set_values(values)
            fmu.enterInitializationMode(tolerance=tolerance, startTime=start,
                                        stopTime=stop if self.me else None)
            fmu.exitInitializationMode()
        next_time = float("inf")
        if self.me:  # now in Event Mode: settle, then Continuous-Time Mode
            _, _, next_time, stop_now = self._iterate()
            self.stop_asked = stop_now
            fmu.enterContinuousTimeMode()
            if self.nx:
                fmu.getContinuousStates(self._x, self.nx)
        return list(self._x[:self.nx]), next_time

    def _set_values(self, values) -> None:
        """Set the parameter values the block gives (before initialization)."""
        for var, value in values:
            _, setter = _method_names(var, self.major)
            number = bool(value) if var.kind == "boolean" else (
                int(value) if var.kind == "integer" else float(value))
            getattr(self.fmu, setter)([var.vr], [number])

    def close(self) -> None:
        """Terminate and free the instance, unload the library, remove the folder (each
        step attempted whatever the one before did)."""
        fmu, self.fmu = self.fmu, None
        if fmu is not None:
            if getattr(fmu, "component", None):
                try:
                    fmu.terminate()
                except Exception:
                    log.debug("%s: terminate failed", self.name, exc_info=True)
            try:
                if getattr(fmu, "component", None):
                    fmu.freeInstance()  # (frees the library too)
                else:
                    fmu.freeLibrary()
            except Exception:
                log.debug("%s: freeInstance failed", self.name, exc_info=True)
        self._keep.clear()
        for group in self.outputs:
            group.read = None  # (its arrays name the instance just freed)
        self._set = self._outs = None
        self._u_now = [x for v in self.info.inputs for x in v.start_values()]
        self.terminated = False
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    # ----- logging and errors ------------------------------------------------------------------
    def _log2(self, env, instance, status, category, message) -> None:
        self._remember(status, message)

    def _log3(self, env, status, category, message) -> None:
        self._remember(status, message)

    def _remember(self, status: int, message: Any) -> None:
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        text = " ".join(text.split())
        if status >= 2:  # discard, error, fatal: said with the failure
            self.last_message = text
        log.debug("%s [%d]: %s", self.name, status, text)

    def _said(self, exc: Exception) -> str:
        text = " ".join(str(exc).split()) or type(exc).__name__
        if self.last_message:
            text += f" (the FMU said: {shown(self.last_message, 200)})"
        return text

    def _fail(self, exc: Exception) -> FmuRunError:
        return FmuRunError(f"FMU '{self.name}': {self._said(exc)}")

    # ----- model exchange: Continuous-Time Mode ----------------------------------------------
    def _ct(self, t: float, x: Sequence[float], u: Sequence[float],
            which: Sequence[int] | None = None) -> None:
        """Time, states and the continuous inputs among `which` (None: all, in order) as
        given; only what differs from what the FMU has is set."""
        fmu = self.fmu
        if fmu is None:
            raise FmuRunError(f"FMU '{self.name}' is not running (its block is evaluated "
                              f"outside a simulation run)")
        key = (t, tuple(x))
        if key != self._set:
            fmu.setTime(t)
            if self.nx:
                self._x[:self.nx] = key[1]
                fmu.setContinuousStates(self._x, self.nx)
            self._set = key
            self._outs = None
        if not self.ct_inputs:
            return
        now, changed = self._u_now, False
        pairs = zip(range(len(u)), u) if which is None else zip(which, u)
        for k, value in pairs:
            if self._is_ct[k] and now[k] != value:
                now[k] = value
                changed = True
        if changed:
            self._write(self.ct_group, [now[k] for k in self.ct_inputs])
            self._outs = None

    def _write(self, groups: list[_Group], values: Sequence[float]) -> None:
        for g in groups:
            vals = [values[k] for k in g.elems]
            if g.setter.endswith("Boolean"):
                vals = [v != 0.0 for v in vals]
            elif not g.setter.endswith(("Real", "Float64", "Float32")):
                vals = [int(round(v)) for v in vals]
            getattr(self.fmu, g.setter)(g.vrs, vals)

    def _read(self) -> list[float]:
        if self._outs is not None:
            return self._outs
        out = [0.0] * self.n_out
        for g in self.outputs:
            for k, v in zip(g.elems, g.read()):
                out[k] = float(v)
        self._outs = out
        return out

    def out_at(self, k: int, which: Sequence[int], t: float, x: Sequence[float],
               u: Sequence[float]) -> float:
        """Output k at (t, x) with the inputs `which` at the values u (those an output
        depends on; the others as last set)."""
        try:
            self._ct(t, x, u, which)
            return self._read()[k]
        except FmuRunError:
            raise
        except Exception as exc:
            raise self._fail(exc) from None

    def der(self, t: float, x: Sequence[float], u: Sequence[float]) -> list[float]:
        try:
            self._ct(t, x, u)
            if self.major == 2:
                self.fmu.getDerivatives(self._dx, self.nx)
            else:
                self.fmu.getContinuousStateDerivatives(self._dx, self.nx)
            return self._dx[:self.nx]
        except FmuRunError:
            raise
        except Exception as exc:
            raise self._fail(exc) from None

    def ind(self, t: float, x: Sequence[float], u: Sequence[float]) -> list[float]:
        try:
            self._ct(t, x, u)
            self.fmu.getEventIndicators(self._z, self.nz)
            return self._z[:self.nz]
        except FmuRunError:
            raise
        except Exception as exc:
            raise self._fail(exc) from None

    def completed_step(self, t: float, x: Sequence[float]) -> bool:
        """After an accepted step (inputs as the outputs at its end set them):
        completedIntegratorStep; True if the FMU asks for an event (a step event) or to
        terminate."""
        try:
            self._ct(t, x, (), ())
            enter, terminate = self.fmu.completedIntegratorStep()
        except FmuRunError:
            raise
        except Exception as exc:
            raise self._fail(exc) from None
        self.stop_asked = self.stop_asked or bool(terminate)
        return bool(enter or terminate)

    # ----- model exchange: events ----------------------------------------------------------------
    def event(self, t: float, x: Sequence[float], u: Sequence[float], init: Any
              ) -> tuple[int, list[float], float, int]:
        """One FMU event iteration at t (module docstring): (2 if the states were reset,
        1 if only its outputs or derivatives changed (a mode switched), 0 if nothing; the
        states after it; the next time event or inf; 1 if the FMU asks to terminate)."""
        try:
            self._ct(t, x, u)
            before = self._read(), self._derivatives()
            fmu = self.fmu
            fmu.enterEventMode()
            self._set, self._outs = None, None
            self._write(self.all_inputs, u)
            self._u_now = list(u)
            reset, _, next_time, stop = self._iterate()
            fmu.enterContinuousTimeMode()
            states = list(x)
            if reset and self.nx:
                fmu.getContinuousStates(self._x, self.nx)
                states = self._x[:self.nx]
                reset = states != list(x)
            else:  # (an FMU without states may still say its states changed)
                reset = False
            self._set = self._outs = None
            self._ct(t, states, u)
            after = self._read(), self._derivatives()
        except FmuRunError:
            raise
        except Exception as exc:
            raise self._fail(exc) from None
        stop = stop or self.stop_asked
        self.stop_asked = False
        code = 2 if reset else (1 if after != before else 0)
        return code, states, next_time, 1 if stop else 0

    def _derivatives(self) -> list[float]:
        """The derivatives at what was last set (none without states)."""
        if not self.nx:
            return []
        if self.major == 2:
            self.fmu.getDerivatives(self._dx, self.nx)
        else:
            self.fmu.getContinuousStateDerivatives(self._dx, self.nx)
        return self._dx[:self.nx]

    def _iterate(self) -> tuple[bool, bool, float, bool]:
        """newDiscreteStates / updateDiscreteStates until the FMU needs no more:
        (states reset, nominals changed, next time event or inf, terminate)."""
        fmu = self.fmu
        update = fmu.newDiscreteStates if self.major == 2 else fmu.updateDiscreteStates
        reset = nominals = False
        for _ in range(MAX_FMU_ITERATIONS):
            needed, terminate, nominal_changed, values_changed, defined, t_next = update()
            reset = reset or bool(values_changed)
            nominals = nominals or bool(nominal_changed)
            if terminate:
                return reset, nominals, float("inf"), True
            if not needed:
                return reset, nominals, float(t_next) if defined else float("inf"), False
        raise FmuRunError(f"FMU '{self.name}': its event iteration did not settle after "
                          f"{MAX_FMU_ITERATIONS} calls")

    # ----- co-simulation -----------------------------------------------------------------------------
    def cs_out(self, k: int) -> float:
        """Output k as the last doStep left it (at the communication point)."""
        if self.fmu is None:
            raise FmuRunError(f"FMU '{self.name}' is not running")
        try:
            return self._read()[k]
        except Exception as exc:
            raise self._fail(exc) from None

    def cs_step(self, t: float, u: Sequence[float]) -> int:
        """Inputs held at their values at t, then doStep from the FMU's time to t + step
        (from t, but from the start time for a run that starts between two communication
        points); 1 if the FMU asks to terminate."""
        if self.fmu is None:
            raise FmuRunError(f"FMU '{self.name}' is not running")
        if self.terminated:
            return 1  # it asked to terminate in the last step: no step after that
        if t >= self.stop_time:
            return 0  # the run ends here: no step beyond it
        now = self.cs_time
        if abs(now - t) <= 1e-9 * max(1.0, abs(t)) or now > t:
            now = t  # on the grid: the communication point as the engine's clock has it
        try:
            self._outs = None
            self._write(self.all_inputs, u)
            if self.major == 2:
                self.fmu.doStep(now, t + self.step - now)
                self.cs_time = t + self.step
                return 0
            event, terminate, early, last = self.fmu.doStep(now, t + self.step - now)
            self.cs_time = t + self.step
            self.terminated = bool(terminate)
            return 1 if terminate else 0
        except Exception as exc:
            if self.major == 2 and "fmi2DoStep" in str(exc):
                try:
                    from fmpy.fmi2 import fmi2Terminated
                    if self.fmu.getBooleanStatus(fmi2Terminated):
                        self.terminated = True
                        return 1
                except Exception:
                    pass
            raise self._fail(exc) from None


def _unpack(data: bytes, folder: str, name: str) -> None:
    """Extract the archive into `folder` (paths inside it only; bounded size)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        total = sum(info.file_size for info in archive.infolist())
        if total > MAX_UNPACKED_BYTES:
            raise FmuError(f"FMU '{name}' unpacks to more than {MAX_UNPACKED_BYTES >> 30} GiB")
        root = os.path.realpath(folder)
        for info in archive.infolist():
            target = os.path.realpath(os.path.join(root, info.filename))
            if not target.startswith(root + os.sep):
                raise FmuError(f"FMU '{name}' has an entry outside its folder: "
                               f"'{shown(info.filename)}'")
        archive.extractall(root)
    except zipfile.BadZipFile as exc:
        raise FmuError(f"'{name}' is not an FMU: {exc}") from None
    except OSError as exc:
        raise FmuError(f"FMU '{name}' cannot be unpacked: {exc.strerror or exc}") from None
