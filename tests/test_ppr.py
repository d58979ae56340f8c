import warnings

import igraph as ig
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cookbook import metrics
from cookbook.index import extract
from cookbook.linalg import ppr, top_k
from cookbook.query import hipporag


@st.composite
def directed_graphs(draw):
    """Weighted directed graphs with dangling nodes and self-loops, plus a personalization vector."""
    n = draw(st.integers(2, 20))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.floats(0.1, 5.0)),
                          max_size=50))
    A = sp.lil_matrix((n, n))
    for a, b, w in edges:
        A[a, b] += w
    v0 = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    if v0.sum() == 0:
        v0[draw(st.integers(0, n - 1))] = 1.0
    lam = draw(st.sampled_from([0.15, 0.5, 0.85]))
    return A.tocsr(), v0, lam


@settings(max_examples=80, deadline=None)
@given(directed_graphs())
def test_agrees_with_networkx_and_igraph(case):
    A, v0, lam = case
    n = A.shape[0]
    r = ppr.personalized_pagerank(ppr.transition_matrix(A), v0, restart=lam, tol=1e-12, max_iter=2000)
    assert r.converged and np.all(r.scores >= 0) and r.scores.sum() == pytest.approx(1.0, abs=1e-9)
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    coo = A.tocoo()
    G.add_weighted_edges_from(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()))
    ref_nx = nx.pagerank(G, alpha=1 - lam, personalization=dict(enumerate(v0)), tol=1e-13, max_iter=5000)
    assert np.abs(r.scores - np.array([ref_nx[i] for i in range(n)])).sum() < 1e-6
    g = ig.Graph(n=n, edges=list(zip(coo.row.tolist(), coo.col.tolist())), directed=True)
    g.es["weight"] = coo.data.tolist()
    ref_ig = g.personalized_pagerank(reset=(v0 / v0.sum()).tolist(), damping=1 - lam, weights="weight")
    assert np.abs(r.scores - np.array(ref_ig)).sum() < 1e-6


@settings(max_examples=60, deadline=None)
@given(directed_graphs(), st.integers(1, 5))
def test_top_k_is_exactly_the_full_solves_top_k(case, k):
    A, v0, lam = case
    n = A.shape[0]
    if k >= n:
        k = n - 1
    W = ppr.transition_matrix(A)
    full = ppr.personalized_pagerank(W, v0, restart=lam, tol=1e-14, max_iter=5000).scores
    top = top_k.top_k_pagerank(W.tocsc(), v0, k, restart=lam, max_iter=400)
    if top.certified:
        want = np.lexsort((np.arange(n), -full))[:k]
        assert top.ids.tolist() == want.tolist()
        assert np.all(top.lower <= full[top.ids] + 1e-12)
        assert np.all(full[top.ids] <= top.lower + top.slack + 1e-12)
    else:  # only exact ties defeat the certificate
        s = np.sort(full)[::-1]
        assert np.min(np.abs(np.diff(s[: k + 1]))) < 1e-9


@settings(max_examples=60, deadline=None)
@given(directed_graphs(), st.integers(1, 4), st.sampled_from([0.0, 1e-6, 1e-3]), st.integers(0, 2**32 - 1))
def test_top_k_among_a_subset_with_a_margin(case, k, margin, seed):
    """Ranking only masked nodes, certified beyond ``margin`` (with the walk's per-node inflow bound): the
    full solve's top-k of those nodes."""
    A, v0, lam = case
    n = A.shape[0]
    among = np.random.default_rng(seed).random(n) < 0.6
    if among.sum() <= k:
        return
    W = ppr.transition_matrix(A)
    full = ppr.personalized_pagerank(W, v0, restart=lam, tol=1e-14, max_iter=5000).scores
    top = top_k.top_k_pagerank(W.tocsc(), v0, k, restart=lam, max_iter=400, among=among, margin=margin)
    ranked = np.flatnonzero(among)
    order = ranked[np.lexsort((ranked, -full[ranked]))]
    if top.certified:
        assert top.ids.tolist() == order[:k].tolist()
        assert np.all(np.diff(-full[order[: k + 1]]) > margin - 1e-12)  # each certified gap clears the margin
    else:
        assert np.min(np.diff(-full[order[: k + 1]])) < margin + 1e-9


def _dense_ppr(A, v0, lam):
    """Brute force, independent of the iteration: solve ``x = λ v0 + (1-λ) M x`` with ``M`` the transition
    matrix whose dangling columns are ``v0``."""
    A = np.asarray(A.todense(), dtype=float)
    v0 = v0 / v0.sum()
    out = A.sum(axis=1)
    M = np.where(out[None, :] > 0, A.T / np.where(out > 0, out, 1)[None, :], v0[:, None])
    return np.linalg.solve(np.eye(len(v0)) - (1 - lam) * M, lam * v0)


