"""DRIFT search, after Microsoft GraphRAG's (``graphrag/query/structured_search/drift_search/``,
``docs/query/drift_search.md``): a *primer* reads the community reports most similar to the question, in
``primer_folds`` folds, each answering in JSON with an intermediate answer, a score and follow-up questions; then,
for ``n_depth`` rounds, the ``k_followups`` best open follow-ups are answered by local search (the same context as
:func:`cookbook.query.local_search.local_context`, asked for JSON with a score and further follow-ups); finally
every intermediate answer is reduced to one (the ``reduce`` prompt of global search). GraphRAG ranks reports by
embedding similarity to a hypothetical answer (HyDE); here by TF-IDF cosine to the question. ``token_budget``
stops DRIFT before the call that could take it over that many tokens, so DRIFT can be compared with other modes
within the same tokens (it may stop short of them: the notebook prints how much). Taught in
notebooks/11_drift_and_lazy_search.ipynb.

>>> from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph, Relationship
>>> from cookbook.index.reports import Report
>>> from cookbook.llm import ExtractiveLLM
>>> from cookbook.query.local_search import local_index
>>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",)),
...                     ExtractedEntity("E2", "Acme", "org", "A firm in Oslo.", ("d2",))],
...                    [Relationship("E1", "E2", "works_for", "Ada works for Acme.", 9.0, ("d1",))])
>>> rep = Report("R0-0", 0, 0, "Ada and Acme", "Ada works for Acme.", [], 5.0, ["E1", "E2"], [], 10)
>>> idx = local_index(g, {"d1": "Ada works for Acme.", "d2": "Acme is in Oslo."}, reports=[rep],
...                   gazetteer={"Ada": ["E1"], "Acme": ["E2"]})
>>> ans = drift_search("Where is Ada's employer?", [rep], idx, ExtractiveLLM(), n_depth=1, k_followups=1)
>>> [a.query for a in ans.actions], ans.source_ids
(["Where is Ada's employer? Ada and Acme."], ['d1', 'd2'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .._validate import integer, string
from ..embed import TfidfVectorizer
from ..index.reports import Report
from ..llm import LLM, LLMUnavailable
from ..llm.base import redact, stop_if_all_failed
from ..llm.json_answers import parse_json
from ..llm.prompts import prompt
from ..llm.tokens import count_tokens, truncate
from .global_search import Point, reduce_step
from .local_search import LocalIndex, local_context

__all__ = ["DriftAction", "DriftAnswer", "LIMITS", "drift_search", "rank_reports"]

# The largest value each size parameter of drift_search takes, well above GraphRAG's defaults (n_depth 3,
# k_followups 20, primer_folds 5): a model call costs money and time, so a typo such as n_depth=10**6 is refused
# before any call instead of running n_depth x k_followups local searches.
LIMITS = {"primer_k": 1_000, "primer_folds": 100, "k_followups": 200, "n_depth": 20, "budget": 1_000_000,
          "max_tokens": 100_000, "step_tokens": 100_000, "token_budget": 100_000_000}


@dataclass
class DriftAction:
    """One step of DRIFT: the ``query`` asked, at ``depth`` (0: the primer over reports), the ``answer`` and its
    ``score`` (0-100) as the model gave them, the ``follow_ups`` it proposed, and what it read (``read``: report
    ids for the primer, text-unit ids for a local search).

    >>> DriftAction("Who?", 0, "Ada. [R1]", 80, ["Where?"], ["R1"]).score
    80
    """

    query: str
    depth: int
    answer: str
    score: int
    follow_ups: list[str]
    read: list[str]


@dataclass
class DriftAnswer:
    """What :func:`drift_search` returns: the final ``text``, the ``primer`` actions and the local-search
    ``actions`` in the order they ran, ``source_ids`` (every text unit the local searches read, first reading
    first), the ``tokens`` its calls cost (prompts and answers), the ``calls`` and ``warnings``.

    >>> DriftAnswer("Q?", "A.").source_ids
    []
    """

    question: str
    text: str
    primer: list[DriftAction] = field(default_factory=list)
    actions: list[DriftAction] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    tokens: int = 0
    calls: int = 0
    warnings: list[str] = field(default_factory=list)


def rank_reports(question: str, reports: Sequence[Report], k: int) -> list[Report]:
    """The ``k`` reports most similar to ``question`` (TF-IDF cosine of the question to each report's text; ties
    by id), most similar first: the primer's reading list.

    >>> a = Report("R0-0", 0, 0, "Coal", "Ada mines coal.", [], 1.0, [], [], 0)
    >>> b = Report("R0-1", 0, 1, "Fish", "Bo lands cod.", [], 1.0, [], [], 0)
    >>> [r.id for r in rank_reports("Who mines coal?", [a, b], 1)]
    ['R0-0']
    """
    string(question, "question")
    k = integer(k, "k")
    if not reports:
        raise ValueError("no reports to rank")
    try:
        tfidf, X = _fitted(tuple(r.text() for r in reports))
        sims = (X @ tfidf.transform([question]).T).toarray().ravel()
    except ValueError:  # reports of stopwords only
        sims = np.zeros(len(reports))
    order = sorted(range(len(reports)), key=lambda i: (-round(float(sims[i]), 12), reports[i].id))
    return [reports[i] for i in order[:k]]


@lru_cache(maxsize=4)
def _fitted(texts: tuple[str, ...]):
    """The TF-IDF fitted on ``texts`` and their matrix: fitted once per set of reports, not once per question."""
    tfidf = TfidfVectorizer()
    return tfidf, tfidf.fit_transform(list(texts))


class _Counted:
    """``llm`` with the tokens (prompts and answers) and calls it answered counted, for ``token_budget``."""

    def __init__(self, llm: LLM):
        self.llm, self.tokens, self.calls = llm, 0, 0
        self.concurrency = getattr(llm, "concurrency", 1)

    def complete(self, text: str, *, max_tokens: int) -> str:
        out = self.llm.complete(text, max_tokens=max_tokens) or ""
        self.tokens += count_tokens(text) + count_tokens(out)
        self.calls += 1
        return out


def _ask(llm: LLM, text: str, key: str, max_tokens: int, what: str, failed: list[str]
         ) -> tuple[str, int, list[str], str]:
    """One JSON call: ``(answer, score, follow-ups, warning)``; an unreadable answer scores 0 with a warning
    (never an exception, but :class:`LLMUnavailable`); a call that failed also adds its warning to ``failed``."""
    try:
        raw = llm.complete(text, max_tokens=max_tokens) or ""
    except LLMUnavailable:
        raise
    except Exception as e:
        failed.append(redact(f"{what}: backend error {type(e).__name__}: {e}; scored 0"))
        return "", 0, [], failed[-1]
    raw, _ = truncate(raw, max_tokens)
    try:
        obj = parse_json(raw)
        answer, score = obj.get(key), obj.get("score")
        if isinstance(score, str) and score.strip().isdigit():
            score = int(score)
        if not isinstance(answer, str) or isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ValueError(f"{key!r} or 'score' missing")
        follow = [f for f in obj.get("follow_up_queries", []) if isinstance(f, str) and f.strip()]
        return answer, int(round(min(max(score, 0), 100))), follow, ""
    except ValueError as e:
        return "", 0, [], redact(f"{what}: unreadable answer ({e}); scored 0")


def _size(value, name: str, at_least: int = 1) -> int:
    """A size parameter of :func:`drift_search`, at least ``at_least`` and at most its :data:`LIMITS` entry."""
    return integer(value, name, at_least=at_least, at_most=LIMITS[name], limit=f"drift_search.LIMITS[{name!r}]")


REDUCE_BUDGET = 800  # the reduce step's packing budget (reduce_step's default): its prompt's points at most this


def _affords(llm: _Counted, p: str, step_tokens: int, out: DriftAnswer, question: str, max_tokens: int,
             token_budget: int | None) -> bool:
    """Whether a call with prompt ``p`` (answer at most ``step_tokens``) and then the reduce at its worst (its
    prompt with every point so far and this one, within :data:`REDUCE_BUDGET`, and ``max_tokens`` of answer) still
    fit ``token_budget``: DRIFT stops *before* the call that would cross it."""
    if token_budget is None:
        return True
    points = sum(count_tokens(a.answer) + 12 for a in out.primer + out.actions if a.answer and a.score > 0)
    reduce_cost = (count_tokens(prompt("reduce", question=question, points=[]))
                   + min(REDUCE_BUDGET, points + step_tokens + 12) + max_tokens)
    return llm.tokens + count_tokens(p) + step_tokens + reduce_cost <= token_budget


def drift_search(question: str, reports: Sequence[Report], index: LocalIndex, llm: LLM, *, primer_k: int = 10,
                 primer_folds: int = 5, k_followups: int = 3, n_depth: int = 2, budget: int = 1500,
                 text_unit_prop: float = 0.5, community_prop: float = 0.1, max_tokens: int = 500,
                 step_tokens: int = 500, token_budget: int | None = None) -> DriftAnswer:
    """Answer ``question`` by DRIFT (see the module docstring) over community ``reports`` and a local-search
    ``index``. The primer reads the ``primer_k`` reports of :func:`rank_reports` split round-robin into
    ``primer_folds`` folds (GraphRAG: ``drift_k_followups`` reports, ``primer_folds`` folds); then ``n_depth``
    rounds each answer the ``k_followups`` open follow-ups with the highest score of the action that proposed
    them (ties by text), by local search within ``budget`` tokens and its proportions; each follow-up is asked
    once. ``token_budget`` (None: none) stops before the primer fold (after the first) or follow-up whose call
    could cross it, counting that call's prompt, ``step_tokens`` of answer and the reduce at its worst: the calls
    then cost at most ``token_budget`` tokens, unless the first primer fold and the reduce alone exceed it. The
    reduce reads every answer with a score above 0 as a scored point. A primer or follow-up answer is cut at
    ``step_tokens``, the final answer at ``max_tokens``; an unreadable step answer scores 0 with a warning. Each
    size parameter is at most its :data:`LIMITS` entry (``n_depth=10**6`` is refused before any call).

    >>> drift_search("Why?", [], None, None)
    Traceback (most recent call last):
    ...
    ValueError: no reports to prime DRIFT with
    """
    string(question, "question")
    if not reports:
        raise ValueError("no reports to prime DRIFT with")
    primer_k, primer_folds = _size(primer_k, "primer_k"), _size(primer_folds, "primer_folds")
    k_followups, n_depth = _size(k_followups, "k_followups"), _size(n_depth, "n_depth", at_least=0)
    max_tokens, step_tokens, budget = _size(max_tokens, "max_tokens"), _size(step_tokens, "step_tokens"), \
        _size(budget, "budget")
    if token_budget is not None:
        token_budget = _size(token_budget, "token_budget")
    out, llm = DriftAnswer(question, ""), _Counted(llm)
    ranked = rank_reports(question, reports, primer_k)
    folds = [ranked[i::primer_folds] for i in range(min(primer_folds, len(ranked)))]
    open_: dict[str, int] = {}  # follow-up → the score of the action that proposed it
    asked: set[str] = set()
    failed: list[str] = []  # the warnings of the calls that failed: all of them failing stops the search
    for n, fold in enumerate(folds):
        p = prompt("drift_primer", question=question, reports=[f"[{r.id}] {r.text()}" for r in fold])
        if n and not _affords(llm, p, step_tokens, out, question, max_tokens, token_budget):
            break
        answer, score, follow, warning = _ask(llm, p, "intermediate_answer", step_tokens, "primer", failed)
        out.primer.append(DriftAction(question, 0, answer, score, follow, [r.id for r in fold]))
        out.warnings += [warning] if warning else []
        for f in follow:
            open_[f] = max(open_.get(f, 0), score)
    for depth in range(1, n_depth + 1):
        todo = sorted((f for f in open_ if f not in asked), key=lambda f: (-open_[f], f))[:k_followups]
        for query in todo:
            ctx = local_context(query, index, budget=budget, text_unit_prop=text_unit_prop,
                                community_prop=community_prop)
            p = prompt("drift_local", question=query, entities=ctx.entities, relationships=ctx.relationships,
                       sources=ctx.sources, reports=ctx.reports)
            if not _affords(llm, p, step_tokens, out, question, max_tokens, token_budget):
                break
            asked.add(query)
            answer, score, follow, warning = _ask(llm, p, "response", step_tokens, f"follow-up {query!r:.60}",
                                                  failed)
            out.actions.append(DriftAction(query, depth, answer, score, follow, list(ctx.source_ids)))
            out.warnings += [warning] if warning else []
            out.source_ids += [d for d in ctx.source_ids if d not in out.source_ids]
            for f in follow:
                if f not in asked:
                    open_[f] = max(open_.get(f, 0), score)
    calls = len(out.primer) + len(out.actions)
    stop_if_all_failed(f"DRIFT search ({calls} call(s))", len(failed), calls, failed[-1] if failed else "")
    points = [Point(a.answer, a.score, tuple(a.read[:3]) or ("primer",)) for a in out.primer + out.actions
              if a.answer and a.score > 0]
    out.text, warnings = reduce_step(question, points, llm, max_tokens=max_tokens)
    out.warnings += warnings
    out.tokens, out.calls = llm.tokens, llm.calls
    return out
