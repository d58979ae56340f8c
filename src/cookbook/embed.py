"""Text → vectors and scores: TF-IDF, BM25, an LSA embedder and an exact cosine top-k index.

Choice of libraries: numpy and scipy only. TF-IDF and BM25 are a few sparse-matrix lines; the LSA
projection is a seeded randomized SVD (Halko, Martinsson & Tropp, 2011) with a sign convention, so the
same corpus always gives bit-identical embeddings (ARPACK's ``svds`` does not, run to run).
scikit-learn would add a large dependency for the same three operations. The pretrained dense embedder,
:class:`WordLlamaEmbedder`, reads the static token vectors the ``wordllama`` wheel ships (numpy inference, no
model hub); nothing here downloads a model.

>>> lsa = LSAEmbedder(dim=2).fit(["red apple", "green apple", "blue sky", "grey sky"])
>>> index = CosineIndex(lsa.transform(["red apple", "green apple", "blue sky", "grey sky"]))
>>> index.search(lsa.transform(["apple"])[0], k=2)[0].tolist()
[0, 1]
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._validate import integer, strings

__all__ = ["BM25", "DEFAULT_DENSE", "DEFAULT_DIM", "DENSE_EMBEDDERS", "STOPWORDS", "WORDLLAMA_DIMS", "CosineIndex",
           "LSAEmbedder", "TfidfVectorizer", "WordLlamaEmbedder", "dense_embedder", "stem", "tokenize"]

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the their this to was were which "
    "who whom with where what when how does did do".split()
)


_SUFFIXES = ("ing", "ed", "s")


@cache
def stem(word: str) -> str:
    """A deliberately light stemmer: strip one inflection ("employs", "employed" → "employ";
    "trades" → "trade"), keeping at least four letters and leaving "-ss" words alone.

    >>> stem("employed"), stem("trades"), stem("class"), stem("cats")
    ('employ', 'trade', 'class', 'cats')
    """
    if not isinstance(word, str):
        raise TypeError(f"word must be a string, got {type(word).__name__}")
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 4 and not word.endswith("ss"):
            return word[: -len(suf)]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-case, stemmed word tokens of ``text`` (a list of str) without stopwords.

    >>> tokenize("The miners employed in Vell")
    ['miner', 'employ', 'vell']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


class TfidfVectorizer:
    """Sublinear TF-IDF with smooth IDF, rows L2-normalised. ``fit`` learns the vocabulary.

    >>> X = TfidfVectorizer().fit_transform(["red apple", "green apple"])
    >>> X.shape, np.round(np.linalg.norm(X.toarray(), axis=1), 6).tolist()
    ((2, 3), [1.0, 1.0])
    """

    def fit(self, texts: Sequence[str]) -> TfidfVectorizer:
        """Learn the vocabulary (``vocab``: word → column) and IDF from ``texts``; returns ``self``.

        >>> sorted(TfidfVectorizer().fit(["red apples", "the apple"]).vocab)
        ['apple', 'red']
        """
        self.fit_transform(texts)
        return self

    def fit_transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Learn the vocabulary and IDF from ``texts`` and return their TF-IDF rows (one tokenisation), a
        ``(len(texts), vocabulary)`` CSR.

        >>> TfidfVectorizer().fit_transform(["a cat", "a dog", "the cat"]).shape
        (3, 2)
        """
        tokens = [tokenize(t) for t in strings(texts, "texts")]
        vocab = sorted({w for ts in tokens for w in ts})
        if not vocab:
            raise ValueError("empty vocabulary: every text is empty or stopwords only")
        self.vocab = {w: i for i, w in enumerate(vocab)}
        counts = self._counts(tokens)
        df = np.bincount(counts.indices, minlength=len(self.vocab))
        self.idf = np.log((1 + len(tokens)) / (1 + df)) + 1.0
        return self._weigh(counts)

    def _counts(self, tokens: list[list[str]]) -> sp.csr_matrix:
        rows, cols = [], []
        for r, ts in enumerate(tokens):
            for w in ts:
                j = self.vocab.get(w)
                if j is not None:
                    rows.append(r)
                    cols.append(j)
        m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(tokens), len(self.vocab)))
        m.sum_duplicates()
        return m

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """``(len(texts), vocabulary)`` CSR; a text with no known word gives a zero row.

        >>> v = TfidfVectorizer().fit(["red apple", "green apple"])
        >>> v.transform(["apple", "blue sky"]).getnnz(axis=1).tolist()
        [1, 0]
        """
        if not hasattr(self, "vocab"):
            raise RuntimeError("TfidfVectorizer is not fitted: call fit(texts) first")
        return self._weigh(self._counts([tokenize(t) for t in strings(texts, "texts")]))

    def _weigh(self, X: sp.csr_matrix) -> sp.csr_matrix:
        X = X.copy()
        X.data = (1 + np.log(X.data)) * self.idf[X.indices]
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        return sp.csr_matrix(sp.diags(np.where(norms > 0, 1 / np.where(norms > 0, norms, 1), 0)) @ X)


