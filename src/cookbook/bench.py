"""Benchmark harness helpers: timing with warm-up, latency summaries, ratio tables, result files.

>>> s = summarize([0.003, 0.001, 0.002])
>>> s["p50"], s["n"]
(0.002, 3)
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np


def time_calls(fn: Callable, inputs: Sequence, *, warmup: int = 1) -> tuple[list[float], list]:
    """Call ``fn(x)`` for each input after ``warmup`` untimed calls; return (seconds per call, outputs)."""
    if len(inputs) == 0:
        raise ValueError("inputs is empty: nothing to time")
    for x in list(inputs)[:warmup]:
        fn(x)
    times, outs = [], []
    for x in inputs:
        t0 = time.perf_counter()
        outs.append(fn(x))
        times.append(time.perf_counter() - t0)
    return times, outs


def best_of(fn: Callable, *args, repeat: int = 3, **kwargs) -> tuple[float, object]:
    """Fastest wall time of ``repeat`` calls of ``fn(*args, **kwargs)``, and the last result."""
    if not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive integer, got {repeat!r}")
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, out


def summarize(seconds: Sequence[float]) -> dict:
    """min / p50 / p95 / p99 / max / mean of a latency sample, plus its size ``n``."""
    a = np.asarray(seconds, dtype=float)
    if a.size == 0:
        raise ValueError("no latencies to summarize")
    q = np.percentile(a, [50, 95, 99])
    return {"n": int(a.size), "min": float(a.min()), "p50": float(q[0]), "p95": float(q[1]), "p99": float(q[2]),
            "max": float(a.max()), "mean": float(a.mean())}


def machine() -> dict:
    """What the numbers were measured on."""
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "numpy": np.__version__}


def ratio_table(rows: dict[str, dict], *, baseline: str, key: str = "p50") -> str:
    """Markdown table of ``rows[name][key]`` with each row's speed-up against ``baseline``."""
    if baseline not in rows:
        raise KeyError(f"baseline {baseline!r} is not among the rows {sorted(rows)}")
    base = rows[baseline][key]
    lines = [f"| method | {key} (ms) | speed-up vs {baseline} |", "|---|---:|---:|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r[key] * 1e3:.2f} | {base / r[key]:.1f}× |")
    return "\n".join(lines)


