"""Notebook 07's downstream measurement (cookbook.harness.expansion) against independent brute force: the budgeted
recall of an expansion recomputed from networkx shortest-path lengths, the sweep from the package's public
retrievals, the tuning from a plain argmax over those, and WordNet's TF-IDF index from a dense exact search."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from cookbook import embed, metrics, stats
from cookbook.data.corpus import load_corpus
from cookbook.harness import expansion, experiments, tradeoff
from cookbook.harness.expansion import ROLES, Setting
from cookbook.query import hipporag, seeds


def brute_force_order(G, seed_nodes, seed_scores, budget):
    """The first `budget` nodes by (distance to the nearest seed, −best score among the seeds at that distance,
    node), from every seed's own shortest-path lengths: no frontier, no score propagation."""
    dist = [nx.single_source_shortest_path_length(G, s) for s in seed_nodes]
    reached = set().union(*dist)
    key = {}
    for v in reached:
        hop = min(d[v] for d in dist if v in d)
        key[v] = (hop, -max(sc for d, sc in zip(dist, seed_scores) if d.get(v) == hop), v)
    return sorted(reached, key=key.get)[:budget]


def brute_force_recall(order, gold, budgets):
    return [len(set(order[:b]) & set(gold)) / len(set(gold)) for b in budgets]


def random_graph(rng, n, p):
    A = sp.random(n, n, density=p, random_state=rng, data_rvs=lambda m: np.ones(m))
    A = ((A + A.T) > 0).astype(float).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(*A.nonzero()))
    return A, G


def test_expansion_order_and_budgeted_recall_equal_networkx_on_random_graphs():
    rng = np.random.default_rng(0)
    for case in range(150):
        n = int(rng.integers(5, 40))
        A, G = random_graph(rng, n, float(rng.uniform(0.02, 0.25)))  # sparse ones fall apart: budgets run out
        k = int(rng.integers(1, min(n, 6) + 1))
        seed_nodes = rng.choice(n, k, replace=False).tolist()
        seed_scores = rng.choice([0.2, 0.5, 0.9], k).tolist()  # few levels: ties between seeds
        budget = int(rng.integers(1, n + 5))
        want = brute_force_order(G, seed_nodes, seed_scores, budget)
        got = expansion.expansion_order(A, seed_nodes, seed_scores, budget)
        assert got.nodes.tolist() == want, f"case {case}"
        gold = rng.choice(n, int(rng.integers(1, 4)), replace=False).tolist()
        budgets = sorted(set(rng.integers(1, n + 5, 3).tolist()))
        full = brute_force_order(G, seed_nodes, seed_scores, max(budgets))
        assert expansion.budgeted_recall(full, gold, budgets).tolist() == brute_force_recall(full, gold, budgets)


def test_expansion_order_is_a_prefix_of_retrieve_at_any_depth():
    A, _ = random_graph(np.random.default_rng(1), 60, 0.05)
    index = embed.CosineIndex(np.random.default_rng(2).standard_normal((60, 4)))
    q = np.array([1.0, 0.5, -0.2, 0.1])
    r = seeds.retrieve(index, A, q, top_k=4, depth=0)
    for depth in range(4):
        deep = seeds.retrieve(index, A, q, top_k=4, depth=depth).expansion.nodes
        budgeted = expansion.expansion_order(A, r.seeds, r.seed_scores, len(deep)).nodes
        assert budgeted.tolist() == deep.tolist()


@pytest.fixture(scope="module")
def world():
    c = load_corpus("world", "ci")
    return c, hipporag.HippoRetriever.from_world(c)


