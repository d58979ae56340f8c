import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cookbook import data as datasets
from cookbook import embed
from cookbook.query import seeds


def brute_force(cands, ann, nbhd, k, penalty):
    """Reference: recompute every penalised score from Python sets at every step."""
    def jac(a, b):
        return len(a & b) / len(a | b) if a | b else 0.0

    picked = []
    for _ in range(k):
        rest = [c for c in cands if c not in picked]
        def key(c):
            s = ann[cands.index(c)]
            return (s - penalty * max((jac(nbhd[c], nbhd[p]) for p in picked), default=0.0), s, -c)
        picked.append(max(rest, key=key))
    return picked


def rows(sets, n):
    A = sp.lil_matrix((len(sets), n))
    for i, s in enumerate(sets):
        for j in s:
            A[i, j] = 1
    return A.tocsr()


def test_near_duplicate_is_passed_over_for_a_disjoint_candidate():
    # 0 and 1 are near-duplicates (identical neighbourhoods, almost equal scores); 2 scores lower but is disjoint
    N = rows([{5, 6, 7}, {5, 6, 7}, {8, 9}], 10)
    assert seeds.select_seeds([0, 1, 2], [0.90, 0.89, 0.70], N, 2, overlap_penalty=0.3).tolist() == [0, 2]
    assert seeds.select_seeds([0, 1, 2], [0.90, 0.89, 0.70], N, 2, overlap_penalty=0.0).tolist() == [0, 1]


def test_ties_broken_by_ann_then_id():
    N = rows([{1}, {2}, {3}, {4}], 5)
    assert seeds.select_seeds([13, 11, 12, 10], [0.5, 0.5, 0.5, 0.4], N, 3).tolist() == [11, 12, 13]


def test_k_larger_than_candidates_and_other_bad_inputs():
    N = rows([{1}, {2}], 3)
    with pytest.raises(ValueError, match="larger than the 2 candidates"):
        seeds.select_seeds([0, 1], [0.5, 0.4], N, 3)
    with pytest.raises(ValueError, match="k must be a positive"):
        seeds.select_seeds([0, 1], [0.5, 0.4], N, 0)
    with pytest.raises(ValueError, match="overlap_penalty"):
        seeds.select_seeds([0, 1], [0.5, 0.4], N, 1, overlap_penalty=-0.1)
    with pytest.raises(ValueError, match="empty candidates"):
        seeds.select_seeds([], [], rows([], 3), 1)
    with pytest.raises(ValueError, match="ann_scores has length"):
        seeds.select_seeds([0, 1], [0.5], N, 1)
    with pytest.raises(ValueError, match="neighbourhoods has 2 rows"):
        seeds.select_seeds([0, 1, 2], [0.5, 0.4, 0.3], N, 1)
    with pytest.raises(ValueError, match="duplicates"):
        seeds.select_seeds([0, 0], [0.5, 0.4], N, 1)
    A = sp.csr_matrix(np.eye(3))
    with pytest.raises(ValueError, match="depth"):
        seeds.bfs(A, [0], -1)
    with pytest.raises(KeyError, match="unknown seed node 7"):
        seeds.bfs(A, [7], 1)
    with pytest.raises(KeyError, match="unknown node 9"):
        seeds.neighbourhoods(A, [9])
    with pytest.raises(ValueError, match="seeds is empty"):
        seeds.bfs(A, [], 1)


@st.composite
def selector_cases(draw):
    c = draw(st.integers(1, 12))
    n = 15
    nbhd = [set(draw(st.lists(st.integers(0, n - 1), max_size=6))) for _ in range(c)]
    ann = draw(st.lists(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]), min_size=c, max_size=c))
    ids = draw(st.permutations(list(range(100, 100 + c))))
    k = draw(st.integers(1, c))
    pen = draw(st.sampled_from([0.0, 0.1, 0.3, 1.0, 5.0]))
    return list(ids), ann, nbhd, k, pen, n


@settings(max_examples=200, deadline=None)
@given(selector_cases())
def test_selector_equals_brute_force(case):
    ids, ann, nbhd, k, pen, n = case
    got = seeds.select_seeds(ids, ann, rows(nbhd, n), k, overlap_penalty=pen).tolist()
    assert got == brute_force(ids, ann, dict(zip(ids, nbhd)), k, pen)


