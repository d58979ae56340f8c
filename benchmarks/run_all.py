"""Run every benchmark and write build/bench/summary.md (tables) beside their CSV, JSON and PNG files.

    python benchmarks/run_all.py            # full: ogbn-arxiv-sized graphs, large world (~20 min on 2 cores)
    python benchmarks/run_all.py --quick    # under 2 minutes: small graphs, fewer queries

Notebook 05's map step against a fake endpoint with latency (concurrency and response cache) is benchmarks/llm.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engines  # noqa: E402
import ppr as ppr_bench  # noqa: E402
import retrieval  # noqa: E402
import sweeps  # noqa: E402
from cookbook.harness import bench  # noqa: E402


def md_table(rows: list[dict], cols: list[str]) -> str:
    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def main(argv=None):
    args, out = bench.script_args(__doc__, argv)
    t0 = time.perf_counter()
    q = ["--quick"] if args.quick else []
    p = ppr_bench.main(q + ["--out", str(out)] + (["--queries", "10", "--nx-queries", "2"] if args.quick else []))
    r = retrieval.main(q + ["--out", str(out)])
    hippo = r.pop("hipporag")
    s = sweeps.main(q + ["--out", str(out)])
    e = engines.main(q + ["--out", str(out)])
    parts = [
        f"# Benchmark summary ({'quick' if args.quick else 'full'})\n",
        f"Machine: {bench.machine()}. Total time {time.perf_counter() - t0:.0f} s.\n",
        f"## Personalized PageRank ({p['graph']['nodes']} nodes, {p['graph']['edges']} edges; 5 seeds, λ=0.5)\n",
        p["table_top_k"], "", p["table"], "", p["table_vs_igraph"], "",
        f"The plain top-k call (`top_k_push`, exact by default): **{p['speedup_exact_top_k_vs_igraph']:.1f}×** "
        "igraph PRPACK (p50, same run).\n",
        f"Local push, the approximate option ({p['push']['rounds']} rounds) top-10: "
        f"**{p['speedup_push_vs_igraph']:.1f}×** igraph PRPACK, "
        f"**{p['speedup_push_vs_networkx']:.0f}×** networkx (p50, same run); L1 error of its lower bounds "
        f"{p['push']['l1_error_p50']:.3g}; {p['push']['touched_p50']} nodes touched (p50); certified ranks "
        f"{p['push']['certified_ranks_mean']:.0%}.\n",
        f"Batched queries/s: {', '.join(f'{k} {v:.1f}' for k, v in p['batched_qps'].items())}.\n",
        "Top-10 agreement with the tol-1e-9 exact ranking (ties by id; share of queries, as a set / in order): "
        + "; ".join(f"{k} {v['set']:.0%} / {v['ordered']:.0%}" for k, v in p["top10_agreement"].items()) + ".\n",
        "Why local push cannot be faster here: exact gap between ranks 10 and 11 "
        + ", ".join(f"{k} {v:.2g}" for k, v in p["push"]["gap_10_11_quantiles"].items()) + "; "
        f"nodes within 0…4 hops of the seeds {p['push']['hops']['nodes_within_h']}, exact PPR mass they hold "
        f"{p['push']['hops']['mass_within_h']}.\n",
        f"## BFS, depth 2, 5 seeds ({e['bfs'][0]['nodes']} nodes; results agree: {e['bfs'][0]['agrees']})\n",
        md_table(e["bfs"], ["engine", "p50 ms", "vs igraph", "vs networkx"]), "",
        "## Community detection\n",
        md_table(e["communities"], ["graph", "method", "seconds", "modularity", "communities", "nmi"]), "",
        "## Co-occurrence graph build\n",
        md_table(e["cooccurrence"], ["world", "mentions", "documents", "networkx loop s", "sparse s", "speed-up",
                                     "incidence s", "X.T @ X s", "reading mentions s", "from arrays s",
                                     "speed-up from arrays"]), "",
        "`sparse s` builds from mention objects (`graph.cooccurrence_graph`); `from arrays s` from mentions read "
        "once into arrays (`graph.mention_arrays`, timed as `reading mentions s`), as a corpus's graphs can share.",
        "",
        "## Scaling (log-log slope of time vs edges)\n",
        md_table([{"what": k, "slope": v["slope"], "edges": v["edges"][-1], "seconds at largest": v["seconds"][-1]}
                  for k, v in e["scaling"].items()], ["what", "slope", "edges", "seconds at largest"]), "",
        "## Retrieval (manifests saved beside the CSVs)\n",
    ]
    for name, x in r.items():
        parts.append(f"- **{name}** ({x['queries']} queries): seed overlap at topK=10 two-step "
                     f"{x['seed_overlap_top10']['two-step']:.4f} vs fused {x['seed_overlap_top10']['fused']:.4f} "
                     f"(**{x['seed_overlap_top10']['ratio']:.1f}×** lower); unique nodes at topK=10, depth 1: "
                     f"{x['unique_nodes_top10_depth1']}; p50 ms {x['p50_ms']}"
                     + (f"; recall@5 on 2-hop {x['recall_at5_2hop']}" if "recall_at5_2hop" in x else ""))
    parts += ["", "## HippoRAG at scale: seeding, baselines, latency before/after\n", hippo["markdown"]]
    parts += ["", "## PPR restart sweep (world, recall@5 by hops)\n",
              md_table(s["ppr_restart"], list(s["ppr_restart"][0]))]

    # LLM calls (issue 17, part 5): a block of its own, apart from the graph sections above.
    import llm as llm_bench

    lm = llm_bench.main(q + ["--out", str(out)])
    parts += ["", f"## LLM map step, notebook 05 ({lm['corpus']} {lm['scale']}: {lm['reports']} reports, "
              f"{lm['questions']} questions, {lm['map_calls']} map calls; fake endpoint, "
              f"{lm['latency_s']} s per call)\n", lm["table"]]

    (out / "summary.md").write_text("\n".join(parts) + "\n", encoding="utf-8")
    print(f"\nwrote {out / 'summary.md'} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