def public_recall(hr, G, q_vec, gold_ids, s: Setting, budgets):
    """A setting's budgeted recall through seeds.retrieve / two_step_retrieve, networkx and support_recall."""
    A = hr.graph.adjacency
    r = (seeds.retrieve(hr.index, A, q_vec, top_k=s.top_k, depth=0, oversample=s.oversample,
                        overlap_penalty=s.penalty) if s.fused else
         seeds.two_step_retrieve(hr.index, A, q_vec, top_k=s.top_k, depth=0))
    order = brute_force_order(G, r.seeds.tolist(), r.seed_scores.tolist(), max(budgets))
    P = hr.graph.n_passages
    return [metrics.support_recall([hr.graph.passage_ids[v] for v in order[:b] if v < P], gold_ids) for b in budgets]


def public_added(hr, G, q_vec, s: Setting, budgets):
    """Passages among a setting's first B nodes that are not its seeds, from the same public retrieval."""
    A = hr.graph.adjacency
    r = (seeds.retrieve(hr.index, A, q_vec, top_k=s.top_k, depth=0, oversample=s.oversample,
                        overlap_penalty=s.penalty) if s.fused else
         seeds.two_step_retrieve(hr.index, A, q_vec, top_k=s.top_k, depth=0))
    order = brute_force_order(G, r.seeds.tolist(), r.seed_scores.tolist(), max(budgets))
    own = set(r.seeds.tolist())
    return [sum(v < hr.graph.n_passages and v not in own for v in order[:b]) for b in budgets]


def test_expansion_recalls_equal_the_public_retrievals_for_every_setting(world):
    c, hr = world
    G = nx.Graph(hr.graph.adjacency)
    settings = [Setting(k) for k in (5, 10, 20, 50)] + [Setting(k, o, p) for k in (5, 10) for o in (2, 5)
                                                        for p in (0.1, 0.5, 2.0)]
    budgets = (5, 10, 20, 50, 100)
    qvec = hr.embedder.transform([q.text for q in c.questions[:8]])
    for q, v in zip(c.questions[:8], qvec):
        gold = [hr.graph.node(p) for p in q.supporting]
        got = expansion.expansion_recalls(hr.index, hr.graph.adjacency, v, gold, settings, budgets)
        for s in settings:
            assert got[s].tolist() == pytest.approx(public_recall(hr, G, v, q.supporting, s, budgets)), str(s)