@settings(max_examples=60, deadline=None)
@given(st.integers(5, 30), st.floats(0.05, 0.4), st.integers(0, 3), st.integers(0, 10_000))
def test_bfs_hops_equal_networkx_shortest_paths(n, p, depth, seed):
    G = nx.gnp_random_graph(n, p, seed=seed)
    A = nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr")
    src = [0, n // 2]
    res = seeds.bfs(A, src, depth, [0.9, 0.5])
    want = {}
    for s in src:
        for v, d in nx.single_source_shortest_path_length(G, s, cutoff=depth).items():
            want[v] = min(want.get(v, d), d)
    assert dict(zip(res.nodes.tolist(), res.hops.tolist())) == want
    assert res.scores[res.nodes.tolist().index(0)] == 0.9  # seeds keep their ANN score


def test_neighbourhoods_exclude_self_and_cap():
    A = sp.csr_matrix(np.ones((6, 6)))
    N = seeds.neighbourhoods(A, [2], max_neighbourhood=3)
    assert N[0].indices.tolist() == [0, 1, 3]


def test_retrieve_with_no_penalty_and_no_oversampling_is_the_baseline():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(60, 6))
    A = sp.csr_matrix(nx.to_scipy_sparse_array(nx.gnp_random_graph(60, 0.08, seed=1), format="csr"))
    index = embed.CosineIndex(V)
    for q in V[:10]:
        for k, d in [(1, 0), (3, 1), (5, 2)]:
            a = seeds.retrieve(index, A, q, top_k=k, depth=d, oversample=1, overlap_penalty=0.0)
            b = seeds.two_step_retrieve(index, A, q, top_k=k, depth=d)
            assert a.seeds.tolist() == b.seeds.tolist()
            assert a.expansion.nodes.tolist() == b.expansion.nodes.tolist()
    assert seeds.n_candidates(10, 5, 100) == 50 and seeds.n_candidates(30, 5, 100) == 100
    assert seeds.n_candidates(4, 1, 100) == 4
    with pytest.raises(ValueError, match="top_k must be"):
        seeds.retrieve(index, A, V[0], top_k=0, depth=1)


@settings(max_examples=60, deadline=None)
@given(st.integers(5, 30), st.floats(0.05, 0.5), st.integers(0, 6), st.integers(0, 1000))
def test_seed_overlap_equals_the_set_based_mean_pairwise_jaccard(n, p, k, seed):
    from cookbook.metrics import mean_pairwise_jaccard

    A = sp.csr_matrix(nx.to_scipy_sparse_array(nx.gnp_random_graph(n, p, seed=seed), format="csr"))
    picks = list(range(min(k, n)))
    sets = [set(A.indices[A.indptr[v]:A.indptr[v + 1]].tolist()) - {v} for v in picks]
    assert seeds.seed_overlap(A, picks) == mean_pairwise_jaccard(sets)


def test_neo4j_score_scale_is_the_selector_on_one_plus_cos_over_two():
    """score="neo4j" == the raw selector fed (1+cos)/2 computed here from the vectors, not from the index."""
    rng = np.random.default_rng(3)
    V = rng.normal(size=(80, 8))
    A = sp.csr_matrix(nx.to_scipy_sparse_array(nx.gnp_random_graph(80, 0.1, seed=2), format="csr"))
    index = embed.CosineIndex(V)
    unit = V / np.linalg.norm(V, axis=1, keepdims=True)
    differ = 0
    for q in V[:15]:
        r = seeds.retrieve(index, A, q, top_k=4, depth=1, oversample=5, overlap_penalty=0.3, score="neo4j")
        cos = unit @ (q / np.linalg.norm(q))
        cand = r.candidates
        neo = (1 + cos[cand]) / 2
        want = seeds.select_seeds(cand, neo, seeds.neighbourhoods(A, cand), 4, overlap_penalty=0.3)
        assert r.seeds.tolist() == want.tolist()
        assert r.seed_scores == pytest.approx((1 + cos[r.seeds]) / 2)
        raw = seeds.retrieve(index, A, q, top_k=4, depth=1, oversample=5, overlap_penalty=0.3)
        differ += raw.seeds.tolist() != r.seeds.tolist()
        # halving the score gaps is the same as doubling the penalty on raw cosine
        assert r.seeds.tolist() == seeds.retrieve(index, A, q, top_k=4, depth=1, overlap_penalty=0.6).seeds.tolist()
    assert differ > 0, "the two scales should pick different seeds on some query"
    with pytest.raises(ValueError, match="score must be one of"):
        seeds.retrieve(index, A, V[0], top_k=2, depth=0, score="dot")


