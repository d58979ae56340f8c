"""Top-k Personalized PageRank without solving for every score. :func:`top_k_push`, the plain call, returns
the exact top-k set: forward push, thresholded by the walk's balance vector, bounds every score ever more
tightly until each node whose interval reaches the k-th score is surely in or out; its ``rounds=`` option is
the approximate push, a fixed number of rounds with stated bounds. :func:`top_k_pagerank` sums the PPR
series until the top k *and their order* are certain, with a margin and among a subset (HippoRAG's
passages). All take a :class:`~cookbook.linalg.ppr.Walk` or a transition matrix, as :mod:`cookbook.linalg.ppr` does.

>>> import scipy.sparse as sp
>>> from cookbook.linalg.ppr import Walk
>>> walk = Walk.from_adjacency(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
>>> top_k_pagerank(walk, np.array([0, 1.0, 0]), 2).ids.tolist(), top_k_push(walk, np.array([0, 1.0, 0]), 2).ids.tolist()
([1, 0], [1, 0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import bool_mask, integer, number, probability
from ..arrays import csr_row_positions
from .ppr import _check_seeds, _check_v0, _floats, prepare
from .push import PushTopK, _certain, _checked, _LocalPush, _nonzeros, _top_k_push

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
    while it is local, dense once its step would gather a tenth of ``W``'s entries (a full SpMV then beats the
    gather)."""

    def __init__(self, support, v0):
        self.support, self.vals, self.v0, self.seeds, self.dense = support, v0[support], v0, support, None

    def add_to(self, p, coef):
        if self.dense is None:
            p[self.support] += coef * self.vals
        else:
            p += coef * self.dense

    def step(self, walk):
        W, d, n = walk.csc, walk.dangling, walk.n
        if self.dense is None and len(self.support) <= n // 20 and \
                (W.indptr[self.support + 1] - W.indptr[self.support]).sum() <= W.nnz // 10:
            idx, lens = csr_row_positions(W.indptr, self.support)
            rows = W.indices[idx]
            vals = W.data[idx] * np.repeat(self.vals, lens)
            dmass = self.vals[d[self.support]].sum()
            if dmass:
                rows = np.r_[rows, self.seeds]
                vals = np.r_[vals, dmass * self.v0[self.seeds]]
            if len(rows) > n // 8:  # many entries: a dense tally beats sorting them
                tally = np.bincount(rows, weights=vals, minlength=n)
                self.support = np.flatnonzero(tally)
                self.vals = tally[self.support]
            else:
                self.support, inv = np.unique(rows, return_inverse=True)
                self.vals = np.bincount(inv, weights=vals, minlength=len(self.support))
            return
        if self.dense is None:
            self.dense = np.zeros(n)
            self.dense[self.support] = self.vals
        self.dense = W @ self.dense + self.dense[d].sum() * self.v0


# Above this k the exact call is a converged solve: the push's certificate would hold ~(4k)² booleans per array
# (k = 3000 on a 20k-node graph took 2.9 s and 237 MB; a solve there takes a fraction of a second).
PAIRWISE_MAX_K = 500


