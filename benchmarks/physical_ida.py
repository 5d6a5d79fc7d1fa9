"""The C21 Shockley circuit as an implicit index-1 DAE solved by SUNDIALS IDA (scikits.odes),
restarting at each uD = 0 crossing, beside blocksim's reduction of the same circuit from
components (docs/physical.md, "Choices, measured").

Needs scikits.odes, which is built from source against the SUNDIALS C library:
    apt-get install libsundials-dev && SUNDIALS_INST=/usr pip install "scikits.odes==2.7.0"
"""
import time
from pathlib import Path

import numpy as np

try:
    from scikits.odes import dae
except ImportError:
    raise SystemExit("needs scikits.odes (see this file's docstring)")
R1, R2, L, C, f, IS, UT = 1000.0, 20.0, 2.53e-5, 1e-7, 150e3, 1e-8, 0.026
on = [True]
def iD(uD):
    return IS*(np.exp(uD/UT) - 1) if on[0] else 0.0
def res(t, y, yd, out):
    uC, i, uD = y
    u0 = -np.sin(2*np.pi*f*t)
    d = iD(uD)
    out[0] = C*yd[0] - (i + d)
    out[1] = L*yd[1] - (u0 - R1*i - R2*(i + d) - uC)
    out[2] = R2*(i + d) + uC + uD
def root(t, y, yd, out):
    out[0] = y[2]
def run(rtol, atol):
    t, y = 0.0, np.zeros(3)
    on[0] = True  # uD = 0 at the start; the first motion makes it positive
    switches = []
    t_end = 1e-4
    times = [2.2e-6, 1e-4]
    found = {}
    while t < t_end:
        yd = np.zeros(3)
        u0 = -np.sin(2*np.pi*f*t)
        # consistent derivatives: uC' = (i + iD)/C, i' = (u0 - R1 i - R2 (i+iD) - uC)/L
        d = iD(y[2]); yd[0] = (y[1] + d)/C; yd[1] = (u0 - R1*y[1] - R2*(y[1] + d) - y[0])/L
        solver = dae("ida", res, rtol=rtol, atol=atol, algebraic_vars_idx=[2], rootfn=root,
                     nr_rootfns=1, old_api=False, max_steps=500000, one_step_compute=False,
                     compute_initcond="yp0", exclude_algvar_from_error=True)
        outs = [t] + [tt for tt in times if tt > t] + [t_end]
        sol = solver.solve(outs, y, yd)
        for tt, yy in zip(sol.values.t, sol.values.y):
            if tt in times:
                found[tt] = yy.copy()
        if sol.roots.t is not None and len(sol.roots.t) and sol.roots.t[0] < t_end:
            t = float(sol.roots.t[0]); y = np.array(sol.roots.y[0]); y[2] = 0.0
            if switches and t - switches[-1] < 1e-12:  # the restart's own noise: undo
                switches.pop()
            else:
                switches.append(t)
            on[0] = not on[0]
        else:
            break
    return switches, found


def blocksim_run(rtol):
    import blocksim
    path = Path(__file__).resolve().parents[1] / "diagrams" / "physical" / "c21_diode_shockley.json"
    t0 = time.perf_counter()
    r = blocksim.simulate(blocksim.load(path), rtol=rtol, atol=1e-12)
    dt = time.perf_counter() - t0
    sw = [e.time for e in r.events if e.kind in ("on", "off")]
    return sw, dt


if __name__ == "__main__":
    for rtol in (1e-8, 1e-10):
        t0 = time.perf_counter()
        sw, found = run(rtol, 1e-12)
        dt = time.perf_counter() - t0
        print(f"IDA      rtol {rtol}: {len(sw)} switches, first {sw[:2]}, "
              f"(uC, i, uD) at 2.2e-6 {found.get(2.2e-6)}, {dt:.2f} s")
        sw, dt = blocksim_run(rtol)
        print(f"blocksim rtol {rtol}: {len(sw)} switches, first {sw[:2]}, {dt:.2f} s "
              f"(load, compile and run)")
    print("reference: 29 switches, the first 4.348576165e-6, 6.725981060e-6; at 2.2e-6 "
          "uC = -1.5076089059e-2, i = -8.5512056e-4, uD = 3.2178010842e-2")
