"""Build a model's numba functions: translate its generated code, load it, take addresses.

What the compiled loop (`native.kernel`) needs of one model, made once per structure
(`CompiledModel.shared["native"]`, the parameter values read from slots at run time): the
functions' addresses by slot (`layout.A_*`), which events compile, and the model's index
arrays. `loop` drives runs with it; nothing here holds run state.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from blocksim.compiler import dataflow
from blocksim.compiler.compiled import CompiledModel
from blocksim.engine import derived
from blocksim.engine.native import layout as nt
from blocksim.engine.native import heartbeat, quickload
from blocksim.engine.notices import notice

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Compiled:
    """A model's numba functions (kept alive here) and what the loop needs of the model."""

    dispatchers: tuple
    addresses: np.ndarray  # int64, slots layout.A_*; 0: no such event function
    events: bool  # the event functions compiled: events are settled in the loop
    timed: bool  # ... and time events too (sample and next_time compiled, where needed)
    kinds: tuple[str, ...]  # event entry kinds by code
    zmove: np.ndarray
    zc_owner: np.ndarray
    observed: np.ndarray  # the states observe reads
    selection: np.ndarray  # the state of each logged signal, if all are states (else empty)
    # History rings (`native.rings`): per channel its start in m, capacity, width and
    # offset in the probe's output; its span, fixed delay and feedback (1.0 or 0.0).
    hch: np.ndarray
    hfl: np.ndarray
    # [channel, block]: native.layout.H_UPSTREAM where the block is a delay upstream of the
    # ring, H_DELAY where it is another fixed delay, 0 elsewhere.
    hup: np.ndarray

    @property
    def stop_kind(self) -> int:
        return self.kinds.index("stop") if "stop" in self.kinds else -1


REFUSED = "native_refused"  # model.shared: why numba took none of the model's code


def compiled_for(model: CompiledModel) -> "Compiled | None":
    """The model's numba functions, built once per structure (None: it runs in Python,
    model.shared[REFUSED] says why)."""
    compiled = model.derived.get("native", False)
    if compiled is False:  # one per structure (`CompiledModel.shared`), not per value
        compiled = model.shared.get("native", False)
        if compiled is False:
            compiled = model.shared["native"] = compile_model(model)
        model.derived["native"] = compiled
    return compiled


def _fallback_notice(model: CompiledModel, exc: Exception, kind: str | None) -> str:
    """What runs in Python on the numba backend, and why: the block (type) whose code
    numba cannot take, when known. `kind`: "time" (time events and sample hits in
    Python), "events" (all events) or None (the whole model)."""
    owner = getattr(exc, "owner", None)
    if owner is not None:
        cause = f"block '{model.block_ids[owner]}' ({model.block_types[owner]})"
    else:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        cause = f"the diagram's code ({first[:120]})"
    if kind == "time":
        return (f"backend numba: {cause} needs Python at time events: time events and "
                f"sample hits of {model.source} are handled in Python")
    if kind == "events":
        return (f"backend numba: {cause} needs Python at events: events of "
                f"{model.source} are handled in Python")
    return f"backend numba: {cause} does not compile with numba: {model.source} runs in Python"