def test_bfs_rejects_a_directed_adjacency():
    G = nx.path_graph(6)
    A = sp.csr_matrix(nx.to_scipy_sparse_array(G, format="csr"))
    D = sp.triu(A).tocsr()  # 0→1→2→…: from 5 nothing is reachable, from 0 everything
    with pytest.raises(ValueError, match=r"not symmetric: edge 0→1 has no reverse 1→0"):
        seeds.bfs(D, [0], 2)
    with pytest.raises(ValueError, match=r"edge 3→2 has no reverse"):
        seeds.bfs(sp.tril(A).tocsr(), [3], 1)
    assert seeds.bfs(D, [0], 0).nodes.tolist() == [0]  # no edge walked, nothing to check
    assert seeds.bfs(D.maximum(D.T), [5], 2).nodes.tolist() == seeds.bfs(A, [5], 2).nodes.tolist() == [5, 4, 3]


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 30), st.floats(0.02, 0.4), st.integers(0, 3), st.integers(0, 10_000),
       st.lists(st.tuples(st.integers(0, 29), st.sampled_from([0.2, 0.5, 0.9])), min_size=1, max_size=5))
def test_bfs_equals_a_shortest_path_reference(n, p, depth, seed, picks):
    """Nodes, hops, scores and order against networkx distances: a node's score is the best among the seeds
    at its distance, and the order is (hop, −score, node)."""
    G = nx.gnp_random_graph(n, p, seed=seed)
    A = nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr")
    src, sc = [s % n for s, _ in picks], [x for _, x in picks]
    best = {}
    for s, x in zip(src, sc):
        for v, d in nx.single_source_shortest_path_length(G, s, cutoff=depth).items():
            best[v] = min(best.get(v, (d, -x)), (d, -x))
    want = sorted((d, negx, v) for v, (d, negx) in best.items())
    res = seeds.bfs(A, src, depth, sc)
    assert list(zip(res.hops.tolist(), (-res.scores).tolist(), res.nodes.tolist())) == want
    plain = seeds.bfs(A, src, depth)  # no scores: every node scores 1, order (hop, node)
    assert list(zip(plain.hops.tolist(), plain.nodes.tolist())) == sorted((d, v) for d, _, v in want)
    assert set(plain.scores.tolist()) == {1.0}


def test_bfs_layers_equal_igraph_neighbourhoods_on_a_power_law_graph():
    g = datasets.power_law_graph(3000, 12_000, exponent=2.5, seed=1)
    A = sp.csr_matrix(g.get_adjacency_sparse(), dtype=float)
    rng = np.random.default_rng(0)
    for _ in range(20):
        src = rng.choice(3000, 5, replace=False).tolist()
        res = seeds.bfs(A, src, 3)
        for d in range(4):
            layer = set().union(*map(set, g.neighborhood(src, order=d))) - set().union(
                *map(set, g.neighborhood(src, order=d - 1))) if d else set(src)
            assert res.nodes[res.hops == d].tolist() == sorted(layer)


def test_bfs_symmetry_check_sees_the_whole_matrix_and_a_changed_one():
    A = sp.csr_matrix(nx.to_scipy_sparse_array(nx.path_graph(6), format="csr"))
    far = A.copy()
    far[5, 4] = 0
    far.eliminate_zeros()  # 4→5 without 5→4, two hops away from a walk of depth 1 from node 0
    with pytest.raises(ValueError, match=r"edge 4→5 has no reverse 5→4"):
        seeds.bfs(far, [0], 1)
    assert seeds.bfs(A, [0], 1).nodes.tolist() == [0, 1]  # checked, and the answer cached on A
    A.data[A.indices == 4] = 0
    A.eliminate_zeros()  # in place: the edges into 4 go, 4's own row stays
    with pytest.raises(ValueError, match=r"edge 4→3 has no reverse 3→4"):
        seeds.bfs(A, [0], 1)
    with pytest.raises(ValueError, match="seed_scores contains NaN"):
        seeds.bfs(A.maximum(A.T), [0], 1, [float("nan")])