@settings(max_examples=60, deadline=None)
@given(directed_graphs(), st.integers(1, 4), st.sampled_from([1, 3, 8]), st.sampled_from([0.0, 1e-3]))
def test_push_bounds_hold_and_certified_ranks_are_exact(case, k, rounds, eps):
    """After any number of rounds: lower <= true <= upper for the reported nodes, the L1 error of the lower
    bounds is what is reported, and a certified rank holds the exact ranking's node."""
    A, v0, lam = case
    n = A.shape[0]
    k = min(k, n - 1)
    W = ppr.transition_matrix(A)
    x = _dense_ppr(A, v0, lam)
    t = top_k.top_k_push(W.tocsc(), v0, k, restart=lam, rounds=rounds, eps=eps)
    assert np.all(t.lower <= x[t.ids] + 1e-12) and np.all(x[t.ids] <= t.upper + 1e-12)
    assert np.all((t.lower <= t.estimate) & (t.estimate <= t.upper))
    # without a threshold every round pushes everything: the residual is (1-λ)^rounds, the lower bounds
    # miss (1-λ) of it
    assert eps > 0 or abs(t.l1_error - (1 - lam) ** (rounds + 1)) < 1e-12
    want = np.lexsort((np.arange(n), -x))
    for j in np.flatnonzero(t.certified):
        assert t.ids[j] == want[j]


@settings(max_examples=40, deadline=None)
@given(directed_graphs(), st.integers(1, 4))
def test_push_run_to_convergence_is_the_exact_top_k(case, k):
    """Enough rounds and the estimate is the exact solve's (tol 1e-9 against the brute-force solve), and the
    top k are the exact ranking's, ties by id."""
    A, v0, lam = case
    n = A.shape[0]
    k = min(k, n - 1)
    W = ppr.transition_matrix(A)
    x = _dense_ppr(A, v0, lam)
    exact = ppr.personalized_pagerank(W, v0, restart=lam, tol=1e-12, max_iter=5000).scores
    assert np.abs(exact - x).sum() < 1e-9
    t = top_k.top_k_push(W, v0, k, restart=lam, rounds=400)
    assert t.l1_error < 1e-12 and np.abs(t.estimate - x[t.ids]).max() < 1e-9
    s = np.round(x, 9)  # exact ties (symmetric nodes) carry rounding noise: compare at the tolerance
    assert np.all(np.round(t.estimate, 9) == s[t.ids])
    assert t.ids.tolist() == np.lexsort((np.arange(n), -s))[:k].tolist() or np.any(
        np.abs(np.diff(np.sort(x)[::-1][: k + 1])) < 1e-9)


def test_push_on_a_power_law_graph_with_dangling_nodes():
    """The approximate option, three rounds, on a graph with dangling and isolated nodes: bounds hold,
    certified ranks are the exact ones, most of the top 10 agrees with the exact solve, and the batch equals
    the single queries."""
    from cookbook.data.realdata import power_law_graph

    g = power_law_graph(3000, 9000, exponent=2.5, seed=1)
    A = sp.csr_matrix(g.get_adjacency_sparse(), dtype=float).tolil()
    A[np.arange(0, 3000, 7)] = 0  # every 7th node loses its out-edges: dangling
    A = A.tocsr()
    W = ppr.transition_matrix(A)
    assert ppr.dangling_mask(W).sum() > 400
    rng = np.random.default_rng(0)
    V0 = np.zeros((3000, 20))
    for j in range(20):
        V0[rng.choice(3000, 5, replace=False), j] = 1
    batch = top_k.top_k_push_batch(ppr.Walk(W.tocsc()), V0, 10, rounds=3)
    agree = 0
    for j, t in enumerate(batch):
        x = ppr.personalized_pagerank(W, V0[:, j], tol=1e-13, max_iter=500).scores
        want = np.lexsort((np.arange(3000), -x))[:10]
        assert np.all(t.lower <= x[t.ids] + 1e-12) and np.all(x[t.ids] <= t.upper + 1e-12)
        assert all(t.ids[i] == want[i] for i in np.flatnonzero(t.certified))
        agree += set(t.ids.tolist()) == set(want.tolist())
        single = top_k.top_k_push(W, V0[:, j], 10, rounds=3)
        assert single.ids.tolist() == t.ids.tolist() and np.allclose(single.estimate, t.estimate, rtol=1e-12)
        assert not t.exact
    assert agree >= 15


def _same_top_k(ids, x, k, tol=1e-9):
    """``ids`` is the top-``k`` set of ``x`` (ties by index), but for nodes within ``tol`` of the k-th
    score, which a solve at any finite tolerance may rank either way."""
    want = np.lexsort((np.arange(len(x)), -x))[:k]
    kth = np.sort(x)[::-1][k - 1]
    return len(set(ids.tolist())) == k and all(abs(x[i] - kth) < tol for i in set(ids.tolist()) ^ set(want.tolist()))


