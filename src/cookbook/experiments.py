"""The experiments notebook 09 and ``benchmarks/`` run on the harness (:mod:`cookbook.bench`): retrieval
set-ups on the world and on WordNet, parameter sweeps, scaling curves.

>>> b = world_bench("ci")
>>> sorted(b.methods), b.n_queries > 0
(['PPR', 'dense', 'fused', 'two-step'], True)
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import communities as cm
from . import datasets, embed, ppr, seeds, stats
from ._validate import integer, number, probability
from .bench import best_of
from .cache import cached_array
from .corpus import load_corpus
from .hipporag import HippoRetriever
from .metrics import label_entropy, majority_fraction, support_recall

__all__ = ["OVERSAMPLES", "PENALTIES", "RESTARTS", "RetrievalBench", "SeedTradeoff", "dev_test_split",
           "penalty_sweep", "restart_sweep", "scaling_curves", "seed_tradeoff", "wordnet_bench", "wordnet_embedding",
           "world_bench"]


@dataclass
class RetrievalBench:
    """A graph, its ANN index and queries, with named methods ``fn(query, top_k, depth) -> outcome`` and
    a ``score(query, top_k, depth, outcome) -> dict`` for :func:`cookbook.bench.run_manifest`. Outcomes
    are dicts with ``seeds`` (node indices) and ``nodes`` (result node indices).

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


