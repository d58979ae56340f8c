"""Generated corpora — unicode, empty and whitespace-only documents, repeated and overlapping aliases,
duplicate ids — pushed through extract → graph → communities → PPR → seeds: no crash, invariants hold.
A named ValueError for input that cannot work (duplicate ids, no edges) is an answer, not a crash."""

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cookbook.data.records import build_gazetteer
from cookbook.index import communities, extract, graph
from cookbook.linalg import ppr
from cookbook.query import hipporag, seeds

NAMES = ["Ada Vell", "Vell", "Vell Works", "Zoë Ångström", "Ångström", "東京", "Ada", "O'Neil", "vell"]
FILLER = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@st.composite
def corpora(draw):
    n_ent = draw(st.integers(1, 6))
    entries = [(f"E{i}", draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3))) for i in range(n_ent)]
    n_docs = draw(st.integers(1, 8))
    docs = []
    for d in range(n_docs):
        parts = draw(st.lists(st.one_of(st.sampled_from(NAMES), FILLER, st.just("   "), st.just("")), max_size=8))
        doc_id = draw(st.sampled_from([f"D{d}", "D0"]))  # sometimes a duplicate id
        docs.append((doc_id, " ".join(parts)))
    return entries, docs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora())
def test_pipeline_never_crashes_and_keeps_its_invariants(case):
    entries, docs = case
    gaz = build_gazetteer(entries)
    ids = [e for e, _ in entries]
    if len({d for d, _ in docs}) < len(docs):
        try:
            extract.gazetteer_mentions(docs, gaz)
        except ValueError as e:
            assert "duplicate document id" in str(e)
            return
        raise AssertionError("duplicate ids were accepted")
    ms = extract.gazetteer_mentions(docs, gaz)
    text = dict(docs)
    folded = {k.lower() for k in gaz}
    prev = {}
    for m in ms:  # spans are real, surfaces are gazetteer entries, no overlaps within a document
        assert text[m.doc_id][m.start:m.end] == m.surface and m.surface.lower() in folded
        assert m.entity_id in ids and m.start >= prev.get(m.doc_id, 0)
        prev[m.doc_id] = m.end
    g = graph.cooccurrence_graph(ms, docs, [(e, e) for e in ids])
    A = g.adjacency
    assert (A != A.T).nnz == 0 and A.diagonal().sum() == 0
    assert (A.data <= len(docs)).all() and (A.data >= 1).all()
    try:
        part = communities.leiden(g, seed=0)
    except ValueError as e:
        assert g.n_edges == 0 and "no edges" in str(e)
    else:
        assert len(part.membership) == len(ids)
        assert communities.disconnected_communities(g, part.membership) == 0
    pg = hipporag.passage_graph(docs, ms, ids)
    if ms:
        v0 = hipporag.seed_vector(pg, {ms[0].entity_id: 1.0})
        r = ppr.personalized_pagerank(pg.W, v0, tol=1e-10, max_iter=500)
        assert r.converged and np.all(r.scores >= -1e-15) and abs(r.scores.sum() - 1) < 1e-9
        depth = 2
        res = seeds.bfs(pg.adjacency, [pg.node(ms[0].entity_id)], depth)
        assert res.hops.min() == 0 and res.hops.max() <= depth
        N = seeds.neighbourhoods(pg.adjacency, res.nodes)
        k = min(3, len(res.nodes))
        picked = seeds.select_seeds(res.nodes, -res.hops.astype(float), N, k)
        assert len(set(picked.tolist())) == k
    else:
        assert sp.csr_matrix(pg.adjacency).nnz == 0
