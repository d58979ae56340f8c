"""The benchmark harness: timing with warm-up, latency summaries, ratio tables, manifests, the interleaved
runner, aggregates, CSV/JSON result files. Imports nothing else of the package; the experiments it runs
are in :mod:`cookbook.harness.experiments`.

>>> s = summarize([0.003, 0.001, 0.002])
>>> s["p50"], s["n"]
(0.002, 3)
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .._validate import integer
from .._validate import seed as check_seed

__all__ = ["Manifest", "aggregate", "best_of", "loglog_slope", "machine", "make_manifest", "mean_by", "ratio_table",
           "run_manifest", "script_args", "summarize", "time_calls", "write_csv", "write_results"]


def time_calls(fn: Callable, inputs: Sequence, *, warmup: int = 1) -> tuple[list[float], list]:
    """Call ``fn(x)`` for each input after ``warmup`` untimed calls; return (seconds per call, outputs).

    >>> seconds, outs = time_calls(abs, [-2, 3])
    >>> len(seconds), outs
    (2, [2, 3])
    """
    if len(inputs) == 0:
        raise ValueError("inputs is empty: nothing to time")
    for x in list(inputs)[:warmup]:
        fn(x)
    times, outs = [], []
    for x in inputs:
        t0 = time.perf_counter()
        outs.append(fn(x))
        times.append(time.perf_counter() - t0)
    return times, outs


def best_of(fn: Callable, *args, repeat: int = 3, **kwargs) -> tuple[float, object]:
    """Fastest wall time of ``repeat`` calls of ``fn(*args, **kwargs)``, and the last result.
    Times the scaling of notebooks/09_benchmark.ipynb (:func:`cookbook.harness.experiments.scaling_runs`).

    >>> seconds, out = best_of(sorted, [3, 1, 2], repeat=2)
    >>> seconds >= 0, out
    (True, [1, 2, 3])
    """
    integer(repeat, "repeat")
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, out


def summarize(seconds: Sequence[float]) -> dict:
    """min / p50 / p95 / p99 / max / mean of a latency sample, plus its size ``n``.

    >>> s = summarize([0.001, 0.002, 0.003, 0.004])
    >>> s["n"], s["min"], s["max"], round(s["mean"], 4)
    (4, 0.001, 0.004, 0.0025)
    """
    a = np.asarray(seconds, dtype=float)
    if a.size == 0:
        raise ValueError("no latencies to summarize")
    q = np.percentile(a, [50, 95, 99])
    return {"n": int(a.size), "min": float(a.min()), "p50": float(q[0]), "p95": float(q[1]), "p99": float(q[2]),
            "max": float(a.max()), "mean": float(a.mean())}


def machine() -> dict:
    """What the numbers were measured on.

    >>> sorted(machine())
    ['cpus', 'numpy', 'platform', 'python']
    """
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "numpy": np.__version__}


def ratio_table(rows: dict[str, dict], *, baseline: str, key: str = "p50") -> str:
    """Markdown table of ``rows[name][key]`` with each row's speed-up against ``baseline``.

    >>> print(ratio_table({"loop": {"p50": 0.004}, "numpy": {"p50": 0.001}}, baseline="loop"))
    | method | p50 (ms) | speed-up vs loop |
    |---|---:|---:|
    | loop | 4.00 | 1.0× |
    | numpy | 1.00 | 4.0× |
    """
    if baseline not in rows:
        raise KeyError(f"baseline {baseline!r} is not among the rows {sorted(rows)}")
    base = rows[baseline][key]
    lines = [f"| method | {key} (ms) | speed-up vs {baseline} |", "|---|---:|---:|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r[key] * 1e3:.2f} | {base / r[key]:.1f}× |")
    return "\n".join(lines)


def script_args(doc: str, argv=None, add=None):
    """Parse a benchmark script's command line: ``--quick``, ``--out`` (created), plus what ``add(parser)``
    adds. Returns ``(args, out_path)``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     args, out = script_args("Time the solvers.", ["--quick", "--out", d])
    ...     args.quick, out.is_dir()
    (True, True)
    """
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller graphs and fewer queries")
    ap.add_argument("--out", default="build/bench", help="output folder (default: build/bench)")
    if add is not None:
        add(ap)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return args, out


def write_results(out_dir: str | os.PathLike, name: str, payload: dict) -> Path:
    """Write ``<out_dir>/<name>.json`` with the machine description added.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     sorted(json.loads(write_results(d, "ppr", {"p50": 0.002}).read_text()))
    ['machine', 'p50']
    """
    if not name or "/" in name:
        raise ValueError(f"name must be a plain file stem, got {name!r}")
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **payload}, indent=2) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- manifests and the interleaved runner

@dataclass(frozen=True)
class Manifest:
    """What a run measures: ``queries`` (indices into the benchmark's query list) × ``top_ks`` × ``depths``,
    drawn with ``seed``. Saved beside the results so a rerun uses the same inputs byte for byte.
    Made by :func:`make_manifest`, taught in notebooks/09_benchmark.ipynb.

    >>> m = Manifest("demo", seed=0, n_available=10, queries=(2, 5), top_ks=(3,), depths=(0, 1))
    >>> m.cells()
    [(2, 3, 0), (2, 3, 1), (5, 3, 0), (5, 3, 1)]
    """

    name: str
    seed: int
    n_available: int
    queries: tuple[int, ...]
    top_ks: tuple[int, ...] = (1, 3, 5, 10)
    depths: tuple[int, ...] = (0, 1, 2)

    def to_json(self) -> str:
        """The manifest as sorted-key JSON text (a trailing newline); :meth:`from_json` reads it back.

        >>> Manifest("demo", 0, 10, (2, 5)).to_json().splitlines()[:3]
        ['{', ' "depths": [', '  0,']
        """
        return json.dumps(asdict(self), sort_keys=True, indent=1) + "\n"

    def cells(self) -> list[tuple[int, int, int]]:
        """Every (query, top_k, depth), in a fixed order: query, then top_k, then depth.

        >>> Manifest("demo", 0, 10, (4,), top_ks=(1, 5), depths=(0,)).cells()
        [(4, 1, 0), (4, 5, 0)]
        """
        return [(q, k, d) for q in self.queries for k in self.top_ks for d in self.depths]

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """The manifest that :meth:`to_json` wrote (lists come back as tuples).

        >>> m = Manifest("demo", 0, 10, (2, 5))
        >>> Manifest.from_json(m.to_json()) == m
        True
        """
        d = json.loads(text)
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


def make_manifest(name: str, n_available: int, n_queries: int, *, seed: int = 0,
                  top_ks: Sequence[int] = (1, 3, 5, 10), depths: Sequence[int] = (0, 1, 2)) -> Manifest:
    """Draw ``n_queries`` distinct query indices out of ``n_available`` with ``seed`` (sorted).
    Taught in notebooks/07_overlap_aware_seeds.ipynb and notebooks/09_benchmark.ipynb.

    >>> m = make_manifest("demo", n_available=100, n_queries=4, seed=0, top_ks=(5,), depths=(1,))
    >>> len(m.queries), m.queries == tuple(sorted(m.queries)), len(m.cells())
    (4, True, 4)
    """
    if not 1 <= n_queries <= n_available:
        raise ValueError(f"n_queries must be in [1, {n_available}], got {n_queries}")
    if not top_ks or min(top_ks) < 1 or not depths or min(depths) < 0:
        raise ValueError(f"top_ks must be positive and depths >= 0, got {top_ks}, {depths}")
    rng = np.random.default_rng(check_seed(seed))
    qs = tuple(int(q) for q in np.sort(rng.choice(n_available, n_queries, replace=False)))
    return Manifest(name, int(seed), int(n_available), qs, tuple(int(k) for k in top_ks),
                    tuple(int(d) for d in depths))


def run_manifest(manifest: Manifest, methods: dict[str, Callable], score: Callable, *,
                 progress: bool = False) -> list[dict]:
    """Run every method on every cell of ``manifest``; one row per (method, cell).

    ``methods[name](query, top_k, depth)`` returns an outcome; ``score(query, top_k, depth, outcome)``
    returns a dict of quality numbers for it. One untimed warm-up call per method comes first; within
    each cell the methods run in a rotating order, so drift hits them alike. Rows carry ``latency_s``.
    Taught in notebooks/07_overlap_aware_seeds.ipynb and notebooks/09_benchmark.ipynb.

    >>> m = Manifest("demo", 0, 10, (3,), top_ks=(2,), depths=(0,))
    >>> methods = {"first": lambda q, k, d: list(range(k)), "last": lambda q, k, d: [q]}
    >>> rows = run_manifest(m, methods, lambda q, k, d, out: {"hit": float(q in out)})
    >>> [(r["method"], r["hit"]) for r in rows]
    [('first', 0.0), ('last', 1.0)]
    """
    from tqdm import tqdm

    if not methods:
        raise ValueError("no methods to run")
    names = list(methods)
    q0, k0, d0 = manifest.cells()[0]
    for name in names:
        methods[name](q0, k0, d0)
    rows = []
    for i, (q, k, d) in enumerate(tqdm(manifest.cells(), disable=not progress, desc=manifest.name)):
        for name in names[i % len(names):] + names[: i % len(names)]:
            t0 = time.perf_counter()
            out = methods[name](q, k, d)
            latency = time.perf_counter() - t0
            rows.append({"method": name, "query": q, "top_k": k, "depth": d, "latency_s": latency,
                         **score(q, k, d, out)})
    return rows


def aggregate(rows: Sequence[dict], *, by: Sequence[str] = ("method",)) -> dict:
    """Per group of ``by`` keys: latency summary and, for every other numeric column, mean and std.
    Taught in notebooks/09_benchmark.ipynb.

    >>> rows = [{"method": "a", "latency_s": 0.1, "recall": 1.0}, {"method": "a", "latency_s": 0.3, "recall": 0.5}]
    >>> agg = aggregate(rows)
    >>> agg["a"]["recall"], agg["a"]["latency_s"]["p50"]
    ({'mean': 0.75, 'std': 0.25}, 0.2)
    """
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r[b] for b in by), []).append(r)
    skip = {"method", "query", "top_k", "depth", "latency_s", *by}
    out = {}
    for key, rs in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        metrics = sorted({c for r in rs for c, v in r.items() if c not in skip and isinstance(v, (int, float))})
        entry = {"latency_s": summarize([r["latency_s"] for r in rs])}
        for m in metrics:
            vals = np.array([r[m] for r in rs if m in r], dtype=float)
            entry[m] = {"mean": float(vals.mean()), "std": float(vals.std())}
        out["/".join(str(x) for x in key)] = entry
    return out


def write_csv(rows: Sequence[dict], path: str | os.PathLike) -> Path:
    """Rows as CSV with a header of every column (in first-seen order). Taught in notebooks/09_benchmark.ipynb.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_csv([{"a": 1}, {"a": 2, "b": 3}], Path(d) / "rows.csv").read_text().splitlines()
    ['a,b', '1,', '2,3']
    """
    import csv

    if len(rows) == 0:
        raise ValueError("rows is empty: nothing to write")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(dict.fromkeys(c for r in rows for c in r))
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    return path


def loglog_slope(sizes: Sequence[float], seconds: Sequence[float]) -> float:
    """Least-squares slope of log(seconds) against log(sizes): ~1 means linear scaling.
    Taught in notebooks/09_benchmark.ipynb.

    >>> round(loglog_slope([10, 100, 1000], [0.01, 1.0, 100.0]), 6)  # 100× the time per 10× the size
    2.0
    """
    if len(sizes) < 2 or len(sizes) != len(seconds):
        raise ValueError(f"sizes and seconds need two or more values of equal length, got {len(sizes)} and "
                         f"{len(seconds)}")
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def mean_by(rows: Sequence[dict], key: str, **where) -> float:
    """Mean of ``key`` over the rows matching every ``where`` item (NaN when none match).
    Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> rows = [{"method": "a", "recall": 0.5}, {"method": "a", "recall": 1.0}, {"method": "b", "recall": 0.0}]
    >>> mean_by(rows, "recall", method="a"), mean_by(rows, "recall", method="c")
    (0.75, nan)
    """
    vals = [r[key] for r in rows if all(r.get(k) == v for k, v in where.items())]
    return float(np.mean(vals)) if vals else float("nan")