def world_bench(scale: str = "class", seed: int = 7, corpus: str = "world",
                dense: str = embed.DEFAULT_DENSE) -> RetrievalBench:
    """A corpus's multi-hop questions over its passage–entity graph (``corpus`` as in
    :func:`cookbook.corpus.load_corpus`): two-step, fused, PPR, dense (``dense`` names the embedder, as in
    :meth:`cookbook.hipporag.HippoRetriever.build`).

    ``nodes`` are every node reached (passages and entities: the graph is bipartite, so depth 1 reaches
    entities only). Quality: ``recall`` of the question's supporting passages among the passages
    reached, ``result_size`` (nodes), ``seed_overlap``, ``label_entropy`` of the nodes' groups (the
    world's planted groups, the Factbook's regions). Taught in notebooks/09_benchmark.ipynb; the module's
    docstring runs it at ``"ci"`` scale.

    >>> world_bench("ci", corpus="novel")
    Traceback (most recent call last):
    ValueError: unknown corpus 'novel'; expected one of ['factbook', 'world']
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
    return RetrievalBench(f"{corpus}-{world.scale}", len(qs), methods, score, pg.adjacency)


def wordnet_bench(n_query_pool: int = 5000, seed: int = 7) -> RetrievalBench:
    """WordNet synsets as queries (their own text embedded), over the whole WordNet graph: two-step,
    fused, dense. Quality: ``result_size`` (unique nodes), ``seed_overlap``, ``label_entropy``,
    ``majority_fraction`` of lexicographer labels. Taught in notebooks/09_benchmark.ipynb. Needs the
    ``wordnet`` extra and seconds to parse and embed WordNet, so no example here.
    """
    wn = datasets.wordnet()
    vecs = wordnet_embedding(wn)
    index = embed.CosineIndex(vecs)
    pool = np.random.default_rng(seed).choice(len(wn.ids), n_query_pool, replace=False)

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


def wordnet_embedding(wn: datasets.WordNetGraph, dim: int = embed.DEFAULT_DIM) -> np.ndarray:
    """LSA vectors of WordNet's glosses+lemmas, ``(n_synsets, dim)``: ~10-30 s to compute, so cached on disk
    (:mod:`cookbook.cache`) keyed by a digest of the texts, ``dim``, the package version and the source of
    :mod:`cookbook.embed` (an edited embedder never reads a stale entry, even before a version bump).
    Taught in notebooks/07_overlap_aware_seeds.ipynb."""
    texts = wn.texts()
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()
    code = hashlib.sha256(inspect.getsource(embed).encode("utf-8")).hexdigest()
    return cached_array("wordnet-lsa", {"texts": digest, "n": len(texts), "dim": dim, "embed": code},
                        lambda: embed.LSAEmbedder(dim).fit_transform(texts))


# ---------------------------------------------------------------- the overlap-aware seeds' trade-off

def _selections(index, adjacency, query_vec, top_k: int, settings) -> dict:
    """The seeds :func:`cookbook.seeds.retrieve` picks (depth 0) for one query under every ``(oversample,
    penalty)`` in ``settings`` (penalty None: the two-step top-k), as ``{setting: (seeds, overlap, mean ANN)}``.

    One search and one Jaccard matrix serve every setting: a smaller oversample's candidates are a prefix of
    the larger one's (the index ranks by score, then row), and the seeds' overlap is the mean of their block
    of that matrix (what :func:`cookbook.seeds.seed_overlap` computes afresh)."""
    widest = min(seeds.n_candidates(top_k, max(o for o, _ in settings), 100), len(index))
    cand, ann = index.search(query_vec, widest)
    N = seeds.neighbourhoods(adjacency, cand)
    J = seeds.jaccard_matrix(N)
    upper = np.triu_indices(top_k, 1)
    out = {}
    for o, p in settings:
        c = min(seeds.n_candidates(top_k, o, 100), len(index))
        at = (np.arange(top_k) if p is None else
              seeds.select_seeds(np.arange(c), ann[:c], N[:c], top_k, overlap_penalty=p, jaccard=J[:c, :c]))
        out[o, p] = (cand[at], float(J[np.ix_(at, at)][upper].mean()) if top_k > 1 else 0.0, float(ann[at].mean()))
    return out


TRADEOFF_PENALTIES = (0.05, 0.1, 0.2, 0.3, 0.5)
TRADEOFF_OVERSAMPLES = (2, 3, 5)


@dataclass(frozen=True)
class SeedTradeoff:
    """The overlap-aware selector against the two-step baseline on a corpus's multi-hop questions.

    ``penalty`` and ``oversample`` were chosen on the ``dev`` questions (``sweep`` holds every setting
    tried there); every per-query array below is over the disjoint ``test`` questions, in that order.
    Overlap is the seeds' mean pairwise neighbourhood Jaccard (:func:`cookbook.seeds.seed_overlap`); recall
    is seed recall@``top_k`` of the supporting passages; milliseconds are one call at depth 0.
    Built by :func:`seed_tradeoff`; taught in notebooks/07_overlap_aware_seeds.ipynb and 09_benchmark.ipynb.

    >>> SeedTradeoff.quartiles([1, 2, 3, 4, 5])
    (2.0, 3.0, 4.0)
    """

    corpus: str
    top_k: int
    penalty: float
    oversample: int
    dev: tuple[int, ...]
    test: tuple[int, ...]
    sweep: list[dict]
    hops: np.ndarray
    overlap_two_step: np.ndarray
    overlap_fused: np.ndarray
    recall_two_step: np.ndarray
    recall_fused: np.ndarray
    ms_two_step: np.ndarray
    ms_fused: np.ndarray
    overlap_cut: stats.PairedResult  # two-step − fused overlap (> 0: the selector lowers it)
    recall_change: dict  # hop count (and "all") → fused − two-step recall (< 0: a recall cost)

    @staticmethod
    def quartiles(x) -> tuple[float, float, float]:
        """(25th percentile, median, 75th percentile).

        >>> SeedTradeoff.quartiles([0.0, 1.0])
        (0.25, 0.5, 0.75)
        """
        q1, med, q3 = np.quantile(np.asarray(x, dtype=float), [0.25, 0.5, 0.75])
        return float(q1), float(med), float(q3)

    @property
    def ratio_of_means(self) -> float:
        """Mean two-step overlap ÷ mean fused overlap: the old headline, dominated by a few queries."""
        return float(self.overlap_two_step.mean() / max(self.overlap_fused.mean(), 1e-12))

    @property
    def latency_ratio(self) -> float:
        """Median fused ms ÷ median two-step ms (wall time: it varies run to run; never a pass/fail check)."""
        return float(np.median(self.ms_fused) / np.median(self.ms_two_step))

    def table(self) -> str:
        """The trade-off as plain text, the same in every notebook that shows it."""
        def q(x):
            lo, med, hi = self.quartiles(x)
            return f"median {med:.4f} [quartiles {lo:.4f}, {hi:.4f}], mean {np.mean(x):.4f}"

        lines = [f"{self.corpus}: penalty {self.penalty:g}, oversample {self.oversample}× (chosen on "
                 f"{len(self.dev)} dev questions), topK = {self.top_k}; {len(self.test)} test questions",
                 f"  seed overlap  two-step: {q(self.overlap_two_step)}",
                 f"  seed overlap  fused:    {q(self.overlap_fused)}",
                 f"  overlap cut (two-step − fused): {self.overlap_cut}",
                 f"  ratio of means {self.ratio_of_means:.1f}× (a few queries dominate it: read the median)"]
        for h, r in self.recall_change.items():
            name = "all questions" if h == "all" else f"{h}-hop"
            sel = np.ones(len(self.hops), bool) if h == "all" else self.hops == h
            lines.append(f"  seed recall@{self.top_k} {name:13} two-step {self.recall_two_step[sel].mean():.3f}, "
                         f"fused {self.recall_fused[sel].mean():.3f}; fused − two-step {r}")
        lines.append(f"  latency: median {np.median(self.ms_two_step):.2f} ms two-step, "
                     f"{np.median(self.ms_fused):.2f} ms fused → {self.latency_ratio:.1f}× (wall time, this run)")
        return "\n".join(lines)


def dev_test_split(hops: Sequence[int], seed: int = 7) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Question positions split in two halves per hop count (dev gets the odd one out), drawn with ``seed``;
    each half sorted. Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> dev_test_split([1, 1, 2, 2, 2], seed=0)
    ((0, 2, 4), (1, 3))
    """
    hops = np.asarray(hops)
    if hops.ndim != 1 or hops.size == 0:
        raise ValueError(f"hops must be a non-empty sequence of hop counts (one per question), got shape {hops.shape}")
    rng = np.random.default_rng(seed)
    dev, test = [], []
    for h in np.unique(hops):
        idx = rng.permutation(np.flatnonzero(hops == h))
        cut = (len(idx) + 1) // 2
        dev += idx[:cut].tolist()
        test += idx[cut:].tolist()
    return tuple(sorted(dev)), tuple(sorted(test))


