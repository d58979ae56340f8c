import igraph as ig
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cookbook import data as datasets
from cookbook.index import communities as cm
from cookbook.index import extract, graph, hierarchy


def two_cliques(bridge_weight=1.0):
    G = nx.Graph()
    G.add_edges_from((a, b) for a in range(5) for b in range(a + 1, 5))
    G.add_edges_from((a, b) for a in range(5, 10) for b in range(a + 1, 10))
    G.add_edge(4, 5, weight=bridge_weight)
    return G


@st.composite
def random_graphs(draw):
    n = draw(st.integers(3, 25))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=60))
    weights = draw(st.lists(st.floats(0.1, 5.0), min_size=len(edges), max_size=len(edges)))
    A = sp.lil_matrix((n, n))
    for (a, b), w in zip(edges, weights):
        if a != b:
            A[a, b] = A[b, a] = w
    if A.nnz == 0:
        A[0, 1] = A[1, 0] = 1.0
    return A.tocsr()


def test_two_cliques_found_by_every_method():
    G = two_cliques()
    want = np.array([0] * 5 + [1] * 5)
    for p in (cm.leiden(G), cm.leiden(G, engine="igraph"), cm.louvain(G), cm.louvain(G, engine="networkx"),
              cm.greedy_modularity(G)):
        assert cm.compare(p.membership, want) == pytest.approx(1.0)
        assert p.modularity == pytest.approx(nx.community.modularity(G, [set(range(5)), set(range(5, 10))]))


def test_modularity_matches_networkx_and_weights_are_honoured():
    G = two_cliques(bridge_weight=50.0)  # a heavy bridge changes the optimum
    p = cm.leiden(G, seed=1)
    comms = [set(np.flatnonzero(p.membership == c)) for c in range(p.n_communities)]
    assert p.modularity == pytest.approx(nx.community.modularity(G, comms, weight="weight"))
    assert cm.modularity(G, p.membership) == pytest.approx(p.modularity)
    assert p.membership[4] == p.membership[5]


def test_resolution_and_cpm():
    G = two_cliques()
    assert cm.leiden(G, resolution=0.05).n_communities == 1
    assert cm.leiden(G, resolution=5.0).n_communities >= 2
    assert cm.leiden(G, objective="cpm", resolution=0.5).n_communities == 2
    assert cm.leiden(G, objective="cpm", resolution=0.01).n_communities == 1


def test_planted_groups_recovered_on_a_clean_world():
    # The default world blurs its groups on purpose (see make_world's knobs); without that, Leiden must find them
    # on the graph the notebooks cluster (community_types). A region, named across the groups that share it, is a
    # bridge that merges them even there (data/README.md), which is why that graph leaves it out.
    corpus = datasets.from_world(datasets.make_world(scale="class", mixing=0.05, bridging=0.0, namesakes=0.0,
                                                     skew=0.0))
    ms = extract.gazetteer_mentions(corpus.documents, corpus.gazetteer())
    nmi = {}
    for types in (corpus.community_types, datasets.ENTITY_TYPES):
        _, g = graph.corpus_graph(corpus, types, mentions=ms)
        nmi[types] = cm.compare(cm.leiden(g).membership, [corpus.entity_index[e].group for e in g.ids])
    assert "region" not in corpus.community_types and nmi[corpus.community_types] >= 0.9
    assert nmi[datasets.ENTITY_TYPES] < nmi[corpus.community_types] - 0.05, nmi


def test_leiden_connected_where_louvain_is_not():
    hard = datasets.power_law_graph(8000, 40000, exponent=2.1, seed=0)
    louvain = [cm.disconnected_communities(hard, cm.louvain(hard, seed=s).membership) for s in range(5)]
    leiden = [cm.disconnected_communities(hard, cm.leiden(hard, seed=s).membership) for s in range(3)]
    assert sum(louvain) > 0 and sum(leiden) == 0


def test_disconnected_communities_against_induced_subgraphs():
    G = two_cliques()
    glued = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 0])  # node 9 sits alone in community 0's side
    ref = sum(not nx.is_connected(G.subgraph(np.flatnonzero(glued == c).tolist())) for c in (0, 1))
    assert cm.disconnected_communities(G, glued) == ref == 1


@settings(max_examples=40, deadline=None)
@given(random_graphs(), st.integers(0, 5))
def test_membership_properties(A, seed):
    p = cm.leiden(A, seed=seed)
    assert len(p.membership) == A.shape[0]
    assert set(p.membership.tolist()) == set(range(p.n_communities))
    assert np.array_equal(cm.leiden(A, seed=seed).membership, p.membership)
    assert cm.disconnected_communities(A, p.membership) == 0
    ref = ig.Graph.Weighted_Adjacency(A.toarray().tolist(), mode="undirected")
    assert p.modularity == pytest.approx(ref.modularity(p.membership.tolist(), weights="weight"))


