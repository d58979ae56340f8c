import itertools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cookbook.data.records import Mention
from cookbook.index import extract, graph


def loop_counts(windows):
    """Reference: plain dictionaries, one window at a time."""
    c = {}
    for ents in windows:
        for a, b in itertools.combinations(sorted(set(ents)), 2):
            c[(a, b)] = c.get((a, b), 0) + 1
    return c


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), max_size=6), min_size=1, max_size=25))
def test_sparse_product_equals_loop_and_pmi_formula(windows):
    X = sp.lil_matrix((len(windows), 10))
    for r, ents in enumerate(windows):
        for e in ents:
            X[r, e] = 1
    C = graph.cooccurrence(X.tocsr())
    ref = loop_counts(windows)
    up = sp.triu(C, k=1).todok()
    assert dict(up.items()) == {k: float(v) for k, v in ref.items()}
    assert (C != C.T).nnz == 0 and C.diagonal().sum() == 0
    n = len(windows)
    df = [sum(e in set(w) for w in windows) for e in range(10)]
    P = graph.cooccurrence(X.tocsr(), weight="pmi").todok()
    N = graph.cooccurrence(X.tocsr(), weight="npmi").todok()
    for (a, b), c in ref.items():
        pmi = math.log(c * n / (df[a] * df[b]))
        assert P[a, b] == pytest.approx(pmi)
        npmi = pmi / -math.log(c / n) if c < n else 1.0
        assert N[a, b] == pytest.approx(npmi) and -1 - 1e-9 <= N[a, b] <= 1 + 1e-9


def test_min_count_prunes():
    X = sp.csr_matrix(np.array([[1, 1, 1], [1, 1, 0]]))
    C = graph.cooccurrence(X, min_count=2)
    assert C[0, 1] == 2 and C[0, 2] == 0 and C.nnz == 2


def test_world_graph_equals_networkx_loop(tiny_world):
    ms = extract.gazetteer_mentions(tiny_world.documents, tiny_world.gazetteer())
    g = graph.cooccurrence_graph(ms, tiny_world.documents, tiny_world.entities)
    by_doc = {}
    for m in ms:
        by_doc.setdefault(m.doc_id, []).append(m.entity_id)
    ref = loop_counts(by_doc.values())
    G = g.to_networkx()
    assert G.number_of_nodes() == len(tiny_world.entities)
    assert {tuple(sorted(e)): G.edges[e]["weight"] for e in G.edges} == {k: float(v) for k, v in ref.items()}
    ig = g.to_igraph()
    assert ig.vcount() == G.number_of_nodes() and ig.ecount() == G.number_of_edges()
    assert sum(ig.es["weight"]) == pytest.approx(sum(d["weight"] for *_, d in G.edges(data=True)))


def test_sentence_windows_match_a_per_sentence_loop(tiny_world):
    g = graph.cooccurrence_graph(tiny_world.mentions, tiny_world.documents, tiny_world.entities,
                                 window="sentence")
    windows = []
    for d in tiny_world.documents:
        for s, e in d.sentences:
            windows.append([m.entity_id for m in tiny_world.mentions if m.doc_id == d.id and s <= m.start < e])
    ref = loop_counts(windows)
    got = {(a, b) if a < b else (b, a): w for a, b, w in g.edges()}
    assert got == {k: float(v) for k, v in ref.items()}


def test_edges_sorted_by_weight_then_id():
    X = sp.csr_matrix(np.array([[1, 1, 1], [1, 1, 0]]))
    g = graph.EntityGraph(["a", "b", "c"], ["A", "B", "C"], graph.cooccurrence(X), graph.cooccurrence(X))
    assert g.edges() == [("a", "b", 2.0), ("a", "c", 1.0), ("b", "c", 1.0)]
    assert isinstance(g.to_networkx(), nx.Graph)


def test_bad_inputs_name_the_problem(tiny_world):
    X = sp.csr_matrix(np.eye(3))
    with pytest.raises(ValueError, match="unknown weighting"):
        graph.cooccurrence(X, weight="tfidf")
    with pytest.raises(ValueError, match="min_count"):
        graph.cooccurrence(X, min_count=0)
    with pytest.raises(ValueError, match="empty corpus"):
        graph.cooccurrence(sp.csr_matrix((0, 3)))
    with pytest.raises(ValueError, match="empty corpus"):
        graph.cooccurrence_graph([], [], tiny_world.entities)
    with pytest.raises(ValueError, match="unknown window"):
        graph.cooccurrence_graph([], tiny_world.documents, tiny_world.entities, window="paragraph")
    with pytest.raises(ValueError, match="entities is empty"):
        graph.cooccurrence_graph([], tiny_world.documents, [])
    with pytest.raises(KeyError, match="unknown entity"):
        graph.cooccurrence_graph([Mention("D00000", 0, 1, "E99999", "x")], tiny_world.documents,
                                 tiny_world.entities)
    with pytest.raises(ValueError, match="sentence spans"):  # (documents without spans are split: test_names)
        graph.incidence_from_arrays(graph.mention_arrays([], {"d": "text"}, ["E1"]), window="sentence")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), min_size=1, max_size=4, unique=True), min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 45), st.integers(0, 4)), max_size=30))
def test_incidence_equals_a_per_mention_lookup(sentence_starts, raw):
    """Each mention marks the sentence of its document that starts last at or before it (the first sentence
    when it precedes them all), and its document; a repeat marks nothing new."""
    docs = {f"d{i}": "x" * 50 for i in range(len(sentence_starts))}
    spans = {f"d{i}": [(s, s + 1) for s in sorted(st_)] for i, st_ in enumerate(sentence_starts)}
    ents = ["E0", "E1", "E2", "E3", "E4"]
    ms = [Mention(f"d{d % len(docs)}", start, start + 1, f"E{e}", "x") for d, start, e in raw]
    want_doc = np.zeros((len(docs), 5))
    base = np.cumsum([0] + [len(s) for s in spans.values()])
    want_sent = np.zeros((base[-1], 5))
    for m in ms:
        d = int(m.doc_id[1:])
        want_doc[d, int(m.entity_id[1:])] = 1
        starts = [s for s, _ in spans[m.doc_id]]
        k = max([i for i, s in enumerate(starts) if s <= m.start], default=0)
        want_sent[base[d] + k, int(m.entity_id[1:])] = 1
    X = graph.incidence(ms, docs, ents)
    assert X.has_canonical_format and X.toarray().tolist() == want_doc.tolist()
    S = graph.incidence(ms, docs, ents, window="sentence", sentences=spans)
    assert S.has_canonical_format and S.toarray().tolist() == want_sent.tolist()