def seed_tradeoff(corpus, retriever: HippoRetriever, *, top_k: int = 5, seed: int = 7,
                  penalties: Sequence[float] = TRADEOFF_PENALTIES,
                  oversamples: Sequence[int] = TRADEOFF_OVERSAMPLES, max_recall_loss: float = 0.02,
                  n_boot: int = 10_000) -> SeedTradeoff:
    """Overlap-aware seeds vs two-step on ``corpus``'s multi-hop questions (a :class:`~cookbook.corpus.Corpus`),
    over ``retriever``'s passage graph and index (e.g. ``HippoRetriever.from_world(corpus)``).

    Tuning, on the dev half (:func:`dev_test_split`): among ``penalties`` × ``oversamples``, the setting with
    the lowest mean seed overlap whose mean seed recall is at most ``max_recall_loss`` below the two-step
    baseline's; when none is that cheap, the one with the best recall (ties: lower overlap, then lower
    penalty and oversample). Reported on the test half: per-query overlap and recall of both methods, their
    paired bootstrap CIs (``seed`` also seeds the bootstrap) and per-query latency.
    Taught in notebooks/07_overlap_aware_seeds.ipynb and 09_benchmark.ipynb.

    >>> from cookbook import datasets
    >>> from cookbook.corpus import from_world
    >>> world = datasets.make_world(seed=0, scale="tiny")
    >>> tr = seed_tradeoff(from_world(world), HippoRetriever.from_world(world), n_boot=1000)
    >>> len(tr.dev), len(tr.test), tr.overlap_cut.n
    (12, 12, 12)
    >>> print(tr.table().splitlines()[0])  # the rest: overlap quartiles, CIs, recall per hop, latency
    world: penalty 0.05, oversample 2× (chosen on 12 dev questions), topK = 5; 12 test questions
    >>> round(tr.ratio_of_means, 2), tr.latency_ratio > 0
    (1.05, True)
    """
    number(max_recall_loss, "max_recall_loss", low=0)
    integer(top_k, "top_k")
    qs = corpus.questions
    if len(qs) < 4:
        raise ValueError(f"seed_tradeoff needs at least 4 questions to split into dev and test, got {len(qs)}")
    index, A, pid = retriever.index, retriever.graph.adjacency, retriever.graph.passage_ids
    qvec = retriever.embedder.transform([q.text for q in qs])
    dev, test = dev_test_split([q.hops for q in qs], seed)

    def recall(i, picked):
        return support_recall([pid[n] for n in picked.tolist()], qs[i].supporting)

    settings = [(1, None)] + [(int(o), float(p)) for o in oversamples for p in penalties]
    per_setting = {s: [] for s in settings}
    for i in dev:
        for s, (picked, overlap, _) in _selections(index, A, qvec[i], top_k, settings).items():
            per_setting[s].append((overlap, recall(i, picked)))
    sweep = [{"oversample": o, "penalty": 0.0 if p is None else p, "baseline": p is None,
              "overlap": float(np.mean([v[0] for v in per_setting[o, p]])),
              "recall": float(np.mean([v[1] for v in per_setting[o, p]]))} for o, p in settings]
    tried = [p for p in sweep if not p["baseline"]]
    cheap = [p for p in tried if p["recall"] >= sweep[0]["recall"] - max_recall_loss]
    best = (min(cheap, key=lambda p: (p["overlap"], p["penalty"], p["oversample"])) if cheap else
            min(tried, key=lambda p: (-p["recall"], p["overlap"], p["penalty"], p["oversample"])))

    def two_step(i):
        return seeds.two_step_retrieve(index, A, qvec[i], top_k=top_k, depth=0)

    def fused(i):
        return seeds.retrieve(index, A, qvec[i], top_k=top_k, depth=0, oversample=best["oversample"],
                              overlap_penalty=best["penalty"])

    ov2, rec2, ovf, recf, ms2, msf = [], [], [], [], [], []
    for j, i in enumerate(test):  # interleaved in alternating order, so drift and warm caches favour neither
        for method, ms, ov, rec in ((two_step, ms2, ov2, rec2), (fused, msf, ovf, recf))[::1 if j % 2 else -1]:
            t0 = time.perf_counter()
            r = method(i)
            ms.append((time.perf_counter() - t0) * 1e3)
            ov.append(seeds.seed_overlap(A, r.seeds))
            rec.append(recall(i, r.seeds))
    hops = np.array([qs[i].hops for i in test])
    ov2, ovf, rec2, recf = map(np.array, (ov2, ovf, rec2, recf))
    change = {int(h): stats.paired_bootstrap(recf[hops == h], rec2[hops == h], n_boot=n_boot, seed=seed)
              for h in np.unique(hops)}
    change["all"] = stats.paired_bootstrap(recf, rec2, n_boot=n_boot, seed=seed)
    return SeedTradeoff(corpus.name, top_k, best["penalty"], best["oversample"], dev, test, sweep, hops,
                        ov2, ovf, rec2, recf, np.array(ms2), np.array(msf),
                        stats.paired_bootstrap(ov2, ovf, n_boot=n_boot, seed=seed), change)


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
        for s, (picked, overlap, ann) in _selections(index, adjacency, q, top_k, settings).items():
            per[s].append((ann, overlap) + ((recall_of(i, picked),) if recall_of is not None else ()))
    pts = []
    for (o, p), vals in per.items():
        point = {"oversample": o, "penalty": p, "ann": float(np.mean([v[0] for v in vals])),
                 "overlap": float(np.mean([v[1] for v in vals]))}
        if recall_of is not None:
            point["recall"] = float(np.mean([v[2] for v in vals]))
        pts.append(point)
    return pts


