"""Benchmark harness helpers: timing with warm-up, latency summaries, ratio tables, result files.

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
from pathlib import Path

import numpy as np


def time_calls(fn: Callable, inputs: Sequence, *, warmup: int = 1) -> tuple[list[float], list]:
    """Call ``fn(x)`` for each input after ``warmup`` untimed calls; return (seconds per call, outputs)."""
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


def summarize(seconds: Sequence[float]) -> dict:
    """min / p50 / p95 / p99 / max / mean of a latency sample, plus its size ``n``."""
    a = np.asarray(seconds, dtype=float)
    if a.size == 0:
        raise ValueError("no latencies to summarize")
    q = np.percentile(a, [50, 95, 99])
    return {"n": int(a.size), "min": float(a.min()), "p50": float(q[0]), "p95": float(q[1]), "p99": float(q[2]),
            "max": float(a.max()), "mean": float(a.mean())}


def machine() -> dict:
    """What the numbers were measured on."""
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "numpy": np.__version__}


def ratio_table(rows: dict[str, dict], *, baseline: str, key: str = "p50") -> str:
    """Markdown table of ``rows[name][key]`` with each row's speed-up against ``baseline``."""
    if baseline not in rows:
        raise KeyError(f"baseline {baseline!r} is not among the rows {sorted(rows)}")
    base = rows[baseline][key]
    lines = [f"| method | {key} (ms) | speed-up vs {baseline} |", "|---|---:|---:|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r[key] * 1e3:.2f} | {base / r[key]:.1f}× |")
    return "\n".join(lines)


def write_results(out_dir: str | os.PathLike, name: str, payload: dict) -> Path:
    """Write ``<out_dir>/<name>.json`` with the machine description added."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **payload}, indent=2) + "\n", encoding="utf-8")
    return path
