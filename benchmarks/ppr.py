"""PPR engines on an ogbn-arxiv-sized graph, in one process, with ratios.

    python benchmarks/ppr.py                 # 169,343 nodes, ~1.17M edges, 20 queries of 5 seeds
    python benchmarks/ppr.py --quick         # 20,000 nodes, for a smoke run

Every engine answers the same queries (5 random seed nodes each, λ = 0.5, tol 1e-6); medians are over
the queries after one warm-up call. Also checks that each engine's top-10 equals the exact solve's.
Writes build/bench/ppr.json and prints a markdown ratio table.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from cookbook import bench, datasets, ppr
from cookbook.arrays import top_k


def main(argv=None):
    def extra(ap):
        ap.add_argument("--queries", type=int, default=20)
        ap.add_argument("--nx-queries", type=int, default=None, help="networkx is slow: fewer queries (default all)")
        ap.add_argument("--batch", type=int, default=64)

    args, out = bench.script_args(__doc__, argv, extra)
    n, m = (20_000, 138_000) if args.quick else (169_343, 1_166_243)
    t0 = time.perf_counter()
    g = datasets.power_law_graph(n, m, exponent=2.5, seed=0)
    A = sp.csr_matrix(g.get_adjacency_sparse(), dtype=float)
    W = ppr.transition_matrix(A)
    Wc = W.tocsc()
    dangling = ppr.dangling_mask(W)
    print(f"graph: {n} nodes, {g.ecount()} edges, max degree {max(g.degree())}, "
          f"{int((np.diff(A.indptr) == 0).sum())} isolated; built in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(0)
    queries = [rng.choice(n, 5, replace=False) for _ in range(args.queries + 1)]  # +1 warm-up

    def v0_of(seeds):
        v = np.zeros(n)
        v[seeds] = 1.0 / len(seeds)
        return v

    exact = {}

    def cookbook_exact(seeds):
        s = ppr.personalized_pagerank(W, v0_of(seeds), restart=0.5, tol=1e-6, dangling=dangling).scores
        exact[tuple(seeds)] = s
        return top_k(s, 10)

    def cookbook_topk(seeds):
        return ppr.top_k_pagerank(Wc, v0_of(seeds), 10, restart=0.5, dangling=dangling).ids

    def igraph_prpack(seeds):
        s = np.array(g.personalized_pagerank(reset_vertices=list(map(int, seeds)), damping=0.5))
        return top_k(s, 10)

    rows, agree = {}, {}
    for name, fn in [("cookbook exact", cookbook_exact), ("cookbook top-10", cookbook_topk),
                     ("igraph PRPACK", igraph_prpack)]:
        times, outs = bench.time_calls(fn, queries)
        rows[name] = bench.summarize(times)
        if name != "cookbook exact":
            # a tol=1e-6 solve can itself mis-order near-ties; agreement is measured, not assumed
            agree[name] = float(np.mean([set(o.tolist()) == set(top_k(exact[tuple(q)], 10))
                                         for o, q in zip(outs, queries)]))
        print(f"{name:18} p50 {rows[name]['p50'] * 1e3:8.2f} ms", flush=True)

    import networkx as nx

    t0 = time.perf_counter()
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(g.get_edgelist())
    build_nx = time.perf_counter() - t0
    nq = args.nx_queries or args.queries

    def networkx_pagerank(seeds):
        s = nx.pagerank(G, alpha=0.5, personalization={int(i): 1.0 for i in seeds}, tol=1e-6 / n)
        return np.array(sorted(s, key=lambda i: (-s[i], i))[:10])

    times, _ = bench.time_calls(networkx_pagerank, queries[: nq + 1])
    rows["networkx pagerank"] = bench.summarize(times)
    print(f"networkx pagerank  p50 {rows['networkx pagerank']['p50'] * 1e3:8.2f} ms (graph build {build_nx:.1f} s)")

    B = args.batch
    V0 = np.stack([v0_of(rng.choice(n, 5, replace=False)) for _ in range(B)], axis=1)
    ppr.personalized_pagerank_batch(W, V0[:, :2])  # warm-up
    t0 = time.perf_counter()
    ppr.personalized_pagerank_batch(W, V0, restart=0.5, tol=1e-6)
    batch_s = time.perf_counter() - t0
    rows["cookbook batched"] = bench.summarize([batch_s / B])
    print(f"cookbook batched   {B / batch_s:8.1f} queries/s ({batch_s * 1e3 / B:.2f} ms per query amortised)")

    table = bench.ratio_table(rows, baseline="networkx pagerank")
    vs_igraph = bench.ratio_table(rows, baseline="igraph PRPACK")
    print("\n" + table + "\n\n" + vs_igraph)
    print("\ntop-10 agreement with the exact solve:", agree)
    payload = {"graph": {"nodes": n, "edges": g.ecount()}, "latency_s": rows, "top10_agreement": agree,
               "batch_size": B, "batched_qps": B / batch_s, "table": table, "table_vs_igraph": vs_igraph}
    print(f"wrote {bench.write_results(out, 'ppr', payload)}")
    return payload


if __name__ == "__main__":
    main()
