import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cookbook.index import extract
from cookbook.query import hipporag
from cookbook.query.rerank import Hit, PPRReranker, Reranker, RRFReranker


def hits(ids, source="s"):
    return [Hit(i, 1.0 / (r + 1), source, {"src": source}) for r, i in enumerate(ids)]


def test_rrf_scores_by_hand():
    out = RRFReranker(k_param=60).fuse([hits(["a", "b", "c"]), hits(["c", "a"])], k=3)
    assert [h.id for h in out] == ["a", "c", "b"]
    assert out[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert out[1].score == pytest.approx(1 / 63 + 1 / 61)


def test_rrf_dedupes_keeps_first_meta_and_breaks_ties_by_id():
    out = RRFReranker().fuse([hits(["b", "a", "b"], "x"), hits(["a", "b"], "y")], k=2)
    assert [h.id for h in out] == ["a", "b"]  # equal scores → id order
    assert out[0].meta == {"src": "x"}


def test_protocol():
    assert isinstance(RRFReranker(), Reranker)


def test_bad_inputs():
    with pytest.raises(ValueError, match="k must be a positive"):
        RRFReranker().fuse([hits(["a"])], k=0)
    with pytest.raises(TypeError, match="Hit objects"):
        RRFReranker().fuse([["a"]], k=1)
    with pytest.raises(ValueError, match="k_param"):
        RRFReranker(k_param=-1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=6), max_size=4), st.integers(1, 12))
def test_fuse_returns_at_most_k(stores, k):
    """The protocol's contract: min(k, unique candidates) hits, the head of the full fused list; [] for none."""
    stores = [hits(s) for s in stores]
    unique = {h.id for s in stores for h in s}
    full = RRFReranker().fuse(stores, k=len(unique) or 1)
    out = RRFReranker().fuse(stores, k=k)
    assert len(out) == min(k, len(unique)) and out == full[:k]
    assert {h.id for h in full} == unique


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=6), min_size=1, max_size=4))
def test_rrf_invariant_to_store_order(stores):
    stores = [hits(s) for s in stores]
    n = len({h.id for s in stores for h in s})
    if n == 0:
        return
    want = [(h.id, h.score) for h in RRFReranker().fuse(stores, k=n)]
    for perm in itertools.permutations(stores):
        assert [(h.id, h.score) for h in RRFReranker().fuse(list(perm), k=n)] == want


@pytest.fixture(scope="module")
def pg_world(tiny_world):
    ms = extract.gazetteer_mentions(tiny_world.documents, tiny_world.gazetteer())
    return hipporag.passage_graph(tiny_world.documents, ms, [e.id for e in tiny_world.entities]), tiny_world


def test_ppr_reranker_fallback_and_invariance(pg_world):
    pg, w = pg_world
    r = PPRReranker(pg)
    unknown = [hits(["x1", "x2", "x3"])]
    assert r.fuse(unknown, k=2) == RRFReranker().fuse(unknown, k=2) and r.last_used_fallback
    stores = [hits([d.id for d in w.documents[:4]], "dense"), hits([w.entities[0].id, w.documents[5].id], "ent")]
    a = [(h.id, h.score) for h in r.fuse(stores, k=5)]
    assert not r.last_used_fallback and len(a) == 5
    assert all(pg.node(i) < pg.n_passages for i, _ in a)
    assert [(h.id, h.score) for h in r.fuse(stores[::-1], k=5)] == a


def test_ppr_reranker_returns_at_most_k(pg_world):
    pg, w = pg_world
    r = PPRReranker(pg)
    assert r.fuse([[], []], k=3) == [] and r.last_used_fallback  # nothing retrieved → nothing returned
    every = r.fuse([hits([w.entities[0].id])], k=pg.n_passages + 7)
    assert sorted(h.id for h in every) == sorted(pg.passage_ids)  # all passages, not an error
    assert every[:5] == r.fuse([hits([w.entities[0].id])], k=5)