@settings(max_examples=150, deadline=None)
@given(directed_graphs(), st.integers(1, 6), st.booleans())
def test_the_plain_top_k_push_is_the_exact_top_k_set(case, k, unit):
    """The default call (no ``rounds``) against the brute-force solve: the exact top-k set, ties by index, on
    directed graphs with dangling nodes and self-loops; with unit weights and a 0/1 ``v0`` (``unit``) exact
    ties are everywhere. Every reported interval holds the true score."""
    A, v0, lam = case
    n = A.shape[0]
    k = min(k, n - 1)
    if unit:
        A, v0 = A.sign(), (v0 > 0).astype(float) if (v0 > 0).any() else np.eye(n)[0]
    x = _dense_ppr(A, v0, lam)
    t = top_k.top_k_push(ppr.transition_matrix(A), v0, k, restart=lam)
    assert t.exact and _same_top_k(t.ids, x, k)
    assert np.all(t.lower <= x[t.ids] + 1e-12) and np.all(x[t.ids] <= t.upper + 1e-12)
    assert list(t.ids) == sorted(t.ids, key=lambda i: (-t.estimate[list(t.ids).index(i)], i))


def test_the_plain_top_k_push_on_power_law_graphs_agrees_with_igraph_and_scipy():
    """On heavy-tailed graphs, undirected and directed, with dangling nodes and leaves that tie exactly (same
    neighbour): the default call's top 10 is the exact set on every query, checked against igraph PRPACK and
    scipy's solve of ``(I - (1-λ)W) y = λ v0`` (dangling mass left out: ``y`` ∝ the scores); the batch
    answers the same."""
    from scipy.sparse.linalg import gmres

    from cookbook.data.realdata import power_law_graph

    rng = np.random.default_rng(5)
    for seed, directed in ((2, False), (3, True)):
        g = power_law_graph(4000, 12000, exponent=2.5, seed=seed)
        A = sp.csr_matrix(g.get_adjacency_sparse(), dtype=float)
        if directed:
            A = sp.triu(A).tocsr()  # one direction per edge: more dangling nodes, one-way streets
            g = ig.Graph(n=4000, edges=list(zip(*A.nonzero())), directed=True)
        W = ppr.transition_matrix(A)
        V0 = np.zeros((4000, 12))
        for j in range(12):
            V0[rng.choice(4000, int(rng.integers(1, 6)), replace=False), j] = 1
        batch = top_k.top_k_push_batch(ppr.Walk(W), V0, 10)
        for j, t in enumerate(batch):
            v0 = V0[:, j] / V0[:, j].sum()
            y, info = gmres(sp.eye(4000, format="csr") - 0.5 * W, 0.5 * v0, rtol=1e-13, atol=0, restart=60)
            x = y / y.sum()
            prpack = np.array(g.personalized_pagerank(reset=v0.tolist(), damping=0.5, directed=directed))
            assert info == 0 and np.abs(x - prpack).sum() < 1e-8
            assert t.exact and _same_top_k(t.ids, x, 10) and _same_top_k(t.ids, prpack, 10)
            assert np.all(t.lower <= x[t.ids] + 1e-12) and np.all(x[t.ids] <= t.upper + 1e-12)
            assert t.ids.tolist() == top_k.top_k_push(W, V0[:, j], 10).ids.tolist()
        assert ppr.dangling_mask(W).any()


@settings(max_examples=80, deadline=None)
@given(directed_graphs(), st.integers(1, 4), st.sampled_from([1.0, 1e-2, 1e-4]), st.booleans())
def test_thresholded_push_bounds_every_node_and_finds_every_candidate(case, k, theta, power_law):
    """The exact call's forward push (``push.\\_LocalPush``) against a dense solve of the substochastic series
    ``y = λ(I - (1-λ)W)⁻¹ v0``: after pushing to ``θ``, ``r ≤ θ·h``, every node's ``y`` lies in its
    ``[p + λr, p + λr + (1-λ)·min(‖r‖₁·cap, F·ρ·Wh)]``, and the candidates (found among the touched nodes and
    the untouched hubs only) are exactly the nodes a scan of every node's upper bound against the k-th lower
    bound finds; the bounds unrolled through ``depth`` steps of ``W`` (``sharpen``) lie inside those and still
    around ``y``. ``power_law``: a 300-node heavy-tailed graph, where most nodes stay untouched."""
    from cookbook.data.realdata import power_law_graph
    from cookbook.linalg.push import TIE_TOL, _LocalPush

    A, v0, lam = case
    if power_law:
        A = sp.csr_matrix(power_law_graph(300, 900, exponent=2.5, seed=int(v0.sum() * 1000) % 7)
                          .get_adjacency_sparse(), dtype=float)
        v0 = np.zeros(300)
        v0[[3, 77]] = 1
    n = A.shape[0]
    k = min(k, n - 1)
    walk = ppr.Walk.from_adjacency(A)
    W = walk.csr.toarray()
    v = v0 / v0.sum()
    y = np.linalg.solve(np.eye(n) - (1 - lam) * W, lam * v)
    fwd = _LocalPush(walk, v, lam)
    level = theta * fwd.rho()
    fwd.push(level)
    assert np.all(fwd.r <= level * walk.balance[0])
    assert abs(fwd.rm - fwd.r.sum()) < 1e-12 and np.all(fwd.r[~fwd.seen] == 0) and np.all(fwd.p[~fwd.seen] == 0)
    lo = fwd.p + lam * fwd.r
    hi = lo + (1 - lam) * fwd._tail(np.arange(n), fwd.rho())
    assert np.all(lo <= y + 1e-12) and np.all(y <= hi + 1e-12)
    for depth in (1, 2, 3):  # unrolled bounds: inside the plain ones, still around the true y
        slo, shi = fwd.sharpen(np.arange(n), depth)
        assert np.all(lo <= slo + 1e-15) and np.all(slo <= y + 1e-12) and np.all(y <= shi + 1e-12)
        assert np.all(shi <= hi + 1e-15)
    cand, clo, chi = fwd.candidates(k)
    tau = np.sort(lo)[::-1][k - 1] - 2 * TIE_TOL  # widened as the certificate widens every interval
    assert sorted(cand.tolist()) == np.flatnonzero(hi >= tau).tolist()
    assert np.allclose(clo, lo[cand], rtol=0, atol=1e-15) and np.allclose(chi, hi[cand], rtol=0, atol=1e-15)


