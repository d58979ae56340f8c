"""The two recorded real-model runs under data/ and the GraphRAG index reader (issue 31).

Independent checks: the chunk each of nano-graphrag's extraction answers was filed under (recovered exactly from
nano's cache keys, data/christmas-carol/prepare.py) is checked here against the answers' own words (every name
the model extracted is looked up in its unit's text, and a content-only assignment must agree); the parser's
recovery is measured against a count of record openings made without it; the Dulce JSON rendering against the
parquet tables GraphRAG wrote, read by pyarrow.
"""

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from cookbook.data import corpus, graphrag_index, recorded
from cookbook.index import recorded as irec
from cookbook.llm import parse

DATA = Path(__file__).resolve().parents[1] / "data"
NAME = re.compile(r'\(\s*"?entity"?\s*<\|>\s*"?([^"<]+?)"?\s*<\|>', re.I)


@pytest.fixture(scope="module")
def carol():
    return recorded.load_recorded("christmas-carol")


@pytest.fixture(scope="module")
def dulce():
    return recorded.load_recorded("dulce")


def test_both_recordings_load_through_load_corpus_with_licences(carol, dulce):
    assert corpus.load_corpus("christmas-carol").documents == carol.documents
    assert corpus.load_corpus("dulce", "ci").index.same_tables(dulce.index)
    for r in (carol, dulce):
        assert r.licence.read_text().lstrip().startswith("MIT License")
    assert len(carol.documents) == 39 and len(dulce.documents) == 5
    steps = Counter(a.step for a in carol.answers)
    assert steps == {"extract_graph": 39, "glean": 39, "community_report": 101, "summarize_descriptions": 1,
                     "global_search": 1}
    with pytest.raises(ValueError, match="unknown dulce scale 'huge'"):
        corpus.load_corpus("dulce", "huge")


@pytest.mark.parametrize("name", ["dulce", "christmas-carol"])
@pytest.mark.parametrize("scale", ["large", "tiny", "CI", 1])
def test_a_recording_is_one_size_and_refuses_a_scale_it_does_not_have(name, scale):
    """load_corpus("dulce", "large") once returned the same five text units as "ci": a silent wrong size."""
    with pytest.raises(ValueError, match=f"unknown {name} scale {scale!r}: recording {name!r} is one size"):
        corpus.load_corpus(name, scale)
    assert corpus.load_corpus(name, "class").documents == corpus.load_corpus(name, "ci").documents


def test_the_gutenberg_header_and_licence_are_stripped(carol):
    book = (DATA / "christmas-carol" / "book.txt").read_text(encoding="utf-8")
    assert "*** START OF" not in book and "*** END OF" not in book and "Gutenberg" not in book
    assert book.lstrip().startswith("Produced by") and "Tiny Tim" in book[-5000:]
    for d in carol.documents:
        assert d.text in book


def test_every_unit_has_one_extraction_and_one_gleaning_answer_whose_names_its_text_holds(carol):
    found = total = 0
    for d in carol.documents:
        answers = carol.answers_of(d.id)
        assert [a.step for a in answers] == ["extract_graph", "glean"]
        names = {n.strip() for a in answers for n in NAME.findall(a.text)}
        found += sum(n.lower() in d.text.lower() for n in names)
        total += len(names)
    # The names a model writes are often not verbatim (a title, "Ebenezer Scrooge" for "Scrooge"): most are.
    assert total > 500 and found / total > 0.7, (found, total)


