"""HippoRAG 2-style retrieval: a passage–entity graph, a fact index, structure-aware seeds, PPR ranking.

:class:`HippoRetriever` is built once per corpus (graph, facts, gazetteer, dense index) and answers
``retrieve(question, k)``; the functions below are its steps, for notebooks that show them one by one.
The walk itself is :func:`cookbook.linalg.ppr.personalized_pagerank`.

>>> from cookbook import data
>>> w = data.load_world("ci")
>>> hr = HippoRetriever.from_world(w)
>>> len(hr.retrieve(w.questions[0].text, 5, dense_hits=hr.dense_hits(w.questions[0].text)))
5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._validate import integer, number, probability
from ..arrays import top_k
from ..data.gazetteer import CompiledGazetteer, compile_gazetteer, gazetteer_mentions
from ..data.records import doc_pairs
from ..embed import BM25, DEFAULT_DENSE, CosineIndex, dense_embedder
from ..index.graph import doc_sentences, incidence
from ..linalg.ppr import Walk, personalized_pagerank
from ..linalg.top_k import top_k_pagerank

__all__ = ["FactIndex", "HippoRetriever", "PassageGraph", "fact_index", "passage_graph", "rank_passages",
           "seed_vector", "structure_aware_seeds", "top_passages"]


@dataclass
class PassageGraph:
    """Passages (nodes ``0..n_passages-1``) and entities (the rest) in one undirected graph.

    ``adjacency`` ``(n, n)`` symmetric CSR: passage–entity mention edges (weight 1 per pair) and,
    optionally, entity–entity co-occurrence edges. ``W`` is its random walk (a
    :class:`~cookbook.linalg.ppr.Walk`: the transition matrix, checked and prepared once).
    ``passage_count[e]`` = passages that mention entity ``e`` (for node specificity).
    Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> from cookbook.data.records import Mention
    >>> ms = [Mention("p1", 0, 3, "ada", "Ada"), Mention("p1", 8, 10, "bo", "Bo"), Mention("p2", 0, 2, "bo", "Bo")]
    >>> pg = passage_graph([("p1", "Ada met Bo."), ("p2", "Bo left.")], ms, ["ada", "bo"])
    >>> pg.passage_ids + pg.entity_ids, pg.passage_count.tolist()
    (['p1', 'p2', 'ada', 'bo'], [1.0, 2.0])
    """

    passage_ids: list[str]
    entity_ids: list[str]
    adjacency: sp.csr_matrix
    W: Walk = field(repr=False)
    passage_count: np.ndarray = field(repr=False)

    @property
    def n_passages(self) -> int:
        """How many passages: nodes ``0..n_passages-1`` are passages, the rest entities.

        >>> from cookbook.data.records import Mention
        >>> passage_graph([("p1", "Ada."), ("p2", "")], [Mention("p1", 0, 3, "ada", "Ada")], ["ada"]).n_passages
        2
        """
        return len(self.passage_ids)

    @property
    def is_passage(self) -> np.ndarray:
        """Boolean mask over nodes: True for passages.

        >>> from cookbook.data.records import Mention
        >>> passage_graph([("p1", "Ada.")], [Mention("p1", 0, 3, "ada", "Ada")], ["ada"]).is_passage.tolist()
        [True, False]
        """
        if not hasattr(self, "_is_passage"):
            self._is_passage = np.arange(self.adjacency.shape[0]) < self.n_passages
        return self._is_passage

    def node(self, node_id: str) -> int:
        """Graph index of a passage or entity id (``KeyError`` for an unknown one).

        >>> from cookbook.data.records import Mention
        >>> pg = passage_graph([("p1", "Ada.")], [Mention("p1", 0, 3, "ada", "Ada")], ["ada"])
        >>> pg.node("p1"), pg.node("ada")
        (0, 1)
        """
        if not hasattr(self, "_index"):
            self._index = {x: i for i, x in enumerate([*self.passage_ids, *self.entity_ids])}
        if node_id not in self._index:
            raise KeyError(f"unknown node id {node_id!r}")
        return self._index[node_id]

    def has(self, node_id: str) -> bool:
        """Whether ``node_id`` is a passage or entity of the graph.

        >>> from cookbook.data.records import Mention
        >>> pg = passage_graph([("p1", "Ada.")], [Mention("p1", 0, 3, "ada", "Ada")], ["ada"])
        >>> pg.has("ada"), pg.has("bo")
        (True, False)
        """
        try:
            self.node(node_id)
            return True
        except KeyError:
            return False


def passage_graph(docs, mentions: Iterable, entity_ids: Sequence[str], *,
                  entity_edges: sp.spmatrix | None = None, entity_edge_weight: float = 1.0) -> PassageGraph:
    """Build a :class:`PassageGraph` from documents (objects with ``.id`` or ``(id, text)`` pairs),
    mentions (``.doc_id``, ``.entity_id``) and optional entity–entity weights (``(E, E)``, e.g. a
    co-occurrence graph's adjacency), scaled by ``entity_edge_weight``.

    >>> from cookbook.data.records import Mention
    >>> ms = [Mention("p1", 0, 3, "ada", "Ada"), Mention("p2", 0, 2, "bo", "Bo")]
    >>> pg = passage_graph([("p1", "Ada."), ("p2", "Bo.")], ms, ["ada", "bo"], entity_edges=[[0, 1], [1, 0]])
    >>> pg.adjacency.toarray().tolist()  # p1, p2, ada, bo: mention edges plus the ada-bo edge
    [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]]
    """
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
    return PassageGraph([p[0] for p in pairs], list(entity_ids), A, Walk.from_adjacency(A),
                        np.asarray(X.sum(axis=0)).ravel())


def seed_vector(pg: PassageGraph, entity_scores: dict[str, float] | None = None,
                passage_scores: dict[str, float] | None = None, *, passage_weight: float = 0.05) -> np.ndarray:
    """HippoRAG 2-style personalization over ``pg``'s nodes.

    Entities found in the question get ``score / passage_count`` (node specificity: rare entities
    matter more); dense passage hits get ``score · passage_weight``. Unknown ids raise ``KeyError``.
    Returns an unnormalised vector (all zeros when nothing resolved). Taught in
    notebooks/06_personalized_pagerank.ipynb.

    >>> from cookbook.data.records import Mention
    >>> ms = [Mention("p1", 0, 3, "ada", "Ada"), Mention("p1", 8, 10, "bo", "Bo"), Mention("p2", 0, 2, "bo", "Bo")]
    >>> pg = passage_graph([("p1", "Ada met Bo."), ("p2", "Bo left.")], ms, ["ada", "bo"])
    >>> seed_vector(pg, {"bo": 1.0}, {"p2": 1.0}).tolist()  # bo is in two passages: half weight
    [0.0, 0.05, 0.0, 0.5]
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


