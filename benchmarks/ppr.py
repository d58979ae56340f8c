"""PPR engines on an ogbn-arxiv-sized graph, in one process, with ratios.

    python benchmarks/ppr.py                 # 169,343 nodes, ~1.17M edges, 40 queries of 5 seeds
    python benchmarks/ppr.py --quick         # 20,000 nodes, for a smoke run

Every engine answers the same queries (5 random seed nodes each, λ = 0.5, tol 1e-6), the engines taking
turns on each query (:func:`interleaved`); medians are over the queries after one warm-up call. Each
engine's top-10 is compared with the exact ranking (a tol-1e-10 solve, ties by id), as a set and in order.
The headline table (``table_top_k``) is the plain top-k call (``top_k_push``: exact by default), its
approximate option (``rounds=3``), the certified series (``top_k_pagerank``) and igraph PRPACK: p50, the
ratio of PRPACK's p50 to each (same run), both again in CPU time (steadier on a shared machine) and the share
of queries whose top-10 set equals the exact one.
For local push it also records what decides its speed and
accuracy: nodes touched, the L1 error, certified ranks, the exact scores' gap between ranks 10 and 11,
and how the exact mass and the ball sizes grow with hop distance from the seeds.
Each cookbook engine runs twice: on a prepared ``Walk`` and on the plain transition matrix, as a notebook
calls it (its walk is prepared on the first call and kept); ``plain_vs_prepared`` holds the ratios of their
medians, and ``prepare_s`` what preparing costs once.
Writes build/bench/ppr.json and prints a markdown ratio table.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from cookbook import data as datasets
from cookbook.arrays import top_k
from cookbook.harness import bench
from cookbook.linalg import ppr
from cookbook.linalg import top_k as ppr_top_k


def hop_profile(A, reference, queries, hops: int = 4) -> dict:
    """Mean over ``queries`` of the nodes within h hops of the seeds and the exact PPR mass they hold."""
    nodes, mass = np.zeros(hops + 1), np.zeros(hops + 1)
    for q in queries:
        ball = np.zeros(A.shape[0], dtype=bool)
        ball[q] = True
        for h in range(hops + 1):
            nodes[h] += ball.sum() / len(queries)
            mass[h] += reference[tuple(q)][ball].sum() / len(queries)
            ball |= (A.T @ ball.astype(float)) > 0
    return {"nodes_within_h": nodes.round().astype(int).tolist(), "mass_within_h": mass.round(4).tolist()}


def interleaved(engines: list[tuple], queries: list) -> dict:
    """name → (seconds per query, outputs, CPU seconds per query), timing every engine on each query in turn
    (one untimed warm-up call each on the first query; the order rotates per query), so that a machine whose
    load drifts during the run slows every engine alike and the ratios of one run stay comparable. The CPU
    time (the process's, :func:`time.process_time`) leaves out the time other processes hold the cores: on a
    shared machine it is the steadier of the two.

    >>> t = interleaved([("a", abs), ("b", lambda x: -x)], [-1, 2, -3])
    >>> t["a"][1], t["b"][1], len(t["a"][0]), len(t["a"][2])
    ([1, 2, 3], [1, -2, 3], 3, 3)
    """
    for _, fn in engines:
        fn(queries[0])
    out = {name: ([], [], []) for name, _ in engines}
    for i, q in enumerate(queries):
        for name, fn in engines[i % len(engines):] + engines[:i % len(engines)]:
            t0, c0 = time.perf_counter(), time.process_time()
            res = fn(q)
            out[name][0].append(time.perf_counter() - t0)
            out[name][2].append(time.process_time() - c0)
            out[name][1].append(res)
    return out


def top_k_table(rows: dict, agree: dict, names: list[str]) -> str:
    """Markdown: per engine its p50, igraph PRPACK's p50 over it (same run), the same in CPU time (``cpu_p50``)
    and its top-10 set agreement.

    >>> print(top_k_table({"a": {"p50": 0.01, "cpu_p50": 0.008}, "igraph PRPACK": {"p50": 0.5, "cpu_p50": 0.4}},
    ...                   {"a": {"set": 1.0}, "igraph PRPACK": {"set": 1.0}}, ["a"]))  # doctest: +NORMALIZE_WHITESPACE
    | engine | p50 ms | × igraph PRPACK | CPU p50 ms | × PRPACK (CPU) | top-10 set = exact |
    |---|---|---|---|---|---|
    | a | 10.00 | 50.0× | 8.00 | 50.0× | 100% |
    | igraph PRPACK | 500.00 | 1.0× | 400.00 | 1.0× | 100% |
    """
    base, cpu = rows["igraph PRPACK"]["p50"], rows["igraph PRPACK"]["cpu_p50"]
    lines = ["| engine | p50 ms | × igraph PRPACK | CPU p50 ms | × PRPACK (CPU) | top-10 set = exact |",
             "|---|---|---|---|---|---|"]
    for name in [*names, "igraph PRPACK"]:
        r = rows[name]
        lines.append(f"| {name} | {r['p50'] * 1e3:.2f} | {base / r['p50']:.1f}× | {r['cpu_p50'] * 1e3:.2f} | "
                     f"{cpu / r['cpu_p50']:.1f}× | {agree[name]['set']:.0%} |")
    return "\n".join(lines)


def main(argv=None):
    def extra(ap):
        ap.add_argument("--queries", type=int, default=40)
        ap.add_argument("--nx-queries", type=int, default=3, help="networkx is slow: fewer queries")
        ap.add_argument("--rounds", type=int, default=3, help="push rounds (hops) of the local top-k")
        ap.add_argument("--batch", type=int, default=64)

    args, out = bench.script_args(__doc__, argv, extra)
    n, m = (20_000, 138_000) if args.quick else (169_343, 1_166_243)
    t0 = time.perf_counter()
    g = datasets.power_law_graph(n, m, exponent=2.5, seed=0)
    A = sp.csr_matrix(g.get_adjacency_sparse(), dtype=float)
    W = ppr.transition_matrix(A)
    t0 = time.perf_counter()
    walk = ppr.Walk(W.copy())
    walk.csc, walk.csr, walk.inflow, walk.balance, walk.by_balance  # noqa: B018 — built now, so the timed calls below do not pay
    prepare_s = time.perf_counter() - t0
    print(f"graph: {n} nodes, {g.ecount()} edges, max degree {max(g.degree())}, "
          f"{int((np.diff(A.indptr) == 0).sum())} isolated; built in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(0)
    queries = [rng.choice(n, 5, replace=False) for _ in range(args.queries + 1)]  # +1 warm-up

    def v0_of(seeds):
        v = np.zeros(n)
        v[seeds] = 1.0 / len(seeds)
        return v

    # the reference ranking: a tol-1e-10 solve (untimed), ties by id
    reference = {tuple(q): ppr.personalized_pagerank(walk, v0_of(q), tol=1e-10, max_iter=200).scores
                 for q in queries}
    push_runs = {}

    def cookbook_exact(seeds, M=walk):
        s = ppr.personalized_pagerank(M, v0_of(seeds), restart=0.5, tol=1e-6).scores
        return top_k(s, 10)

    def cookbook_topk(seeds, M=walk):
        return ppr_top_k.top_k_pagerank(M, v0_of(seeds), 10, restart=0.5).ids

    def cookbook_plain_top_k(seeds, M=walk):
        return ppr_top_k.top_k_push(M, v0_of(seeds), 10, restart=0.5).ids

    def cookbook_push(seeds, M=walk):
        t = ppr_top_k.top_k_push(M, v0_of(seeds), 10, restart=0.5, rounds=args.rounds)
        push_runs[tuple(seeds)] = t
        return t.ids

    def igraph_prpack(seeds):
        s = np.array(g.personalized_pagerank(reset_vertices=list(map(int, seeds)), damping=0.5))
        return top_k(s, 10)

    def agreement(outs, qs):
        want = [top_k(reference[tuple(q)], 10) for q in qs]
        return {"set": float(np.mean([set(o.tolist()) == set(w.tolist()) for o, w in zip(outs, want)])),
                "ordered": float(np.mean([o.tolist() == w.tolist() for o, w in zip(outs, want)]))}

    rows, agree = {}, {}
    plain_W = {}  # the plain calls' matrix: a fresh CSR, so its first call prepares its walk

    def plain(fn):
        return lambda seeds: fn(seeds, M=plain_W.setdefault("W", W))

    engines = [("cookbook top-10 (top_k_push, exact)", cookbook_plain_top_k),
               ("cookbook local push top-10", cookbook_push), ("cookbook exact", cookbook_exact),
               ("cookbook certified top-10", cookbook_topk), ("igraph PRPACK", igraph_prpack)]
    timed = interleaved(engines + [(f"{n} (plain call)", plain(f)) for n, f in engines[:4]], queries)
    for name, (times, outs, cpu) in timed.items():
        rows[name] = {**bench.summarize(times), "cpu_p50": float(np.median(cpu))}
        agree[name] = agreement(outs, queries)
        print(f"{name:40} p50 {rows[name]['p50'] * 1e3:8.2f} ms  top-10 agreement {agree[name]}", flush=True)
    plain_vs_prepared = {name: rows[f"{name} (plain call)"]["p50"] / rows[name]["p50"] for name, _ in engines[:4]}
    print(f"plain call / prepared walk (medians): {plain_vs_prepared}; preparing once: {prepare_s * 1e3:.0f} ms")

    for name, _ in engines[:4]:  # the plain and prepared calls answered the same
        assert agree[name] == agree[f"{name} (plain call)"], name
    runs = [push_runs[tuple(q)] for q in queries]
    gaps = [float(np.subtract(*np.sort(reference[tuple(q)])[::-1][9:11])) for q in queries]
    push = {"rounds": args.rounds, "l1_error_p50": float(np.median([t.l1_error for t in runs])),
            "touched_p50": int(np.median([t.touched for t in runs])),
            "certified_ranks_mean": float(np.mean([t.certified.mean() for t in runs])),
            "gap_10_11_quantiles": dict(zip(["min", "p1", "p10", "p50"],
                                            map(float, np.quantile(gaps, [0, 0.01, 0.1, 0.5])))),
            "hops": hop_profile(A, reference, queries[:10])}
    print("local push:", push)

    import networkx as nx

    t0 = time.perf_counter()
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(g.get_edgelist())
    build_nx = time.perf_counter() - t0
    nq = args.nx_queries

    def networkx_pagerank(seeds):
        s = nx.pagerank(G, alpha=0.5, personalization={int(i): 1.0 for i in seeds}, tol=1e-6 / n)
        return np.array(sorted(s, key=lambda i: (-s[i], i))[:10])

    times, outs = bench.time_calls(networkx_pagerank, queries[: nq + 1])
    rows["networkx pagerank"] = bench.summarize(times)
    agree["networkx pagerank"] = agreement(outs, queries[: nq + 1])
    print(f"networkx pagerank  p50 {rows['networkx pagerank']['p50'] * 1e3:8.2f} ms (graph build {build_nx:.1f} s)")

    B = args.batch
    V0 = np.stack([v0_of(q) for q in queries], axis=1)
    ppr.personalized_pagerank_batch(walk, V0[:, :2])  # warm-up
    t0 = time.perf_counter()
    ppr.personalized_pagerank_batch(walk, V0[:, :B], restart=0.5, tol=1e-6)
    batch_s = time.perf_counter() - t0
    rows["cookbook exact batched"] = bench.summarize([batch_s / B])
    t0 = time.perf_counter()
    batched = ppr_top_k.top_k_push_batch(walk, V0, 10, rounds=args.rounds)  # the approximate option, batched
    push_s = time.perf_counter() - t0
    rows["cookbook local push batched"] = bench.summarize([push_s / len(queries)])
    assert [t.ids.tolist() for t in batched] == [t.ids.tolist() for t in runs]
    qps = {"exact": B / batch_s, "local push": len(queries) / push_s}
    print(f"batched queries/s: {qps}")

    table_top_k = top_k_table(rows, agree, ["cookbook top-10 (top_k_push, exact)", "cookbook local push top-10",
                                            "cookbook certified top-10", "cookbook exact"])
    table = bench.ratio_table(rows, baseline="networkx pagerank")
    vs_igraph = bench.ratio_table(rows, baseline="igraph PRPACK")
    print("\n" + table_top_k + "\n\n" + table + "\n\n" + vs_igraph)
    payload = {"graph": {"nodes": n, "edges": g.ecount()}, "queries": len(queries), "latency_s": rows,
               "top10_agreement": agree, "batch_size": B, "batched_qps": qps, "push": push, "table": table,
               "table_vs_igraph": vs_igraph, "table_top_k": table_top_k, "plain_vs_prepared": plain_vs_prepared,
               "prepare_s": prepare_s, "speedup_exact_top_k_vs_igraph": rows["igraph PRPACK"]["p50"]
               / rows["cookbook top-10 (top_k_push, exact)"]["p50"],
               "speedup_exact_top_k_vs_igraph_cpu": rows["igraph PRPACK"]["cpu_p50"]
               / rows["cookbook top-10 (top_k_push, exact)"]["cpu_p50"],
               "speedup_push_vs_igraph": rows["igraph PRPACK"]["p50"]
               / rows["cookbook local push top-10"]["p50"], "speedup_push_vs_networkx":
               rows["networkx pagerank"]["p50"] / rows["cookbook local push top-10"]["p50"]}
    print(f"wrote {bench.write_results(out, 'ppr', payload)}")
    return payload


if __name__ == "__main__":
    main()