def compile_model(model: CompiledModel) -> Compiled | None:
    """Translate and load the model's numba functions (None: the model stays in Python).

    The event functions are compiled too where numba can (no Python helpers, no raise),
    and with them those of time events (`sample`, `next_time`); otherwise time events, or
    all events, are handled in Python and only the rest is compiled.
    """
    from numba.experimental.function_type import _get_wrapper_address

    from blocksim.engine.native import codegen

    started = time.perf_counter()
    functions = dict(derived.functions(model))
    derived.observe(model)
    functions["observe"] = dataflow.split(model.derived["observe_source"])["observe"]
    constants = model.functions["outputs"].__globals__
    kinds = codegen.event_kinds(functions)
    events = tuple(name for name in codegen.EVENT_NAMES if name not in model.empty)
    sampled = bool(model.rates or model.trigger_slots)
    extra: tuple[str, ...] = ()
    if model.history:  # the inputs the history rings keep
        from blocksim.engine import history

        functions["probe"] = dataflow.split(history.probe_source(model))["probe"]
        extra = ("probe",)
    timing = tuple(name for name, needed in (("sample", sampled),
                                             ("next_time", bool(model.time_events))) if needed)
    offset = len(model.signal_names)  # parameter slot k is S[offset + k] in compiled code
    functions = {name: codegen.slots_as_signals(fn, offset)
                 for name, fn in functions.items()}
    attempts = ([events + timing] if timing else []) + [events, None]
    module, compiled, pending = None, (), None
    for attempt in attempts:
        try:
            source = codegen.module_source(functions, constants,
                                                 (attempt or ()) + extra, kinds)
            with quickload.deferred(), heartbeat.compiling(
                    f"compiling the numba functions of {model.source}"):
                # (loads from numba's cache need no registries)
                module = codegen.load(source, codegen.user_globals(constants))
            compiled = attempt
            break
        except Exception as exc:  # numba's typing errors have no common base class
            kind = ("time" if attempt is not None and attempt != events
                    else "events" if attempt is not None else None)
            what = {"time": "time events stay in Python", "events": "event functions stay "
                    "in Python", None: "numba backend unavailable for this model, running in "
                    "Python"}[kind]
            # (the notice says it once; the exception's class and text are for -v)
            log.debug("%s: %s (%s: %s)", model.source, what, type(exc).__name__,
                      str(exc).splitlines()[0] if str(exc) else "")
            if kind == "time":  # said only if the event functions do compile
                pending = _fallback_notice(model, exc, kind)
                continue
            pending = None
            if kind is None:  # the run's warning too (`NativeLoop.for_model`)
                model.shared[REFUSED] = _fallback_notice(model, exc, kind)
            else:
                notice(_fallback_notice(model, exc, kind))
    if pending is not None:
        notice(pending)
    if module is None:
        return None
    addresses = np.zeros(nt.N_ADDRESSES, dtype=np.int64)
    dispatchers = []
    slots = {"deriv": nt.A_DERIV, "zc": nt.A_ZC, "observe": nt.A_OBSERVE,
             "update": nt.A_UPDATE, "pre_event": nt.A_PRE, "after_event": nt.A_AFTER,
             "sample": nt.A_SAMPLE, "next_time": nt.A_NEXT_TIME, "probe": nt.A_PROBE}
    for name in codegen.NAMES + (compiled or ()) + extra:
        dispatcher = getattr(module, name)
        sig = (nt.EVENT_SIGNATURE if name in codegen.EVENT_NAMES
               else nt.TIME_SIGNATURE if name == "next_time" else nt.MODEL_SIGNATURE)
        addresses[slots[name]] = _get_wrapper_address(dispatcher, sig)
        dispatchers.append(dispatcher)
    compiled_events = compiled is not None
    timed = compiled_events and all(name in compiled for name in timing)
    log.info("%s: numba functions ready in %.2f s (events %s, time events %s)", model.source,
             time.perf_counter() - started, "compiled" if compiled_events else "in Python",
             "compiled" if timed else "in Python")
    return Compiled(tuple(dispatchers), addresses, compiled_events, timed, tuple(kinds),
                    derived.zc_moves(model).astype(float), np.array(model.zc_owner,
                                                                    dtype=np.int64),
                    np.array(derived.observe_reads(model), dtype=np.int64),
                    np.array(derived.observed_states(model) or [], dtype=np.int64),
                    *_channels(model))


def _channels(model: CompiledModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The history rings as the loop reads them (`Compiled.hch`, `hfl`, `hup`)."""
    ints, floats, offset = [], [], 0
    upstream = np.zeros((len(model.history), len(model.block_ids)), dtype=np.int64)
    delays = [channel.block for channel in model.history if channel.delay > 0]
    for c, channel in enumerate(model.history):
        upstream[c, delays] = nt.H_DELAY
        upstream[c, list(channel.upstream)] = nt.H_UPSTREAM
        ints.append([channel.base, channel.capacity, channel.width, offset])
        floats.append([channel.span, channel.delay, float(channel.feedback)])
        offset += channel.width
    return (np.array(ints, dtype=np.int64).reshape(len(ints), 4),
            np.array(floats, dtype=float).reshape(len(floats), 3), upstream)