def test_walk_balance_bounds_one_step():
    """``W h ≤ c·h`` for the walk's ``balance`` (measured, so it holds however far the iteration got)."""
    from cookbook.data.realdata import power_law_graph

    A = sp.csr_matrix(power_law_graph(500, 1500, seed=4).get_adjacency_sparse(), dtype=float)
    for M in (A, sp.triu(A).tocsr()):
        h, Wh, c = ppr.Walk.from_adjacency(M).balance
        assert np.all(h > 0) and np.allclose(Wh, ppr.transition_matrix(M) @ h) and np.all(Wh <= c * h * (1 + 1e-12))
        assert c <= 1 / 0.9 + 1e-6


def test_inflow_bound_is_the_row_maximum():
    A = sp.random(60, 60, density=0.05, random_state=2, format="csr")
    W = ppr.transition_matrix(A)
    assert np.array_equal(ppr.inflow_bound(W), W.toarray().max(axis=1))
    assert np.array_equal(ppr.Walk(W.tocsc()).inflow, ppr.inflow_bound(W))


def test_top_k_on_a_larger_graph_uses_sparse_then_dense_steps():
    from cookbook.data.realdata import power_law_graph

    g = power_law_graph(3000, 9000, exponent=2.5, seed=1)
    A = sp.csr_matrix(g.get_adjacency_sparse(), dtype=float)
    W = ppr.transition_matrix(A)
    rng = np.random.default_rng(0)
    for _ in range(5):
        v0 = np.zeros(3000)
        v0[rng.choice(3000, 5, replace=False)] = 1
        full = ppr.personalized_pagerank(W, v0, tol=1e-14, max_iter=500).scores
        top = top_k.top_k_pagerank(W.tocsc(), v0, 10)
        if top.certified:
            assert top.ids.tolist() == np.lexsort((np.arange(3000), -full))[:10].tolist()


def test_batch_equals_single():
    rng = np.random.default_rng(3)
    A = sp.random(30, 30, density=0.1, random_state=3, format="csr")
    W = ppr.transition_matrix(A)
    V0 = rng.random((30, 4))
    batch = ppr.personalized_pagerank_batch(W, V0, tol=1e-12, max_iter=1000).scores
    for j in range(4):
        single = ppr.personalized_pagerank(W, V0[:, j], tol=1e-12, max_iter=1000).scores
        assert np.abs(batch[:, j] - single).sum() < 1e-10


def test_transition_matrix_is_column_stochastic_except_dangling():
    A = sp.csr_matrix(np.array([[0, 2, 1], [0, 0, 0], [3, 0, 0]], dtype=float))
    W = ppr.transition_matrix(A)
    assert np.allclose(np.asarray(W.sum(axis=0)).ravel(), [1, 0, 1])
    assert W[1, 0] == pytest.approx(2 / 3) and W[0, 2] == 1.0


@pytest.mark.parametrize("v0,match", [
    (np.zeros(3), "all zeros"), (np.array([1, -1, 0.5]), "negative"), (np.array([1, np.nan, 0]), "NaN"),
    (np.ones(4), "length 3"),
])
def test_bad_v0(v0, match):
    W = ppr.transition_matrix(sp.csr_matrix(np.ones((3, 3))))
    with pytest.raises(ValueError, match=match):
        ppr.personalized_pagerank(W, v0)


@pytest.mark.parametrize("restart", [0, -0.1, 1.5, float("nan")])
def test_bad_restart(restart):
    W = ppr.transition_matrix(sp.csr_matrix(np.ones((3, 3))))
    with pytest.raises(ValueError, match="restart"):
        ppr.personalized_pagerank(W, np.ones(3), restart=restart)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="square"):
        ppr.transition_matrix(sp.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match=">= 0"):
        ppr.transition_matrix(sp.csr_matrix(np.array([[0, -1.0], [1, 0]])))
    W = ppr.transition_matrix(sp.csr_matrix(np.ones((3, 3))))
    with pytest.raises(ValueError, match="k=3 must be smaller"):
        top_k.top_k_pagerank(W, np.ones(3), 3)
    with pytest.raises(ValueError, match="k must be a positive"):
        top_k.top_k_pagerank(W, np.ones(3), 0)
    with pytest.raises(ValueError, match="tol"):
        ppr.personalized_pagerank(W, np.ones(3), tol=0)


