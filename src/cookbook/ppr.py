"""Personalized PageRank by power iteration on a prebuilt column-stochastic CSR matrix.

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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


def transition_matrix(adjacency) -> sp.csr_matrix:
    """Column-stochastic ``W`` from ``adjacency`` (``A[j, i]`` = weight of edge j → i; undirected graphs
    pass a symmetric matrix). Columns of dangling nodes are all zero; weights must be ≥ 0."""
    A = _square(adjacency, "adjacency")
    if A.nnz and (A.data.min() < 0 or not np.all(np.isfinite(A.data))):
        raise ValueError("adjacency weights must be finite and >= 0")
    out = np.asarray(A.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    W = (sp.diags(inv) @ A).T.tocsr()
    W.sort_indices()
    return W


def _square(M, name) -> sp.csr_matrix:
    if not sp.issparse(M):
        M = np.asarray(M)
        if M.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got {M.ndim} dimensions")
    # A float CSR/CSC is used as it is: re-wrapping validates it, O(nnz), on every query.
    if not (sp.issparse(M) and M.format in ("csr", "csc") and M.dtype == np.float64):
        M = sp.csr_matrix(M, dtype=float)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be square, got shape {M.shape}")
    if M.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 nodes)")
    return M


def _check_restart(restart: float) -> float:
    if not isinstance(restart, (int, float, np.floating)) or not 0 < restart <= 1:
        raise ValueError(f"restart λ must be in (0, 1], got {restart!r}")
    return float(restart)


def _check_v0(v0, n: int, name: str = "v0") -> np.ndarray:
    v = np.asarray(v0, dtype=float)
    if v.shape != (n,) and not (v.ndim == 2 and v.shape[0] == n):
        raise ValueError(f"{name} must have length {n} (one entry per node), got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or inf")
    if np.any(v < 0):
        raise ValueError(f"{name} has negative entries")
    sums = v.sum(axis=0)
    if np.any(sums <= 0):
        raise ValueError(f"{name} is all zeros: no seed to restart from")
    return v / sums


def _dangling(W: sp.spmatrix) -> np.ndarray:
    return np.asarray(W.sum(axis=0)).ravel() == 0


def _check_mask(dangling, n: int) -> np.ndarray:
    d = np.asarray(dangling)
    if d.dtype != bool or d.shape != (n,):
        raise ValueError(f"dangling must be a boolean mask of length {n}, got {d.dtype} {d.shape}")
    return d


@dataclass
class PPRResult:
    """``scores`` (length n, sums to 1), ``iterations`` used, ``residuals`` (L1 change per iteration)."""

    scores: np.ndarray
    iterations: int
    residuals: list[float]
    converged: bool


def personalized_pagerank(W, v0, *, restart: float = 0.5, tol: float = 1e-6, max_iter: int = 100,
                          dangling: np.ndarray | None = None) -> PPRResult:
    """Power iteration from ``v0`` (normalised to sum 1) until the L1 change is below ``tol``.

    ``W``: ``(n, n)`` column-stochastic (see :func:`transition_matrix`), CSR or CSC. ``dangling``: the
    boolean mask of zero columns, when known (saves a pass over ``W`` per query). Returns a
    :class:`PPRResult`; ``converged`` is False when ``max_iter`` ran out first.
    """
    W = _square(W, "W")
    lam = _check_restart(restart)
    if not tol > 0 or max_iter < 1:
        raise ValueError(f"need tol > 0 and max_iter >= 1, got tol={tol!r}, max_iter={max_iter!r}")
    v0 = _check_v0(v0, W.shape[0])
    if v0.ndim != 1:
        raise ValueError("v0 must be a vector; use personalized_pagerank_batch for many")
    d = _dangling(W) if dangling is None else _check_mask(dangling, W.shape[0])
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
    ``residuals`` records the largest per iteration. ``scores`` is ``(n, q)``."""
    W = _square(W, "W")
    lam = _check_restart(restart)
    V0 = np.asarray(V0, dtype=float)
    if V0.ndim != 2:
        raise ValueError(f"V0 must be 2-D (n, q), got shape {V0.shape}")
    V0 = _check_v0(V0, W.shape[0], "V0")
    d = _dangling(W)
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
    """Certified top-k: ``ids`` best first; every true score lies in ``[lower, lower + slack]``."""

    ids: np.ndarray
    lower: np.ndarray
    slack: float
    iterations: int
    certified: bool


