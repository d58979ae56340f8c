"""Dense retrievers against BM25 on the class corpora's multi-hop questions, alone, fused and as PPR seeds.

    python benchmarks/dense.py [--quick] [--out build/bench]

On the world and the Factbook at class scale (``--quick``: ci scale), recall@5 and @10 of the questions'
supporting passages per hop count for BM25, TF-IDF cosine, LSA (64 dimensions, the series' old default, and
256) and WordLlama (256); RRF of BM25 with each dense retriever; and HippoRAG's PPR
(:class:`cookbook.query.hipporag.HippoRetriever`) seeded by BM25, LSA or WordLlama passage hits or by the question's
entities alone. Protocol of notebook 06: the questions
split per hop count into a dev and a test half (:func:`cookbook.harness.stats.dev_test_split`); PPR's restart λ
and the strongest baseline of each hop count are chosen on dev; every number in the tables is on test, each
method against that strongest baseline as a paired bootstrap (mean difference [95 % CI]). Further tables pair
the candidates for the default directly (WordLlama − LSA, alone, fused and as seeds) and compare the two
embedders at equal dimensions. Writes dense.json and dense.md, with load and embedding times (wall time).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from cookbook import embed, stats
from cookbook.arrays import top_k
from cookbook.data.corpus import load_corpus
from cookbook.harness import bench
from cookbook.index import extract
from cookbook.metrics import support_recall
from cookbook.query.hipporag import HippoRetriever
from cookbook.query.rerank import Hit, RRFReranker

KS = (5, 10)
DEPTH = 20  # hits per retriever fed to RRF (as in notebook 06)
N_SEEDS = 10  # passage hits per PPR seeding (as in notebook 06)
RESTARTS = (0.3, 0.5, 0.7)  # PPR λ, tuned on dev (notebook 06 tunes over 0.1-0.9 with one walk)
DENSE = {"LSA": ("lsa", 64), "LSA-256": ("lsa", 256), "WordLlama": ("wordllama", 256)}  # label: (name, dims)
BASELINES = ("BM25", "TF-IDF", *DENSE, *(f"RRF(BM25, {d})" for d in DENSE))
SEEDINGS = {**{f"PPR ({s} seeds)": s for s in ("BM25", *DENSE)}, "PPR (no dense seeds)": None}
HEAD_TO_HEAD = (("WordLlama", "LSA"), ("WordLlama", "LSA-256"), ("WordLlama", "BM25"),
                ("RRF(BM25, WordLlama)", "RRF(BM25, LSA)"), ("RRF(BM25, WordLlama)", "RRF(BM25, LSA-256)"),
                ("PPR (WordLlama seeds)", "PPR (LSA seeds)"), ("PPR (WordLlama seeds)", "PPR (LSA-256 seeds)"),
                ("PPR (WordLlama seeds)", "PPR (BM25 seeds)"), ("PPR (WordLlama seeds)", "PPR (no dense seeds)"),
                ("PPR (LSA seeds)", "PPR (no dense seeds)"))


def ranked(scores: np.ndarray, ids: list[str], k: int) -> list[tuple[str, float]]:
    """The ``k`` best ``(id, score)`` by score, ties by lower row."""
    return [(ids[i], float(scores[i])) for i in top_k(scores, k)]


def groups(hops: np.ndarray) -> list[tuple[int | str, np.ndarray]]:
    """``(hop count, mask)`` for each hop count, then ``("all", every question)``."""
    return [*((int(h), hops == h) for h in np.unique(hops)), ("all", np.ones(len(hops), bool))]


def run_corpus(name: str, scale: str, seed: int = 7) -> dict:
    corpus = load_corpus(name, scale, seed)
    qs, docs = corpus.questions, corpus.documents
    pids, texts, qtexts = [d.id for d in docs], [d.text for d in docs], [q.text for q in qs]
    hops = np.array([q.hops for q in qs])
    dev, test = (np.array(p) for p in stats.dev_test_split(hops.tolist(), seed))
    timing = {}

    gaz = corpus.gazetteer()
    mentions = extract.gazetteer_mentions(docs, gaz)  # as notebook 06 links passages on both corpora
    entity_ids = [e.id for e in corpus.entities]
    hippo, qvec = {}, {}
    for label, (dense, dim) in DENSE.items():
        t = time.perf_counter()
        hippo[label] = HippoRetriever.build(docs, mentions, entity_ids, gaz, dense=dense, dim=dim)
        timing[f"{label}: HippoRetriever.build (graph, facts, {len(docs)} passages embedded)"] = time.perf_counter() - t
        t = time.perf_counter()
        hippo[label].embedder.fit_transform(texts)
        timing[f"{label}: embed {len(docs)} passages again"] = time.perf_counter() - t
        t = time.perf_counter()
        qvec[label] = hippo[label].embedder.transform(qtexts)
        timing[f"{label}: embed {len(qs)} questions"] = time.perf_counter() - t
    hr = hippo["WordLlama"]  # the graph and facts are the same under both: only the dense index differs

    bm25 = embed.BM25(texts)
    tfidf = embed.TfidfVectorizer()
    X, Q = tfidf.fit_transform(texts), tfidf.transform(qtexts)
    lists = {"BM25": [ranked(bm25.scores(t), pids, DEPTH) for t in qtexts],
             "TF-IDF": [ranked(np.asarray((X @ Q[i].T).todense()).ravel(), pids, DEPTH) for i in range(len(qs))],
             **{label: [list(hippo[label].dense_hits(v, DEPTH).items()) for v in qvec[label]] for label in DENSE}}
    runs = {m: [[p for p, _ in hs] for hs in v] for m, v in lists.items()}
    rrf = RRFReranker()
    for label in DENSE:
        runs[f"RRF(BM25, {label})"] = [
            [h.id for h in rrf.fuse([[Hit(p, s, "bm25") for p, s in b], [Hit(p, s, "dense") for p, s in d]],
                                    k=max(KS))] for b, d in zip(lists["BM25"], lists[label])]

    def seeds_of(source, i):
        if source is None:
            return None
        hits = lists[source][i][:N_SEEDS]
        if source == "BM25":  # scores scaled to at most 1, like cosines (notebook 06's `scaled`)
            best = max((s for _, s in hits), default=0.0) or 1.0
            return {p: s / best for p, s in hits if s > 0}
        return dict(hits)

    chosen_lambda = {}
    for method, source in SEEDINGS.items():
        t = time.perf_counter()
        dev_recall = {lam: float(np.mean([support_recall(hr.retrieve(qs[i].text, KS[0], dense_hits=seeds_of(source, i),
                                                                      restart=lam), qs[i].supporting) for i in dev]))
                      for lam in RESTARTS}
        lam = max(RESTARTS, key=lambda x: dev_recall[x])  # ties → the first
        chosen_lambda[method] = {"lambda": lam, "dev_recall@5": dev_recall}
        runs[method] = [hr.retrieve(q.text, max(KS), dense_hits=seeds_of(source, i), restart=lam)
                        for i, q in enumerate(qs)]
        timing[f"{method}: λ tuned on dev, then every question"] = time.perf_counter() - t

    recall = {k: {m: np.array([support_recall(r[:k], q.supporting) for r, q in zip(rs, qs)])
                  for m, rs in runs.items()} for k in KS}
    # With N_SEEDS = 10 passage seeds, PPR's top 10 can be just the seed set reordered: say how often.
    seed_set = {m: float(np.mean([set(runs[m][i][:N_SEEDS]) == set(seeds_of(s, i)) for i in range(len(qs))]))
                for m, s in SEEDINGS.items() if s is not None}

    def paired(a, b, sel):
        return stats.paired_bootstrap(a[test][sel[test]], b[test][sel[test]], seed=seed)

    table = {}
    for k in KS:
        table[k] = {}
        for h, sel in groups(hops):
            strongest = max(BASELINES, key=lambda m: (recall[k][m][dev][sel[dev]].mean(), m))
            rows = {}
            for m, r in recall[k].items():
                rows[m] = {"test_mean": float(r[test][sel[test]].mean()), "dev_mean": float(r[dev][sel[dev]].mean()),
                           "all_mean": float(r[sel].mean())}
                if m != strongest:
                    pr = paired(r, recall[k][strongest], sel)
                    rows[m].update(diff=pr.mean_diff, ci_low=pr.ci_low, ci_high=pr.ci_high, wins=pr.wins,
                                   losses=pr.losses)
            table[k][h] = {"n_test": int(sel[test].sum()), "n_dev": int(sel[dev].sum()), "strongest": strongest,
                           "methods": rows}
    pairs = {k: {f"{a} − {b}": {h: str(paired(recall[k][a], recall[k][b], sel)) for h, sel in groups(hops)}
                 for a, b in HEAD_TO_HEAD} for k in KS}

    # Equal dimensions: LSA and WordLlama at each of WordLlama's truncations (dense retrieval alone, test half).
    dims = {}
    for dim in embed.WORDLLAMA_DIMS:
        got = {}
        for label, dense in (("LSA", "lsa"), ("WordLlama", "wordllama")):
            e = embed.dense_embedder(dense, dim)
            index = embed.CosineIndex(e.fit_transform(texts))
            got[label] = np.array([support_recall([pids[j] for j in index.search(v, KS[0])[0]], q.supporting)
                                   for v, q in zip(e.transform(qtexts), qs)])
        dims[dim] = {h: {"LSA": float(got["LSA"][test][sel[test]].mean()),
                         "WordLlama": float(got["WordLlama"][test][sel[test]].mean()),
                         "WordLlama − LSA": str(paired(got["WordLlama"], got["LSA"], sel))} for h, sel in groups(hops)}
    return {"corpus": name, "scale": corpus.scale, "passages": hr.graph.n_passages, "questions": len(qs),
            "hops": {int(h): int((hops == h).sum()) for h in np.unique(hops)}, "n_dev": len(dev), "n_test": len(test),
            "lambda": chosen_lambda, "table": table, "pairs": pairs, "ppr_top10_is_the_seed_set": seed_set,
            "dims": dims, "timing_s": timing}


def markdown(res: dict) -> str:
    hop_keys = list(res["table"][KS[0]])
    hop_name = {h: f"{h}-hop" if h != "all" else "all" for h in hop_keys}
    per_hop = ", ".join(f"{n} {h}-hop" for h, n in res["hops"].items())
    lines = [f"### {res['corpus']}-{res['scale']}: {res['passages']} passages, {res['questions']} questions "
             f"({per_hop}); dev {res['n_dev']}, test {res['n_test']}\n"]
    for k in KS:
        t = res["table"][k]
        head = " | ".join(f"{hop_name[h]} (n={t[h]['n_test']})" for h in hop_keys)
        lines += [f"Recall@{k} on the test half: mean, and − strongest baseline (chosen on dev; marked **base**) "
                  "as mean difference [95 % CI]", "", f"| method | {head} |", "|---|" + "---|" * len(hop_keys)]
        for m in t[hop_keys[0]]["methods"]:
            cells = []
            for h in hop_keys:
                r = t[h]["methods"][m]
                cells.append(f"{r['test_mean']:.3f} **base**" if m == t[h]["strongest"] else
                             f"{r['test_mean']:.3f} ({r['diff']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}])")
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["Head to head on the test half (paired bootstrap, a − b):", "",
              "| k | a − b | " + " | ".join(hop_name[h] for h in hop_keys) + " |",
              "|---|---|" + "---|" * len(hop_keys)]
    for k in KS:
        for pair, by_h in res["pairs"][k].items():
            lines.append(f"| {k} | {pair} | " + " | ".join(by_h[h] for h in hop_keys) + " |")
    lines += ["", f"Dense retrieval alone at equal dimensions, recall@{KS[0]} on the test half (LSA fitted on the "
              "corpus, capped at its TF-IDF rank; WordLlama's Matryoshka prefix):", "",
              "| dims | hops | LSA | WordLlama | WordLlama − LSA |", "|---|---|---|---|---|"]
    for dim, by_h in res["dims"].items():
        for h, row in by_h.items():
            lines.append(f"| {dim} | {h} | {row['LSA']:.3f} | {row['WordLlama']:.3f} | {row['WordLlama − LSA']} |")
    lines += ["", f"PPR's top {N_SEEDS} is exactly its {N_SEEDS} seed passages (reordered) on this share of "
              f"questions, where recall@{N_SEEDS} of PPR measures its seeds alone: "
              + "; ".join(f"{m} {v:.0%}" for m, v in res["ppr_top10_is_the_seed_set"].items()) + ".",
              "", "PPR λ chosen on dev: " + "; ".join(f"{m} {v['lambda']}" for m, v in res["lambda"].items()) + ".",
              "", "Wall time (this run): " + "; ".join(f"{k} {v:.2f} s" for k, v in res["timing_s"].items()) + "."]
    return "\n".join(lines)


def load_times() -> dict:
    """Seconds to import wordllama and to load its model from the wheel, in this process (first calls)."""
    t = time.perf_counter()
    import wordllama  # noqa: F401

    imported = time.perf_counter() - t
    t = time.perf_counter()
    embed.WordLlamaEmbedder()
    return {"import wordllama": imported, "load l2_supercat 256 (first WordLlamaEmbedder)": time.perf_counter() - t}


def main(argv=None):
    args, out = bench.script_args(__doc__, argv)
    t0 = time.perf_counter()
    scale = "ci" if args.quick else "class"
    loaded = load_times()
    results = {c: run_corpus(c, scale) for c in ("world", "factbook")}
    md = [f"## Dense retrievers vs BM25 ({scale} scale)\n", f"Machine: {bench.machine()}. Total "
          f"{time.perf_counter() - t0:.0f} s. " + "; ".join(f"{k} {v:.2f} s" for k, v in loaded.items()) + ".\n"]
    md += [markdown(r) + "\n" for r in results.values()]
    text = "\n".join(md)
    bench.write_results(out, "dense", {"scale": scale, "load_s": loaded, **results, "markdown": text})
    Path(out / "dense.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return results


if __name__ == "__main__":
    main()
