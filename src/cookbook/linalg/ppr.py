"""Personalized PageRank by power iteration on a prebuilt column-stochastic CSR matrix: the solver only
(its HippoRAG use — passage graph, seeding, ranking — is :mod:`cookbook.query.hipporag`).

The iteration is ``v ← (1-λ)·(W·v + (d·v)·v0) + λ·v0`` with restart probability ``λ`` (0.5 by default,
as in HippoRAG 2). ``W[i, j]`` is the probability of stepping from ``j`` to ``i``; a *dangling* node ``j``
(no out-edges, ``d_j = 1``) sends its walkers back to the personalization ``v0`` — the convention of
networkx (``dangling=None``) and igraph PRPACK, so all three agree to the tolerance.

>>> import numpy as np, scipy.sparse as sp
>>> A = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]]))
>>> r = personalized_pagerank(transition_matrix(A), np.array([1.0, 0, 0]))
>>> np.round(r.scores, 3).tolist(), round(float(r.scores.sum()), 6)
([0.667, 0.167, 0.167], 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validate import bool_mask, finite_array, integer, number, probability, square_csr
from ..arrays import csr_row_positions

__all__ = ["PPRResult", "PushTopK", "TopK", "dangling_mask", "inflow_bound", "personalized_pagerank",
           "personalized_pagerank_batch", "top_k_pagerank", "top_k_push", "top_k_push_batch",
           "transition_matrix"]


def transition_matrix(adjacency) -> sp.csr_matrix:
    """Column-stochastic ``W`` from ``adjacency`` (``A[j, i]`` = weight of edge j → i; undirected graphs
    pass a symmetric matrix). Columns of dangling nodes are all zero; weights must be ≥ 0. Taught in
    notebooks/06_personalized_pagerank.ipynb.

    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [0, 0, 0]]))  # node 2 has no out-edges
    >>> transition_matrix(A).toarray().tolist()
    [[0.0, 1.0, 0.0], [0.5, 0.0, 0.0], [0.5, 0.0, 0.0]]
    """
    A = square_csr(adjacency, "adjacency")
    if A.nnz and (A.data.min() < 0 or not np.all(np.isfinite(A.data))):
        raise ValueError("adjacency weights must be finite and >= 0")
    out = np.asarray(A.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    W = (sp.diags(inv) @ A).T.tocsr()
    W.sort_indices()
    return W


def _check_v0(v0, n: int, name: str = "v0") -> np.ndarray:
    v = np.asarray(v0, dtype=float)
    if v.shape != (n,) and not (v.ndim == 2 and v.shape[0] == n):
        raise ValueError(f"{name} must have length {n} (one entry per node), got shape {v.shape}")
    v = finite_array(v, name)
    if np.any(v < 0):
        raise ValueError(f"{name} has negative entries")
    sums = v.sum(axis=0)
    if np.any(sums <= 0):
        raise ValueError(f"{name} is all zeros: no seed to restart from")
    return v / sums


def dangling_mask(W: sp.spmatrix) -> np.ndarray:
    """Boolean mask of ``W``'s zero columns: the dangling nodes, whose walkers restart at ``v0``.

    >>> import scipy.sparse as sp
    >>> dangling_mask(transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [0, 0, 0]])))).tolist()
    [False, False, True]
    """
    W = square_csr(W, "W")
    return np.asarray(W.sum(axis=0)).ravel() == 0


@dataclass
class PPRResult:
    """``scores`` (length n, sums to 1), ``iterations`` used, ``residuals`` (L1 change per iteration),
    ``converged`` (False when the iteration budget ran out first).

    >>> r = PPRResult(np.array([0.7, 0.3]), 2, [0.4, 1e-7], True)
    >>> r.converged and r.residuals[-1] < 1e-6
    True
    """

    scores: np.ndarray
    iterations: int
    residuals: list[float]
    converged: bool


def personalized_pagerank(W, v0, *, restart: float = 0.5, tol: float = 1e-6, max_iter: int = 100,
                          dangling: np.ndarray | None = None) -> PPRResult:
    """Power iteration from ``v0`` (normalised to sum 1) until the L1 change is below ``tol``.

    ``W``: ``(n, n)`` column-stochastic (see :func:`transition_matrix`), CSR or CSC. ``dangling``: the
    boolean mask of zero columns, when known (saves a pass over ``W`` per query). Returns a
    :class:`PPRResult`; ``converged`` is False when ``max_iter`` ran out first. Taught in
    notebooks/06_personalized_pagerank.ipynb.

    >>> import scipy.sparse as sp
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> r = personalized_pagerank(W, np.array([1.0, 0, 0]), max_iter=2)
    >>> r.converged, r.iterations, r.residuals
    (False, 2, [1.0, 0.5])
    >>> personalized_pagerank(W, np.array([1.0, 0, 0]), restart=0)
    Traceback (most recent call last):
    ValueError: restart λ must be in (0, 1], got 0
    """
    W = square_csr(W, "W")
    lam = probability(restart, "restart λ", zero_ok=False)
    if not tol > 0 or max_iter < 1:
        raise ValueError(f"need tol > 0 and max_iter >= 1, got tol={tol!r}, max_iter={max_iter!r}")
    v0 = _check_v0(v0, W.shape[0])
    if v0.ndim != 1:
        raise ValueError("v0 must be a vector; use personalized_pagerank_batch for many")
    d = dangling_mask(W) if dangling is None else bool_mask(dangling, W.shape[0], "dangling")
    x, residuals = v0.copy(), []
    for it in range(1, max_iter + 1):
        x_new = (1 - lam) * (W @ x + x[d].sum() * v0) + lam * v0
        residuals.append(float(np.abs(x_new - x).sum()))
        x = x_new
        if residuals[-1] < tol:
            return PPRResult(x, it, residuals, True)
    return PPRResult(x, max_iter, residuals, False)


def personalized_pagerank_batch(W, V0, *, restart: float = 0.5, tol: float = 1e-6,
                                max_iter: int = 100) -> PPRResult:
    """Many personalization vectors at once: ``V0`` is ``(n, q)``, one column per query; one sparse ×
    dense product per iteration serves all ``q``. Stops when every column's L1 change is below ``tol``;
    ``residuals`` records the largest per iteration. ``scores`` is ``(n, q)``. Taught in
    notebooks/06_personalized_pagerank.ipynb.

    >>> import scipy.sparse as sp
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> r = personalized_pagerank_batch(W, np.eye(3)[:, :2])  # two queries: seeds 0 and 1
    >>> np.round(r.scores, 3).tolist()
    [[0.667, 0.333], [0.167, 0.583], [0.167, 0.083]]
    """
    W = square_csr(W, "W")
    lam = probability(restart, "restart λ", zero_ok=False)
    V0 = np.asarray(V0, dtype=float)
    if V0.ndim != 2:
        raise ValueError(f"V0 must be 2-D (n, q), got shape {V0.shape}")
    V0 = _check_v0(V0, W.shape[0], "V0")
    d = dangling_mask(W)
    X, residuals = V0.copy(), []
    for it in range(1, max_iter + 1):
        X_new = (1 - lam) * (W @ X + X[d].sum(axis=0) * V0) + lam * V0
        residuals.append(float(np.abs(X_new - X).sum(axis=0).max()))
        X = X_new
        if residuals[-1] < tol:
            return PPRResult(X, it, residuals, True)
    return PPRResult(X, max_iter, residuals, False)


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


def inflow_bound(W) -> np.ndarray:
    """Per node, the largest entry of its row of ``W``: the most one unit of walker mass, wherever it is,
    can hand that node in one step (dangling restarts aside). Tightens :func:`top_k_pagerank`'s bounds.

    >>> import scipy.sparse as sp
    >>> inflow_bound(transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))).tolist()
    [1.0, 0.5, 0.5]
    """
    W = square_csr(W, "W").tocsr()
    out = np.zeros(W.shape[0])
    rows = np.flatnonzero(np.diff(W.indptr))
    if len(rows):
        out[rows] = np.maximum.reduceat(W.data, W.indptr[rows])
    return out


def top_k_pagerank(W, v0, k: int, *, restart: float = 0.5, max_iter: int = 200, ordered: bool = True,
                   dangling: np.ndarray | None = None, among: np.ndarray | None = None,
                   margin: float = 0.0, inflow: np.ndarray | None = None) -> TopK:
    """The exact top-``k`` nodes by PPR score, stopping as soon as they are certain.

    PPR is the series ``x = λ Σ_s (1-λ)^s M^s v0`` (``M`` = ``W`` with the dangling fix) of non-negative
    terms. After ``t`` terms the partial sum ``p`` is a lower bound on every score, and the mass still to
    be distributed is exactly ``(1-λ)^(t+1)``, an upper bound on what any node can still gain. The
    top-k *set* is certain once the k-th largest ``p`` exceeds the (k+1)-th by more than that mass;
    with ``ordered=True`` every consecutive gap in the top k must also exceed it, so the order is exact
    too. Early terms are sparse (walkers are still near the seeds) and cost only the seeds'
    neighbourhoods. Pass ``W`` as CSC (``transition_matrix(A).tocsc()``) to avoid a conversion per call,
    and ``dangling`` (a boolean mask, zero columns of ``W``) to avoid a pass over ``W``.
    ``certified`` is False only when ``max_iter`` ran out (exact ties can never be separated).

    ``among`` (a boolean mask) ranks only those nodes (e.g. a passage graph's passages; ``ids`` are still
    node indices). ``margin`` demands every certified gap exceed the remaining mass by that much more, so
    that another solver whose per-node error is below ``margin`` orders these nodes the same way.
    ``inflow`` (:func:`inflow_bound` of ``W``, computed once per graph) tightens what node ``j`` can still
    gain from ``remaining`` to ``remaining · max(inflow_j, v0_j)``: every later term is ``M`` applied to a
    unit of mass, and ``(M z)_j ≤ max(inflow_j, v0_j)`` for any such ``z``. Fewer terms, same answer.

    >>> import scipy.sparse as sp
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> t = top_k_pagerank(W, np.array([0, 1.0, 0]), 2)
    >>> t.ids.tolist(), t.certified, t.iterations
    ([1, 0], True, 3)
    >>> np.argsort(-personalized_pagerank(W, np.array([0, 1.0, 0]), tol=1e-12).scores)[:2].tolist()
    [1, 0]
    """
    W = square_csr(W, "W")
    if W.format != "csc":
        W = W.tocsc()
    n = W.shape[0]
    lam = probability(restart, "restart λ", zero_ok=False)
    k = integer(k, "k")
    margin = number(margin, "margin", low=0)
    v0 = _check_v0(v0, n)
    d = dangling_mask(W) if dangling is None else bool_mask(dangling, n, "dangling")
    ranked = np.arange(n) if among is None else np.flatnonzero(bool_mask(among, n, "among"))
    if k >= len(ranked):
        raise ValueError(f"k={k} must be smaller than the number of ranked nodes ({len(ranked)})")
    # a contiguous block of ranked nodes (e.g. passages first) is read as a view, not gathered per term
    block = slice(ranked[0], ranked[-1] + 1) if ranked[-1] - ranked[0] + 1 == len(ranked) else ranked
    if inflow is None:
        cap = np.ones(len(ranked))
    else:
        inflow = np.asarray(inflow, dtype=float)
        if inflow.shape != (n,) or not np.all(inflow >= 0):
            raise ValueError(f"inflow must be {n} values >= 0 (see inflow_bound), got shape {inflow.shape}")
        cap = np.minimum(1.0, np.maximum(inflow, v0 if d.any() else 0.0))[block]
    cap_min, check_below = cap.min(), np.inf
    p = np.zeros(n)
    support = np.flatnonzero(v0)
    y_vals = v0[support]
    seeds, dangling_ids = support, np.flatnonzero(d)
    coef, remaining = lam, 1.0
    dense_from = n // 20  # beyond this support size a full SpMV beats the gather
    y_dense = None
    for t in range(max_iter):
        if y_dense is None:
            p[support] += coef * y_vals
        else:
            p += coef * y_dense
        remaining *= 1 - lam
        coef *= 1 - lam
        pr = p[block]
        # node j can still gain at most remaining·cap_j: the k-th must clear every outsider's upper bound,
        # and (ordered) each of the top k its successor's. That needs a top score above
        # k·(remaining·min cap + margin): a one-pass test before the partition.
        if remaining <= check_below and pr.max() > (k if ordered else 1) * (remaining * cap_min + margin):
            top = np.argpartition(-pr, k)[:k]
            top = top[np.lexsort((top, -pr[top]))]
            upper = pr + remaining * cap
            upper[top] = -np.inf
            out = int(np.argmax(upper))
            lo = pr[top]
            gaps = np.r_[lo[:-1] - lo[1:], lo[-1] - pr[out]] if ordered else lo[-1:] - pr[out]
            caps = np.r_[cap[top[1:]], cap[out]] if ordered else cap[out:out + 1]
            if np.all(gaps > remaining * caps + margin):
                return TopK(ranked[top], lo, remaining, t + 1, True)
            # Were the gaps to stay put, no check passes before remaining falls to this: skip until then,
            # at most three terms (skipping only ever delays the stop; the gaps themselves keep changing).
            with np.errstate(divide="ignore", invalid="ignore"):
                due = np.min(np.where(caps > 0, (gaps - margin) / caps, np.inf))
            check_below = max(due, remaining * (1 - lam) ** 3)
        # one step of the walk: y ← M y = W y + (d·y) v0
        if y_dense is None and len(support) <= dense_from:
            idx, lens = csr_row_positions(W.indptr, support)
            rows = W.indices[idx]
            vals = W.data[idx] * np.repeat(y_vals, lens)
            dmass = y_vals[d[support]].sum()
            if dmass:
                rows = np.r_[rows, seeds]
                vals = np.r_[vals, dmass * v0[seeds]]
            support, inv = np.unique(rows, return_inverse=True)
            y_vals = np.bincount(inv, weights=vals, minlength=len(support))
        else:
            if y_dense is None:
                y_dense = np.zeros(n)
                y_dense[support] = y_vals
            y_dense = W @ y_dense + y_dense[dangling_ids].sum() * v0
    top = ranked[np.argsort(-p[ranked], kind="stable")[:k]]
    return TopK(top, p[top], remaining, max_iter, False)


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


def top_k_push(W, v0, k: int, *, restart: float = 0.5, rounds: int = 3, eps: float = 0.0,
               dangling: np.ndarray | None = None, inflow: np.ndarray | None = None) -> PushTopK:
    """The top-``k`` nodes by PPR after ``rounds`` of forward push from ``v0``, with per-node error bounds.

    Forward push (Andersen–Chung–Lang) keeps an estimate ``p`` and a residual ``r`` (initially ``v0``) with
    the invariant ``x = p + PPR(r)`` (``x`` = :func:`personalized_pagerank`'s answer, same ``W``, same
    dangling rule: a dangling node's walkers restart at ``v0``). A round pushes every node whose residual
    exceeds ``eps·outdeg`` at once (``p += λr``, ``r ← (1-λ)·M r``; with ``eps=0`` every touched node, so
    ``p`` is the series summed to ``rounds`` terms); nodes below the threshold keep their residual. Then
    ``x ≥ lower = p + λr`` and ``x ≤ lower + (1-λ)·‖r‖₁·cap`` (``cap`` = ``max(inflow, v0)`` capped at 1 —
    one step of the walk hands a node at most that share of any unit of mass — or 1 without ``inflow``);
    ``‖x - lower‖₁ = (1-λ)‖r‖₁`` exactly (``l1_error``). Ranks use ``estimate = p + r`` clipped to the
    bounds: the residual's own future, taken to stay where it is, which on well-mixed walks beats the
    lower bound. Ties by node id. Cost grows with the ``rounds``-hop neighbourhood of the seeds, not the
    graph; it is an approximation whose ``certified`` flags say which ranks are certain — for the exact
    top-k use :func:`top_k_pagerank`. Pass ``W`` as CSC (``transition_matrix(A).tocsc()``) to avoid a
    conversion per call; :func:`top_k_push_batch` answers many queries at once.

    >>> import scipy.sparse as sp
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> t = top_k_push(W.tocsc(), np.array([0, 1.0, 0]), 2, rounds=20)
    >>> t.ids.tolist(), t.certified.tolist(), bool(t.l1_error < 1e-6)
    ([1, 0], [True, True], True)
    """
    W = square_csr(W, "W")
    v0 = _check_v0(v0, W.shape[0])
    if v0.ndim != 1:
        raise ValueError("v0 must be a vector; use top_k_push_batch for many")
    return _top_k_push(W, v0[:, None], k, restart, rounds, eps, dangling, inflow)[0]


def top_k_push_batch(W, V0, k: int, *, restart: float = 0.5, rounds: int = 3, eps: float = 0.0,
                     dangling: np.ndarray | None = None, inflow: np.ndarray | None = None) -> list[PushTopK]:
    """:func:`top_k_push` for every column of ``V0`` (``(n, q)``), one :class:`PushTopK` per query. All
    queries advance together: each round is one sparse product of the ``(q, n)`` residuals with ``Wᵀ``,
    which reads only the rows of nodes some query has reached.

    >>> import scipy.sparse as sp
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> [t.ids.tolist() for t in top_k_push_batch(W.tocsc(), np.eye(3)[:, :2], 1, rounds=20)]
    [[0], [1]]
    """
    W = square_csr(W, "W")
    V0 = np.asarray(V0, dtype=float)
    if V0.ndim != 2:
        raise ValueError(f"V0 must be 2-D (n, q), got shape {V0.shape}")
    return _top_k_push(W, _check_v0(V0, W.shape[0], "V0"), k, restart, rounds, eps, dangling, inflow)


def _top_k_push(W, V0, k, restart, rounds, eps, dangling, inflow) -> list[PushTopK]:
    """:func:`top_k_push_batch` once ``W`` and the normalised ``V0`` are checked."""
    n = W.shape[0]
    lam = probability(restart, "restart λ", zero_ok=False)
    k = integer(k, "k")
    rounds = integer(rounds, "rounds")
    eps = number(eps, "eps", low=0)
    if k >= n:
        raise ValueError(f"k={k} must be smaller than the number of nodes ({n})")
    WT = W.T if W.format == "csc" else W.T.tocsr()  # row u of Wᵀ: where u's walkers go
    d = dangling_mask(W) if dangling is None else bool_mask(dangling, n, "dangling")
    if inflow is None:
        cap = np.ones(n)
    else:
        inflow = np.asarray(inflow, dtype=float)
        if inflow.shape != (n,) or not np.all(inflow >= 0):
            raise ValueError(f"inflow must be {n} values >= 0 (see inflow_bound), got shape {inflow.shape}")
        cap = np.minimum(1.0, inflow)
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