def restart_sweep(retriever: HippoRetriever, questions, k=5, restarts=RESTARTS) -> list[dict]:
    """PPR restart λ against recall@k of supporting passages, per hop count, on ``questions`` (with
    ``.text``, ``.hops``, ``.supporting``) answered by ``retriever``. Taught in notebooks/09_benchmark.ipynb.

    >>> from cookbook.extract import gazetteer_mentions
    >>> from cookbook.records import Document, Question
    >>> docs = [Document("p1", "Ada met Bo.", ((0, 11),), 0), Document("p2", "Cy sat.", ((0, 7),), 0)]
    >>> gaz = {"Ada": ["ada"], "Bo": ["bo"], "Cy": ["cy"]}
    >>> hr = HippoRetriever.build(docs, gazetteer_mentions(docs, gaz), ["ada", "bo", "cy"], gaz)
    >>> q = Question("q1", "Who did Ada meet?", "bo", 1, ("ada", "bo"), ("p1",))
    >>> restart_sweep(hr, [q], k=1, restarts=(0.3, 0.8))
    [{'restart': 0.3, 'recall@1_1hop': 1.0}, {'restart': 0.8, 'recall@1_1hop': 1.0}]
    """
    for lam in restarts:
        probability(lam, "restart λ", zero_ok=False)
    dense = [retriever.dense_hits(q.text) for q in questions]  # the same for every λ: search once
    out = []
    for lam in restarts:
        rec = {}
        for q, hits in zip(questions, dense):
            top = retriever.retrieve(q.text, k, dense_hits=hits, restart=lam)
            rec.setdefault(q.hops, []).append(support_recall(top, q.supporting))
        out.append({"restart": lam, **{f"recall@{k}_{h}hop": float(np.mean(v)) for h, v in sorted(rec.items())}})
    return out


