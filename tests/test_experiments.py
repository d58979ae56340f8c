import numpy as np
import pytest
import scipy.sparse as sp

from cookbook import cache, metrics, stats
from cookbook.data import realdata
from cookbook.data.corpus import load_corpus
from cookbook.harness import experiments, tradeoff
from cookbook.linalg import ppr
from cookbook.query import hipporag, seeds


@pytest.fixture(scope="module")
def world():
    c = load_corpus("world", "ci")
    return c, hipporag.HippoRetriever.from_world(c)


def test_dev_test_split_is_disjoint_stratified_and_seeded():
    hops = [1, 1, 1, 2, 2, 3, 3, 3, 3]
    dev, test = stats.dev_test_split(hops, seed=3)
    assert not set(dev) & set(test) and sorted(dev + test) == list(range(len(hops)))
    for h in (1, 2, 3):  # each hop count halved, dev takes the odd one
        n = hops.count(h)
        assert sum(hops[i] == h for i in dev) == (n + 1) // 2
    assert stats.dev_test_split(hops, seed=3) == (dev, test)


def test_seed_tradeoff_reports_the_test_split_from_the_package_retrievers(world):
    c, hr = world
    tr = tradeoff.seed_tradeoff(c, hr, seed=7, n_boot=500)
    assert set(tr.dev).isdisjoint(tr.test)
    # Recomputed independently on the test questions with the chosen setting.
    A, qvec = hr.graph.adjacency, hr.embedder.transform([c.questions[i].text for i in tr.test])
    for j, i in enumerate(tr.test):
        base = seeds.two_step_retrieve(hr.index, A, qvec[j], top_k=tr.top_k, depth=0).seeds
        fused = seeds.retrieve(hr.index, A, qvec[j], top_k=tr.top_k, depth=0, oversample=tr.oversample,
                               overlap_penalty=tr.penalty).seeds
        assert tr.overlap_two_step[j] == seeds.seed_overlap(A, base)
        assert tr.overlap_fused[j] == seeds.seed_overlap(A, fused)
        got = [hr.graph.passage_ids[n] for n in fused.tolist()]
        assert tr.recall_fused[j] == metrics.support_recall(got, c.questions[i].supporting)
    assert tr.overlap_cut == stats.paired_bootstrap(tr.overlap_two_step, tr.overlap_fused, n_boot=500, seed=7)
    assert tr.recall_change["all"].n == len(tr.test)
    assert tr.latency_ratio > 0 and "median" in tr.table()
    # Deterministic apart from wall time.
    again = tradeoff.seed_tradeoff(c, hr, seed=7, n_boot=500)
    assert (again.penalty, again.oversample, again.sweep) == (tr.penalty, tr.oversample, tr.sweep)
    assert np.array_equal(again.overlap_fused, tr.overlap_fused)


def test_the_dev_sweep_equals_retrieve_on_the_dev_questions(world):
    c, hr = world
    tr = tradeoff.seed_tradeoff(c, hr, seed=7, penalties=(0.3,), oversamples=(2, 5), n_boot=200)
    A, qvec = hr.graph.adjacency, hr.embedder.transform([c.questions[i].text for i in tr.dev])
    for point in tr.sweep:
        got = []
        for j in range(len(tr.dev)):
            if point["baseline"]:
                r = seeds.two_step_retrieve(hr.index, A, qvec[j], top_k=5, depth=0)
            else:
                r = seeds.retrieve(hr.index, A, qvec[j], top_k=5, depth=0, oversample=point["oversample"],
                                   overlap_penalty=point["penalty"])
            got.append(seeds.seed_overlap(A, r.seeds))
        assert point["overlap"] == pytest.approx(np.mean(got), abs=1e-12)


def test_seed_tradeoff_picks_the_cheapest_setting_within_the_recall_budget(world):
    c, hr = world
    tr = tradeoff.seed_tradeoff(c, hr, seed=7, n_boot=200)
    base = tr.sweep[0]
    ok = [p for p in tr.sweep[1:] if p["recall"] >= base["recall"] - 0.02]
    if ok:
        assert min(p["overlap"] for p in ok) == next(p["overlap"] for p in tr.sweep[1:]
                                                     if (p["penalty"], p["oversample"]) == (tr.penalty, tr.oversample))


def test_seed_tradeoff_refuses_too_few_questions(world):
    c, hr = world
    c2 = load_corpus("world", "ci")
    c2.questions = c.questions[:3]
    with pytest.raises(ValueError, match="at least 4 questions"):
        tradeoff.seed_tradeoff(c2, hr)


