"""Array helpers shared by the stages (no package imports): a stable top-k and the CSR row gather.

>>> top_k([0.2, 0.9, 0.2, 0.5], 3).tolist()  # ties by index
[1, 3, 0]
"""

from __future__ import annotations

import numpy as np

from ._validate import integer

__all__ = ["csr_row_positions", "top_k"]


def top_k(scores, k: int) -> np.ndarray:
    """Indices of the ``k`` largest ``scores`` (1-D, shape (n,)), best first, ties by lower index: an int
    array of length ``min(k, n)``. Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> top_k([0.2, 0.9, 0.2, 0.5], 2).tolist()
    [1, 3]
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1:
        raise ValueError(f"scores must be a 1-D array, got shape {s.shape}")
    return np.lexsort((np.arange(len(s)), -s))[:integer(k, "k")]


def csr_row_positions(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``indices``/``data`` of every entry of ``rows`` (concatenated, in row order), and each
    row's length: one index array for all rows, without slicing the matrix row by row. ``indptr`` is a CSR
    matrix's (shape (n+1,)), ``rows`` an int array; returns ``(positions, lengths)``.

    >>> import scipy.sparse as sp
    >>> M = sp.csr_matrix([[0, 5, 0], [0, 0, 0], [7, 0, 8]])
    >>> pos, lens = csr_row_positions(M.indptr, np.array([2, 0]))
    >>> M.indices[pos].tolist(), M.data[pos].tolist(), lens.tolist()
    ([0, 2, 1], [7, 8, 5], [2, 1])
    """
    starts = indptr[rows]
    lens = indptr[rows + 1] - starts
    ends = np.cumsum(lens)
    return np.repeat(starts - (ends - lens), lens) + np.arange(ends[-1] if len(ends) else 0), lens
