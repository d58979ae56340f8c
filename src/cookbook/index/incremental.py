"""Incremental indexing, in the spirit of ``graphrag update``: add text units to a built index without
recomputing everything. A :class:`GraphIndex` keeps each text unit's extraction records, so an update extracts only
the new units, merges all records again (no model call), re-runs the hierarchical Leiden communities (seeded, so
deterministic) and writes a report only for a community whose prompt changed; an unchanged prompt takes the
report already written. Because every step is deterministic given its inputs (merging sorts by text unit, Leiden
is seeded, the offline stand-in answers a prompt the same way every time), an updated index equals a full rebuild
of the same documents (``tests/test_graphrag_rooms.py``) — by construction of this implementation. GraphRAG's own
update differs: it clusters the new units as a delta index and appends the delta's communities and reports to the
old ones under fresh ids (``_update_and_merge_communities`` in ``graphrag/index/update/``) without re-clustering the
old graph, so it need not equal a rebuild. The work saved is counted in model calls, the deterministic unit.
Taught in notebooks/12_claims_resolution_updates.ipynb.

>>> from cookbook.llm import ExtractiveLLM
>>> gaz, types = {"Ada": ["E1"], "Acme": ["E2"], "Bo": ["E3"]}, {"E1": "person", "E2": "org", "E3": "person"}
>>> model = ExtractiveLLM(gazetteer=gaz, types=types)
>>> old = build_index({"d1": "Ada works for Acme."}, model, entity_types=["org", "person"], gazetteer=gaz)
>>> new = update_index(old, {"d2": "Bo works for Acme."}, model)
>>> full = build_index({"d1": "Ada works for Acme.", "d2": "Bo works for Acme."}, model,
...                    entity_types=["org", "person"], gazetteer=gaz)
>>> same_index(new, full), new.work["extraction_calls"], full.work["extraction_calls"]
(True, 2, 4)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._validate import integer
from ..data.records import doc_pairs
from ..llm import LLM
from .graph_extraction import ExtractedGraph, extract_records, merge_records, to_entity_graph
from .hierarchy import Hierarchy, hierarchical_leiden
from .reports import Report, graph_reports

__all__ = ["GraphIndex", "build_index", "same_index", "update_index"]


@dataclass
class GraphIndex:
    """A built index that can be updated: each text unit's records (``units``: doc id → (entity records,
    relationship records)), the merged ``graph``, its ``hierarchy`` and ``reports`` (level → reports), the
    ``answers`` written so far (report prompt → answer, what an update reuses), the settings it was built with
    (``config``) and the ``work`` this build or update did, in model calls.

    >>> GraphIndex({}, ExtractedGraph([], []), None, {}, {}, {}).work
    {}
    """

    units: dict[str, tuple[list, list]]
    graph: ExtractedGraph
    hierarchy: Hierarchy | None
    reports: dict[int, list[Report]]
    answers: dict[str, str] = field(repr=False)
    config: dict
    work: dict = field(default_factory=dict)


class _Reusing:
    """``llm`` behind the answers already written: a prompt seen before is answered from ``answers`` (no call);
    a new one is asked and kept. ``calls`` counts the calls made, ``reused`` the prompts answered from the old
    index's ``answers``, ``repeated`` those asked earlier in this same build (a community that recurs unchanged one
    level down has the same prompt: one call serves both)."""

    def __init__(self, llm: LLM, answers: Mapping[str, str]):
        self.llm, self.answers, self.old = llm, dict(answers), frozenset(answers)
        self.calls = self.reused = self.repeated = 0
        self.concurrency = 1  # one at a time: the answers kept do not depend on the order calls finish

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        if prompt in self.old:
            self.reused += 1
        elif prompt in self.answers:
            self.repeated += 1
        else:
            self.answers[prompt] = self.llm.complete(prompt, max_tokens=max_tokens)
            self.calls += 1
        return self.answers[prompt]


class _Counting:
    def __init__(self, llm: LLM):
        self.llm, self.calls = llm, 0

    def complete(self, prompt: str, *, max_tokens: int) -> str:
        self.calls += 1
        return self.llm.complete(prompt, max_tokens=max_tokens)


def _extract(pairs, llm: LLM, config: dict) -> tuple[dict, int]:
    counting, units = _Counting(llm), {}
    for doc_id, text in pairs:
        rounds = extract_records(text, counting, entity_types=config["entity_types"], gleanings=config["gleanings"])
        units[doc_id] = ([e for r in rounds for e in r["entities"]], [x for r in rounds for x in r["relationships"]])
    return units, counting.calls


def _finish(units: dict, llm: LLM, config: dict, answers: Mapping[str, str], extraction_calls: int) -> GraphIndex:
    graph = merge_records([(d, *units[d]) for d in sorted(units)], gazetteer=config["gazetteer"])
    hier = hierarchical_leiden(to_entity_graph(graph), max_cluster_size=config["max_cluster_size"],
                               seed=config["seed"])
    reusing = _Reusing(llm, answers)
    reps = graph_reports(hier, graph, reusing, budget=config["report_budget"], concurrency=1)
    n_reports = sum(map(len, reps.values()))
    if n_reports != reusing.calls + reusing.reused + reusing.repeated:  # one prompt per report, or the counts lie
        raise RuntimeError(f"{n_reports} reports from {reusing.calls + reusing.reused + reusing.repeated} prompts")
    return GraphIndex(units, graph, hier, reps, reusing.answers, config,
                      {"extraction_calls": extraction_calls, "report_calls": reusing.calls,
                       "reports_reused": reusing.reused, "reports_repeated": reusing.repeated, "units": len(units)})


def build_index(docs, llm: LLM, *, entity_types: Sequence[str], gazetteer: Mapping | None = None,
                gleanings: int = 1, max_cluster_size: int = 10, seed: int = 0, report_budget: int = 800
                ) -> GraphIndex:
    """Build a :class:`GraphIndex` of ``docs`` from scratch: every text unit extracted (the prompt and up to
    ``gleanings`` rounds, :func:`~cookbook.index.graph_extraction.extract_records`), merged through ``gazetteer``,
    clustered (:func:`~cookbook.index.hierarchy.hierarchical_leiden` with ``max_cluster_size`` and ``seed``) and
    reported (:func:`~cookbook.index.reports.graph_reports` within ``report_budget``).

    >>> from cookbook.llm import ExtractiveLLM
    >>> gaz, types = {"Ada": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"}
    >>> idx = build_index({"d1": "Ada works for Acme."}, ExtractiveLLM(gazetteer=gaz, types=types),
    ...                   entity_types=["org", "person"], gazetteer=gaz)
    >>> [e.id for e in idx.graph.entities], idx.work["extraction_calls"], idx.work["report_calls"]
    (['E1', 'E2'], 2, 1)
    """
    config = {"entity_types": list(entity_types), "gazetteer": gazetteer, "gleanings": integer(gleanings, "gleanings",
                                                                                                at_least=0),
              "max_cluster_size": integer(max_cluster_size, "max_cluster_size", at_least=2),
              "seed": integer(seed, "seed", at_least=0), "report_budget": integer(report_budget, "report_budget")}
    units, calls = _extract(doc_pairs(docs), llm, config)
    return _finish(units, llm, config, {}, calls)


def update_index(index: GraphIndex, docs, llm: LLM) -> GraphIndex:
    """A new :class:`GraphIndex`: ``index`` with the text units ``docs`` added (``index`` itself is left as it
    was). Only the new units are extracted; records are merged again, communities recomputed, and a report is
    written only when its prompt is new. A doc id already in the index is refused (an update adds text units; it
    does not edit them).

    >>> update_index(GraphIndex({"d1": ([], [])}, ExtractedGraph([], []), None, {}, {}, {}), {"d1": "x"}, None)
    Traceback (most recent call last):
    ...
    ValueError: text units already in the index: ['d1'] (an update adds new text units only)
    """
    if not isinstance(index, GraphIndex):
        raise TypeError(f"index must be a GraphIndex (build_index), got {type(index).__name__}")
    pairs = doc_pairs(docs)
    again = sorted(d for d, _ in pairs if d in index.units)
    if again:
        raise ValueError(f"text units already in the index: {again[:5]} (an update adds new text units only)")
    units, calls = _extract(pairs, llm, index.config)
    return _finish({**index.units, **units}, llm, index.config, index.answers, calls)


def same_index(a: GraphIndex, b: GraphIndex) -> bool:
    """Whether two indexes hold the same graph, communities and reports (the ``work`` and kept answers aside).

    >>> same_index(GraphIndex({}, ExtractedGraph([], []), None, {}, {}, {}),
    ...            GraphIndex({}, ExtractedGraph([], []), None, {}, {}, {}))
    True
    """
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, GraphIndex):
            raise TypeError(f"{name} must be a GraphIndex (build_index), got {type(x).__name__}")
    if a.graph.entities != b.graph.entities or a.graph.relationships != b.graph.relationships:
        return False
    if (a.hierarchy is None) != (b.hierarchy is None):
        return False
    if a.hierarchy is not None and (len(a.hierarchy.levels) != len(b.hierarchy.levels) or not all(
            np.array_equal(x, y) for x, y in zip(a.hierarchy.levels, b.hierarchy.levels))):
        return False
    return a.reports == b.reports
