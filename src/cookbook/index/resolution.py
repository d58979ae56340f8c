"""Entity resolution: which names name the same entity. The series' extraction merges names by exact normalised
key only (:func:`cookbook.llm.parse.name_key`); this module adds HippoRAG 2's *synonymy edges* (two names whose
embeddings have cosine similarity at or above a threshold, 0.8 in HippoRAG 2) and *merging* (the connected
components of those edges, union-find), and scores merges against gold: every pair of names put in one cluster is
a merge, correct when both names name the same one entity, wrong when they name different entities (a namesake
merge when the two names share a word). Taught in notebooks/12_claims_resolution_updates.ipynb.

>>> import numpy as np
>>> names = ["Ada Selel", "A. Selel", "Bo Selel"]
>>> vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.6, 0.8]])
>>> edges = synonymy_edges(vectors, threshold=0.8)
>>> edges
[(0, 1, 0.994)]
>>> labels = merge(len(names), edges)
>>> labels.tolist(), score_merges(labels, [("E1",), ("E1",), ("E2",)], names)["precision"]
([0, 0, 2], 1.0)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from .._validate import labels as check_labels
from .._validate import number, string_collection
from ..llm.parse import name_key

__all__ = ["bcubed", "containment_edges", "contested", "corpus_names", "exact_edges", "merge", "score_merges",
           "synonymy_edges", "synonymy_matrix"]


def corpus_names(corpus) -> tuple[list[str], list[tuple[str, ...]]]:
    """Every distinct name of a corpus's entities (each entity's name and aliases, compared by
    :func:`~cookbook.llm.parse.name_key`, first spelling kept, in entity order) and, for each, the gold: the ids
    of the entities it names (more than one for a name several entities share).

    >>> from cookbook.data import load_corpus
    >>> names, gold = corpus_names(load_corpus("world", "ci"))
    >>> names[:3], gold[:3]
    (['Drobrond Bekuth', 'Bekuth', 'D. Bekuth'], [('E00000',), ('E00000', 'E00022'), ('E00000',)])
    """
    if not hasattr(corpus, "entities"):
        raise TypeError(f"corpus must be a Corpus (load_corpus), got {type(corpus).__name__}")
    first: dict[str, str] = {}
    gold: dict[str, set[str]] = {}
    for e in corpus.entities:
        for n in (e.name, *e.aliases):
            key = name_key(n)
            first.setdefault(key, n)
            gold.setdefault(key, set()).add(e.id)
    return list(first.values()), [tuple(sorted(gold[k])) for k in first]


def synonymy_matrix(vectors: np.ndarray) -> np.ndarray:
    """Cosine similarity of every pair of rows of ``vectors`` ``(n, d)``: ``(n, n)``, rows normalised first
    (a zero row is similar to nothing).

    >>> synonymy_matrix(np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 0.0]])).round(3).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    V = np.asarray(vectors, dtype=float)
    if V.ndim != 2 or not np.all(np.isfinite(V)):
        raise ValueError(f"vectors must be a finite (n, d) array, got shape {V.shape}")
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    V = np.divide(V, norms, out=np.zeros_like(V), where=norms > 0)
    return V @ V.T


def synonymy_edges(vectors: np.ndarray, *, threshold: float = 0.8,
                   groups: Sequence | None = None) -> list[tuple[int, int, float]]:
    """HippoRAG 2's synonymy edges: every pair ``(i, j, cosine)`` with ``i < j`` whose cosine similarity
    (:func:`synonymy_matrix`) is at least ``threshold``, rounded to 3 digits, in index order; with ``groups`` (one
    label per row, e.g. entity types) only pairs within a group.

    >>> v = np.array([[1.0, 0.0], [1.0, 0.1], [1.0, 0.05]])
    >>> synonymy_edges(v, threshold=0.99), synonymy_edges(v, threshold=0.99, groups=["a", "b", "a"])
    ([(0, 1, 0.995), (0, 2, 0.999), (1, 2, 0.999)], [(0, 2, 0.999)])
    """
    threshold = number(threshold, "threshold", low=-1, high=1)
    S = synonymy_matrix(vectors)
    if groups is not None and len(groups) != len(S):
        raise ValueError(f"groups must label every row: {len(groups)} labels for {len(S)} rows")
    i, j = np.nonzero(np.triu(S >= threshold - 1e-12, k=1))
    return [(int(a), int(b), round(float(S[a, b]), 3)) for a, b in zip(i, j)
            if groups is None or groups[a] == groups[b]]