def scaling_curves(sizes: Sequence[int] = (10_000, 30_000, 100_000)) -> dict:
    """Seconds against edges on seeded power-law graphs (7 edges per node): one PPR query, one depth-2 BFS
    from 5 seeds, one igraph Leiden run of two iterations. ``{name: (sizes, seconds)}``; each time is the best
    of 3 (Leiden: one run). Leiden gets a fixed number of iterations so the curve measures the cost of a sweep
    per edge: iterating until no node moves takes ever more sweeps on larger power-law graphs (3.6 s at 100k
    edges, 29 s at 300k and some 20 minutes at 1M here, against 0.15 s and 0.8 s for two iterations).
    Taught in notebooks/09_benchmark.ipynb. Timing runs take seconds, so the example shows only the argument
    check.

    >>> scaling_curves([10_000])
    Traceback (most recent call last):
    ValueError: sizes needs two or more edge counts of at least 14 (7 edges per node), got [10000]
    """
    sizes = list(sizes)
    if len(sizes) < 2 or min(sizes) < 14:
        raise ValueError(f"sizes needs two or more edge counts of at least 14 (7 edges per node), got {sizes}")
    curves = {"PPR exact (query)": [], "BFS depth 2 (query)": [], "igraph Leiden, 2 iterations (graph)": []}
    for m in sizes:
        n = m // 7
        g = datasets.power_law_graph(n, m, exponent=2.5, seed=0)
        A = sp.csr_matrix(g.get_adjacency_sparse(), dtype=float)
        W = ppr.transition_matrix(A)
        v0 = np.zeros(n)
        v0[:5] = 1
        curves["PPR exact (query)"].append(best_of(ppr.personalized_pagerank, W, v0)[0])
        curves["BFS depth 2 (query)"].append(best_of(seeds.bfs, A, [0, 1, 2, 3, 4], 2)[0])
        curves["igraph Leiden, 2 iterations (graph)"].append(
            best_of(cm.leiden, g, engine="igraph", n_iterations=2, repeat=1)[0])
    return {k: (sizes, v) for k, v in curves.items()}
