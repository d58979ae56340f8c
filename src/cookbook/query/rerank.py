"""Fusing ranked lists from several stores: the ``Reranker`` protocol, RRF, and PPR with RRF fallback.

>>> a = [Hit("p1", 0.9, "dense"), Hit("p2", 0.5, "dense")]
>>> b = [Hit("p2", 7.0, "bm25"), Hit("p3", 3.0, "bm25")]
>>> [h.id for h in RRFReranker().fuse([a, b], k=3)]
['p2', 'p1', 'p3']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .._validate import integer
from .hipporag import rank_passages, seed_vector

__all__ = ["Hit", "PPRReranker", "RRFReranker", "Reranker"]


@dataclass(frozen=True)
class Hit:
    """One retrieved item: ``id``, a store-specific ``score``, the ``source`` store, free ``meta`` (not
    compared). Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> Hit("p1", 0.9, "dense") == Hit("p1", 0.9, "dense", meta={"rank": 1})
    True
    """

    id: str
    score: float
    source: str = ""
    meta: dict = field(default_factory=dict, compare=False)


@runtime_checkable
class Reranker(Protocol):
    """What a reranker implements, and what students implement in notebook 06: fuse the ranked hit lists of
    several stores (dense, BM25, PPR, ...) for one query into one list. Taught in
    notebooks/06_personalized_pagerank.ipynb.

    >>> class FirstStore:
    ...     def fuse(self, per_store, *, k, query=None):
    ...         return list(per_store[0])[:k]
    >>> isinstance(FirstStore(), Reranker), isinstance(RRFReranker(), Reranker)
    (True, True)
    >>> [h.id for h in RRFReranker().fuse([[Hit("a", 0.9), Hit("b", 0.5)], [Hit("b", 3.0)]], k=2)]
    ['b', 'a']
    """

    def fuse(self, per_store: Sequence[Sequence[Hit]], *, k: int, query: str | None = None) -> list[Hit]:
        """Fuse per-store ranked lists (best first) into one list of at most ``k`` hits: fewer when fewer
        unique candidates exist, ``[]`` when every store is empty."""
        ...


def _check_stores(per_store) -> list[list[Hit]]:
    if isinstance(per_store, (str, bytes)) or not isinstance(per_store, Sequence):
        raise TypeError(f"per_store must be a sequence of hit lists, got {type(per_store).__name__}")
    stores = [list(s) for s in per_store]
    for s in stores:
        for h in s:
            if not isinstance(h, Hit):
                raise TypeError(f"per_store must hold Hit objects, got {type(h).__name__}")
    return stores


@dataclass
class RRFReranker:
    """Reciprocal-rank fusion: ``score(d) = Σ_stores 1 / (k_param + rank)``, ranks from 1.

    Duplicates within a store count at their best rank; the first-seen hit's metadata is kept; output is
    ordered by (−score, id) and cut to ``k`` (shorter when fewer candidates exist, ``[]`` for none). Sums use
    ``math.fsum`` so the result does not depend on the order of the stores. Taught in
    notebooks/06_personalized_pagerank.ipynb.

    >>> fused = RRFReranker(k_param=0).fuse([[Hit("a", 9.0), Hit("b", 8.0)], [Hit("b", 0.7)]], k=5)
    >>> [(h.id, h.score) for h in fused]  # b: 1/2 + 1/1, a: 1/1
    [('b', 1.5), ('a', 1.0)]
    """

    k_param: int = 60

    def __post_init__(self):
        integer(self.k_param, "k_param", at_least=0)

    def scores(self, per_store: Sequence[Sequence[Hit]]) -> tuple[dict[str, float], dict[str, Hit]]:
        """The fused RRF score of every id in ``per_store`` (lists of :class:`Hit`, best first), and the
        first hit seen for each id (whose ``meta`` the fused hit keeps).

        >>> scores, first = RRFReranker(k_param=0).scores([[Hit("a", 1.0), Hit("a", 0.5)], [Hit("a", 2.0)]])
        >>> scores  # a duplicate within a store counts once, at its best rank
        {'a': 2.0}
        """
        parts: dict[str, list[float]] = {}
        first: dict[str, Hit] = {}
        for store in _check_stores(per_store):
            seen = set()
            for rank, h in enumerate(store, 1):
                if h.id in seen:
                    continue
                seen.add(h.id)
                parts.setdefault(h.id, []).append(1.0 / (self.k_param + rank))
                first.setdefault(h.id, h)
        return {i: math.fsum(v) for i, v in parts.items()}, first

    def fuse(self, per_store, *, k: int, query: str | None = None) -> list[Hit]:
        """At most ``k`` hits (source ``"rrf"``, score the fused RRF score) ordered by (−score, id).

        >>> [h.id for h in RRFReranker().fuse([[Hit("x", 1.0)], [Hit("y", 1.0)]], k=1)]  # a tie: lower id
        ['x']
        """
        k = integer(k, "k")
        scores, first = self.scores(per_store)
        order = sorted(scores, key=lambda i: (-scores[i], i))[:k]
        return [Hit(i, scores[i], "rrf", first[i].meta) for i in order]


@dataclass
class PPRReranker:
    """Personalized PageRank over a :class:`cookbook.query.hipporag.PassageGraph`, seeded by the hits.

    Each hit that names a graph node contributes its RRF weight ``1 / (k_param + rank)`` to that node's
    personalization (entities divided by their passage count, as in :func:`cookbook.query.hipporag.seed_vector`).
    Passages are returned by PPR score, at most ``k`` (all passages when the graph has fewer). When no hit
    resolves to a node, the ``fallback``'s answer is returned and ``last_used_fallback`` is set. Taught in
    notebooks/06_personalized_pagerank.ipynb.

    >>> from cookbook.data.records import Mention
    >>> from cookbook.query.hipporag import passage_graph
    >>> ms = [Mention("p1", 0, 3, "A", "Ada"), Mention("p2", 0, 3, "A", "Ada"), Mention("p2", 4, 6, "B", "Bo"),
    ...       Mention("p3", 0, 2, "B", "Bo")]
    >>> pg = passage_graph({"p1": "Ada", "p2": "Ada Bo", "p3": "Bo"}, ms, ["A", "B"])
    >>> [h.id for h in PPRReranker(pg).fuse([[Hit("A", 1.0)]], k=2)]  # seeded at entity A; p2 also links B
    ['p2', 'p1']
    """

    graph: object
    restart: float = 0.5
    fallback: Reranker = field(default_factory=RRFReranker)
    k_param: int = 60
    last_used_fallback: bool = field(default=False, init=False)

    def fuse(self, per_store, *, k: int, query: str | None = None) -> list[Hit]:
        """At most ``k`` passages as hits (source ``"ppr"``, score the PPR mass), best first; the fallback's
        fused list when no hit names a node of the graph.

        >>> from cookbook.query.hipporag import passage_graph
        >>> pg = passage_graph({"p1": "Ada"}, [], ["A"])
        >>> r = PPRReranker(pg)
        >>> [h.source for h in r.fuse([[Hit("elsewhere", 1.0)]], k=1)], r.last_used_fallback
        (['rrf'], True)
        """
        k = integer(k, "k")
        rrf, first = RRFReranker(self.k_param).scores(per_store)
        ents = {i: s for i, s in rrf.items() if self.graph.has(i) and self.graph.node(i) >= self.graph.n_passages}
        pas = {i: s for i, s in rrf.items() if self.graph.has(i) and self.graph.node(i) < self.graph.n_passages}
        self.last_used_fallback = not ents and not pas
        if self.last_used_fallback:
            return self.fallback.fuse(per_store, k=k, query=query)
        # passage_weight=1: here passages and entities are both seeded by their fused rank
        v0 = seed_vector(self.graph, ents, pas, passage_weight=1.0)
        ranked = rank_passages(self.graph, v0, min(k, self.graph.n_passages), restart=self.restart)
        return [Hit(pid, s, "ppr", first[pid].meta if pid in first else {}) for pid, s in ranked]
