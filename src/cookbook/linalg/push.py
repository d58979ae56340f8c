"""Forward and reverse push, the pieces :func:`cookbook.linalg.top_k.top_k_push` is made of: the approximate
push (a fixed number of synchronous rounds, every score bounded), the reverse push that refines one node's
score against a forward residual, and the test of which nodes are surely in or out of a top k.

>>> import scipy.sparse as sp
>>> from cookbook.linalg.ppr import Walk
>>> walk = Walk.from_adjacency(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
>>> _top_k_push(walk, np.array([[0, 1.0, 0]]).T, 1, 0.5, 20, 0.0)[0].ids.tolist()
[1]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validate import integer, number, probability
from ..arrays import csr_row_positions

__all__ = ["PushTopK"]


@dataclass
class PushTopK:
    """Top-k of :func:`top_k_push`: ``ids`` best first by ``estimate`` (ties by id); every true score lies in
    ``[lower, upper]``. ``exact`` is True when the set of ``ids`` is the exact top-k set (the default call);
    False for the approximate ``rounds=`` option. ``certified[i]`` is True when rank ``i``'s interval is
    disjoint from its neighbours' (and, for the last rank, from every node outside the top k), so that rank
    is certain. ``l1_error``: the L1 distance between the true scores and the forward push's lower bounds
    (``(1-λ)‖r‖₁``, exact for the approximate option; for the exact call, that of its forward stage, before
    refinement); ``touched`` the number of nodes the walk reached.

    >>> t = PushTopK(np.array([3, 1]), np.array([0.5, 0.2]), np.array([0.49, 0.19]), np.array([0.51, 0.21]),
    ...              np.array([True, True]), 0.02, 4)
    >>> bool(t.upper[1] < t.lower[0]), t.exact
    (True, False)
    """

    ids: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    certified: np.ndarray
    l1_error: float
    touched: int
    exact: bool = False


def _checked(n, k, restart, rounds, eps, exact=False):
    """``(k, λ)`` checked (with ``rounds`` and ``eps``, which only the approximate option takes)."""
    k = integer(k, "k")
    lam = probability(restart, "restart λ", zero_ok=False)
    integer(rounds, "rounds")
    if number(eps, "eps", low=0) and exact:
        raise ValueError("eps thresholds the approximate push: pass rounds= with it")
    if k >= n:
        raise ValueError(f"k={k} must be smaller than the number of nodes ({n})")
    return k, lam


def _top_k_push(walk, V0, k, restart, rounds, eps) -> list[PushTopK]:
    """:func:`top_k_push_batch` once the walk and the normalised ``V0`` are checked."""
    n = walk.n
    k, lam = _checked(n, k, restart, rounds, eps)
    WT = walk.csc.T  # row u of Wᵀ: where u's walkers go (the CSC arrays read as CSR, no copy)
    d = walk.dangling
    cap = np.minimum(1.0, walk.inflow)
    thresh = eps * np.maximum(np.diff(WT.indptr), 1)
    out = []
    for q0 in range(0, V0.shape[1], 16):  # 16 queries at a time bound the dense (16, n) arrays below
        P, R = _push_rounds(WT, V0[:, q0:q0 + 16], lam, rounds, thresh, d)
        for i in range(P.shape[0]):
            out.append(_push_top_k(P[i], R[i], V0[:, q0 + i], k, lam, cap, d.any()))
    return out


def _push_rounds(WT, V0, lam, rounds, thresh, d):
    """``rounds`` synchronous pushes of the ``(q, n)`` residuals; returns dense ``(p, r)``, each ``(q, n)``.
    Sparse while the walks are local, dense once they cover a twentieth of the graph."""
    n = WT.shape[0]
    S0 = sp.csr_matrix(V0.T)
    R, P, kept = S0.copy(), sp.csr_matrix(S0.shape), sp.csr_matrix(S0.shape)
    for _ in range(rounds):
        if sp.issparse(R) and R.nnz > R.shape[0] * n // 20:
            R, P, kept = R.toarray(), P.toarray(), kept.toarray()
        if thresh.any():  # nodes at or below the threshold keep their residual and are not pushed
            if sp.issparse(R):
                small = R.data <= thresh[R.indices]
                kept = kept + sp.csr_matrix((np.where(small, R.data, 0), R.indices, R.indptr), shape=R.shape)
                R = sp.csr_matrix((np.where(small, 0, R.data), R.indices, R.indptr), shape=R.shape)
                R.eliminate_zeros()
            else:
                small = R <= thresh
                kept, R = kept + np.where(small, R, 0), np.where(small, 0, R)
        P = P + lam * R
        restart_mass = R @ d.astype(float)  # walkers on dangling nodes restart at v0
        R = (1 - lam) * (R @ WT)
        if restart_mass.any():
            R = R + (sp.diags((1 - lam) * restart_mass) @ S0 if sp.issparse(R)
                     else ((1 - lam) * restart_mass)[:, None] * V0.T)
    if thresh.any():
        R = R + kept
    return (P.toarray(), R.toarray()) if sp.issparse(R) else (np.asarray(P), np.asarray(R))


def _push_top_k(p, r, v0, k, lam, cap, has_dangling) -> PushTopK:
    """Bounds, estimate, top ``k`` and certified ranks of one query from its push state ``(p, r)``."""
    mass = r.sum()
    lower = p + lam * r
    upper = lower + (1 - lam) * mass * (np.maximum(cap, v0) if has_dangling else cap)
    est = np.clip(p + r, lower, upper)
    kth = -np.partition(-est, k - 1)[k - 1]
    top = np.flatnonzero(est >= kth)  # every node tied with the k-th, so ties go by id
    top = top[np.lexsort((top, -est[top]))][:k]
    outside = upper.copy()
    outside[top] = -np.inf
    lo, up = lower[top], upper[top]
    # rank j is certain when it beats the best upper bound of everything below it and loses to the
    # worst lower bound of everything above it
    below = np.maximum.accumulate(np.r_[up[1:], outside.max()][::-1])[::-1]
    above = np.minimum.accumulate(np.r_[np.inf, lo[:-1]])
    return PushTopK(top, est[top], lo, up, (lo > below) & (up < above), (1 - lam) * mass,
                    int(np.count_nonzero(p + r)))


class _Reverse:
    """Reverse push towards one target ``j`` against a fixed forward residual ``r``: keeps ``pb`` (summed
    into ``dot = r·pb``) and the reverse residual ``rb`` (support, values) with the invariant
    ``Π[j, u] = pb_u + Σ_w rb_w Π[w, u]`` for every ``u`` (``Π = λ(I - (1-λ)W)⁻¹``, the substochastic walk).
    Then ``(Π r)_j = dot + Σ_w rb_w (Π r)_w``, and ``λ r_w ≤ (Π r)_w ≤ B_w`` bounds the unknown part: only
    nodes whose share of that uncertainty, ``rb_w·(B_w - λ r_w)``, is above the threshold are pushed."""

    def __init__(self, j, r, lam, B):
        self.idx, self.val, self.r, self.lam, self.dot, self.work = np.array([j]), np.array([1.0]), r, lam, 0.0, 0
        self.unsure = B - lam * r

    def refine(self, rows, eps, budget):
        """Push until no node's uncertainty share exceeds ``eps`` (``rows`` = ``W`` as CSR); False if the work
        (entries of ``W`` read) passed ``budget`` first."""
        while self.work <= budget:
            big = self.val * self.unsure[self.idx] > eps
            if not big.any():
                return True
            idx, val = self.idx[big], self.val[big]
            self.dot += self.lam * float(self.r[idx] @ val)
            pos, lens = csr_row_positions(rows.indptr, idx)
            self.work += len(pos)
            into = np.r_[rows.indices[pos], self.idx[~big]]
            vals = np.r_[(1 - self.lam) * rows.data[pos] * np.repeat(val, lens), self.val[~big]]
            self.idx, inv = np.unique(into, return_inverse=True)
            self.val = np.bincount(inv, weights=vals, minlength=len(self.idx))
        return False

    def interval(self):
        """Bounds on ``(Π r)_j``."""
        low = self.dot + self.lam * float(self.r[self.idx] @ self.val)
        return low, low + float(self.unsure[self.idx] @ self.val)


def _certain(lo, hi, group, k, tol=1e-12):
    """Over the candidates (intervals ``[lo, hi]``; ``group`` ids mark exactly equal scores, -1 none):
    which are certainly in the top ``k`` (ties by index: candidates are in index order) and which
    certainly out. Intervals are widened by ``tol``: rounding in the sums must not split an exact tie."""
    lo, hi = lo - tol, hi + tol
    same = (group[:, None] == group[None, :]) & (group[:, None] >= 0)
    before = np.tri(len(lo), k=-1, dtype=bool).T  # before[i, j]: i's index is smaller than j's
    tied_above = same & before
    may_beat = ((hi[:, None] > lo[None, :]) & ~same) | tied_above | ((hi[:, None] == lo[None, :]) & before)
    np.fill_diagonal(may_beat, False)
    beats = ((lo[:, None] > hi[None, :]) & ~same) | tied_above | ((lo[:, None] == hi[None, :]) & before)
    np.fill_diagonal(beats, False)
    return may_beat.sum(axis=0) < k, beats.sum(axis=0) >= k
