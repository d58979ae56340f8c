"""Personalized PageRank by power iteration on a prepared column-stochastic matrix: the solver only (its
HippoRAG use — passage graph, seeding, ranking — is :mod:`cookbook.query.hipporag`; certified and
approximate top-k are :mod:`cookbook.linalg.top_k`).

The iteration is ``v ← (1-λ)·(W·v + (d·v)·v0) + λ·v0`` with restart probability ``λ`` (0.5 by default,
as in HippoRAG 2). ``W[i, j]`` is the probability of stepping from ``j`` to ``i``; a *dangling* node ``j``
(no out-edges, ``d_j = 1``) sends its walkers back to the personalization ``v0`` — the convention of
networkx (``dangling=None``) and igraph PRPACK, so all three agree to the tolerance.

Every entry point takes a :class:`Walk` — ``W`` checked once and prepared once (its CSC form, its dangling
nodes, the bound on what one step can hand a node) — or a plain transition matrix, whose :class:`Walk` is
built on the first call and kept on the matrix (:func:`prepare`), so the plain call is the fast call.

>>> import numpy as np, scipy.sparse as sp
>>> A = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]]))
>>> r = personalized_pagerank(transition_matrix(A), np.array([1.0, 0, 0]))
>>> np.round(r.scores, 3).tolist(), round(float(r.scores.sum()), 6)
([0.667, 0.167, 0.167], 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from .._validate import distribution, integer, number, probability, square_csr, summable

__all__ = ["PPRResult", "Walk", "dangling_mask", "inflow_bound", "personalized_pagerank",
           "personalized_pagerank_batch", "prepare", "transition_matrix"]

# How far a column of W may sum from 1 (or 0) and still be a transition matrix.
STOCHASTIC_TOL = 1e-6


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
    summable(A.data, "adjacency", what="edge weights")  # a row sum of inf would make its column zeros
    out = np.asarray(A.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    W = (sp.diags(inv) @ A).T.tocsr()
    W.sort_indices()
    return W


def _floats(v, name: str) -> np.ndarray:
    """``v`` as a float array; ``TypeError`` for a sparse matrix (``np.asarray`` wraps it in a 0-d object array:
    a deep "setting an array element with a sequence") or complex values (whose imaginary part it drops)."""
    if sp.issparse(v):
        raise TypeError(f"{name} must be a dense array, got a sparse matrix: pass {name}.toarray().ravel()")
    a = np.asarray(v)
    if np.iscomplexobj(a):
        raise TypeError(f"{name} must be real, got complex values")
    return np.asarray(a, dtype=float)


def _check_v0(v0, n: int, name: str = "v0") -> np.ndarray:
    v = _floats(v0, name)
    if v.shape != (n,) and not (v.ndim == 2 and v.shape[0] == n):
        raise ValueError(f"{name} must have length {n} (one entry per node), got shape {v.shape}")
    if v.ndim == 2:
        return distribution(v, name)  # scaled without overflow: [1e308, 1e308, 0] is [0.5, 0.5, 0]
    at, x = _check_seeds(v, name, scale=False)  # distribution's floats, reading only the few non-zeros
    out = np.zeros(n)
    out[at] = x
    out[at] /= out.sum()  # the sum over the same array: the same floats as scaling it whole
    return out


def _check_seeds(v: np.ndarray, name: str = "v0", scale: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """A vector's non-zeros ``(at, x)``, ascending, found in one pass (NaN and inf too: ``v != 0`` is a bool
    scan, far faster than one over floats) and checked as :func:`~cookbook._validate.distribution` checks the
    whole; ``x`` divided by its largest and then, with ``scale``, by its sum (over the few: the floats may
    differ from ``distribution``'s in the last bit)."""
    at = np.flatnonzero(v != 0)
    x = distribution(v[at], name)  # the checks: finite, none negative, not all zeros
    return at, (x if scale else v[at] / v[at].max())


def dangling_mask(W) -> np.ndarray:
    """Boolean mask of ``W``'s zero columns: the dangling nodes, whose walkers restart at ``v0``.

    >>> import scipy.sparse as sp
    >>> dangling_mask(transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [0, 0, 0]])))).tolist()
    [False, False, True]
    """
    return _column_sums(square_csr(W, "W")) == 0


def _column_sums(W) -> np.ndarray:
    if W.format == "csr":  # one pass over the stored entries, without a transpose
        return np.bincount(W.indices, weights=W.data, minlength=W.shape[1])
    return np.asarray(W.sum(axis=0)).ravel()


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


class Walk:
    """A transition matrix ``W`` checked once and prepared once for every PPR entry point: ``matrix`` (``W``
    as given, CSR or CSC), its ``csc`` form (built on first use), the ``dangling`` mask and the ``inflow``
    bound (:func:`inflow_bound`, built on first use). ``n`` is the number of nodes.

    ``W`` must be column-stochastic: finite, non-negative, every column summing to 1 — or to 0 for a node
    without out-edges — within :data:`STOCHASTIC_TOL`; anything else (an adjacency passed as it is, a NaN)
    is a ``ValueError`` that says to call :func:`transition_matrix`. It also keeps, for reuse, the zeroed
    length-n arrays of :func:`~cookbook.linalg.top_k.top_k_push`'s exact push (one set per query running at
    once), so that a query costs what it touches. Build one with ``Walk(W)`` or
    :meth:`from_adjacency`, and pass it wherever a ``W`` goes. Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [0, 0, 0]]))
    >>> w = Walk.from_adjacency(A)
    >>> w.n, w.dangling.tolist(), w.csc.format
    (3, [False, False, True], 'csc')
    >>> Walk(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: W must be column-stochastic (...), but column 0 sums to 2: pass transition_matrix(adjacency), ...
    """

    def __init__(self, W):
        W = square_csr(W, "W")
        if W.nnz and not np.all(np.isfinite(W.data)):
            raise ValueError("W has non-finite entries (NaN or inf): build it with transition_matrix(adjacency)")
        if W.nnz and W.data.min() < 0:
            raise ValueError("W has negative entries: a transition matrix holds probabilities; build it with "
                             "transition_matrix(adjacency)")
        sums = _column_sums(W)
        bad = np.flatnonzero((np.abs(sums - 1) > STOCHASTIC_TOL) & (sums > STOCHASTIC_TOL))
        if len(bad):
            raise ValueError(f"W must be column-stochastic (each column sums to 1, or to 0 for a node without "
                             f"out-edges), but column {bad[0]} sums to {sums[bad[0]]:.6g}: pass "
                             "transition_matrix(adjacency), not the adjacency itself")
        self.matrix = W
        self.n = W.shape[0]
        self.dangling = sums <= STOCHASTIC_TOL
        self._fingerprint = _fingerprint(W)
        self._buffers = []  # zeroed length-n arrays the exact top-k push reuses (push._buffers)

    def __repr__(self) -> str:
        return f"Walk(n={self.n}, nnz={self.matrix.nnz}, dangling={int(self.dangling.sum())})"

    @classmethod
    def from_adjacency(cls, adjacency) -> Walk:
        """The walk of a graph: ``Walk(transition_matrix(adjacency))``.

        >>> Walk.from_adjacency(np.array([[0, 1], [1, 0]]))
        Walk(n=2, nnz=2, dangling=0)
        """
        return cls(transition_matrix(adjacency))

    @cached_property
    def csc(self) -> sp.csc_matrix:
        """``W`` as CSC (column ``j`` lists where node ``j``'s walkers go), built once.

        >>> Walk.from_adjacency(np.array([[0, 1], [1, 0]])).csc.format
        'csc'
        """
        return self.matrix if self.matrix.format == "csc" else self.matrix.tocsc()

    @cached_property
    def inflow(self) -> np.ndarray:
        """:func:`inflow_bound` of ``W``, built once.

        >>> Walk.from_adjacency(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])).inflow.tolist()
        [1.0, 0.5, 0.5]
        """
        return inflow_bound(self.matrix)

    @cached_property
    def csr(self) -> sp.csr_matrix:
        """``W`` as CSR (row ``j`` lists the nodes whose walkers step to ``j``: a reverse walk), built once.

        >>> Walk.from_adjacency(np.array([[0, 1], [1, 0]])).csr.format
        'csr'
        """
        return self.matrix if self.matrix.format == "csr" else self.matrix.tocsr()

    @cached_property
    def balance(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(h, Wh, c)``: a positive vector ``h`` with ``W h ≤ c·h`` (``Wh`` = ``W h``, ``c`` measured, not
        assumed), built once. ``h`` is a global PageRank (damping 0.9, uniform teleport, dangling mass
        dropped), so ``c ≤ 1/0.9`` once it has converged; on an undirected graph ``h`` tracks the degree and
        ``c`` is near 1. It bounds where any spread of walker mass can pile up: for ``z ≤ ρ·h``,
        ``W^s z ≤ ρ·c^s·h`` (:func:`~cookbook.linalg.top_k.top_k_push` bounds the unsummed tail with it).

        >>> h, Wh, c = Walk.from_adjacency(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])).balance
        >>> bool(np.all(Wh <= c * h + 1e-15)), bool(np.all(h > 0))
        (True, True)
        """
        W, n = self.csc, self.n
        h = np.full(n, 1.0 / n)
        for _ in range(40):
            h = 0.9 * (W @ h) + 0.1 / n
        Wh = W @ h
        return h, Wh, float(np.max(Wh / h))

    @cached_property
    def by_balance(self) -> tuple[np.ndarray, np.ndarray]:
        """``(order, Wh[order])``: node ids by ``Wh`` (of :attr:`balance`) ascending, built once, so the nodes
        whose ``Wh`` reaches a level are a suffix found by one binary search (the walk's hubs, on a power-law
        graph), not a pass over every node.

        >>> order, Wh = Walk.from_adjacency(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])).by_balance
        >>> int(order[-1]), bool(np.all(np.diff(Wh) >= 0))
        (0, True)
        """
        Wh = self.balance[1]
        order = np.argsort(Wh, kind="stable")
        return order, Wh[order]

    @cached_property
    def _by_h(self) -> tuple[np.ndarray, np.ndarray]:
        """``(order, h[order])``: node ids by ``h`` (of :attr:`balance`) ascending, built once."""
        h = self.balance[0]
        order = np.argsort(h, kind="stable")
        return order, h[order]


def _fingerprint(W) -> tuple:
    """What identifies ``W``'s contents: its buffers and the wrapping integer sum of its values' bit patterns
    (one pass over the values, ~1 ms for 2.3M entries, no float rounding), so that a matrix whose values are
    edited in place — any one of them, by any amount — is prepared anew. (Edits that leave that sum as it was,
    such as swapping two values, or in-place edits of the index arrays, are not noticed: rebuild the matrix,
    or pass a new :class:`Walk`.)"""
    bits = W.data.view(f"u{W.data.itemsize}")
    return (W.shape, W.format, W.nnz, W.data.__array_interface__["data"][0],
            W.indices.__array_interface__["data"][0], W.indptr.__array_interface__["data"][0],
            int(bits.sum(dtype=np.uint64)))


_WALK_ATTR = "_cookbook_walk"


def prepare(W) -> Walk:
    """``W``'s :class:`Walk`: a ``Walk`` comes back as it is; a CSR or CSC matrix's walk is built on the first
    call and kept on the matrix object itself (as long as the matrix lives, and until its contents change), so
    repeated plain calls cost what prepared ones do. Any other matrix is converted and prepared each time.

    >>> import scipy.sparse as sp
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1], [1, 0]])))
    >>> prepare(W) is prepare(W), prepare(prepare(W)) is prepare(W)
    (True, True)
    """
    if isinstance(W, Walk):
        return W
    if sp.issparse(W) and W.format in ("csr", "csc") and W.dtype == float:
        walk = getattr(W, _WALK_ATTR, None)
        if walk is not None and walk.matrix is W and walk._fingerprint == _fingerprint(W):
            return walk
        walk = Walk(W)
        try:
            setattr(W, _WALK_ATTR, walk)
        except AttributeError:  # a matrix type without instance attributes: prepared each call
            pass
        return walk
    return Walk(W)


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


def personalized_pagerank(W, v0, *, restart: float = 0.5, tol: float = 1e-6, max_iter: int = 100) -> PPRResult:
    """Power iteration from ``v0`` (normalised to sum 1) until the L1 change is below ``tol``.

    ``W``: a :class:`Walk`, or an ``(n, n)`` column-stochastic matrix (see :func:`transition_matrix`; its walk
    is prepared once, :func:`prepare`). Returns a :class:`PPRResult`; ``converged`` is False when ``max_iter``
    ran out first. Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> import scipy.sparse as sp
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> r = personalized_pagerank(W, np.array([1.0, 0, 0]), max_iter=2)
    >>> r.converged, r.iterations, r.residuals
    (False, 2, [1.0, 0.5])
    >>> personalized_pagerank(W, np.array([1.0, 0, 0]), restart=0)
    Traceback (most recent call last):
    ValueError: restart λ must be in (0, 1], got 0
    """
    walk = prepare(W)
    lam, tol, max_iter = _check_iteration(restart, tol, max_iter)
    v0 = _check_v0(v0, walk.n)
    if v0.ndim != 1:
        raise ValueError("v0 must be a vector; use personalized_pagerank_batch for many")
    W, d = walk.matrix, walk.dangling
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
    ``residuals`` records the largest per iteration. ``scores`` is ``(n, q)``. ``W`` as in
    :func:`personalized_pagerank`. Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> import scipy.sparse as sp
    >>> W = transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]])))
    >>> r = personalized_pagerank_batch(W, np.eye(3)[:, :2])  # two queries: seeds 0 and 1
    >>> np.round(r.scores, 3).tolist()
    [[0.667, 0.333], [0.167, 0.583], [0.167, 0.083]]
    """
    walk = prepare(W)
    lam, tol, max_iter = _check_iteration(restart, tol, max_iter)
    V0 = _floats(V0, "V0")
    if V0.ndim != 2:
        raise ValueError(f"V0 must be 2-D (n, q), got shape {V0.shape}")
    V0 = _check_v0(V0, walk.n, "V0")
    W, d = walk.matrix, walk.dangling
    X, residuals = V0.copy(), []
    for it in range(1, max_iter + 1):
        X_new = (1 - lam) * (W @ X + X[d].sum(axis=0) * V0) + lam * V0
        residuals.append(float(np.abs(X_new - X).sum(axis=0).max()))
        X = X_new
        if residuals[-1] < tol:
            return PPRResult(X, it, residuals, True)
    return PPRResult(X, max_iter, residuals, False)


def _check_iteration(restart, tol, max_iter) -> tuple[float, float, int]:
    return (probability(restart, "restart λ", zero_ok=False), number(tol, "tol", low=0, low_open=True),
            integer(max_iter, "max_iter"))