def _check_k(pg: PassageGraph, k) -> int:
    k = integer(k, "k")
    if k > pg.n_passages:
        raise ValueError(f"k={k} is larger than the {pg.n_passages} passages")
    return k


def rank_passages(pg: PassageGraph, v0: np.ndarray, k: int, *, restart: float = 0.5,
                  tol: float = 1e-8) -> list[tuple[str, float]]:
    """Top-``k`` passages by PPR score from ``v0`` (solved to L1 change ``tol``): ``[(passage_id,
    score), ...]``, scores rounded to 15 decimals for ranking, ties by id.

    >>> from cookbook.data.records import Mention
    >>> ms = [Mention("p1", 0, 3, "ada", "Ada"), Mention("p1", 8, 10, "bo", "Bo"), Mention("p2", 0, 2, "bo", "Bo")]
    >>> pg = passage_graph([("p1", "Ada met Bo."), ("p2", "Bo left.")], ms, ["ada", "bo"])
    >>> [(pid, round(s, 4)) for pid, s in rank_passages(pg, seed_vector(pg, {"ada": 1.0}), 2)]
    [('p1', 0.3111), ('p2', 0.0222)]
    """
    k = _check_k(pg, k)
    s = personalized_pagerank(pg.W, v0, restart=restart, tol=tol, max_iter=1000).scores[: pg.n_passages]
    # Only passages that can round to at least the k-th score compete: sort those few, not every passage.
    kth = np.partition(s, len(s) - k)[len(s) - k]
    cand = np.flatnonzero(s >= kth - 1e-14)
    order = sorted(cand.tolist(), key=lambda i: (-round(s[i], 15), pg.passage_ids[i]))[:k]
    return [(pg.passage_ids[i], float(s[i])) for i in order]