class BM25:
    """Okapi BM25 over a fixed corpus (``texts``, a sequence of str): ``scores(query)`` → one score per
    document, shape ``(n_docs,)``. Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> bm = BM25(["red apple pie", "green apple", "blue sky"])
    >>> int(np.argmax(bm.scores("apple pie")))
    0
    """

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75):
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"need k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.vec = TfidfVectorizer().fit(texts)
        tf = self.vec._counts([tokenize(t) for t in texts]).tocsc()
        dl = np.asarray(tf.sum(axis=1)).ravel()
        n = tf.shape[0]
        df = np.diff(tf.indptr)
        self.idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        tf = tf.tocoo()
        denom = tf.data + k1 * (1 - b + b * dl[tf.row] / max(dl.mean(), 1e-12))
        w = tf.data * (k1 + 1) / denom * self.idf[tf.col]
        self.weights = sp.csc_matrix((w, (tf.row, tf.col)), shape=tf.shape)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (shape ``(n_docs,)``); zeros when no query word is known.

        >>> bm = BM25(["red apple", "blue sky"])
        >>> bm.scores("sky").tolist()[0], bm.scores("moon").tolist()
        (0.0, [0.0, 0.0])
        """
        cols = [self.vec.vocab[w] for w in set(tokenize(query)) if w in self.vec.vocab]
        if not cols:
            return np.zeros(self.weights.shape[0])
        return np.asarray(self.weights[:, sorted(cols)].sum(axis=1)).ravel()


DEFAULT_DIM = 64  # LSA dimensions used across the series: enough for the world's topics, fast on WordNet


class LSAEmbedder:
    """TF-IDF followed by a truncated SVD to ``dim`` dimensions (latent semantic analysis); output rows
    are L2-normalised, shape ``(n_texts, dim)``. Deterministic: fixed ARPACK start, fixed signs. Taught in
    notebooks/07_overlap_aware_seeds.ipynb.

    >>> LSAEmbedder(dim=2).fit_transform(["red apple", "green apple", "blue sky", "grey sky"]).shape
    (4, 2)
    """

    def __init__(self, dim: int = DEFAULT_DIM):
        self.dim = integer(dim, "dim")

    def fit(self, texts: Sequence[str]) -> LSAEmbedder:
        """Learn the TF-IDF vocabulary and the ``dim`` SVD components from ``texts``; returns ``self``.

        >>> LSAEmbedder(dim=2).fit(["red apple", "green apple", "blue sky"]).components.shape[0]
        2
        """
        self.fit_transform(texts)
        return self

    def fit_transform(self, texts: Sequence[str]) -> np.ndarray:
        """Fit on ``texts`` and return their embeddings, shape ``(len(texts), dim')`` with
        ``dim' = min(dim, smallest side of the TF-IDF matrix - 1)``.

        >>> LSAEmbedder(dim=64).fit_transform(["red apple", "green apple", "blue sky"]).shape  # dim' = 3 - 1
        (3, 2)
        """
        self.tfidf = TfidfVectorizer()
        X = self.tfidf.fit_transform(texts)
        k = min(self.dim, min(X.shape) - 1)
        if k < 1:
            raise ValueError(f"corpus too small for LSA: shape {X.shape}")
        # Randomized range finder with power iterations, then an exact SVD of the small projection.
        rng = np.random.default_rng(0)
        p = min(k + 10, min(X.shape))
        Q = _orthonormal(X @ rng.standard_normal((X.shape[1], p)))
        for _ in range(3):
            Q = _orthonormal(X @ np.asarray(X.T @ Q))
        _, _, vt = np.linalg.svd(np.asarray(X.T @ Q).T, full_matrices=False)
        vt = vt[:k]
        signs = np.sign(vt[np.arange(k), np.abs(vt).argmax(axis=1)])
        self.components = vt * signs[:, None]  # (k, vocabulary)
        return self._project(X)

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` with the fitted model: L2-normalised rows, shape ``(len(texts), dim')``.

        >>> lsa = LSAEmbedder(dim=2).fit(["red apple", "green apple", "blue sky", "grey sky"])
        >>> a, b, c = lsa.transform(["apple", "red apple", "sky"])
        >>> bool(a @ b > a @ c)
        True
        """
        if not hasattr(self, "components"):
            raise RuntimeError("LSAEmbedder is not fitted: call fit(texts) first")
        return self._project(self.tfidf.transform(texts))

    def _project(self, X) -> np.ndarray:
        Z = np.asarray(X @ self.components.T)
        norms = np.linalg.norm(Z, axis=1, keepdims=True)
        return Z / np.where(norms > 0, norms, 1.0)


def _orthonormal(Y: np.ndarray) -> np.ndarray:
    """Orthonormal basis of Y's columns: CholeskyQR2 (two Gram + Cholesky passes, much faster than
    Householder QR for tall matrices), falling back to QR when Y is rank-deficient."""
    try:
        for _ in range(2):
            L = np.linalg.cholesky(Y.T @ Y)
            Y = np.linalg.solve(L, Y.T).T
        return Y
    except np.linalg.LinAlgError:
        return np.linalg.qr(Y)[0]


WORDLLAMA_DIMS = (64, 128, 256)  # Matryoshka truncations of the 256-dim l2_supercat weights the wheel ships


@cache
def _wordllama(dim: int) -> tuple:
    """WordLlama's l2_supercat model truncated to ``dim``, loaded once per process from the files inside the
    installed package: ``(tokenizer without padding, float64 token embeddings of shape (32000, dim))``.

    The documented ``WordLlama.load()`` looks for the tokenizer in the package under a folder name the wheel
    does not use, then in ``~/.cache/wordllama``, then downloads it; with ``cache_dir`` set to the package's own
    folder both files resolve locally, and ``disable_download`` turns a missing file into FileNotFoundError
    instead of a request."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    except ImportError:
        raise ImportError("WordLlamaEmbedder needs the package 'wordllama', a dependency of graphrag-cookbook: "
                          "reinstall the cookbook, or pip install wordllama") from None
    finally:  # importing wordllama calls logging.basicConfig(level=INFO), which would print every library's INFO
        root.handlers[:] = handlers
        root.setLevel(level)
    model = wordllama.WordLlama.load("l2_supercat", cache_dir=Path(wordllama.__file__).parent, dim=256,
                                     trunc_dim=dim, disable_download=True)
    model.tokenizer.no_padding()  # pooling below reads each text's own tokens
    return model.tokenizer, model.embedding.astype(np.float64)


class WordLlamaEmbedder:
    """A pretrained dense embedder: WordLlama's l2_supercat static token vectors (MIT; trained from the token
    embedding tables of LLaMA-2-vocabulary models, LLaMA 2 70B among them) averaged over a text's tokens, the
    first ``dim`` of 256 dimensions (64, 128 or 256: Matryoshka-trained, so a prefix is itself an embedding).
    The weights ship inside the ``wordllama`` wheel and load without the network. Rows are L2-normalised
    float32, shape ``(n_texts, dim)``; a text with no token gives a zero row. Deterministic and independent of
    batching: a text's vector depends on that text alone. Same ``fit``/``transform`` interface as
    :class:`LSAEmbedder` (``fit`` learns nothing).

    The mean is the one ``WordLlamaInference.embed`` computes, taken as a sparse token-count matrix times the
    vectors: ``embed`` pads each batch to its longest text, 5-6× slower on the Factbook's long country pages.

    Neighbours without a shared word, where TF-IDF and LSA see nothing:

    >>> texts = ["the harbour city trades fish", "a port town exports its catch", "the moon orbits the earth"]
    >>> V = WordLlamaEmbedder().fit_transform(texts)
    >>> V.shape, V.dtype
    ((3, 256), dtype('float32'))
    >>> index, wl = CosineIndex(V), WordLlamaEmbedder()  # the model is loaded once per process
    >>> [index.search(q, k=1)[0].tolist() for q in wl.transform(["planets and stars", "ships and sailors"])]
    [[2], [1]]
    """

    def __init__(self, dim: int = 256):
        if dim not in WORDLLAMA_DIMS:
            raise ValueError(f"dim must be one of {WORDLLAMA_DIMS} (the wheel ships the 256-dim model), got {dim!r}")
        self.dim = dim
        self.tokenizer, self.vectors = _wordllama(dim)

    def fit(self, texts: Sequence[str]) -> WordLlamaEmbedder:
        """Nothing to learn (the vectors are pretrained): checks ``texts`` and returns ``self``.

        >>> WordLlamaEmbedder(dim=64).fit(["a text"]).dim
        64
        """
        strings(texts, "texts")
        return self

    def fit_transform(self, texts: Sequence[str]) -> np.ndarray:
        """``transform(texts)``, for the interface of :class:`LSAEmbedder`.

        >>> WordLlamaEmbedder(dim=128).fit_transform(["red apple", ""]).shape
        (2, 128)
        """
        return self.transform(texts)

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Mean token vector of each text, L2-normalised, float32, shape ``(len(texts), dim)``.

        >>> a, b, c = WordLlamaEmbedder().transform(["a red apple", "a green pear", "a stormy sea"])
        >>> bool(a @ b > a @ c), float(np.linalg.norm(a).round(5))
        (True, 1.0)
        """
        ids = [e.ids for e in self.tokenizer.encode_batch(strings(texts, "texts"), add_special_tokens=False)]
        lengths = np.array([len(i) for i in ids])
        flat = np.clip(np.concatenate(ids or [[]]).astype(np.int64), 0, len(self.vectors) - 1)
        counts = sp.csr_matrix((np.ones(len(flat)), flat, np.r_[0, np.cumsum(lengths)]),
                               shape=(len(ids), len(self.vectors)))
        Z = np.asarray(counts @ self.vectors) / np.maximum(lengths, 1)[:, None]
        norms = np.linalg.norm(Z, axis=1, keepdims=True)
        return (Z / np.where(norms > 0, norms, 1.0)).astype(np.float32)


