"""The dev/test design of the series' comparisons: questions split in two halves per stratum
(:func:`dev_test_split`), and the one choice made on the dev half alone (:func:`best_on_dev`), so no test score can
move it. Re-exported by :mod:`cookbook.stats`, where the notebooks read them.

>>> dev, test = dev_test_split([1, 1, 2, 2])
>>> sorted(dev + test), best_on_dev({"a": [1, 0, 0, 0], "b": [0, 1, 1, 1]}, list(dev))  in ("a", "b")
([0, 1, 2, 3], True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._validate import seed as check_seed

__all__ = ["best_on_dev", "dev_test_split"]


def dev_test_split(hops: Sequence[int], seed: int = 7) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Question positions split in two halves per hop count (or any stratum: ``hops`` is one label per
    question; dev gets the odd one out), drawn with ``seed``; each half sorted. Parameters are tuned on the
    dev half and claims made on the test half. Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> dev_test_split([1, 1, 2, 2, 2], seed=0)
    ((0, 2, 4), (1, 3))
    """
    hops = np.asarray(hops)
    if hops.ndim != 1 or hops.size == 0:
        raise ValueError(f"hops must be a non-empty sequence of hop counts (one per question), "
                         f"got shape {hops.shape}")
    rng = np.random.default_rng(check_seed(seed))
    dev, test = [], []
    for h in np.unique(hops):
        idx = rng.permutation(np.flatnonzero(hops == h))
        cut = (len(idx) + 1) // 2
        dev += idx[:cut].tolist()
        test += idx[cut:].tolist()
    return tuple(sorted(dev)), tuple(sorted(test))


def best_on_dev(scores, rows, *, prefer=None):
    """The key of ``scores`` (``{name: per-question scores over every question}``) whose mean over ``rows`` (the
    dev half's positions, or a boolean mask) is highest: the choice a comparison makes before it reads the test
    half, so no score outside ``rows`` can move it. Ties go to ``prefer`` when it is among the tied (a default
    that must be beaten, not matched), else to the first listed.

    >>> best_on_dev({"BM25": [0.5, 0.0, 1.0], "RRF": [0.5, 1.0, 0.0]}, [0, 2])  # question 1 is test: unread
    'BM25'
    >>> best_on_dev({0.3: [1.0, 0.0], 0.5: [0.0, 1.0]}, [0, 1], prefer=0.5)  # a tie: the default stays
    0.5
    """
    if not scores:
        raise ValueError("scores must name at least one option, got none")
    rows = np.asarray(rows)
    if rows.size == 0 or rows.dtype == bool and not rows.any():
        raise ValueError("rows must select at least one dev question, got none")
    if rows.dtype != bool and not np.issubdtype(rows.dtype, np.integer):
        raise TypeError(f"rows must be question positions (ints) or a boolean mask, got dtype {rows.dtype}")
    means = {name: float(np.mean(np.asarray(s, dtype=float)[rows])) for name, s in scores.items()}
    best = max(means.values())
    tied = [name for name, m in means.items() if m == best]
    return prefer if prefer in tied else tied[0]