def test_passage_graph_and_seeds(tiny_world):
    ms = extract.gazetteer_mentions(tiny_world.documents, tiny_world.gazetteer())
    ids = [e.id for e in tiny_world.entities]
    pg = hipporag.passage_graph(tiny_world.documents, ms, ids)
    assert pg.adjacency.shape[0] == len(tiny_world.documents) + len(ids)
    assert (pg.adjacency != pg.adjacency.T).nnz == 0
    e = ids[0]
    n_docs = len({m.doc_id for m in ms if m.entity_id == e})
    v = hipporag.seed_vector(pg, {e: 1.0}, {tiny_world.documents[0].id: 0.4})
    assert v[pg.node(e)] == pytest.approx(1 / n_docs)
    assert v[0] == pytest.approx(0.4 * 0.05)
    with pytest.raises(KeyError, match="unknown node"):
        hipporag.seed_vector(pg, {"E99999": 1.0})
    with pytest.raises(ValueError, match="is a passage"):
        hipporag.seed_vector(pg, {tiny_world.documents[0].id: 1.0})
    with pytest.raises(ValueError, match="larger than"):
        hipporag.rank_passages(pg, v, len(tiny_world.documents) + 1)
    ranked = hipporag.rank_passages(pg, v, 3)
    assert ranked[0][0] in {m.doc_id for m in ms if m.entity_id == e} | {tiny_world.documents[0].id}


def test_top_passages_equals_the_exact_ranking_on_every_question(class_world):
    """The certified fast path returns what a full solve and a sort over every passage return."""
    w = class_world
    hr = hipporag.HippoRetriever.from_world(w)
    pg = hr.graph
    fast_paths = 0
    for q in w.questions:
        q_ents = {m.entity_id for m in extract.gazetteer_mentions({"q": q.text}, w.gazetteer())}
        for hits in (hr.dense_hits(q.text, 10), None):
            v = hipporag.structure_aware_seeds(pg, q.text, q_ents, hr.facts, hits)
            if v.sum() == 0:
                continue
            s = ppr.personalized_pagerank(pg.W, v, tol=1e-8, max_iter=1000).scores
            want = sorted(range(pg.n_passages), key=lambda i: (-round(s[i], 15), pg.passage_ids[i]))[:5]
            assert hipporag.top_passages(pg, v, 5) == [pg.passage_ids[i] for i in want]
            assert [p for p, _ in hipporag.rank_passages(pg, v, 5)] == [pg.passage_ids[i] for i in want]
            fast_paths += top_k.top_k_pagerank(pg.W, v, 5, among=pg.is_passage, margin=1e-8, max_iter=27).certified
    assert fast_paths > len(w.questions)  # most answers came from the certified path, not the fallback


def test_top_passages_falls_back_on_exact_ties():
    docs = {"a": "Ada Vell met Bo Quill.", "b": "Ada Vell met Bo Quill.", "c": "Bo Quill left."}
    gaz = {"Ada Vell": ["E1"], "Bo Quill": ["E2"]}
    pg = hipporag.passage_graph(docs, extract.gazetteer_mentions(docs, gaz), ["E1", "E2"])
    v = hipporag.seed_vector(pg, {"E1": 1.0})
    assert not top_k.top_k_pagerank(pg.W, v, 2, among=pg.is_passage, margin=1e-8, max_iter=27).certified
    assert hipporag.top_passages(pg, v, 2) == ["a", "b"]  # tied: by id
    assert hipporag.top_passages(pg, v, 3) == [p for p, _ in hipporag.rank_passages(pg, v, 3)]


def test_ppr_retrieval_beats_dense_on_two_hop(class_world):
    """The notebook's claim, against gold supporting passages."""
    w = class_world
    hr = hipporag.HippoRetriever.from_world(w)
    got_ppr, got_dense = [], []
    for q in (q for q in w.questions if q.hops == 2):
        hits = hr.dense_hits(q.text, 10)
        # the retriever's steps spelled out, so a change to its wiring shows up against gold
        q_ents = {m.entity_id for m in extract.gazetteer_mentions({"q": q.text}, w.gazetteer())}
        v = hipporag.structure_aware_seeds(hr.graph, q.text, q_ents, hr.facts, hits)
        top = [p for p, _ in hipporag.rank_passages(hr.graph, v, 5)]
        assert top == hr.retrieve(q.text, 5, dense_hits=hits)
        got_ppr.append(len(set(top) & set(q.supporting)) / 2)
        got_dense.append(len(set(list(hits)[:5]) & set(q.supporting)) / 2)
    assert np.mean(got_ppr) > np.mean(got_dense)
    assert metrics.support_recall(top, q.supporting) == got_ppr[-1]  # 2-hop questions have 2 supporting passages


