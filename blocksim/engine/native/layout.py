"""What the compiled loop and a model's numba functions agree on: signatures, the slots of
the parameter arrays, statuses, and how a function's address becomes a callable.

The model's functions reach the loop as plain machine addresses in an int64 array. numba
would also accept them as first-class function objects, but it unboxes each such argument
in Python (a few microseconds per function per call, as much as a small segment costs);
an integer costs nothing, and `as_model_function` / `as_event_function` turn it back into
a function value inside compiled code.
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# deriv, zc, observe: f(t, x, m, z, out, S); S is scratch space for the signals.
MODEL_SIGNATURE = types.void(types.float64, types.float64[::1], types.float64[::1],
                             types.float64[::1], types.float64[::1], types.float64[::1])
# update, pre_event, after_event: changed = f(t, x, m, z, zn, init, ev, S); `ev` collects
# (block, kind code) pairs after a count in ev[0].
EVENT_SIGNATURE = types.int64(types.float64, types.float64[::1], types.float64[::1],
                              types.float64[::1], types.float64[::1], types.int64,
                              types.int64[::1], types.float64[::1])
# next_time: t_next = f(t, m, S), the first time event after t (inf: none). `sample` has
# the model signature, the hits vector in place of `out`.
TIME_SIGNATURE = types.float64(types.float64, types.float64[::1], types.float64[::1])
MODEL_FN = types.FunctionType(MODEL_SIGNATURE)
EVENT_FN = types.FunctionType(EVENT_SIGNATURE)
TIME_FN = types.FunctionType(TIME_SIGNATURE)

# Slots of the address array.
A_DERIV, A_ZC, A_OBSERVE, A_UPDATE, A_PRE, A_AFTER, A_SAMPLE, A_NEXT_TIME = range(8)
A_PROBE = 8  # the inputs kept in history rings (transport delays), as observe
N_ADDRESSES = 9

# fpar slots (float parameters in, results out)
F_T, F_BOUND, F_STEP, F_RTOL, F_ATOL, F_MAX_STEP, F_START, F_INTERVAL = range(8)
F_EVENT_T, F_TIME_EVENT, F_NEXT_STEP, F_BAD_T, F_HORIZON, F_ZENO_SPAN = range(8, 14)
# stiffness detection (`dopri5.StiffnessTest`): the stop time, the budget of steps left,
# the last h*lambda estimate, the time stiffness was detected (NaN: not yet)
F_STOP, F_STIFF_BUDGET, F_HLAMB, F_STIFF_T = range(14, 18)
# time events: the next time event of the blocks (next_time) when the bound was set
F_SOURCE_T = 18
N_FPAR = 19  # then the absolute tolerance of each state, then the parameter slots
# ipar slots
(I_STATUS, I_GRID, I_N_GRID, I_ROWS, I_EVENT, I_STEPS, I_NFEV, I_MAX_STEPS, I_RESUME,
 I_EVENTS_ON, I_LOG, I_EVENTS, I_RESTARTS, I_STOP_KIND, I_MAX_PASSES,
 I_ZENO_EVENTS, I_SIGNALS, I_START) = range(18)
# stiffness detection: on (1) or off, accepted steps, positive and negative tests in a row,
# the state moving fastest when stiffness was detected
I_STIFF_ON, I_ACCEPTED, I_STIFF_POS, I_STIFF_NEG, I_STIFF_STATE = range(18, 23)
# time events and sample hits: settled in the loop (1) or in Python, the model has next_time
# (1: else no block has time events), sample hits handled in the call, the exact clock's
# p and q, and the restarts other than sample hits left before Python's progress check
I_TIMED, I_HAS_NEXT, I_HITS, I_CLOCK_P, I_CLOCK_Q, I_GUARD_LEFT = range(23, 29)
# history rings: the kind code of a delay's "breakpoint" entry (-1: none)
I_BREAK_KIND = 29
# history rings: hup[c, b], the role of block b for ring c (`native.rings.after_event`)
H_DELAY, H_UPSTREAM = 1, 2  # a block with a fixed delay; one whose output reaches the ring
N_IPAR = 30
# Zeno state (shared with `Simulator.zeno`): last event time, run length, run start.
Z_LAST, Z_RUN, Z_BEGAN = range(3)

# Statuses: how a call of the loop ended.
BOUND = 0  # reached the bound (a time event there if the bound is one)
CROSSING = 1  # a located crossing for Python to handle (x_ev, F_EVENT_T, I_EVENT)
YIELD = 2  # a pause for progress and should_stop; resume with I_RESUME = 1
UNDERFLOW = 3  # step size too small
NONFINITE = 4  # the state became infinite or NaN
STOPPED = 5  # a Stop block ended the run at an event handled here
SETTLED_AT_BOUND = 6  # an event handled here fell on the bound: no time event follows
START_FOR_PYTHON = 7  # the start (I_START) needs Python's event handling; nothing done
BAD_CROSSING = 8  # a zero-crossing function gave NaN at the accepted step end (t, x)
STIFF = 9  # stiff, with more steps left than the budget (t, x: the step's start; F_STEP: h)
STUCK = 10  # the next time event does not come after t (Python reports it)

KIND_STATE = 0  # kind code of the "state" entry of a located crossing


def _caster(fn_type: types.FunctionType):
    @intrinsic
    def cast(typingctx, address):
        """The function at a machine address (of a cfunc wrapper of `fn_type`)."""
        if not isinstance(address, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            value = cgutils.create_struct_proxy(fn_type)(context, builder)  # zero-filled
            value.c_addr = builder.inttoptr(args[0], context.get_value_type(types.voidptr))
            return value._getvalue()
        return fn_type(address), codegen
    return cast


@intrinsic
def borrowed(typingctx, array):
    """A view of `array` without its reference count (no meminfo), for compiled code only.

    numba increments and decrements an array's count atomically each time it passes the
    array to a function that is not inlined (the model's functions through their
    addresses, `locate`, `settle`); on the ball that was a third of the compiled loop's
    time. A borrowed view costs nothing to pass; whoever borrows must keep the owner
    alive (arguments from Python are; the loop's own arrays it keeps to its end).
    """
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        view = context.make_array(signature.return_type)(context, builder)
        for field in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(view, field, getattr(source, field))
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()
    return array(array), codegen


as_model_function = _caster(MODEL_FN)
as_event_function = _caster(EVENT_FN)
as_time_function = _caster(TIME_FN)
