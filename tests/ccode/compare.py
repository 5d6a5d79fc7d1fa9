"""Compare a model's C functions with its generated Python ones at random states."""
from __future__ import annotations

import numpy as np

from blocksim.ccode.library import ModelLibrary


def _close(a, b, what):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    same_nan = np.isnan(a) & np.isnan(b)
    ok = same_nan | (a == b) | np.isclose(a, b, rtol=1e-13, atol=1e-300)
    assert ok.all(), f"{what}: python {a[~ok][:5]} C {b[~ok][:5]}"


def compare_model(model, draws: int = 40, seed: int = 1) -> int:
    """Check every function at `draws` random states; returns how many calls compared."""
    lib = ModelLibrary.for_model(model)
    f = model.functions
    rng = np.random.default_rng(seed)
    n, nz = model.n_states, model.n_zc
    m_state = model.m0.copy()
    calls = 0
    for k in range(draws):
        t = float(rng.uniform(0, 10)) if k else 0.0
        x = model.x0 + rng.normal(size=n) * (1.0 + np.abs(model.x0))
        x = np.where(np.isfinite(x), x, 0.0)
        z = rng.choice([-1.0, 0.0, 1.0], size=nz) if nz else np.zeros(0)
        zn = rng.choice([-1.0, 1.0], size=nz) if nz else np.zeros(0)
        m = m_state.copy()
        init = k % 7 == 0
        for name, c_fn in (("deriv", lib.deriv), ("zc", lib.zc), ("outputs", lib.outputs)):
            try:
                py = f[name](t, x.copy(), m.copy(), z.copy())
            except (ArithmeticError, ValueError):
                continue  # a domain error in Python; C gives NaN (not compared)
            _close(py, c_fn(t, x.copy(), m.copy(), z.copy()), f"{name} at draw {k}")
            calls += 1
        from blocksim.engine import derived
        try:
            obs = derived.observe(model)(t, x.copy(), m.copy(), z.copy())
            _close(obs, lib.observe(t, x.copy(), m.copy(), z.copy()), f"observe at draw {k}")
        except (ArithmeticError, ValueError):
            pass
        xp, mp, xc, mc = x.copy(), m.copy(), x.copy(), m.copy()
        ev: list = []
        try:
            changed = f["update"](t, xp, mp, z.copy(), zn.copy(), init, ev)
        except (ArithmeticError, ValueError):
            changed = None
        c_changed, c_ev = lib.event("update", t, xc, mc, z.copy(), zn.copy(), init)
        if changed is not None:
            assert bool(changed) == bool(c_changed), f"update changed at draw {k}"
            assert ev == c_ev, f"update log at draw {k}: {ev} {c_ev}"
            _close(xp, xc, f"update x at draw {k}")
            _close(mp, mc, f"update m at draw {k}")
            m_state = mp
        for name in ("pre_event", "after_event"):
            xp, mp, xc, mc = x.copy(), m.copy(), x.copy(), m.copy()
            try:
                py = f[name](t, xp, mp, z.copy())
            except (ArithmeticError, ValueError):
                continue  # a domain error in Python (a Newton solve that fails there)
            c_r, _ = lib.event(name, t, xc, mc, z.copy(), None, False)
            assert bool(py) == bool(c_r), name
            _close(xp, xc, name)
            _close(mp, mc, name)
        hits = [float(v) for v in rng.choice([0.0, 1.0], size=len(model.rates) +
                                             len(model.trigger_slots))]
        xp, mp, xc, mc = x.copy(), m.copy(), x.copy(), m.copy()
        try:
            f["sample"](t, xp, mp, z.copy(), hits)
        except (ArithmeticError, ValueError):
            continue  # a domain error in Python at this random state
        lib.sample(t, xc, mc, z.copy(), hits)
        _close(xp, xc, f"sample x at draw {k}")
        _close(mp, mc, f"sample m at draw {k}")
        _close([f["next_time"](t, m.copy())], [lib.next_time(t, m.copy())], "next_time")
        calls += 6
    return calls