def _exact_top_k(walk, v0, k, lam, shrink=8.0, rm_floor=1e-15) -> PushTopK:
    """:func:`top_k_push` with ``rounds=None``: see its docstring. Push to a threshold ``θ`` (of the balance
    vector ``h``) ``shrink`` times lower each pass, until every candidate is surely in or surely out of the
    top ``k`` (the bounds of the few still open unrolled one step, then two, :meth:`_LocalPush.sharpen`); exact ties
    the bounds cannot split (below ``rm_floor`` of residual) are settled by a converged
    solve."""
    if k > PAIRWISE_MAX_K:  # the certificate compares candidates pairwise, (4k+64)² cells: a solve is cheaper
        return _solved_top_k(walk, v0, k, lam, 0.0, walk.n)
    fwd = _LocalPush(walk, v0, lam)  # v0: (seeds, their values), ascending
    theta, v0_at = fwd.rho(), dict(zip(v0[0].tolist(), v0[1].tolist()))
    while True:
        theta /= shrink
        fwd.push(theta)
        if fwd.rm > 0.25:  # bounds this loose certify nothing on a large graph: skip them
            continue
        cand, lo, hi = fwd.candidates(k)
        if len(cand) <= 4 * k + 64:
            group = _exact_groups(walk.csr, v0_at, cand)
            surely_in, surely_out = _certain(lo, hi, group, k)
            open_ = ~surely_in & ~surely_out
            for depth in (1, 2):  # few left open: unroll the bounds of those, one step, then two
                if not open_.any() or open_.sum() > 2 * k:
                    break
                sharp_lo, sharp_hi = fwd.sharpen(cand[open_], depth)
                lo[open_], hi[open_] = np.maximum(lo[open_], sharp_lo), np.minimum(hi[open_], sharp_hi)
                surely_in, surely_out = _certain(lo, hi, group, k)
                open_ = ~surely_in & ~surely_out
            if not open_.any():
                break
        if fwd.rm <= rm_floor:
            fwd.release()
            return _solved_top_k(walk, v0, k, lam, (1 - lam) * fwd.rm, len(fwd.ids))
    psum = float(fwd.p[fwd.pushed()].sum())
    fwd.release()
    y_range = (psum + lam * fwd.rm, psum + fwd.rm) if walk.dangling.any() else (1.0, 1.0)
    out = _exact_result(np.flatnonzero(surely_in), lo, hi, np.flatnonzero(~surely_in), y_range,
                        (1 - lam) * fwd.rm, len(fwd.ids))
    out.ids = cand[out.ids]
    return out


def _exact_groups(rows, v0, cand) -> np.ndarray:
    """Per candidate, a group id shared by candidates whose scores are exactly equal because their rows of
    ``W`` (where their walkers come from, with what weight) and their ``v0`` entries (``v0``: node → its
    non-zero entry) are identical; -1 alone."""
    keys = {}
    for i, j in enumerate(cand.tolist()):
        a, b = rows.indptr[j], rows.indptr[j + 1]
        keys.setdefault((v0.get(j, 0.0), rows.indices[a:b].tobytes(), rows.data[a:b].tobytes()), []).append(i)
    group = np.full(len(cand), -1)
    for g, members in enumerate(m for m in keys.values() if len(m) > 1):
        group[members] = g
    return group


def _exact_result(top, lo, hi, rest, y_range, l1, touched) -> PushTopK:
    """The certified set ``top`` (positions in ``lo``/``hi``, which are in id order) as a :class:`PushTopK`
    whose ``ids`` are those positions: best first by the middle of its interval, ties by id; bounds turned
    from the substochastic series' scale into the scores' (they differ by the mass the walk loses at dangling
    nodes: the scores are the series divided by its sum, which lies in ``y_range``)."""
    mid = (lo[top] + hi[top]) / 2
    top = top[np.lexsort((top, -mid))]
    y_lo, y_hi = y_range
    lower, upper = lo[top] / y_hi, hi[top] / y_lo
    est = np.clip((lo[top] + hi[top]) / (y_lo + y_hi), lower, upper)
    outside = hi[rest].max() / y_lo if len(rest) else -np.inf
    below = np.maximum.accumulate(np.r_[upper[1:], outside][::-1])[::-1]
    above = np.minimum.accumulate(np.r_[np.inf, lower[:-1]])
    return PushTopK(top, est, lower, upper, (lower > below) & (upper < above), l1, touched, True)


