"""Make the README's Bode plot: diagrams/lag_leadlag_loop.json linearised from the set
point r to the output y, against its frequency response simulated by
blocksim.frequency_response over 0.01 to 100 rad/s (the whole sweep of issue 29's check;
the tests run three of its frequencies).

Run from the repository root (needs the `plot` and `control` extras):
    python docs/make_bode_image.py [--points N] [--out FILE]
It prints the largest differences (dB, degrees) and saves docs/images/bode_lag_leadlag.png.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import blocksim

IMAGES = Path(__file__).parent / "images"
DIAGRAM = Path(__file__).resolve().parents[1] / "diagrams" / "lag_leadlag_loop.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=25, help="simulated frequencies")
    parser.add_argument("--out", type=Path, default=IMAGES / "bode_lag_leadlag.png")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    diagram = blocksim.load(DIAGRAM)
    op = blocksim.operating_point(diagram, time=2.0)  # at rest after the set point's step
    sys = blocksim.linearize(diagram, inputs=["r"], outputs=["y"], at=op)
    omega = np.logspace(-2, 2, args.points)
    began = time.perf_counter()
    measured = blocksim.frequency_response(diagram, "r", "y", omega, at=op)
    took = time.perf_counter() - began
    dense = np.logspace(-2, 2, 400)
    linear = sys(1j * dense).ravel()
    at_points = sys(1j * omega).ravel()
    gain_error = np.max(np.abs(measured.magnitude_db - 20 * np.log10(np.abs(at_points))))
    phase_error = np.max(np.abs(np.degrees(np.angle(measured.response / at_points))))
    print(f"{len(omega)} frequencies simulated in {took:.1f} s; largest differences "
          f"{gain_error:.2g} dB, {phase_error:.2g} degrees; all settled: "
          f"{bool(measured.settled.all())}")

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 5.5))
    top.semilogx(dense, 20 * np.log10(np.abs(linear)), label="linearize (r -> y)")
    top.semilogx(omega, measured.magnitude_db, "o", mfc="none", label="frequency_response "
                                                                      "(simulated)")
    top.set_ylabel("magnitude (dB)")
    top.grid(True, which="both", alpha=0.3)
    top.legend(loc="lower left")
    bottom.semilogx(dense, np.degrees(np.unwrap(np.angle(linear))))
    bottom.semilogx(omega, measured.phase_deg, "o", mfc="none")
    bottom.set_ylabel("phase (deg)")
    bottom.set_xlabel("frequency (rad/s)")
    bottom.grid(True, which="both", alpha=0.3)
    top.set_title("diagrams/lag_leadlag_loop.json: closed loop from r to y")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
