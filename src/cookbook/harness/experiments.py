"""The experiments notebooks 07 and 09 and ``benchmarks/`` run on the harness (:mod:`cookbook.harness.bench`):
retrieval set-ups on a corpus and on WordNet, parameter sweeps, scaling measurements (the seed trade-off is
:mod:`cookbook.harness.tradeoff`).

>>> b = world_bench("ci")
>>> sorted(b.methods), b.n_queries > 0
(['PPR', 'dense', 'fused', 'two-step'], True)
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .. import embed
from .._validate import integer, probability
from .._validate import seed as check_seed
from ..arrays import top_k
from ..cache import cached_array
from ..data import realdata
from ..data.corpus import load_corpus
from ..index import communities as cm
from ..linalg import ppr
from ..metrics import label_entropy, majority_fraction, support_recall
from ..query import seeds
from ..query.hipporag import HippoRetriever
from .bench import best_of
from .tradeoff import seed_selections

__all__ = ["OVERSAMPLES", "PENALTIES", "RESTARTS", "SCALING_METHODS", "RetrievalBench", "TfidfIndex", "penalty_sweep",
           "restart_recall", "restart_sweep", "scaling_curves", "scaling_runs", "wordnet_bench", "wordnet_embedding",
           "wordnet_tfidf", "world_bench"]


@dataclass
class RetrievalBench:
    """A graph, its ANN index and queries, with named methods ``fn(query, top_k, depth) -> outcome`` and
    a ``score(query, top_k, depth, outcome) -> dict`` for :func:`cookbook.harness.bench.run_manifest`. Outcomes
    are dicts with ``seeds`` (node indices) and ``nodes`` (result node indices). A corpus's bench also keeps
    the ``corpus`` and the ``retriever`` it built, so a notebook reuses them rather than building them again.

    >>> def first(q, k, d):
    ...     return {"seeds": [q], "nodes": list(range(q, q + k))}
    >>> b = RetrievalBench("toy", 2, {"first": first}, lambda q, k, d, out: {"size": len(out["nodes"])})
    >>> b.score(1, 3, 0, b.methods["first"](1, 3, 0))
    {'size': 3}
    """

    name: str
    n_queries: int
    methods: dict
    score: Callable
    adjacency: object = None
    corpus: object = None
    retriever: HippoRetriever | None = None


def world_bench(scale: str = "class", seed: int = 7, corpus: str = "world",
                dense: str = embed.DEFAULT_DENSE) -> RetrievalBench:
    """A corpus's multi-hop questions over its passage–entity graph (``corpus`` as in
    :func:`cookbook.data.corpus.load_corpus`): two-step, fused, PPR, dense (``dense`` names the embedder, as in
    :meth:`cookbook.query.hipporag.HippoRetriever.build`).

    ``nodes`` are every node reached (passages and entities: the graph is bipartite, so depth 1 reaches
    entities only). Quality: ``recall`` of the question's supporting passages among the passages
    reached, ``result_size`` (nodes), ``seed_overlap``, ``label_entropy`` of the nodes' groups (the
    world's planted groups, the Factbook's regions). Taught in notebooks/09_benchmark.ipynb; the module's
    docstring runs it at ``"ci"`` scale.

    >>> world_bench("ci", corpus="novel")
    Traceback (most recent call last):
    ValueError: unknown corpus 'novel' (nor a recording ['christmas-carol', 'dulce']); expected one of ['factbook', \
'world']
    """
    world = load_corpus(corpus, scale, seed)
    hr = HippoRetriever.from_world(world, dense=dense)
    pg, index = hr.graph, hr.index
    qs = world.questions
    qvec = hr.embedder.transform([q.text for q in qs])
    P = pg.n_passages
    labels = np.array([d.group for d in world.documents] + [e.group for e in world.entities])

    def two_step(q, k, d):
        r = seeds.two_step_retrieve(index, pg.adjacency, qvec[q], top_k=k, depth=d)
        return {"seeds": r.seeds, "nodes": r.expansion.nodes.tolist()}

    def fused(q, k, d):
        r = seeds.retrieve(index, pg.adjacency, qvec[q], top_k=k, depth=d)
        return {"seeds": r.seeds, "nodes": r.expansion.nodes.tolist()}

    def dense(q, k, d):
        ids, _ = index.search(qvec[q], k)
        return {"seeds": ids, "nodes": ids.tolist()}

    def ppr_method(q, k, d):
        top = [pg.node(p) for p in hr.retrieve(qs[q].text, k, dense_hits=hr.dense_hits(qvec[q]))]
        return {"seeds": np.array(top), "nodes": top}

    def score(q, k, d, out):
        got = [pg.passage_ids[i] for i in out["nodes"] if i < P]
        return {"recall": support_recall(got, qs[q].supporting), "result_size": len(out["nodes"]),
                "hops": qs[q].hops, "seed_overlap": seeds.seed_overlap(pg.adjacency, out["seeds"]),
                "label_entropy": label_entropy(labels[out["nodes"]])}

    methods = {"two-step": two_step, "fused": fused, "PPR": ppr_method, "dense": dense}
    return RetrievalBench(f"{corpus}-{world.scale}", len(qs), methods, score, pg.adjacency, world, hr)


def wordnet_bench(n_query_pool: int = 5000, seed: int = 7) -> RetrievalBench:
    """WordNet synsets as queries (their own text embedded), over the whole WordNet graph: two-step,
    fused, dense. Quality: ``result_size`` (unique nodes), ``seed_overlap``, ``label_entropy``,
    ``majority_fraction`` of lexicographer labels. Run by benchmarks/retrieval.py. Needs the
    ``wordnet`` extra and seconds to parse and embed WordNet, so no example here.
    """
    wn = realdata.wordnet()
    vecs = wordnet_embedding(wn)
    index = embed.CosineIndex(vecs)
    pool = np.random.default_rng(check_seed(seed)).choice(len(wn.ids), n_query_pool, replace=False)

    def two_step(q, k, d):
        r = seeds.two_step_retrieve(index, wn.adjacency, vecs[pool[q]], top_k=k, depth=d)
        return {"seeds": r.seeds, "nodes": r.expansion.nodes}

    def fused(q, k, d):
        r = seeds.retrieve(index, wn.adjacency, vecs[pool[q]], top_k=k, depth=d)
        return {"seeds": r.seeds, "nodes": r.expansion.nodes}

    def dense(q, k, d):
        ids, _ = index.search(vecs[pool[q]], k)
        return {"seeds": ids, "nodes": ids}

    def score(q, k, d, out):
        lab = wn.labels[np.asarray(out["nodes"], dtype=int)]
        return {"result_size": len(out["nodes"]), "seed_overlap": seeds.seed_overlap(wn.adjacency, out["seeds"]),
                "label_entropy": label_entropy(lab), "majority_fraction": majority_fraction(lab)}

    return RetrievalBench("wordnet", n_query_pool, {"two-step": two_step, "fused": fused, "dense": dense}, score,
                          wn.adjacency)


class TfidfIndex:
    """Exact top-k cosine search over the rows of a TF-IDF matrix (a ``(n, vocabulary)`` CSR whose rows are
    L2-normalised, as :class:`cookbook.embed.TfidfVectorizer` writes them), with the interface and the tie rule of
    :class:`cookbook.embed.CosineIndex` (ties by lower row). A query is a ``(1, vocabulary)`` row of such a
    matrix. No projection: a query scores only the rows that share a word with it, so a search of WordNet's
    117k glosses takes about a millisecond and the index costs only the TF-IDF itself (notebook 07's WordNet
    index: an LSA of the same texts takes tens of seconds to fit). Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> X = embed.TfidfVectorizer().fit_transform(["red apple", "green apple", "blue sky"])
    >>> index = TfidfIndex(X)
    >>> ids, scores = index.search(X[0], k=2)
    >>> len(index), ids.tolist(), np.round(scores, 3).tolist()
    (3, [0, 1], [1.0, 0.366])
    """

    def __init__(self, X):
        if not sp.issparse(X) or X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D sparse TF-IDF matrix, got {type(X).__name__} "
                             f"of shape {np.shape(X)}")
        self.X = sp.csr_matrix(X, dtype=float)
        self._by_word = self.X.T.tocsr()  # (vocabulary, n): a query's words pick the rows that can score

    def __len__(self) -> int:
        return self.X.shape[0]

    def scores(self, query) -> np.ndarray:
        """Cosine of ``query`` (a ``(1, vocabulary)`` sparse row) with every indexed row, shape ``(n,)``.

        >>> X = embed.TfidfVectorizer().fit_transform(["red apple", "blue sky"])
        >>> TfidfIndex(X).scores(X[1]).round(6).tolist()
        [0.0, 1.0]
        """
        q = sp.csr_matrix(query, dtype=float)
        if q.shape != (1, self.X.shape[1]):
            raise ValueError(f"query must be one row of {self.X.shape[1]} TF-IDF columns, got shape {q.shape}")
        if not np.all(np.isfinite(q.data)):
            raise ValueError("query contains NaN or inf")
        norm = np.sqrt(q.multiply(q).sum())
        return (q @ self._by_word).toarray().ravel() / (norm if norm > 0 else 1.0)

    def search(self, query, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ``(rows, scores)`` best first, ties by lower row; ``k`` larger than the index is a ValueError.

        >>> X = embed.TfidfVectorizer().fit_transform(["red apple", "green apple", "blue sky", "grey sky"])
        >>> TfidfIndex(X).search(X[2], k=3)[0].tolist()  # rows 0 and 1 tie at 0: the lower first
        [2, 3, 0]
        """
        k = integer(k, "k")
        if k > len(self):
            raise ValueError(f"k={k} is larger than the {len(self)} indexed rows")
        s = self.scores(query)
        kth = np.partition(s, len(s) - k)[len(s) - k]
        cand = np.flatnonzero(s >= kth)  # every row tied with the k-th score, in row order
        rows = cand[top_k(s[cand], k)]
        return rows, s[rows]


