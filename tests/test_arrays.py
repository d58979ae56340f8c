import numpy as np
import pytest
import scipy.sparse as sp

from cookbook.arrays import csr_row_positions, top_k


@pytest.mark.parametrize("seed", range(5))
def test_top_k_matches_a_sort_by_score_then_index(seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 4, 30).astype(float)  # many ties
    for k in (1, 5, 30, 40):
        want = sorted(range(len(s)), key=lambda i: (-s[i], i))[:k]
        assert top_k(s, k).tolist() == want


def test_csr_row_positions_gathers_the_rows_in_order():
    A = sp.random(20, 20, density=0.2, random_state=3, format="csr")
    rows = np.array([4, 0, 17, 4, 9])
    idx, lens = csr_row_positions(A.indptr, rows)
    assert lens.tolist() == [A[r].nnz for r in rows]
    assert A.indices[idx].tolist() == [j for r in rows for j in A.indices[A.indptr[r]:A.indptr[r + 1]]]
    idx, lens = csr_row_positions(A.indptr, np.array([], dtype=int))
    assert idx.size == 0 and lens.size == 0
