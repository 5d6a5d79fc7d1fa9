"""Event handling of the Python path: the signs just after an event instant, the event
iteration that updates the blocks until nothing changes, sample hits at an event, and Zeno
detection. `Simulator` takes these methods from `EventIteration`; the compiled loop of the
numba backend runs the same steps (`native/settle.py`), with these as its reference.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from blocksim.engine import events as ev_mod
from blocksim.engine.results import Event
from blocksim.engine.warnings_held import NONFINITE

if TYPE_CHECKING:
    from blocksim.engine.simulator import RunState

MAX_EVENT_PASSES = 100
# Zeno detection: ZENO_EVENTS consecutive events, each closer than ZENO_SPAN horizons to the
# one before. A guarded model never gets there: a limited integrator whose input would turn
# back within one horizon stays at its limit, so its flights last at least two horizons.
ZENO_EVENTS = 20
ZENO_SPAN = 0.25


class EventIteration:
    """What `Simulator` does at an event instant (a mixin: it uses the simulator's model,
    functions, recorder and run guards)."""

    def _signs_after(self, st: RunState) -> np.ndarray:
        """Zero-crossing signs one horizon after t, following the flow (forward Euler).

        Where a sign is still exactly zero (a state at rest on its guard, e.g. uD = 0 with
        every derivative 0 at t = 0), one more Euler step sees second-order motion; a zero
        crossing that reads neither t nor x (a mode signal) would read the same again.
        The values probed are kept in `after_values` (t, values): the Python loop orders
        the crossings of its next step by estimates from them (`PythonLoop._by_estimate`).
        """
        if not self.model.n_zc:
            return st.z
        if self._small and self.model.n_states:
            try:
                return np.array(self._signs_after_lists(st))
            except (ArithmeticError, ValueError):
                pass  # the same failure again below, from lines naming the block
        h = self.horizon
        if not self.model.n_states:
            return np.sign(np.array(self._zc(st.t + h, st.x, st.m, st.z), dtype=float))
        probe_x = st.x + h * self._deriv_array(st.t, st.x, st.m, st.z)
        values = np.array(self._zc(st.t + h, probe_x, st.m, st.z), dtype=float)
        self.after_values = (st.t, values)
        signs = np.sign(values)
        zero = signs == 0.0
        if zero.any() and (zero & self._zc_moves).any():
            dx2 = self._deriv_array(st.t + h, probe_x, st.m, st.z)
            ahead = np.sign(np.array(self._zc(st.t + 2 * h, probe_x + h * dx2, st.m, st.z),
                                     dtype=float))
            signs = np.where(zero, ahead, signs)
        return signs

    def _signs_after_lists(self, st: RunState) -> list[float]:
        """`_signs_after` of a small model, on Python floats (the same operations)."""
        t, h, sign = st.t, self.horizon, ev_mod.sign
        x_, m_, z_ = st.x.tolist(), st.m.tolist(), st.z.tolist()
        probe = [a + h * b for a, b in zip(x_, self._deriv_list(t, x_, m_, z_))]
        values = self._zc_list(t + h, probe, m_, z_)
        self.after_values = (t, values)
        signs = [sign(v) for v in values]
        if 0.0 in signs and any(s == 0.0 and moves for s, moves in zip(signs, self._zc_moves_list)):
            ahead = [a + h * b for a, b in zip(probe, self._deriv_list(t + h, probe, m_, z_))]
            again = self._zc_list(t + 2 * h, ahead, m_, z_)
            signs = [sign(v) if s == 0.0 else s for s, v in zip(signs, again)]
        return signs

    def _event(self, st: RunState, init: bool = False,
               located: list[tuple[int, str]] | None = None, scheduled: bool = True) -> bool:
        """Settle the model at st.t and record its left and right limits.

        At a sample hit, the model first settles with the hit's inputs (a step at the same
        instant is taken), then the discrete blocks of the rates that hit compute their
        outputs and update (`sample`, once), and the model settles again. `scheduled` is
        False for an instant that is only a sample hit (it does not count as an event).
        Returns True if a Stop block asked to end the run. A located crossing after which
        nothing changes (a refinement of an earlier estimate) leaves no trace.
        """
        if self.native is not None:
            self.stats["python_events"] += 1  # one the compiled loop handed over
        m_before = st.m.copy() if located else None
        if self.history is not None:
            self.history.mark(st)  # undone with m if nothing happens at a located crossing
        if not init:
            self._record(st)  # the left limit; dropped again if nothing happens
            if self._pre is not None:
                self._pre(st.t, st.x, st.m, st.z)
        elif self.model.n_zc:
            self._latch_start(st)
        log_entries: list[tuple[int, str]] = []
        changed_by: list[list[tuple[int, str]]] = []
        self._settle(st, init, log_entries, changed_by)
        hits = self._hits_due(st)
        if hits is not None:
            self._sample(st.t, st.x, st.m, st.z, hits)
            self._settle(st, init, log_entries, changed_by)
        something = bool(log_entries) or len(changed_by) > 1 or hits is not None
        if self.history is not None and not init:
            self.history.settled(st, bool(located) or hits is not None, log_entries)
        if located and not something:
            self.recorder.drop_last()
            st.m[:] = m_before  # a Memory must not sample at a non-event
            return False
        self._record(st)  # the right limit, with the event's pulses (a HitCrossing's 1.0)
        if self._after is not None and self._after(st.t, st.x, st.m, st.z):
            st.z = self._signs_after(st)  # pulses cleared: re-latch without edges
        self.stats["events"] += not init and (scheduled or bool(located))
        for block, kind in (located or []) + log_entries:
            self.recorder.events.append(Event(float(st.t), self.model.block_ids[block], kind))
        return any(kind == "stop" for _, kind in log_entries)

    def _latch_start(self, st: RunState) -> None:
        """Latch the signs at the start before any block updates: a block reading another's
        latched output in the first pass (a Stop behind a CompareToConstant) must not see
        the zeros the signs start from (u >= c would hold there for any u)."""
        for _ in range(MAX_EVENT_PASSES):
            zn = self._signs_after(st)
            if np.array_equal(zn, st.z):
                return
            st.z = zn

    def _hits_due(self, st: RunState) -> list[float] | None:
        """The `hits` of the model's `sample` function at st.t (clock rates, then triggered
        ones), with the clock moved on and the trigger flags cleared; None if none is due."""
        clocked = self.hits.due(st.t) if self.hits is not None else None
        slots = self.model.trigger_slots
        triggered = [1.0 if st.m[i] else 0.0 for i in slots]
        if clocked is None and not any(triggered):
            return None
        if clocked is not None:
            self.hits.advance(clocked)
            self.stats["hits"] += 1
        for i in slots:
            st.m[i] = 0.0
        return (clocked or [0.0] * len(self.model.rates)) + triggered

    def _settle(self, st: RunState, init: bool, log_entries: list[tuple[int, str]],
                changed_by: list[list[tuple[int, str]]]) -> None:
        """Event iteration: re-read the signs just after t and update the blocks until
        nothing changes (SimulationError if it never settles or a reset is not finite)."""
        model = self.model
        update = self._update
        if update is None and not model.n_zc:
            changed_by.append([])  # the one pass of the loop below, which changes nothing
            return
        for _ in range(MAX_EVENT_PASSES):
            zn = self._signs_after(st)
            entries: list[tuple[int, str]] = []
            changed = update is not None and update(st.t, st.x, st.m, st.z, zn, init, entries)
            flipped = np.flatnonzero(zn != st.z) if model.n_zc else ()
            st.z = zn
            log_entries += entries
            changed_by.append(entries + [(model.zc_owner[i], "switch") for i in flipped])
            if not changed and not len(flipped):
                break
            if not np.all(np.isfinite(st.x)):
                bad = int(np.flatnonzero(~np.isfinite(st.x))[0])
                raise self._fail("a reset made the state infinite or NaN", st.t,
                                 model.block_ids[model.state_owner[bad]], NONFINITE)
        else:
            culprits = sorted({model.block_ids[b] for entries in changed_by[-4:] for b, _ in entries})
            hints = "".join(f"; {b} {model.unsettled[b]}" for b in culprits
                            if b in model.unsettled)
            raise self._fail(f"event iteration did not settle after {MAX_EVENT_PASSES} passes; "
                             f"still changing: {', '.join(culprits)}{hints}", st.t,
                             culprits[0] if culprits else None)

    def _zeno_check(self, t: float, blocks: list[int]) -> None:
        last, run, began = self.zeno
        if t - last < ZENO_SPAN * self.horizon:
            run += 1
        else:
            run, began = 0.0, t
        self.zeno[:] = (t, run, began)
        if run >= ZENO_EVENTS:
            names = ", ".join(sorted({self.model.block_ids[b] for b in blocks}))
            raise self._fail(
                f"{ZENO_EVENTS} events within {t - began:.3g} s (Zeno behaviour: "
                f"events accumulate at this time; guard the model, e.g. with a limited "
                f"integrator); last events from: {names}", t, names.split(", ")[0])
