"""Output-grid rows of many DOPRI5 steps, interpolated in one pass when they are needed.

A model that logs states needs, per step, a few interpolated values; evaluating them step
by step costs some thirty numpy calls per step, more than the step's own arithmetic when
the model is vectorised. The batch keeps each step's values of the logged states (each
state once, however many signals log it) and the step's range of grid indices, and, when
taken, computes the grid times, the interpolation coefficients once per step and every row
at once, with `Dopri5Stepper.dense`'s formula.

Per step it does as little as it can, as it runs once per step of every such run: the
step's ends and grid range as Python numbers, the states as views where that copies
nothing (a stepper's x is a new array each step, never changed in place) and the stages as
one copy (the next step overwrites them).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from blocksim.engine.dopri5 import D

if TYPE_CHECKING:
    from blocksim.engine.dopri5 import Dopri5Stepper

SMALL_BATCH = 2048  # up to this many values, the rows are `dense`'s Horner scheme
VIEW_SHARE = 2  # kept states that are a run of at least 1/VIEW_SHARE of x: held as views
# Up to this many states, a step's whole x and stages are kept (references to x, one plain
# copy of the stages) and the logged columns picked at `take`: cheaper per step than
# picking a few scattered columns, and at most 256 steps * 8 rows * 8 B * this = 2 MB.
WHOLE_STATES = 128


class DenseBatch:
    """Grid rows of the states `columns` (in that order, repeats allowed) over many steps
    of one stepper, on the grid start + k * interval."""

    def __init__(self, columns: list[int], n_states: int, start: float, interval: float):
        self.columns = columns
        self._start, self._interval = start, interval
        unique = sorted(set(columns))
        # The states kept: a slice when they are a run of consecutive states (no copy by
        # fancy indexing per step); rows are put back in `columns`' order at the end.
        contiguous = bool(unique) and unique[-1] - unique[0] + 1 == len(unique)
        self._width = len(unique)
        self._kept: "slice | np.ndarray" = (slice(unique[0], unique[-1] + 1) if contiguous
                                           else np.array(unique, dtype=np.intp))
        # A wide run of x is kept as a view of the stepper's array (no copy); a narrow one
        # is copied, so that a batch does not hold hundreds of whole large states.
        self._whole = n_states <= WHOLE_STATES or (contiguous and len(unique) == n_states)
        self._x_views = self._whole or (contiguous and VIEW_SHARE * len(unique) >= n_states)
        position = {state: k for k, state in enumerate(unique)}
        order = [position[c] for c in columns]
        self._order = (None if order == list(range(len(unique)))
                       else np.array(order, dtype=np.intp))
        self._clear()

    def _clear(self) -> None:
        self._first: list[int] = []  # each step's first grid index
        self._counts: list[int] = []  # and how many grid points it holds
        self._t0: list[float] = []
        self._t1: list[float] = []
        self._x0: list[np.ndarray] = []
        self._x1: list[np.ndarray] = []
        self._k: list[np.ndarray] = []

    def __len__(self) -> int:
        return len(self._counts)

    def add(self, stepper: "Dopri5Stepper", first: int, last: int) -> None:
        """Grid points first..last (indices, last included) inside the stepper's last
        step."""
        self._first.append(first)
        self._counts.append(last - first + 1)
        self._t0.append(stepper.t_old)
        self._t1.append(stepper.t)
        kept = self._kept
        if self._whole:
            self._x0.append(stepper.x_old)
            self._x1.append(stepper.x)
            self._k.append(stepper.K.copy())
            return
        if self._x_views:
            self._x0.append(stepper.x_old[kept])
            self._x1.append(stepper.x[kept])
        elif isinstance(kept, slice):
            self._x0.append(stepper.x_old[kept].copy())
            self._x1.append(stepper.x[kept].copy())
        else:
            self._x0.append(stepper.x_old.take(kept))
            self._x1.append(stepper.x.take(kept))
        if isinstance(kept, slice):
            self._k.append(stepper.K[:, kept].copy())
        else:
            self._k.append(stepper.K.take(kept, axis=1))

    def _grid_times(self) -> np.ndarray:
        """start + k * interval for every grid index added, in order (one arange when the
        steps' ranges follow each other, as they do within a segment)."""
        first, counts = self._first, self._counts
        end = first[0] + sum(counts)
        if all(f + c == g for f, c, g in zip(first, counts, first[1:])):
            ks = np.arange(first[0], end)
        else:
            ks = np.concatenate([np.arange(f, f + c) for f, c in zip(first, counts)])
        return self._start + ks * self._interval

    def take(self) -> tuple[np.ndarray, np.ndarray]:
        """(times, rows) of everything added since the last call, in order.

        Hairer's CONTD5 coefficients are computed once per step, for all steps at once (as
        `Dopri5Stepper._coefficients`). A small batch (a segment between two events)
        gathers them per row and evaluates `dense`'s Horner scheme; a large one evaluates
        each step's rows as one small matrix product of the powers [1, s, s s1, s^2 s1,
        s^2 s1^2] (s1 = 1 - s) with them, `dense`'s polynomial multiplied out, equal to it
        to rounding: gathering every coefficient for every row cost more than the run's
        steps when a model logs a hundred states."""
        counts = self._counts
        times = self._grid_times()
        t0, t1 = np.array(self._t0), np.array(self._t1)
        h = t1 - t0
        x0, x1, K = np.array(self._x0), np.array(self._x1), np.array(self._k)
        if self._whole and x0.shape[1] != self._width:  # the logged states of whole ones
            kept = self._kept
            if isinstance(kept, slice):  # K contiguous: einsum's rounding follows layout
                x0, x1, K = x0[:, kept], x1[:, kept], np.ascontiguousarray(K[:, :, kept])
            else:
                x0, x1, K = x0.take(kept, axis=1), x1.take(kept, axis=1), K.take(kept, axis=2)
        hc = h[:, None]
        r0 = x1 - x0
        r1 = hc * K[:, 0] - r0
        r2 = r0 - hc * K[:, 6] - r1
        r3 = hc * np.einsum("r,nrc->nc", D, K)
        step = np.repeat(np.arange(len(counts)), counts)  # each row's step
        s = (times - t0[step]) / h[step]
        s1 = 1.0 - s
        coef = np.stack([x0, r0, r1, r2, r3], axis=1)  # (steps, 5, states kept)
        if times.size * self._width <= SMALL_BATCH:
            c = coef[step]  # each row's coefficients
            s, s1 = s[:, None], s1[:, None]
            rows = c[:, 0] + s * (c[:, 1] + s1 * (c[:, 2] + s * (c[:, 3] + s1 * c[:, 4])))
        else:
            s_s1 = s * s1
            powers = np.stack([np.ones_like(s), s, s_s1, s * s_s1, s_s1 * s_s1], axis=1)
            rows = np.empty((len(times), self._width))
            start = 0
            for k, count in enumerate(counts):
                np.matmul(powers[start:start + count], coef[k], out=rows[start:start + count])
                start += count
        at_end = times == t1[step]
        rows[at_end] = x1[step[at_end]]  # exactly the state at a step's end
        if self._order is not None:
            rows = rows.take(self._order, axis=1)
        self._clear()
        return times, rows
