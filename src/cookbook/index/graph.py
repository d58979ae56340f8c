"""Co-occurrence graphs from a sparse incidence matrix.

A window (a document or a sentence) × entity incidence matrix ``X`` (binary CSR) gives co-occurrence
counts as ``C = X.T @ X`` with the diagonal removed. Weights: ``"count"``; ``"pmi"``
``log(c_ab·N / (n_a·n_b))`` with ``N`` windows and ``n_a`` windows containing ``a``; ``"npmi"`` the PMI
divided by ``-log(c_ab / N)`` (in [-1, 1]).

>>> import numpy as np, scipy.sparse as sp
>>> X = sp.csr_matrix(np.array([[1, 1, 0], [1, 1, 1], [0, 0, 1]]))
>>> cooccurrence(X).toarray().astype(int).tolist()
[[0, 2, 1], [2, 0, 1], [1, 1, 0]]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter

import numpy as np
import scipy.sparse as sp

from .._validate import integer
from ..data.gazetteer import gazetteer_mentions
from ..data.records import doc_ids, doc_pairs
from ..text import sentence_spans

__all__ = ["WEIGHTS", "WINDOWS", "EntityGraph", "MentionArrays", "cooccurrence", "cooccurrence_graph", "corpus_graph",
           "doc_sentences", "incidence", "incidence_from_arrays", "mention_arrays"]

WEIGHTS = ("count", "pmi", "npmi")
WINDOWS = ("document", "sentence")


@dataclass
class EntityGraph:
    """An undirected weighted entity graph: node ``i`` is ``ids[i]`` named ``names[i]``;
    ``adjacency`` is a symmetric ``(n, n)`` CSR with a zero diagonal; ``counts`` the raw co-occurrence
    counts on the same pattern (so pruning and weighting can be explained side by side). Made by
    :func:`cooccurrence_graph`; taught in notebooks/01_entity_cooccurrence.ipynb.

    >>> g = EntityGraph(["A", "B"], ["Ada", "Bo"], sp.csr_matrix([[0, 2], [2, 0]]), sp.csr_matrix([[0, 2], [2, 0]]))
    >>> g.n_nodes, g.n_edges
    (2, 1)
    """

    ids: list[str]
    names: list[str]
    adjacency: sp.csr_matrix
    counts: sp.csr_matrix
    weight: str = "count"

    @property
    def n_nodes(self) -> int:
        """Number of entities (nodes), isolated ones included.

        >>> g = EntityGraph(["A", "B", "C"], ["Ada", "Bo", "Cy"], sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]),
        ...                 sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]))
        >>> g.n_nodes
        3
        """
        return len(self.ids)

    @property
    def n_edges(self) -> int:
        """Number of undirected edges (each pair counted once).

        >>> g = EntityGraph(["A", "B", "C"], ["Ada", "Bo", "Cy"], sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]),
        ...                 sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]))
        >>> g.n_edges
        2
        """
        return int(sp.triu(self.adjacency, k=1).nnz)

    def edges(self) -> list[tuple[str, str, float]]:
        """``[(id_a, id_b, weight), ...]`` for a < b (by index), sorted by weight desc, then ids.

        >>> g = EntityGraph(["A", "B", "C"], ["Ada", "Bo", "Cy"], sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]),
        ...                 sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]))
        >>> g.edges()
        [('A', 'B', 2.0), ('A', 'C', 1.0)]
        """
        up = sp.triu(self.adjacency, k=1).tocoo()
        rows = [(self.ids[i], self.ids[j], float(w)) for i, j, w in zip(up.row, up.col, up.data)]
        return sorted(rows, key=lambda r: (-r[2], r[0], r[1]))

    def to_networkx(self):
        """A ``networkx.Graph`` with node attribute ``name`` and edge attributes ``weight``, ``count``.
        Taught in notebooks/01_entity_cooccurrence.ipynb.

        >>> g = EntityGraph(["A", "B", "C"], ["Ada", "Bo", "Cy"], sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]),
        ...                 sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]))
        >>> g.to_networkx().edges["A", "B"]
        {'weight': 2.0, 'count': 2.0}
        """
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from((i, {"name": n}) for i, n in zip(self.ids, self.names))
        up = sp.triu(self.adjacency, k=1).tocoo()
        cnt = self.counts.tocsr()
        g.add_edges_from((self.ids[i], self.ids[j], {"weight": float(w), "count": float(cnt[i, j])})
                         for i, j, w in zip(up.row, up.col, up.data))
        return g

    def to_igraph(self):
        """An ``igraph.Graph`` (vertex attributes ``id``, ``name``; edge attribute ``weight``).

        >>> g = EntityGraph(["A", "B", "C"], ["Ada", "Bo", "Cy"], sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]),
        ...                 sp.csr_matrix([[0, 2, 1], [2, 0, 0], [1, 0, 0]]))
        >>> h = g.to_igraph()
        >>> h.vs["name"], h.es["weight"]
        (['Ada', 'Bo', 'Cy'], [2.0, 1.0])
        """
        import igraph as ig

        up = sp.triu(self.adjacency, k=1).tocoo()
        g = ig.Graph(n=self.n_nodes, edges=list(zip(up.row.tolist(), up.col.tolist())))
        g.vs["id"] = list(self.ids)
        g.vs["name"] = list(self.names)
        g.es["weight"] = up.data.astype(float).tolist()
        return g


@dataclass(frozen=True)
class MentionArrays:
    """Mentions as parallel integer arrays, each of shape ``(n_mentions,)``: ``doc[i]`` and ``entity[i]`` are
    positions in ``doc_ids`` and ``entity_ids``, ``start[i]`` the character offset. Read once from mention
    objects by :func:`mention_arrays` (``start`` is None for mentions without offsets, which serve document
    windows only); :func:`incidence_from_arrays` builds incidence matrices from it without
    touching a Python object, so a corpus's graphs (windows, weights, thresholds) reuse one reading.

    >>> m = MentionArrays(["d1"], ["A", "B"], np.array([0, 0]), np.array([0, 1]), np.array([0, 8]))
    >>> m.n_mentions
    2
    """

    doc_ids: list[str]
    entity_ids: list[str]
    doc: np.ndarray
    entity: np.ndarray
    start: np.ndarray | None

    @property
    def n_mentions(self) -> int:
        """Number of mentions (array length).

        >>> MentionArrays([], ["A"], np.array([], int), np.array([], int), np.array([], int)).n_mentions
        0
        """
        return len(self.doc)


def mention_arrays(mentions: Iterable, docs, entity_ids: Sequence[str]) -> MentionArrays:
    """Read ``mentions`` (objects with ``doc_id``, ``entity_id``, ``start``) once into :class:`MentionArrays`
    over the order of ``docs`` (objects with ``.id``, a mapping, or ``(id, text)`` pairs) and ``entity_ids``.
    A mention of an unknown entity or document raises, naming it.

    >>> from cookbook.data.records import Mention
    >>> arr = mention_arrays([Mention("d2", 0, 2, "B", "Bo")], {"d1": "Ada.", "d2": "Bo."}, ["A", "B"])
    >>> arr.doc.tolist(), arr.entity.tolist()
    ([1], [1])
    """
    doc_order = doc_ids(docs)
    if len(entity_ids) == 0:
        raise ValueError("entity_ids is empty: no entities to index")
    # The mentions' fields are read once, in C (map/attrgetter), and every later step is on arrays. Ids map
    # to positions through a dict: 3-5x faster than np.unique/searchsorted over string arrays here.
    mentions = mentions if isinstance(mentions, Sequence) else list(mentions)
    m_doc, m_ent = list(map(attrgetter("doc_id"), mentions)), list(map(attrgetter("entity_id"), mentions))
    cols = _positions(m_ent, entity_ids, "mention of unknown entity {!r} (not in entity_ids)")
    doc = _positions(m_doc, doc_order, "mention in unknown document {!r}")
    try:  # offsets matter to sentence windows only; document-window callers may pass mentions without them
        start = np.fromiter(map(attrgetter("start"), mentions), dtype=np.int64, count=len(mentions))
    except AttributeError:
        start = None
    return MentionArrays(list(doc_order), list(entity_ids), doc, cols, start)


def doc_sentences(docs) -> list[tuple[str, str, tuple[tuple[int, int], ...]]]:
    """``[(doc_id, text, sentence spans), ...]`` for the documents of :func:`~cookbook.data.records.doc_pairs`:
    a :class:`~cookbook.data.records.Document`'s own ``.sentences``, else :func:`cookbook.text.sentence_spans` of
    the text (a mapping id → text, ``(id, text)`` pairs), for the sentence windows here and HippoRAG's facts.

    >>> doc_sentences({"d1": "Ada came. Bo left."})
    [('d1', 'Ada came. Bo left.', ((0, 9), (10, 18)))]
    """
    own = {}
    if not isinstance(docs, Mapping) and isinstance(docs, Iterable) and not isinstance(docs, (str, bytes)):
        docs = list(docs)
        own = {d.id: tuple(map(tuple, d.sentences)) for d in docs if hasattr(d, "text") and hasattr(d, "sentences")}
    return [(i, t, own[i] if i in own else tuple(sentence_spans(t))) for i, t in doc_pairs(docs)]


def incidence(mentions: Iterable, docs, entity_ids: Sequence[str], *, window: str = "document",
              sentences: dict[str, Sequence[tuple[int, int]]] | None = None) -> sp.csr_matrix:
    """Binary window × entity CSR matrix, shape ``(n_windows, len(entity_ids))``.

    ``window="document"``: one row per document in ``docs`` order. ``window="sentence"``: one row per
    sentence; ``sentences`` maps doc id → sentence spans (taken from ``docs`` objects when they have
    a ``.sentences`` attribute, else split from their text: :func:`doc_sentences`). Mentions
    of entities not in ``entity_ids`` raise. The same as
    :func:`incidence_from_arrays` over :func:`mention_arrays`. Taught in notebooks/01_entity_cooccurrence.ipynb.

    >>> from cookbook.data.records import Mention
    >>> ms = [Mention("d1", 0, 3, "A", "Ada"), Mention("d1", 8, 10, "B", "Bo"), Mention("d2", 0, 2, "B", "Bo")]
    >>> incidence(ms, {"d1": "Ada met Bo.", "d2": "Bo."}, ["A", "B"]).toarray().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    if window == "sentence" and sentences is None:
        sentences = {doc_id: spans for doc_id, _, spans in doc_sentences(docs)}
    return incidence_from_arrays(mention_arrays(mentions, docs, entity_ids), window=window, sentences=sentences)


