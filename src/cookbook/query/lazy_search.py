"""A LazyGraphRAG-style search: no summaries at index time, relevance tests within a budget at query time.

It follows the published description (Microsoft Research blog, *LazyGraphRAG: setting a new standard for quality
and cost*, November 2024), not released code — as of the blog and of this module's writing (December 2026) none was
released. Indexing builds only a concept graph (here the entity co-occurrence graph, no model call) and its Leiden
hierarchy (:func:`lazy_index`). At query time
(:func:`lazy_search`) the text units are ranked by similarity to the question (BM25) and communities by their best
untested text unit (*best first*); the communities of a level are tested in that order (*breadth first*): a
*relevance test* (one ``relevance_test`` call) rates a community's best ``chunks_per_test`` untested text units, and
a relevant community keeps them. The blog's recursion rule, *"Recurses into relevant sub-communities after z
successive communities yield zero relevant text chunks (iterative deepening)"*: after ``deepen_after`` (z)
irrelevant communities in a row, or when the level is done, the search moves on to the sub-communities of the
relevant communities found on it; an irrelevant community's subtree is never tested. It ends when no relevant
community remains or the ``budget`` of relevance tests is spent. The relevant text units, best first, are then
packed into one ``map`` call (the text units in its REPORTS section) for scored claims, and reduced to the answer
as global search reduces. What it leaves out of the blog (query refinement into subqueries, sentence-level
ratings, claim extraction per community group) notebook 11 lists. Taught in notebooks/11_drift_and_lazy_search.ipynb.

>>> from cookbook.data.records import Mention
>>> from cookbook.index.graph import cooccurrence_graph
>>> from cookbook.llm import ExtractiveLLM
>>> docs = {"d1": "Ada mines coal in Brask.", "d2": "Bo mines coal too.", "d3": "Cy sells fish."}
>>> ms = [Mention("d1", 0, 3, "A", "Ada"), Mention("d1", 18, 23, "K", "Brask"), Mention("d2", 0, 2, "B", "Bo"),
...       Mention("d3", 0, 2, "C", "Cy")]
>>> g = cooccurrence_graph(ms, docs, [("A", "Ada"), ("B", "Bo"), ("C", "Cy"), ("K", "Brask")])
>>> idx = lazy_index(g, ms, docs, seed=0)
>>> ans = lazy_search("Who mines coal?", idx, ExtractiveLLM(), budget=5)
>>> ans.tests, ans.relevant
(2, ['d1', 'd2'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validate import integer, string
from ..data.records import doc_pairs
from ..embed import BM25
from ..index.graph import EntityGraph
from ..index.hierarchy import Hierarchy, hierarchical_leiden
from ..index.reports import Report
from ..llm import LLM, LLMUnavailable
from ..llm.base import redact, stop_if_all_failed
from ..llm.json_answers import parse_json
from ..llm.prompts import prompt
from ..llm.tokens import pack_lines
from .global_search import NO_ANSWER, map_step, reduce_step

__all__ = ["LIMITS", "NO_LAZY_ANSWER", "LazyAnswer", "LazyIndex", "lazy_index", "lazy_search"]

# The largest value each size parameter of lazy_search takes: the blog's largest relevance-test budget is 1,500, so
# 10,000 leaves room, and a typo such as budget=10**6 (a million model calls) is refused before any call.
LIMITS = {"budget": 10_000, "chunks_per_test": 100, "context_budget": 1_000_000, "max_tokens": 100_000}
# The answer when nothing relevant was found: a lazy index has no community reports, so global search's NO_ANSWER
# (which names them) would misdescribe what was read.
NO_LAZY_ANSWER = "No relevant information was found in the text units the relevance tests read to answer this question."


@dataclass
class LazyIndex:
    """What :func:`lazy_search` reads, built by :func:`lazy_index` without a model call: the ``hierarchy`` of the
    concept ``graph``, the text units (``doc_ids``, ``doc_text``), the text units of each community
    (``docs_of[(level, c)]``: those mentioning a member, sorted), each community's ``children`` at the next level,
    and a BM25 index of the text units.

    >>> from cookbook.data.records import Mention
    >>> from cookbook.index.graph import cooccurrence_graph
    >>> ms = [Mention("d1", 0, 3, "A", "Ada"), Mention("d1", 8, 10, "B", "Bo")]
    >>> idx = lazy_index(cooccurrence_graph(ms, {"d1": "Ada met Bo."}, [("A", "Ada"), ("B", "Bo")]), ms,
    ...                  {"d1": "Ada met Bo."})
    >>> idx.docs_of, idx.roots
    ({(0, 0): ['d1']}, [(0, 0)])
    """

    graph: EntityGraph
    hierarchy: Hierarchy
    doc_ids: list[str]
    doc_text: dict[str, str]
    docs_of: dict[tuple[int, int], list[str]]
    children: dict[tuple[int, int], list[tuple[int, int]]]
    bm25: BM25 = field(repr=False)

    @property
    def roots(self) -> list[tuple[int, int]]:
        """The top-level communities, ``(0, c)``, in order.

        >>> LazyIndex(None, None, [], {}, {(1, 0): [], (0, 1): [], (0, 0): []}, {}, None).roots
        [(0, 0), (0, 1)]
        """
        return sorted(k for k in self.docs_of if k[0] == 0)


def lazy_index(graph: EntityGraph, mentions, docs, *, max_cluster_size: int = 10, seed: int = 0) -> LazyIndex:
    """Index for :func:`lazy_search`: the hierarchical Leiden communities of ``graph`` (a co-occurrence graph,
    :func:`cookbook.index.graph.cooccurrence_graph`; GraphRAG's ``max_cluster_size``), each community's text units
    (``docs`` mentioning a member, by ``mentions``), its sub-communities, and BM25 over ``docs``. No model call.
    A community carried down unchanged to the next level is not its own child.

    >>> from cookbook.data.records import Mention
    >>> from cookbook.index.graph import cooccurrence_graph
    >>> docs = {"d1": "Ada met Bo.", "d2": "Bo left."}
    >>> ms = [Mention("d1", 0, 3, "A", "Ada"), Mention("d1", 8, 10, "B", "Bo"), Mention("d2", 0, 2, "B", "Bo")]
    >>> lazy_index(cooccurrence_graph(ms, docs, [("A", "Ada"), ("B", "Bo")]), ms, docs).docs_of
    {(0, 0): ['d1', 'd2']}
    """
    if not isinstance(graph, EntityGraph):
        raise TypeError(f"graph must be an EntityGraph, got {type(graph).__name__}")
    pairs = doc_pairs(docs)
    if not pairs:
        raise ValueError("docs is empty: no text units to search")
    hier = hierarchical_leiden(graph, max_cluster_size=max_cluster_size, seed=seed)
    node = {e: i for i, e in enumerate(graph.ids)}
    docs_of_node: list[set[str]] = [set() for _ in graph.ids]
    for m in mentions:
        if m.entity_id in node:
            docs_of_node[node[m.entity_id]].add(m.doc_id)
    docs_of, children = {}, {}
    for level, membership in enumerate(hier.levels):
        for c in range(int(membership.max()) + 1):
            members = np.flatnonzero(membership == c)
            docs_of[(level, c)] = sorted(set().union(*(docs_of_node[i] for i in members)))
            children[(level, c)] = []
            if level > 0:
                parent = (level - 1, int(hier.parents[level][c]))
                if len(members) != np.sum(hier.levels[level - 1] == parent[1]):  # a real split, not a carry-down
                    children[parent].append((level, c))
    ids = [p[0] for p in pairs]
    return LazyIndex(graph, hier, ids, dict(pairs), docs_of, children, BM25([t for _, t in pairs]))


@dataclass
class LazyAnswer:
    """What :func:`lazy_search` returns: the answer ``text``, the relevance ``tests`` made (at most the budget),
    the communities tested with their ratings (``ratings``, in test order), the ``relevant`` text units (best
    first) and the ``read`` ones (packed into the map call), and ``warnings``.

    >>> LazyAnswer("Q?", "A.", 0).relevant
    []
    """

    question: str
    text: str
    tests: int
    ratings: list[tuple[tuple[int, int], int]] = field(default_factory=list)
    relevant: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _test(question: str, lines: list[str], llm: LLM) -> tuple[int, str, bool]:
    """``(rating, warning, whether the call itself failed)``."""
    try:
        raw = llm.complete(prompt("relevance_test", question=question, text=lines), max_tokens=60)
    except LLMUnavailable:
        raise
    except Exception as e:  # the call failed: counted by the caller (all failing stops)
        return 0, redact(f"relevance test failed ({type(e).__name__}: {e}); counted as 0"), True
    try:
        obj = parse_json(raw)
        rating = obj.get("rating")
        if isinstance(rating, str) and rating.strip().isdigit():
            rating = int(rating)
        if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not 0 <= rating <= 5:
            raise ValueError(f"rating missing or outside 0-5: {rating!r}")
        return int(round(rating)), "", False
    except Exception as e:  # an unreadable rating
        return 0, redact(f"relevance test failed ({type(e).__name__}: {e}); counted as 0"), False


def _units_not_reports(text: str) -> str:
    """The answer's first line with "community reports" read as the text units they are here: the reduce step is
    global search's, whose answer (the stand-in's header, "Key points from the community reports:") names reports,
    and a lazy index has none.

    >>> _units_not_reports("Key points from the community reports:\\n- [d1] Coal.")
    'Key points from the relevant text units:\\n- [d1] Coal.'
    """
    first, sep, rest = text.partition("\n")
    return first.replace("the community reports", "the relevant text units") + sep + rest


def _size(value, name: str) -> int:
    """A size parameter of :func:`lazy_search`: a positive integer at most its :data:`LIMITS` entry."""
    return integer(value, name, at_most=LIMITS[name], limit=f"lazy_search.LIMITS[{name!r}]")


def lazy_search(question: str, index: LazyIndex, llm: LLM, *, budget: int = 20, chunks_per_test: int = 3,
                threshold: int = 1, deepen_after: int | None = 3, context_budget: int = 1500,
                max_tokens: int = 500) -> LazyAnswer:
    """Answer ``question`` within ``budget`` relevance tests (see the module docstring). A community is tested on
    its ``chunks_per_test`` best text units that have a BM25 score above 0 and that no earlier test read (one without
    any is skipped untested) and is relevant when rated at or above ``threshold`` (0-5, as GraphRAG's dynamic
    selection); ties by (level, community). After ``deepen_after`` (the blog's z) irrelevant communities in a row
    the search deepens into the sub-communities of the relevant ones of the level (None: only when the level is
    done). The relevant text units, by BM25 score, are packed within ``context_budget`` tokens into one map call;
    its points are reduced to the answer (:data:`NO_LAZY_ANSWER` when nothing was relevant, without a call, or
    when no point was found). Each size parameter is at most its :data:`LIMITS` entry.

    >>> lazy_search("Why?", None, None, budget=0)
    Traceback (most recent call last):
    ...
    ValueError: budget must be a positive integer, got 0
    """
    string(question, "question")
    budget, chunks_per_test = _size(budget, "budget"), _size(chunks_per_test, "chunks_per_test")
    context_budget, max_tokens = _size(context_budget, "context_budget"), _size(max_tokens, "max_tokens")
    threshold = integer(threshold, "threshold", at_least=0, what="an integer in 0-5 (the rating scale)")
    if threshold > 5:  # no rating reaches it: nothing would ever be relevant, and the answer would say so
        raise ValueError(f"threshold must be an integer in 0-5 (the rating scale), got {threshold}")
    if deepen_after is not None:
        deepen_after = integer(deepen_after, "deepen_after", at_most=LIMITS["budget"],
                               limit="lazy_search.LIMITS['budget']: more misses than tests never deepen")
    if not isinstance(index, LazyIndex):
        raise TypeError(f"index must be a LazyIndex (lazy_index), got {type(index).__name__}")
    scores = dict(zip(index.doc_ids, index.bm25.scores(question).tolist()))
    out = LazyAnswer(question, "", 0)
    relevant: set[str] = set()  # the text units rated relevant
    tested: set[str] = set()  # every text unit a test has read: a community is tested on its untested ones

    def untested(key):  # a community's untested text units with a score above 0, best first
        return sorted((d for d in index.docs_of[key] if scores[d] > 0 and d not in tested),
                      key=lambda d: (-scores[d], d))

    def ranked(keys):  # best first: by the score of a community's best untested text unit, ties by (level, c)
        units = {k: untested(k) for k in keys}
        return sorted((k for k in keys if units[k]), key=lambda k: (-scores[units[k][0]], k))

    failed: list[str] = []  # the warnings of relevance tests whose call failed
    frontier, hits, misses = ranked(index.roots), [], 0
    while frontier and out.tests < budget:
        key = frontier.pop(0)
        top = untested(key)[:chunks_per_test]
        if not top:  # its text units were all read by earlier tests
            continue
        rating, warning, call_failed = _test(question, [f"[{d}] {index.doc_text[d]}" for d in top], llm)
        tested.update(top)
        failed += [warning] if call_failed else []
        out.tests += 1
        out.ratings.append((key, rating))
        out.warnings += [warning] if warning else []
        if rating >= threshold:  # at or above, as GraphRAG's dynamic selection
            relevant.update(top)
            hits.append(key)
            misses = 0
        else:
            misses += 1
        if not frontier or (hits and deepen_after is not None and misses >= deepen_after):
            # iterative deepening: after z successive misses (or the level done), the relevant communities' children
            frontier, hits, misses = ranked([c for k in hits for c in index.children[k]]), [], 0
    stop_if_all_failed("lazy search's relevance tests", len(failed), out.tests, failed[-1] if failed else "")
    out.relevant = sorted(relevant, key=lambda d: (-scores[d], d))
    if not out.relevant:
        out.text = NO_LAZY_ANSWER
        return out
    lines, _, _ = pack_lines((f"[{d}] {' '.join(index.doc_text[d].split())}" for d in out.relevant), context_budget)
    out.read = out.relevant[: max(len(lines), 1)]  # one text unit larger than the budget is read alone
    # The map step reads Report objects: each text unit stands as one, its text as the title (Report.text()).
    units = [Report(d, 0, 0, " ".join(index.doc_text[d].split()).rstrip("."), "", [], 0.0, [], [d], 0)
             for d in out.read]
    points, warnings = map_step(question, units, llm, max_tokens=max_tokens)
    out.text, more = reduce_step(question, points, llm, max_tokens=max_tokens)
    out.text = NO_LAZY_ANSWER if out.text == NO_ANSWER else _units_not_reports(out.text)
    out.warnings += warnings + more
    return out
