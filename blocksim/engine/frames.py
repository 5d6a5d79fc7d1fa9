"""Results in the shapes Python users work with: a pandas DataFrame, an xarray Dataset, a
matplotlib figure. None of these libraries is needed by blocksim itself; each is imported
when asked for, and its absence is an ImportError naming the extra to install.

Every event instant is two rows of the results (its left limit, then its right limit):
both are kept, and marked in an `event` column ("left", "right"; "" on other rows), so
`df[df.event != "right"]` is the left-continuous signal and a jump plots as a vertical line.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from blocksim.engine.results import Results

MARK = "event"
LEFT, RIGHT = "left", "right"


def need_library(module: str, extra: str, what: str) -> Any:
    """`module` imported, or an ImportError saying `what` needs it and which extra installs
    it (results here, sweep tables in blocksim.sweeps)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{what} needs {module.split('.')[0]}, which is not installed: "
                          f"pip install 'blocksim[{extra}]'") from exc


def limits(time: np.ndarray) -> np.ndarray:
    """For each row: "left" or "right" for the two rows of an event instant, else ""."""
    time = np.asarray(time, dtype=float)
    same = time[1:] == time[:-1]
    marks = np.full(time.shape, "", dtype=object)
    marks[:-1][same] = LEFT
    marks[1:][same] = RIGHT
    return marks


def _mark_name(mark: str | None, names: Sequence[str]) -> str | None:
    if mark is not None and mark in names:
        raise ValueError(f"a logged signal is named '{mark}': pass another column name for "
                         f"the event marks (mark='...') or mark=None")
    return mark


def to_pandas(results: "Results", mark: str | None = MARK) -> Any:
    """A DataFrame indexed by time (named "time"), one column per logged signal (vectors
    as `id[0]`, `id[1]`, ... as in the CSV) and, unless `mark` is None, the column `mark`
    saying which rows are an event's left and right limits."""
    pd = need_library("pandas", "pandas", "results.to_pandas()")
    columns = dict(list(results.columns())[1:])
    mark = _mark_name(mark, list(columns))
    frame = pd.DataFrame(columns, index=pd.Index(np.asarray(results.time), name="time"))
    if mark is not None:
        frame[mark] = pd.Categorical(limits(results.time), categories=["", LEFT, RIGHT])
    frame.attrs.update(status=results.status, message=results.message,
                       warnings=list(results.warnings))
    return frame


def to_xarray(results: "Results", mark: str | None = MARK) -> Any:
    """An xarray Dataset on the dimension `time`: one variable per logged signal (a vector
    signal has a second dimension, `<id>_element`), the event marks as a coordinate along
    time, and the event log as variables on the dimension `event_index`."""
    xr = need_library("xarray", "xarray", "results.to_xarray()")
    mark = _mark_name(mark, list(results.signals) + ["event_time", "event_block",
                                                              "event_kind"])
    data: dict[str, Any] = {}
    for name, values in results.signals.items():
        dims = ("time",) if values.ndim == 1 else ("time", f"{name}_element")
        data[name] = (dims, values)
    data["event_time"] = ("event_index", np.array([e.time for e in results.events], float))
    data["event_block"] = ("event_index", np.array([e.block for e in results.events], str))
    data["event_kind"] = ("event_index", np.array([e.kind for e in results.events], str))
    coords: dict[str, Any] = {"time": np.asarray(results.time)}
    if mark is not None:
        coords[mark] = ("time", limits(results.time).astype(str))
    attrs = {"status": results.status, "message": results.message,
             "warnings": "\n".join(results.warnings)}
    return xr.Dataset(data, coords=coords, attrs=attrs)


def plot(results: "Results", signals: Sequence[str] | None = None,
         events: bool | str = True, figsize: tuple[float, float] | None = None) -> Any:
    """A matplotlib Figure: one axes per logged signal (all by default), sharing the time
    axis, with the event instants as thin vertical lines (`events` a kind such as "reset"
    marks only those; False none). Jumps show as vertical segments (both limits are kept)."""
    need_library("matplotlib", "plot", "results.plot()")
    plt = need_library("matplotlib.pyplot", "plot", "results.plot()")
    names = list(results.signals) if signals is None else list(signals)
    unknown = [name for name in names if name not in results.signals]
    if unknown:
        raise KeyError(f"no logged signal '{unknown[0]}' (logged: "
                       f"{', '.join(results.signals) or 'none'})")
    count = max(1, len(names))
    fig, axes = plt.subplots(count, 1, sharex=True, squeeze=False,
                             figsize=figsize or (8.0, 1.0 + 2.2 * count))
    instants = sorted({e.time for e in results.events
                       if events is True or (isinstance(events, str) and e.kind == events)})
    for ax, name in zip(axes[:, 0], names or [None]):
        if name is not None:
            values = results.signals[name]
            lines = ax.plot(results.time, values, linewidth=1.2)
            if values.ndim > 1:
                for k, line in enumerate(lines):
                    line.set_label(f"{name}[{k}]")
                ax.legend(loc="best", fontsize="small")
            ax.set_ylabel(name)
        if events and instants:
            ax.vlines(instants, 0, 1, transform=ax.get_xaxis_transform(), colors="0.6",
                      linewidths=0.6, linestyles=":", label="events")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    if results.status != "finished":
        fig.suptitle(f"{results.status}: {results.message}"[:120], fontsize="small")
    fig.tight_layout()
    return fig
