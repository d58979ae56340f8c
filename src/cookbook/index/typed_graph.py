"""The typed graph graph extraction makes (:mod:`cookbook.index.graph_extraction`): its records
(:class:`ExtractedEntity`, :class:`Relationship`, :class:`ExtractedGraph`) and what the later stages read of it, the
undirected :class:`~cookbook.index.graph.EntityGraph` (:func:`to_entity_graph`), its triples scored against gold facts
(:func:`relation_triples`, :func:`score_relations`) and the rows of the ENTITIES and RELATIONSHIPS tables community
reports and local search carry (:func:`degrees`, :func:`entity_line`, :func:`relationship_line`). Every name here is
also importable from :mod:`cookbook.index.graph_extraction`, where the series teaches it (notebook 02).

>>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "", ("d1",))], [])
>>> to_entity_graph(g).ids
['E1']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..metrics import precision_recall
from .graph import EntityGraph

__all__ = ["ExtractedEntity", "ExtractedGraph", "Relationship", "degrees", "entity_line", "relation_triples",
           "relationship_line", "score_relations", "to_entity_graph"]


@dataclass(frozen=True)
class ExtractedEntity:
    """One merged entity: ``id`` (the corpus entity id when the name resolves to one, else a
    ``"name:<normalised name>"`` id), the surface ``name``, ``type``, the merged ``description`` and the
    text units (``doc_ids``, sorted) it was extracted from.

    >>> ExtractedEntity("E1", "Ada Selel", "person", "An engineer.", ("D1", "D2")).doc_ids
    ('D1', 'D2')
    """

    id: str
    name: str
    type: str
    description: str
    doc_ids: tuple[str, ...]


@dataclass(frozen=True)
class Relationship:
    """One merged, typed relationship ``source --predicate--> target`` (entity ids as in
    :class:`ExtractedEntity`; ``predicate`` is ``""`` when the extractor gave no type), its merged
    ``description``, ``weight`` (the extractor's strength, summed over text units) and ``doc_ids``.

    >>> Relationship("E1", "E2", "works_for", "Ada works for Acme.", 2.0, ("D1",)).weight
    2.0
    """

    source: str
    target: str
    predicate: str
    description: str
    weight: float
    doc_ids: tuple[str, ...]


@dataclass
class ExtractedGraph:
    """What graph extraction returns: merged ``entities`` and ``relationships``, each sorted by id, and the
    parser's ``problems`` as ``(doc_id, line, why)``.

    >>> ExtractedGraph([], []).relationships
    []
    """

    entities: list[ExtractedEntity]
    relationships: list[Relationship]
    problems: list[tuple[str, int, str]] = field(default_factory=list)


def to_entity_graph(extracted: ExtractedGraph) -> EntityGraph:
    """The extracted graph as an undirected :class:`~cookbook.index.graph.EntityGraph` for the later notebooks
    (communities, PPR) in place of co-occurrence: nodes are the entity ids (sorted), ``adjacency`` sums the
    relationship weights between two entities over predicates and directions, ``counts`` the number of
    relationships between them.

    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "", ("D1",)),
    ...                     ExtractedEntity("E2", "Acme", "org", "", ("D1",))],
    ...                    [Relationship("E1", "E2", "works_for", "", 9.0, ("D1",)),
    ...                     Relationship("E2", "E1", "employs", "", 3.0, ("D2",))])
    >>> eg = to_entity_graph(g)
    >>> eg.edges(), float(eg.counts[0, 1])
    ([('E1', 'E2', 12.0)], 2.0)
    """
    if not extracted.entities:
        raise ValueError("the extracted graph has no entities: nothing to build a graph on")
    ids = [e.id for e in extracted.entities]
    index = {e: i for i, e in enumerate(ids)}
    missing = sorted({x for r in extracted.relationships for x in (r.source, r.target)} - set(index))
    if missing:
        raise ValueError(f"relationship endpoint {missing[0]!r} is not an entity of the graph")
    n = len(ids)
    rows = [index[r.source] for r in extracted.relationships] + [index[r.target] for r in extracted.relationships]
    cols = rows[len(rows) // 2:] + rows[:len(rows) // 2]
    w = [r.weight for r in extracted.relationships] * 2
    adj = sp.csr_matrix((np.asarray(w, float), (rows, cols)), shape=(n, n))
    cnt = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    return EntityGraph(ids, [e.name for e in extracted.entities], adj, cnt, "extracted")


def relation_triples(extracted: ExtractedGraph) -> set[tuple[str, str, str]]:
    """The ``(source, predicate, target)`` triples of the extracted relationships, to score against facts.

    >>> relation_triples(ExtractedGraph([], [Relationship("E1", "E2", "works_for", "", 9.0, ("D1",))]))
    {('E1', 'works_for', 'E2')}
    """
    if not isinstance(extracted, ExtractedGraph):
        raise TypeError(f"extracted must be an ExtractedGraph, got {type(extracted).__name__}")
    return {(r.source, r.predicate, r.target) for r in extracted.relationships}


def score_relations(extracted: ExtractedGraph, facts: Iterable, *, ordered: bool = True) -> dict:
    """Precision and recall (:func:`cookbook.metrics.precision_recall`) of the extracted relationships
    against gold ``facts`` (objects with ``subject``, ``predicate``, ``object``): as
    ``(subject, predicate, object)`` triples, or with ``ordered=False`` as unordered entity pairs (what a
    co-occurrence edge can be compared on).

    >>> from cookbook.data.records import Fact
    >>> g = ExtractedGraph([], [Relationship("E2", "E1", "works_for", "", 9.0, ("D1",))])
    >>> gold = [Fact("E1", "works_for", "E2", "D1")]
    >>> score_relations(g, gold)["recall"], score_relations(g, gold, ordered=False)["recall"]
    (0.0, 1.0)
    """
    predicted = relation_triples(extracted)
    facts = list(facts)
    bad = next((f for f in facts if not all(hasattr(f, a) for a in ("subject", "predicate", "object"))), None)
    if bad is not None:
        raise TypeError(f"facts must have subject, predicate and object, got {type(bad).__name__}")
    if ordered:
        return precision_recall(predicted, {(f.subject, f.predicate, f.object) for f in facts})
    return precision_recall({frozenset((s, t)) for s, _, t in predicted},
                            {frozenset((f.subject, f.object)) for f in facts})


# ---------------------------------------------------------------- the graph as the tables GraphRAG's prompts carry

def degrees(extracted: ExtractedGraph) -> dict[str, int]:
    """Entity id → number of relationships it takes part in (GraphRAG's ``degree``), every entity listed.

    >>> g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "", ("d1",)),
    ...                     ExtractedEntity("E2", "Acme", "org", "", ("d1",))],
    ...                    [Relationship("E1", "E2", "works_for", "", 9.0, ("d1",))])
    >>> degrees(g)
    {'E1': 1, 'E2': 1}
    """
    if not isinstance(extracted, ExtractedGraph):
        raise TypeError(f"extracted must be an ExtractedGraph, got {type(extracted).__name__}")
    out = {e.id: 0 for e in extracted.entities}
    for r in extracted.relationships:
        out[r.source] = out.get(r.source, 0) + 1
        out[r.target] = out.get(r.target, 0) + 1
    return out


def _clip(text: str, width: int) -> str:
    return " ".join(text.split())[:width]


def entity_line(entity: ExtractedEntity, degree: int, width: int = 400) -> str:
    """One row of an ENTITIES table: ``[id] name (type, degree d): description`` (description on one line,
    cut at ``width`` characters). Community reports and local search both carry it.

    >>> entity_line(ExtractedEntity("E1", "Ada", "person", "An engineer.\\nShe codes.", ("d1",)), 3)
    '[E1] Ada (person, degree 3): An engineer. She codes.'
    """
    if not isinstance(entity, ExtractedEntity):
        raise TypeError(f"entity must be an ExtractedEntity, got {type(entity).__name__}")
    return f"[{entity.id}] {entity.name} ({entity.type}, degree {degree}): {_clip(entity.description, width)}"


def relationship_line(i: int, rel: Relationship, names: Mapping[str, str], width: int = 400) -> str:
    """One row of a RELATIONSHIPS table: ``[r<i>] source -> target (predicate, weight w): description``, with
    entity names from ``names`` (id → name) and ``i`` the relationship's position in the graph.

    >>> relationship_line(7, Relationship("E1", "E2", "works_for", "Ada works for Acme.", 9.0, ("d1",)),
    ...                   {"E1": "Ada", "E2": "Acme"})
    '[r7] Ada -> Acme (works_for, weight 9): Ada works for Acme.'
    """
    if not isinstance(rel, Relationship):
        raise TypeError(f"rel must be a Relationship, got {type(rel).__name__}")
    return (f"[r{i}] {names[rel.source]} -> {names[rel.target]} ({rel.predicate or 'related'}, "
            f"weight {rel.weight:g}): {_clip(rel.description, width)}")