def test_csc_and_a_prepared_walk_give_identical_scores():
    rng = np.random.default_rng(5)
    A = sp.random(40, 40, density=0.08, random_state=5, format="csr")
    W = ppr.transition_matrix(A)
    v0 = rng.random(40)
    ref = ppr.personalized_pagerank(W, v0, tol=1e-12, max_iter=500).scores
    mask = np.asarray(W.sum(axis=0)).ravel() == 0
    assert np.array_equal(ppr.dangling_mask(W), mask) and np.array_equal(ppr.Walk(W).dangling, mask)
    assert mask.any()  # the case has dangling nodes
    for M in (W, W.tocsc(), ppr.Walk(W), ppr.Walk(W.tocsc())):
        got = ppr.personalized_pagerank(M, v0, tol=1e-12, max_iter=500).scores
        assert np.array_equal(got, ref) or np.abs(got - ref).sum() < 1e-14


# ---------------------------------------------------------------- the prepared walk (issue 23, item 3; 22, item 8)

@pytest.mark.parametrize("entry", ["personalized_pagerank", "batch", "top_k_pagerank", "top_k_push", "push_batch"])
@pytest.mark.parametrize("bad,match", [
    ("adjacency", "column-stochastic.*column 0 sums to 2.*transition_matrix"),
    ("nan", "non-finite"), ("negative", "negative"),
])
def test_every_entry_point_refuses_a_matrix_that_is_not_a_walk(entry, bad, match):
    A = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=float))
    W = {"adjacency": A, "nan": ppr.transition_matrix(A).multiply(np.array([[1, np.nan, 1]] * 3)).tocsr(),
         "negative": -ppr.transition_matrix(A)}[bad]
    call = {"personalized_pagerank": lambda: ppr.personalized_pagerank(W, np.ones(3)),
            "batch": lambda: ppr.personalized_pagerank_batch(W, np.ones((3, 2))),
            "top_k_pagerank": lambda: top_k.top_k_pagerank(W, np.ones(3), 1),
            "top_k_push": lambda: top_k.top_k_push(W, np.ones(3), 1),
            "push_batch": lambda: top_k.top_k_push_batch(W, np.ones((3, 2)), 1)}[entry]
    with pytest.raises(ValueError, match=match):
        call()


def test_prepare_keeps_one_walk_per_matrix_and_notices_edits():
    W = ppr.transition_matrix(sp.random(50, 50, density=0.1, random_state=1, format="csr"))
    walk = ppr.prepare(W)
    assert ppr.prepare(W) is walk and ppr.prepare(walk) is walk
    assert ppr.prepare(W.copy()) is not walk  # another matrix, its own walk
    W.data[:] = 0  # edited in place (every node now dangling, still a walk): prepared anew, not the old walk
    assert ppr.prepare(W) is not walk and ppr.prepare(W).dangling.all()


def test_prepare_notices_an_edit_too_small_for_a_float_sum():
    """One value nudged by less than the float sum of all values can register (it rounds away in the sum):
    the walk is still prepared anew — the fingerprint sums the values' bits, so any change to one shows."""
    W = ppr.transition_matrix(sp.random(400, 400, density=0.05, random_state=3, format="csr"))
    walk = ppr.prepare(W)
    total = float(W.data.sum())
    W.data[0] += np.spacing(total) / 4  # a change to W.data[0] (spacing(0.1) is far smaller)...
    assert float(W.data.sum()) == total  # ...that the float sum does not see
    assert ppr.prepare(W) is not walk


def test_the_exact_push_hands_its_arrays_back_zeroed():
    """The exact push reuses zeroed length-n arrays kept on the walk: after many queries they are zero again
    (h kept), and every answer equals the one a fresh walk (new arrays) gives."""
    from cookbook.data.realdata import power_law_graph

    W = ppr.transition_matrix(sp.csr_matrix(power_law_graph(3000, 9000, seed=5).get_adjacency_sparse(), dtype=float))
    walk, rng = ppr.Walk(W), np.random.default_rng(2)
    for _ in range(12):
        v0 = np.zeros(3000)
        v0[rng.choice(3000, 3, replace=False)] = rng.random(3)
        a, b = top_k.top_k_push(walk, v0, 10), top_k.top_k_push(ppr.Walk(W.copy()), v0, 10)
        assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.upper, b.upper)
    assert walk._buffers
    for p, rh, seen, _ in walk._buffers:
        assert not p.any() and not rh.real.any() and not seen.any() and np.array_equal(rh.imag, walk.balance[0])


def test_plain_and_prepared_calls_give_identical_answers():
    from cookbook.data.realdata import power_law_graph

    g = power_law_graph(2000, 8000, exponent=2.5, seed=3)
    W = ppr.transition_matrix(sp.csr_matrix(g.get_adjacency_sparse(), dtype=float))
    walk = ppr.Walk(W)
    v0 = np.zeros(2000)
    v0[[1, 10, 100]] = 1
    assert np.array_equal(ppr.personalized_pagerank(W, v0).scores, ppr.personalized_pagerank(walk, v0).scores)
    a, b = top_k.top_k_push(W, v0, 10), top_k.top_k_push(walk, v0, 10)
    assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.upper, b.upper)
    a, b = top_k.top_k_push(W, v0, 10, rounds=3), top_k.top_k_push(walk, v0, 10, rounds=3)
    assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.upper, b.upper)
    a, b = top_k.top_k_pagerank(W, v0, 10), top_k.top_k_pagerank(walk, v0, 10)
    assert a.ids.tolist() == b.ids.tolist() and a.iterations == b.iterations


