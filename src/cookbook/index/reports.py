"""Community reports: one structured summary per community, at every level of the hierarchy, in Microsoft
GraphRAG's schema (title, summary, rating, rating explanation, findings citing ``[Data: Entities (...);
Relationships (...)]``).

Two contexts, GraphRAG's two indexing methods. From an extracted graph (:func:`graph_reports`, the standard
method): an ENTITIES table (id, name, type, degree, description) by degree and a RELATIONSHIPS table of the
relationships between members (source, target, type, weight, description) by combined degree, packed into a
token budget — the reports say what the graph's descriptions say. From a co-occurrence graph
(:func:`community_reports`, GraphRAG's no-LLM "FastGraphRAG" method, whose graph has no descriptions): the
community's highest-degree members, its strongest internal edges and the text units that mention its members
(most members first). When a
community's raw context does not fit and it has sub-communities, their reports are substituted for
the raw documents (as microsoft/graphrag does for higher levels), so big communities are summarised
from summaries instead of from a truncated sample. The reports of one level are independent, so their
LLM calls run concurrently (:func:`cookbook.llm.concurrency.ordered_map`); levels run in order, finest first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._validate import integer, string
from ..data.records import Mention
from ..llm import LLM, LLMUnavailable, concurrency_of, ordered_map, redact
from ..llm.base import stop_if_all_failed
from ..llm.json_answers import parse_json
from ..llm.prompts import prompt
from ..llm.tokens import count_tokens, pack_lines, truncate
from .graph import EntityGraph
from .graph_extraction import ExtractedGraph, degrees, entity_line, relationship_line
from .hierarchy import Hierarchy

__all__ = ["Context", "Finding", "Report", "community_context", "community_reports", "data_references", "graph_context",
           "graph_reports"]


@dataclass(frozen=True)
class Finding:
    """One finding of a report: a ``summary`` sentence, its ``explanation`` and the ``sources`` it cites.

    >>> Finding("Acme mines coal.", "Stated in source d1.", ("d1",)).sources
    ('d1',)
    """

    summary: str
    explanation: str
    sources: tuple[str, ...]


@dataclass
class Report:
    """``id`` is ``"R<level>-<community>"``; ``sources`` the ids the context offered (document ids, or
    sub-report ids when ``substituted``); ``tokens`` the context's size. Made by :func:`community_reports`;
    taught in notebooks/04_community_reports.ipynb.

    >>> r = Report("R0-1", 0, 1, "Acme", "Ada founded Acme.", [], 4.0, ["E1"], ["d1"], 30)
    >>> r.id, r.substituted, r.children
    ('R0-1', False, [])
    """

    id: str
    level: int
    community: int
    title: str
    summary: str
    findings: list[Finding]
    rating: float
    members: list[str]
    sources: list[str]
    tokens: int
    substituted: bool = False
    children: list[str] = field(default_factory=list)
    warning: str = ""
    rating_explanation: str = ""

    def text(self) -> str:
        """One line for map prompts: title, summary, findings. Taught in notebooks/05_map_reduce_answering.ipynb.

        >>> Report("R0-1", 0, 1, "Acme", "Ada founded Acme.", [Finding("Bo mines coal.", "", ("d2",))], 4.0,
        ...        ["E1"], ["d1", "d2"], 30).text()
        'Acme. Ada founded Acme. Bo mines coal.'
        """
        parts = [self.title + ".", self.summary] + [f.summary for f in self.findings]
        return " ".join(p for p in parts if p)


@dataclass
class Context:
    """A community's packed context: the ``entities``, ``relationships`` and ``sources`` lines that fitted
    the budget, the ``source_ids`` behind those sources, its size in ``tokens``, and whether every
    candidate line fitted (``complete``). Built by :func:`community_context`; taught in
    notebooks/04_community_reports.ipynb.

    >>> Context(["e1 | Ada | degree 2"], [], ["[d1] Ada founded Acme."], ["d1"], 14, True).complete
    True
    """

    entities: list[str]
    relationships: list[str]
    sources: list[str]
    source_ids: list[str]
    tokens: int
    complete: bool  # every candidate line fitted
    section: str = "sources"  # the prompt section the ``sources`` lines go into ("reports": sub-reports)


def community_context(members: Sequence[int], graph: EntityGraph, docs_of: dict[str, list[str]],
                      doc_text: dict[str, str], budget: int, *, max_entities: int = 12,
                      max_relationships: int = 12) -> Context:
    """Pack a community's context within ``budget`` tokens, in this order: members by weighted degree,
    strongest internal edges, then the documents mentioning members (most distinct members first,
    then id). ``complete`` is True when every one of them fitted. Taught in notebooks/04_community_reports.ipynb.

    >>> A = sp.csr_matrix(np.array([[0, 3, 1], [3, 0, 0], [1, 0, 0]]))
    >>> g = EntityGraph(["E1", "E2", "E3"], ["Ada", "Bo", "Cy"], A, A)
    >>> docs_of = {"E1": ["d1", "d2"], "E2": ["d1"], "E3": ["d2"]}
    >>> text = {"d1": "Ada hired Bo.", "d2": "Cy met Ada."}
    >>> ctx = community_context([0, 1], g, docs_of, text, budget=200)
    >>> ctx.entities, ctx.relationships, ctx.sources, ctx.complete
    (['E1 | Ada | degree 4', 'E2 | Bo | degree 3'], ['Ada -- Bo | 3'], ['[d1] Ada hired Bo.', '[d2] Cy met Ada.'], True)
    """
    integer(budget, "budget", what="a positive number of tokens")
    members = np.asarray(members, dtype=int)
    A = sp.csr_matrix(graph.adjacency)
    deg = np.asarray(A[members].sum(axis=1)).ravel()
    order = members[np.lexsort((members, -deg))]
    ent_all = [f"{graph.ids[i]} | {graph.names[i]} | degree {deg[list(members).index(i)]:g}"
               for i in order[:max_entities]]
    sub = sp.triu(A[members][:, members], k=1).tocoo()
    edges = sorted(zip(sub.data, members[sub.row], members[sub.col]), key=lambda e: (-e[0], e[1], e[2]))
    rel_all = [f"{graph.names[a]} -- {graph.names[b]} | {w:g}" for w, a, b in edges[:max_relationships]]
    counts: dict[str, int] = {}
    for i in members:
        for d in docs_of.get(graph.ids[i], []):
            counts[d] = counts.get(d, 0) + 1
    doc_order = sorted(counts, key=lambda d: (-counts[d], d))
    ent_lines, used, ok1 = pack_lines(ent_all, budget, 0)
    rel_lines, used, ok2 = pack_lines(rel_all, budget, used)
    src_lines, used, ok3 = pack_lines((f"[{d}] {doc_text[d]}" for d in doc_order), budget, used)
    return Context(ent_lines, rel_lines, src_lines, doc_order[: len(src_lines)], used, ok1 and ok2 and ok3)


_DATA_REF = re.compile(r"\[Data:([^\]]*)\]")
_DATA_IDS = re.compile(r"\(([^)]*)\)")


def data_references(text: str) -> list[str]:
    """The record ids a GraphRAG citation names, in order, each once: ``[Data: Entities (E1, E2); Relationships
    (r7, +more)]`` → ``['E1', 'E2', 'r7']`` (``+more`` is not an id).

    >>> data_references("Ada leads [Data: Entities (E1, E2); Relationships (r7, +more)]. [Data: Sources (d3)]")
    ['E1', 'E2', 'r7', 'd3']
    """
    string(text, "text")
    out: list[str] = []
    for ref in _DATA_REF.findall(text):
        for group in _DATA_IDS.findall(ref):
            out += [x.strip() for x in group.split(",") if x.strip() and x.strip() != "+more" and x.strip() not in out]
    return out


def _findings(value) -> list[Finding]:
    """A report answer's findings: objects (``summary``, ``explanation``, and the ids they cite: ``sources``
    as a list of ids or one id, else GraphRAG's ``[Data: ...]`` references in the explanation) or plain strings,
    each a summary alone; anything else is skipped."""
    if not isinstance(value, list):
        return []
    out = []
    for f in value:
        if isinstance(f, str) and f.strip():
            out.append(Finding(f.strip(), "", tuple(data_references(f))))
        elif isinstance(f, dict):
            sources = f.get("sources", [])
            sources = [sources] if isinstance(sources, str) else sources if isinstance(sources, list) else []
            explanation = str(f.get("explanation", ""))
            cited = [str(x) for x in sources] or data_references(explanation)
            out.append(Finding(str(f.get("summary", "")), explanation, tuple(cited)))
    return out


def _report_from(llm: LLM, rid, level, community, members, ctx: Context, *, max_tokens, substituted, children):
    sections = {"entities": ctx.entities, "relationships": ctx.relationships}
    if ctx.sources:
        sections[ctx.section] = ctx.sources
    p = prompt("community_report", **sections)
    warning, explanation, failed = "", "", None
    try:
        try:
            raw = llm.complete(p, max_tokens=max_tokens)
        except LLMUnavailable:
            raise
        except Exception as e:  # the call failed (counted by the caller), not the answer
            failed = redact(f"{type(e).__name__}: {e}")
            raise
        raw, cut = truncate(raw or "", max_tokens)
        warning = f"output longer than max_tokens={max_tokens}, cut there" if cut else ""
        obj = parse_json(raw)
        findings = _findings(obj.get("findings"))
        title, summary = str(obj.get("title", "")), str(obj.get("summary", ""))
        rating = float(np.clip(float(obj.get("rating", 0.0)), 0, 10))
        explanation = str(obj.get("rating_explanation", ""))
    except LLMUnavailable:  # no report can be written: stop rather than fill the hierarchy with empty ones
        raise
    except Exception as e:  # malformed output or a backend that gave up: keep going with an empty report
        title, summary, findings, rating = f"Community {rid}", "", [], 0.0
        warning = redact(f"report failed: {type(e).__name__}: {e}")
    return Report(rid, level, community, title, summary, findings, rating, members, ctx.source_ids, ctx.tokens,
                  substituted, children, warning, explanation), failed


def _level_reports(hierarchy: Hierarchy, ids: Sequence[str], context_of: Callable[[np.ndarray], Context],
                   llm: LLM, *, budget: int, max_tokens: int, concurrency: int | None, sub_section: str
                   ) -> dict[int, list[Report]]:
    """Reports of every community of ``hierarchy`` (nodes named ``ids``), finest level first, each from
    ``context_of(member indices)``; a community whose context does not fit and that has sub-communities is
    written from their summaries instead (in the prompt section ``sub_section``)."""
    width = concurrency_of(llm, concurrency)
    out: dict[int, list[Report]] = {}
    failed: list[str] = []  # the causes of the calls that failed, over all levels
    calls = 0
    n_levels = len(hierarchy.levels)
    for level in range(n_levels - 1, -1, -1):
        membership = hierarchy.levels[level]
        jobs = []  # one _report_from call per community: contexts here, LLM calls below, concurrently
        for c in range(membership.max() + 1):
            members = np.flatnonzero(membership == c)
            ctx = context_of(members)
            children = []
            if level + 1 < n_levels:
                children = [r for r in out[level + 1] if hierarchy.parents[level + 1][r.community] == c]
            substituted = not ctx.complete and len(children) > 1
            if substituted:
                kids = sorted(children, key=lambda r: (-len(r.members), r.id))
                # Summaries only: a title is a label, not evidence a summary may quote.
                head = sum(count_tokens(x) + 1 for x in ctx.entities + ctx.relationships)
                lines, used, _ = pack_lines((f"[{r.id}] {r.summary}" for r in kids), budget, head)
                ctx = Context(ctx.entities, ctx.relationships, lines, [r.id for r in kids[: len(lines)]], used,
                              len(lines) == len(kids), sub_section)
                children = kids
            jobs.append({"rid": f"R{level}-{c}", "level": level, "community": c, "members": [ids[i] for i in members],
                         "ctx": ctx, "substituted": substituted, "children": [r.id for r in children]})
        written = ordered_map(lambda job: _report_from(llm, max_tokens=max_tokens, **job), jobs, concurrency=width,
                              desc=f"reports, level {level}")
        out[level] = [r for r, _ in written]
        failed += [cause for _, cause in written if cause is not None]
        calls += len(written)
    stop_if_all_failed(f"community reports ({calls} report(s))", len(failed), calls, failed[-1] if failed else "")
    return dict(sorted(out.items()))


def community_reports(hierarchy: Hierarchy, graph: EntityGraph, docs, mentions: Sequence[Mention], llm: LLM, *,
                      budget: int = 1500, max_tokens: int = 600, concurrency: int | None = None
                      ) -> dict[int, list[Report]]:
    """Reports for every community at every level of ``hierarchy`` (from
    :func:`cookbook.index.hierarchy.hierarchical_leiden` on ``graph``, an :class:`cookbook.index.graph.EntityGraph`).

    Levels are processed from the finest up; a community whose raw context exceeds ``budget`` tokens and
    that has sub-communities is summarised from its sub-communities' reports instead. Returns
    ``{level: [Report, ...]}`` in community order. A level's reports are written ``concurrency`` at a
    time (None: the backend's own, see :func:`cookbook.llm.concurrency.concurrency_of`). A report whose
    call fails (a transient fault after the backend's retries) or whose answer is malformed is left empty,
    with a ``warning`` (secrets redacted); :class:`~cookbook.llm.base.LLMUnavailable` — an endpoint that cannot
    be used, calls failing one after another included, or every report's call failing — stops them all. Taught in
    notebooks/04_community_reports.ipynb.

    >>> from cookbook.llm import ExtractiveLLM
    >>> A = sp.csr_matrix(np.array([[0, 2, 1], [2, 0, 0], [1, 0, 0]]))
    >>> g = EntityGraph(["E1", "E2", "E3"], ["Ada", "Bo", "Cy"], A, A)
    >>> docs = {"d1": "Ada founded Acme. Bo joined Acme.", "d2": "Cy sells coal to Ada."}
    >>> mentions = [Mention(d, docs[d].index(name), docs[d].index(name) + len(name), e, name)
    ...             for d, e, name in [("d1", "E1", "Ada"), ("d1", "E2", "Bo"), ("d2", "E3", "Cy")]]
    >>> one_level = Hierarchy([np.zeros(3, dtype=int)], [np.array([-1])], max_cluster_size=10)
    >>> r = community_reports(one_level, g, docs, mentions, ExtractiveLLM())[0][0]
    >>> r.id, r.title, r.members, r.sources
    ('R0-0', 'Ada and Bo', ['E1', 'E2', 'E3'], ['d1', 'd2'])
    """
    integer(budget, "budget", at_least=50, what="an integer >= 50 tokens")
    concurrency_of(llm, concurrency)  # a bad width is refused before any work
    docs_sets: dict[str, set[str]] = {}
    for m in mentions:
        docs_sets.setdefault(m.entity_id, set()).add(m.doc_id)
    docs_of = {e: sorted(ds) for e, ds in docs_sets.items()}
    doc_text = {d.id: d.text for d in docs} if not isinstance(docs, dict) else dict(docs)
    return _level_reports(hierarchy, graph.ids, lambda members: community_context(members, graph, docs_of, doc_text,
                                                                                  budget),
                          llm, budget=budget, max_tokens=max_tokens, concurrency=concurrency, sub_section="sources")


def graph_context(members: Sequence[str], extracted: ExtractedGraph, budget: int, *,
                  degree: dict[str, int] | None = None, rels_of: dict[str, list[int]] | None = None) -> Context:
    """GraphRAG's community context from an extracted graph, within ``budget`` tokens: member by member in
    descending degree (ties by id), the member's ENTITIES row, then its relationships with other members not
    yet listed, by combined degree of their ends (GraphRAG's rank), then weight, then position — until the
    next row does not fit. ``source_ids`` are the entity ids and ``r<i>`` relationship ids that fitted;
    ``complete`` says whether all did. ``degree`` (:func:`~cookbook.index.graph_extraction.degrees`) and
    ``rels_of`` (entity id → positions of its relationships) may be passed when many communities share a graph.
    Taught in notebooks/04_community_reports.ipynb.

    >>> from cookbook.index.graph_extraction import ExtractedEntity, Relationship
    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",)),
    ...                     ExtractedEntity("E2", "Acme", "org", "A firm.", ("d1",))],
    ...                    [Relationship("E1", "E2", "works_for", "Ada works for Acme.", 9.0, ("d1",))])
    >>> ctx = graph_context(["E1", "E2"], g, budget=200)
    >>> ctx.entities, ctx.relationships, ctx.source_ids
    (['[E1] Ada (person, degree 1): An engineer.', '[E2] Acme (org, degree 1): A firm.'], \
['[r0] Ada -> Acme (works_for, weight 9): Ada works for Acme.'], ['E1', 'r0', 'E2'])
    """
    integer(budget, "budget", what="a positive number of tokens")
    degree = degree if degree is not None else degrees(extracted)
    if rels_of is None:
        rels_of = {}
        for i, r in enumerate(extracted.relationships):
            rels_of.setdefault(r.source, []).append(i)
            rels_of.setdefault(r.target, []).append(i)
    entity = {e.id: e for e in extracted.entities}
    unknown = [m for m in members if m not in entity]
    if unknown:
        raise ValueError(f"community member {unknown[0]!r} is not an entity of the extracted graph")
    names = {e: entity[e].name for e in members}
    inside, rels = set(members), extracted.relationships
    rows: list[tuple[str, str, str]] = []  # (table, record id, line), in the order they are packed
    listed: set[int] = set()
    for e in sorted(members, key=lambda e: (-degree[e], e)):
        rows.append(("entities", e, entity_line(entity[e], degree[e])))
        mine = [i for i in rels_of.get(e, ()) if i not in listed and rels[i].source in inside
                and rels[i].target in inside]
        mine.sort(key=lambda i: (-(degree[rels[i].source] + degree[rels[i].target]), -rels[i].weight, i))
        listed.update(mine)
        rows += [("relationships", f"r{i}", relationship_line(i, rels[i], names)) for i in mine]
    lines, used, complete = pack_lines((line for _, _, line in rows), budget, 0)
    kept = rows[: len(lines)]
    return Context([x for t, _, x in kept if t == "entities"], [x for t, _, x in kept if t == "relationships"], [],
                   [rid for _, rid, _ in kept], used, complete, "reports")


def graph_reports(hierarchy: Hierarchy, extracted: ExtractedGraph, llm: LLM, *, budget: int = 1500,
                  max_tokens: int = 600, concurrency: int | None = None) -> dict[int, list[Report]]:
    """Reports for every community of ``hierarchy`` (from :func:`~cookbook.index.hierarchy.hierarchical_leiden`
    on :func:`~cookbook.index.graph_extraction.to_entity_graph` of ``extracted``, whose node order it shares),
    each written from its :func:`graph_context` — GraphRAG's standard method. A community whose tables do not
    fit ``budget`` and that has sub-communities is written from their reports (a REPORTS section) instead.
    Returns ``{level: [Report, ...]}`` in community order, as :func:`community_reports` does.

    >>> from cookbook.index.graph_extraction import ExtractedEntity, Relationship
    >>> from cookbook.llm import ExtractiveLLM
    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",)),
    ...                     ExtractedEntity("E2", "Acme", "org", "A firm.", ("d1",))],
    ...                    [Relationship("E1", "E2", "works_for", "Ada works for Acme.", 9.0, ("d1",))])
    >>> one_level = Hierarchy([np.zeros(2, dtype=int)], [np.array([-1])], max_cluster_size=10)
    >>> r = graph_reports(one_level, g, ExtractiveLLM())[0][0]
    >>> r.title, r.findings[0].summary, r.findings[0].sources
    ('Ada and Acme', 'Ada works for Acme.', ('E1', 'E2', 'r0'))
    """
    integer(budget, "budget", at_least=50, what="an integer >= 50 tokens")
    concurrency_of(llm, concurrency)  # a bad width is refused before any work
    if not isinstance(extracted, ExtractedGraph):
        raise TypeError(f"extracted must be an ExtractedGraph, got {type(extracted).__name__}")
    ids = [e.id for e in extracted.entities]
    if len(hierarchy.levels[0]) != len(ids):
        raise ValueError(f"the hierarchy has {len(hierarchy.levels[0])} nodes but the extracted graph {len(ids)} "
                         "entities: cluster to_entity_graph(extracted)")
    degree = degrees(extracted)
    rels_of: dict[str, list[int]] = {}
    for i, r in enumerate(extracted.relationships):
        rels_of.setdefault(r.source, []).append(i)
        rels_of.setdefault(r.target, []).append(i)
    return _level_reports(hierarchy, ids, lambda members: graph_context([ids[i] for i in members], extracted, budget,
                                                                         degree=degree, rels_of=rels_of),
                          llm, budget=budget, max_tokens=max_tokens, concurrency=concurrency, sub_section="reports")
