"""What case-insensitive name matching (every matcher's default) costs or buys against case-sensitive matching.

    python benchmarks/case_sensitivity.py [--quick] [--out build/bench]

At class scale (ci with --quick): the world's gazetteer mentions against its gold mentions (precision and
recall, entity match, with a 95% bootstrap CI over documents of the difference), and HippoRetriever's multi-hop
recall@5 on both corpora (documents and questions matched the same way; dense hits as notebook 06 seeds them),
as a paired difference with a 95% CI over the test half of the questions and over all of them. Writes
case_sensitivity.json and prints a table.
"""

from __future__ import annotations

import numpy as np

from cookbook import stats
from cookbook.data import load_corpus
from cookbook.harness import bench
from cookbook.index import extract
from cookbook.metrics import support_recall
from cookbook.query import hipporag

K = 5


def mention_scores(corpus) -> dict:
    """Micro precision and recall of the gazetteer's mentions per setting, and the CI of their difference
    (insensitive − sensitive) over documents resampled with replacement."""
    gaz = corpus.gazetteer()
    found = {cs: extract.gazetteer_mentions(corpus.documents, gaz, case_sensitive=cs) for cs in (False, True)}
    docs = [d.id for d in corpus.documents]
    gold_by = {d: set() for d in docs}
    for m in corpus.mentions:
        gold_by[m.doc_id].add((m.start, m.end, m.entity_id))
    pred_by = {cs: {d: set() for d in docs} for cs in found}
    for cs, ms in found.items():
        for m in ms:
            pred_by[cs][m.doc_id].add((m.start, m.end, m.entity_id))
    # per document: tp, predicted, gold — micro scores of any resample are sums over its documents
    counts = {cs: np.array([(len(pred_by[cs][d] & gold_by[d]), len(pred_by[cs][d]), len(gold_by[d])) for d in docs])
              for cs in found}

    def micro(cs, idx, which):
        tp, pred, gold = counts[cs][idx].sum(axis=0)
        return tp / pred if which == "precision" else tp / gold

    out = {}
    for which in ("precision", "recall"):
        diff = stats.bootstrap_statistic(lambda idx, w=which: micro(False, idx, w) - micro(True, idx, w), len(docs),
                                         n_boot=2000)
        out[which] = {"insensitive": micro(False, np.arange(len(docs)), which),
                      "sensitive": micro(True, np.arange(len(docs)), which),
                      "diff": diff.mean, "ci": [diff.ci_low, diff.ci_high]}
    out["mentions"] = {"insensitive": len(found[False]), "sensitive": len(found[True]), "gold": len(corpus.mentions)}
    return out


def recall_at_k(corpus) -> dict:
    """HippoRetriever's recall@K per question for each setting; paired CIs on the test half and on all."""
    gaz, ids = corpus.gazetteer(), [e.id for e in corpus.entities]
    per = {}
    for cs in (False, True):
        ms = extract.gazetteer_mentions(corpus.documents, gaz, case_sensitive=cs)
        hr = hipporag.HippoRetriever.build(corpus.documents, ms, ids, gaz, case_sensitive=cs)
        per[cs] = np.array([support_recall(hr.retrieve(q.text, K, dense_hits=hr.dense_hits(q.text)), q.supporting)
                            for q in corpus.questions])
    _, test = stats.dev_test_split([q.hops for q in corpus.questions], seed=7)
    test = np.array(test)
    out = {"questions": len(corpus.questions), "test_questions": len(test)}
    for part, idx in (("test", test), ("all", np.arange(len(corpus.questions)))):
        r = stats.paired_bootstrap(per[False][idx], per[True][idx])
        out[part] = {"insensitive": float(per[False][idx].mean()), "sensitive": float(per[True][idx].mean()),
                     "diff": r.mean_diff, "ci": [r.ci_low, r.ci_high], "wins": r.wins, "losses": r.losses}
    return out


def main(argv=None) -> dict:
    args, out = bench.script_args(__doc__, argv)
    scale = "ci" if args.quick else "class"
    world = load_corpus("world", scale)
    result = {"scale": scale, "k": K, "world_mentions": mention_scores(world),
              "recall": {name: recall_at_k(c) for name, c in (("world", world),
                                                               ("factbook", load_corpus("factbook", scale)))}}
    bench.write_results(out, "case_sensitivity", result)
    m = result["world_mentions"]
    print(f"Mentions on the world ({scale}), case-insensitive vs case-sensitive, entity match against gold:")
    for which in ("precision", "recall"):
        r = m[which]
        print(f"  {which:9s} {r['insensitive']:.4f} vs {r['sensitive']:.4f}: difference {r['diff']:+.4f} "
              f"[{r['ci'][0]:+.4f}, {r['ci'][1]:+.4f}] over {len(world.documents)} documents")
    n = m["mentions"]
    print(f"  mentions found {n['insensitive']} vs {n['sensitive']} (gold {n['gold']})")
    print(f"HippoRetriever recall@{K}, case-insensitive − case-sensitive (paired, 95% CI):")
    for name, r in result["recall"].items():
        for part in ("test", "all"):
            p = r[part]
            print(f"  {name:8s} {part:4s} {p['insensitive']:.4f} vs {p['sensitive']:.4f}: {p['diff']:+.4f} "
                  f"[{p['ci'][0]:+.4f}, {p['ci'][1]:+.4f}] ({p['wins']} wins, {p['losses']} losses, "
                  f"{r['test_questions'] if part == 'test' else r['questions']} questions)")
    return result


if __name__ == "__main__":
    main()
