import os
import subprocess
import sys

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


# ------------------------------------------------------------------ WordLlama

TOPICS = ["the physician treated the patient at the hospital", "the striker scored a goal in the football match",
          "the chef cooked pasta in the kitchen", "the senator voted on the new law in parliament",
          "the astronaut flew the rocket into orbit"]
PARAPHRASES = ["a doctor and a nurse", "soccer players", "a recipe for dinner", "politics and elections",
               "space travel"]


def reference_model(dim=256):
    """The package's own inference (WordLlamaInference.embed), loaded by the same offline recipe."""
    from pathlib import Path

    import wordllama

    return wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, trunc_dim=dim, disable_download=True)


def test_wordllama_loads_from_the_package_alone_with_the_network_cut(tmp_path):
    """A fresh process with an empty home, the hub switched off and every socket refused: the model still loads
    (so nothing was fetched), nothing is written to ~/.cache/wordllama, and the root logger is left as it was."""
    code = """
import logging, socket
def refuse(*a, **k):
    raise OSError("network disabled by the test")
socket.socket.connect = socket.create_connection = socket.getaddrinfo = refuse
import requests, tokenizers
requests.Session.request = refuse
tokenizers.Tokenizer.from_pretrained = staticmethod(refuse)
from cookbook import embed
V = embed.WordLlamaEmbedder().transform(["ships and sailors", "planets and stars"])
print(V.shape, V.dtype, logging.getLogger().handlers, logging.getLogger().level)
"""
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["(2,", "256)", "float32", "[]", "30"]  # no handler added, level still WARNING
    assert not (tmp_path / ".cache" / "wordllama").exists() and not any(tmp_path.rglob("*.safetensors"))


def test_wordllama_equals_the_packages_own_embedding():
    """Our sparse-count mean is the mean the package's padded batches compute, at every truncation."""
    from cookbook.data.corpus import load_corpus

    texts = [d.text for d in load_corpus("factbook", "ci").documents[:200]] + TOPICS
    for dim in embed.WORDLLAMA_DIMS:
        ours = embed.WordLlamaEmbedder(dim).transform(texts)
        ref = reference_model(dim).embed(texts, norm=True)
        assert ours.shape == ref.shape == (len(texts), dim)
        assert np.abs(ours - ref).max() < 1e-6


def test_wordllama_shapes_norms_determinism():
    texts = [*TOPICS, "", "a"]
    a = embed.WordLlamaEmbedder().fit_transform(texts)
    assert a.shape == (7, 256) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a[[0, 1, 2, 3, 4, 6]], axis=1), 1.0, atol=1e-6)
    assert not a[5].any()  # no token: a zero row, not NaN (the package's own embed gives NaN)
    embed._wordllama.cache_clear()  # a second load from disk gives the same bits
    assert np.array_equal(embed.WordLlamaEmbedder().transform(texts), a)
    alone = np.vstack([embed.WordLlamaEmbedder().transform([t]) for t in texts])
    assert np.array_equal(alone, a)  # a text's vector does not depend on the batch it came in
    # Matryoshka: the 64-dim model is the 256-dim vector's first 64 coordinates, renormalised
    short = embed.WordLlamaEmbedder(64).transform(TOPICS)
    prefix = a[:5, :64] / np.linalg.norm(a[:5, :64], axis=1, keepdims=True)
    assert short.shape == (5, 64) and np.abs(short - prefix).max() < 1e-6


def test_wordllama_neighbours_without_a_shared_word():
    """Each paraphrase's nearest topic is its own, by a wide margin, where TF-IDF sees no overlap at all."""
    wl = embed.WordLlamaEmbedder()
    index = embed.CosineIndex(wl.fit_transform(TOPICS))
    for i, q in enumerate(wl.transform(PARAPHRASES)):
        ids, scores = index.search(q, 2)
        assert ids[0] == i and scores[0] - scores[1] > 0.2, (PARAPHRASES[i], ids, scores)
    tfidf = embed.TfidfVectorizer().fit(TOPICS)
    assert (tfidf.transform(PARAPHRASES) @ tfidf.transform(TOPICS).T).nnz == 0


def test_wordllama_missing_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "wordllama", None)  # import wordllama → ImportError
    embed._wordllama.cache_clear()
    try:
        with pytest.raises(ImportError, match="needs the package 'wordllama'"):
            embed.WordLlamaEmbedder()
    finally:
        embed._wordllama.cache_clear()


def test_wordllama_bad_inputs():
    with pytest.raises(ValueError, match="one of \\(64, 128, 256\\)"):
        embed.WordLlamaEmbedder(512)  # listed by wordllama, but not in its wheel
    with pytest.raises(TypeError, match="texts"):
        embed.WordLlamaEmbedder().transform("one string")
    with pytest.raises(TypeError, match="texts\\[1\\]"):
        embed.WordLlamaEmbedder().transform(["a", None])
    with pytest.raises(ValueError, match="unknown dense embedder 'bert'"):
        embed.dense_embedder("bert")
