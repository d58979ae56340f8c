"""Answering global questions: map-reduce over community reports, and a flat-retrieval baseline.

``global_search`` shuffles the reports with a fixed seed, packs them into batches within a token
budget, and asks the LLM (map) for scored points ``{"points": [{"description", "score" 0-100}]}``.
Malformed output gets one repair request; if that fails too the batch scores 0 and a warning is
recorded — never an exception mid-notebook, except :class:`cookbook.llm.LLMUnavailable` (an endpoint
that cannot be reached or refuses), which no retry can fix and which stops the run. Reduce drops score-0
points, sorts by score, packs them within a budget and asks for the final answer; with no point left the
answer says so without a call.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .llm import LLMUnavailable, count_tokens, pack_lines, parse_json, prompt, truncate

NO_ANSWER = "No relevant information was found in the community reports to answer this question."


@dataclass(frozen=True)
class Point:
    """A scored map point with its provenance; ``note`` is "repaired" when it came from a repair request."""

    description: str
    score: int
    reports: tuple[str, ...]
    note: str = ""


@dataclass
class Answer:
    question: str
    text: str
    points: list[Point] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    batches: int = 0
    sources: list[str] = field(default_factory=list)


def _valid_points(obj: dict, batch_ids: list[str], note: str = "") -> list[Point]:
    pts = obj.get("points")
    if not isinstance(pts, list):
        raise ValueError("'points' missing or not a list")
    out = []
    for p in pts:
        if not isinstance(p, dict) or not isinstance(p.get("description"), str) or not p["description"].strip():
            raise ValueError(f"point without a description: {p!r:.80}")
        score = p.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 100:
            raise ValueError(f"point score missing or outside 0-100: {score!r}")
        reports = [r for r in p.get("reports", []) if r in batch_ids] if isinstance(p.get("reports"), list) else []
        out.append(Point(p["description"].strip(), int(round(score)), tuple(sorted(reports or batch_ids)), note))
    return out


def map_batches(reports: Sequence, budget: int, seed: int = 0) -> list[list]:
    """Shuffle ``reports`` with ``seed`` and pack them into batches of at most ``budget`` tokens (a report
    larger than the budget travels alone)."""
    if not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"budget must be a positive number of tokens, got {budget!r}")
    order = list(reports)
    random.Random(seed).shuffle(order)
    batches, cur, used = [], [], 0
    for r in order:
        cost = count_tokens(f"[{r.id}] {r.text()}") + 1
        if cur and used + cost > budget:
            batches.append(cur)
            cur, used = [], 0
        cur.append(r)
        used += cost
    if cur:
        batches.append(cur)
    return batches


def map_prompts(question: str, reports: Sequence, *, budget: int = 1500, seed: int = 0) -> list[str]:
    """The map prompts ``global_search`` would send (for a ledger's dry-run estimate)."""
    if len(reports) == 0:
        raise ValueError("no reports to build map prompts from")
    return [prompt("map", question=question, reports=[f"[{r.id}] {r.text()}" for r in b])
            for b in map_batches(reports, budget, seed)]


def global_search(question: str, reports: Sequence, llm, *, map_budget: int = 1500, reduce_budget: int = 800,
                  max_tokens: int = 500, seed: int = 0) -> Answer:
    """Map-reduce answer to ``question`` from community ``reports``; see the module docstring."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    if len(reports) == 0:
        raise ValueError("no reports to search")
    if map_budget < 50 or reduce_budget < 50:
        raise ValueError(f"budgets must be >= 50 tokens, got map_budget={map_budget}, reduce_budget={reduce_budget}")
    ans = Answer(question, "")
    batches = map_batches(reports, map_budget, seed)
    ans.batches = len(batches)
    for batch in batches:
        ids = [r.id for r in batch]
        p = prompt("map", question=question, reports=[f"[{r.id}] {r.text()}" for r in batch])
        try:
            raw = llm.complete(p, max_tokens=max_tokens)
        except LLMUnavailable:
            raise
        except Exception as e:  # a backend that gave up (timeouts, 5xx after its retries): score 0, go on
            ans.warnings.append(f"map batch {ids}: backend error {type(e).__name__}: {e}; scored 0")
            continue
        raw, cut = truncate(raw or "", max_tokens)
        if cut:
            ans.warnings.append(f"map batch {ids}: output longer than max_tokens={max_tokens}, cut there")
        try:
            ans.points += _valid_points(parse_json(raw), ids)
        except ValueError as first:
            try:
                fixed = llm.complete(prompt("repair", output=raw or "(empty)"), max_tokens=max_tokens)
                ans.points += _valid_points(parse_json(truncate(fixed or "", max_tokens)[0]), ids, "repaired")
                ans.warnings.append(f"map batch {ids}: repaired malformed output ({first})")
            except LLMUnavailable:
                raise
            except Exception as second:
                ans.warnings.append(f"map batch {ids}: malformed output ({first}); repair failed ({second}); scored 0")
    kept = sorted((p for p in ans.points if p.score > 0), key=lambda p: (-p.score, p.reports, p.description))
    best = {}  # first (highest-scored) point per description
    for p in kept:
        best.setdefault(p.description, p)
    lines, _, _ = pack_lines((f"[score {p.score}] [{', '.join(p.reports)}] {p.description}" for p in best.values()),
                             reduce_budget)
    if not lines:
        ans.text = NO_ANSWER
        return ans
    try:
        ans.text, cut = truncate(llm.complete(prompt("reduce", question=question, points=lines),
                                              max_tokens=max_tokens) or "", max_tokens)
        if cut:
            ans.warnings.append(f"reduce: output longer than max_tokens={max_tokens}, cut there")
    except LLMUnavailable:
        raise
    except Exception as e:
        ans.warnings.append(f"reduce: backend error {type(e).__name__}: {e}; answering with the points")
        ans.text = ""
    if not ans.text.strip():  # an empty final answer: fall back to the packed points themselves
        ans.text = "Key points:\n" + "\n".join(lines)
    return ans


def flat_search(question: str, doc_ids: Sequence[str], doc_texts: Sequence[str], embedder, index, llm, *,
                k: int = 5, max_tokens: int = 500) -> Answer:
    """The baseline: the ``k`` documents most similar to the question, answered directly."""
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    rows, _ = index.search(embedder.transform([question])[0], k)
    ids = [doc_ids[int(i)] for i in rows]
    sources = [f"[{doc_ids[int(i)]}] {doc_texts[int(i)]}" for i in rows]
    text = llm.complete(prompt("answer", question=question, sources=sources), max_tokens=max_tokens)
    return Answer(question, text, sources=ids)


def _named(text: str, terms: Sequence[str]) -> list[bool]:
    """Which ``terms`` ``text`` names: a case-insensitive substring match, the one rule every score here uses."""
    low = text.lower()
    return [t.lower() in low for t in terms]


def theme_coverage(text: str, themes: Sequence[str]) -> float:
    """Share of the gold ``themes`` named (case-insensitively) in ``text``: recall only, see :func:`theme_scores`."""
    if len(themes) == 0:
        raise ValueError("themes is empty")
    return float(np.mean(_named(text, themes)))


@dataclass(frozen=True)
class ThemeScores:
    """Theme precision, recall and F1 of one answer; ``entity_recall`` is None when no gold names were given."""

    precision: float
    recall: float
    f1: float
    entity_recall: float | None = None


def theme_scores(text: str, gold_themes: Sequence[str], all_themes: Sequence[str], *,
                 gold_entities: Sequence[str] = ()) -> ThemeScores:
    """Score an answer on themes so that naming everything does not pay.

    recall = share of ``gold_themes`` the answer names (= :func:`theme_coverage`); precision = share of the
    themes from ``all_themes`` the answer names that are gold (0 when it names none); F1 their harmonic mean.
    ``entity_recall`` = share of ``gold_entities`` (names) the answer names: does it say *who*?
    "Names" is :func:`theme_coverage`'s rule, a case-insensitive substring match.

    >>> themes = ["brewing", "mining", "robotics", "shipping"]
    >>> theme_scores("Mining and brewing.", ["mining", "brewing"], themes)
    ThemeScores(precision=1.0, recall=1.0, f1=1.0, entity_recall=None)
    >>> theme_scores("Brewing, mining, robotics, shipping.", ["mining"], themes).f1
    0.4
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
    recall = theme_coverage(text, gold_themes)
    named = {t for t, hit in zip(sorted(universe), _named(text, sorted(universe))) if hit}
    precision = len(named & {t.lower() for t in gold_themes}) / len(named) if named else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    entity_recall = float(np.mean(_named(text, gold_entities))) if len(gold_entities) else None
    return ThemeScores(precision, recall, f1, entity_recall)