def top_passages(pg: PassageGraph, v0: np.ndarray, k: int, *, restart: float = 0.5,
                 tol: float = 1e-8) -> list[str]:
    """The passage ids of :func:`rank_passages` (same arguments), usually in a fraction of its time.

    The PPR series is summed only until its top-``k`` passages and their order are certain
    (:func:`cookbook.linalg.top_k.top_k_pagerank`), with a margin of the exact solve's own error bound
    (``tol·(1-λ)/λ``) so that solve, too, orders them the same way; the first terms touch only the seeds'
    neighbourhoods. Near-ties that cannot be separated before the remaining mass falls below that margin
    fall back to :func:`rank_passages`, so the answer is the same id list either way.

    >>> from cookbook.data.records import Mention
    >>> ms = [Mention("p1", 0, 2, "bo", "Bo"), Mention("p2", 0, 2, "bo", "Bo"), Mention("p2", 7, 9, "cy", "Cy")]
    >>> pg = passage_graph([("p1", "Bo."), ("p2", "Bo met Cy.")], ms, ["bo", "cy"])
    >>> top_passages(pg, seed_vector(pg, {"cy": 1.0}), 1)
    ['p2']
    """
    k = _check_k(pg, k)
    restart = probability(restart, "restart λ", zero_ok=False)
    tol = number(tol, "tol", low=0, low_open=True)
    if k < pg.n_passages:
        margin = tol * (1 - restart) / restart + 1e-14  # + rounding to 15 decimals
        max_iter = int(np.ceil(np.log(margin) / np.log(1 - restart))) if restart < 1 else 1
        r = top_k_pagerank(pg.W, v0, k, restart=restart, max_iter=max_iter, among=pg.is_passage, margin=margin)
        if r.certified:
            return [pg.passage_ids[i] for i in r.ids]
    return [pid for pid, _ in rank_passages(pg, v0, k, restart=restart, tol=tol)]


@dataclass
class FactIndex:
    """Sentence-level "triples": every sentence that names two or more entities, with those entities,
    searchable by BM25 (a stand-in for HippoRAG's OpenIE triples and their embeddings). Taught in
    notebooks/06_personalized_pagerank.ipynb (as ``hippo.facts``).

    >>> texts = ["Ada met Bo.", "Bo met Cy."]
    >>> fi = FactIndex(texts, [("ada", "bo"), ("bo", "cy")], BM25(texts))
    >>> fi.rows_of["bo"].tolist(), fi.rows_of["cy"].tolist()
    ([0, 1], [1])
    """

    texts: list[str]
    entities: list[tuple[str, ...]]
    bm25: object = field(repr=False)
    rows_of: dict[str, np.ndarray] = field(init=False, repr=False)  # entity id → rows of facts naming it

    def __post_init__(self):
        if len(self.texts) != len(self.entities):
            raise ValueError(f"FactIndex has {len(self.texts)} texts but {len(self.entities)} entity tuples")
        rows: dict[str, list[int]] = {}
        for i, ents in enumerate(self.entities):
            for e in ents:
                rows.setdefault(e, []).append(i)
        self.rows_of = {e: np.array(r) for e, r in rows.items()}


