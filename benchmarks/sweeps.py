"""Parameter sweeps: overlap penalty × oversample (WordNet: overlap vs ANN score; world: vs recall), the PPR
restart λ against multi-hop recall on the world, and the overlap-aware seeds' trade-off (tuned on dev questions,
reported on test questions) on the world and the Factbook, as notebooks 07 and 09 show it.

    python benchmarks/sweeps.py [--quick] [--out build/bench]
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from cookbook import data as datasets  # noqa: E402
from cookbook import embed, metrics
from cookbook.data.corpus import load_corpus  # noqa: E402
from cookbook.harness import bench, experiments, plots, tradeoff  # noqa: E402
from cookbook.query import hipporag  # noqa: E402


def run(quick: bool, out: Path) -> dict:
    wn = datasets.wordnet()
    vecs = experiments.wordnet_embedding(wn)
    index = embed.CosineIndex(vecs)
    qs = vecs[np.random.default_rng(7).choice(len(wn.ids), 20 if quick else 100, replace=False)]
    wn_pts = experiments.penalty_sweep(index, wn.adjacency, qs)

    world = datasets.load_world("class")
    hippo = hipporag.HippoRetriever.from_world(world)
    w_qs = hippo.embedder.transform([q.text for q in world.questions])

    def recall_of(i, seed_nodes):
        return metrics.support_recall([world.documents[int(n)].id for n in seed_nodes], world.questions[i].supporting)

    world_pts = experiments.penalty_sweep(hippo.index, hippo.graph.adjacency, w_qs, top_k=5, recall_of=recall_of)
    lam_pts = experiments.restart_sweep(hippo, world.questions)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    plots.tradeoff(wn_pts, x="overlap", y="ann", group="oversample", label="penalty", ax=axes[0],
                   title="WordNet, topK=10: overlap vs ANN score")
    plots.tradeoff(world_pts, x="overlap", y="recall", group="oversample", label="penalty", ax=axes[1],
                   title="world, topK=5: overlap vs recall of supporting passages")
    for key in [k for k in lam_pts[0] if k.startswith("recall")]:
        axes[2].plot([p["restart"] for p in lam_pts], [p[key] for p in lam_pts], "o-", label=key)
    axes[2].set_xlabel("restart λ")
    axes[2].set_ylabel("recall")
    axes[2].set_title("PPR restart vs multi-hop recall (world)")
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(out / "sweeps.png", dpi=110)
    plt.close(fig)
    result = {"wordnet_penalty_oversample": wn_pts, "world_penalty_oversample": world_pts, "ppr_restart": lam_pts,
              "seed_tradeoff": {}}
    for name in ("world",) if quick else ("world", "factbook"):
        corpus = load_corpus(name, "class")
        tr = tradeoff.seed_tradeoff(corpus, hipporag.HippoRetriever.from_world(corpus))
        print(tr.table())
        result["seed_tradeoff"][name] = {
            "penalty": tr.penalty, "oversample": tr.oversample, "dev": len(tr.dev), "test": len(tr.test),
            "overlap_quartiles": {"two-step": tr.quartiles(tr.overlap_two_step),
                                  "fused": tr.quartiles(tr.overlap_fused)},
            "overlap_cut": str(tr.overlap_cut), "recall_change": {str(h): str(r) for h, r in tr.recall_change.items()},
            "latency_ratio": tr.latency_ratio}
    bench.write_results(out, "sweeps", result)
    return result


def main(argv=None):
    args, out = bench.script_args(__doc__, argv)
    res = run(args.quick, out)
    for p in res["ppr_restart"]:
        print(p)
    return res


if __name__ == "__main__":
    main()