def wordnet_tfidf(wn: realdata.WordNetGraph) -> sp.csr_matrix:
    """TF-IDF rows of WordNet's lemmas+glosses (:meth:`~cookbook.data.realdata.WordNetGraph.texts`), ``(n_synsets,
    vocabulary)``, for a :class:`TfidfIndex`: a few seconds, so notebook 07 needs no cache for it. Taught in
    notebooks/07_overlap_aware_seeds.ipynb; parsing WordNet takes seconds, so :class:`TfidfIndex` has the example.
    """
    return embed.TfidfVectorizer().fit_transform(wn.texts())


def wordnet_embedding(wn: realdata.WordNetGraph, dim: int = embed.DEFAULT_DIM) -> np.ndarray:
    """LSA vectors of WordNet's glosses+lemmas, ``(n_synsets, dim)``: ~10-30 s to compute, so cached on disk
    (:mod:`cookbook.cache`) keyed by a digest of the texts, ``dim``, the package version and the source of
    :mod:`cookbook.embed` (an edited embedder never reads a stale entry, even before a version bump).
    The benchmarks' WordNet bench (:func:`wordnet_bench`) embeds with it; notebook 07 uses :func:`wordnet_tfidf`."""
    texts = wn.texts()
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()
    code = hashlib.sha256(inspect.getsource(embed).encode("utf-8")).hexdigest()
    return cached_array("wordnet-lsa", {"texts": digest, "n": len(texts), "dim": dim, "embed": code},
                        lambda: embed.LSAEmbedder(dim).fit_transform(texts))


