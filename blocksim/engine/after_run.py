"""The blocks' work once a run has ended: a ToFile writes the signal it logged, also after
a failed or interrupted run (it then holds what was computed so far)."""
from __future__ import annotations

import logging

from blocksim.compiler.compiled import CompiledModel
from blocksim.engine.results import Results

log = logging.getLogger(__name__)


def run_after(model: CompiledModel, results: Results
              ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Call every `after_run` of the model with its block's logged signal; returns the
    (block id, what it wrote) of those that said, and the (block id, message) of those
    that failed (each is also logged)."""
    written, failures = [], []
    for hook in model.after_run:
        name = model.block_ids[hook.block]
        try:
            said = hook.impl.after_run(hook.p, name, results.time, results.signals[name])
        except (OSError, ValueError) as exc:
            log.debug("after_run of %s failed", name, exc_info=True)
            failures.append((name, str(exc)))
            continue
        if said:
            written.append((name, str(said)))
    return written, failures
