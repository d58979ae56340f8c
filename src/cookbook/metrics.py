"""Metrics: recall of supporting passages, overlap between seed neighbourhoods, coverage, label diversity,
result agreement, and how well an answer names the gold themes and entities of a global question.

>>> support_recall(["D1", "D7", "D3"], ["D3", "D4"])
0.5
>>> jaccard({1, 2, 3}, {2, 3, 4})
0.5
>>> round(label_entropy([0, 0, 1, 1]), 3), majority_fraction([0, 0, 0, 1])
(1.0, 0.75)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ._validate import labels as check_labels

__all__ = ["ThemeScores", "jaccard", "label_entropy", "majority_fraction", "mean_pairwise_jaccard",
           "precision_recall", "support_recall", "theme_coverage", "theme_scores", "unique_nodes",
           "unnamed_themes"]


def _iterable(x, name: str):
    if x is None or isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise TypeError(f"{name} must be an iterable collection, got {type(x).__name__}")
    return x


def support_recall(retrieved: Iterable, supporting: Iterable) -> float:
    """Share (a float in [0, 1]) of the ``supporting`` items (a question's gold passages) found among
    ``retrieved``; empty ``supporting`` is a ValueError. Taught in notebooks/06_personalized_pagerank.ipynb.

    >>> support_recall(["D1", "D2"], ["D2", "D3", "D4", "D5"])
    0.25
    """
    sup = set(_iterable(supporting, "supporting"))
    if not sup:
        raise ValueError("supporting is empty: recall of nothing is undefined")
    return len(set(_iterable(retrieved, "retrieved")) & sup) / len(sup)


def precision_recall(predicted: Iterable, gold: Iterable) -> dict:
    """Precision, recall and F1 of the set ``predicted`` against the set ``gold`` (hashable items): a dict
    with ``precision``, ``recall``, ``f1`` (floats, 0 when undefined) and ``tp``, ``fp``, ``fn`` (ints).
    Scores mentions (:func:`cookbook.index.extract.score_mentions`) and extracted relations
    (:func:`cookbook.index.graph_extraction.score_relations`).

    >>> precision_recall({"a", "b", "c"}, {"a", "d"})
    {'precision': 0.3333333333333333, 'recall': 0.5, 'f1': 0.4, 'tp': 1, 'fp': 2, 'fn': 1}
    """
    p, g = set(_iterable(predicted, "predicted")), set(_iterable(gold, "gold"))
    tp = len(p & g)
    prec = tp / len(p) if p else 0.0
    rec = tp / len(g) if g else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": prec, "recall": rec, "f1": f1, "tp": tp, "fp": len(p) - tp, "fn": len(g) - tp}


def jaccard(a: Iterable, b: Iterable) -> float:
    """|a ∩ b| / |a ∪ b| of two collections (also the agreement of two result sets); two empty sets score 0.
    Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> jaccard([1, 2], [3]), jaccard([], [])
    (0.0, 0.0)
    """
    a, b = set(_iterable(a, "a")), set(_iterable(b, "b"))
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def mean_pairwise_jaccard(sets: Sequence[Iterable]) -> float:
    """Mean Jaccard over all unordered pairs of ``sets`` (a sequence of collections); fewer than two sets
    score 0 (nothing can overlap).

    >>> mean_pairwise_jaccard([{1, 2}, {2, 3}, {4}])  # pairs score 1/3, 0, 0
    0.1111111111111111
    """
    sets = [set(_iterable(s, "sets[i]")) for s in _iterable(sets, "sets")]
    pairs = list(itertools.combinations(sets, 2))
    return float(np.mean([jaccard(a, b) for a, b in pairs])) if pairs else 0.0


def unique_nodes(*results: Iterable) -> int:
    """How many distinct nodes the ``results`` (any number of collections) reach together, an int.

    >>> unique_nodes([1, 2], {2, 3}, (3, 4))
    4
    """
    return len(set().union(*(set(_iterable(r, "results")) for r in results))) if results else 0


def label_entropy(labels: Sequence) -> float:
    """Shannon entropy in bits (a float) of the distribution of ``labels`` (a sequence of hashables); 0
    for an empty or single-label result. Taught in notebooks/07_overlap_aware_seeds.ipynb.

    >>> label_entropy(["a", "b", "c", "d"]), label_entropy(["a", "a"])
    (2.0, 0.0)
    """
    codes = check_labels(list(_iterable(labels, "labels")), "labels")  # any hashables, as names
    if len(codes) == 0:
        return 0.0
    counts = np.bincount(codes)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum()) + 0.0


def majority_fraction(labels: Sequence) -> float:
    """Share (a float) of the most common of ``labels`` (1.0 = all one label); 0 for an empty result.

    >>> majority_fraction(["x", "y", "x", "x"]), majority_fraction([])
    (0.75, 0.0)
    """
    codes = check_labels(list(_iterable(labels, "labels")), "labels")
    if len(codes) == 0:
        return 0.0
    counts = np.bincount(codes)
    return float(counts.max() / counts.sum())


def _named(text: str, terms: Sequence[str]) -> list[bool]:
    """Which ``terms`` ``text`` names: a case-insensitive substring match, the one rule every score here uses."""
    low = text.lower()
    return [t.lower() in low for t in terms]


def theme_coverage(text: str, themes: Sequence[str]) -> float:
    """Share of the gold ``themes`` named (case-insensitively) in ``text``: recall only, see :func:`theme_scores`.
    Taught in notebooks/00_quickstart.ipynb and notebooks/05_map_reduce_answering.ipynb.

    >>> theme_coverage("Mining grew; BREWING fell.", ["mining", "brewing", "robotics", "shipping"])
    0.5
    """
    if len(themes) == 0:
        raise ValueError("themes is empty")
    return float(np.mean(_named(text, themes)))


def unnamed_themes(question: str, gold_themes: Sequence[str], all_themes: Sequence[str]) -> list[str]:
    """The gold themes ``question`` does not name itself (lower case, sorted): what :func:`theme_scores` scores
    when given ``question=``. Empty: the question gives all its themes away, and asks only *who*.

    >>> unnamed_themes("In the mining trade, who works?", ["Mining", "brewing"], ["brewing", "mining", "shipping"])
    ['brewing']
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be the question's text, got {type(question).__name__}")
    given = {t.lower() for t, hit in zip(all_themes, _named(question, all_themes)) if hit}
    return sorted({t.lower() for t in gold_themes} - given)


@dataclass(frozen=True)
class ThemeScores:
    """Theme precision, recall and F1 of one answer; ``entity_recall`` is None when no gold names were given.
    Made by :func:`theme_scores`; taught in notebooks/05_map_reduce_answering.ipynb.

    >>> s = theme_scores("Mining, as Ada says.", ["mining", "brewing"], ["mining", "brewing"], gold_entities=["Ada"])
    >>> s.precision, s.recall, s.entity_recall
    (1.0, 0.5, 1.0)
    """

    precision: float
    recall: float
    f1: float
    entity_recall: float | None = None


def theme_scores(text: str, gold_themes: Sequence[str], all_themes: Sequence[str], *,
                 gold_entities: Sequence[str] = (), question: str | None = None) -> ThemeScores:
    """Score an answer on themes so that naming everything does not pay.

    recall = share of ``gold_themes`` the answer names (= :func:`theme_coverage`); precision = share of the
    themes from ``all_themes`` the answer names that are gold (0 when it names none); F1 their harmonic mean.
    ``entity_recall`` = share of ``gold_entities`` (names) the answer names: does it say *who*?
    "Names" is :func:`theme_coverage`'s rule, a case-insensitive substring match.

    ``question``, when given, is the question's text: the themes it names itself are left out of the score on
    both sides (not gold, not counted against precision), so echoing the question earns nothing ("In the
    astronomy trade, who …" gives its gold theme away). When the question names every gold theme, there is no
    theme left to score: precision, recall and F1 are ``nan`` (drop such questions from a theme comparison).

    >>> themes = ["brewing", "mining", "robotics", "shipping"]
    >>> theme_scores("Mining and brewing.", ["mining", "brewing"], themes)
    ThemeScores(precision=1.0, recall=1.0, f1=1.0, entity_recall=None)
    >>> theme_scores("Brewing, mining, robotics, shipping.", ["mining"], themes).f1
    0.4
    >>> theme_scores("In the mining trade: brewing.", ["mining", "brewing"], themes, question="In the mining trade?")
    ThemeScores(precision=1.0, recall=1.0, f1=1.0, entity_recall=None)
    >>> theme_scores("In the mining trade?", ["mining", "brewing"], themes, question="In the mining trade?").f1
    0.0
    """
    for name, terms in (("gold_themes", gold_themes), ("all_themes", all_themes), ("gold_entities", gold_entities)):
        if isinstance(terms, str):
            raise TypeError(f"{name} must be a sequence of names, not one string ({terms!r})")
    if len(all_themes) == 0:
        raise ValueError("all_themes is empty")
    universe = {t.lower() for t in all_themes}
    missing = sorted({t for t in gold_themes if t.lower() not in universe})
    if missing:
        raise ValueError(f"gold themes {missing} are not in all_themes")
    if len(gold_themes) == 0:
        raise ValueError("gold_themes is empty")
    gold = {t.lower() for t in gold_themes}
    if question is not None:
        gold = set(unnamed_themes(question, sorted(gold), sorted(universe)))
        universe = set(unnamed_themes(question, sorted(universe), sorted(universe)))
    entity_recall = float(np.mean(_named(text, gold_entities))) if len(gold_entities) else None
    if not gold:
        return ThemeScores(float("nan"), float("nan"), float("nan"), entity_recall)
    recall = float(np.mean(_named(text, sorted(gold))))
    named = {t for t, hit in zip(sorted(universe), _named(text, sorted(universe))) if hit}
    precision = len(named & gold) / len(named) if named else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return ThemeScores(precision, recall, f1, entity_recall)