def test_wordllama_dense_hits_are_the_brute_force_cosine_over_the_packages_embedding(class_world):
    """HippoRetriever's WordLlama dense seeds, against cosines computed from wordllama's own inference:
    the same passages in the same order up to float32 near-ties, with the cosine (clipped at 0) as the score."""
    from pathlib import Path

    import wordllama

    w = class_world
    hr = hipporag.HippoRetriever.from_world(w, dense="wordllama")
    ref = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    P = ref.embed([d.text for d in w.documents], norm=True).astype(float)
    qs = w.questions[:100]
    for q, qv in zip(qs, ref.embed([q.text for q in qs], norm=True).astype(float)):
        s = P @ qv
        want = np.sort(s)[::-1][:10]
        hits = hr.dense_hits(q.text, 10)
        got = np.array([s[pg_row] for pg_row in map(hr.graph.node, hits)])
        assert np.abs(got - want).max() < 1e-5  # each rank holds a passage with the reference's score there
        assert np.allclose(list(hits.values()), np.maximum(got, 0), atol=1e-5)


def test_lsa_stays_one_argument_away(tiny_world):
    """dense="lsa" builds the 64-dim LSA index the series used before, fitted on the same passages."""
    from cookbook import embed

    hr = hipporag.HippoRetriever.from_world(tiny_world, dense="lsa")
    texts = [d.text for d in tiny_world.documents]
    assert np.array_equal(hr.index.vectors, embed.CosineIndex(embed.LSAEmbedder(64).fit_transform(texts)).vectors)
    assert hipporag.HippoRetriever.from_world(tiny_world, dense="lsa", dim=16).index.vectors.shape[1] == 16
    with pytest.raises(ValueError, match="unknown dense embedder"):
        hipporag.HippoRetriever.from_world(tiny_world, dense="bert")


def test_a_restart_vector_too_large_to_sum_is_scaled_not_zeroed():
    """Before (issue 30): personalized_pagerank(W, [1e308, 1e308, 0]) returned zeros with only a numpy warning
    (the sum overflowed to inf); the scale of v0 never matters, so it equals [1, 1, 0]'s."""
    W = ppr.transition_matrix(sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=float)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no overflow warning either
        huge = ppr.personalized_pagerank(W, [1e308, 1e308, 0]).scores
    assert np.allclose(huge, ppr.personalized_pagerank(W, [1, 1, 0]).scores) and huge.sum() == pytest.approx(1)
    with pytest.raises(ValueError, match="NaN or inf"):
        ppr.personalized_pagerank(W, [np.inf, 1, 0])


def _star_beside_clique(n=60):
    """Node 0 alone, a star (centre 1, leaves 2-5: identical rows of W, one tie group) and a clique on the
    rest, large enough that pushing the centre gathers its column rather than multiplying by W."""
    A = np.zeros((n, n))
    A[1, 2:6] = A[2:6, 1] = 1
    A[6:, 6:] = 1 - np.eye(n - 6)
    return ppr.transition_matrix(sp.csr_matrix(A))


def test_top_k_push_with_restart_one_ties_the_unreached_zeros_by_id():
    """Before: with λ = 1 the untouched nodes' level was 0/0 (a RuntimeWarning), so node 0 (score 0, never
    reached) was left out of the candidates and leaf 2 (score 0 too, a larger id) was returned."""
    W, v = _star_beside_clique(), np.eye(60)[1]
    s = ppr.personalized_pagerank(W, v, restart=1.0).scores
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = top_k.top_k_push(W, v, 2, restart=1.0).ids
    assert sorted(got.tolist()) == sorted(np.lexsort((np.arange(60), -s))[:2].tolist()) == [0, 1]