def test_a_content_only_assignment_agrees_with_the_recovered_chunks(carol):
    """Each answer's description words (names left out), weighted by rarity, placed two to a unit by an optimal
    assignment: no cache key, no token window. It must put most answers where the keys did."""
    units = carol.documents
    words = [set(re.findall(r"[a-z]{4,}", d.text.lower())) for d in units]
    df = Counter(w for ws in words for w in ws)
    answers = [a for a in carol.answers if a.step in ("extract_graph", "glean")]
    score = np.zeros((len(answers), len(units)))
    for i, a in enumerate(answers):
        names = {w for n in NAME.findall(a.text) for w in re.findall(r"[a-z]{4,}", n.lower())}
        mine = set(re.findall(r"[a-z]{4,}", a.text.lower())) - names
        for j, ws in enumerate(words):
            score[i, j] = sum(math.log(len(units) / df[w]) for w in mine & ws)
    rows, cols = linear_sum_assignment(-np.repeat(score, 2, axis=1))
    unit_of = {a.key: units[c // 2].id for a, c in zip(answers, cols[np.argsort(rows)])}
    agree = sum(unit_of[a.key] == a.unit for a in answers)
    assert agree >= 0.75 * len(answers), agree


def test_the_parser_recovers_the_records_gpt4o_wrote(carol):
    rec = irec.recorded_extraction(carol)
    assert rec.written["entity"] > 500 and rec.written["relationship"] > 400
    assert rec.recovered == {"entity": rec.written["entity"], "relationship": rec.written["relationship"] - 1}
    assert [why for _, _, why in rec.problems if "field" in why] == [
        "relationship record needs source, target, relation, description and strength, got 3 field(s)"]


def test_records_written_as_a_numbered_list_or_as_relation_are_read():
    """GPT-4o's answers for units CC20 and CC09: the parser before issue 31 skipped these records."""
    text = ('**Entities:**\n1. ("entity"<|>"Belle"<|>"person"<|>"A young woman.")##\n'
            '- ("entity"<|>"Fezziwig"<|>"person"<|>"A merchant.")##\n'
            '("relation"<|>"Belle"<|>"Fezziwig"<|>"Both at the ball."<|>4)<|COMPLETE|>')
    ents, rels, problems = parse.parse_extraction(text)
    assert [e.name for e in ents] == ["Belle", "Fezziwig"]
    assert [(r.source, r.target, r.strength) for r in rels] == [("Belle", "Fezziwig", 4.0)]
    assert [why for _, why in problems] == ["not a record: '**Entities:**'"]


def test_count_written_counts_openings_not_parsed_records():
    assert irec.count_written('("entity"<|>A<|>person<|>x\n("relation"<|>A<|>B<|>y<|>1)') == {"entity": 1,
                                                                                              "relationship": 1}


def test_dulce_graph_hierarchy_and_reports_follow_graphrags_tables(dulce):
    idx = dulce.index
    g = irec.graph_of_index(idx)
    assert len(g.relationships) == len(idx.relationships)
    names = {e.id: e.name for e in g.entities}
    for i, r in enumerate(idx.relationships):
        rel = g.relationships[r.human_readable_id]
        assert (names[rel.source], names[rel.target], rel.weight) == (r.source, r.target, r.weight), i
    hc = irec.communities_of_index(idx, g)
    ids = [e.id for e in g.entities]
    of_uuid = {e.id: irec.entity_id(e.human_readable_id) for e in idx.entities}
    for c in idx.communities:  # every GraphRAG community is one community of the series' hierarchy at its level
        pos = hc.numbers[c.level].index(c.community)
        members = {ids[i] for i in np.flatnonzero(hc.hierarchy.levels[c.level] == pos)}
        assert members == {of_uuid[u] for u in c.entity_ids}, c.community
    reports = irec.reports_of_index(idx, hc, g)
    assert sum(map(len, reports.values())) == len(idx.reports) == 10
    cited = {s for rs in reports.values() for r in rs for f in r.findings for s in f.sources}
    assert cited and cited <= set(ids) | {f"r{i}" for i in range(len(g.relationships))}


def test_citations_per_table():
    assert irec.citations("[Data: Entities (1, 2, +more); Claims (3)] and [Data: Entities (2, 5)]") == {
        "entities": ["1", "2", "5"], "claims": ["3"]}


def test_the_dulce_parquet_folder_read_by_the_reader_equals_the_committed_corpus(dulce):
    pytest.importorskip("pyarrow", reason="the reader's parquet test needs the 'graphrag' extra (pyarrow)")
    idx = graphrag_index.read_graphrag_index(DATA / "dulce" / "output")
    assert idx.same_tables(dulce.index)
    ids, vectors = idx.embeddings["community_full_content"]
    assert len(ids) == 10 and {len(v) for v in vectors} == {3072}
    assert set(ids) == {r.id for r in idx.reports}


def test_a_missing_table_column_or_an_old_schema_is_one_clear_error(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="needs the 'graphrag' extra (pyarrow)")
    import shutil
    (tmp_path / "create_final_entities.parquet").write_bytes(b"")
    with pytest.raises(ValueError, match="GraphRAG v0 output"):
        graphrag_index.read_graphrag_index(tmp_path)
    new = tmp_path / "v3"
    shutil.copytree(DATA / "dulce" / "output", new)
    (new / "relationships.parquet").unlink()
    with pytest.raises(ValueError, match="no relationships.parquet"):
        graphrag_index.read_graphrag_index(new)
    shutil.copy(DATA / "dulce" / "output" / "relationships.parquet", new)
    table = pq.read_table(new / "entities.parquet").drop_columns(["degree"])
    pq.write_table(table, new / "entities.parquet")
    with pytest.raises(ValueError, match="lacks column.*degree.*unknown GraphRAG output schema"):
        graphrag_index.read_graphrag_index(new)


def test_a_missing_pyarrow_is_one_error_naming_the_extra(monkeypatch):
    import builtins
    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError("No module named 'pyarrow'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(ImportError, match=r"pip install pyarrow .*\[graphrag\]"):
        graphrag_index.read_graphrag_index(DATA / "dulce" / "output")


def test_write_index_json_never_overwrites(tmp_path, dulce):
    graphrag_index.write_index_json(dulce.index, tmp_path / "x")
    with pytest.raises(FileExistsError):
        graphrag_index.write_index_json(dulce.index, tmp_path / "x")


def test_units_file_is_consistent():
    units = [json.loads(x) for x in (DATA / "christmas-carol" / "units.jsonl").read_text().splitlines()]
    assert [u["chunk"] for u in units] == list(range(39))  # chunks 39-41 are the licence: not committed
    assert [u["id"] for u in units if u["cut"]] == ["CC00", "CC37", "CC38"]


def test_a_graphrag_index_runs_through_ppr(dulce):
    """PPR over a GraphRAG index with the series' retriever, end to end: the passage graph from the index's text
    units and its entity names matched in them (that it runs and ranks units, not a measure of retrieval)."""
    from cookbook.data.gazetteer import gazetteer_mentions
    from cookbook.query.hipporag import HippoRetriever

    g = irec.graph_of_index(dulce.index)
    gaz = {e.name: [e.id] for e in g.entities}
    mentions = gazetteer_mentions(dulce.documents, gaz)
    assert {m.entity_id for m in mentions} >= {"E000", "E003"}  # ALEX MERCER, SAM RIVERA are named in the text
    hippo = HippoRetriever.build(dulce.documents, mentions, [e.id for e in g.entities], gaz, dense="lsa")
    ranked = hippo.retrieve("Where does Sam Rivera analyse the intercepted signals?", 2)
    assert len(ranked) == 2 and all(r in dulce.doc_index for r in ranked)
    assert "Rivera" in dulce.doc_index[ranked[0]].text