def exact_edges(names: Sequence[str]) -> list[tuple[int, int, float]]:
    """The series' baseline: an edge between names with the same normalised key
    (:func:`~cookbook.llm.parse.name_key`: case, white space and punctuation folded), weight 1.

    >>> exact_edges(["Ada Selel", "ada  selel", "Bo"])
    [(0, 1, 1.0)]
    """
    keys = [name_key(n) for n in string_collection(names, "names", what="names")]
    return [(i, j, 1.0) for i, j in combinations(range(len(names)), 2) if keys[i] == keys[j]]


def _words(name: str) -> frozenset[str]:
    """A name's words, lower-cased, initials ("D.") and punctuation dropped."""
    return frozenset(w for w in (x.strip(".,'()").lower() for x in name.split()) if len(w) > 1)


def containment_edges(names: Sequence[str]) -> list[tuple[int, int, float]]:
    """A string-matching resolver (the fuzzy baseline): an edge between two names when the words of one (initials
    and punctuation dropped, see the example) are all among the other's, weight 1.

    >>> containment_edges(["Ada Selel", "Selel", "A. Selel", "Bo"])
    [(0, 1, 1.0), (0, 2, 1.0), (1, 2, 1.0)]
    """
    words = [_words(n) for n in string_collection(names, "names", what="names")]
    return [(i, j, 1.0) for i, j in combinations(range(len(names)), 2)
            if words[i] and words[j] and (words[i] <= words[j] or words[j] <= words[i])]


def contested(names: Sequence[str], gold: Sequence[Sequence[str]]) -> np.ndarray:
    """Which names resolution can get right or wrong, a boolean mask ``(n,)``: a name with an *alias partner*
    (another name of its one entity, a merge to find), with a *namesake partner* (a name sharing a word with it,
    initials and punctuation dropped, that names no entity in common: a merge to avoid), or a name of several
    entities. Every other name stands alone and any resolver that leaves it alone scores it perfectly, so a score
    over all names rewards doing nothing; a score over these does not.

    >>> contested(["Ada Selel", "A. Selel", "Bo Selel", "Cy Moor"], [("E1",), ("E1",), ("E2",), ("E3",)]).tolist()
    [True, True, True, False]
    """
    names = string_collection(names, "names", what="names")
    if len(names) != len(gold):
        raise ValueError(f"names and gold must be as many: {len(names)} vs {len(gold)}")
    gold = [frozenset(g) for g in gold]
    words = [_words(n) for n in names]
    size = Counter(g for g in gold if len(g) == 1)
    by_word: dict[str, list[int]] = {}
    for i, ws in enumerate(words):
        for w in ws:
            by_word.setdefault(w, []).append(i)
    out = np.array([len(g) > 1 or size[g] > 1 for g in gold], dtype=bool)
    for i, ws in enumerate(words):
        if not out[i]:
            out[i] = any(not gold[i] & gold[j] for w in ws for j in by_word[w])
    return out


def merge(n: int, edges) -> np.ndarray:
    """Merging: the connected components of ``edges`` (``(i, j, ...)`` tuples) over ``n`` names, by union-find;
    each name's label is the smallest index in its component.

    >>> merge(5, [(3, 4, 0.9), (0, 3, 0.8)]).tolist()
    [0, 1, 2, 0, 0]
    """
    parent = list(range(n))
    bad = next((e for e in edges if not all(isinstance(x, (int, np.integer)) and 0 <= x < n for x in e[:2])), None)
    if bad is not None:
        raise ValueError(f"every edge must join two of the {n} names (indices 0..{n - 1}), got edge {bad!r}")

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j, *_ in edges:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return np.array([root(x) for x in range(n)], dtype=int)


