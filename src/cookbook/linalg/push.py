"""Forward push, the pieces :func:`cookbook.linalg.top_k.top_k_push` is made of: the approximate push (a fixed
number of synchronous rounds, every score bounded), the exact call's push thresholded by the walk's balance
vector (every score bounded, the bounds as tight as the threshold), and the test of which nodes are surely in
or out of a top k.

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


# How far apart two scores must be to count as different: the exact push widens every interval by it, so that
# rounding in the sums never splits an exact tie (its candidates keep every upper bound that reaches the k-th
# lower bound less twice this).
TIE_TOL = 1e-12
# The smallest restart λ the exact top-k push takes: below it, a query's passes (about 1/λ) run for minutes.
MIN_EXACT_RESTART = 1e-4


def _checked(n, k, restart, rounds, eps, exact=False):
    """``(k, λ)`` checked (with ``rounds`` and ``eps``, which only the approximate option takes)."""
    k = integer(k, "k")
    lam = probability(restart, "restart λ", zero_ok=False)
    integer(rounds, "rounds")
    if number(eps, "eps", low=0) and exact:
        raise ValueError("eps thresholds the approximate push: pass rounds= with it")
    if k >= n:
        raise ValueError(f"k={k} must be smaller than the number of nodes ({n})")
    if exact and lam < MIN_EXACT_RESTART:  # each push keeps 1-λ of the mass moving: passes grow as 1/λ
        raise ValueError(f"restart λ={lam:g} is too small for the exact top-k push (its cost grows as 1/λ, and "
                         f"never ends as λ nears 0): it needs λ >= {MIN_EXACT_RESTART:g}; use personalized_pagerank")
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


class _LocalPush:
    """Forward push (Andersen–Chung–Lang) of the substochastic series ``y = Σ_s λ(1-λ)^s W^s v0``, thresholded
    by the walk's balance vector ``h`` (:attr:`~cookbook.linalg.ppr.Walk.balance`): ``y = p + Π r`` holds
    after any push (``Π = λ(I-(1-λ)W)⁻¹``); :meth:`push` pushes every node with ``r_u > θ·h_u`` until none is
    left, so that ``r ≤ θ·h`` after it and the bound ``Π r ≤ λr + (1-λ)·F·θ·Wh`` is as sharp as ``θ``. Pushing
    only where the residual sits above its share of ``h`` (near the seeds) costs the degrees of those nodes,
    not a pass over the graph. ``v0``: a vector, or its non-zeros ``(seeds, values)``. ``ids`` are the nodes
    touched so far, ascending (``p`` and ``r`` are zero elsewhere; ``p`` is zero too at nodes never pushed);
    ``rm`` is ``‖r‖₁``, ``work`` the entries of ``W`` read. The length-n arrays come zeroed from the walk's
    pool and go back to it, zeroed again where the push wrote, on :meth:`release`: a query costs what it
    touches."""

    def __init__(self, walk, v0, lam):
        self.walk, self.lam, self.C, self.n = walk, lam, walk.csc, walk.n
        self.h, self.Wh, self.c = walk.balance
        self.F = lam / (1 - (1 - lam) * self.c) if (1 - lam) * self.c < 1 else np.inf
        self._pushed = []  # the nodes each push step pushed (their union: every node with p > 0)
        # rh: r + i·h, so that one gather reads a node's residual and its h (one cache line, not two)
        self.p, self.rh, self.seen, self._slot = _buffers(walk)  # _slot: scratch for _distinct
        self.r = self.rh.real
        self.ids, x = v0 if isinstance(v0, tuple) else _nonzeros(v0)  # (seeds, values)
        self.r[self.ids] = x
        self.seen[self.ids] = True
        self._at_ids()
        self.work, self._rho = 0, float(np.max(self._rt / self._ht))

    def release(self):
        """Hand the length-n arrays back to the walk's pool, zeroed where this push wrote: ``r`` and ``seen``
        at ``ids``, ``p`` at the nodes pushed."""
        self.p[self.pushed()], self.r[self.ids] = 0.0, 0.0
        if len(self.ids) > self.n // 64:  # a bool array's memset beats a scatter over many
            self.seen.fill(False)
        else:
            self.seen[self.ids] = False
        self.walk._buffers.append((self.p, self.rh, self.seen, self._slot))
        self.p = self.r = self.rh = self.seen = self._slot = None

    def pushed(self) -> np.ndarray:
        """The nodes pushed so far, each once: the only ones where ``p`` is not zero."""
        self._pushed = [self._distinct(np.concatenate(self._pushed))] if self._pushed else [self.ids[:0]]
        return self._pushed[0]

    def rho(self) -> float:
        """``ρ ≥ max r/h``: exact at the start; after :meth:`push` (θ), θ (widened by the comparison's rounding),
        which every push leaves above ``max r/h`` — so no pass over the touched nodes finds it."""
        return self._rho

    def push(self, theta):
        """Push (``p += λr_u``, ``r += (1-λ)·r_u·W[:, u]``, ``r_u = 0``) every node with ``r_u > θ·h_u``, all of
        them at once, until no node is left above (each push moves ``λθh_u > 0`` into ``p``, so it ends).
        ``ids`` (ascending) and ``rm`` are brought up to date once, at the end."""
        r, h, C, lam = self.r, self.h, self.C, self.lam
        S = self.ids[self._rt > theta * self._ht]
        while len(S):
            self._pushed.append(S)
            vals = r[S]
            r[S] = 0.0
            self.p[S] += lam * vals
            lens = C.indptr[S + 1] - C.indptr[S]
            entries = int(lens.sum())
            self.work += entries
            if entries > C.nnz // 8:  # much of W: one product beats the gather
                z = np.zeros(self.n)
                z[S] = vals
                r += (1 - lam) * (C @ z)
                self.seen |= r > 0
                S = np.flatnonzero(r > theta * h)
                continue
            tgt, amt = self._spread(S, lens, (1 - lam) * vals)
            np.add.at(r, tgt, amt)
            self.seen[tgt] = True
            rh = self.rh[tgt]
            S = self._distinct(tgt[rh.real > theta * rh.imag])
        self.ids = np.flatnonzero(self.seen)
        self._at_ids()
        self._rho = min(self._rho, theta * (1 + 1e-12))

    def _at_ids(self):
        """``r`` and ``h`` at ``ids`` (``_rt``, ``_ht``: read once a pass) and ``rm``."""
        rh = self.rh[self.ids]
        self._rt, self._ht = rh.real, rh.imag
        self.rm = float(self._rt.sum())

    def _spread(self, S, lens, vals):
        """Where the walkers of ``S`` (amounts ``vals``) step: ``(targets, amounts)``, one entry per entry of
        ``W``'s columns ``S`` (``lens`` entries each; gathered by hand for a few columns, by scipy's row indexing
        of ``Wᵀ`` for many)."""
        C = self.C
        if len(S) < 512:
            pos, _ = csr_row_positions(C.indptr, S)  # the CSC arrays read as CSR rows of Wᵀ
            return C.indices[pos], C.data[pos] * np.repeat(vals, lens)
        rows = self.walk.csc.T[S]  # row u of Wᵀ: where u's walkers go (the CSC arrays read as CSR, no copy)
        return rows.indices, rows.data * np.repeat(vals, lens)

    def _distinct(self, a):
        """``a``'s distinct values (in no particular order), without sorting: whichever of a repeated value's
        positions the scatter keeps, exactly one position reads itself back."""
        at = np.arange(len(a))
        self._slot[a] = at
        return a[self._slot[a] == at]

    def candidates(self, k):
        """``(ids, lo, hi)``, ids ascending: every node whose upper bound reaches the k-th largest lower
        bound less ``2·TIE_TOL`` (:func:`_certain` widens both intervals by it), with its bounds on ``y``:
        ``lo = p + λr``, ``hi = lo + (1-λ)·min(‖r‖₁·cap, F·ρ·Wh)`` (``ρ`` = :meth:`rho`). Only the nodes pushed
        so far and those whose ``h`` is large are read: a node never pushed has ``p = 0`` and ``r ≤ ρh``, and
        its tail is at most ``Fρ·Wh ≤ Fρc·h``, so its upper bound is below ``ρh·(λ + (1-λ)Fc)`` — a suffix of
        the nodes by ``h``. (When too few were pushed to set a k-th score: :meth:`_candidates_scan`.)"""
        lam, rho, n, P = self.lam, self._rho, self.n, self.pushed()
        if len(P) < k or rho <= 0 or not np.isfinite(self.F):
            return self._candidates_scan(k)
        loP = self.p[P] + lam * self.r[P]
        # at most the k-th of all (the suffix is wide enough), less _certain's widening of both intervals
        tau = np.partition(loP, len(P) - k)[len(P) - k] - 2 * TIE_TOL
        order, hs = self.walk._by_h
        with np.errstate(over="ignore"):  # a level past the largest float: no such node
            Q = order[np.searchsorted(hs, tau / (rho * (lam + (1 - lam) * self.F * self.c)) * (1 - 1e-9)):]
        Q = Q[self.p[Q] == 0]
        if len(P) + len(Q) >= n // 4:
            return self._candidates_scan(k)
        ids, lo = np.r_[P, Q], np.r_[loP, lam * self.r[Q]]
        tau = np.partition(lo, len(lo) - k)[len(lo) - k] - 2 * TIE_TOL  # every lower bound reaching it is here
        hi = lo + (1 - lam) * self._tail(ids, rho)
        keep = hi >= tau
        ids, lo, hi = ids[keep], lo[keep], hi[keep]
        s = np.argsort(ids)
        return ids[s], lo[s], hi[s]

    def _candidates_scan(self, k):
        """:meth:`candidates` by a scan of every touched node (of every node, when fewer than k are touched);
        an untouched node has ``lo = 0``: only those whose ``Wh`` reaches the k-th lower bound over
        ``(1-λ)Fρ`` can be candidates, a suffix of :attr:`~cookbook.linalg.ppr.Walk.by_balance`."""
        lam, rho, (order, Wh) = self.lam, self._rho, self.walk.by_balance
        ids, rt = (self.ids, self._rt) if len(self.ids) >= k else (np.arange(self.n), self.r)  # fewer than k: all
        untouched = len(ids) < self.n  # then only the touched are scanned
        lo = self.p[ids] + lam * rt
        tau = np.partition(lo, len(lo) - k)[len(lo) - k] - 2 * TIE_TOL  # as in candidates
        # no tail exceeds (1-λ)·min(‖r‖₁, Fρ·max Wh) (cap ≤ 1): only the nodes that near tau get theirs
        reach = (1 - lam) * (min(self.rm, self.F * rho * Wh[-1]) if np.isfinite(self.F) else self.rm)
        near = np.flatnonzero((lo + reach) * (1 + 1e-12) >= tau)
        ids, lo = ids[near], lo[near]
        hi = lo + (1 - lam) * self._tail(ids, rho)
        keep = hi >= tau
        ids, lo, hi = ids[keep], lo[keep], hi[keep]
        if untouched:
            per_wh = (1 - lam) * self.F * rho if np.isfinite(self.F) else np.inf  # an untouched tail: per_wh·Wh at most
            with np.errstate(over="ignore"):  # a level past the largest float: no untouched node reaches it
                # per_wh 0 (λ = 1, or ρ = 0): every untouched node's score is 0, a candidate only when tau is 0
                level = tau / per_wh * (1 - 1e-9) if per_wh > 0 else (np.inf if tau > 0 else 0.0)
            out = order[np.searchsorted(Wh, level):]
            out = out[~self.seen[out]]
            hi_out = (1 - lam) * self._tail(out, rho)
            out, hi_out = out[hi_out >= tau], hi_out[hi_out >= tau]
            ids, lo, hi = np.r_[ids, out], np.r_[lo, np.zeros(len(out))], np.r_[hi, hi_out]
        if len(ids) > 4 * k + 64:  # too many to test: not sorted
            return ids, lo, hi
        s = np.argsort(ids)
        return ids[s], lo[s], hi[s]

    def sharpen(self, ids, depth=2):
        """Bounds ``(lo, hi)`` on ``y`` at ``ids``, ``depth`` steps sharper than :meth:`candidates`': unroll
        ``Π r = λr + (1-λ)·W·Π r`` ``depth`` times through the rows of ``W`` (where a node's walkers come
        from), bounding ``Π r`` only at the far end — by ``[λr, λr + (1-λ)·min(‖r‖₁·cap, F·ρ·Wh)]`` — and
        each step down by ``‖r‖₁·cap`` too. Each step narrows the interval by about ``(1-λ)·c``; the cost is
        the ``depth``-step in-neighbourhood of ``ids``."""
        lam, rho, csr, rings, links = self.lam, self.rho(), self.walk.csr, [np.asarray(ids)], []
        for _ in range(depth):  # each ring's in-links: (row in the ring, source's place in the next ring, weight)
            pos, lens = csr_row_positions(csr.indptr, rings[-1])
            src = csr.indices[pos]
            rings.append(self._distinct(src))
            self._slot[rings[-1]] = np.arange(len(rings[-1]))
            links.append((np.repeat(np.arange(len(lens)), lens), self._slot[src], csr.data[pos]))
        far = rings.pop()
        lo = lam * self.r[far]
        hi = lo + (1 - lam) * self._tail(far, rho)
        for ring, (row, at, w) in zip(reversed(rings), reversed(links)):
            wlo = np.bincount(row, weights=w * lo[at], minlength=len(ring))
            whi = np.bincount(row, weights=w * hi[at], minlength=len(ring))
            r = self.r[ring]
            lo, hi = lam * r + (1 - lam) * wlo, lam * r + (1 - lam) * np.minimum(self.rm * self._cap(ring), whi)
        return self.p[rings[0]] + lo, self.p[rings[0]] + hi

    def _tail(self, ids, rho):
        """Per node of ``ids``, the most ``(W Π r)`` can hold: ``min(‖r‖₁·cap, F·ρ·Wh)``."""
        tail = self.rm * self._cap(ids)
        return np.minimum(tail, (self.F * rho) * self.Wh[ids]) if np.isfinite(self.F) else tail

    def _cap(self, ids):
        """``cap`` at ``ids``: the most one step hands a node of any unit of mass, ``min(1, inflow)``."""
        return np.minimum(self.walk.inflow[ids], 1.0)


def _nonzeros(v):
    """A vector's non-zeros as ``(positions, values)``, positions ascending: the form the exact push takes ``v0``.

    >>> [a.tolist() for a in _nonzeros(np.array([0, 0.5, 0, 0.5]))]
    [[1, 3], [0.5, 0.5]]
    """
    at = np.flatnonzero(v != 0)
    return at, v[at]


def _buffers(walk):
    """Zeroed ``(p, r, seen, slot)`` of length n from ``walk``'s pool (new ones when it is empty, e.g. while
    another query holds them); :meth:`_LocalPush.release` hands them back."""
    try:
        return walk._buffers.pop()
    except IndexError:
        n = walk.n
        rh = np.zeros(n, dtype=complex)
        rh.imag = walk.balance[0]
        return np.zeros(n), rh, np.zeros(n, dtype=bool), np.empty(n, dtype=np.intp)


def _certain(lo, hi, group, k, tol=TIE_TOL):
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