def test_top_k_push_refuses_a_restart_too_small_to_finish():
    """Before: restart=1e-300 (a valid probability) never returned: each push keeps 1-λ of the mass moving."""
    import signal

    W, v = _star_beside_clique(), np.eye(60)[1]

    def stop(*_):
        raise TimeoutError("top_k_push ran for 10 s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(10)
    try:
        with pytest.raises(ValueError, match="restart λ=1e-300 is too small"):
            top_k.top_k_push(W, v, 3, restart=1e-300)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert len(top_k.top_k_push(W, v, 3, restart=1e-300, rounds=3).ids) == 3  # the approximate push: R rounds


def test_top_k_push_tie_fallback_solve_converges_at_small_restart(monkeypatch):
    """Before: the solve that settles ties ran 5000 iterations whatever λ, unconverged for λ < 0.006 (at
    λ = 0.002 its L1 change was still ~1e-4), and its answer was used as converged."""
    W = ppr.transition_matrix(nx.to_scipy_sparse_array(nx.cycle_graph(40), format="csr", dtype=float))
    solves, solve = [], ppr.personalized_pagerank
    monkeypatch.setattr(ppr, "personalized_pagerank", lambda *a, **kw: solves.append(solve(*a, **kw)) or solves[-1])
    got = top_k.top_k_push(W, np.eye(40)[0], 4, restart=0.002).ids
    assert solves and all(r.converged for r in solves)  # nodes 1 and 39 tie by symmetry: the solve settles them
    assert sorted(got.tolist()) == [0, 1, 2, 39]


@pytest.mark.parametrize("G, seeds, lam, k", [
    (nx.circulant_graph(40, [1, 3, 7]), [0, 1], 0.3, 3),  # i ↦ 1-i swaps the seeds: nodes 4 and 37 tie
    (nx.hypercube_graph(7), [0, 32, 64, 96], 0.15, 2),  # flipping a bit swaps seeds: the four tie
])
def test_top_k_push_keeps_a_symmetric_tie_whose_rows_differ(G, seeds, lam, k):
    """Before: once the bounds were narrower than rounding, candidates() dropped the tied node of smaller id (its
    upper bound a few ulps under the k-th lower bound, compared without _certain's widening), and the larger id
    was certified in its place. Ties at 12 decimals go by id, as the converged solve (and PRPACK) ranks them."""
    G = nx.convert_node_labels_to_integers(G)
    A = nx.to_scipy_sparse_array(G, format="csr", dtype=float)
    v = np.zeros(A.shape[0])
    v[seeds] = 1
    s = np.array(ig.Graph.Adjacency(A.toarray().tolist(), mode="undirected").personalized_pagerank(
        damping=1 - lam, reset=v.tolist(), implementation="prpack"))
    want = np.lexsort((np.arange(len(s)), -np.round(s, 12)))[:k]
    assert sorted(top_k.top_k_push(ppr.transition_matrix(A), v, k, restart=lam).ids.tolist()) == sorted(want.tolist())


def test_top_k_push_tie_fallback_orders_its_set_by_its_estimate():
    """Scores 1e-12 apart and less are settled by the converged solve, the set by the scores rounded to 12
    decimals (ties by id), its order by ``estimate``. Before: which rule held depended on the path — here the
    unwidened candidate filter decided 5e-13 > 0 exactly ({2, 3, 4}) while the circulant's exact tie above was
    split by rounding; and the solve's ids came in the rounded order while ``estimate`` held the unrounded
    scores (node 0, ~1e-36, ranked above node 1, ~1e-24)."""
    W = ppr.transition_matrix(nx.to_scipy_sparse_array(nx.cycle_graph(6), format="csr", dtype=float))
    t = top_k.top_k_push(W, np.eye(6)[3], 3, restart=1 - 1e-12)
    assert sorted(t.ids.tolist()) == [0, 1, 3]  # 2 and 4 (5e-13) tie with 0 and 1 at 12 decimals: by id
    assert t.ids.tolist() == sorted(t.ids.tolist(), key=lambda i: (-t.estimate[list(t.ids).index(i)], i))


@pytest.mark.parametrize("v0, match", [(sp.csr_matrix(np.eye(5)[0]), "sparse matrix"), (np.eye(5)[0] + 1j, "complex")])
def test_a_sparse_or_complex_v0_is_a_type_error_naming_it(v0, match):
    """Before: a sparse v0 was a deep "setting an array element with a sequence." ValueError, and a complex one
    lost its imaginary part with only a ComplexWarning."""
    W = ppr.transition_matrix(nx.to_scipy_sparse_array(nx.cycle_graph(5), format="csr", dtype=float))
    for call in (lambda: top_k.top_k_push(W, v0, 2), lambda: top_k.top_k_push(W, v0, 2, rounds=3),
                 lambda: ppr.personalized_pagerank(W, v0), lambda: top_k.top_k_pagerank(W, v0, 2)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(TypeError, match=match):
                call()


def test_a_large_k_is_answered_by_a_solve_not_a_pairwise_certificate(monkeypatch):
    """Before: k = 3000 on a 20k-node graph built (4k+64)² boolean arrays in the certificate (2.9 s, 237 MB; GBs
    beyond k = 10⁴). Above PAIRWISE_MAX_K the exact call is a converged solve; its set is the exact one, ties by id."""
    n, k = 1200, top_k.PAIRWISE_MAX_K + 1
    g = nx.gnm_random_graph(n, 4 * n, seed=3, directed=True)
    W = ppr.transition_matrix(nx.to_scipy_sparse_array(g, nodelist=range(n), format="csr"))
    v = np.zeros(n)
    v[[5, 17, 400]] = 1
    s = ppr.personalized_pagerank(W, v, tol=1e-13, max_iter=5000).scores
    monkeypatch.setattr(top_k, "_LocalPush", lambda *a: pytest.fail("the push ran for a k above PAIRWISE_MAX_K"))
    got = top_k.top_k_push(W, v, k)
    assert sorted(got.ids.tolist()) == sorted(np.lexsort((np.arange(n), -np.round(s, 12)))[:k].tolist())
    assert got.exact
