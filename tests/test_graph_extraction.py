"""Graph extraction (issue 18, part 1): the tolerant parser, merging, gleaning, the typed graph, and the
OpenAI-compatible backend running the same prompt against the fake server. Scores are held against the
corpus's gold facts, which come from the world generator / the Factbook's structured fields, not from the
extractor."""

import itertools
import random

import numpy as np
import pytest

from cookbook import llm
from cookbook.data.corpus import load_corpus
from cookbook.index import graph_extraction as ge
from cookbook.llm import parse, prompts, tokens

from .fake_openai import FakeServer

KEY = "sk-test-graph-extraction-0123456789"
GAZ = {"Ada Selel": ["E1"], "Selel": ["E1", "E3"], "Acme": ["E2"], "Bo Selel": ["E3"], "Brask": ["E4"]}
TYPES = {"E1": "person", "E2": "org", "E3": "person", "E4": "place"}
ENTITY_TYPES = ["person", "org", "place"]


@pytest.fixture(scope="module")
def world():
    return load_corpus("world", "ci")


def stand_in(corpus, max_records=5):
    return llm.ExtractiveLLM(gazetteer=corpus.gazetteer(), types={e.id: e.type for e in corpus.entities},
                             max_records=max_records)


def test_parser_reads_both_formats_and_reports_every_bad_line():
    text = "\n".join([
        '("entity"<|>Ada Selel<|>person<|>An engineer.)',
        '{"kind": "entity", "name": "Acme", "type": "ORG", "description": "A firm."}',
        "Sure, here are the records:",
        '("relationship"<|>Ada Selel<|>Acme<|>Works For<|>Ada works for Acme.<|>8)##("entity"<|>Brask<|>place<|>x)',
        '("relationship"<|>Ada Selel<|>Acme<|>knows<|>friends<|>very)',
        '("relationship"<|>Ada Selel<|>Acme<|>A note.<|>3)',  # GraphRAG's form: no relation type
        '{"kind": "relationship", "source": "Ada Selel"}',
        '{"kind": "entity", "name": "Bo",',
        '("event"<|>Fair<|>event<|>x)',
        '("entity"<|>Bo)',
        "<|COMPLETE|>",
    ])
    ents, rels, problems = parse.parse_extraction(text)
    assert [(e.name, e.type) for e in ents] == [("Ada Selel", "person"), ("Acme", "org"), ("Brask", "place")]
    assert [(r.relation, r.strength) for r in rels] == [("works_for", 8.0), ("", 3.0)]
    assert [line for line, _ in problems] == [3, 5, 7, 8, 9, 10]
    why = dict(problems)
    assert "not a number" in why[5] and "lacks target" in why[7] and "malformed JSON" in why[8]
    assert "unknown record kind 'event'" in why[9] and "needs a name and a type" in why[10]


def test_parser_reports_a_record_cut_before_its_closing_parenthesis():
    # An answer cut off mid-record: the cut field would be kept as if whole ("Mureis Fa"), so nothing of it is.
    whole = '("entity"<|>Mureis Faivo<|>person<|>Mureis Faivo lives in Trastal.)'
    cuts = (whole[:-1], '("entity"<|>Mureis Faivo<|>person<|>Mureis Fa',
            '("relationship"<|>Ada<|>Acme<|>works_for<|>x<|>9')
    for cut in cuts:
        ents, rels, problems = parse.parse_extraction(whole + "\n" + cut)
        assert [e.name for e in ents] == ["Mureis Faivo"] and rels == []
        assert [line for line, _ in problems] == [2] and "truncated" in problems[0][1], cut
    # Without the parentheses a line is still read (some models drop them); only an opened, unclosed one is cut.
    ents, _, _ = parse.parse_extraction('"entity"<|>Ada<|>person<|>An engineer.')
    assert ents == [parse.EntityRecord("Ada", "person", "An engineer.")]


def test_parser_never_raises_on_garbage():
    rng = random.Random(0)
    alphabet = ['("entity"', '("relationship"', "<|>", ")", "{", "}", '"kind"', ":", "\n", "##", "x", "1", " "]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        ents, rels, problems = parse.parse_extraction(text)
        assert all(isinstance(line, int) and why for line, why in problems)


def test_format_and_parse_round_trip():
    ents = [parse.EntityRecord("Ada Selel", "person", "An engineer."), parse.EntityRecord("Acme", "org", "")]
    rels = [parse.RelationshipRecord("Ada Selel", "Acme", "works_for", "Ada works for Acme.", 7.5)]
    assert parse.parse_extraction(parse.format_records(ents, rels)) == (ents, rels, [])