# ---------------------------------------------------------------- the overlap-aware seeds' trade-off


# ---------------------------------------------------------------- sweeps and scaling

PENALTIES = (0.0, 0.1, 0.3, 0.5, 1.0)
OVERSAMPLES = (1, 2, 5, 10)
RESTARTS = (0.15, 0.3, 0.5, 0.7, 0.85)


def penalty_sweep(index, adjacency, queries, *, top_k=10, recall_of=None, penalties=PENALTIES,
                  oversamples=OVERSAMPLES) -> list[dict]:
    """Overlap penalty × oversample at depth 0: mean seed ANN score and seed overlap per setting, and
    ``recall_of(query_position, seeds)`` when given. Taught in notebooks/07_overlap_aware_seeds.ipynb.

    Candidates 0 and 1 share their only neighbour 3; a penalty trades a little ANN score for no overlap:

    >>> A = sp.csr_matrix(np.array([[0, 0, 0, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1],
    ...                             [1, 1, 0, 0, 0], [0, 0, 1, 0, 0]]))
    >>> index = embed.CosineIndex([[1, 0], [1, 0.1], [1, 0.8], [0, 1], [-1, 1]])
    >>> pts = penalty_sweep(index, A, [np.array([1.0, 0.0])], top_k=2, penalties=(0.0, 0.5), oversamples=(2,))
    >>> [(p["penalty"], round(p["ann"], 3), p["overlap"]) for p in pts]
    [(0.0, 0.998, 1.0), (0.5, 0.89, 0.0)]
    """
    if len(queries) == 0:
        raise ValueError("queries is empty: nothing to sweep over")
    settings = [(int(o), float(p)) for o in oversamples for p in penalties]
    per = {s: [] for s in settings}
    for i, q in enumerate(queries):
        for s, (picked, overlap, ann) in seed_selections(index, adjacency, q, top_k, settings).items():
            per[s].append((ann, overlap) + ((recall_of(i, picked),) if recall_of is not None else ()))
    pts = []
    for (o, p), vals in per.items():
        point = {"oversample": o, "penalty": p, "ann": float(np.mean([v[0] for v in vals])),
                 "overlap": float(np.mean([v[1] for v in vals]))}
        if recall_of is not None:
            point["recall"] = float(np.mean([v[2] for v in vals]))
        pts.append(point)
    return pts