def test_cache_hits_misses_and_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return np.arange(4.0)

    a = cache.cached_array("x", {"k": 1}, compute)
    b = cache.cached_array("x", {"k": 1}, compute)
    assert np.array_equal(a, b) and len(calls) == 1
    cache.cached_array("x", {"k": 2}, compute)  # other inputs: another entry
    assert len(calls) == 2
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temp files left
    path = cache.cache_path("x", {"k": 1})
    path.write_bytes(b"garbage")  # a corrupt entry is recomputed, not trusted
    assert np.array_equal(cache.cached_array("x", {"k": 1}, compute), a) and len(calls) == 3
    with pytest.raises(ValueError, match="cache name"):
        cache.cache_path("../x", {})


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("COOKBOOK_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "graphrag-cookbook"
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path / "mine"))
    assert cache.cache_dir() == tmp_path / "mine"


def test_penalty_sweep_equals_retrieve_per_setting(world):
    c, hr = world
    A, qv = hr.graph.adjacency, hr.embedder.transform([q.text for q in c.questions[:8]])

    def recall_of(i, s):
        return metrics.support_recall([hr.graph.passage_ids[n] for n in s.tolist()], c.questions[i].supporting)

    pts = experiments.penalty_sweep(hr.index, A, qv, top_k=3, recall_of=recall_of, penalties=(0.0, 0.4),
                                    oversamples=(1, 4))
    for p in pts:
        rs = [seeds.retrieve(hr.index, A, q, top_k=3, depth=0, oversample=p["oversample"],
                             overlap_penalty=p["penalty"]) for q in qv]
        assert p["overlap"] == pytest.approx(np.mean([seeds.seed_overlap(A, r.seeds) for r in rs]), abs=1e-12)
        assert p["ann"] == pytest.approx(np.mean([r.seed_scores.mean() for r in rs]), abs=1e-12)
        assert p["recall"] == pytest.approx(np.mean([recall_of(i, r.seeds) for i, r in enumerate(rs)]), abs=1e-12)


def test_scaling_runs_count_what_each_query_reads_against_igraph():
    sizes = [140, 280]
    rows = experiments.scaling_runs(sizes)
    assert [(r["method"], r["edges"]) for r in rows] == [(m, e) for e in sizes for m in experiments.SCALING_METHODS]
    assert experiments.scaling_curves(sizes).keys() == set(experiments.SCALING_METHODS)
    for e in sizes:
        by = {r["method"]: r for r in rows if r["edges"] == e}
        g = realdata.power_law_graph(e // 7, e, exponent=2.5, seed=0)
        dense = np.asarray(g.get_adjacency_sparse().todense())
        # BFS depth 2 expands the seeds and the nodes one hop out: igraph's order-1 neighbourhood, each node's
        # stored entries (distinct neighbours, a self-loop once) counted on the dense matrix.
        expanded = set().union(*g.neighborhood([0, 1, 2, 3, 4], order=1))
        assert by["BFS depth 2 (query)"]["entries_read"] == sum(np.count_nonzero(dense[v]) for v in expanded)
        W = ppr.transition_matrix(sp.csr_matrix(dense, dtype=float))
        v0 = np.zeros(dense.shape[0])
        v0[:5] = 1
        iterations = ppr.personalized_pagerank(W, v0).iterations
        assert by["PPR exact (query)"]["entries_read"] == iterations * np.count_nonzero(W.toarray())
        assert by["PPR exact (query)"]["iterations"] == iterations
        assert by["igraph Leiden, 2 iterations (graph)"]["entries_read"] is None
        assert all(r["seconds"] > 0 for r in by.values())
    queries = experiments.scaling_runs(sizes, leiden=False)  # notebook 09's: the queries, not Leiden
    assert [(r["method"], r["edges"], r["entries_read"]) for r in queries] == [
        (r["method"], r["edges"], r["entries_read"]) for r in rows if r["entries_read"] is not None]


def test_restart_recall_is_the_retrievers_own_recall_per_question_and_the_sweep_its_mean():
    """Per question and λ, restart_recall is support_recall of HippoRetriever.retrieve itself (the reference, one
    question at a time with its own dense search); restart_sweep's rows are its means per hop count, the same
    whether it solves them or is handed them."""
    from cookbook.data.corpus import load_corpus
    from cookbook.metrics import support_recall
    from cookbook.query.hipporag import HippoRetriever

    world = load_corpus("world", "ci", 7)
    hr = HippoRetriever.from_world(world)
    qs = world.questions[:9]
    got = experiments.restart_recall(hr, qs, restarts=(0.2, 0.5))
    for lam, r in got.items():
        want = [support_recall(hr.retrieve(q.text, 5, dense_hits=hr.dense_hits(q.text), restart=lam), q.supporting)
                for q in qs]
        assert r.tolist() == pytest.approx(want)
    rows = experiments.restart_sweep(hr, qs, restarts=(0.2, 0.5), recall=got)
    assert rows == experiments.restart_sweep(hr, qs, restarts=(0.2, 0.5))
    for row in rows:
        for h in {q.hops for q in qs}:
            assert row[f"recall@5_{h}hop"] == pytest.approx(np.mean([x for x, q in zip(got[row["restart"]], qs)
                                                                     if q.hops == h]))
