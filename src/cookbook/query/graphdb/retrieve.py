"""The three retrievals in Cypher, each returning what :mod:`cookbook.query.seeds` returns in memory, the
statements they send, and :func:`retrieval_difference`, the comparison with the in-memory answer.

>>> print(one_query_cypher(0).splitlines()[2])
MATCH path = (seed)-[*0..0]-(n)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._validate import integer, number
from ..seeds import MAX_NEIGHBOURHOOD, BFSResult, Retrieval, n_candidates, select_seeds
from .connection import FALKORDB, Dialect, GraphDB
from .load import _loaded

__all__ = ["bfs_cypher", "candidates_cypher", "neofuse_retrieve", "one_query_cypher", "one_query_retrieve",
           "retrieval_difference", "two_call_retrieve", "vector_cypher", "vector_search"]


# ---------------------------------------------------------------- retrieval

def vector_cypher(dialect: Dialect = FALKORDB) -> str:
    """The top-k vector search: ``$fetch`` hits (k plus the tie slack), ordered by cosine then id, cut to ``$k``.

    >>> print(vector_cypher())
    CALL db.idx.vector.queryNodes('Passage', 'embedding', $fetch, vecf32($q)) YIELD node, score
    WITH node, 1.0 - score AS ann ORDER BY ann DESC, node.id ASC LIMIT $k
    RETURN node.id AS id, ann
    """
    return (f"{dialect.vector_call('$fetch', '$q')}\n"
            f"WITH node, {dialect.cosine_of_score} AS ann ORDER BY ann DESC, node.id ASC LIMIT $k\n"
            "RETURN node.id AS id, ann")


# The expansion shared by the BFS and the one-query statement: from each (seed, ann), every node within
# `depth` hops, its hop (the distance to its nearest seed) and the best ann among the seeds at that distance.
_EXPAND = """MATCH path = (seed)-[*0..{depth}]-(n)
WITH n, seed, ann, min(length(path)) AS dist
WITH n, min(dist) AS hop, collect([dist, ann]) AS arrivals
RETURN n.id AS node, hop,
       reduce(best = -2.0, a IN arrivals | CASE WHEN a[0] = hop AND a[1] > best THEN a[1] ELSE best END) AS score
ORDER BY hop ASC, score DESC, node ASC"""


def _depth(depth) -> int:
    return integer(depth, "depth", at_least=0)


def bfs_cypher(depth: int) -> str:
    """The BFS from ``$seeds`` (``[[node id, ann score], …]``) to ``depth`` hops, rows ``(node, hop, score)``
    sorted as :class:`cookbook.query.seeds.BFSResult` is. Cypher takes no parameter in a path's length bounds, so
    ``depth`` is written into the text.

    >>> print(bfs_cypher(1))  # doctest: +ELLIPSIS
    UNWIND $seeds AS s
    MATCH (seed:Passage {id: s[0]})
    WITH seed, s[1] AS ann
    MATCH path = (seed)-[*0..1]-(n)
    ...
    """
    return "UNWIND $seeds AS s\nMATCH (seed:Passage {id: s[0]})\nWITH seed, s[1] AS ann\n" + \
        _EXPAND.format(depth=_depth(depth))


def one_query_cypher(depth: int, dialect: Dialect = FALKORDB) -> str:
    """Vector top-k and the expansion to ``depth`` hops in one statement (the two-step baseline in one round trip).

    >>> print(one_query_cypher(2))  # doctest: +ELLIPSIS
    CALL db.idx.vector.queryNodes('Passage', 'embedding', $fetch, vecf32($q)) YIELD node, score
    WITH node AS seed, 1.0 - score AS ann ORDER BY ann DESC, seed.id ASC LIMIT $k
    MATCH path = (seed)-[*0..2]-(n)
    ...
    """
    return (f"{dialect.vector_call('$fetch', '$q')}\n"
            f"WITH node AS seed, {dialect.cosine_of_score} AS ann ORDER BY ann DESC, seed.id ASC LIMIT $k\n"
            + _EXPAND.format(depth=_depth(depth)))


def candidates_cypher(dialect: Dialect = FALKORDB) -> str:
    """NeoFuse's first round trip: ``$k`` candidates by cosine (ties by id) with their 1-hop neighbours.

    >>> print(candidates_cypher())  # doctest: +ELLIPSIS
    CALL db.idx.vector.queryNodes(...) YIELD node, score
    WITH node, 1.0 - score AS ann ORDER BY ann DESC, node.id ASC LIMIT $k
    OPTIONAL MATCH (node)--(x)
    RETURN node.id AS id, ann, collect(x.id) AS neighbours
    ORDER BY ann DESC, id ASC
    """
    return (f"{dialect.vector_call('$fetch', '$q')}\n"
            f"WITH node, {dialect.cosine_of_score} AS ann ORDER BY ann DESC, node.id ASC LIMIT $k\n"
            "OPTIONAL MATCH (node)--(x)\n"
            "RETURN node.id AS id, ann, collect(x.id) AS neighbours\nORDER BY ann DESC, id ASC")


def _query_vector(query_vec, dim: int) -> list[float]:
    q = np.asarray(query_vec, dtype=float).ravel()
    if q.shape[0] != dim:
        raise ValueError(f"query has dimension {q.shape[0]}, the loaded vectors have {dim}")
    if not np.all(np.isfinite(q)):
        raise ValueError("query contains NaN or inf")
    norm = np.linalg.norm(q)
    if norm == 0:
        raise ValueError("query is an all-zero vector: its cosine with every passage is undefined")
    return (q / norm).tolist()


def _search_params(db: GraphDB, query_vec, k: int) -> dict:
    info = _loaded(db)
    k = integer(k, "k")
    if k > info.n_passages:
        raise ValueError(f"k={k} is larger than the {info.n_passages} indexed passages")
    return {"q": _query_vector(query_vec, info.dim), "k": k, "fetch": min(info.n_passages, k + info.tie_slack)}


def vector_search(db: GraphDB, query_vec, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` passages ``(ids, cosines)`` from the database's vector index, ties by id (one round trip): what
    :meth:`cookbook.embed.CosineIndex.search` returns in memory, where the index search is exhaustive.

    >>> from cookbook.query.graphdb import load_passage_graph, open_graph
    >>> with open_graph("doctest-vs", private=True) as db:
    ...     _ = load_passage_graph(db, sp.csr_matrix((3, 3)), [[1, 0], [0, 1], [1, 0]])
    ...     ids, ann = vector_search(db, [1, 0.1], 2)
    ...     ids.tolist(), ann.round(4).tolist()  # 0 and 2 tie: the lower id first
    ([0, 2], [0.995, 0.995])
    """
    params = _search_params(db, query_vec, k)
    rows = db.query(vector_cypher(db.dialect), params)
    return np.array([r[0] for r in rows], dtype=int), np.array([r[1] for r in rows], dtype=float)