def _solved_top_k(walk, v0, k, lam, l1, touched) -> PushTopK:
    """The fallback when bounds cannot separate the k-th score (near-exact ties): a converged solve, ties
    (scores equal to 12 decimals) by id."""
    from .ppr import personalized_pagerank

    v = np.zeros(walk.n)
    v[v0[0]] = v0[1]
    # the L1 change falls as (1-λ)^t: 35/λ iterations bring it below 1e-13 (5000 would not, for λ < 0.006)
    r = personalized_pagerank(walk, v, restart=lam, tol=1e-13, max_iter=max(5000, int(35 / lam)))
    assert r.converged, "the fallback solve must converge"
    s = r.scores
    top = np.lexsort((np.arange(walk.n), -np.round(s, 12)))[:k]
    top = top[np.lexsort((top, -s[top]))]  # the set by the rounded scores; its order by the estimate, as documented
    return PushTopK(top, s[top], s[top], s[top], np.zeros(k, dtype=bool), l1, touched, True)


def top_k_push(W, v0, k: int, *, restart: float = 0.5, rounds: int | None = None, eps: float = 0.0) -> PushTopK:
    """The top-``k`` nodes by PPR from ``v0``: the exact top-k set by default, the fast way; with ``rounds``
    an approximation after that many rounds of forward push.

    **Exact (the default).** The set is that of a converged :func:`personalized_pagerank` solve, ties by node
    id (``exact=True``); the order inside it is by each interval's middle, and ``certified`` says which ranks
    are certain. Forward push (Andersen–Chung–Lang) keeps ``p`` and the residual ``r``
    with ``y = p + Π r`` (``Π = λ(I-(1-λ)W)⁻¹``; ``y`` is the score vector up to one positive factor — the
    share a dangling node's walkers carry back to ``v0`` — so it ranks the nodes as the scores do). Every
    ``y_j`` lies in ``[p_j + λr_j, p_j + λr_j + (1-λ)·min(‖r‖₁·cap_j, F·ρ·(Wh)_j)]``: one step hands a node at
    most ``cap_j`` (:attr:`~cookbook.linalg.ppr.Walk.inflow`) of any unit of mass, and with ``h`` a positive
    vector with ``W h ≤ c·h`` (:attr:`~cookbook.linalg.ppr.Walk.balance`), ``r ≤ ρ·h`` (``ρ ≥ max r/h``) gives
    ``Π r ≤ ρ·F·h`` (``F = λ/(1-(1-λ)c)``) — mass cannot pile up faster than ``h`` does. What keeps ``ρ``
    large is the residual piled near the seeds, far above its share of ``h``; so the push is thresholded by
    ``h``: every node with ``r_u > θ·h_u`` is pushed, over and over, until none is (then ``ρ ≤ θ``), ``θ``
    eightfold lower each pass — that costs the degrees of the nodes pushed, not a pass over the graph. After
    each pass the candidates are the nodes whose upper bound reaches the k-th lower bound (among the nodes
    pushed so far and those whose ``h`` is large enough that, never pushed, they could still reach it); when
    only a few are neither surely in nor surely out, their bounds are unrolled one step through ``W``, then,
    if some stay open, two (``Π r = λr + (1-λ)·W·Π r``, the bounds above applied only to the nodes upstream),
    each step narrowing them by about ``(1-λ)·c`` for the cost of those nodes' neighbourhoods; it stops once
    each candidate is surely in or surely out. Nodes whose rows of ``W`` and ``v0`` entries are identical
    have equal scores and are ordered by id; any other tie the bounds cannot separate (rare) is settled by a
    converged solve, ties at 12 decimals by id, as is any ``k`` above :data:`PAIRWISE_MAX_K` (500: the
    certificate compares the candidates pairwise). ``restart`` must be at least
    :data:`~cookbook.linalg.push.MIN_EXACT_RESTART` (1e-4): the passes grow as 1/λ. On a power-law graph of
    169k nodes a query reads a few hundredths of ``W``'s entries when the k-th and (k+1)-th scores are 1e-5
    apart (scores near 1e-2), about ``W``'s size when they are 1e-7 apart (benchmarks/ppr.py).

    **Approximate (``rounds=R``).** ``R`` synchronous rounds of forward push (``x = p + PPR(r)``, ``x`` =
    :func:`personalized_pagerank`'s answer, same dangling rule: a dangling node's walkers restart at ``v0``),
    each pushing every node whose residual exceeds ``eps·outdeg`` (``p += λr``, ``r ← (1-λ)·M r``; with
    ``eps=0`` every touched node, so ``p`` is the series summed to ``R`` terms). Its bound: every true score
    lies in ``[lower, upper]``, ``lower = p + λr``, ``upper = lower + (1-λ)·‖r‖₁·cap`` (``cap`` =
    ``max(inflow, v0)`` capped at 1), and ``‖x - lower‖₁ = (1-λ)‖r‖₁`` exactly (``l1_error``; ``(1-λ)^(R+1)``
    with ``eps=0``) — the returned set may miss true top-k nodes whose scores lie within those bounds of the
    k-th (``exact=False``). Ranks use ``estimate = p + r`` clipped to the bounds. Cost grows with the ``R``-hop
    neighbourhood of the seeds, not the graph.

    The exact top-k *and its order*, with a margin, among a subset of nodes: :func:`top_k_pagerank`. ``W``: a
    :class:`~cookbook.linalg.ppr.Walk` or a transition matrix (prepared once, then re-read once a call, ~1 ms
    on 2.3M entries, to notice an in-place edit: pass ``prepare(W)`` where that matters); :func:`top_k_push_batch`
    answers many queries at once.

    >>> import scipy.sparse as sp
    >>> from cookbook.linalg.ppr import transition_matrix
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> t = top_k_push(W, np.array([0, 1.0, 0]), 2)
    >>> t.ids.tolist(), t.exact
    ([1, 0], True)
    >>> t = top_k_push(W, np.array([0, 1.0, 0]), 2, rounds=20)
    >>> t.ids.tolist(), t.certified.tolist(), bool(t.l1_error < 1e-6), t.exact
    ([1, 0], [True, True], True, False)
    """
    walk = prepare(W)
    v = _floats(v0, "v0")
    if rounds is None and v.shape == (walk.n,):  # checked and scaled at its non-zeros only
        return _exact_top_k(walk, _check_seeds(v), *_checked(walk.n, k, restart, 1, eps, exact=True))
    v0 = _check_v0(v, walk.n)
    if v0.ndim != 1:
        raise ValueError("v0 must be a vector; use top_k_push_batch for many")
    return _top_k_push(walk, v0[:, None], k, restart, rounds, eps)[0]


def top_k_push_batch(W, V0, k: int, *, restart: float = 0.5, rounds: int | None = None,
                     eps: float = 0.0) -> list[PushTopK]:
    """:func:`top_k_push` for every column of ``V0`` (``(n, q)``), one :class:`PushTopK` per query: exact by
    default (one query after another), approximate with ``rounds``, where all queries advance together: each
    round is one sparse product of the ``(q, n)`` residuals with ``Wᵀ``, which reads only the rows of nodes
    some query has reached.

    >>> import scipy.sparse as sp
    >>> from cookbook.linalg.ppr import transition_matrix
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> [t.ids.tolist() for t in top_k_push_batch(W, np.eye(3)[:, :2], 1)]
    [[0], [1]]
    """
    walk = prepare(W)
    V0 = _floats(V0, "V0")
    if V0.ndim != 2:
        raise ValueError(f"V0 must be 2-D (n, q), got shape {V0.shape}")
    V0 = _check_v0(V0, walk.n, "V0")
    if rounds is None:
        args = _checked(walk.n, k, restart, 1, eps, exact=True)
        return [_exact_top_k(walk, _nonzeros(V0[:, j]), *args) for j in range(V0.shape[1])]
    return _top_k_push(walk, V0, k, restart, rounds, eps)