def restart_recall(retriever: HippoRetriever, questions, k=5, restarts=RESTARTS) -> dict[float, np.ndarray]:
    """Per-question recall@k of the supporting passages at each restart λ: ``{λ: array (len(questions),)}``, in
    ``questions``' order, ``retriever``'s PPR with its dense seeds (searched once, the questions embedded together).
    The scores a λ is tuned on (a dev half) and reported on (a test half, paired per question: notebook 09).

    >>> from cookbook.index.extract import gazetteer_mentions
    >>> from cookbook.data.records import Document, Question
    >>> docs = [Document("p1", "Ada met Bo.", ((0, 11),), 0), Document("p2", "Cy sat.", ((0, 7),), 0)]
    >>> gaz = {"Ada": ["ada"], "Bo": ["bo"], "Cy": ["cy"]}
    >>> hr = HippoRetriever.build(docs, gazetteer_mentions(docs, gaz), ["ada", "bo", "cy"], gaz)
    >>> q = Question("q1", "Who did Ada meet?", "bo", 1, ("ada", "bo"), ("p1",))
    >>> {lam: r.tolist() for lam, r in restart_recall(hr, [q], k=1, restarts=(0.3, 0.8)).items()}
    {0.3: [1.0], 0.8: [1.0]}
    """
    for lam in restarts:
        probability(lam, "restart λ", zero_ok=False)
    questions = list(questions)
    vectors = retriever.embedder.transform([q.text for q in questions]) if questions else []
    dense = [retriever.dense_hits(v) for v in vectors]  # the same for every λ: search once
    return {lam: np.array([support_recall(retriever.retrieve(q.text, k, dense_hits=hits, restart=lam), q.supporting)
                           for q, hits in zip(questions, dense)]) for lam in restarts}


def restart_sweep(retriever: HippoRetriever, questions, k=5, restarts=RESTARTS, *,
                  recall: dict | None = None) -> list[dict]:
    """PPR restart λ against recall@k of supporting passages, per hop count, on ``questions`` (with
    ``.text``, ``.hops``, ``.supporting``) answered by ``retriever``: the means of :func:`restart_recall` (or of
    ``recall``, its result for these questions, passed in so nothing is solved twice). Taught in
    notebooks/09_benchmark.ipynb.

    >>> from cookbook.index.extract import gazetteer_mentions
    >>> from cookbook.data.records import Document, Question
    >>> docs = [Document("p1", "Ada met Bo.", ((0, 11),), 0), Document("p2", "Cy sat.", ((0, 7),), 0)]
    >>> gaz = {"Ada": ["ada"], "Bo": ["bo"], "Cy": ["cy"]}
    >>> hr = HippoRetriever.build(docs, gazetteer_mentions(docs, gaz), ["ada", "bo", "cy"], gaz)
    >>> q = Question("q1", "Who did Ada meet?", "bo", 1, ("ada", "bo"), ("p1",))
    >>> restart_sweep(hr, [q], k=1, restarts=(0.3, 0.8))
    [{'restart': 0.3, 'recall@1_1hop': 1.0}, {'restart': 0.8, 'recall@1_1hop': 1.0}]
    """
    questions = list(questions)
    if recall is None:
        recall = restart_recall(retriever, questions, k, restarts)
    elif set(recall) != set(restarts) or any(len(r) != len(questions) for r in recall.values()):
        raise ValueError(f"recall must hold one score per question for each λ in {tuple(restarts)}, got "
                         f"{ {lam: len(r) for lam, r in recall.items()} }")
    hops = np.array([q.hops for q in questions])
    return [{"restart": lam, **{f"recall@{k}_{h}hop": float(np.mean(recall[lam][hops == h]))
                                for h in sorted(set(hops.tolist()))}} for lam in restarts]