def _bfs_result(rows) -> BFSResult:
    return BFSResult(np.array([r[0] for r in rows], dtype=np.intp), np.array([r[1] for r in rows], dtype=int),
                     np.array([r[2] for r in rows], dtype=float))


def _bfs(db: GraphDB, seed_ids, seed_scores, depth: int) -> BFSResult:
    return _bfs_result(db.query(bfs_cypher(depth), {"seeds": [[int(s), float(a)] for s, a in
                                                              zip(seed_ids, seed_scores)]}))


def two_call_retrieve(db: GraphDB, query_vec, *, top_k: int, depth: int) -> Retrieval:
    """The usual recipe in two round trips: the vector top-k are the seeds, then a BFS query to ``depth``.
    Returns what :func:`cookbook.query.seeds.two_step_retrieve` returns in memory.

    >>> from cookbook.query.graphdb import load_passage_graph, open_graph
    >>> with open_graph("doctest-two", private=True) as db:
    ...     _ = load_passage_graph(db, sp.csr_matrix(np.array([[0, 1], [1, 0]])), [[1.0, 0.0]])
    ...     r = two_call_retrieve(db, [1, 0], top_k=1, depth=1)
    ...     r.seeds.tolist(), r.expansion.nodes.tolist(), r.expansion.hops.tolist()
    ([0], [0, 1], [0, 1])
    """
    depth = _depth(depth)
    ids, ann = vector_search(db, query_vec, top_k)
    return Retrieval(ids, ids, ann, _bfs(db, ids, ann, depth))


def one_query_retrieve(db: GraphDB, query_vec, *, top_k: int, depth: int) -> Retrieval:
    """The same seeds and expansion as :func:`two_call_retrieve` from one statement (:func:`one_query_cypher`):
    the seeds are the hop-0 rows, in order.

    >>> from cookbook.query.graphdb import load_passage_graph, open_graph
    >>> with open_graph("doctest-one", private=True) as db:
    ...     _ = load_passage_graph(db, sp.csr_matrix(np.array([[0, 1], [1, 0]])), [[1.0, 0.0]])
    ...     before = db.round_trips
    ...     r = one_query_retrieve(db, [1, 0], top_k=1, depth=1)
    ...     r.seeds.tolist(), r.expansion.nodes.tolist(), db.round_trips - before
    ([0], [0, 1], 1)
    """
    depth, params = _depth(depth), _search_params(db, query_vec, top_k)
    expansion = _bfs_result(db.query(one_query_cypher(depth, db.dialect), params))
    at0 = expansion.hops == 0
    return Retrieval(expansion.nodes[at0], expansion.nodes[at0], expansion.scores[at0], expansion)


