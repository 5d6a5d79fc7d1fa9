"""Sweeps and Monte Carlo: many runs of one diagram, reduced to metrics where they run.

    table = blocksim.sweep("diagrams/bouncing_ball.json", grid={"mu": "0.5:0.9:5"},
                           metrics=["count:ball.reset", "time:ball.lower limit:1"])
    table.to_pandas()

The package is `blocksim.sweeps` so that `blocksim.sweep` can be the function without
hiding the package (`import blocksim.sweeps.plan as plan` works). `plan` numbers the runs
(grid, samples, seeded draws), `metrics` reduces a run's results, `models` is the one place
parameter values become a compiled model, `worker` runs batches, `executors` places them
(this process, a process pool, Dask), `scheduler` reaches a Dask scheduler, `files` writes
and resumes the output, `table` is the result, `command` the `blocksim sweep` subcommand.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Imported on first use, as in `blocksim`: the CLI's parser reaches `command` through here.
_MODULE_OF = {"sweep": "api", "SweepInterrupted": "api", "Metric": "metrics",
              "parse_metric": "metrics", "Distribution": "plan", "Plan": "plan",
              "make_plan": "plan", "SweepTable": "table"}

__all__ = ["sweep", "SweepTable", "SweepInterrupted", "Metric", "parse_metric", "Plan",
           "Distribution", "make_plan"]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'blocksim.sweeps' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"blocksim.sweeps.{module}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from blocksim.sweeps.api import SweepInterrupted, sweep
    from blocksim.sweeps.metrics import Metric, parse_metric
    from blocksim.sweeps.plan import Distribution, Plan, make_plan
    from blocksim.sweeps.table import SweepTable