def test_merge_resolves_by_context_sums_weights_and_ignores_unit_order():
    units = [
        ("D2", [parse.EntityRecord("Bo Selel", "person", "Bo paints."),
                parse.EntityRecord("Selel", "person", "Selel.")],
         [parse.RelationshipRecord("Selel", "Acme", "works_for", "Selel works for Acme.", 4)]),
        ("D1", [parse.EntityRecord("Ada Selel", "person", "Ada codes.")],
         [parse.RelationshipRecord("Ada Selel", "Acme", "works_for", "Ada works for Acme.", 9),
          parse.RelationshipRecord("Ada Selel", "Selel", "knows", "Ada knows herself?", 1)]),
        ("D3", [parse.EntityRecord("Selel", "person", "Who?")], []),
    ]
    g = ge.merge_records(units, gazetteer=GAZ)
    ids = [e.id for e in g.entities]
    # "Selel" is E3 in D2 (Bo Selel named there), E1 in D1 (Ada Selel), unresolvable in D3.
    assert ids == ["E1", "E2", "E3", "name:selel"]
    assert [(r.source, r.predicate, r.target, r.weight, r.doc_ids) for r in g.relationships] == [
        ("E1", "works_for", "E2", 9.0, ("D1",)), ("E3", "works_for", "E2", 4.0, ("D2",))]  # E1 knows E1 dropped
    assert g.entities[2].description == "Bo paints. Selel."  # both D2 records are E3
    for perm in itertools.permutations(units):
        assert ge.merge_records(list(perm), gazetteer=GAZ) == g


def test_a_merged_entity_keeps_its_full_name_over_an_alias_on_a_tie():
    """Named "Deirum M9" in one unit and by its alias "Deirum" in another (a namesake's unit), the merged entity is
    "Deirum M9", as notebook 01 shows it (02 printed "Deirum", the alias sorting first)."""
    units = [("D1", [parse.EntityRecord("Deirum M9", "product", "A car.")], []),
             ("D2", [parse.EntityRecord("Deirum", "product", "An inn.")], [])]
    g = ge.merge_records(units, gazetteer={"Deirum M9": ["P1"], "Deirum": ["P1"]})
    assert [(e.id, e.name) for e in g.entities] == [("P1", "Deirum M9")]
    g = ge.merge_records(units + [("D3", [parse.EntityRecord("Deirum", "product", "")], [])],
                         gazetteer={"Deirum M9": ["P1"], "Deirum": ["P1"]})
    assert g.entities[0].name == "Deirum"  # the most frequent name still wins


def test_description_merge_keeps_unique_sentences_in_doc_order_within_budget():
    units = [("D2", [parse.EntityRecord("Acme", "org", "It grew. It is old.")], []),
             ("D1", [parse.EntityRecord("Acme", "org", "It is old. It makes tools.")], [])]
    full = ge.merge_records(units, gazetteer=GAZ).entities[0].description
    assert full == "It is old. It makes tools. It grew."
    short = ge.merge_records(units, gazetteer=GAZ, description_tokens=tokens.count_tokens("It is old.")).entities[0]
    assert short.description == "It is old."


def test_to_entity_graph_matches_a_brute_force_sum():
    rng = random.Random(1)
    ents = [ge.ExtractedEntity(f"E{i}", f"n{i}", "person", "", ("D1",)) for i in range(6)]
    rels = []
    for _ in range(15):
        a, b = rng.sample(range(6), 2)
        rels.append(ge.Relationship(f"E{a}", f"E{b}", rng.choice(["knows", "works_for"]), "", rng.randint(1, 9),
                                    ("D1",)))
    eg = ge.to_entity_graph(ge.ExtractedGraph(ents, rels))
    brute = np.zeros((6, 6))
    for r in rels:
        i, j = int(r.source[1:]), int(r.target[1:])
        brute[i, j] += r.weight
        brute[j, i] += r.weight
    assert np.allclose(eg.adjacency.toarray(), brute) and eg.ids == [e.id for e in ents]


def test_stand_in_against_gold_facts(world):
    gaz = world.gazetteer()
    g = ge.extract_graph(world.documents, stand_in(world, max_records=50), entity_types=list(world.community_types),
                         gazetteer=gaz, gleanings=0)
    # On the phrasings it is built from (set A) the stand-in is precise and finds most facts; on set B, the
    # world's other wordings, it finds none: it matches wordings, it does not read (tests/test_datasets.py).
    seen = ge.score_relations(g, [f for f in world.facts if f.phrasing == "A"])
    unseen = ge.score_relations(g, [f for f in world.facts if f.phrasing == "B"])
    assert seen["precision"] >= 0.9 and seen["recall"] >= 0.8, seen
    assert unseen["recall"] == 0.0 and seen["tp"] == ge.score_relations(g, world.facts)["tp"], unseen
    assert g.problems == []
    assert g == ge.extract_graph(world.documents, stand_in(world, max_records=50),
                                 entity_types=list(world.community_types), gazetteer=gaz, gleanings=0)


