"""Retrieval methods on a saved manifest: the world's multi-hop questions and WordNet.

    python benchmarks/retrieval.py [--quick] [--out build/bench]

Per-query CSV, aggregate JSON (latency min/p50/p95/p99/max, quality mean ± std), the manifests, and plots.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cookbook import bench, experiments, plots  # noqa: E402


def run(quick: bool, out: Path) -> dict:
    summary = {}
    setups = [(experiments.world_bench("class"), 20 if quick else 60),
              (experiments.wordnet_bench(), 20 if quick else 100)]
    if not quick:
        setups.insert(1, (experiments.world_bench("large"), 100))
    for b, n in setups:
        manifest = bench.make_manifest(b.name, b.n_queries, n, seed=7)
        (out / f"manifest-{b.name}.json").write_text(manifest.to_json(), encoding="utf-8")
        rows = bench.run_manifest(manifest, b.methods, b.score, progress=True)
        bench.write_csv(rows, out / f"retrieval-{b.name}.csv")
        agg = bench.aggregate(rows, by=("method", "top_k", "depth"))
        bench.write_results(out, f"retrieval-{b.name}", {"manifest": manifest.to_json(), "aggregate": agg})
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        plots.latency_distributions(rows, ax=axes[0], title=f"{b.name}: latency per query")
        plots.overlap_scatter(rows, ax=axes[1], title=f"{b.name}: seed overlap, topK = 10")
        fig.tight_layout()
        fig.savefig(out / f"retrieval-{b.name}.png", dpi=110)
        plt.close(fig)
        f10 = bench.mean_by(rows, "seed_overlap", method="fused", top_k=10, depth=0)
        b10 = bench.mean_by(rows, "seed_overlap", method="two-step", top_k=10, depth=0)
        summary[b.name] = {
            "queries": n,
            "seed_overlap_top10": {"fused": f10, "two-step": b10, "ratio": b10 / f10 if f10 else float("inf")},
            "unique_nodes_top10_depth1": {m: bench.mean_by(rows, "result_size", method=m, top_k=10, depth=1)
                                          for m in ("fused", "two-step")},
            "p50_ms": {m: bench.summarize([r["latency_s"] for r in rows if r["method"] == m])["p50"] * 1e3
                       for m in b.methods},
        }
        if "recall" in rows[0]:
            summary[b.name]["recall_at5_2hop"] = {m: bench.mean_by(rows, "recall", method=m, top_k=5, depth=0, hops=2)
                                                  for m in b.methods}
    return summary


def main(argv=None):
    args, out = bench.script_args(__doc__, argv)
    summary = run(args.quick, out)
    bench.write_results(out, "retrieval-summary", summary)
    for name, s in summary.items():
        print(name, s)
    return summary


if __name__ == "__main__":
    main()
