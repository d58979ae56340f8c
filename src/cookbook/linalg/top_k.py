"""Top-k Personalized PageRank without solving for every score: :func:`top_k_pagerank` sums the PPR series
only until the top k and their order are certain (exact); :func:`top_k_push` runs a few rounds of forward
push and bounds every score (approximate, with certified ranks). Both take a
:class:`~cookbook.linalg.ppr.Walk` or a transition matrix, as :mod:`cookbook.linalg.ppr` does.

>>> import scipy.sparse as sp
>>> from cookbook.linalg.ppr import Walk
>>> walk = Walk.from_adjacency(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
>>> top_k_pagerank(walk, np.array([0, 1.0, 0]), 2).ids.tolist(), top_k_push(walk, np.array([0, 1.0, 0]), 2).ids.tolist()
([1, 0], [1, 0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validate import bool_mask, integer, number, probability
from ..arrays import csr_row_positions
from .ppr import _check_v0, prepare

__all__ = ["PushTopK", "TopK", "top_k_pagerank", "top_k_push", "top_k_push_batch"]


@dataclass
class TopK:
    """Certified top-k: ``ids`` best first; every true score lies in ``[lower, lower + slack]``.

    >>> t = TopK(np.array([1, 0]), np.array([0.56, 0.25]), 0.125, 3, True)
    >>> bool(t.lower[-1] + t.slack < t.lower[0])  # no overlap: the order is certain
    True
    """

    ids: np.ndarray
    lower: np.ndarray
    slack: float
    iterations: int
    certified: bool


def top_k_pagerank(W, v0, k: int, *, restart: float = 0.5, max_iter: int = 200, ordered: bool = True,
                   among: np.ndarray | None = None, margin: float = 0.0) -> TopK:
    """The exact top-``k`` nodes by PPR score, stopping as soon as they are certain.

    PPR is the series ``x = λ Σ_s (1-λ)^s M^s v0`` (``M`` = ``W`` with the dangling fix) of non-negative
    terms. After ``t`` terms the partial sum ``p`` is a lower bound on every score, and the mass still to
    be distributed is exactly ``(1-λ)^(t+1)``, an upper bound on what any node can still gain. The
    top-k *set* is certain once the k-th largest ``p`` exceeds the (k+1)-th by more than that mass;
    with ``ordered=True`` every consecutive gap in the top k must also exceed it, so the order is exact
    too. Early terms are sparse (walkers are still near the seeds) and cost only the seeds'
    neighbourhoods. What node ``j`` can still gain from ``remaining`` is at most ``remaining ·
    max(inflow_j, v0_j)`` (the walk's :attr:`~cookbook.linalg.ppr.Walk.inflow`): every later term is ``M``
    applied to a unit of mass, and ``(M z)_j ≤ max(inflow_j, v0_j)`` for any such ``z``.
    ``certified`` is False only when ``max_iter`` ran out (exact ties can never be separated).

    ``W``: a :class:`~cookbook.linalg.ppr.Walk` or a transition matrix (prepared once, see
    :func:`~cookbook.linalg.ppr.prepare`). ``among`` (a boolean mask) ranks only those nodes (e.g. a passage
    graph's passages; ``ids`` are still node indices). ``margin`` demands every certified gap exceed the
    remaining mass by that much more, so that another solver whose per-node error is below ``margin`` orders
    these nodes the same way.

    >>> import scipy.sparse as sp
    >>> from cookbook.linalg.ppr import personalized_pagerank, transition_matrix
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> t = top_k_pagerank(W, np.array([0, 1.0, 0]), 2)
    >>> t.ids.tolist(), t.certified, t.iterations
    ([1, 0], True, 3)
    >>> np.argsort(-personalized_pagerank(W, np.array([0, 1.0, 0]), tol=1e-12).scores)[:2].tolist()
    [1, 0]
    """
    walk = prepare(W)
    n, d = walk.n, walk.dangling
    lam = probability(restart, "restart λ", zero_ok=False)
    k = integer(k, "k")
    margin = number(margin, "margin", low=0)
    v0 = _check_v0(v0, n)
    ranked = np.arange(n) if among is None else np.flatnonzero(bool_mask(among, n, "among"))
    if k >= len(ranked):
        raise ValueError(f"k={k} must be smaller than the number of ranked nodes ({len(ranked)})")
    # a contiguous block of ranked nodes (e.g. passages first) is read as a view, not gathered per term
    block = slice(ranked[0], ranked[-1] + 1) if ranked[-1] - ranked[0] + 1 == len(ranked) else ranked
    cap = np.minimum(1.0, np.maximum(walk.inflow, v0 if d.any() else 0.0))[block]
    check_below = np.inf
    p = np.zeros(n)
    y = _SparseMass(np.flatnonzero(v0), v0)
    coef, remaining = lam, 1.0
    for t in range(max_iter):
        y.add_to(p, coef)
        remaining *= 1 - lam
        coef *= 1 - lam
        pr = p[block]
        # node j can still gain at most remaining·cap_j: the k-th must clear every outsider's upper bound,
        # and (ordered) each of the top k its successor's. That needs a top score above
        # k·(remaining·min cap + margin): a one-pass test before the partition.
        if remaining <= check_below and pr.max() > (k if ordered else 1) * (remaining * cap.min() + margin):
            top, lo, due = _gaps(pr, k, ordered, remaining, cap, margin)
            if due is None:
                return TopK(ranked[top], lo, remaining, t + 1, True)
            # Were the gaps to stay put, no check passes before remaining falls to `due`: skip until then,
            # at most three terms (skipping only ever delays the stop; the gaps themselves keep changing).
            check_below = max(due, remaining * (1 - lam) ** 3)
        y.step(walk)
    top = ranked[np.argsort(-p[ranked], kind="stable")[:k]]
    return TopK(top, p[top], remaining, max_iter, False)


def _gaps(pr, k, ordered, remaining, cap, margin):
    """The top ``k`` of the partial sums ``pr`` (ties by index), their values, and None when every gap the
    order needs exceeds what the nodes can still gain; else the remaining mass at which the gaps, were they
    to stay put, would first pass."""
    top = np.argpartition(-pr, k)[:k]
    top = top[np.lexsort((top, -pr[top]))]
    upper = pr + remaining * cap
    upper[top] = -np.inf
    out = int(np.argmax(upper))
    lo = pr[top]
    gaps = np.r_[lo[:-1] - lo[1:], lo[-1] - pr[out]] if ordered else lo[-1:] - pr[out]
    caps = np.r_[cap[top[1:]], cap[out]] if ordered else cap[out:out + 1]
    if np.all(gaps > remaining * caps + margin):
        return top, lo, None
    with np.errstate(divide="ignore", invalid="ignore"):
        return top, lo, np.min(np.where(caps > 0, (gaps - margin) / caps, np.inf))


class _SparseMass:
    """The walkers' mass ``y`` after each step of ``y ← M y = W y + (d·y) v0``: kept as (support, values)
    while it is local, dense once it covers a twentieth of the graph (a full SpMV then beats the gather)."""

    def __init__(self, support, v0):
        self.support, self.vals, self.v0, self.seeds, self.dense = support, v0[support], v0, support, None

    def add_to(self, p, coef):
        if self.dense is None:
            p[self.support] += coef * self.vals
        else:
            p += coef * self.dense

    def step(self, walk):
        W, d = walk.csc, walk.dangling
        if self.dense is None and len(self.support) <= walk.n // 20:
            idx, lens = csr_row_positions(W.indptr, self.support)
            rows = W.indices[idx]
            vals = W.data[idx] * np.repeat(self.vals, lens)
            dmass = self.vals[d[self.support]].sum()
            if dmass:
                rows = np.r_[rows, self.seeds]
                vals = np.r_[vals, dmass * self.v0[self.seeds]]
            self.support, inv = np.unique(rows, return_inverse=True)
            self.vals = np.bincount(inv, weights=vals, minlength=len(self.support))
            return
        if self.dense is None:
            self.dense = np.zeros(walk.n)
            self.dense[self.support] = self.vals
        self.dense = W @ self.dense + self.dense[d].sum() * self.v0


@dataclass
class PushTopK:
    """Approximate top-k of :func:`top_k_push`: ``ids`` best first by ``estimate``; every true score lies in
    ``[lower, upper]``. ``certified[i]`` is True when rank ``i``'s interval is disjoint from its
    neighbours' (and, for the last rank, from every node outside the top k), so that rank is certain.
    ``l1_error`` is the exact L1 distance between the true score vector and the lower bounds; ``touched``
    the number of nodes the walk reached.

    >>> t = PushTopK(np.array([3, 1]), np.array([0.5, 0.2]), np.array([0.49, 0.19]), np.array([0.51, 0.21]),
    ...              np.array([True, True]), 0.02, 4)
    >>> bool(t.upper[1] < t.lower[0])
    True
    """

    ids: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    certified: np.ndarray
    l1_error: float
    touched: int


def top_k_push(W, v0, k: int, *, restart: float = 0.5, rounds: int = 3, eps: float = 0.0) -> PushTopK:
    """The top-``k`` nodes by PPR after ``rounds`` of forward push from ``v0``, with per-node error bounds.

    Forward push (Andersen–Chung–Lang) keeps an estimate ``p`` and a residual ``r`` (initially ``v0``) with
    the invariant ``x = p + PPR(r)`` (``x`` = :func:`personalized_pagerank`'s answer, same ``W``, same
    dangling rule: a dangling node's walkers restart at ``v0``). A round pushes every node whose residual
    exceeds ``eps·outdeg`` at once (``p += λr``, ``r ← (1-λ)·M r``; with ``eps=0`` every touched node, so
    ``p`` is the series summed to ``rounds`` terms); nodes below the threshold keep their residual. Then
    ``x ≥ lower = p + λr`` and ``x ≤ lower + (1-λ)·‖r‖₁·cap`` (``cap`` = ``max(inflow, v0)`` capped at 1 —
    one step of the walk hands a node at most that share of any unit of mass, the walk's
    :attr:`~cookbook.linalg.ppr.Walk.inflow`);
    ``‖x - lower‖₁ = (1-λ)‖r‖₁`` exactly (``l1_error``). Ranks use ``estimate = p + r`` clipped to the
    bounds: the residual's own future, taken to stay where it is, which on well-mixed walks beats the
    lower bound. Ties by node id. Cost grows with the ``rounds``-hop neighbourhood of the seeds, not the
    graph; it is an approximation whose ``certified`` flags say which ranks are certain — for the exact
    top-k use :func:`top_k_pagerank`. ``W``: a :class:`~cookbook.linalg.ppr.Walk` or a transition matrix
    (prepared once); :func:`top_k_push_batch` answers many queries at once.

    >>> import scipy.sparse as sp
    >>> from cookbook.linalg.ppr import transition_matrix
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> t = top_k_push(W, np.array([0, 1.0, 0]), 2, rounds=20)
    >>> t.ids.tolist(), t.certified.tolist(), bool(t.l1_error < 1e-6)
    ([1, 0], [True, True], True)
    """
    walk = prepare(W)
    v0 = _check_v0(v0, walk.n)
    if v0.ndim != 1:
        raise ValueError("v0 must be a vector; use top_k_push_batch for many")
    return _top_k_push(walk, v0[:, None], k, restart, rounds, eps)[0]


def top_k_push_batch(W, V0, k: int, *, restart: float = 0.5, rounds: int = 3, eps: float = 0.0) -> list[PushTopK]:
    """:func:`top_k_push` for every column of ``V0`` (``(n, q)``), one :class:`PushTopK` per query. All
    queries advance together: each round is one sparse product of the ``(q, n)`` residuals with ``Wᵀ``,
    which reads only the rows of nodes some query has reached.

    >>> import scipy.sparse as sp
    >>> from cookbook.linalg.ppr import transition_matrix
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> [t.ids.tolist() for t in top_k_push_batch(W, np.eye(3)[:, :2], 1, rounds=20)]
    [[0], [1]]
    """
    walk = prepare(W)
    V0 = np.asarray(V0, dtype=float)
    if V0.ndim != 2:
        raise ValueError(f"V0 must be 2-D (n, q), got shape {V0.shape}")
    return _top_k_push(walk, _check_v0(V0, walk.n, "V0"), k, restart, rounds, eps)


def _top_k_push(walk, V0, k, restart, rounds, eps) -> list[PushTopK]:
    """:func:`top_k_push_batch` once the walk and the normalised ``V0`` are checked."""
    n = walk.n
    lam = probability(restart, "restart λ", zero_ok=False)
    k = integer(k, "k")
    rounds = integer(rounds, "rounds")
    eps = number(eps, "eps", low=0)
    if k >= n:
        raise ValueError(f"k={k} must be smaller than the number of nodes ({n})")
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