def script_args(doc: str, argv=None, add=None):
    """Parse a benchmark script's command line: ``--quick``, ``--out`` (created), plus what ``add(parser)``
    adds. Returns ``(args, out_path)``."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller graphs and fewer queries")
    ap.add_argument("--out", default="build/bench", help="output folder (default: build/bench)")
    if add is not None:
        add(ap)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return args, out


def write_results(out_dir: str | os.PathLike, name: str, payload: dict) -> Path:
    """Write ``<out_dir>/<name>.json`` with the machine description added."""
    if not name or "/" in name:
        raise ValueError(f"name must be a plain file stem, got {name!r}")
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **payload}, indent=2) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- manifests and the interleaved runner

@dataclass(frozen=True)
class Manifest:
    """What a run measures: ``queries`` (indices into the benchmark's query list) × ``top_ks`` × ``depths``,
    drawn with ``seed``. Saved beside the results so a rerun uses the same inputs byte for byte."""

    name: str
    seed: int
    n_available: int
    queries: tuple[int, ...]
    top_ks: tuple[int, ...] = (1, 3, 5, 10)
    depths: tuple[int, ...] = (0, 1, 2)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, indent=1) + "\n"

    def cells(self) -> list[tuple[int, int, int]]:
        """Every (query, top_k, depth), in a fixed order."""
        return [(q, k, d) for q in self.queries for k in self.top_ks for d in self.depths]

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        d = json.loads(text)
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


def make_manifest(name: str, n_available: int, n_queries: int, *, seed: int = 0,
                  top_ks: Sequence[int] = (1, 3, 5, 10), depths: Sequence[int] = (0, 1, 2)) -> Manifest:
    """Draw ``n_queries`` distinct query indices out of ``n_available`` with ``seed`` (sorted)."""
    if not 1 <= n_queries <= n_available:
        raise ValueError(f"n_queries must be in [1, {n_available}], got {n_queries}")
    if not top_ks or min(top_ks) < 1 or not depths or min(depths) < 0:
        raise ValueError(f"top_ks must be positive and depths >= 0, got {top_ks}, {depths}")
    rng = np.random.default_rng(seed)
    qs = tuple(int(q) for q in np.sort(rng.choice(n_available, n_queries, replace=False)))
    return Manifest(name, int(seed), int(n_available), qs, tuple(int(k) for k in top_ks),
                    tuple(int(d) for d in depths))


def run_manifest(manifest: Manifest, methods: dict[str, Callable], score: Callable, *,
                 progress: bool = False) -> list[dict]:
    """Run every method on every cell of ``manifest``; one row per (method, cell).

    ``methods[name](query, top_k, depth)`` returns an outcome; ``score(query, top_k, depth, outcome)``
    returns a dict of quality numbers for it. One untimed warm-up call per method comes first; within
    each cell the methods run in a rotating order, so drift hits them alike. Rows carry ``latency_s``.
    """
    from tqdm import tqdm

    if not methods:
        raise ValueError("no methods to run")
    names = list(methods)
    q0, k0, d0 = manifest.cells()[0]
    for name in names:
        methods[name](q0, k0, d0)
    rows = []
    for i, (q, k, d) in enumerate(tqdm(manifest.cells(), disable=not progress, desc=manifest.name)):
        for name in names[i % len(names):] + names[: i % len(names)]:
            t0 = time.perf_counter()
            out = methods[name](q, k, d)
            latency = time.perf_counter() - t0
            rows.append({"method": name, "query": q, "top_k": k, "depth": d, "latency_s": latency,
                         **score(q, k, d, out)})
    return rows


def aggregate(rows: Sequence[dict], *, by: Sequence[str] = ("method",)) -> dict:
    """Per group of ``by`` keys: latency summary and, for every other numeric column, mean and std."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r[b] for b in by), []).append(r)
    skip = {"method", "query", "top_k", "depth", "latency_s", *by}
    out = {}
    for key, rs in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        metrics = sorted({c for r in rs for c, v in r.items() if c not in skip and isinstance(v, (int, float))})
        entry = {"latency_s": summarize([r["latency_s"] for r in rs])}
        for m in metrics:
            vals = np.array([r[m] for r in rs if m in r], dtype=float)
            entry[m] = {"mean": float(vals.mean()), "std": float(vals.std())}
        out["/".join(str(x) for x in key)] = entry
    return out


def write_csv(rows: Sequence[dict], path: str | os.PathLike) -> Path:
    """Rows as CSV with a header of every column (in first-seen order)."""
    import csv

    if len(rows) == 0:
        raise ValueError("rows is empty: nothing to write")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(dict.fromkeys(c for r in rows for c in r))
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    return path


def loglog_slope(sizes: Sequence[float], seconds: Sequence[float]) -> float:
    """Least-squares slope of log(seconds) against log(sizes): ~1 means linear scaling."""
    if len(sizes) < 2 or len(sizes) != len(seconds):
        raise ValueError(f"sizes and seconds need two or more values of equal length, got {len(sizes)} and "
                         f"{len(seconds)}")
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


# ---------------------------------------------------------------- set-ups shared by notebook 07 and benchmarks/

@dataclass
class RetrievalBench:
    """A graph, its ANN index and queries, with named methods ``fn(query, top_k, depth) -> outcome`` and
    a ``score(query, top_k, depth, outcome) -> dict`` for :func:`run_manifest`. Outcomes are dicts with
    ``seeds`` (node indices) and ``nodes`` (result node indices)."""

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
    from . import datasets, embed, extract, ppr, seeds
    from .metrics import label_entropy

    world = datasets.load_world(scale, seed=seed)
    gaz = world.gazetteer()
    mentions = extract.gazetteer_mentions(world.documents, gaz)
    pg = ppr.passage_graph(world.documents, mentions, [e.id for e in world.entities])
    facts = ppr.fact_index(world.documents, mentions)
    lsa = embed.LSAEmbedder(dim=64)
    index = embed.CosineIndex(lsa.fit_transform([d.text for d in world.documents]))
    qs = world.questions
    qvec = lsa.transform([q.text for q in qs])
    P = pg.n_passages
    labels = np.array([d.group for d in world.documents] + [e.group for e in world.entities])
    doc_index = {d.id: i for i, d in enumerate(world.documents)}

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
        ids, sc = index.search(qvec[q], min(10, len(index)))
        dense = {world.documents[i].id: max(float(s), 0.0) for i, s in zip(ids, sc)}
        top = [doc_index[p] for p in ppr.retrieve_passages(pg, facts, gaz, qs[q].text, k, dense_hits=dense)]
        return {"seeds": np.array(top), "nodes": top}

    def score(q, k, d, out):
        got = {world.documents[i].id for i in out["nodes"] if i < P}
        sup = set(qs[q].supporting)
        return {"recall": len(got & sup) / len(sup), "result_size": len(out["nodes"]), "hops": qs[q].hops,
                "seed_overlap": seeds.seed_overlap(pg.adjacency, out["seeds"]),
                "label_entropy": label_entropy(labels[out["nodes"]])}

    methods = {"two-step": two_step, "fused": fused, "PPR": ppr_method, "dense": dense}
    return RetrievalBench(f"world-{world.scale}", len(qs), methods, score, pg.adjacency)


def wordnet_bench(n_query_pool: int = 5000, seed: int = 7) -> RetrievalBench:
    """WordNet synsets as queries (their own text embedded), over the whole WordNet graph: two-step,
    fused, dense. Quality: ``result_size`` (unique nodes), ``seed_overlap``, ``label_entropy``,
    ``majority_fraction`` of lexicographer labels."""
    from . import datasets, embed, seeds
    from .metrics import label_entropy, majority_fraction

    wn = datasets.wordnet()
    vecs = embed.LSAEmbedder(dim=64).fit_transform(wn.texts())
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
    from . import seeds

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


def restart_sweep(world, k=5, restarts=RESTARTS) -> list[dict]:
    """PPR restart λ against recall@k of supporting passages, per hop count, on the world's questions."""
    from . import embed, extract, ppr

    for lam in restarts:
        ppr._check_restart(lam)
    gaz = world.gazetteer()
    mentions = extract.gazetteer_mentions(world.documents, gaz)
    pg = ppr.passage_graph(world.documents, mentions, [e.id for e in world.entities])
    facts = ppr.fact_index(world.documents, mentions)
    lsa = embed.LSAEmbedder(64)
    index = embed.CosineIndex(lsa.fit_transform([d.text for d in world.documents]))
    dense = []  # the same for every λ: search once
    for qv in lsa.transform([q.text for q in world.questions]):
        ids, sc = index.search(qv, 10)
        dense.append({world.documents[i].id: max(float(s), 0.0) for i, s in zip(ids, sc)})
    out = []
    for lam in restarts:
        rec = {}
        for q, hits in zip(world.questions, dense):
            top = ppr.retrieve_passages(pg, facts, gaz, q.text, k, dense_hits=hits, restart=lam)
            rec.setdefault(q.hops, []).append(len(set(top) & set(q.supporting)) / len(q.supporting))
        out.append({"restart": lam, **{f"recall@{k}_{h}hop": float(np.mean(v)) for h, v in sorted(rec.items())}})
    return out


def scaling_curves(sizes: Sequence[int] = (10_000, 30_000, 100_000)) -> dict:
    """Seconds against edges on seeded power-law graphs (7 edges per node): one PPR query, one depth-2 BFS
    from 5 seeds, one igraph Leiden run. ``{name: (sizes, seconds)}``; each time is the best of 3
    (Leiden: one run)."""
    import scipy.sparse as sp

    from . import communities as cm
    from . import datasets, ppr, seeds

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
