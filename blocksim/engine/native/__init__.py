"""The numba backend: the model's functions compiled by numba and a compiled hybrid loop.

`build` makes a model's numba functions (once per structure), `loop` drives a run with
them (the Python side of each call of the compiled loop), `kernel` is that loop
(dopri5 steps, `locate` finds crossings, `settle` settles events, `rings` keeps delay
histories), `codegen` writes the model's numba module (`formulas`: the functions generated
code calls; `fusion`: per-block-type loops), `layout` the slots and signatures shared by
both sides, `cache` keeps numba's on-disk cache of the kernel in step with its sources.
Importing this package imports no numba: `fusion` also serves the Python backend.
"""