def incidence_from_arrays(arrays: MentionArrays, *, window: str = "document",
                          sentences: dict[str, Sequence[tuple[int, int]]] | None = None) -> sp.csr_matrix:
    """:func:`incidence` from mentions already read into :class:`MentionArrays`: binary window × entity CSR,
    shape ``(n_windows, len(arrays.entity_ids))``; ``sentences`` (doc id → spans) is needed for
    ``window="sentence"``.

    >>> m = MentionArrays(["d1", "d2"], ["A", "B"], np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([0, 8, 0]))
    >>> incidence_from_arrays(m).toarray().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    if not isinstance(arrays, MentionArrays):
        raise TypeError(f"arrays must be MentionArrays (see mention_arrays), got {type(arrays).__name__}")
    if window not in WINDOWS:
        raise ValueError(f"unknown window {window!r}; expected one of {WINDOWS}")
    doc_order, doc, cols, n_ent = arrays.doc_ids, arrays.doc, arrays.entity, len(arrays.entity_ids)
    if window == "document":
        rows, n_rows = doc, len(doc_order)
    else:
        if sentences is None:
            raise ValueError("window='sentence' needs sentence spans (sentences: doc id -> spans)")
        if arrays.start is None:
            raise ValueError("window='sentence' needs the mentions' character offsets (their .start)")
        for doc_id in doc_order:
            if doc_id not in sentences:
                raise ValueError(f"window='sentence' needs sentence spans for document {doc_id!r}")
        n_sent = np.fromiter((len(sentences[d]) for d in doc_order), dtype=np.int64, count=len(doc_order))
        first = np.cumsum(n_sent) - n_sent  # row of each document's first sentence
        n_rows = int(n_sent.sum())
        empty = doc[n_sent[doc] == 0]
        if empty.size:
            raise ValueError(f"mention in document {doc_order[empty[0]]!r}, which has no sentence spans")
        starts = np.fromiter((st for d in doc_order for st, _ in sentences[d]), dtype=np.int64, count=n_rows)
        # The sentence holding a mention: the last one of its document starting at or before it (the first
        # one for a mention before every start). Keys (document, offset) order all documents in one search.
        span = int(max(starts.max(initial=0), arrays.start.max(initial=0))) + 1
        sent_doc = np.repeat(np.arange(len(doc_order)), n_sent)
        at = np.searchsorted(sent_doc * span + starts, doc * span + arrays.start, side="right") - 1
        rows = np.maximum(at, first[doc])
    # A window mentioning an entity twice counts once: unique (row, col) keys, already in CSR order.
    keys = np.sort(rows * n_ent + cols)
    keys = keys[np.diff(keys, prepend=-1) != 0]
    rows, cols = np.divmod(keys, n_ent)
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=n_rows))]
    return sp.csr_matrix((np.ones(len(keys)), cols, indptr), shape=(n_rows, n_ent))


def _positions(values: Sequence[str], universe: Sequence[str], unknown: str) -> np.ndarray:
    """Index of each value in ``universe`` (an int array); a value not in it raises ``KeyError(unknown)``."""
    index = dict(zip(universe, range(len(universe))))
    pos = np.fromiter(map(index.get, values, repeat(-1, len(values))), dtype=np.int64, count=len(values))
    if (pos < 0).any():
        raise KeyError(unknown.format(values[int(np.argmax(pos < 0))]))
    return pos


def cooccurrence(X: sp.spmatrix, *, weight: str = "count", min_count: int = 1) -> sp.csr_matrix:
    """Symmetric entity × entity weights from a window × entity incidence matrix ``X``.

    Pairs co-occurring in fewer than ``min_count`` windows are pruned. Returns CSR, zero diagonal,
    sorted indices. Taught in notebooks/01_entity_cooccurrence.ipynb.

    >>> X = sp.csr_matrix(np.array([[1, 1, 0], [1, 1, 1]]))
    >>> cooccurrence(X, min_count=2).toarray().astype(int).tolist()
    [[0, 2, 0], [2, 0, 0], [0, 0, 0]]
    """
    if weight not in WEIGHTS:
        raise ValueError(f"unknown weighting {weight!r}; expected one of {WEIGHTS}")
    integer(min_count, "min_count", what="an integer >= 1")
    X = sp.csr_matrix(X, dtype=float)
    if X.shape[0] == 0:
        raise ValueError("empty corpus: the incidence matrix has no windows")
    X.data[:] = 1.0
    C = X.T.tocsr() @ X  # CSR @ CSR gives CSR: X.T @ X would give CSC and converting costs a third of the product
    C.setdiag(0)
    C.eliminate_zeros()
    C.data[C.data < min_count] = 0
    C.eliminate_zeros()
    C.sort_indices()
    if weight == "count":
        return C
    n = X.shape[0]
    df = np.asarray(X.sum(axis=0)).ravel()
    coo = C.tocoo()
    pmi = np.log(coo.data * n / (df[coo.row] * df[coo.col]))
    if weight == "npmi":
        p_ab = coo.data / n
        # c_ab == N means the pair is in every window: perfectly associated, NPMI 1 by convention.
        denom = -np.log(p_ab)
        pmi = np.where(denom > 0, pmi / np.where(denom > 0, denom, 1.0), 1.0)
    W = sp.csr_matrix((pmi, (coo.row, coo.col)), shape=C.shape)
    W.sort_indices()
    return W


def cooccurrence_graph(mentions: Sequence, docs, entities: Sequence, *, window: str = "document",
                       weight: str = "count", min_count: int = 1) -> EntityGraph:
    """Build an :class:`EntityGraph` over ``entities`` (objects with ``.id`` and ``.name``, or
    ``(id, name)`` pairs) from ``mentions`` in ``docs``; see :func:`incidence` and
    :func:`cooccurrence`. Entities that co-occur with nothing stay as isolated nodes. Taught in
    notebooks/01_entity_cooccurrence.ipynb.

    >>> from cookbook.data.records import Mention
    >>> ms = [Mention("d1", 0, 3, "A", "Ada"), Mention("d1", 8, 10, "B", "Bo")]
    >>> g = cooccurrence_graph(ms, {"d1": "Ada met Bo."}, [("A", "Ada"), ("B", "Bo"), ("C", "Cy")])
    >>> g.edges(), g.n_nodes
    ([('A', 'B', 1.0)], 3)
    """
    pairs = [(e.id, e.name) if hasattr(e, "id") else tuple(e) for e in entities]
    if not pairs:
        raise ValueError("entities is empty: no nodes for the graph")
    ids = [p[0] for p in pairs]
    if len(set(ids)) != len(ids):
        raise ValueError("entities has duplicate ids")
    X = incidence(mentions, docs, ids, window=window)
    counts = cooccurrence(X, weight="count", min_count=min_count)
    adj = counts if weight == "count" else cooccurrence(X, weight=weight, min_count=min_count)
    return EntityGraph(ids, [p[1] for p in pairs], adj, counts, weight)


def corpus_graph(corpus, types: Sequence[str] | None = None, *, mentions: Sequence | None = None):
    """``(mentions, graph)`` of a :class:`~cookbook.data.records.Corpus`: its gazetteer mentions (or the given
    ``mentions``) kept for the entities of ``types`` (default ``corpus.community_types``), and their
    document co-occurrence graph over those entities, in corpus order. The graph notebooks 03-05 and 09
    build communities on. Taught in notebooks/03_leiden_communities.ipynb.

    >>> from cookbook import data
    >>> from cookbook.data.corpus import from_world
    >>> c = from_world(data.make_world(scale="tiny"))
    >>> ms, g = corpus_graph(c, ("person",))
    >>> g.n_nodes == sum(e.type == "person" for e in c.entities), {c.entity_index[m.entity_id].type for m in ms}
    (True, {'person'})
    """
    types = corpus.community_types if types is None else tuple(types)
    nodes = [e for e in corpus.entities if e.type in types]
    if not nodes:
        raise ValueError(f"no entity of types {types} in corpus {corpus.name!r}")
    keep = {e.id for e in nodes}
    if mentions is None:
        mentions = gazetteer_mentions(corpus.documents, corpus.gazetteer())
    kept = [m for m in mentions if m.entity_id in keep]
    return kept, cooccurrence_graph(kept, corpus.documents, nodes)
