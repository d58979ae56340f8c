"""Graph extraction by prompt, as Microsoft GraphRAG indexes: an LLM reads each text unit and names its
entities (name, type, description) and typed relationships (source, target, description, strength);
duplicates are merged across text units. The record format and its parser are the model layer's
(:mod:`cookbook.llm.parse`). Taught in notebooks/02_graph_extraction.ipynb; local search
(:mod:`cookbook.query.local_search`) answers from the result.

>>> a = ExtractedEntity("E1", "Ada Selel", "person", "An engineer.", ("D1",))
>>> r = Relationship("E1", "E2", "works_for", "Ada works for Acme.", 1.0, ("D1",))
>>> g = ExtractedGraph([a], [r])
>>> g.relationships[0].predicate, g.entities[0].doc_ids
('works_for', ('D1',))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from .._validate import integer, string, strings
from ..data.gazetteer import CompiledGazetteer, compile_gazetteer
from ..data.records import doc_pairs
from ..llm.base import LLM, LLMUnavailable, redact, stop_if_all_failed
from ..llm.extractive import ExtractiveLLM
from ..llm.ledger import TokenLedger
from ..llm.parse import EntityRecord, RelationshipRecord, format_records, name_key, parse_extraction
from ..llm.prompts import prompt
from ..llm.tokens import count_tokens
from ..progress import bar
from ..text import split_sentences
from .typed_graph import (
    ExtractedEntity,
    ExtractedGraph,
    Relationship,
    degrees,
    entity_line,
    relation_triples,
    relationship_line,
    score_relations,
    to_entity_graph,
)

__all__ = ["ExtractedEntity", "ExtractedGraph", "Relationship", "corpus_extraction", "degrees", "entity_line",
           "extract_graph",
           "extract_records", "merge_records", "relation_triples", "relationship_line", "score_relations",
           "to_entity_graph"]


def _resolver(gazetteer: CompiledGazetteer | None, names: Iterable[str]):
    """Name → id for one text unit: the gazetteer's id when the name names one entity (compared as the
    matcher compares names, a full name winning over an alias); an ambiguous name takes the one candidate
    another name of the unit names unambiguously (as extract's "context" policy); anything else
    ``"name:<normalised name>"``."""
    def candidates(name):
        return gazetteer.candidates(name) if gazetteer else []

    known = {c[0] for c in map(candidates, names) if len(c) == 1}

    def resolve(name):
        ids = candidates(name)
        if len(ids) > 1:
            ids = [i for i in ids if i in known]
        return ids[0] if len(ids) == 1 else f"name:{name_key(name)}"

    return resolve


def _merge_text(parts: Sequence[str], budget: int) -> str:
    """Unique sentences of ``parts`` in order, while they fit ``budget`` tokens."""
    out, seen, used = [], set(), 0
    for part in parts:
        for s in split_sentences(part):
            if s in seen:
                continue
            cost = count_tokens(s)
            if used + cost > budget:
                return " ".join(out)
            seen.add(s)
            out.append(s)
            used += cost
    return " ".join(out)


def _most_common(values: Sequence[str], *, longest: bool = False) -> str:
    counts = Counter(v for v in values if v)  # ties: with ``longest`` the longest (a full name over an alias), then A–Z
    return min(counts, key=lambda v: (-counts[v], -len(v) if longest else 0, v)) if counts else ""


def _entity_types(entity_types, gleanings, max_tokens) -> list[str]:
    """The checked arguments of an extraction: the entity types (``gleanings`` and ``max_tokens`` checked)."""
    types = strings(entity_types, "entity_types")
    if not types:
        raise ValueError("entity_types is empty: name the entity types to extract")
    integer(gleanings, "gleanings", at_least=0)
    integer(max_tokens, "max_tokens")
    return types


def extract_records(text: str, llm: LLM, *, entity_types: Sequence[str], gleanings: int = 1,
                    max_tokens: int = 600) -> list[dict]:
    """One text unit's extraction rounds: the extraction prompt, then up to ``gleanings`` "anything
    missed?" prompts carrying the records so far, stopping early when a round adds nothing. Returns one
    dict per round: ``prompt``, ``output`` (raw text), ``entities``, ``relationships`` (the records
    new in that round) and ``problems`` (an empty answer is one, at line 0). The backend's exceptions
    propagate.

    >>> from cookbook.llm import ExtractiveLLM
    >>> llm = ExtractiveLLM(gazetteer={"Ada": ["E1"], "Acme": ["E2"]}, types={"E1": "person", "E2": "org"})
    >>> rounds = extract_records("Ada works for Acme.", llm, entity_types=["person", "org"])
    >>> [(r.source, r.relation, r.target) for r in rounds[0]["relationships"]], len(rounds)
    ([('Ada', 'works_for', 'Acme')], 2)
    """
    string(text, "text")
    types = _entity_types(entity_types, gleanings, max_tokens)
    ents: list[EntityRecord] = []
    rels: list[RelationshipRecord] = []
    rounds = []
    for r in range(gleanings + 1):
        if r == 0:
            p = prompt("extract_graph", entity_types=", ".join(types), text=text)
        else:
            p = prompt("glean", entity_types=", ".join(types), text=text, previous=format_records(ents, rels))
        out = llm.complete(p, max_tokens=max_tokens)
        if out and out.strip():
            new_e, new_r, problems = parse_extraction(out)
        else:  # a model that wrote nothing found nothing: say so, an empty graph would not
            new_e, new_r, problems = [], [], [(0, f"empty completion in round {r}")]
        seen_e = {(name_key(e.name), e.type) for e in ents}
        seen_r = {(name_key(x.source), x.relation, name_key(x.target)) for x in rels}
        new_e = [e for e in new_e if (name_key(e.name), e.type) not in seen_e]
        new_r = [x for x in new_r if (name_key(x.source), x.relation, name_key(x.target)) not in seen_r]
        rounds.append({"prompt": p, "output": out, "entities": new_e, "relationships": new_r,
                       "problems": problems})
        ents += new_e
        rels += new_r
        if r > 0 and not new_e and not new_r:
            break
    return rounds


def merge_records(units: Sequence[tuple[str, Sequence[EntityRecord], Sequence[RelationshipRecord]]], *,
                  gazetteer: Mapping[str, Iterable[str]] | None = None, description_tokens: int = 120,
                  problems: Sequence[tuple[str, int, str]] = ()) -> ExtractedGraph:
    """Merge per-unit records ``(doc_id, entities, relationships)`` into one :class:`ExtractedGraph`.
    Names resolve to ids through ``gazetteer`` (see :class:`ExtractedEntity`); entities merge by id (most frequent
    name, ties the longer: a full name over an alias; most frequent type), relationships by (source, predicate,
    target) with strengths summed; descriptions are the unique sentences in document order within
    ``description_tokens``. A relationship of an entity with itself is dropped; an endpoint that no entity
    record names becomes an entity of type ``""``. Everything is sorted by id.

    >>> units = [("D1", [EntityRecord("Ada", "person", "An engineer.")],
    ...           [RelationshipRecord("Ada", "Acme", "works_for", "Ada works for Acme.", 9)]),
    ...          ("D2", [EntityRecord("ada", "person", "An engineer. She codes.")],
    ...           [RelationshipRecord("Ada", "ACME", "works_for", "Ada is at Acme.", 5)])]
    >>> g = merge_records(units, gazetteer={"Ada": ["E1"]})
    >>> [(e.id, e.description, e.doc_ids) for e in g.entities]
    [('E1', 'An engineer. She codes.', ('D1', 'D2')), ('name:acme', '', ('D1', 'D2'))]
    >>> g.relationships[0].weight, g.relationships[0].description
    (14.0, 'Ada works for Acme. Ada is at Acme.')
    """
    integer(description_tokens, "description_tokens")
    for u in units:
        if not (isinstance(u, tuple) and len(u) == 3):
            raise TypeError(f"units must be (doc_id, entities, relationships) tuples, got {u!r:.60}")
    compiled = compile_gazetteer(gazetteer) if gazetteer else None
    ent: dict[str, dict] = {}
    rel: dict[tuple[str, str, str], dict] = {}

    def entity_row(eid):
        return ent.setdefault(eid, {"names": [], "types": [], "descriptions": [], "docs": set()})

    for doc_id, ents, rels in sorted(units, key=lambda u: u[0]):
        resolve = _resolver(compiled, [e.name for e in ents] + [n for r in rels for n in (r.source, r.target)])
        for e in ents:
            row = entity_row(resolve(e.name))
            row["names"].append(e.name)
            row["types"].append(e.type)
            row["descriptions"].append(e.description)
            row["docs"].add(doc_id)
        for r in rels:
            s, t = resolve(r.source), resolve(r.target)
            if s == t:
                continue
            for eid, name in ((s, r.source), (t, r.target)):
                row = entity_row(eid)
                row["docs"].add(doc_id)
                if not row["names"]:
                    row["fallback"] = name
            row = rel.setdefault((s, r.relation, t), {"descriptions": [], "weight": 0.0, "docs": set()})
            row["descriptions"].append(r.description)
            row["weight"] += r.strength
            row["docs"].add(doc_id)
    entities = [ExtractedEntity(eid, _most_common(row["names"], longest=True) or row.get("fallback", ""),
                                _most_common(row["types"]), _merge_text(row["descriptions"], description_tokens),
                                tuple(sorted(row["docs"])))
                for eid, row in sorted(ent.items())]
    relationships = [Relationship(s, t, p, _merge_text(row["descriptions"], description_tokens), row["weight"],
                                  tuple(sorted(row["docs"])))
                     for (s, p, t), row in sorted(rel.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1]))]
    return ExtractedGraph(entities, relationships, list(problems))


def extract_graph(docs, llm: LLM, *, entity_types: Sequence[str], gazetteer: Mapping[str, Iterable[str]] | None = None,
                  gleanings: int = 1, max_tokens: int = 600, ledger: TokenLedger | None = None,
                  description_tokens: int = 120) -> ExtractedGraph:
    """Extract a typed graph from ``docs`` (objects with ``.id`` and ``.text``, or a mapping id → text): per text unit,
    :func:`extract_records` (the prompt, then ``gleanings`` rounds, each answer at most ``max_tokens``), then
    :func:`merge_records` over all units with ``gazetteer``. Calls are counted by ``ledger`` when given (a
    :class:`~cookbook.llm.ledger.TokenLedger` wrapping ``llm``). The parser's problems come back in
    ``ExtractedGraph.problems`` as ``(doc_id, line, why)``, secrets redacted; so does a text unit whose call failed
    (after the backend's retries: line 0, the cause), left out. :class:`~cookbook.llm.base.LLMUnavailable` stops the
    extraction, as does every unit's call failing. Resumable: with ``llm`` a :class:`~cookbook.llm.cached.CachedLLM`
    every answer is kept as it comes, so a rerun resends nothing cached. A long run shows a progress bar. Notebook 02.

    >>> from cookbook.llm import ExtractiveLLM
    >>> gaz, types = {"Ada": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"}
    >>> g = extract_graph({"D1": "Ada works for Acme."}, ExtractiveLLM(gazetteer=gaz, types=types),
    ...                   entity_types=["person", "org"], gazetteer=gaz)
    >>> [e.id for e in g.entities], [(r.source, r.predicate, r.target, r.weight) for r in g.relationships]
    (['E1', 'E2'], [('E1', 'works_for', 'E2', 9.0)])
    """
    pairs = doc_pairs(docs)
    _entity_types(entity_types, gleanings, max_tokens)  # bad arguments raise here, not as a failed unit
    if ledger is not None:
        if ledger.backend is not llm:
            raise ValueError("ledger must wrap llm: pass TokenLedger(llm) as ledger")
        llm = ledger
    units, problems = [], []
    for doc_id, text in bar(pairs, desc="extracting text units", unit="unit"):
        try:
            rounds = extract_records(text, llm, entity_types=entity_types, gleanings=gleanings,
                                     max_tokens=max_tokens)
        except LLMUnavailable:  # no unit can be extracted: stop rather than return a graph of the lucky ones
            raise
        except Exception as e:  # this unit's call failed after its retries: report it, keep the others
            problems.append((doc_id, 0, redact(f"extraction failed, unit left out: {type(e).__name__}: {e}")))
            continue
        units.append((doc_id, [e for r in rounds for e in r["entities"]],
                      [x for r in rounds for x in r["relationships"]]))
        problems += [(doc_id, line, redact(why)) for r in rounds for line, why in r["problems"]]
    stop_if_all_failed("graph extraction", len(pairs) - len(units), len(pairs), (problems or [("", 0, "")])[-1][2])
    return merge_records(units, gazetteer=gazetteer, description_tokens=description_tokens, problems=problems)


def corpus_extraction(corpus, llm: LLM | None = None, *, gleanings: int = 2) -> ExtractedGraph:
    """The typed graph of a corpus (a :class:`~cookbook.data.records.Corpus`) as notebook 02 extracts it and
    notebooks 03-05 and 08 read it: every document through :func:`extract_graph` with the corpus's entity types,
    ``gleanings`` rounds, names resolved through the corpus's gazetteer. ``llm`` None is the offline stand-in
    (:class:`~cookbook.llm.extractive.ExtractiveLLM` knowing the corpus's names and types); a real model, or a
    :class:`~cookbook.llm.ledger.TokenLedger` around one, is passed as it is.

    >>> from cookbook.data import load_corpus
    >>> g = corpus_extraction(load_corpus("world", "ci"))
    >>> len(g.entities) > 0 and all(r.predicate for r in g.relationships)
    True
    """
    if not hasattr(corpus, "gazetteer") or not hasattr(corpus, "documents"):
        raise TypeError(f"corpus must be a Corpus (load_corpus), got {type(corpus).__name__}")
    gaz = corpus.gazetteer()
    if llm is None:
        llm = ExtractiveLLM(gazetteer=gaz, types={e.id: e.type for e in corpus.entities})
    return extract_graph(corpus.documents, llm, entity_types=sorted({e.type for e in corpus.entities}),
                         gazetteer=gaz, gleanings=gleanings)