def test_gleaning_recovers_what_the_output_cap_left_out(world):
    # At the stand-in's default cap gleaning adds recall; without a record cap nothing is cut, nothing is added.
    gaz, types = world.gazetteer(), list(world.community_types)
    recall = {cap: [ge.score_relations(ge.extract_graph(world.documents, stand_in(world, max_records=cap),
                                                        entity_types=types, gazetteer=gaz, gleanings=k),
                                       world.facts)["recall"] for k in range(3)]
              for cap in (5, None)}
    assert recall[5][0] < recall[5][1] <= recall[5][2] <= recall[None][0] == recall[None][2]


def test_stand_in_needs_no_gold_and_reports_no_relation_it_cannot_phrase():
    llm_ = llm.ExtractiveLLM(gazetteer=GAZ, types=TYPES)
    g = ge.extract_graph({"D1": "Ada Selel and Bo Selel discussed Acme. Ada Selel lives in Brask."}, llm_,
                         entity_types=ENTITY_TYPES, gazetteer=GAZ)
    assert [(r.source, r.predicate, r.target) for r in g.relationships] == [("E1", "lives_in", "E4")]


def test_ledger_counts_extraction_and_gleaning_calls():
    inner = llm.ExtractiveLLM(gazetteer=GAZ, types=TYPES, max_records=1)
    ledger = llm.TokenLedger(inner)
    ge.extract_graph({"D1": "Ada Selel works for Acme."}, inner, entity_types=ENTITY_TYPES, gazetteer=GAZ,
                     gleanings=2, ledger=ledger)
    assert ledger.by_task["extract_graph"]["calls"] == 1 and ledger.by_task["glean"]["calls"] == 2


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("COOKBOOK_TEST_KEY", KEY)
    return "COOKBOOK_TEST_KEY"


def client(url, env):
    return llm.OpenAICompatibleLLM("fake-model", base_url=url, api_key_env=env, max_retries=0)


def test_openai_backend_runs_the_same_prompt_and_gets_the_same_graph(key_env):
    docs = {"D1": "Ada Selel works for Acme.", "D2": "Bo Selel lives in Brask. Acme is headquartered in Brask."}
    offline = llm.ExtractiveLLM(gazetteer=GAZ, types=TYPES, max_records=2)
    expected = ge.extract_graph(docs, offline, entity_types=ENTITY_TYPES, gazetteer=GAZ, gleanings=2)
    with FakeServer([("extractive", offline)]) as srv:
        got = ge.extract_graph(docs, client(srv.url, key_env), entity_types=ENTITY_TYPES, gazetteer=GAZ, gleanings=2)
    assert got == expected and len(got.relationships) == 3
    first = srv.requests[0]["body"]["messages"][0]["content"]
    assert first == prompts.prompt("extract_graph", entity_types=", ".join(ENTITY_TYPES), text=docs["D1"])
    assert prompts.EXTRACT_GRAPH_PROMPT in first


def test_openai_backend_malformed_and_partial_outputs_survive(key_env):
    malformed = "I found these:\n(\"entity\"<|>Ada Selel<|>person<|>An engineer.)\n" \
                "(\"relationship\"<|>Ada Selel<|>Acme<|>works_for<|>Ada works for Acme.<|>strong)\n{\"kind\": \"ent"
    partial = '("entity"<|>Acme<|>org<|>A firm.)\n("relationship"<|>Ada Selel<|>Acme<|>works_f'
    with FakeServer([("ok", malformed), ("empty", None), ("ok", partial), ("ok", "<|COMPLETE|>")]) as srv:
        g = ge.extract_graph({"D1": "Ada Selel works for Acme.", "D2": "Acme."}, client(srv.url, key_env),
                             entity_types=ENTITY_TYPES, gazetteer=GAZ, gleanings=1)
    assert [e.id for e in g.entities] == ["E1", "E2"] and g.relationships == []
    assert [(d, line) for d, line, _ in g.problems] == [("D1", 1), ("D1", 3), ("D1", 4), ("D1", 0), ("D2", 2)]
    assert "not a number" in g.problems[1][2] and "malformed JSON" in g.problems[2][2]
    assert g.problems[3][2] == "empty completion in round 1"  # the empty gleaning answer is a problem too
    assert "truncated" in g.problems[4][2]  # cut mid-record
