"""Dynamic community selection, GraphRAG's cost lever for global search: instead of mapping every report of
one level, rate the root communities' reports for relevance to the question, descend only into the children
of those rated relevant, and map what survives (Microsoft GraphRAG,
``graphrag/query/context_builder/dynamic_community_selection.py``). A report rated relevant replaces its
parent in the selection (``keep_parent=False``, GraphRAG's default); the rating prompt is
:data:`cookbook.llm.prompts.RATE_RELEVANCE_PROMPT` (0-5; relevant at or above ``threshold``, GraphRAG's 1).
Taught in notebooks/05_map_reduce_answering.ipynb.

>>> from cookbook.index.reports import Report
>>> from cookbook.llm import ExtractiveLLM
>>> root = Report("R0-0", 0, 0, "Mining", "The mining trade is central.", [], 5.0, [], [], 0, children=["R1-0"])
>>> leaf = Report("R1-0", 1, 0, "Ore", "Brask mines iron ore for the mining trade.", [], 3.0, [], [], 0)
>>> other = Report("R0-1", 0, 1, "Fish", "Boats land cod.", [], 2.0, [], [], 0)
>>> s = select_reports("Which places mine for the mining trade?", [root, leaf, other], ExtractiveLLM())
>>> [r.id for r in s.reports], s.calls, s.ratings
(['R1-0'], 3, {'R0-0': 2, 'R0-1': 0, 'R1-0': 4})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .._validate import integer
from ..index.reports import Report
from ..llm import LLM, LLMUnavailable, concurrency_of, ordered_map
from ..llm.base import redact, stop_if_all_failed
from ..llm.json_answers import parse_json
from ..llm.prompts import prompt

__all__ = ["Selection", "select_reports"]


@dataclass
class Selection:
    """What :func:`select_reports` kept: the ``reports`` to map (in id order), the ``ratings`` every rated report
    got, the rating ``calls`` made, and ``warnings`` for ratings that could not be read (rated 0).

    >>> Selection([], {"R0-0": 0}, 1).calls
    1
    """

    reports: list[Report]
    ratings: dict[str, int]
    calls: int
    warnings: list[str] = field(default_factory=list)


def _rate(question: str, report: Report, llm: LLM) -> tuple[int, str, bool]:
    """``(rating, warning, whether the call itself failed)``."""
    p = prompt("rate_relevance", question=question, report=[f"[{report.id}] {report.text()}"])
    try:
        raw = llm.complete(p, max_tokens=60)
    except LLMUnavailable:
        raise
    except Exception as e:  # the call failed (counted by the caller: all failing stops), not the answer
        return 0, redact(f"rating of {report.id} failed ({type(e).__name__}: {e}); counted as 0"), True
    try:
        rating = parse_json(raw).get("rating")
        if isinstance(rating, str) and rating.strip().isdigit():
            rating = int(rating)
        if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not 0 <= rating <= 5:
            raise ValueError(f"rating missing or outside 0-5: {rating!r}")
        return int(round(rating)), "", False
    except Exception as e:  # a malformed rating counts as not relevant, said out loud
        return 0, redact(f"rating of {report.id} failed ({type(e).__name__}: {e}); counted as 0"), False


def select_reports(question: str, reports: Sequence[Report], llm: LLM, *, threshold: int = 1,
                   keep_parent: bool = False, concurrency: int | None = None) -> Selection:
    """The reports of every level (``reports``, each with its ``children`` report ids) that dynamic community
    selection keeps for ``question``: rate the level-0 reports, then the children of every report rated at or
    above ``threshold``, level by level, ``concurrency`` ratings at a time; a relevant report's parent leaves the
    selection unless ``keep_parent``. A rating whose call failed counts 0 with a warning; every rating call
    failing raises :class:`~cookbook.llm.base.LLMUnavailable` (nothing reached the model). See the module's
    example.

    >>> select_reports("Why?", [], None)
    Traceback (most recent call last):
    ...
    ValueError: no reports to select from
    """
    if not reports:
        raise ValueError("no reports to select from")
    threshold = integer(threshold, "threshold", at_least=0, what="an integer in 0-5 (the rating scale)")
    if threshold > 5:  # no rating reaches it: nothing would ever be relevant, and the answer would say so
        raise ValueError(f"threshold must be an integer in 0-5 (the rating scale), got {threshold}")
    by_id = {r.id: r for r in reports}
    parent = {child: r.id for r in reports for child in r.children if child in by_id}
    queue = sorted((r for r in reports if r.level == 0), key=lambda r: r.id)
    ratings: dict[str, int] = {}
    warnings: list[str] = []
    kept: set[str] = set()
    width = concurrency_of(llm, concurrency)
    failed = []  # the warnings of the rating calls that failed: all of them failing stops the selection
    while queue:
        rated = ordered_map(lambda r: _rate(question, r, llm), queue, concurrency=width)
        failed += [warning for _, warning, call_failed in rated if call_failed]
        nxt = []
        for r, (rating, warning, _) in zip(queue, rated):
            ratings[r.id] = rating
            if warning:
                warnings.append(warning)
            if rating >= threshold:  # at or above, as GraphRAG (`rating >= self.threshold`)
                kept.add(r.id)
                nxt += [by_id[c] for c in r.children if c in by_id]
                if not keep_parent and r.id in parent:
                    kept.discard(parent[r.id])
        queue = sorted(nxt, key=lambda r: r.id)
    stop_if_all_failed(f"dynamic selection ({len(ratings)} rating(s))", len(failed), len(ratings),
                       failed[-1] if failed else "")
    return Selection(sorted((by_id[i] for i in kept), key=lambda r: r.id), ratings, len(ratings), warnings)
