"""Array helpers shared by the stages (no package imports): a stable top-k and the CSR row gather.

>>> top_k([0.2, 0.9, 0.2, 0.5], 3).tolist()  # ties by index
[1, 3, 0]
"""

from __future__ import annotations

import numpy as np

from ._validate import integer

__all__ = ["csr_row_positions", "top_k"]


def top_k(scores, k: int) -> np.ndarray:
    """Indices of the ``k`` largest ``scores``, best first, ties by lower index (at most ``len(scores)``)."""
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1:
        raise ValueError(f"scores must be a 1-D array, got shape {s.shape}")
    return np.lexsort((np.arange(len(s)), -s))[:integer(k, "k")]


def csr_row_positions(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``indices``/``data`` of every entry of ``rows`` (concatenated, in row order), and each
    row's length: one index array for all rows, without slicing the matrix row by row."""
    starts = indptr[rows]
    lens = indptr[rows + 1] - starts
    return np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(lens.sum()), lens
