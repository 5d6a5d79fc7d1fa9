"""Long-running property fuzzer over random diagrams (the CI version is
tests/test_fuzz_diagrams.py, bounded to seconds).

    python benchmarks/fuzz.py --minutes 30                 # python backend (+ numba rounds)
    python benchmarks/fuzz.py --minutes 10 --backends python --out fuzz-findings

Rounds of hypothesis examples with fresh seeds run until the time is up. Every failure of a
kind not seen before is shrunk to a minimal diagram and saved as JSON (document, simulate()
arguments, detail) in --out; later examples of a known kind are counted, and the first
--keep of each kept as found in --out/all (one reproducer can hide other causes). A hang costs
its cap once per shrink step, so the cap drops to --shrink-cap once a round has found one.
With numba installed, numba rounds also run each example on the python backend and compare
the outcomes (a disagreement is a finding; different values are reported as soft). Every
--broken-every-th round draws broken diagrams instead (one thing broken on purpose), which
must be refused with a CompileError naming a block.
The summary: examples tried, outcomes of the valid ones (finished, refused, failed...) with
the share that compiled and the refusals grouped by kind (a valid diagram the compiler
refuses is the generator's miss, or the compiler's), the broken ones' outcomes, and
failures by kind with the file of each minimal reproducer.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis.errors import HypothesisException  # noqa: E402

from hostile.graphs import (broken_diagrams, describe, diagrams, message_shape,  # noqa: E402
                            refusal_problem, run_example)


class Found(Exception):
    """Raised inside a hypothesis round for a failure kind not seen before."""

    def __init__(self, kind: str, detail: str, document: dict, simulate: dict, backend: str):
        super().__init__(kind)
        self.kind, self.detail = kind, detail
        self.document, self.simulate, self.backend = document, simulate, backend


ARITHMETIC = ("division by zero", "outside its domain", "too large for a float", "overflow")


def _compare(python: dict, native: dict) -> tuple[str | None, str]:
    """Python vs numba outcome of one example: a kind if they disagree."""
    a, b = python.get("outcome"), native.get("outcome")
    if a == "SimulationError" and b == "finished" and any(
            words in python.get("message", "") for words in ARITHMETIC):
        # Documented: compiled code follows IEEE arithmetic (inf, NaN) where Python stops.
        return "soft: python stops at an arithmetic fault, numba follows IEEE", ""
    if a != b:
        return f"backends disagree on the outcome (python {a}, numba {b})", ""
    ra, rb = python.get("results"), native.get("results")
    if ra is None or rb is None:
        return None, ""
    for name in ra.signals:
        x, y = np.asarray(ra[name]), np.asarray(rb[name])
        if x.shape != y.shape:
            return "soft: backends give different row counts", f"{name}: {x.shape} {y.shape}"
        if not np.allclose(x, y, rtol=1e-6, atol=1e-9, equal_nan=True):
            worst = float(np.nanmax(np.abs(x - y)))
            return "soft: backends give different values", f"{name}: max diff {worst:.3g}"
    return None, ""


class Campaign:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.out = Path(args.out)
        self.tried: Counter = Counter()
        self.outcomes: Counter = Counter()  # of the valid diagrams
        self.refusals: Counter = Counter()  # of the valid diagrams, by kind of message
        self.broken: Counter = Counter()  # outcomes of the broken diagrams
        self.kinds: Counter = Counter()
        self.saved: dict[str, Path] = {}
        self.detail: dict[str, str] = {}
        self.deadline = time.monotonic() + 60 * args.minutes

    def body(self, backend: str, state: dict):
        """The hypothesis test of one round."""
        args = self.args

        def check(example):
            document, simulate = example[:2]
            if state.get("target") is None and time.monotonic() > self.deadline:
                return  # time is up: let the round end quietly
            cap = args.shrink_cap if state.get("target") else args.cap
            info: dict = {}
            if backend == "broken":
                kind, detail = refusal_problem(document, simulate, cap, info)
                if kind:
                    detail = f"{example[2]}: {detail}"
            elif backend == "numba":
                simulate = {**simulate, "solver": "dopri5"}
                simulate.pop("step", None)
                kind, detail = run_example(document, simulate, "numba", max(cap, 120.0), info)
                if kind is None:
                    reference: dict = {}
                    kind, detail = run_example(document, simulate, "python", cap, reference)
                    if kind is None:
                        kind, detail = _compare(reference, info)
            else:
                kind, detail = run_example(document, simulate, backend, cap, info)
            if state.get("target") is None:  # count first passes only, not shrink steps
                self.tried[backend] += 1
                outcome = info.get("outcome", "?")
                if backend == "broken":
                    self.broken[outcome] += 1
                else:
                    self.outcomes[outcome] += 1
                    if outcome == "CompileError":
                        self.refusals[message_shape(info.get("message", ""))] += 1
                if kind:
                    self.kinds[kind] += 1
            if not kind:
                return
            if state.get("target") is None and not kind.startswith("soft:"):
                self.keep(Found(kind, detail, document, simulate, backend))
            if kind.startswith("soft:"):
                self.detail.setdefault(kind, f"{detail}\n{describe(document, simulate, backend)}")
                return
            if kind in self.saved or (state.get("target") not in (None, kind)):
                return
            if state.get("target") is None:
                state["target"] = kind
                state["first"] = Found(kind, detail, document, simulate, backend)
            raise Found(kind, detail, document, simulate, backend)
        return check

    def round(self, backend: str, round_seed: int) -> None:
        examples = self.args.examples if backend != "numba" else self.args.numba_examples
        state: dict = {}
        strategy = (broken_diagrams if backend == "broken" else diagrams)(
            max_blocks=self.args.max_blocks)
        test = settings(max_examples=examples, deadline=None, database=None,
                        phases=(Phase.generate, Phase.shrink), report_multiple_bugs=False,
                        suppress_health_check=list(HealthCheck), print_blob=False)(
            seed(round_seed)(given(strategy)(self.body(backend, state))))
        try:
            test()
        except Found as found:
            self.save(found)
        except (HypothesisException, Exception) as exc:  # flaky shrink, a crash of hypothesis
            first = state.get("first")
            if first is not None:
                first.detail += f" (not shrunk: {type(exc).__name__})"
                self.save(first)
            else:
                self.kinds[f"fuzzer: {type(exc).__name__}"] += 1

    def keep(self, found: Found) -> None:
        """Every example of a failure kind, as found (not shrunk), up to --keep per kind in
        --out/all: one minimal reproducer per kind can hide other causes."""
        count = self.kinds[found.kind]
        if count <= self.args.keep:
            self._write(found, self.out / "all", f"-{count}")

    def _write(self, found: Found, folder: Path, suffix: str = "") -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", found.kind).strip("-")[:80]
        path = folder / f"{found.backend}-{slug}{suffix}.json"
        path.write_text(json.dumps({"kind": found.kind, "detail": found.detail,
                                    "backend": found.backend, "simulate": found.simulate,
                                    "diagram": found.document}, indent=1, allow_nan=True))
        return path

    def save(self, found: Found) -> None:
        path = self._write(found, self.out)
        self.saved[found.kind] = path
        self.detail[found.kind] = found.detail
        print(f"  new failure: {found.kind} -> {path}", flush=True)

    def run(self) -> int:
        backends = [b for b in self.args.backends.split(",") if b]
        if "numba" in backends and importlib.util.find_spec("numba") is None:
            print("numba is not installed: python backend only")
            backends = [b for b in backends if b != "numba"]
        start = time.monotonic()
        n = 0
        while time.monotonic() < self.deadline:
            backend = backends[n % len(backends)] if "numba" not in backends else (
                "numba" if n % self.args.numba_every == self.args.numba_every - 1 else "python")
            if backend == "python" and self.args.broken_every and \
                    n % self.args.broken_every == self.args.broken_every - 2:
                backend = "broken"
            self.round(backend, self.args.seed + n)
            n += 1
            if n % 10 == 0:
                print(f"  {time.monotonic() - start:7.0f} s: {sum(self.tried.values())} "
                      f"examples, {len(self.saved)} failure kinds", flush=True)
        self.summary(time.monotonic() - start, n)
        return 1 if self.saved else 0

    def summary(self, seconds: float, rounds: int) -> None:
        print(f"\nexamples tried: {sum(self.tried.values())} in {seconds / 60:.1f} min "
              f"({rounds} rounds; " + ", ".join(f"{k} {v}" for k, v in self.tried.items())
              + ")")
        valid = sum(self.outcomes.values())
        if valid:
            compiled = valid - self.outcomes["CompileError"]
            print(f"valid diagrams: {compiled} of {valid} compiled "
                  f"({100 * compiled / valid:.1f} %); outcomes: "
                  + ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common()))
        for shape, count in self.refusals.most_common(10):
            print(f"  refused {count:5d}  {shape}")
        if self.broken:
            print("broken diagrams: "
                  + ", ".join(f"{k} {v}" for k, v in self.broken.most_common()))
        if not self.kinds:
            print("failures: none")
            return
        print("failures by kind (count over first passes; minimal reproducer):")
        for kind, count in self.kinds.most_common():
            where = self.saved.get(kind)
            print(f"  {count:6d}  {kind}" + (f"\n          -> {where}" if where else ""))
            if kind.startswith("soft:") and kind in self.detail:
                print("          e.g. " + self.detail[kind].splitlines()[0][:200])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--backends", default="python,numba")
    parser.add_argument("--out", default="fuzz-findings", help="folder for minimal failures")
    parser.add_argument("--cap", type=float, default=10.0, help="seconds per run")
    parser.add_argument("--shrink-cap", type=float, default=3.0,
                        help="seconds per run while shrinking a failure")
    parser.add_argument("--examples", type=int, default=100, help="examples per round")
    parser.add_argument("--numba-examples", type=int, default=5)
    parser.add_argument("--numba-every", type=int, default=5, help="every n-th round is numba")
    parser.add_argument("--broken-every", type=int, default=5,
                        help="every n-th round draws broken diagrams (0: none)")
    parser.add_argument("--max-blocks", type=int, default=10)
    parser.add_argument("--keep", type=int, default=20,
                        help="examples of each failure kind kept as found, in OUT/all")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    args = parser.parse_args(argv)
    logging.getLogger("blocksim").setLevel(logging.ERROR)  # fallback notices: not findings
    print(f"fuzzing for {args.minutes:g} min, seed {args.seed}, findings in {args.out}/")
    return Campaign(args).run()


if __name__ == "__main__":
    sys.exit(main())
