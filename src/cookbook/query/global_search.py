"""Global search: answering questions about the whole corpus by map-reduce over community reports.

``global_search`` shuffles the reports with a fixed seed, packs them into batches within a token
budget, and asks the LLM (map) for scored points ``{"points": [{"description", "score" 0-100}]}``.
Malformed output gets one repair request; if that fails too the batch scores 0 and a warning is
recorded — never an exception mid-notebook, except :class:`cookbook.llm.base.LLMUnavailable` (an endpoint
that cannot be used: see :class:`cookbook.llm.openai_compatible.OpenAICompatibleLLM`), which no retry can fix
and which stops the run; so does a map step whose every batch's call failed (nothing reached the model:
:func:`cookbook.llm.base.stop_if_all_failed`), rather than answer "no relevant information". Warnings carry
no secret (:func:`cookbook.llm.base.redact`). Reduce drops score-0 points, sorts by score, packs them within a
budget and asks for the final answer; with no point left the answer says so without a call. The map calls run
concurrently (:func:`cookbook.llm.concurrency.ordered_map`, as wide as the backend's ``concurrency``) and are
gathered in batch order, so the answer does not depend on which call finished first.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from .._validate import integer
from .._validate import seed as check_seed
from ..index.reports import Report
from ..llm import LLM, LLMUnavailable, concurrency_of, ordered_map, redact
from ..llm.base import stop_if_all_failed
from ..llm.json_answers import parse_json
from ..llm.prompts import prompt
from ..llm.tokens import count_tokens, pack_lines, truncate

__all__ = ["NO_ANSWER", "Answer", "Point", "global_search", "map_batches", "map_prompts", "map_step", "reduce_step"]

NO_ANSWER = "No relevant information was found in the community reports to answer this question."


@dataclass(frozen=True)
class Point:
    """A scored map point with its provenance; ``note`` is "repaired" when it came from a repair request.

    >>> Point("Mining is central.", 80, ("R0-0",)).score
    80
    """

    description: str
    score: int
    reports: tuple[str, ...]
    note: str = ""


@dataclass
class Answer:
    """What :func:`global_search` or :func:`flat_search` returns: the answer ``text``, the map ``points``
    behind it, ``warnings`` about batches that failed or were repaired, the number of map ``batches`` and,
    for flat search, the ``sources`` (document ids) it read.

    >>> Answer("Who?", "Ada [d1].", sources=["d1"]).sources
    ['d1']
    """

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
        if isinstance(score, str):  # "80": the number written as a string
            try:
                score = float(score)
            except ValueError:
                pass
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 100:
            raise ValueError(f"point score missing or outside 0-100: {p.get('score')!r}")
        reports = p.get("reports", [])
        reports = [reports] if isinstance(reports, str) else reports if isinstance(reports, list) else []
        reports = [r for r in reports if r in batch_ids]
        out.append(Point(p["description"].strip(), int(round(score)), tuple(sorted(reports or batch_ids)), note))
    return out


def map_batches(reports: Sequence[Report], budget: int, seed: int = 0) -> list[list[Report]]:
    """Shuffle ``reports`` with ``seed`` and pack them into batches of at most ``budget`` tokens (a report
    larger than the budget travels alone).

    >>> from cookbook.index.reports import Report
    >>> rs = [Report(f"R0-{i}", 0, i, f"T{i}", "x " * 30, [], 1.0, [], [], 0) for i in range(4)]
    >>> [[r.id for r in b] for b in map_batches(rs, budget=40, seed=1)]
    [['R0-3', 'R0-0'], ['R0-2', 'R0-1']]
    """
    integer(budget, "budget", what="a positive number of tokens")
    order = list(reports)
    random.Random(check_seed(seed)).shuffle(order)
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


def _map_prompt(question: str, batch: Sequence[Report]) -> str:
    return prompt("map", question=question, reports=[f"[{r.id}] {r.text()}" for r in batch])


def map_prompts(question: str, reports: Sequence[Report], *, budget: int = 1500, seed: int = 0) -> list[str]:
    """The map prompts ``global_search`` would send (for a ledger's dry-run estimate).

    >>> from cookbook.index.reports import Report
    >>> r = Report("R0-0", 0, 0, "Mining", "Mining is central.", [], 1.0, [], [], 0)
    >>> map_prompts("Which trades?", [r])[0].splitlines()[:4]
    ['TASK: map', '## QUESTION', 'Which trades?', '## REPORTS']
    """
    if len(reports) == 0:
        raise ValueError("no reports to build map prompts from")
    return [_map_prompt(question, b) for b in map_batches(reports, budget, seed)]


def map_step(question: str, batch: Sequence[Report], llm: LLM, *, max_tokens: int = 500
             ) -> tuple[list[Point], list[str]]:
    """Map one batch of reports to scored points: ``(points, warnings)``.

    Output longer than ``max_tokens`` is cut there. An answer :func:`cookbook.llm.json_answers.parse_json` reads
    (fenced, pretty-printed, trailing commas) whose points each have a description and a score 0-100 (a
    number, or a string holding one: ``"80"``; ``reports`` a list of ids or one id) is taken as it is;
    anything else gets one repair request; a backend error, or a repair that fails too, scores the batch 0
    (no points) with a warning (secrets redacted, :func:`cookbook.llm.base.redact`).
    :class:`cookbook.llm.base.LLMUnavailable` propagates: no retry can fix it.

    >>> from cookbook.llm import ExtractiveLLM
    >>> from cookbook.index.reports import Report
    >>> r = Report("R0-0", 0, 0, "Mining", "The mining trade is central.", [], 1.0, [], [], 0)
    >>> map_step("Which trade is central?", [r], ExtractiveLLM())[0][0].reports
    ('R0-0',)
    """
    points, warnings, _ = _map(question, batch, llm, max_tokens=max_tokens)
    return points, warnings


def _map(question: str, batch: Sequence[Report], llm: LLM, *, max_tokens: int
         ) -> tuple[list[Point], list[str], str | None]:
    """:func:`map_step`, and the cause when the batch's call failed (None when the model answered)."""
    integer(max_tokens, "max_tokens")  # checked here: the backend's own ValueError would read as a fault
    ids = [r.id for r in batch]
    try:
        raw = llm.complete(_map_prompt(question, batch), max_tokens=max_tokens)
    except LLMUnavailable:
        raise
    except Exception as e:  # a backend that gave up (timeouts, 5xx after its retries): score 0, go on
        cause = redact(f"{type(e).__name__}: {e}")
        return [], [f"map batch {ids}: backend error {cause}; scored 0"], cause
    raw, cut = truncate(raw or "", max_tokens)
    warnings = [f"map batch {ids}: output longer than max_tokens={max_tokens}, cut there"] if cut else []
    try:
        return _valid_points(parse_json(raw), ids), warnings, None
    except ValueError as first:
        try:
            fixed = llm.complete(prompt("repair", output=raw or "(empty)"), max_tokens=max_tokens)
            points = _valid_points(parse_json(truncate(fixed or "", max_tokens)[0]), ids, "repaired")
            return points, warnings + [redact(f"map batch {ids}: repaired malformed output ({first})")], None
        except LLMUnavailable:
            raise
        except Exception as second:
            return [], warnings + [redact(f"map batch {ids}: malformed output ({first}); repair failed ({second}); "
                                          "scored 0")], None


def reduce_step(question: str, points: Sequence[Point], llm: LLM, *, budget: int = 800, max_tokens: int = 500
                ) -> tuple[str, list[str]]:
    """The final answer from map ``points``: ``(text, warnings)``.

    Drops score-0 points, keeps the highest-scored point per description, sorts by score (ties by reports,
    then description), packs them within ``budget`` tokens and asks for the answer. With no point left it
    answers :data:`NO_ANSWER` without a call; an empty answer or a backend error falls back to the packed
    points themselves.

    >>> from cookbook.llm import ExtractiveLLM
    >>> print(reduce_step("Why?", [Point("Mining is central.", 80, ("R0-0",))], ExtractiveLLM())[0])
    Key points from the community reports:
    - [score 80] [R0-0] Mining is central.
    >>> reduce_step("Why?", [Point("Noise.", 0, ("R0-0",))], ExtractiveLLM())[0] == NO_ANSWER
    True
    """
    integer(max_tokens, "max_tokens")
    kept = sorted((p for p in points if p.score > 0), key=lambda p: (-p.score, p.reports, p.description))
    best = {}  # first (highest-scored) point per description
    for p in kept:
        best.setdefault(p.description, p)
    lines, _, _ = pack_lines((f"[score {p.score}] [{', '.join(p.reports)}] {p.description}" for p in best.values()),
                             budget)
    if not lines:
        return NO_ANSWER, []
    warnings = []
    try:
        text, cut = truncate(llm.complete(prompt("reduce", question=question, points=lines),
                                          max_tokens=max_tokens) or "", max_tokens)
        if cut:
            warnings.append(f"reduce: output longer than max_tokens={max_tokens}, cut there")
    except LLMUnavailable:
        raise
    except Exception as e:
        warnings.append(redact(f"reduce: backend error {type(e).__name__}: {e}; answering with the points"))
        text = ""
    if not text.strip():  # an empty final answer: fall back to the packed points themselves
        text = "Key points:\n" + "\n".join(lines)
    return text, warnings


def global_search(question: str, reports: Sequence[Report], llm: LLM, *, map_budget: int = 1500,
                  reduce_budget: int = 800, max_tokens: int = 500, seed: int = 0,
                  concurrency: int | None = None) -> Answer:
    """Map-reduce answer to ``question`` from community ``reports``: :func:`map_batches`, then
    :func:`map_step` per batch, ``concurrency`` batches at a time (None: the backend's own, see
    :func:`cookbook.llm.concurrency.concurrency_of`), then :func:`reduce_step`; see the module docstring.

    >>> from cookbook.llm import ExtractiveLLM
    >>> from cookbook.index.reports import Report
    >>> r = Report("R0-0", 0, 0, "Mining", "The mining trade is central.", [], 1.0, [], [], 0)
    >>> ans = global_search("Which trade is central?", [r], ExtractiveLLM())
    >>> ans.batches, ans.points[0].score, ans.warnings
    (1, 100, [])
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    if len(reports) == 0:
        raise ValueError("no reports to search")
    if map_budget < 50 or reduce_budget < 50:
        raise ValueError(f"budgets must be >= 50 tokens, got map_budget={map_budget}, reduce_budget={reduce_budget}")
    width = concurrency_of(llm, concurrency)
    ans = Answer(question, "")
    batches = map_batches(reports, map_budget, seed)
    ans.batches = len(batches)
    mapped = ordered_map(lambda batch: _map(question, batch, llm, max_tokens=max_tokens), batches,
                         concurrency=width)
    failed = [cause for _, _, cause in mapped if cause is not None]
    stop_if_all_failed(f"global search, the map step ({len(batches)} batch(es))", len(failed), len(batches),
                       failed[-1] if failed else "")
    for points, warnings, _ in mapped:
        ans.points += points
        ans.warnings += warnings
    ans.text, warnings = reduce_step(question, ans.points, llm, budget=reduce_budget, max_tokens=max_tokens)
    ans.warnings += warnings
    return ans


