"""The series' offline methods measured against a real model's graph as a **silver reference**.

A silver reference is what one model (GPT-4o) wrote in one run, with its own prompt: not gold. Against it a
method's *recall* is how much of what GPT-4o extracted from a text unit the method finds there, its *precision*
how much of what the method finds GPT-4o also extracted. It can decide "closer to a strong model's graph" (and so
measure what the offline stand-in misses); it cannot decide which is right where they differ — GPT-4o misses and
invents too, and another model or run would write another graph. Notebooks 02 and 04 save these as checks.

On the same text units, per unit (the unit is the paired sample; 95 % bootstrap CIs from :mod:`cookbook.stats`):

- the **gazetteer** (:func:`~cookbook.data.gazetteer.gazetteer_mentions`): entities only;
- **co-occurrence** (GraphRAG's no-LLM FastGraphRAG method): the gazetteer's entities, a relationship between two
  named in one sentence;
- the offline **stand-in**'s extraction (:func:`~cookbook.index.graph_extraction.extract_graph` with
  :class:`~cookbook.llm.extractive.ExtractiveLLM`, one gleaning round).

Names resolve the way the series resolves them (:func:`~cookbook.index.graph_extraction.merge_records` through a
gazetteer): the gazetteer is the silver graph's own names (every name GPT-4o wrote anywhere in the corpus, each its
own entity, spellings that meet under :func:`~cookbook.llm.parse.name_key` one entity). So every method is handed
GPT-4o's vocabulary of names — its entity recall is an upper bound on what it would find unaided, by construction;
relationships and precision are where the methods differ. Relationships compare as unordered entity pairs (GraphRAG
types none). A unit where a method finds nothing scores precision 0 (nothing it found is right), said where shown.

>>> from cookbook.data.recorded import load_recorded
>>> s = silver_scores(load_recorded("dulce"))
>>> sorted(s.scores), len(s.units)
(['co-occurrence', 'gazetteer', 'stand-in'], 5)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from ..data.gazetteer import compile_gazetteer, gazetteer_mentions
from ..data.graphrag_index import GraphRAGIndex
from ..data.recorded import RecordedCorpus
from ..data.records import build_gazetteer
from ..llm.base import LLM
from ..llm.extractive import ExtractiveLLM
from ..llm.parse import name_key
from ..stats import bootstrap_mean_ci, paired_bootstrap
from .graph_extraction import ExtractedGraph, extract_graph
from .recorded import communities_of_index, graph_of_index, recorded_extraction, reports_of_index
from .reports import graph_reports

__all__ = ["METHODS", "SilverScores", "Silver", "report_overlap", "silver_reference", "silver_scores"]

METHODS = ("gazetteer", "co-occurrence", "stand-in")


@dataclass
class Silver:
    """The silver reference of a recording, per text unit: ``entities[u]`` the entity ids GPT-4o extracted from
    unit ``u``, ``pairs[u]`` its relationships as unordered id pairs; ``gazetteer`` (name → ids) and ``types``
    (id → most frequent type) are its names, what the methods are handed.

    >>> Silver(["u"], {"u": {"a"}}, {"u": set()}, {"A": ["a"]}, {"a": "person"}).units
    ['u']
    """

    units: list[str]
    entities: dict[str, set[str]]
    pairs: dict[str, set[frozenset]]
    gazetteer: dict[str, list[str]]
    types: dict[str, str]


def _pair(a: str, b: str) -> frozenset:
    return frozenset((a, b))


def silver_reference(recorded: RecordedCorpus) -> Silver:
    """GPT-4o's graph per text unit of ``recorded``: for A Christmas Carol its extraction and gleaning answers read
    by the series' parser, names resolved by :func:`~cookbook.llm.parse.name_key`; for Dulce GraphRAG's entities
    and relationships by the text units they list.

    >>> from cookbook.data.recorded import load_recorded
    >>> s = silver_reference(load_recorded("dulce"))
    >>> len(s.units), sorted(s.entities[s.units[0]])[:2]
    (5, ['E000', 'E001'])
    """
    if not isinstance(recorded, RecordedCorpus):
        raise TypeError(f"recorded must be a RecordedCorpus (load_recorded), got {type(recorded).__name__}")
    units = [d.id for d in recorded.documents]
    if recorded.index is not None:
        return _silver_of_index(recorded.index, units)
    rec = recorded_extraction(recorded)
    names: dict[str, Counter] = {}
    types: dict[str, Counter] = {}
    entities, pairs = {}, {}
    for unit, ents, rels in rec.units:
        for e in ents:
            k = f"name:{name_key(e.name)}"
            names.setdefault(k, Counter())[e.name] += 1
            types.setdefault(k, Counter())[e.type] += 1
        entities[unit] = {f"name:{name_key(e.name)}" for e in ents if name_key(e.name)}
        pairs[unit] = {_pair(f"name:{name_key(r.source)}", f"name:{name_key(r.target)}") for r in rels
                       if name_key(r.source) and name_key(r.target) and name_key(r.source) != name_key(r.target)}
    gaz = build_gazetteer((k, sorted(c, key=lambda n: (-c[n], n))) for k, c in sorted(names.items()) if k != "name:")
    return Silver(units, entities, pairs, dict(gaz), {k: min(c, key=lambda t: (-c[t], t)) for k, c in types.items()})


def _silver_of_index(index: GraphRAGIndex, units: list[str]) -> Silver:
    g = graph_of_index(index)
    entities = {u: {e.id for e in g.entities if u in e.doc_ids and e.type} for u in units}
    pairs = {u: {_pair(r.source, r.target) for r in g.relationships if u in r.doc_ids} for u in units}
    gaz = build_gazetteer((e.id, [e.name]) for e in g.entities if e.type)
    return Silver(units, entities, pairs, dict(gaz), {e.id: e.type for e in g.entities if e.type})


@dataclass
class SilverScores:
    """Per-unit scores of each method against the silver reference: ``scores[method][metric]`` an array over
    ``units`` (metrics ``entity_recall``, ``entity_precision``, ``relationship_recall``,
    ``relationship_precision``; the gazetteer has no relationships), ``empty[method][kind]`` the units where the
    method found nothing of that kind (scored precision 0), and the ``graph`` the stand-in extracted.

    >>> SilverScores(["u"], {"gazetteer": {"entity_recall": np.array([1.0])}}, {}, None).mean("gazetteer",
    ...                                                                                     "entity_recall").n
    1
    """

    units: list[str]
    scores: dict[str, dict[str, np.ndarray]]
    empty: dict[str, dict[str, int]]
    graph: ExtractedGraph | None = field(repr=False, default=None)

    def mean(self, method: str, metric: str):
        """The mean over units of ``metric`` for ``method`` with its 95 % bootstrap CI
        (:class:`~cookbook.stats.MeanCI`).

        >>> s = SilverScores(["u", "v"], {"m": {"entity_recall": np.array([1.0, 0.0])}}, {})
        >>> s.mean("m", "entity_recall").mean
        0.5
        """
        return bootstrap_mean_ci(self.scores[method][metric])

    def paired(self, a: str, b: str, metric: str):
        """``a`` − ``b`` on ``metric``, paired per unit, with its 95 % CI (:class:`~cookbook.stats.PairedResult`).

        >>> s = SilverScores(["u", "v"], {"a": {"x": np.array([1.0, 1.0])}, "b": {"x": np.array([0.0, 1.0])}}, {})
        >>> s.paired("a", "b", "x").mean_diff
        0.5
        """
        return paired_bootstrap(self.scores[a][metric], self.scores[b][metric])


def _pr(found: set, silver: set) -> tuple[float, float]:
    hit = len(found & silver)
    return (hit / len(silver) if silver else 1.0), (hit / len(found) if found else 0.0)


def silver_scores(recorded: RecordedCorpus, llm: LLM | None = None, *, gleanings: int = 1) -> SilverScores:
    """The gazetteer, co-occurrence and the stand-in's extraction (``llm``, None: the offline
    :class:`~cookbook.llm.extractive.ExtractiveLLM` holding the silver names) scored per text unit of ``recorded``
    against its :func:`silver_reference` (see the module docstring for what that can and cannot decide).
    Deterministic. Taught in notebooks/02_graph_extraction.ipynb.

    >>> from cookbook.data.recorded import load_recorded
    >>> s = silver_scores(load_recorded("dulce"))
    >>> float(s.mean("gazetteer", "entity_recall").mean) > 0.5
    True
    """
    silver = silver_reference(recorded)
    docs = [recorded.doc_index[u] for u in silver.units]
    compiled = compile_gazetteer(silver.gazetteer)
    found: dict[str, list] = {u: [] for u in silver.units}
    for m in gazetteer_mentions(docs, compiled):
        found[m.doc_id].append(m)
    gaz_ents = {u: {m.entity_id for m in ms} for u, ms in found.items()}
    cooc = {}
    for d in docs:
        by_sentence: dict[int, set[str]] = {}
        for m in found[d.id]:
            s = next((i for i, (a, b) in enumerate(d.sentences) if a <= m.start < b), -1)
            by_sentence.setdefault(s, set()).add(m.entity_id)
        cooc[d.id] = {_pair(a, b) for ids in by_sentence.values() for a, b in combinations(sorted(ids), 2)}
    llm = llm if llm is not None else ExtractiveLLM(gazetteer=silver.gazetteer, types=silver.types)
    graph = extract_graph(docs, llm, entity_types=sorted(set(silver.types.values())), gazetteer=silver.gazetteer,
                          gleanings=gleanings)
    stand_ents = {u: {e.id for e in graph.entities if u in e.doc_ids} for u in silver.units}
    stand_pairs = {u: {_pair(r.source, r.target) for r in graph.relationships if u in r.doc_ids}
                   for u in silver.units}
    methods = {"gazetteer": (gaz_ents, None), "co-occurrence": (gaz_ents, cooc), "stand-in": (stand_ents, stand_pairs)}
    scores: dict[str, dict[str, np.ndarray]] = {}
    empty: dict[str, dict[str, int]] = {}
    for name, (ents, pairs) in methods.items():
        rows = {"entity": [_pr(ents[u], silver.entities[u]) for u in silver.units]}
        empty[name] = {"entity": sum(not ents[u] for u in silver.units)}
        if pairs is not None:
            rows["relationship"] = [_pr(pairs[u], silver.pairs[u]) for u in silver.units]
            empty[name]["relationship"] = sum(not pairs[u] for u in silver.units)
        scores[name] = {f"{kind}_{what}": np.array([r[i] for r in rs]) for kind, rs in rows.items()
                        for i, what in enumerate(("recall", "precision"))}
    return SilverScores(silver.units, scores, empty, graph)


def report_overlap(index: GraphRAGIndex, llm: LLM | None = None) -> list[dict]:
    """For every community GraphRAG wrote a report on: the entities the real report cites
    (``[Data: Entities (...)]``) and how many of them the report written for the *same* community from the same
    graph by ``llm`` (None: the offline stand-in, :func:`~cookbook.index.reports.graph_reports`) names — cites, or
    mentions by name in its title, summary or findings. Rows ``{"community", "level", "real_title",
    "stand_in_title", "cited", "named", "share"}``; ``share`` is ``named / cited`` (1.0 when the real report cites
    none). Taught in notebooks/04_community_reports.ipynb.

    >>> from cookbook.data.recorded import load_recorded
    >>> rows = report_overlap(load_recorded("dulce").index)
    >>> len(rows), all(0 <= r["share"] <= 1 for r in rows)
    (10, True)
    """
    if not isinstance(index, GraphRAGIndex):
        raise TypeError(f"index must be a GraphRAGIndex, got {type(index).__name__}")
    graph = graph_of_index(index)
    hc = communities_of_index(index, graph)
    real = reports_of_index(index, hc, graph)
    mine = graph_reports(hc.hierarchy, graph, llm if llm is not None else ExtractiveLLM())
    names = {e.id: e.name.lower() for e in graph.entities}
    rows = []
    for level, reports in real.items():
        by_id = {r.id: r for r in mine[level]}
        for r in reports:
            other = by_id[r.id]
            cited = sorted({s for f in r.findings for s in f.sources if s.startswith("E")})
            text = " ".join([other.title, other.summary] + [f"{f.summary} {f.explanation}" for f in other.findings])
            said = {s for f in other.findings for s in f.sources}
            named = [e for e in cited if e in said or names[e] in text.lower()]
            rows.append({"community": r.id, "level": level, "real_title": r.title, "stand_in_title": other.title,
                         "cited": len(cited), "named": len(named), "share": len(named) / len(cited) if cited else 1.0})
    return rows
