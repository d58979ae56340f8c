"""Local search, GraphRAG's entity-centred query mode: for a question, the entities it names (gazetteer) or
resembles (TF-IDF similarity to their descriptions), their relationships and their neighbours', the text
units that state them and their communities' reports, packed within a token budget split by configurable
proportions (GraphRAG's ``text_unit_prop`` and ``community_prop``; the rest goes to entities and
relationships), then one answer from the LLM. Reads an :class:`cookbook.index.graph_extraction.ExtractedGraph`.
Taught in notebooks/08_local_search.ipynb.

>>> from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph, Relationship
>>> from cookbook.llm import ExtractiveLLM
>>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",)),
...                     ExtractedEntity("E2", "Acme", "org", "A firm in Oslo.", ("d1", "d2"))],
...                    [Relationship("E1", "E2", "works_for", "Ada works for Acme.", 1.0, ("d1",))])
>>> idx = local_index(g, {"d1": "Ada works for Acme.", "d2": "Acme is in Oslo."}, gazetteer={"Ada": ["E1"]})
>>> local_search("Who employs Ada?", idx, ExtractiveLLM()).context.source_ids
['d1', 'd2']
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._validate import integer, number, string
from ..data.gazetteer import CompiledGazetteer, compile_gazetteer, gazetteer_mentions
from ..data.records import doc_pairs
from ..embed import TfidfVectorizer
from ..index.graph_extraction import ExtractedGraph, relationship_line
from ..index.graph_extraction import entity_line as graph_entity_line
from ..index.reports import Report
from ..llm import LLM
from ..llm.prompts import prompt
from ..llm.tokens import count_tokens, pack_lines, truncate

__all__ = ["LocalAnswer", "LocalContext", "LocalIndex", "local_context", "local_index", "local_search",
           "match_entities"]

SECTIONS = ("entities", "relationships", "sources", "reports")


@dataclass
class LocalIndex:
    """What local search reads, built once per corpus by :func:`local_index`: the ``graph``, document texts,
    community ``reports`` (one level), the compiled ``gazetteer`` (or None) and lookups derived from them.

    >>> from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph
    >>> idx = local_index(ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "", ("d1",))], []), {"d1": "Ada."})
    >>> idx.degree
    {'E1': 0}
    """

    graph: ExtractedGraph
    doc_text: dict[str, str]
    reports: list[Report]
    gazetteer: CompiledGazetteer | None
    entity: dict = field(init=False, repr=False)
    rels_of: dict = field(init=False, repr=False)
    degree: dict = field(init=False, repr=False)
    reports_of: dict = field(init=False, repr=False)

    def __post_init__(self):
        self.entity = {e.id: e for e in self.graph.entities}
        self.rels_of = {e: [] for e in self.entity}
        for i, r in enumerate(self.graph.relationships):
            for end in (r.source, r.target):
                if end not in self.entity:
                    raise ValueError(f"relationship {r.source} -> {r.target} names entity {end!r}, not in the graph")
                self.rels_of[end].append(i)
        self.degree = {e: len(rs) for e, rs in self.rels_of.items()}
        self.reports_of = {}
        for rep in self.reports:
            for m in rep.members:
                self.reports_of.setdefault(m, []).append(rep)
        unknown = sorted({d for e in self.graph.entities for d in e.doc_ids} - set(self.doc_text))
        if unknown:
            raise ValueError(f"entities cite documents not in docs: {unknown[:3]}")
        self._tfidf = TfidfVectorizer()
        try:
            self._vectors = self._tfidf.fit_transform([f"{e.name}. {e.description}" for e in self.graph.entities])
        except ValueError:  # names and descriptions of stopwords only: the gazetteer alone matches
            self._vectors = None


def local_index(graph: ExtractedGraph, docs, *, reports: Sequence[Report] = (),
                gazetteer: Mapping[str, Sequence[str]] | None = None, case_sensitive: bool = False) -> LocalIndex:
    """Index ``graph`` for local search: ``docs`` (objects with ``.id``/``.text``, ``(id, text)`` pairs or a
    dict) are the text units, ``reports`` one level of community reports, ``gazetteer`` surface → entity ids
    for matching names in questions (None: description similarity only), compared case-insensitively unless
    ``case_sensitive`` (a compiled gazetteer keeps its own setting; white space is folded either way).

    >>> from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph
    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",))], [])
    >>> local_index(g, {"d1": "Ada."}, gazetteer={"Ada": ["E1"]}).gazetteer.lookup
    {'ada': ['E1']}
    """
    if not isinstance(graph, ExtractedGraph):
        raise TypeError(f"graph must be an ExtractedGraph, got {type(graph).__name__}")
    if not graph.entities:
        raise ValueError("graph has no entities: nothing for local search to match")
    compiled = None if gazetteer is None else compile_gazetteer(gazetteer, case_sensitive=case_sensitive)
    return LocalIndex(graph, dict(doc_pairs(docs)), list(reports), compiled)


def match_entities(question: str, index: LocalIndex, *, top_k: int = 10) -> list[tuple[str, float]]:
    """The question's entities as ``(entity id, score)``, best first: every entity the gazetteer finds in the
    question (score 1, in order of appearance; matched as the index's gazetteer was compiled, case-insensitive
    unless ``local_index(..., case_sensitive=True)``), then up to ``top_k`` in all by TF-IDF cosine similarity
    of the question to ``name. description`` (positive scores only; ties by id).

    >>> from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph
    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",)),
    ...                     ExtractedEntity("E2", "Bo", "person", "A brewer of beer.", ("d1",))], [])
    >>> idx = local_index(g, {"d1": "Ada and Bo."}, gazetteer={"Ada": ["E1"]})
    >>> [(e, round(s, 2)) for e, s in match_entities("Is Ada a brewer?", idx)]
    [('E1', 1.0), ('E2', 0.41)]
    """
    string(question, "question")
    top_k = integer(top_k, "top_k")
    out: dict[str, float] = {}
    if index.gazetteer is not None:
        for m in gazetteer_mentions({"question": question}, index.gazetteer):
            if m.entity_id in index.entity:
                out.setdefault(m.entity_id, 1.0)
    if len(out) < top_k and index._vectors is not None:
        sims = (index._vectors @ index._tfidf.transform([question]).T).toarray().ravel()
        ids = [e.id for e in index.graph.entities]
        for i in sorted(np.flatnonzero(sims > 0), key=lambda i: (-round(float(sims[i]), 12), ids[i])):
            if len(out) >= top_k:
                break
            out.setdefault(ids[i], float(sims[i]))
    return list(out.items())


@dataclass
class LocalContext:
    """A question's packed context, section by section: ``entities``, ``relationships``, ``sources`` and
    ``reports`` lines (each ``[id] text``), the ids behind them, ``tokens`` per section, the ``budget`` and its
    ``shares`` (``graph``, entities and relationships together; ``sources``; ``reports``).
    Made by :func:`local_context`; ``table()`` renders what the model is sent.

    >>> ctx = LocalContext("Who?", ["[E1] Ada (person): An engineer."], [], ["[d1] Ada works."], [],
    ...                    ["E1"], [], ["d1"], [], {"entities": 9, "relationships": 0, "sources": 6, "reports": 0}, 100,
    ...                    {"graph": 40, "sources": 50, "reports": 10})
    >>> ctx.total_tokens
    15
    """

    question: str
    entities: list[str]
    relationships: list[str]
    sources: list[str]
    reports: list[str]
    entity_ids: list[str]
    relationship_ids: list[str]
    source_ids: list[str]
    report_ids: list[str]
    tokens: dict[str, int]
    budget: int
    shares: dict[str, int]

    @property
    def total_tokens(self) -> int:
        """Tokens of all sections (each line plus its newline), at most ``budget``.

        >>> LocalContext("Q?", [], [], [], [], [], [], [], [], {"sources": 7, "reports": 3}, 50, {}).total_tokens
        10
        """
        return sum(self.tokens.values())

    def table(self) -> str:
        """The context as a student reads it: one ``## SECTION (n lines, t tokens of its share)`` block per
        section; entities and relationships share the graph's share.

        >>> ctx = LocalContext("Q?", ["[E1] Ada (person): An engineer."], [], [], [], ["E1"], [], [], [],
        ...                    {"entities": 9, "relationships": 0, "sources": 0, "reports": 0}, 100,
        ...                    {"graph": 40, "sources": 50, "reports": 10})
        >>> for line in ctx.table().splitlines()[:3]:
        ...     print(line)
        ## ENTITIES (1 lines, 9 tokens of 40, shared with relationships)
        [E1] Ada (person): An engineer.
        ## RELATIONSHIPS (0 lines, 0 tokens of 40, shared with entities)
        """
        shared = {"entities": ("graph", ", shared with relationships"),
                  "relationships": ("graph", ", shared with entities")}
        out = []
        for name in SECTIONS:
            lines = getattr(self, name)
            share, note = shared.get(name, (name, ""))
            out.append(f"## {name.upper()} ({len(lines)} lines, {self.tokens.get(name, 0)} tokens of "
                       f"{self.shares[share]}{note})")
            out += lines or ["(none)"]
        return "\n".join(out)


def _line(text: str, width: int = 400) -> str:
    return " ".join(text.split())[:width]


def _pack(lines: Iterable[str], share: int, used: int = 0) -> tuple[list[str], int]:
    """:func:`cookbook.llm.tokens.pack_lines` within a section's share, which a proportion of 0 makes empty."""
    if share <= 0:
        return [], used
    kept, used, _ = pack_lines(lines, share, used)
    return kept, used