DENSE_EMBEDDERS = ("lsa", "wordllama")
DEFAULT_DENSE = "wordllama"  # the series' dense retriever, chosen in benchmarks/dense.py


def dense_embedder(name: str, dim: int | None = None):
    """An unfitted dense embedder by name, with ``fit``/``fit_transform``/``transform``: ``"lsa"`` →
    :class:`LSAEmbedder` (``dim`` default :data:`DEFAULT_DIM`, fitted on the corpus), ``"wordllama"`` →
    :class:`WordLlamaEmbedder` (``dim`` default 256, pretrained).

    >>> type(dense_embedder("lsa")).__name__, dense_embedder("wordllama", 64).dim
    ('LSAEmbedder', 64)
    >>> dense_embedder("bert")
    Traceback (most recent call last):
    ValueError: unknown dense embedder 'bert'; expected one of ('lsa', 'wordllama')
    """
    if name == "lsa":
        return LSAEmbedder(DEFAULT_DIM if dim is None else dim)
    if name == "wordllama":
        return WordLlamaEmbedder(256 if dim is None else dim)
    raise ValueError(f"unknown dense embedder {name!r}; expected one of {DENSE_EMBEDDERS}")


class CosineIndex:
    """Exact top-k cosine search over rows of ``vectors`` (``(n, dim)``, L2-normalised here), named by
    ``ids`` (default the row numbers). Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> index = CosineIndex([[1, 0], [0, 2], [1, 1]], ids=["x", "y", "z"])
    >>> ids, scores = index.search([1, 0.1], k=2)
    >>> ids.tolist(), np.round(scores, 3).tolist()
    (['x', 'z'], [0.995, 0.774])
    """

    def __init__(self, vectors: np.ndarray, ids: Sequence | None = None):
        V = np.asarray(vectors, dtype=float)
        if V.ndim != 2 or V.shape[0] == 0:
            raise ValueError(f"vectors must be a non-empty 2-D array, got shape {V.shape}")
        if not np.all(np.isfinite(V)):
            raise ValueError("vectors contain NaN or inf")
        norms = np.linalg.norm(V, axis=1, keepdims=True)
        self.vectors = V / np.where(norms > 0, norms, 1.0)
        self.ids = np.arange(len(V)) if ids is None else np.asarray(ids)
        if len(self.ids) != len(V):
            raise ValueError(f"ids has length {len(self.ids)}, vectors has {len(V)} rows")

    def __len__(self) -> int:
        return len(self.vectors)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of ``query`` (shape ``(dim,)``) with every indexed row, shape ``(n,)``.

        >>> CosineIndex([[1, 0], [0, 3]]).scores([2, 0]).tolist()
        [1.0, 0.0]
        """
        q = np.asarray(query, dtype=float).ravel()
        if q.shape[0] != self.vectors.shape[1]:
            raise ValueError(f"query has dimension {q.shape[0]}, index has {self.vectors.shape[1]}")
        if not np.all(np.isfinite(q)):
            raise ValueError("query contains NaN or inf")
        n = np.linalg.norm(q)
        return self.vectors @ (q / n if n > 0 else q)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ``(ids, scores)`` (two arrays of length ``k``), best first; ties broken by lower row
        index; ``k`` larger than the index is a ValueError.

        >>> CosineIndex([[1, 0], [1, 0], [0, 1]]).search([1, 0], k=2)[0].tolist()  # a tie: lower row first
        [0, 1]
        """
        k = integer(k, "k")
        if k > len(self):
            raise ValueError(f"k={k} is larger than the {len(self)} indexed vectors")
        s = self.scores(query)
        part = np.argpartition(-s, k - 1)[:k] if k < len(s) else np.arange(len(s))
        # argpartition may cut a tie arbitrarily: widen to every row tied with the k-th score.
        kth = s[part].min()
        cand = np.flatnonzero(s >= kth)
        order = cand[np.lexsort((cand, -s[cand]))][:k]
        return self.ids[order], s[order]