def test_expansion_comparison_tunes_on_dev_and_reports_test_as_brute_force_does(world):
    c, hr = world
    budgets = (5, 20, 60)
    cmp = expansion.expansion_comparison(c, hr, budgets=budgets, two_step_top_ks=(5, 10, 20, 50),
                                         fused_top_ks=(5, 10), oversamples=(2, 5), penalties=(0.1, 0.5), n_boot=300)
    assert set(cmp.dev).isdisjoint(cmp.test) and sorted(cmp.dev + cmp.test) == list(range(len(c.questions)))
    G = nx.Graph(hr.graph.adjacency)
    two_step = [Setting(k) for k in (5, 10, 20, 50)]
    fused = [Setting(k, o, p) for k in (5, 10) for o in (2, 5) for p in (0.1, 0.5)]
    qvec = dict(zip(range(len(c.questions)), hr.embedder.transform([q.text for q in c.questions])))

    def mean_recall(s, positions):
        return np.mean([public_recall(hr, G, qvec[i], c.questions[i].supporting, s, budgets) for i in positions],
                       axis=0)

    dev = {s: mean_recall(s, cmp.dev) for s in two_step + fused}
    for s, m in dev.items():
        assert cmp.dev_means[s].tolist() == pytest.approx(m.tolist())
    dev_bfs = {s: np.mean([np.array(public_added(hr, G, qvec[i], s, budgets)) >= 1 for i in cmp.dev], axis=0)
               for s in two_step + fused}
    for s, m in dev_bfs.items():
        assert cmp.dev_bfs_share[s].tolist() == pytest.approx(m.tolist())
    pools = {"two-step": [Setting(5)], "fused": [s for s in fused if s.top_k == 5],
             "two-step, tuned topK": two_step, "fused, tuned topK": fused}
    for role, pool in pools.items():
        for j in range(len(budgets)):
            if role.endswith("tuned topK"):  # the BFS must add a passage on 90 % of dev, or the fewest seeds
                pool = ([s for s in pools[role] if dev_bfs[s][j] >= 0.9]
                        or [s for s in pools[role] if s.top_k == 5])
            best = max(dev[s][j] for s in pool)
            assert dev[cmp.chosen[role][j]][j] == pytest.approx(best), (role, budgets[j])
            test = [public_recall(hr, G, qvec[i], c.questions[i].supporting, cmp.chosen[role][j], budgets)[j]
                    for i in cmp.test]
            assert cmp.recall[role][:, j].tolist() == pytest.approx(test)
            added = [public_added(hr, G, qvec[i], cmp.chosen[role][j], budgets)[j] for i in cmp.test]
            assert cmp.added[role][:, j].tolist() == added
    for j in range(len(budgets)):
        assert cmp.same_top_k[j] == stats.paired_bootstrap(cmp.recall["fused"][:, j], cmp.recall["two-step"][:, j],
                                                           n_boot=300, seed=7)
        assert cmp.tuned[j] == stats.paired_bootstrap(cmp.recall["fused, tuned topK"][:, j],
                                                      cmp.recall["two-step, tuned topK"][:, j], n_boot=300, seed=7)
    assert all(len(cmp.chosen[role]) == len(budgets) for role in ROLES)
    assert "B = 60" in cmp.table()
    # At B = 5 the budget is the five seeds: the BFS adds nothing, which notebook 07's regime check must catch.
    assert cmp.bfs_share("fused, tuned topK", 0) == 0.0 and cmp.bfs_share("fused, tuned topK", 2) >= 0.9
    again = expansion.expansion_comparison(c, hr, budgets=budgets, two_step_top_ks=(5, 10, 20, 50),
                                           fused_top_ks=(5, 10), oversamples=(2, 5), penalties=(0.1, 0.5), n_boot=300)
    assert again.chosen == cmp.chosen and all(np.array_equal(again.recall[r], cmp.recall[r]) for r in ROLES)


def test_expansion_comparison_drops_settings_the_index_cannot_hold(world):
    c, hr = world  # 75 passages: topK 100 is left out, and fused topK 50 at oversample 1 is the two-step
    cmp = expansion.expansion_comparison(c, hr, budgets=(10,), two_step_top_ks=(5, 100), fused_top_ks=(5, 50),
                                         oversamples=(1, 2), penalties=(0.3,), n_boot=100)
    assert {s.top_k for s in cmp.dev_means if not s.fused} == {5}
    assert {(s.top_k, s.oversample) for s in cmp.dev_means if s.fused} == {(5, 2), (50, 2)}
    with pytest.raises(ValueError, match="no fused setting"):
        expansion.expansion_comparison(c, hr, oversamples=(1,), n_boot=100)


def test_bipartite_first_hop_adds_no_passage_until_the_budget_passes_the_seeds_entities():
    """The regime notebook 07's lesson must avoid: on a passage–entity graph, k seeds and their entities fill the
    first k + |N(seeds)| nodes, so a budget no larger adds no passage (the old lesson at B = 20 with topK 10)."""
    P = 4  # passages 0-3, entities 4-6; passage 0 mentions 4 and 5, passage 1 mentions 5, 2 mentions 6, 3 mentions 4
    edges = [(0, 4), (0, 5), (1, 5), (2, 6), (3, 4)]
    A = sp.csr_matrix((np.ones(10), ([a for a, b in edges] + [b for a, b in edges],
                                     [b for a, b in edges] + [a for a, b in edges])), shape=(7, 7))
    index = embed.CosineIndex([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]])
    out = expansion.expansion_scores(index, A, np.array([1.0, 0]), [3], [Setting(1), Setting(2)], [2, 3, 4, 5], P)
    recall, added = out[Setting(2)]  # seeds 0, 1; entities 4, 5; then passage 3 through entity 4
    assert added.tolist() == [0, 0, 0, 1] and recall.tolist() == [0.0, 0.0, 0.0, 1.0]
    assert out[Setting(1)][1].tolist() == [0, 0, 1, 2]  # seed 0, entities 4, 5, then passages 3 and 1


