"""What a real model wrote, in the series' own index types: a GraphRAG index's tables
(:class:`~cookbook.data.graphrag_index.GraphRAGIndex`, any user's or the Dulce recording) as an
:class:`~cookbook.index.graph_extraction.ExtractedGraph`, a :class:`~cookbook.index.hierarchy.Hierarchy` and
:class:`~cookbook.index.reports.Report` s; and nano-graphrag's recorded answers (A Christmas Carol) read by the
series' own parser (:func:`~cookbook.llm.parse.parse_extraction`, :func:`~cookbook.llm.json_answers.parse_json`).
Taught in notebooks/02_graph_extraction.ipynb, 03, 04, 05 and 08.

Ids: a GraphRAG entity is ``E<human_readable_id>`` (``E004``: what ``[Data: Entities (4)]`` cites) and its
relationships keep GraphRAG's order, so the series' ``r<position>`` is GraphRAG's ``Relationships (<id>)``.

>>> from cookbook.data.recorded import load_recorded
>>> g = graph_of_index(load_recorded("dulce").index)
>>> len(g.entities), len(g.relationships), g.entities[4].name
(41, 107, 'PARANORMAL MILITARY SQUAD')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .._validate import integer, string
from ..data.graphrag_index import GraphRAGIndex
from ..data.recorded import RecordedCorpus
from ..llm.json_answers import parse_json
from ..llm.parse import EntityRecord, RelationshipRecord, name_key, parse_extraction
from ..llm.tokens import count_tokens
from .graph_extraction import ExtractedEntity, ExtractedGraph, Relationship
from .hierarchy import Hierarchy
from .reports import Finding, Report

__all__ = ["IndexCommunities", "Recovery", "citations", "communities_of_index", "count_written", "entity_id",
           "graph_of_index", "recorded_extraction", "recorded_reports", "reports_of_index"]


def entity_id(human_readable_id: int) -> str:
    """The series' id of GraphRAG entity ``human_readable_id`` (an integer ``>= 0``).

    >>> entity_id(4)
    'E004'
    """
    return f"E{integer(human_readable_id, 'human_readable_id', at_least=0):03d}"


def _check_index(index) -> GraphRAGIndex:
    if not isinstance(index, GraphRAGIndex):
        raise TypeError(f"index must be a GraphRAGIndex (read_graphrag_index or load_recorded('dulce').index), "
                        f"got {type(index).__name__}")
    return index


_REF = re.compile(r"\[Data:([^\]]*)\]")
_TABLE = re.compile(r"([A-Za-z ]+?)\s*\(([^)]*)\)")


def citations(text: str) -> dict[str, list[str]]:
    """The ids a GraphRAG report cites, per table, in order, each once: ``[Data: Entities (4, 7); Relationships
    (6, +more)]`` → ``{"entities": ["4", "7"], "relationships": ["6"]}`` (``+more`` is not an id).

    >>> citations("Squad [Data: Entities (4); Relationships (6, 79, +more)]. Base [Data: Entities (29, 4)]")
    {'entities': ['4', '29'], 'relationships': ['6', '79']}
    """
    string(text, "text")
    out: dict[str, list[str]] = {}
    for ref in _REF.findall(text):
        for table, ids in _TABLE.findall(ref):
            got = out.setdefault(table.strip().lower(), [])
            got += [x for x in (i.strip() for i in ids.split(",")) if x and x != "+more" and x not in got]
    return out


def graph_of_index(index: GraphRAGIndex) -> ExtractedGraph:
    """GraphRAG's entities and relationships as an :class:`ExtractedGraph`: entities by human-readable id
    (:func:`entity_id`), types lower-cased, descriptions as the model summarised them, ``doc_ids`` their text units;
    relationships in GraphRAG's order, no predicate (GraphRAG extracts none), GraphRAG's summed weight. An endpoint
    with no entity row (GraphRAG's example index has two) is an entity of type ``""``, ``name:<name>``.

    >>> from cookbook.data.recorded import load_recorded
    >>> r = graph_of_index(load_recorded("dulce").index).relationships[0]
    >>> r.source, r.target, r.weight
    ('E000', 'E004', 17.0)
    """
    _check_index(index)
    by_title = {e.title: entity_id(e.human_readable_id) for e in index.entities}
    ents = [ExtractedEntity(by_title[e.title], e.title, e.type.lower(), e.description, tuple(sorted(e.text_unit_ids)))
            for e in index.entities]
    for t in sorted({t for r in index.relationships for t in (r.source, r.target)} - set(by_title)):
        by_title[t] = f"name:{name_key(t)}"  # an endpoint GraphRAG kept no entity row for, as merge_records does
        units = sorted({u for r in index.relationships if t in (r.source, r.target) for u in r.text_unit_ids})
        ents.append(ExtractedEntity(by_title[t], t, "", "", tuple(units)))
    ents.sort(key=lambda e: e.id)
    rels = [Relationship(by_title[r.source], by_title[r.target], "", r.description, float(r.weight),
                         tuple(sorted(r.text_unit_ids)))
            for r in sorted(index.relationships, key=lambda r: r.human_readable_id)]
    return ExtractedGraph(ents, rels)


@dataclass
class IndexCommunities:
    """GraphRAG's communities as a series :class:`Hierarchy` over ``graph``'s entity order: ``numbers[l][c]`` is
    the GraphRAG community whose members level-``l`` community ``c`` holds (a community GraphRAG did not split
    is carried down to the next level, as the series' hierarchy does).

    >>> from cookbook.data.recorded import load_recorded
    >>> idx = load_recorded("dulce").index
    >>> hc = communities_of_index(idx, graph_of_index(idx))
    >>> [len(level) for level in hc.numbers], hc.numbers[1][:4]
    ([9, 11], [7, 8, 9, 1])
    """

    hierarchy: Hierarchy
    numbers: list[list[int]]


def communities_of_index(index: GraphRAGIndex, graph: ExtractedGraph) -> IndexCommunities:
    """GraphRAG's community hierarchy on ``graph`` (:func:`graph_of_index` of ``index``); an entity no level-0
    community holds (GraphRAG leaves isolated ones out) becomes a community of its own, numbered -1.

    >>> from cookbook.data.recorded import load_recorded
    >>> idx = load_recorded("dulce").index
    >>> h = communities_of_index(idx, graph_of_index(idx)).hierarchy
    >>> len(h.levels), h.sizes(0).tolist()[:7]
    (2, [10, 5, 2, 9, 6, 4, 3])
    """
    if not _check_index(index).communities:
        raise ValueError("the index has no communities table")
    if not isinstance(graph, ExtractedGraph):
        raise TypeError(f"graph must be an ExtractedGraph (graph_of_index), got {type(graph).__name__}")
    pos = {e.id: i for i, e in enumerate(graph.entities)}
    of_uuid = {e.id: entity_id(e.human_readable_id) for e in index.entities}
    comm = {c.community: c for c in index.communities}
    level0 = sorted(c.community for c in index.communities if c.level == 0)
    members = {n: [pos[of_uuid[u]] for u in comm[n].entity_ids] for n in comm}
    numbers = [list(level0)]
    loose = sorted(set(range(len(pos))) - {i for n in level0 for i in members[n]})
    membership = np.full(len(pos), -1)
    for c, n in enumerate(level0):
        membership[members[n]] = c
    for k, i in enumerate(loose):
        membership[i] = len(level0) + k
        numbers[0].append(-1)
    levels, parents = [membership], [np.full(len(numbers[0]), -1)]
    while True:
        below, parent, nums = np.full(len(pos), -1), [], []
        split = False
        for c, n in enumerate(numbers[-1]):
            kids = sorted(comm[n].children) if n >= 0 else []
            split |= bool(kids)
            for k in kids or [n]:
                rows = members[k] if k >= 0 else np.flatnonzero(levels[-1] == c)
                below[rows] = len(nums)
                parent.append(c)
                nums.append(k)
        if not split:
            break
        if len(numbers) > len(comm):  # every level holds a community more than the last: a cycle of children
            raise ValueError("a community is among its own descendants: not a hierarchy")
        if (below < 0).any():
            raise ValueError("a community's children do not cover its members: not a hierarchy")
        levels.append(below)
        parents.append(np.asarray(parent))
        numbers.append(nums)
    return IndexCommunities(Hierarchy(levels, parents, max(int(np.bincount(lv).max()) for lv in levels)), numbers)


def reports_of_index(index: GraphRAGIndex, communities: IndexCommunities, graph: ExtractedGraph
                     ) -> dict[int, list[Report]]:
    """GraphRAG's community reports as series :class:`Report` s, ``{level: [...]}``, each at the level GraphRAG
    wrote it, ``R<level>-<community>`` numbered as ``communities``' hierarchy; a finding's ``sources`` are the
    entity and relationship ids its ``[Data: ...]`` reference cites (``E004``, ``r6``), ``rating`` GraphRAG's rank.

    >>> from cookbook.data.recorded import load_recorded
    >>> idx = load_recorded("dulce").index
    >>> g = graph_of_index(idx)
    >>> reps = reports_of_index(idx, communities_of_index(idx, g), g)
    >>> r = reps[1][0]
    >>> r.id, r.title, r.findings[0].sources
    ('R1-0', 'Paranormal Military Squad and Operation Dulce', ('E004', 'r6', 'r79', 'r65', 'r83'))
    """
    _check_index(index)
    if not isinstance(communities, IndexCommunities):
        raise TypeError(f"communities must be IndexCommunities (communities_of_index), "
                        f"got {type(communities).__name__}")
    ids = [e.id for e in graph.entities]
    out: dict[int, list[Report]] = {}
    for r in sorted(index.reports, key=lambda r: (r.level, r.community)):
        c = communities.numbers[r.level].index(r.community)
        members = [ids[i] for i in np.flatnonzero(communities.hierarchy.levels[r.level] == c)]
        findings = []
        for summary, explanation in r.findings:
            cited = citations(explanation)
            findings.append(Finding(summary, explanation, tuple(
                [entity_id(int(x)) for x in cited.get("entities", []) if x.isdigit()]
                + [f"r{x}" for x in cited.get("relationships", []) if x.isdigit()])))
        children = [f"R{r.level + 1}-{communities.numbers[r.level + 1].index(k)}" for k in r.children]
        out.setdefault(r.level, []).append(Report(
            f"R{r.level}-{c}", r.level, c, r.title, r.summary, findings, float(r.rank), members,
            sorted({s for f in findings for s in f.sources}), count_tokens(r.full_content), False, children, "",
            r.rating_explanation))
    return dict(sorted(out.items()))


# ---------------------------------------------------------------- nano-graphrag's recorded answers

_RECORD = re.compile(r'\(\s*"?(entity|relationship|relation)"?\s*<\|>', re.I)


def count_written(answer: str) -> dict[str, int]:
    """The records an answer writes, counted without the parser: every ``("entity"<|>`` and
    ``("relationship"<|>`` (or ``("relation"<|>``) opening (GraphRAG's tuple format), the independent count the
    parser's recovery is measured against.

    >>> count_written('("entity"<|>"A"<|>"person"<|>"x")##("relationship"<|>"A"<|>"B"<|>"y"<|>3)')
    {'entity': 1, 'relationship': 1}
    """
    found = [m.lower() for m in _RECORD.findall(string(answer, "answer"))]
    return {"entity": found.count("entity"), "relationship": len(found) - found.count("entity")}


@dataclass
class Recovery:
    """What the series' parser read of a recording's extraction answers: ``units`` as
    ``(unit, entity records, relationship records)`` for :func:`~cookbook.index.graph_extraction.merge_records`,
    the records ``written`` (counted by :func:`count_written`) and ``recovered`` (parsed), per kind, and the
    parser's ``problems`` as ``(unit, line, why)``.

    >>> Recovery([], {"entity": 2}, {"entity": 2}, []).rate("entity")
    1.0
    """

    units: list[tuple[str, list[EntityRecord], list[RelationshipRecord]]]
    written: dict[str, int]
    recovered: dict[str, int]
    problems: list[tuple[str, int, str]]

    def rate(self, kind: str) -> float:
        """Records recovered / records written of ``kind`` (``entity`` or ``relationship``).

        >>> Recovery([], {"relationship": 4}, {"relationship": 3}, []).rate("relationship")
        0.75
        """
        return self.recovered[kind] / self.written[kind] if self.written[kind] else float("nan")


def recorded_extraction(recorded: RecordedCorpus) -> Recovery:
    """Every extraction and gleaning answer of ``recorded`` read by :func:`~cookbook.llm.parse.parse_extraction`,
    per text unit, with the records written and recovered. ``merge_records(recovery.units)`` is the model's graph.

    >>> from cookbook.data.recorded import load_recorded
    >>> rec = recorded_extraction(load_recorded("christmas-carol"))
    >>> len(rec.units), rec.recovered["entity"] <= rec.written["entity"]
    (39, True)
    """
    if not isinstance(recorded, RecordedCorpus):
        raise TypeError(f"recorded must be a RecordedCorpus (load_recorded), got {type(recorded).__name__}")
    units, problems = [], []
    written = {"entity": 0, "relationship": 0}
    recovered = {"entity": 0, "relationship": 0}
    for doc in recorded.documents:
        ents, rels = [], []
        for answer in recorded.answers_of(doc.id):
            if answer.step not in ("extract_graph", "glean"):
                continue
            e, r, why = parse_extraction(answer.text)
            ents += e
            rels += r
            problems += [(doc.id, line, text) for line, text in why]
            for kind, n in count_written(answer.text).items():
                written[kind] += n
        recovered["entity"] += len(ents)
        recovered["relationship"] += len(rels)
        units.append((doc.id, ents, rels))
    if not units or not written["entity"]:
        raise ValueError(f"recording {recorded.name!r} has no extraction answers (its index holds the parsed graph: "
                         "graph_of_index)")
    return Recovery(units, written, recovered, problems)


def recorded_reports(recorded: RecordedCorpus) -> list[Report]:
    """The community reports a recording's model wrote (nano-graphrag's JSON answers), read by the series' JSON
    reader, as :class:`Report` s ``N<k>-<position>`` (level unknown: 0; members unknown: none), findings without
    citations (nano's prompt asks for none). An answer that is not a report object is skipped.

    >>> from cookbook.data.recorded import load_recorded
    >>> reps = recorded_reports(load_recorded("christmas-carol"))
    >>> len(reps), reps[0].title
    (101, 'Scrooge and the Ghost of Christmas Past')
    """
    if not isinstance(recorded, RecordedCorpus):
        raise TypeError(f"recorded must be a RecordedCorpus (load_recorded), got {type(recorded).__name__}")
    out = []
    for k, a in enumerate(recorded.step("community_report")):
        try:
            obj = parse_json(a.text)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        findings = [Finding(str(f.get("summary", "")), str(f.get("explanation", "")), ())
                    for f in obj.get("findings", []) if isinstance(f, dict)]
        out.append(Report(f"N0-{k}", 0, k, str(obj.get("title", "")), str(obj.get("summary", "")), findings,
                          float(obj.get("rating", 0.0) or 0.0), [], [], count_tokens(a.text), False, [], "",
                          str(obj.get("rating_explanation", ""))))
    return out

