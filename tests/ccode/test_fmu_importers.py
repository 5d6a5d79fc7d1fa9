"""What the FMI Compliance Checker and fmusim found in exported FMUs, each checked without
them (benchmarks/fmi_checkers.py runs the programs themselves; tests/fmi/test_fmi_checkers.py
when they are built)."""
from __future__ import annotations

import ctypes
import math
from pathlib import Path

import pytest

import blocksim
from blocksim.ccode.model_source import model_source

fmpy = pytest.importorskip("fmpy")
from fmpy import extract, read_model_description  # noqa: E402
from fmpy.fmi1 import FMICallException  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BALL = ROOT / "diagrams" / "bouncing_ball.json"


def _instance(fmu: Path, fmi: int, folder: Path):
    """The model-exchange FMU instantiated and initialised by fmpy's low-level classes."""
    md = read_model_description(str(fmu))
    unzipped = extract(str(fmu), unzipdir=str(folder))
    if fmi == 2:
        from fmpy.fmi2 import FMU2Model as Model
        m = Model(guid=md.guid, unzipDirectory=unzipped,
                  modelIdentifier=md.modelExchange.modelIdentifier, instanceName="m")
        m.instantiate()
        m.setupExperiment(startTime=0.0)
        m.enterInitializationMode()
        m.exitInitializationMode()
        m.newDiscreteStates()
        m.enterContinuousTimeMode()
    else:
        from fmpy.fmi3 import FMU3Model as Model
        m = Model(guid=md.guid, unzipDirectory=unzipped,
                  modelIdentifier=md.modelExchange.modelIdentifier, instanceName="m")
        m.instantiate()
        m.enterInitializationMode(startTime=0.0)
        m.exitInitializationMode()
        m.updateDiscreteStates()
        m.enterContinuousTimeMode()
    return m


@pytest.mark.parametrize("fmi", [2, 3])
def test_failed_event_update_tells_the_importer_to_stop(tmp_path, fmi):
    # The Compliance Checker iterates `while (newDiscreteStatesNeeded)` without looking at
    # the status: an event update that failed (here: the states are NaN, as after its
    # forward Euler diverged) and left the flags unset made it call forever (gigabytes of
    # log). The FMU now says: no further iteration, terminate.
    fmu = blocksim.export_fmu(BALL, tmp_path / "ball.fmu", fmi=fmi).path
    m = _instance(fmu, fmi, tmp_path / "x")
    m.setContinuousStates((ctypes.c_double * 2)(math.nan, math.nan), 2)
    m.enterEventMode()
    if fmi == 2:
        from fmpy.fmi2 import fmi2EventInfo
        info = fmi2EventInfo(newDiscreteStatesNeeded=1, terminateSimulation=0)
        with pytest.raises(FMICallException):
            m.fmi2NewDiscreteStates(m.component, ctypes.byref(info))
        flags = info.newDiscreteStatesNeeded, info.terminateSimulation
    else:
        need, stop = ctypes.c_bool(True), ctypes.c_bool(False)
        other = [ctypes.c_bool(True), ctypes.c_bool(True), ctypes.c_bool(True)]
        nxt = ctypes.c_double(1.0)
        with pytest.raises(FMICallException):
            m.fmi3UpdateDiscreteStates(m.component, ctypes.byref(need), ctypes.byref(stop),
                                       ctypes.byref(other[0]), ctypes.byref(other[1]),
                                       ctypes.byref(other[2]), ctypes.byref(nxt))
        flags = need.value, stop.value
    assert (bool(flags[0]), bool(flags[1])) == (False, True)


def test_c_failure_message_is_the_exception_text_not_its_source():
    # The checker's diverging Euler made the Shockley diode's Newton loop fail, and the FMU
    # logged "block 'solve_uD': ArithmeticError('algebraic loop: Newton did not converge
    # in 50 iterations (last z = %r)' % _z)": the Python source of the raise.
    model = blocksim.compile(blocksim.load(ROOT / "diagrams" / "diode_shockley.json"))
    text = model_source(model).text
    assert '"algebraic loop: Newton did not converge in 50 iterations"' in text
    assert '"algebraic loop: the residual does not change with z (zero derivative)"' in text
    assert "ArithmeticError" not in text and "%r" not in text