@settings(max_examples=30, deadline=None)
@given(random_graphs(), st.integers(2, 6))
def test_hierarchy_levels_partition_their_parents(A, max_size):
    h = hierarchy.hierarchical_leiden(A, max_cluster_size=max_size)
    for lvl in range(1, len(h.levels)):
        child, parent = h.levels[lvl], h.levels[lvl - 1]
        for c in range(child.max() + 1):
            assert len(set(parent[child == c])) == 1
            assert h.parents[lvl][c] == parent[child == c][0]
    last = h.levels[-1]
    sizes = np.bincount(last)
    assert all(s <= max_size or c in h.unsplittable for c, s in enumerate(sizes))
    assert all(sizes[c] > max_size for c in h.unsplittable)


def test_unsplittable_clique_is_reported():
    clique = nx.complete_graph(6)
    h = hierarchy.hierarchical_leiden(clique, max_cluster_size=3)
    assert len(h.levels) == 1 and h.unsplittable == [0]


def test_canonical_numbering():
    assert cm.canonical([5, 5, 2, 9, 9, 9]).tolist() == [1, 1, 2, 0, 0, 0]


def test_bad_inputs_name_the_problem():
    with pytest.raises(ValueError, match="empty graph"):
        cm.leiden(nx.Graph())
    G = nx.Graph()
    G.add_nodes_from(range(3))
    with pytest.raises(ValueError, match="no edges"):
        cm.leiden(G)
    neg = two_cliques(bridge_weight=-1.0)
    with pytest.raises(ValueError, match="negative edge weights"):
        cm.leiden(neg)
    with pytest.raises(ValueError, match="resolution"):
        cm.leiden(two_cliques(), resolution=0)
    with pytest.raises(ValueError, match="resolution"):
        cm.louvain(two_cliques(), resolution=-1)
    with pytest.raises(ValueError, match="max_cluster_size"):
        hierarchy.hierarchical_leiden(two_cliques(), max_cluster_size=1)
    with pytest.raises(ValueError, match="objective"):
        cm.leiden(two_cliques(), objective="surprise")
    with pytest.raises(ValueError, match="engine"):
        cm.leiden(two_cliques(), engine="gpu")
    with pytest.raises(ValueError, match="length"):
        cm.compare([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="square"):
        cm.leiden(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(TypeError, match="unsupported graph"):
        cm.leiden([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="finite"):
        cm.leiden(sp.csr_matrix(np.array([[0, np.nan], [np.nan, 0]])))


def looped_graph():
    """Two weighted cliques with self-loops of different weights (a loop counts twice in a degree)."""
    G = two_cliques(bridge_weight=2.0)
    G.add_edge(0, 0, weight=3.0)
    G.add_edge(7, 7, weight=0.5)
    return G


def test_self_loops_kept_for_every_input_type():
    G = looped_graph()
    A = nx.to_scipy_sparse_array(G, nodelist=range(10), weight="weight", format="csr")
    g = ig.Graph(n=10, edges=list(G.edges()))
    g.es["weight"] = [d.get("weight", 1.0) for *_, d in G.edges(data=True)]
    m = [0] * 3 + [1] * 7
    want = nx.community.modularity(G, [set(range(3)), set(range(3, 10))], weight="weight")
    got = [cm.modularity(x, m) for x in (A, sp.coo_matrix(A), G, g)]
    assert got == pytest.approx([want] * 4, abs=1e-12) and len({round(q, 12) for q in got}) == 1
    assert sum(cm.to_igraph(A).is_loop()) == 2
    # a directed (asymmetric) matrix: weights of i→j and j→i add up, the loop is counted once
    D = sp.triu(A).tocsr()
    assert cm.modularity(D, m) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("engine", ["leidenalg", "igraph"])
@pytest.mark.parametrize("objective, resolution", [("modularity", 1.0), ("modularity", 1.7), ("cpm", 0.3)])
def test_quality_is_igraph_modularity_whatever_the_engine(engine, objective, resolution):
    G = looped_graph()
    p = cm.leiden(G, engine=engine, objective=objective, resolution=resolution, seed=3)
    gamma = resolution if objective == "modularity" else 1.0  # CPM's resolution is a density, not a γ
    comms = [set(np.flatnonzero(p.membership == c).tolist()) for c in range(p.n_communities)]
    assert p.quality == pytest.approx(nx.community.modularity(G, comms, weight="weight", resolution=gamma), abs=1e-12)
    assert p.quality == p.modularity and p.engine == engine and np.isfinite(p.engine_quality)


# -- labels are only names (issue 30) ----------------------------------------------------------------------

def karate():
    G = nx.karate_club_graph()
    return G, nx.to_scipy_sparse_array(G, nodelist=range(34), weight="weight"), [G.nodes[i]["club"] for i in range(34)]


@pytest.mark.parametrize("relabel", [lambda c: c, lambda c: 0.2 if c == "Mr. Hi" else 0.7,
                                     lambda c: (c, 1), lambda c: np.float64(len(c)) / 3],
                         ids=["strings", "floats", "tuples", "numpy-floats"])
def test_any_hashable_labels_score_as_networkx_does(relabel):
    """Before: float labels (0.2, 0.7) scored modularity 0.0 and strings ended in igraph's 'sequence elements
    must be integers'. networkx's modularity of the same two sets is the reference."""
    G, A, club = karate()
    labels = [relabel(c) for c in club]
    want = nx.community.modularity(G, [{i for i in range(34) if club[i] == k} for k in set(club)], weight="weight")
    assert cm.modularity(A, labels) == pytest.approx(want, abs=1e-12) and want > 0.3
    as_ints = [int(c == "Officer") for c in club]
    assert cm.compare(labels, as_ints) == pytest.approx(1.0)
    assert cm.compare(labels, as_ints, "ari") == pytest.approx(1.0)
    assert cm.canonical(labels).tolist() == cm.canonical(as_ints).tolist()
    assert cm.disconnected_communities(A, labels) == cm.disconnected_communities(A, as_ints)


@pytest.mark.parametrize("membership,error,match", [
    ([0, float("nan")] + [0] * 32, ValueError, "missing label"),
    ([None] * 34, ValueError, "missing label"),
    ([[0]] * 34, ValueError, "flat sequence"),
    ([{0}] * 34, TypeError, "hashable"),
    ("ab" * 17, TypeError, "sequence of labels"),
    ([0] * 33, ValueError, "length 33, graph has 34"),
])
def test_labels_that_name_no_community_are_refused(membership, error, match):
    _, A, _ = karate()
    with pytest.raises(error, match=match):
        cm.modularity(A, membership)


def test_ami_against_every_permutation_and_nmi_bias():
    """Issue 33 (finding 2): NMI between partitions of very different sizes is biased upward. Reference: the
    expected MI enumerated over all 7! relabellings (the exact random-labels model), MI from igraph's NMI."""
    import itertools

    def entropy(x):
        p = np.bincount(x) / len(x)
        return float(-(p[p > 0] * np.log(p[p > 0])).sum())

    def mutual_info(x, y):  # from igraph's NMI = 2 MI / (H_x + H_y): an independent route to MI
        return ig.compare_communities(list(x), list(y), method="nmi") * (entropy(x) + entropy(y)) / 2

    for a, b in (([0, 0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 1, 2]), ([0, 1, 2, 3, 4, 4, 4], [0, 0, 0, 0, 1, 1, 1])):
        a, b = np.array(a), np.array(b)
        emi = np.mean([mutual_info(a, b[list(p)]) for p in itertools.permutations(range(7))])
        expected = (mutual_info(a, b) - emi) / ((entropy(a) + entropy(b)) / 2 - emi)
        assert cm.compare(a, b, "ami") == pytest.approx(expected, abs=1e-9)
    assert cm.compare([3, 3, 5, 5, 7], [1, 1, 2, 2, 0], "ami") == pytest.approx(1.0)
    # Forty singletons against four groups of ten: NMI reads agreement where there is none; AMI and ARI read 0.
    singletons, groups = np.arange(40), np.repeat(np.arange(4), 10)
    assert cm.compare(singletons, groups) > 0.5
    assert cm.compare(singletons, groups, "ami") == pytest.approx(0.0, abs=1e-9)
    assert cm.compare(singletons, groups, "ari") == pytest.approx(0.0, abs=1e-9)
    chance = cm.chance_agreement(singletons, groups, n_perm=20, seed=1)
    assert chance.shape == (20,) and np.allclose(chance, cm.compare(singletons, groups))  # any relabelling: same
    assert abs(np.mean(cm.chance_agreement(groups, groups, "ami", n_perm=50, seed=2))) < 0.05
    with pytest.raises(ValueError, match="'ami'"):
        cm.compare([0, 1], [0, 1], "vi")