def test_grid_edges_names_the_knobs_at_the_edge():
    assert expansion.grid_edges(Setting(5, 2, 0.1)) == ("the grid's edge: oversample 2× and penalty 0.1 are the "
                                                        "smallest tried")
    assert expansion.grid_edges(Setting(5, 5, 0.5)) == ("the grid's edge: oversample 5× and penalty 0.5 are the "
                                                        "largest tried")
    assert expansion.grid_edges(Setting(5, 2, 0.3), oversamples=(2, 5, 10)) == (
        "the grid's edge: oversample 2× is the smallest tried")
    assert expansion.grid_edges(Setting(5, 5, 0.3), oversamples=(2, 5, 10)) == ""


def test_question_sample_takes_equal_shares_per_hop_and_is_seeded():
    hops = [1] * 10 + [2] * 7 + [3] * 3
    got = expansion.question_sample(hops, 9, seed=4)
    assert [sum(hops[i] == h for i in got) for h in (1, 2, 3)] == [3, 3, 3]
    assert got.tolist() == sorted(got.tolist()) == expansion.question_sample(hops, 9, seed=4).tolist()
    assert got.tolist() != expansion.question_sample(hops, 9, seed=5).tolist()
    assert expansion.question_sample(hops, 100).tolist() == list(range(20))
    assert len(expansion.question_sample(hops, 10, seed=0)) == 10  # the remainder goes to the smaller hop counts


def test_n_questions_samples_before_the_split(world):
    c, hr = world
    cmp = expansion.expansion_comparison(c, hr, budgets=(10,), n_questions=12, n_boot=100)
    sample = expansion.question_sample([q.hops for q in c.questions], 12, seed=7)
    assert sorted(cmp.dev + cmp.test) == sample.tolist() and len(cmp.test) == cmp.tuned[0].n == 6


def test_seed_picks_without_jaccard_picks_the_same_seeds(world):
    c, hr = world
    q = hr.embedder.transform([c.questions[0].text])[0]
    settings = [(1, None), (2, 0.3), (5, 0.3)]
    a = tradeoff.seed_picks(hr.index, hr.graph.adjacency, q, 5, settings)
    b = tradeoff.seed_picks(hr.index, hr.graph.adjacency, q, 5, [(1, None)], jaccard=False)
    assert b[2] is None and a[2] is not None and a[3][1, None].tolist() == b[3][1, None].tolist()
    for o, p in settings[1:]:
        want = seeds.retrieve(hr.index, hr.graph.adjacency, q, top_k=5, depth=0, oversample=o, overlap_penalty=p)
        assert a[0][a[3][o, p]].tolist() == want.seeds.tolist()


def test_tfidf_index_equals_a_dense_exact_search():
    texts = ["red apple pie", "green apple", "blue sky", "grey sky", "apple sky", "red red sky", "pie", "tart"]
    X = embed.TfidfVectorizer().fit_transform(texts)
    sparse_index, dense_index = experiments.TfidfIndex(X), embed.CosineIndex(X.toarray())
    for i in range(len(texts)):
        for k in (1, 3, len(texts)):
            ids, scores = sparse_index.search(X[i], k)
            want_ids, want_scores = dense_index.search(X[i].toarray()[0], k)
            assert ids.tolist() == want_ids.tolist() and scores == pytest.approx(want_scores)
    assert sparse_index.search(2 * X[0], 2)[1] == pytest.approx(sparse_index.search(X[0], 2)[1])  # cosine
    # A tie at zero goes to the lower rows, as CosineIndex does.
    assert sparse_index.search(X[7], 3)[0].tolist() == [7, 0, 1]
    with pytest.raises(ValueError, match="larger than"):
        sparse_index.search(X[0], 9)
    with pytest.raises(ValueError, match="query"):
        sparse_index.search(X[:2], 1)