def _pack_reports(reps: Sequence[Report], share: int) -> tuple[list[str], list[str], int]:
    """Report lines within ``share`` tokens, in rank order: each report whole when it fits what is left, else its
    title and summary (GraphRAG's ``use_community_summary``), else left out and the next one tried. Packing whole
    reports only and stopping at the first that does not fit (as the other sections do) left the section empty
    whenever the first report was longer than the share: the Factbook's reports mostly are.

    >>> from cookbook.index.reports import Finding
    >>> r = Report("R0-1", 0, 1, "Acme", "Ada founded Acme.", [Finding("Bo mines coal in the north and sells it.",
    ...            "", ("d2",))], 4.0, ["E1"], ["d1"], 30)
    >>> _pack_reports([r], 30)[0]
    ['[R0-1] Acme. Ada founded Acme. Bo mines coal in the north and sells it.']
    >>> _pack_reports([r], 12)[0], _pack_reports([r], 5)  # the summary alone fits; nothing fits
    (['[R0-1] Acme. Ada founded Acme.'], ([], [], 0))
    """
    lines, ids, used = [], [], 0
    for r in reps:
        for text in (r.text(), f"{r.title}. {r.summary}"):
            line = f"[{r.id}] {_line(text, 2000)}"
            cost = count_tokens(line) + 1
            if used + cost <= share:
                lines.append(line)
                ids.append(r.id)
                used += cost
                break
    return lines, ids, used