def neofuse_retrieve(db: GraphDB, query_vec, *, top_k: int, depth: int, oversample: int = 5,
                     max_candidates: int = 100, overlap_penalty: float = 0.3,
                     max_neighbourhood: int = MAX_NEIGHBOURHOOD) -> Retrieval:
    """NeoFuse's pipeline: ``min(max_candidates, oversample · top_k)`` candidates and their 1-hop
    neighbourhoods in one query (:func:`candidates_cypher`), the overlap-aware greedy pick in Python
    (:func:`cookbook.query.seeds.select_seeds`, neighbourhoods cut to the ``max_neighbourhood`` lowest ids), then
    the BFS query: two round trips, what :func:`cookbook.query.seeds.retrieve` (``score="cosine"``) returns in memory.

    >>> from cookbook.query.graphdb import load_passage_graph, open_graph
    >>> A = sp.csr_matrix(np.array([[0, 0, 0, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1],
    ...                             [1, 1, 0, 0, 0], [0, 0, 1, 0, 0]]))
    >>> with open_graph("doctest-neofuse", private=True) as db:
    ...     _ = load_passage_graph(db, A, [[1, 0], [1, 0.1], [1, 0.8]])
    ...     r = neofuse_retrieve(db, [1.0, 0.0], top_k=2, depth=1, oversample=2)
    ...     r.candidates.tolist(), r.seeds.tolist(), r.expansion.nodes.tolist()
    ([0, 1, 2], [0, 2], [0, 2, 3, 4])
    """
    info = _loaded(db)
    top_k, depth = integer(top_k, "top_k"), _depth(depth)
    c = min(n_candidates(top_k, oversample, max_candidates), info.n_passages)
    if top_k > c:
        raise ValueError(f"top_k={top_k} is larger than the {c} candidates available")
    cap = integer(max_neighbourhood, "max_neighbourhood")
    rows = db.query(candidates_cypher(db.dialect), _search_params(db, query_vec, c))
    cand = np.array([r[0] for r in rows], dtype=int)
    ann = np.array([r[1] for r in rows], dtype=float)
    nbrs = [sorted(set(r[2]) - {r[0]})[:cap] for r in rows]  # as seeds.neighbourhoods: itself out, lowest ids
    cols = np.array([x for row in nbrs for x in row], dtype=int)
    N = sp.csr_matrix((np.ones(len(cols)), cols, np.r_[0, np.cumsum([len(x) for x in nbrs])]),
                      shape=(len(rows), info.n_nodes))
    picked = select_seeds(cand, ann, N, top_k, overlap_penalty=overlap_penalty)
    score_of = dict(zip(cand.tolist(), ann.tolist()))
    seed_scores = np.array([score_of[s] for s in picked.tolist()])
    return Retrieval(cand, picked, seed_scores, _bfs(db, picked, seed_scores, depth))


def retrieval_difference(got: Retrieval, want: Retrieval, *, tol: float = 1e-6) -> str:
    """The first way ``got`` differs from ``want`` ('' when they agree): the same candidates, seeds (in order),
    expansion nodes and hops (in order), and scores within ``tol`` (the database stores float32 vectors, so its
    cosines differ from float64 ones by ~1e-7).

    >>> a = Retrieval(np.array([1]), np.array([1]), np.array([0.5]), BFSResult(np.array([1]), np.array([0]),
    ...               np.array([0.5])))
    >>> retrieval_difference(a, a)
    ''
    >>> b = Retrieval(np.array([2]), np.array([2]), np.array([0.5]), a.expansion)
    >>> retrieval_difference(b, a)
    'candidates differ: [2] vs [1]'
    """
    tol = number(tol, "tol", low=0)
    for what, x, y in (("candidates", got.candidates, want.candidates), ("seeds", got.seeds, want.seeds),
                       ("expansion nodes", got.expansion.nodes, want.expansion.nodes),
                       ("expansion hops", got.expansion.hops, want.expansion.hops)):
        if np.asarray(x).tolist() != np.asarray(y).tolist():
            return f"{what} differ: {_short(x)} vs {_short(y)}"
    for what, x, y in (("seed scores", got.seed_scores, want.seed_scores),
                       ("expansion scores", got.expansion.scores, want.expansion.scores)):
        bad = np.flatnonzero(np.abs(np.asarray(x, dtype=float) - np.asarray(y, dtype=float)) > tol)
        if bad.size:
            return f"{what} differ at position {int(bad[0])}: {float(x[bad[0]]):.9f} vs {float(y[bad[0]]):.9f}"
    return ""


def _short(x) -> str:
    values = np.asarray(x).tolist()
    return str(values) if len(values) <= 12 else f"{str(values[:12])[:-1]}, … ({len(values)} in all)]"
