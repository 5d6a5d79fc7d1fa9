"""The runs of a sweep: a grid, Monte Carlo draws and given samples, as one numbered table.

Run `i` always gets the same parameter values, however many workers there are, however
many runs there are, and whether the sweep was resumed: a grid is a fixed product, and the
Monte Carlo draws come in fixed blocks of BLOCK runs, block b drawn by its own generator
(a numpy SeedSequence of the sweep's seed with spawn key `(b,)`, BLOCK values of each
parameter in turn), so run i's values depend on the seed and i alone; never on a generator
shared by the runs of a worker. (A generator per run would be as reproducible and cost
0.2 ms a run.)
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from blocksim.errors import BlocksimError, shown

BLOCK = 1024  # runs per block of draws (part of the draws' definition: never change it)
MAX_SEED = 2**128 - 1  # a SeedSequence's entropy: 128 bits are plenty
MAX_RUNS = 2_000_000  # a typo (`--grid a=0:1:1e9`) is refused before anything is allocated

_NUMBER = r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"
_DISTRIBUTION = re.compile(rf"\s*(normal|uniform)\s*\({_NUMBER},{_NUMBER}\)\s*$")


@dataclass(frozen=True)
class Distribution:
    """One Monte Carlo parameter: normal(mu, sigma) or uniform(a, b)."""

    kind: str
    a: float
    b: float

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.kind == "normal":
            return rng.normal(self.a, self.b, size)
        return rng.uniform(self.a, self.b, size)

    def __str__(self) -> str:
        return f"{self.kind}({self.a:g},{self.b:g})"


@dataclass(frozen=True)
class Plan:
    """The swept parameter names (the output's first columns) and each run's values."""

    names: tuple[str, ...]
    rows: tuple[tuple[float, ...], ...]

    def __len__(self) -> int:
        return len(self.rows)

    def values(self, index: int) -> dict[str, float]:
        return dict(zip(self.names, self.rows[index]))


def parse_distribution(name: str, text: Any) -> Distribution:
    """`normal(MU,SIGMA)` or `uniform(A,B)` (text), or a ready Distribution / (kind, a, b)."""
    if isinstance(text, Distribution):
        dist = text
    elif isinstance(text, (tuple, list)) and len(text) == 3:
        dist = Distribution(str(text[0]), float(text[1]), float(text[2]))
    else:
        match = _DISTRIBUTION.match(str(text))
        if not match:
            raise BlocksimError(f"sample '{shown(name)}': expected normal(MU,SIGMA) or "
                                f"uniform(A,B), got '{shown(text)}'")
        dist = Distribution(match[1], float(match[2]), float(match[3]))
    if dist.kind not in ("normal", "uniform") or not all(map(math.isfinite, (dist.a, dist.b))):
        raise BlocksimError(f"sample '{shown(name)}': {dist} is not a finite normal or "
                            f"uniform distribution")
    if dist.kind == "normal" and dist.b < 0:
        raise BlocksimError(f"sample '{shown(name)}': sigma must be >= 0, got {dist.b:g}")
    if dist.kind == "uniform" and dist.b < dist.a:
        raise BlocksimError(f"sample '{shown(name)}': uniform(A,B) needs A <= B, got {dist}")
    return dist


def parse_range(name: str, text: Any) -> list[float]:
    """A grid axis: `START:STOP:N` (N points from START to STOP inclusive), or values."""
    if isinstance(text, str):
        parts = text.split(":")
        try:
            if len(parts) != 3:
                raise ValueError
            start, stop, count = float(parts[0]), float(parts[1]), float(parts[2])
        except ValueError:
            raise BlocksimError(f"grid '{shown(name)}': expected START:STOP:N, got "
                                f"'{shown(text)}'") from None
        if not (math.isfinite(start) and math.isfinite(stop)) or count != int(count) \
                or not 1 <= count <= MAX_RUNS:
            raise BlocksimError(f"grid '{shown(name)}': START and STOP must be finite and N a "
                                f"whole number from 1 to {MAX_RUNS:,}, got '{shown(text)}'")
        return [float(v) for v in np.linspace(start, stop, int(count))]
    values = np.atleast_1d(np.asarray(text, dtype=float)).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)):
        raise BlocksimError(f"grid '{shown(name)}': needs at least one finite value")
    return [float(v) for v in values]


def _check_names(groups: Iterable[Iterable[str]]) -> tuple[str, ...]:
    names: list[str] = []
    for group in groups:
        for name in group:
            if not isinstance(name, str) or not name:
                raise BlocksimError(f"a swept parameter needs a name, got {shown(name)!r}")
            if name in names:
                raise BlocksimError(f"parameter '{shown(name)}' is swept twice")
            names.append(name)
    return tuple(names)


def make_plan(grid: Mapping[str, Any] | None = None,
              samples: Sequence[Mapping[str, Any]] | Any = None,
              draws: Mapping[str, Any] | None = None, n: int | None = None,
              seed: int | None = None) -> Plan:
    """Every run: each row of `samples` (or one empty row) crossed with the `grid`'s product,
    each of those repeated `n` times with fresh `draws` (Monte Carlo).

    `samples` is a list of dicts or a pandas DataFrame; `draws` maps names to
    `normal(MU,SIGMA)` / `uniform(A,B)`; `n` is the number of draws per grid point
    (default 1 without draws).
    """
    axes = {name: parse_range(name, spec) for name, spec in (grid or {}).items()}
    dists = {name: parse_distribution(name, spec) for name, spec in (draws or {}).items()}
    given = _sample_rows(samples)
    given_names = list(given[0]) if given else []
    names = _check_names([given_names, axes, dists])
    if dists and seed is None:
        raise BlocksimError("Monte Carlo draws need a seed (--seed S), so they can be "
                            "repeated")
    check_seed(seed)
    repeats = 1 if n is None else int(n)
    if n is not None and (n != repeats or repeats < 1):
        raise BlocksimError(f"-n must be a whole number >= 1, got {n}")
    total = max(len(given), 1) * math.prod(len(v) for v in axes.values()) * repeats
    if total > MAX_RUNS:
        raise BlocksimError(f"the sweep has {total:,} runs, more than {MAX_RUNS:,}")
    drawn = _draws(list(dists.values()), seed, total)
    rows = []
    for sample in given or [{}]:
        fixed = tuple(float(sample[k]) for k in given_names)
        for point in itertools.product(*axes.values()):
            for _ in range(repeats):
                rows.append(fixed + point + drawn[len(rows)])
    return Plan(names, tuple(rows))


def check_seed(seed: Any) -> None:
    """A seed is None or a whole number from 0 to MAX_SEED (numpy's SeedSequence takes no
    negative one; the bound keeps a typo from being a 10,000-digit seed)."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) \
            or not 0 <= seed <= MAX_SEED:
        raise BlocksimError(f"the seed must be a whole number from 0 to 2**128 - 1, got "
                            f"{shown(repr(seed))}")


def _draws(dists: list[Distribution], seed: int | None, total: int) -> list[tuple]:
    """Each run's draws, block by block (see the module's docstring)."""
    if not dists:
        return [()] * total
    columns = []
    for block in range(-(-total // BLOCK)):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed,
                                                                         spawn_key=(block,))))
        columns.append([d.draw(rng, BLOCK) for d in dists])
    values = np.concatenate([np.column_stack(c) for c in columns])[:total]
    return [tuple(map(float, row)) for row in values]


def _sample_rows(samples: Any) -> list[dict[str, float]]:
    """Rows from a list of dicts or a pandas DataFrame, all with the same names, numeric."""
    if samples is None:
        return []
    if hasattr(samples, "to_dict") and hasattr(samples, "columns"):  # a DataFrame
        samples = samples.to_dict(orient="records")
    rows = [dict(row) for row in samples]
    if not rows:
        raise BlocksimError("samples: the table has no rows")
    names = list(rows[0])
    for k, row in enumerate(rows):
        if list(row) != names and set(row) != set(names):
            raise BlocksimError(f"samples: row {k} has parameters {sorted(row)}, row 0 has "
                                f"{sorted(names)}")
        for name in names:
            try:
                value = float(row[name])
            except (TypeError, ValueError):
                raise BlocksimError(f"samples: row {k}, parameter '{shown(name)}': not a "
                                    f"number ({shown(row[name])!r})") from None
            row[name] = value
    return rows