def local_context(question: str, index: LocalIndex, *, budget: int = 1500, text_unit_prop: float = 0.5,
                  community_prop: float = 0.1, top_k_entities: int = 10, top_k_relationships: int = 10
                  ) -> LocalContext:
    """Build and pack the local-search context of ``question`` within ``budget`` tokens.

    Entities: :func:`match_entities`, then the neighbours their relationships reach. Relationships, ranked as
    GraphRAG ranks them: between matched entities first, then from a matched entity outwards (neighbours
    linked to more distinct matched entities first), then the neighbours' own; within each by weight, then the other
    end's degree, ties by ids; at most ``top_k_relationships`` per matched entity. Sources: documents of the
    context's entities, by how many matched entities and selected relationships they support, ties by id.
    Reports: those whose members include matched entities, by how many, then rating, then id, each whole or as
    its title and summary when only that fits (:func:`_pack_reports`).
    Each section is packed within its share: ``text_unit_prop`` of the budget for sources,
    ``community_prop`` for reports, the rest for entities and relationships (matched entities, then
    relationships, then neighbours).

    >>> from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph, Relationship
    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "", ("d1",)),
    ...                     ExtractedEntity("E2", "Acme", "org", "", ("d1",))],
    ...                    [Relationship("E1", "E2", "works_for", "Ada works for Acme.", 1.0, ("d1",))])
    >>> idx = local_index(g, {"d1": "Ada works for Acme."}, gazetteer={"Ada": ["E1"]})
    >>> ctx = local_context("Where does Ada work?", idx)
    >>> ctx.relationships
    ['[r0] Ada -> Acme (works_for, weight 1): Ada works for Acme.']
    """
    budget = integer(budget, "budget", at_least=20, what="an integer >= 20 tokens")
    text_unit_prop = number(text_unit_prop, "text_unit_prop", low=0, high=1)
    community_prop = number(community_prop, "community_prop", low=0, high=1)
    if text_unit_prop + community_prop > 1:
        raise ValueError(f"text_unit_prop + community_prop must be <= 1, got {text_unit_prop} + {community_prop}")
    top_k_relationships = integer(top_k_relationships, "top_k_relationships")
    rank = {e: i for i, (e, _) in enumerate(match_entities(question, index, top_k=top_k_entities))}
    chosen, neighbours = _rank_relationships(index, rank, top_k_relationships)
    rels = index.graph.relationships

    names = {e: x.name for e, x in index.entity.items()}

    def entity_line(e):
        return graph_entity_line(index.entity[e], index.degree[e])

    def rel_line(i):
        return relationship_line(i, rels[i], names)

    # Sources: the documents of the context's entities, by support.
    support = Counter(d for e in rank for d in index.entity[e].doc_ids)
    support.update(d for i in chosen for d in rels[i].doc_ids)
    for e in neighbours:
        for d in index.entity[e].doc_ids:
            support.setdefault(d, 0)
    docs = sorted((d for d in support if d in index.doc_text), key=lambda d: (-support[d], d))
    hits: dict[str, list] = {}
    for e in rank:
        for rep in index.reports_of.get(e, []):
            hits.setdefault(rep.id, [0, rep])[0] += 1
    reps = [rep for _, rep in sorted(hits.values(), key=lambda h: (-h[0], -h[1].rating, h[1].id))]

    src_budget, rep_budget = int(budget * text_unit_prop), int(budget * community_prop)
    graph_budget = budget - src_budget - rep_budget
    # Generators: packing stops at the first line that does not fit, so the rest are never formatted.
    ent_lines, after_ents = _pack((entity_line(e) for e in rank), graph_budget)
    rel_lines, after_rels = _pack((rel_line(i) for i in chosen), graph_budget, after_ents)
    nb_lines, used = _pack((entity_line(e) for e in neighbours), graph_budget, after_rels)
    rel_used = after_rels - after_ents
    src_lines, src_used = _pack((f"[{d}] {_line(index.doc_text[d], 2000)}" for d in docs), src_budget)
    rep_lines, rep_ids, rep_used = _pack_reports(reps, rep_budget)
    return LocalContext(
        question, ent_lines + nb_lines, rel_lines, src_lines, rep_lines,
        list(rank)[: len(ent_lines)] + neighbours[: len(nb_lines)],
        [f"r{i}" for i in chosen[: len(rel_lines)]], docs[: len(src_lines)], rep_ids,
        {"entities": used - rel_used, "relationships": rel_used, "sources": src_used, "reports": rep_used}, budget,
        {"graph": graph_budget, "sources": src_budget, "reports": rep_budget})


