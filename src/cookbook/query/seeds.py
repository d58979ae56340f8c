"""Overlap-aware seed selection and bounded BFS: diverse seeds for graph expansion.

Vector search returns tightly clustered top-k seeds, so expanding each one's neighbourhood explores the
same region again. :func:`retrieve` oversamples the ANN candidates, picks seeds greedily by
``ann(c) − penalty · max_{s picked} Jaccard(N(c), N(s))``, then runs a bounded BFS from them;
:func:`two_step_retrieve` is the baseline (top-k ANN, then the same BFS).

Neighbourhoods are 1-hop, the node itself excluded, capped at ``max_neighbourhood`` (the lowest node
indices, for determinism). Jaccard between all candidates is one sparse product ``N @ N.T``.

>>> import numpy as np, scipy.sparse as sp
>>> N = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]]))  # 0 and 1 identical
>>> select_seeds([10, 11, 12], [0.9, 0.89, 0.5], N, 2, overlap_penalty=0.5).tolist()
[10, 12]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validate import integer, node_indices, number, square_csr
from ..arrays import csr_row_positions

__all__ = ["MAX_NEIGHBOURHOOD", "SCORE_SCALES", "BFSResult", "Retrieval", "bfs", "jaccard_matrix", "n_candidates",
           "neighbourhoods", "retrieve", "seed_overlap", "select_seeds", "two_step_retrieve"]

MAX_NEIGHBOURHOOD = 200
SCORE_SCALES = ("cosine", "neo4j")


def neighbourhoods(adjacency, nodes: Sequence[int], *, max_neighbourhood: int = MAX_NEIGHBOURHOOD) -> sp.csr_matrix:
    """Binary ``(len(nodes), n)`` CSR: row ``r`` marks the 1-hop neighbours of ``nodes[r]`` (itself
    excluded), at most ``max_neighbourhood`` of them (the lowest indices). Taught in
    notebooks/07_overlap_aware_seeds.ipynb.

    >>> A = sp.csr_matrix(np.array([[1, 1, 1], [1, 0, 0], [1, 0, 0]]))  # a self-loop on node 0
    >>> neighbourhoods(A, [0, 1]).toarray().tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]
    >>> neighbourhoods(A, [0], max_neighbourhood=1).toarray().tolist()
    [[0.0, 1.0, 0.0]]
    """
    A = square_csr(adjacency, "adjacency", dtype=None, csc_ok=False)
    cap = integer(max_neighbourhood, "max_neighbourhood")
    nodes = node_indices(nodes, A.shape[0], "nodes")
    if not A.has_canonical_format:  # rows must be sorted and duplicate-free for the cap to keep the lowest
        A = A.copy()
        A.sum_duplicates()
    # All rows gathered at once (a per-row loop costs ~0.5 ms per query in scipy overhead).
    idx, lens = csr_row_positions(A.indptr, nodes)
    cols, row = A.indices[idx], np.repeat(np.arange(len(nodes)), lens)
    keep = cols != nodes[row]
    cols, row = cols[keep], row[keep]
    start = np.r_[0, np.cumsum(np.bincount(row, minlength=len(nodes)))]
    keep = np.arange(len(row)) - start[row] < cap  # position within its row
    cols, row = cols[keep], row[keep]
    indptr = np.r_[0, np.cumsum(np.bincount(row, minlength=len(nodes)))]
    return sp.csr_matrix((np.ones(len(cols)), cols, indptr), shape=(len(nodes), A.shape[0]))


def jaccard_matrix(N: sp.spmatrix) -> np.ndarray:
    """Pairwise Jaccard of the rows of a binary matrix (dense ``(c, c)``); two empty rows score 0.

    >>> jaccard_matrix(sp.csr_matrix(np.array([[1, 1, 0], [0, 1, 1], [0, 0, 0]]))).round(3).tolist()
    [[1.0, 0.333, 0.0], [0.333, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    if np.ndim(N) != 2 and not sp.issparse(N):
        raise ValueError(f"N must be a 2-D (candidates × nodes) matrix, got {np.ndim(N)} dimension(s)")
    N = sp.csr_matrix(N)
    # Only the columns some row uses matter: a dense (rows × used columns) 0/1 block makes N @ N.T one small
    # BLAS product (float32 counts are exact far beyond any neighbourhood size).
    used, col = np.unique(N.indices, return_inverse=True)
    D = np.zeros((N.shape[0], len(used)), dtype=np.float32)
    D[np.repeat(np.arange(N.shape[0]), np.diff(N.indptr)), col] = 1.0  # stored entries are members
    inter = (D @ D.T).astype(float)
    size = D.sum(axis=1, dtype=float)
    union = size[:, None] + size[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def seed_overlap(adjacency, seed_nodes: Sequence[int], *, max_neighbourhood: int = MAX_NEIGHBOURHOOD) -> float:
    """Mean pairwise Jaccard of the seeds' 1-hop neighbourhoods (the quantity the selector lowers);
    fewer than two seeds score 0. Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> A = sp.csr_matrix(np.array([[0, 0, 1, 0], [0, 0, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]]))
    >>> seed_overlap(A, [0, 1]), seed_overlap(A, [0, 3]), seed_overlap(A, [0])  # 0 and 1 share node 2
    (1.0, 0.0, 0.0)
    """
    seed_nodes = node_indices(seed_nodes, np.shape(adjacency)[0], "seed_nodes")
    if len(seed_nodes) < 2:
        return 0.0
    J = jaccard_matrix(neighbourhoods(adjacency, seed_nodes, max_neighbourhood=max_neighbourhood))
    return float(np.mean(J[np.triu_indices(len(seed_nodes), 1)]))


def select_seeds(candidate_ids: Sequence, ann_scores: Sequence[float], neighbourhoods: sp.spmatrix, k: int, *,
                 overlap_penalty: float = 0.3, jaccard: np.ndarray | None = None) -> np.ndarray:
    """Greedy overlap-aware selection of ``k`` seeds among the candidates.

    ``neighbourhoods`` has one binary row per candidate (see :func:`neighbourhoods`). The first pick has
    the best ANN score; each next pick maximises ``ann(c) − overlap_penalty · max_s J(N(c), N(s))`` over
    the picked ``s``. Ties go to the higher ANN score, then the lower id. Returns the picked ids in
    pick order. ``jaccard``, when given, is ``jaccard_matrix(neighbourhoods)`` computed once and reused
    (a sweep over penalties).

    >>> N = sp.csr_matrix(np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]]))  # candidates 0 and 1 overlap fully
    >>> select_seeds(["a", "b", "c"], [0.9, 0.8, 0.6], N, 2, overlap_penalty=0.0).tolist()
    ['a', 'b']
    >>> select_seeds(["a", "b", "c"], [0.9, 0.8, 0.6], N, 2, overlap_penalty=0.3).tolist()
    ['a', 'c']
    """
    ids = np.asarray(candidate_ids)
    ann = np.asarray(ann_scores, dtype=float)
    k = integer(k, "k")
    if ids.ndim != 1 or len(ids) == 0:
        raise ValueError("empty candidates: nothing to select from")
    if ids.dtype == bool or (not isinstance(candidate_ids, np.ndarray)
                             and any(isinstance(c, (bool, np.bool_)) for c in candidate_ids)):
        raise TypeError("candidate_ids must be ids (node indices or names), got a bool: True is not node 1")
    if len(ann) != len(ids):
        raise ValueError(f"ann_scores has length {len(ann)}, candidate_ids has {len(ids)}")
    if neighbourhoods.shape[0] != len(ids):
        raise ValueError(f"neighbourhoods has {neighbourhoods.shape[0]} rows, expected {len(ids)} (one per candidate)")
    if len(set(ids.tolist())) != len(ids):
        raise ValueError("candidate_ids has duplicates")
    if not np.all(np.isfinite(ann)):
        raise ValueError("ann_scores contains NaN or inf")
    number(overlap_penalty, "overlap_penalty", low=0)
    if k > len(ids):
        raise ValueError(f"k={k} is larger than the {len(ids)} candidates")
    J = jaccard_matrix(neighbourhoods) if jaccard is None else np.asarray(jaccard, dtype=float)
    if J.shape != (len(ids), len(ids)):
        raise ValueError(f"jaccard has shape {J.shape}, expected {(len(ids), len(ids))} (candidates × candidates)")
    # Tie-break order: rank of (−ann, id); lexsort's last key is the primary one.
    rank = np.empty(len(ids), dtype=int)
    rank[np.lexsort((ids, -ann))] = np.arange(len(ids))
    max_overlap = np.zeros(len(ids))
    free = np.ones(len(ids), dtype=bool)
    picked = []
    for _ in range(k):
        score = np.where(free, ann - overlap_penalty * max_overlap, -np.inf)
        best = np.flatnonzero(score == score.max())
        i = best[np.argmin(rank[best])]
        picked.append(i)
        free[i] = False
        max_overlap = np.maximum(max_overlap, J[:, i])
    return ids[picked]


@dataclass
class BFSResult:
    """Nodes reached within ``depth`` hops, sorted by (hop, −score, node). A seed keeps its ANN score;
    another node gets the best score among the seeds that reach it first.

    >>> r = BFSResult(np.array([4, 2]), np.array([0, 1]), np.array([0.9, 0.9]))
    >>> len(r), r.nodes[r.hops == 1].tolist()
    (2, [2])
    """

    nodes: np.ndarray
    hops: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.nodes)


def _missing_reverse(A: sp.csr_matrix) -> np.ndarray:
    """Stored edges ``u → v`` whose reverse ``v → u`` is not stored, as sorted keys ``u·n + v``.

    O(nnz) (~30 ms on a 1.2M-edge graph, ~150× a depth-2 BFS), so the answer is cached on the matrix,
    keyed by its index arrays: a matrix rebuilt, pruned or converted gets new arrays and is checked
    again (one whose ``indices`` are overwritten in place is not)."""
    cached = getattr(A, "_cookbook_missing_reverse", None)
    if cached is not None and cached[0] is A.indptr and cached[1] is A.indices:
        return cached[2]
    P = sp.csr_matrix((np.ones(len(A.indices), dtype=bool), A.indices, A.indptr), shape=A.shape)
    D = (P > P.T).tocoo()  # the pattern, not the values: an explicit zero is an edge bfs walks
    missing = np.sort(D.row.astype(np.int64) * A.shape[0] + D.col)
    A._cookbook_missing_reverse = (A.indptr, A.indices, missing)
    return missing


def _not_symmetric(u: int, v: int) -> ValueError:
    return ValueError(f"adjacency is not symmetric: edge {u}→{v} has no reverse {v}→{u}; bfs treats the graph "
                      "as undirected, so symmetrise it first (A.maximum(A.T))")


def bfs(adjacency, seeds: Sequence[int], depth: int, seed_scores: Sequence[float] | None = None) -> BFSResult:
    """Frontier expansion on the CSR, ``depth`` hops from ``seeds`` (``depth=0`` returns the seeds).

    The adjacency must be symmetric (an undirected graph): the expansion reads rows only, so a directed
    matrix would reach different nodes from either end of an edge. A stored edge without its reverse raises
    ``ValueError`` naming it (the first one the search walks, else the first stored); symmetrise a directed
    graph first (``A.maximum(A.T)``). The check is O(nnz), so it runs once per matrix and is cached on it.

    Each pass gathers the frontier's rows at once and sorts only what it reached; the one O(n) cost per call
    is a zeroed "seen" mask, so a depth-2 search on a 169k-node graph takes about what igraph's
    ``neighborhood`` takes (benchmarks/engines.py measures both).

    >>> A = sp.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]]))  # path 0-1-2
    >>> r = bfs(A, [0], depth=2, seed_scores=[0.7])
    >>> r.nodes.tolist(), r.hops.tolist(), r.scores.tolist()
    ([0, 1, 2], [0, 1, 2], [0.7, 0.7, 0.7])
    >>> bfs(sp.csr_matrix(np.array([[0, 1], [0, 0]])), [0], depth=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: adjacency is not symmetric: edge 0→1 has no reverse 1→0; ...
    """
    A = square_csr(adjacency, "adjacency", dtype=None, csc_ok=False)
    n = A.shape[0]
    depth = integer(depth, "depth", at_least=0)
    seeds = node_indices(seeds, n, "seeds", unknown="seed node")
    if seeds.size == 0:
        raise ValueError("seeds is empty: nothing to expand from")
    if seed_scores is None:
        levels, arriving = np.array([-1.0]), None
    else:
        sc = np.asarray(seed_scores, dtype=float)
        if sc.shape != seeds.shape:
            raise ValueError(f"seed_scores has length {sc.size}, seeds has {len(seeds)}")
        if np.isnan(sc).any():
            raise ValueError("seed_scores contains NaN")
        # Every score is some seed's, so a node carries its rank among the distinct seed scores (0 = best),
        # and its best arriving score is its smallest arriving rank.
        levels, arriving = np.unique(-sc, return_inverse=True)
    missing = _missing_reverse(A) if depth > 0 else np.empty(0, dtype=np.int64)
    n_levels = len(levels)
    blocks, block_ranks = [], []  # per hop: the new nodes sorted by id, their ranks
    seen = np.zeros(n, dtype=bool)
    targets = seeds
    for h in range(depth + 1):  # hop 0 takes the seeds; each later pass touches only the frontier's edges
        fresh = ~seen[targets]
        targets = targets[fresh]
        if targets.size == 0:
            break
        # Sorted by (node, rank), a node's first entry carries its best arriving rank (a sort dedups faster
        # than np.unique or a scatter at these sizes, and leaves the hop's nodes in id order).
        key = np.sort(targets) if n_levels == 1 else np.sort(targets.astype(np.int64) * n_levels + arriving[fresh])
        node = key if n_levels == 1 else key // n_levels
        first = np.empty(len(key), dtype=bool)
        first[0] = True
        np.not_equal(node[1:], node[:-1], out=first[1:])
        frontier = node[first]
        blocks.append(frontier)
        if n_levels > 1:
            block_ranks.append(key[first] % n_levels)
        if h == depth:
            break
        seen[frontier] = True
        idx, lens = csr_row_positions(A.indptr, frontier)
        targets = A.indices[idx]
        if missing.size:
            walked = np.repeat(frontier.astype(np.int64), lens) * n + targets
            bad = walked[np.isin(walked, missing)]
            if bad.size:
                raise _not_symmetric(*divmod(int(bad.min()), n))
        if n_levels > 1:
            arriving = np.repeat(block_ranks[-1], lens)
    if missing.size:
        raise _not_symmetric(*divmod(int(missing[0]), n))
    nodes = np.concatenate(blocks).astype(np.intp, copy=False)
    hops = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
    if n_levels == 1:  # each hop's nodes are already in id order
        return BFSResult(nodes, hops, np.full(len(nodes), -levels[0]))
    # Within a hop, by (rank, node): one integer sort per hop (a three-key lexsort costs twice as much).
    rank, nodes = np.divmod(np.concatenate([np.sort(r * n + v) for r, v in zip(block_ranks, blocks)]), n)
    return BFSResult(nodes, hops, -levels[rank])


@dataclass
class Retrieval:
    """What a retrieval returned: the candidates considered, the seeds picked (with ANN scores), the BFS.

    >>> A = sp.csr_matrix(np.array([[0, 1], [1, 0]]))
    >>> r = Retrieval(np.array([0, 1]), np.array([0]), np.array([0.9]), bfs(A, [0], 1, [0.9]))
    >>> r.expansion.nodes.tolist()
    [0, 1]
    """

    candidates: np.ndarray
    seeds: np.ndarray
    seed_scores: np.ndarray
    expansion: BFSResult


def n_candidates(top_k: int, oversample: int, max_candidates: int) -> int:
    """``min(max_candidates, max(top_k, top_k · oversample))``. Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> n_candidates(5, 5, 100), n_candidates(5, 5, 20), n_candidates(5, 1, 100)
    (25, 20, 5)
    """
    top_k = integer(top_k, "top_k")
    oversample = integer(oversample, "oversample")
    max_candidates = integer(max_candidates, "max_candidates")
    return min(max_candidates, max(top_k, top_k * oversample))


def retrieve(index, adjacency, query_vec, *, top_k: int, depth: int, oversample: int = 5,
             max_candidates: int = 100, overlap_penalty: float = 0.3,
             max_neighbourhood: int = MAX_NEIGHBOURHOOD, score: str = "cosine") -> Retrieval:
    """Fused retrieval: oversampled ANN candidates → overlap-aware seeds → bounded BFS.

    ``index`` is a :class:`cookbook.embed.CosineIndex` whose ids are the graph's node indices.

    ``score`` is the scale of the ANN score the penalty is weighed against (and that the seeds and the BFS
    carry): ``"cosine"`` (the default) is the raw cosine in [-1, 1]; ``"neo4j"`` is Neo4j's vector-index
    cosine score ``(1 + cos) / 2`` in [0, 1], the scale NeoFuse tuned its penalty on. Score gaps are half
    as wide on the Neo4j scale, so a penalty of 0.3 there weighs like 0.15 on raw cosine: use
    ``score="neo4j"`` to reproduce NeoFuse's defaults. Taught in notebooks/07_overlap_aware_seeds.ipynb.

    Nodes 0 and 1 are the query's nearest and share their only neighbour 3; the fused seeds skip 1:

    >>> from cookbook.embed import CosineIndex
    >>> A = sp.csr_matrix(np.array([[0, 0, 0, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1],
    ...                             [1, 1, 0, 0, 0], [0, 0, 1, 0, 0]]))
    >>> index = CosineIndex([[1, 0], [1, 0.1], [1, 0.8], [0, 1], [-1, 1]])
    >>> r = retrieve(index, A, np.array([1.0, 0.0]), top_k=2, depth=1, oversample=2)
    >>> r.candidates.tolist(), r.seeds.tolist(), r.expansion.nodes.tolist()
    ([0, 1, 2, 3], [0, 2], [0, 2, 3, 4])
    >>> two_step_retrieve(index, A, np.array([1.0, 0.0]), top_k=2, depth=1).expansion.nodes.tolist()
    [0, 1, 3]
    """
    if score not in SCORE_SCALES:
        raise ValueError(f"score must be one of {SCORE_SCALES}, got {score!r}")
    top_k = integer(top_k, "top_k")
    oversample = integer(oversample, "oversample")
    max_candidates = integer(max_candidates, "max_candidates")
    c = min(n_candidates(top_k, oversample, max_candidates), len(index))
    if top_k > c:
        raise ValueError(f"top_k={top_k} is larger than the {c} candidates available")
    cand, ann = index.search(query_vec, c)
    if score == "neo4j":
        ann = (1.0 + ann) / 2.0
    N = neighbourhoods(adjacency, cand, max_neighbourhood=max_neighbourhood)
    picked = select_seeds(cand, ann, N, top_k, overlap_penalty=overlap_penalty)
    score_of = dict(zip(cand.tolist(), ann.tolist()))
    seed_scores = np.array([score_of[s] for s in picked.tolist()])
    return Retrieval(cand, picked, seed_scores, bfs(adjacency, picked, depth, seed_scores))


def two_step_retrieve(index, adjacency, query_vec, *, top_k: int, depth: int) -> Retrieval:
    """The baseline: the top-k ANN hits are the seeds, then the same bounded BFS (:func:`retrieve`
    compares the two). Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> from cookbook.embed import CosineIndex
    >>> A = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))
    >>> r = two_step_retrieve(CosineIndex([[1, 0], [0, 1], [1, 1]]), A, np.array([1.0, 0.2]), top_k=2, depth=1)
    >>> r.seeds.tolist(), r.expansion.nodes.tolist()
    ([0, 2], [0, 2, 1])
    """
    top_k = integer(top_k, "top_k")
    cand, ann = index.search(query_vec, top_k)
    return Retrieval(cand, cand, ann, bfs(adjacency, cand, depth, ann))
