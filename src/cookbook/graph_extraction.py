"""Graph extraction by prompt, as Microsoft GraphRAG indexes: an LLM reads each text unit and names its
entities (name, type, description) and typed relationships (source, target, description, strength);
duplicates are merged across text units. Taught in notebooks/02_graph_extraction.ipynb; local search
(:mod:`cookbook.local_search`) answers from the result.

>>> a = ExtractedEntity("E1", "Ada Selel", "person", "An engineer.", ("D1",))
>>> r = Relationship("E1", "E2", "works_for", "Ada works for Acme.", 1.0, ("D1",))
>>> g = ExtractedGraph([a], [r])
>>> g.relationships[0].predicate, g.entities[0].doc_ids
('works_for', ('D1',))
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ExtractedEntity", "ExtractedGraph", "Relationship"]


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
    """What graph extraction returns: merged ``entities`` and ``relationships``, each sorted by id.

    >>> ExtractedGraph([], []).relationships
    []
    """

    entities: list[ExtractedEntity]
    relationships: list[Relationship]
