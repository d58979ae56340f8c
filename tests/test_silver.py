"""The silver comparisons (issue 31): scored against references the scorer does not share.

- GPT-4o's own answers replayed through the series' extraction pipeline must score (almost) 1 against the silver
  graph built from the same answers: the scorer, the name resolution and the pipeline agree end to end;
- the silver graph per unit equals what GraphRAG's text_units table lists (Dulce), and what a regex over the raw
  answers finds (A Christmas Carol), neither read by the code under test;
- per-unit precision and recall equal cookbook.metrics.precision_recall on the same sets.
"""

import re
from pathlib import Path

import numpy as np
import pytest

from cookbook.data.recorded import load_recorded
from cookbook.index import silver
from cookbook.index.recorded import entity_id
from cookbook.llm import LLMUnavailable, RecordedLLM
from cookbook.llm.prompts import prompt
from cookbook.metrics import precision_recall


@pytest.fixture(scope="module")
def carol():
    return load_recorded("christmas-carol")


@pytest.fixture(scope="module")
def dulce():
    return load_recorded("dulce")


def test_replaying_gpt4o_scores_one_against_its_own_silver_graph(carol):
    s = silver.silver_scores(carol, RecordedLLM(carol))
    assert s.scores["stand-in"]["entity_recall"].min() == 1.0
    assert s.scores["stand-in"]["relationship_recall"].min() == 1.0
    assert s.mean("stand-in", "entity_precision").mean > 0.99  # a name whose spelling folds onto another's
    assert s.mean("stand-in", "relationship_precision").mean > 0.99


def test_dulce_silver_units_are_graphrags_text_unit_lists(dulce):
    """GraphRAG's text_units table lists each unit's entities and relationships (the silver reads the entities'
    and relationships' own lists instead)."""
    ref = silver.silver_reference(dulce)
    of_uuid = {e.id: entity_id(e.human_readable_id) for e in dulce.index.entities}
    rel_ids = {r.id for r in dulce.index.relationships}
    pq = pytest.importorskip("pyarrow.parquet", reason="GraphRAG's text_units table is read with the 'graphrag' extra")
    rows = pq.read_table(Path(__file__).resolve().parents[1] / "data" / "dulce" / "output" /
                         "text_units.parquet").to_pylist()
    for row in rows:
        assert ref.entities[row["id"]] == {of_uuid[e] for e in row["entity_ids"]}, row["id"]
        assert len(ref.pairs[row["id"]]) <= len(set(row["relationship_ids"]) & rel_ids)


def test_christmas_carol_silver_units_are_the_names_the_answers_write(carol):
    ref = silver.silver_reference(carol)
    opening = re.compile(r'\(\s*"?entity"?\s*<\|>\s*"?([^"<]*?)"?\s*<\|>', re.I)
    for d in carol.documents:
        names = {n for a in carol.answers_of(d.id) for n in opening.findall(a.text)}
        keys = {"name:" + " ".join(re.findall(r"\w+", n.lower())) for n in names} - {"name:"}
        assert ref.entities[d.id] == keys, d.id


def test_per_unit_scores_are_precision_and_recall(dulce):
    s = silver.silver_scores(dulce)
    ref = silver.silver_reference(dulce)
    graph = s.graph
    for i, u in enumerate(s.units):
        found = {e.id for e in graph.entities if u in e.doc_ids}
        pr = precision_recall(found, ref.entities[u])
        assert np.isclose(s.scores["stand-in"]["entity_recall"][i], pr["recall"])
        assert np.isclose(s.scores["stand-in"]["entity_precision"][i], pr["precision"])
    assert set(s.scores["gazetteer"]) == {"entity_recall", "entity_precision"}


def test_report_overlap_counts_the_real_reports_citations(dulce):
    rows = silver.report_overlap(dulce.index)
    for row, rep in zip(rows, sorted(dulce.index.reports, key=lambda r: (r.level, r.community))):
        cited = set()
        for _, explanation in rep.findings:
            for ref in re.findall(r"Entities \(([^)]*)\)", explanation):
                cited |= {x.strip() for x in ref.split(",") if x.strip().isdigit()}
        assert row["cited"] == len(cited) and row["real_title"] == rep.title
        assert 0 <= row["named"] <= row["cited"]


def test_the_replay_refuses_what_it_was_not_recorded_for(carol):
    llm = RecordedLLM(carol)
    with pytest.raises(LLMUnavailable, match="no 'map' prompt|'map'"):
        llm.complete(prompt("map", question="Q?", reports="[R1] x"), max_tokens=50)
    with pytest.raises(LLMUnavailable, match="own text units"):
        llm.complete(prompt("extract_graph", entity_types="person", text="Not in the book."), max_tokens=50)
