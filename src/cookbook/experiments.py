"""The experiments notebook 07 and ``benchmarks/`` run on the harness (:mod:`cookbook.bench`): retrieval
set-ups on the world and on WordNet, parameter sweeps, scaling curves.

>>> b = world_bench("ci")
>>> sorted(b.methods), b.n_queries > 0
(['PPR', 'dense', 'fused', 'two-step'], True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import communities as cm
from . import datasets, embed, ppr, seeds
from ._validate import probability
from .bench import best_of
from .hipporag import HippoRetriever
from .metrics import label_entropy, majority_fraction, support_recall

__all__ = ["OVERSAMPLES", "PENALTIES", "RESTARTS", "RetrievalBench", "penalty_sweep", "restart_sweep",
           "scaling_curves", "wordnet_bench", "world_bench"]


@dataclass
class RetrievalBench:
    """A graph, its ANN index and queries, with named methods ``fn(query, top_k, depth) -> outcome`` and
    a ``score(query, top_k, depth, outcome) -> dict`` for :func:`cookbook.bench.run_manifest`. Outcomes
    are dicts with ``seeds`` (node indices) and ``nodes`` (result node indices)."""

    name: str
    n_queries: int
    methods: dict
    score: Callable
    adjacency: object = None


def world_bench(scale: str = "class", seed: int = 7) -> RetrievalBench:
    """The world's multi-hop questions over its passage–entity graph: two-step, fused, PPR, dense.

    ``nodes`` are every node reached (passages and entities: the graph is bipartite, so depth 1 reaches
    entities only). Quality: ``recall`` of the question's supporting passages among the passages
    reached, ``result_size`` (nodes), ``seed_overlap``, ``label_entropy`` of the nodes' planted groups.
    """
    world = datasets.load_world(scale, seed=seed)
    hr = HippoRetriever.from_world(world)
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
    return RetrievalBench(f"world-{world.scale}", len(qs), methods, score, pg.adjacency)


def wordnet_bench(n_query_pool: int = 5000, seed: int = 7) -> RetrievalBench:
    """WordNet synsets as queries (their own text embedded), over the whole WordNet graph: two-step,
    fused, dense. Quality: ``result_size`` (unique nodes), ``seed_overlap``, ``label_entropy``,
    ``majority_fraction`` of lexicographer labels."""
    wn = datasets.wordnet()
    vecs = embed.LSAEmbedder().fit_transform(wn.texts())
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


# ---------------------------------------------------------------- sweeps and scaling

PENALTIES = (0.0, 0.1, 0.3, 0.5, 1.0)
OVERSAMPLES = (1, 2, 5, 10)
RESTARTS = (0.15, 0.3, 0.5, 0.7, 0.85)


def penalty_sweep(index, adjacency, queries, *, top_k=10, recall_of=None, penalties=PENALTIES,
                  oversamples=OVERSAMPLES) -> list[dict]:
    """Overlap penalty × oversample at depth 0: mean seed ANN score and seed overlap per setting, and
    ``recall_of(query_position, seeds)`` when given."""
    if len(queries) == 0:
        raise ValueError("queries is empty: nothing to sweep over")
    pts = []
    for os_ in oversamples:
        for pen in penalties:
            rs = [seeds.retrieve(index, adjacency, q, top_k=top_k, depth=0, oversample=os_, overlap_penalty=pen)
                  for q in queries]
            p = {"oversample": os_, "penalty": pen, "ann": float(np.mean([r.seed_scores.mean() for r in rs])),
                 "overlap": float(np.mean([seeds.seed_overlap(adjacency, r.seeds) for r in rs]))}
            if recall_of is not None:
                p["recall"] = float(np.mean([recall_of(i, r.seeds) for i, r in enumerate(rs)]))
            pts.append(p)
    return pts


def restart_sweep(retriever: HippoRetriever, questions, k=5, restarts=RESTARTS) -> list[dict]:
    """PPR restart λ against recall@k of supporting passages, per hop count, on ``questions`` (with
    ``.text``, ``.hops``, ``.supporting``) answered by ``retriever``."""
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
    from 5 seeds, one igraph Leiden run. ``{name: (sizes, seconds)}``; each time is the best of 3
    (Leiden: one run)."""
    sizes = list(sizes)
    if len(sizes) < 2 or min(sizes) < 14:
        raise ValueError(f"sizes needs two or more edge counts of at least 14 (7 edges per node), got {sizes}")
    curves = {"PPR exact (query)": [], "BFS depth 2 (query)": [], "igraph Leiden (graph)": []}
    for m in sizes:
        n = m // 7
        g = datasets.power_law_graph(n, m, exponent=2.5, seed=0)
        A = sp.csr_matrix(g.get_adjacency_sparse(), dtype=float)
        W = ppr.transition_matrix(A)
        v0 = np.zeros(n)
        v0[:5] = 1
        curves["PPR exact (query)"].append(best_of(ppr.personalized_pagerank, W, v0)[0])
        curves["BFS depth 2 (query)"].append(best_of(seeds.bfs, A, [0, 1, 2, 3, 4], 2)[0])
        curves["igraph Leiden (graph)"].append(best_of(cm.leiden, g, engine="igraph", repeat=1)[0])
    return {k: (sizes, v) for k, v in curves.items()}