def _rank_relationships(index: LocalIndex, rank: dict[str, int], top_k: int) -> tuple[list[int], list[str]]:
    """The relationships of the matched entities ``rank`` in GraphRAG's order (:func:`local_context`), at most
    ``top_k`` per matched entity, and the neighbours they reach in that order. A neighbour's ring is the
    number of *distinct* matched entities it is linked to, as GraphRAG counts it: two relationships to one
    matched entity do not outrank one to each of two."""
    rels = index.graph.relationships

    def other(i, e):
        return rels[i].target if rels[i].source == e else rels[i].source

    links: dict[str, set[str]] = {}  # neighbour -> the matched entities it has relationships with
    inside, outward = set(), set()
    for e in rank:
        for i in index.rels_of[e]:
            if other(i, e) in rank:
                inside.add(i)
            else:
                outward.add(i)
                links.setdefault(other(i, e), set()).add(e)

    def key(i, rings):
        r = rels[i]
        far = max(index.degree[r.source], index.degree[r.target])
        return (*rings, -r.weight, -far, r.source, r.target, i)

    def ring(i):
        return key(i, (-max(len(links.get(rels[i].source, ())), len(links.get(rels[i].target, ()))),))

    # Only the first `limit` are kept: each later ring is ranked only as far as the room the earlier ones leave
    # (heapq.nsmallest is sorted(...)[:n]), and never built when there is none; a hub's neighbours' own
    # relationships run to thousands.
    limit = top_k * max(1, len(rank))
    chosen = sorted(inside, key=lambda i: key(i, ()))[:limit]
    chosen += heapq.nsmallest(limit - len(chosen), outward, key=ring)
    if len(chosen) < limit:
        third = {i for n in links for i in index.rels_of[n]} - inside - outward
        chosen += heapq.nsmallest(limit - len(chosen), third, key=ring)
    neighbours = []
    for i in chosen:
        for end in (rels[i].source, rels[i].target):
            if end not in rank and end not in neighbours:
                neighbours.append(end)
    return chosen, neighbours


