import numpy as np
import pytest

from cookbook import embed

DOCS = ["the red apple fell", "a green apple grew", "blue sky over the sea", "grey sky and rain", "apple pie"]


def test_tfidf_rows_unit_norm_and_idf():
    v = embed.TfidfVectorizer().fit(DOCS)
    X = v.transform(DOCS)
    assert np.allclose(np.sqrt(X.multiply(X).sum(axis=1)).A.ravel(), 1.0)
    assert v.idf[v.vocab["apple"]] < v.idf[v.vocab["pie"]]  # rarer words weigh more


def test_stemming_joins_inflections():
    assert embed.tokenize("employs employed employing") == ["employ"] * 3
    assert embed.tokenize("trades trade class") == ["trade", "trade", "class"]


def test_bm25_ranks_matching_docs_first():
    s = embed.BM25(DOCS).scores("apple")
    assert set(np.argsort(-s)[:3]) == {0, 1, 4} and s[2] == 0


def test_lsa_deterministic_and_semantic():
    a = embed.LSAEmbedder(dim=3).fit(DOCS).transform(DOCS)
    b = embed.LSAEmbedder(dim=3).fit(DOCS).transform(DOCS)
    assert np.array_equal(a, b)
    idx = embed.CosineIndex(a)
    ids, _ = idx.search(embed.LSAEmbedder(dim=3).fit(DOCS).transform(["apple"])[0], 3)
    assert set(ids.tolist()) == {0, 1, 4}


def test_cosine_index_matches_brute_force_and_breaks_ties_by_index():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(50, 8))
    q = rng.normal(size=8)
    ids, scores = embed.CosineIndex(V).search(q, 7)
    Vn = V / np.linalg.norm(V, axis=1, keepdims=True)
    brute = np.argsort(-(Vn @ (q / np.linalg.norm(q))), kind="stable")[:7]
    assert ids.tolist() == brute.tolist()
    tied = embed.CosineIndex(np.ones((5, 2)))
    assert tied.search(np.ones(2), 3)[0].tolist() == [0, 1, 2]


def test_bad_inputs():
    with pytest.raises(ValueError, match="empty corpus"):
        embed.TfidfVectorizer().fit([])
    with pytest.raises(TypeError, match="sequence of strings"):
        embed.TfidfVectorizer().fit("just one string")
    with pytest.raises(ValueError, match="empty vocabulary"):
        embed.TfidfVectorizer().fit(["the", "a"])
    with pytest.raises(RuntimeError, match="not fitted"):
        embed.LSAEmbedder().transform(["x"])
    idx = embed.CosineIndex(np.eye(3))
    with pytest.raises(ValueError, match="larger than the 3"):
        idx.search(np.ones(3), 4)
    with pytest.raises(ValueError, match="dimension"):
        idx.search(np.ones(2), 1)
    with pytest.raises(ValueError, match="NaN"):
        idx.search(np.array([1, np.nan, 0]), 1)
    with pytest.raises(ValueError, match="dim"):
        embed.LSAEmbedder(dim=0)