def top_k_pagerank(W, v0, k: int, *, restart: float = 0.5, max_iter: int = 200, ordered: bool = True,
                   dangling: np.ndarray | None = None) -> TopK:
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
    """
    W = _square(W, "W")
    if W.format != "csc":
        W = W.tocsc()
    n = W.shape[0]
    lam = _check_restart(restart)
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if k >= n:
        raise ValueError(f"k={k} must be smaller than the number of nodes ({n})")
    v0 = _check_v0(v0, n)
    d = _dangling(W) if dangling is None else _check_mask(dangling, n)
    p = np.zeros(n)
    support = np.flatnonzero(v0)
    y_vals = v0[support]
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
        top = np.argpartition(-p, k)[: k + 1]
        top = top[np.lexsort((top, -p[top]))]
        gaps = p[top[:-1]] - p[top[1:]]
        if (gaps[-1] > remaining) and (not ordered or np.all(gaps > remaining)):
            return TopK(top[:k], p[top[:k]], remaining, t + 1, True)
        # one step of the walk: y ← M y = W y + (d·y) v0
        if y_dense is None and len(support) <= dense_from:
            starts, ends = W.indptr[support], W.indptr[support + 1]
            lens = ends - starts
            idx = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(lens.sum())
            rows = W.indices[idx]
            vals = W.data[idx] * np.repeat(y_vals, lens)
            dmass = y_vals[d[support]].sum()
            if dmass:
                rows = np.r_[rows, np.flatnonzero(v0)]
                vals = np.r_[vals, dmass * v0[v0 > 0]]
            support, inv = np.unique(rows, return_inverse=True)
            y_vals = np.bincount(inv, weights=vals, minlength=len(support))
        else:
            if y_dense is None:
                y_dense = np.zeros(n)
                y_dense[support] = y_vals
            y_dense = W @ y_dense + y_dense[d].sum() * v0
    top = np.argsort(-p, kind="stable")[:k]
    return TopK(top, p[top], remaining, max_iter, False)


# ---------------------------------------------------------------- passage–entity graph and seeds

@dataclass
class PassageGraph:
    """Passages (nodes ``0..n_passages-1``) and entities (the rest) in one undirected graph.

    ``adjacency`` ``(n, n)`` symmetric CSR: passage–entity mention edges (weight 1 per pair) and,
    optionally, entity–entity co-occurrence edges. ``W`` is its transition matrix (CSC),
    built once. ``passage_count[e]`` = passages that mention entity ``e`` (for node specificity).
    """

    passage_ids: list[str]
    entity_ids: list[str]
    adjacency: sp.csr_matrix
    W: sp.csc_matrix = field(repr=False)
    dangling: np.ndarray = field(repr=False)
    passage_count: np.ndarray = field(repr=False)

    @property
    def n_passages(self) -> int:
        return len(self.passage_ids)

    def node(self, node_id: str) -> int:
        """Graph index of a passage or entity id."""
        if not hasattr(self, "_index"):
            self._index = {x: i for i, x in enumerate([*self.passage_ids, *self.entity_ids])}
        if node_id not in self._index:
            raise KeyError(f"unknown node id {node_id!r}")
        return self._index[node_id]

    def has(self, node_id: str) -> bool:
        try:
            self.node(node_id)
            return True
        except KeyError:
            return False


def passage_graph(docs, mentions: Iterable, entity_ids: Sequence[str], *,
                  entity_edges: sp.spmatrix | None = None, entity_edge_weight: float = 1.0) -> PassageGraph:
    """Build a :class:`PassageGraph` from documents (objects with ``.id`` or ``(id, text)`` pairs),
    mentions (``.doc_id``, ``.entity_id``) and optional entity–entity weights (``(E, E)``, e.g. a
    co-occurrence graph's adjacency), scaled by ``entity_edge_weight``."""
    from .extract import doc_pairs
    from .graph import incidence

    pairs = doc_pairs(docs)
    if len(entity_ids) == 0:
        raise ValueError("entity_ids is empty: no entities to link passages through")
    X = incidence(list(mentions), pairs, entity_ids)  # binary passages × entities
    P, E = X.shape
    A = sp.bmat([[None, X], [X.T, None]], format="csr")
    if entity_edges is not None:
        Ee = sp.csr_matrix(entity_edges, dtype=float)
        if Ee.shape != (E, E):
            raise ValueError(f"entity_edges must be ({E}, {E}), got {Ee.shape}")
        A = A + sp.bmat([[sp.csr_matrix((P, P)), None], [None, entity_edge_weight * Ee]], format="csr")
    A = sp.csr_matrix(A)
    W = transition_matrix(A).tocsc()
    return PassageGraph([p[0] for p in pairs], list(entity_ids), A, W, _dangling(W),
                        np.asarray(X.sum(axis=0)).ravel())


def seed_vector(pg: PassageGraph, entity_scores: dict[str, float] | None = None,
                passage_scores: dict[str, float] | None = None, *, passage_weight: float = 0.05) -> np.ndarray:
    """HippoRAG 2-style personalization over ``pg``'s nodes.

    Entities found in the question get ``score / passage_count`` (node specificity: rare entities
    matter more); dense passage hits get ``score · passage_weight``. Unknown ids raise ``KeyError``.
    Returns an unnormalised vector (all zeros when nothing resolved).
    """
    v = np.zeros(pg.adjacency.shape[0])
    for eid, s in (entity_scores or {}).items():
        i = pg.node(eid)
        if i < pg.n_passages:
            raise ValueError(f"{eid!r} is a passage, not an entity")
        v[i] += s / max(pg.passage_count[i - pg.n_passages], 1)
    for pid, s in (passage_scores or {}).items():
        i = pg.node(pid)
        if i >= pg.n_passages:
            raise ValueError(f"{pid!r} is an entity, not a passage")
        v[i] += s * passage_weight
    if np.any(v < 0) or not np.all(np.isfinite(v)):
        raise ValueError("seed scores must be finite and >= 0")
    return v


def rank_passages(pg: PassageGraph, v0: np.ndarray, k: int, *, restart: float = 0.5,
                  tol: float = 1e-8) -> list[tuple[str, float]]:
    """Top-``k`` passages by PPR score from ``v0``: ``[(passage_id, score), ...]``, ties by id."""
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if k > pg.n_passages:
        raise ValueError(f"k={k} is larger than the {pg.n_passages} passages")
    s = personalized_pagerank(pg.W, v0, restart=restart, tol=tol, max_iter=1000,
                              dangling=pg.dangling).scores[: pg.n_passages]
    order = sorted(range(pg.n_passages), key=lambda i: (-round(s[i], 15), pg.passage_ids[i]))[:k]
    return [(pg.passage_ids[i], float(s[i])) for i in order]


@dataclass
class FactIndex:
    """Sentence-level "triples": every sentence that names two or more entities, with those entities,
    searchable by BM25 (a stand-in for HippoRAG's OpenIE triples and their embeddings)."""

    texts: list[str]
    entities: list[tuple[str, ...]]
    bm25: object = field(repr=False)


def fact_index(docs, mentions: Iterable) -> FactIndex:
    """Collect sentences naming ≥ 2 distinct entities from documents with ``.sentences`` spans."""
    from .embed import BM25

    by_doc: dict[str, list] = {}
    for m in mentions:
        by_doc.setdefault(m.doc_id, []).append(m)
    texts, ents = [], []
    for d in docs:
        for s, e in d.sentences:
            inside = tuple(sorted({m.entity_id for m in by_doc.get(d.id, []) if s <= m.start < e}))
            if len(inside) >= 2:
                texts.append(d.text[s:e])
                ents.append(inside)
    if not texts:
        raise ValueError("no sentence names two entities: nothing to index as facts")
    return FactIndex(texts, ents, BM25(texts))


def structure_aware_seeds(pg: PassageGraph, question: str, question_entities: Iterable[str], facts: FactIndex,
                          dense_hits: dict[str, float] | None = None, *, n_facts: int = 2,
                          passage_weight: float = 0.05) -> np.ndarray:
    """HippoRAG 2 seeding: match the question to facts, seed the facts' entities, add dense passages.

    Facts are filtered to those naming a question entity (recognition memory), ranked by BM25 against
    the question; the top ``n_facts`` give each of their entities a weight equal to the best score of a
    fact naming it (normalised to 1), and question entities weigh at least 1. Entities are divided by
    their passage counts (specificity) and dense passage hits scaled by ``passage_weight``, in
    :func:`seed_vector`. Unknown question entities raise ``KeyError``.
    """
    q_ents = set(question_entities)
    for e in q_ents:
        pg.node(e)
    weights = dict.fromkeys(q_ents, 0.0)
    if q_ents and n_facts > 0:
        sc = facts.bm25.scores(question)
        ok = np.array([bool(q_ents.intersection(f)) for f in facts.entities])
        sc = np.where(ok, sc, -np.inf)
        best = sc.max()
        for i in np.lexsort((np.arange(len(sc)), -sc))[:n_facts]:
            if np.isfinite(sc[i]) and sc[i] > 0:
                for e in facts.entities[i]:
                    if pg.has(e):
                        weights[e] = max(weights.get(e, 0.0), sc[i] / best)
    weights = {e: (w if e not in q_ents else max(w, 1.0)) for e, w in weights.items()}
    return seed_vector(pg, weights, dense_hits, passage_weight=passage_weight)


def retrieve_passages(pg: PassageGraph, facts: FactIndex, gazetteer, question: str, k: int, *,
                      dense_hits: dict[str, float] | None = None, restart: float = 0.5) -> list[str]:
    """HippoRAG 2 retrieval end to end: the question's entities (gazetteer match) and ``dense_hits``
    (passage id → score, best first) seed :func:`structure_aware_seeds`; passages are ranked by PPR.
    When nothing seeds the walk, the dense hits' own order is returned (cut to ``k``)."""
    from .extract import gazetteer_mentions

    entities = {m.entity_id for m in gazetteer_mentions({"question": question}, gazetteer)}
    v = structure_aware_seeds(pg, question, entities, facts, dense_hits)
    if v.sum() == 0:
        return list(dense_hits or {})[:k]
    return [pid for pid, _ in rank_passages(pg, v, k, restart=restart)]