def fact_index(docs, mentions: Iterable) -> FactIndex:
    """Collect sentences naming ≥ 2 distinct entities: the documents' own ``.sentences`` spans, or for documents
    without them (a mapping id → text) spans split from the text (:func:`cookbook.index.graph.doc_sentences`).

    >>> from cookbook.data.records import Document, Mention
    >>> doc = Document("p1", "Ada met Bo. Bo left.", ((0, 11), (12, 20)), 0)
    >>> ms = [Mention("p1", 0, 3, "ada", "Ada"), Mention("p1", 8, 10, "bo", "Bo"), Mention("p1", 12, 14, "bo", "Bo")]
    >>> fi = fact_index([doc], ms)
    >>> fi.texts, fi.entities
    (['Ada met Bo.'], [('ada', 'bo')])
    """
    by_doc: dict[str, list] = {}
    for m in mentions:
        by_doc.setdefault(m.doc_id, []).append(m)
    texts, ents = [], []
    for doc_id, text, spans in doc_sentences(docs):
        for s, e in spans:
            inside = tuple(sorted({m.entity_id for m in by_doc.get(doc_id, []) if s <= m.start < e}))
            if len(inside) >= 2:
                texts.append(text[s:e])
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
    :func:`seed_vector`. Unknown question entities raise ``KeyError``. Taught in
    notebooks/06_personalized_pagerank.ipynb.

    The fact "Ada met Bo." names the question's entity, so Bo is seeded too (halved: two passages name Bo):

    >>> from cookbook.data.records import Document, Mention
    >>> ms = [Mention("p1", 0, 3, "ada", "Ada"), Mention("p1", 8, 10, "bo", "Bo"), Mention("p2", 0, 2, "bo", "Bo")]
    >>> pg = passage_graph([("p1", "Ada met Bo."), ("p2", "Bo left.")], ms, ["ada", "bo"])
    >>> facts = fact_index([Document("p1", "Ada met Bo.", ((0, 11),), 0)], ms)
    >>> structure_aware_seeds(pg, "Who met Ada?", ["ada"], facts).tolist()  # p1, p2, ada, bo
    [0.0, 0.0, 1.0, 0.5]
    """
    q_ents = set(question_entities)
    for e in q_ents:
        pg.node(e)
    weights = dict.fromkeys(q_ents, 0.0)
    # only facts naming a question entity compete (ascending rows keep top_k's ties by lower row)
    rows = np.unique(np.concatenate([facts.rows_of[e] for e in q_ents if e in facts.rows_of] or [[]])).astype(int)
    if len(rows) and n_facts > 0:
        sc = facts.bm25.scores(question)[rows]
        best = sc.max()
        for j in top_k(sc, n_facts):
            if sc[j] > 0:
                for e in facts.entities[rows[j]]:
                    if pg.has(e):
                        weights[e] = max(weights.get(e, 0.0), sc[j] / best)
    weights = {e: (w if e not in q_ents else max(w, 1.0)) for e, w in weights.items()}
    return seed_vector(pg, weights, dense_hits, passage_weight=passage_weight)


@dataclass
class HippoRetriever:
    """One corpus ready for HippoRAG 2 retrieval: its passage–entity ``graph``, ``facts``, the
    ``gazetteer`` that finds a question's entities, and a dense ``index`` of the passages (``embedder``
    → cosine; index ids are passage rows, which are also the passages' graph nodes). ``matcher`` matches
    questions, case-insensitively unless ``case_sensitive`` (a compiled gazetteer keeps its own). Taught in
    notebooks/06_personalized_pagerank.ipynb and notebooks/07_overlap_aware_seeds.ipynb.

    >>> from cookbook.data.records import Document
    >>> docs = [Document("p1", "Ada met Bo.", ((0, 11),), 0), Document("p2", "Bo met Cy.", ((0, 10),), 0),
    ...         Document("p3", "Cy sat.", ((0, 7),), 0)]
    >>> gaz = {"Ada": ["ada"], "Bo": ["bo"], "Cy": ["cy"]}
    >>> hr = HippoRetriever.build(docs, gazetteer_mentions(docs, gaz), ["ada", "bo", "cy"], gaz)
    >>> hr.graph.passage_ids, hr.facts.texts
    (['p1', 'p2', 'p3'], ['Ada met Bo.', 'Bo met Cy.'])
    """

    graph: PassageGraph
    facts: FactIndex
    gazetteer: object
    embedder: object = field(repr=False)  # fitted, with .transform(texts) -> (n, dim) rows
    index: CosineIndex = field(repr=False)
    case_sensitive: bool = False
    matcher: CompiledGazetteer = field(init=False, repr=False)  # the gazetteer compiled once, not per question

    def __post_init__(self):
        self.matcher = compile_gazetteer(self.gazetteer, case_sensitive=self.case_sensitive)

    @classmethod
    def build(cls, docs, mentions: Iterable, entity_ids: Sequence[str], gazetteer, *, dense: str = DEFAULT_DENSE,
              dim: int | None = None, case_sensitive: bool = False) -> HippoRetriever:
        """Graph, facts and a dense index over ``docs`` (objects with ``.id``, ``.text`` and maybe ``.sentences``,
        or a mapping id → text), questions matched as ``case_sensitive`` says. ``dense`` names the embedder
        (:func:`cookbook.embed.dense_embedder`): ``"wordllama"``, pretrained, or ``"lsa"``, fitted on ``docs``
        (the default is :data:`cookbook.embed.DEFAULT_DENSE`); ``dim`` its dimensions (None: its default).

        >>> from cookbook.data.records import Document
        >>> docs = [Document("p1", "Ada met Bo.", ((0, 11),), 0), Document("p2", "Cy sat.", ((0, 7),), 0)]
        >>> gaz = {"Ada": ["ada"], "Bo": ["bo"], "Cy": ["cy"]}
        >>> hr = HippoRetriever.build(docs, gazetteer_mentions(docs, gaz), ["ada", "bo", "cy"], gaz)
        >>> hr.graph.n_passages, len(hr.facts.texts), len(hr.index)
        (2, 1, 2)
        """
        docs, mentions = docs if isinstance(docs, Mapping) else list(docs), list(mentions)
        graph, facts = passage_graph(docs, mentions, entity_ids), fact_index(docs, mentions)
        embedder = dense_embedder(dense, dim)
        vectors = embedder.fit_transform([text for _, text in doc_pairs(docs)])
        return cls(graph, facts, gazetteer, embedder, CosineIndex(vectors), case_sensitive)

    @classmethod
    def from_world(cls, world, *, dense: str = DEFAULT_DENSE, dim: int | None = None,
                   case_sensitive: bool = False) -> HippoRetriever:
        """:meth:`build` over a generated world's (or a corpus's) documents, gazetteer mentions (matched as
        questions are, ``case_sensitive``) and entities.

        >>> from cookbook.data.world import make_world
        >>> hr = HippoRetriever.from_world(make_world(seed=0, scale="tiny"))
        >>> hr.graph.n_passages, hr.index.vectors.shape, type(hr.embedder).__name__
        (85, (85, 256), 'WordLlamaEmbedder')
        >>> HippoRetriever.from_world(make_world(seed=0, scale="tiny"), dense="lsa").index.vectors.shape
        (85, 64)
        """
        gaz = world.gazetteer()
        mentions = gazetteer_mentions(world.documents, gaz, case_sensitive=case_sensitive)
        return cls.build(world.documents, mentions, [e.id for e in world.entities], gaz, dense=dense, dim=dim,
                         case_sensitive=case_sensitive)

    def dense_hits(self, query, k: int = 10) -> dict[str, float]:
        """The ``k`` (at most all) passages nearest to ``query`` (a question, or its embedding), best first, as
        ``{passage id: cosine clipped at 0}``: the dense seeds of :meth:`retrieve`.

        >>> from cookbook.data.records import Document
        >>> docs = [Document("p1", "Ada met Bo.", ((0, 11),), 0), Document("p2", "Bo met Cy.", ((0, 10),), 0),
        ...         Document("p3", "Cy sat.", ((0, 7),), 0)]
        >>> gaz = {"Ada": ["ada"], "Bo": ["bo"], "Cy": ["cy"]}
        >>> hr = HippoRetriever.build(docs, gazetteer_mentions(docs, gaz), ["ada", "bo", "cy"], gaz)
        >>> list(hr.dense_hits("Who met Cy?", 2))
        ['p2', 'p3']
        """
        vec = self.embedder.transform([query])[0] if isinstance(query, str) else query
        ids, sc = self.index.search(vec, min(k, len(self.index)))
        return {self.graph.passage_ids[i]: max(float(s), 0.0) for i, s in zip(ids, sc)}

    def retrieve(self, question: str, k: int, *, dense_hits: dict[str, float] | None = None,
                 restart: float = 0.5) -> list[str]:
        """The top-``k`` passage ids for ``question``: its entities (gazetteer match) and ``dense_hits``
        (e.g. :meth:`dense_hits`; None = entities only) seed :func:`structure_aware_seeds`, passages are
        ranked by PPR (:func:`top_passages`). When nothing seeds the walk, the dense hits' own order is
        returned (cut to ``k``). Any ``{passage id: score ≥ 0}`` can stand in for dense hits, e.g. BM25's
        best passages with scores scaled to at most 1. A name of several entities seeds none (``ambiguous_mentions``).

        >>> from cookbook.data.records import Document
        >>> docs = [Document("p1", "Ada met Bo.", ((0, 11),), 0), Document("p2", "Bo met Cy.", ((0, 10),), 0),
        ...         Document("p3", "Cy sat.", ((0, 7),), 0)]
        >>> gaz = {"Ada": ["ada"], "Bo": ["bo"], "Cy": ["cy"]}
        >>> hr = HippoRetriever.build(docs, gazetteer_mentions(docs, gaz), ["ada", "bo", "cy"], gaz)
        >>> hr.retrieve("Who met Ada?", 2)  # Ada's passage, then Bo's other one
        ['p1', 'p2']
        >>> hr.retrieve("Who sat?", 1, dense_hits={"p3": 1.0})  # no entity named: the dense hit seeds alone
        ['p3']
        """
        entities = {m.entity_id for m in gazetteer_mentions({"question": question}, self.matcher)}
        v = structure_aware_seeds(self.graph, question, entities, self.facts, dense_hits)
        if v.sum() == 0:
            return list(dense_hits or {})[:k]
        return top_passages(self.graph, v, k, restart=restart)
