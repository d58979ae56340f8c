"""Checkers of the exercises in notebooks/09_benchmark.ipynb (the mechanism is
:mod:`cookbook.harness.exercises.core`)."""

from __future__ import annotations

import numpy as np

from ...stats import paired_bootstrap
from .core import Wrong, exercise, expect_choice, expect_close

__all__: list[str] = []  # the checkers register themselves with exercise(); nothing to import by name


@exercise("09.paired_ci", "a paired bootstrap CI by hand, as stats.paired_bootstrap computes it", hints=(
    "a paired comparison resamples questions, keeping each question's two scores together: what single number "
    "per question carries everything the interval needs?",
    "work on d = a − b. One resample draws n question indices with replacement and takes the mean of d over them; "
    "the interval is the middle 95 % of n_boot such means.",
    "to match stats.paired_bootstrap draw value for value: rng = np.random.default_rng(seed), all the indices at "
    "once with rng.integers(0, n, size=(n_boot, n)), and np.quantile(means, [0.025, 0.975])."))
def _paired_ci(fn):
    hint = ("resample questions, keeping each pair together; to match the package value for value, draw the "
            "indices as stats.paired_bootstrap does (exercises.hint gives the tiers).")
    rng = np.random.default_rng(11)
    cases = [([1.0, 1.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0], 7), (rng.random(20).tolist(), rng.random(20).tolist(), 0),
             ([0.2, 0.4, 0.6], [0.2, 0.4, 0.6], 3)]
    for a, b, seed in cases:
        want = paired_bootstrap(a, b, n_boot=500, seed=seed)
        got = fn(list(a), list(b), 500, seed)
        what = f"paired_ci(a={list(a)}, b={list(b)}, n_boot=500, seed={seed})"
        if not isinstance(got, (tuple, list)) or len(got) != 3:
            raise Wrong(f"{what}: expected a tuple (mean_diff, low, high), got {got!r}")
        for x, w, name in zip(got, (want.mean_diff, want.ci_low, want.ci_high), ("mean_diff", "low", "high")):
            expect_close(x, w, f"{what}: {name}", hint)


@exercise("09.interleave", "a run order that cancels a linear drift", hints=(
    "a machine that slows down steadily adds its position to each run: what must be equal between the methods for "
    "that to cancel, and which runs should sit together?",
    "run each query's methods next to each other; if every query ran them in the same order, which method would "
    "always run first?",
    "rotate the order from one query to the next: query q starts with method q mod m, as bench.run_manifest does."))
def _interleave(fn):
    hint = "write the order out for two methods and four queries, and each method's positions in it."
    for methods, n_queries in ((["a", "b"], 4), (["x", "y", "z"], 6), (["p", "q", "r", "s"], 8)):
        order = fn(list(methods), n_queries)
        what = f"run_order({methods}, {n_queries})"
        want = sorted((m, q) for m in methods for q in range(n_queries))
        if sorted(map(tuple, order)) != want:
            raise Wrong(f"{what}: every (method, query) pair must run exactly once. {hint}")
        # A machine that slows down linearly adds its position to each run: equal mean positions cancel it.
        pos = {m: np.mean([i for i, (mm, _) in enumerate(order) if mm == m]) for m in methods}
        if max(pos.values()) - min(pos.values()) > 1e-9:
            raise Wrong(f"{what}: mean run position per method {pos}: a linear drift adds that to each method's "
                         f"mean latency, so the comparison is biased. {hint}")
        # A drift that is not linear (a warm cache, a noisy neighbour) is cancelled best when a query's runs
        # are close together.
        for q in range(n_queries):
            at = [i for i, (_, qq) in enumerate(order) if qq == q]
            if max(at) - min(at) != len(methods) - 1:
                raise Wrong(f"{what}: query {q}'s runs are at positions {at}, not next to each other. {hint}")


@exercise("09.predict_outlier", "one slow call moves the mean latency, not the median")
def _predict_outlier(answer):
    return expect_choice(answer, "mean", ("mean", "median", "both"),
                         "the median is the time of the middle call in sorted order; making the slowest call slower "
                         "changes no call's rank, so the median does not move at all, while the mean rises by "
                         "99 × that call's time / n. One garbage collection or noisy neighbour can move a mean as "
                         "far as a real change of method: report the distribution (p50, p95, p99), not the mean.")