def score_merges(labels, gold: Sequence[Sequence[str]], names: Sequence[str] | None = None) -> dict:
    """Precision and recall of the merges ``labels`` implies (every pair of names in one cluster) against
    ``gold`` (each name's entity ids): a pair is *right* when both name the same single entity and *wrong* when
    they name no entity in common; a pair with a name of several entities that shares one of them is neither and is
    left out. Returns ``precision`` (right / (right + wrong); NaN with no merge: 0/0 is undefined, not perfect),
    ``recall`` (right / the pairs that
    name one same entity), ``right``, ``wrong``, ``should`` and, given ``names``, ``namesake_merges``: the wrong
    pairs whose names share a word (the namesakes a merge conflates).

    >>> s = score_merges([0, 0, 0], [("E1",), ("E1", "E2"), ("E2",)], ["Ada Selel", "Selel", "Bo Selel"])
    >>> s["right"], s["wrong"], s["should"], s["namesake_merges"]
    (0, 1, 0, [('Ada Selel', 'Bo Selel')])
    """
    labels = check_labels(labels, "labels")  # a missing label (None, NaN) is an error, not a cluster
    if len(labels) != len(gold):
        raise ValueError(f"labels and gold must cover the same names: {len(labels)} vs {len(gold)}")
    gold = [frozenset(g) for g in gold]
    single = Counter(g for g in gold if len(g) == 1)
    should = sum(k * (k - 1) // 2 for k in single.values())
    right = wrong = 0
    namesakes = []
    clusters: dict = {}
    for i, lab in enumerate(labels.tolist()):
        clusters.setdefault(lab, []).append(i)
    for members in clusters.values():  # only pairs inside a cluster are merges
        for i, j in combinations(members, 2):
            if len(gold[i]) == 1 and gold[i] == gold[j]:
                right += 1
            elif not gold[i] & gold[j]:
                wrong += 1
                if names is not None and set(names[i].lower().split()) & set(names[j].lower().split()):
                    namesakes.append((names[i], names[j]))
    return {"precision": right / (right + wrong) if right + wrong else math.nan,
            "recall": right / should if should else 1.0, "right": right, "wrong": wrong, "should": should,
            "namesake_merges": namesakes}


def bcubed(labels, gold: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """B-cubed precision and recall per name, ``(precision, recall)`` arrays ``(n,)``: for name ``i``, the share
    of its cluster (``labels``) in its gold cluster, and the share of its gold cluster in its cluster. The gold
    cluster of a name of one entity is every name of exactly that entity; a name of several entities is its own
    gold cluster (it should merge with none). One score per name, so two resolvers compare name by name.

    >>> p, r = bcubed([0, 0, 2], [("E1",), ("E1",), ("E1",)])
    >>> p.tolist(), r.round(3).tolist()
    ([1.0, 1.0, 1.0], [0.667, 0.667, 0.333])
    """
    labels = check_labels(labels, "labels")  # a missing label (None, NaN) is an error, not a cluster
    if len(labels) != len(gold):
        raise ValueError(f"labels and gold must cover the same names: {len(labels)} vs {len(gold)}")
    keys = [tuple(sorted(g)) if len(g) == 1 else ("#", i) for i, g in enumerate(gold)]
    precision, recall = np.zeros(len(keys)), np.zeros(len(keys))
    sizes = Counter(keys)
    members: dict = {}
    for i, lab in enumerate(labels):
        members.setdefault(lab, []).append(i)
    for i in range(len(keys)):
        cluster = members[labels[i]]
        right = sum(keys[j] == keys[i] for j in cluster)
        precision[i] = right / len(cluster)
        recall[i] = right / sizes[keys[i]]
    return precision, recall