@dataclass
class LocalAnswer:
    """What :func:`local_search` returns: the answer ``text`` and the :class:`LocalContext` it was given.

    >>> LocalAnswer("Who?", "Ada. [d1]", None).text
    'Ada. [d1]'
    """

    question: str
    text: str
    context: LocalContext | None


def local_search(question: str, index: LocalIndex, llm: LLM, *, budget: int = 1500, text_unit_prop: float = 0.5,
                 community_prop: float = 0.1, top_k_entities: int = 10, top_k_relationships: int = 10,
                 max_tokens: int = 500) -> LocalAnswer:
    """Answer ``question`` from its :func:`local_context` in one ``local_search`` call of ``llm`` (wrap it in a
    :class:`cookbook.llm.ledger.TokenLedger` to count what it costs); output past ``max_tokens`` is cut there.

    >>> from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph
    >>> from cookbook.llm import ExtractiveLLM
    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "An engineer.", ("d1",))], [])
    >>> idx = local_index(g, {"d1": "Ada builds bridges."}, gazetteer={"Ada": ["E1"]})
    >>> ans = local_search("What does Ada build?", idx, ExtractiveLLM())
    >>> ans.text, ans.context.source_ids
    ('Ada builds bridges. [d1] Ada (person, degree 0): An engineer. [E1]', ['d1'])
    """
    string(question, "question")
    max_tokens = integer(max_tokens, "max_tokens")
    ctx = local_context(question, index, budget=budget, text_unit_prop=text_unit_prop, community_prop=community_prop,
                        top_k_entities=top_k_entities, top_k_relationships=top_k_relationships)
    p = prompt("local_search", question=question, entities=ctx.entities, relationships=ctx.relationships,
               sources=ctx.sources, reports=ctx.reports)
    text, _ = truncate(llm.complete(p, max_tokens=max_tokens) or "", max_tokens)
    return LocalAnswer(question, text, ctx)