SCALING_METHODS = ("PPR exact (query)", "BFS depth 2 (query)", "igraph Leiden, 2 iterations (graph)")


def scaling_runs(sizes: Sequence[int] = (10_000, 30_000, 100_000), *, leiden: bool = True) -> list[dict]:
    """Seconds and work against edges on seeded power-law graphs (7 edges per node): one PPR query (power
    iteration from 5 seeds), one depth-2 BFS from the same 5 nodes, one igraph Leiden run of two iterations.
    One row per (size, method): ``method``, ``edges``, ``seconds`` (best of 3; Leiden: one run),
    ``entries_read``, the stored adjacency entries the query read, counted rather than timed: PPR's
    iterations × the walk matrix's entries (each iteration multiplies by all of it), BFS's degrees of the
    nodes it expanded (the seeds and the nodes one hop out); None for Leiden, whose work igraph does not
    report; and ``iterations``, PPR's power-iteration steps (None for the others). Leiden gets a fixed number
    of iterations so the curve measures the cost of a sweep per edge: iterating until no node moves takes ever
    more sweeps on larger power-law graphs (3.6 s at 100k edges, 29 s at 300k and some 20 minutes at 1M here,
    against 0.15 s and 0.8 s for two iterations). ``leiden=False`` leaves Leiden out (notebook 09 times the
    queries only; ``make bench`` times Leiden too).
    Taught in notebooks/09_benchmark.ipynb. Timing runs take seconds, so the example shows only the argument
    check.

    >>> scaling_runs([10_000])
    Traceback (most recent call last):
    ValueError: sizes needs two or more edge counts of at least 14 (7 edges per node), got [10000]
    """
    sizes = list(sizes)
    if len(sizes) < 2 or min(sizes) < 14:
        raise ValueError(f"sizes needs two or more edge counts of at least 14 (7 edges per node), got {sizes}")
    rows = []
    for m in sizes:
        n = m // 7
        g = realdata.power_law_graph(n, m, exponent=2.5, seed=0)  # simple: no loops, no multi-edges
        e = np.asarray(g.get_edgelist(), dtype=np.int64).reshape(-1, 2)  # 2-3x faster than get_adjacency_sparse
        A = sp.csr_matrix((np.ones(2 * len(e)), (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])), shape=(n, n))
        W = ppr.transition_matrix(A)
        v0 = np.zeros(n)
        v0[:5] = 1
        seconds, walk = best_of(ppr.personalized_pagerank, W, v0)
        rows.append({"method": SCALING_METHODS[0], "edges": m, "seconds": seconds,
                     "entries_read": walk.iterations * W.nnz, "iterations": walk.iterations})
        seconds, reached = best_of(seeds.bfs, A, [0, 1, 2, 3, 4], 2)
        degree = np.diff(A.indptr)
        rows.append({"method": SCALING_METHODS[1], "edges": m, "seconds": seconds,
                     "entries_read": int(degree[reached.nodes[reached.hops < 2]].sum()), "iterations": None})
        if leiden:
            rows.append({"method": SCALING_METHODS[2], "edges": m,
                         "seconds": best_of(cm.leiden, g, engine="igraph", n_iterations=2, repeat=1)[0],
                         "entries_read": None, "iterations": None})
    return rows


def scaling_curves(sizes: Sequence[int] = (10_000, 30_000, 100_000)) -> dict:
    """:func:`scaling_runs`' seconds as curves, ``{method: (sizes, seconds)}`` (what
    :func:`cookbook.harness.plots.scaling` draws). Run by ``benchmarks/engines.py``.

    >>> scaling_curves([10_000])
    Traceback (most recent call last):
    ValueError: sizes needs two or more edge counts of at least 14 (7 edges per node), got [10000]
    """
    rows = scaling_runs(sizes)
    return {k: (list(sizes), [r["seconds"] for r in rows if r["method"] == k]) for k in SCALING_METHODS}
