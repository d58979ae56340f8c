"""Extraction answers read the way real models write them (issue 22): the layouts Microsoft GraphRAG's and
nano-graphrag's prompt examples teach and the ways GPT-4o deviates from them, and the stand-in's own records
round-tripping through :func:`cookbook.llm.parse.format_records`.

The fixtures in tests/fixtures/extraction/ were written for this test (their text is ours, not those projects'):
each ``<name>.txt`` is one answer in one layout, and ``<name>.json`` beside it lists, by construction, the
records the answer holds, in order, as the text means them (HTML entities decoded, quotes removed, a hard-wrapped
record joined with a space), and the prose lines the parser must report. ``test_fixture_counts`` recounts the
records from the text with patterns of its own, so a hand edit that breaks one or the other shows.
"""

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cookbook import llm
from cookbook.index import graph_extraction as ge
from cookbook.llm import parse

FIXTURES = Path(__file__).parent / "fixtures" / "extraction"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.txt"))
DEEP = ["[" * 1000 + "]" * 1000, '{"a": ' * 1000 + "1" + "}" * 1000, "[" * 100_000]


def fixture(name):
    text = (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")
    expected = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return text, expected


def as_tuples(ents, rels):
    return ([(e.name, e.type, e.description) for e in ents],
            [(r.source, r.target, r.relation, r.description, r.strength) for r in rels])


def test_fixtures_cover_dozens_of_records_in_every_layout():
    assert len(NAMES) == 9
    counts = [fixture(n)[1] for n in NAMES]
    assert sum(len(c["entities"]) for c in counts) == 88 and sum(len(c["relationships"]) for c in counts) == 81


@pytest.mark.parametrize("name", NAMES)
def test_fixture_counts(name):
    """Records counted from the text alone: a kind before a delimiter, a JSON "kind", or (in a JSON object
    with entity and relationship lists) a "name" or "source" key."""
    text, expected = fixture(name)
    kinds = Counter(k.lower() for k in re.findall(r'"?\b(entity|relationship)\b"?\s*<\|>', text, re.I))
    kinds += Counter(re.findall(r'"kind":\s*"(entity|relationship)"', text))
    if not kinds:
        kinds = Counter(entity=len(re.findall(r'"name":', text)), relationship=len(re.findall(r'"source":', text)))
    assert (kinds["entity"], kinds["relationship"]) == (len(expected["entities"]), len(expected["relationships"]))


@pytest.mark.parametrize("name", NAMES)
def test_parser_recovers_every_record_of_each_fixture(name):
    # Before issue 22 the parser recovered 24 of these 88 entities and 22 of the 81 relationships.
    text, expected = fixture(name)
    ents, rels, problems = parse.parse_extraction(text)
    got_e, got_r = as_tuples(ents, rels)
    assert got_e == [tuple(e) for e in expected["entities"]]
    assert got_r == [tuple(r) for r in expected["relationships"]]
    assert [line for line, _ in problems] == expected["prose_lines"]
    assert all(why.startswith("not a record") for _, why in problems)


def test_an_html_entity_names_the_same_entity_as_its_character():
    ents, rels, problems = parse.parse_extraction('("entity"<|>AT&amp;T<|>organization<|>A carrier &#38; more.)\n'
                                               '("entity"<|>AT&T<|>organization<|>A carrier.)\n'
                                               '("relationship"<|>Ada<|>AT&#x26;T<|>Ada calls AT&amp;T.<|>4)')
    assert [e.name for e in ents] == ["AT&T", "AT&T"] and ents[0].description == "A carrier & more."
    assert (rels[0].target, rels[0].description, problems) == ("AT&T", "Ada calls AT&T.", [])
    g = ge.merge_records([("D1", ents, rels)])
    assert [e.id for e in g.entities] == ["name:ada", "name:at t"]


@pytest.mark.parametrize("answer_text, strength", [
    ('("relationship"<|>Ada<|>Acme<|>Ada works for Acme.<|>1)<|complete|>', 1.0),  # lower-case marker glued
    ('("relationship"<|>Ada<|>Acme<|>Ada works for Acme.<|>7)<|COMPLETE|>', 7.0),
    ('"relationship"<|>Ada<|>Acme<|>Ada works for Acme.<|>6)', 6.0),  # opening parenthesis dropped: "6)"
    ('("relationship"<|>"Ada"<|>"Acme"<|>"Ada works for Acme."<|>"8")##', 8.0),  # quoted, nano-graphrag
    ('("relationship"<|>Ada<|>Acme<|>Ada works for Acme.<|>5),', 5.0),  # records listed with commas
    ('##("relationship"<|>Ada<|>Acme<|>Ada works for Acme.<|>3', 3.0),  # no ")" but ended by ## (next line)
])
def test_strength_and_record_edges(answer_text, strength):
    text = answer_text + ("\n##" if answer_text.endswith("3") else "")
    ents, rels, problems = parse.parse_extraction(text)
    assert problems == [] and [(r.source, r.target, r.description, r.strength) for r in rels] == [
        ("Ada", "Acme", "Ada works for Acme.", strength)]


def test_a_hard_wrapped_record_is_joined_and_a_cut_one_is_reported():
    text = "\n".join([
        '("entity"<|>Ada Selel<|>person<|>Ada Selel is an engineer',
        "who builds bridges for Acme.)##",
        '("relationship"<|>Ada Selel<|>Acme<|>works_for<|>Ada Selel works',
        "for Acme,",
        "the rope firm.<|>9)",
        '("entity"<|>Acme<|>org<|>A rope firm',  # cut: the next line starts a record
        '("entity"<|>Brask<|>place<|>A town.)',
        '("entity"<|>Bo Sel',  # cut at the end of the answer
    ])
    ents, rels, problems = parse.parse_extraction(text)
    assert as_tuples(ents, rels) == ([("Ada Selel", "person", "Ada Selel is an engineer who builds bridges for Acme."),
                                      ("Brask", "place", "A town.")],
                                     [("Ada Selel", "Acme", "works_for", "Ada Selel works for Acme, the rope firm.",
                                       9.0)])
    assert [(line, why.split(" (")[0]) for line, why in problems] == [(6, "truncated record"), (8, "truncated record")]


def test_the_documented_conventions_hold():
    """Names keep their case, types are lower-cased, a strength that is no number is a problem (GraphRAG
    would upper-case the name and use 1.0)."""
    ents, rels, problems = parse.parse_extraction('("entity"<|>MARTIN Smith<|>PERSON<|>The chair.)\n'
                                               '("relationship"<|>MARTIN Smith<|>Acme<|>Chairs Acme.<|>high)')
    assert [(e.name, e.type) for e in ents] == [("MARTIN Smith", "person")] and rels == []
    assert problems == [(2, "strength 'high' is not a number")]


def test_problems_name_their_lines_in_every_layout():
    text = "\n".join([
        "Sure, here you go:",                                            # 1 prose
        '("entity"<|>Ada<|>person<|>An engineer.)##',                    # 2
        '("entity"<|>Bo)##("event"<|>Fair<|>event<|>A fair.)##',          # 3 two bad records on one line
        "[",                                                             # 4 a JSON array opens here ...
        '  {"kind": "entity", "name": "Acme", "type": "org"},',           # 5
        '  {"kind": "relationship", "source": "Ada"}',                   # 6 ... its second item is bad
        "]",                                                             # 7
        '{"kind": "entity", "name": "Cy",',                              # 8 cut JSON line
        '("relationship"<|>Ada<|>Acme<|>works_for<|>Ada works.<|>9)',      # 9
        "<|COMPLETE|>",                                                  # 10
    ])
    ents, rels, problems = parse.parse_extraction(text)
    assert [e.name for e in ents] == ["Ada", "Acme"] and [r.relation for r in rels] == ["works_for"]
    assert [line for line, _ in problems] == [1, 3, 3, 4, 8]
    why = [w for _, w in problems]
    assert "needs a name and a type" in why[1] and "unknown record kind 'event'" in why[2]
    assert why[3] == "item 2: relationship record lacks target, strength" and "never closed" in why[4]


@pytest.mark.parametrize("deep", DEEP, ids=["list-1000", "object-1000", "open-100000"])
def test_deep_json_in_an_extraction_answer_is_a_problem_not_a_recursion_error(deep):
    text = '("entity"<|>Ada<|>person<|>An engineer.)\n' + deep + '\n("entity"<|>Bo<|>person<|>A painter.)'
    ents, rels, problems = parse.parse_extraction(text)
    assert [e.name for e in ents] == ["Ada", "Bo"] and [line for line, _ in problems] == [2]
    assert "nested deeper than 100 levels" in problems[0][1]


SPECIAL = ["<|>", "##", "#", "(", ")", '"', "{", "[", "]", "}", ",", "&amp;", "&", ";", "<|COMPLETE|>", "<|complete|>",
           "```", "\n", "\r\n", " ", "entity", "relationship", "\u2028", "\x85", "\x00"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SPECIAL) | st.text(max_size=4), max_size=40).map("".join))
def test_parser_never_raises_on_any_string(text):
    ents, rels, problems = parse.parse_extraction(text)
    n_lines = max(1, len(text.splitlines()))
    assert all(isinstance(line, int) and 1 <= line <= n_lines and why for line, why in problems)


field = st.one_of(st.text(), st.lists(st.sampled_from(SPECIAL + ["&#10;", "&lt;", "\t", "\x1c", " x "]),
                                      max_size=6).map("".join))
name = field.filter(bool)
relation = st.one_of(st.just(""), st.from_regex(r"[a-z0-9]+(_[a-z0-9]+)*", fullmatch=True))
entity = st.builds(parse.EntityRecord, name, name, field)
relationship = st.builds(parse.RelationshipRecord, name, name, relation, field,
                         st.floats(allow_nan=False, allow_infinity=False))


@settings(max_examples=300, deadline=None)
@given(st.lists(entity, max_size=4), st.lists(relationship, max_size=4))
@example([parse.EntityRecord("Ada", "person", "Ada works for Acme, the firm\nin Brask.")],
         [parse.RelationshipRecord("Ada", "Acme", "works_for", 'She said "hi" ## (x)<|>y', 0.1 + 0.2)])
def test_format_records_round_trips_any_text(ents, rels):
    text = parse.format_records(ents, rels)
    assert len(text.splitlines()) == len(ents) + len(rels)  # one record a line, whatever the fields hold
    lowered = [parse.EntityRecord(e.name, e.type.lower(), e.description) for e in ents]
    assert parse.parse_extraction(text) == (lowered, rels, [])
    assert parse.parse_extraction(text + "\n<|COMPLETE|>") == (lowered, rels, [])


def test_the_stand_in_keeps_the_relation_of_a_hard_wrapped_sentence():
    gaz, types = {"Ada Selel": ["E1"], "Acme": ["E2"]}, {"E1": "person", "E2": "org"}
    stand_in = llm.ExtractiveLLM(gazetteer=gaz, types=types)
    g = ge.extract_graph({"D1": "Ada Selel works for Acme, the rope firm\nin Brask."}, stand_in,
                         entity_types=["person", "org"], gazetteer=gaz)
    assert [(r.source, r.predicate, r.target) for r in g.relationships] == [("E1", "works_for", "E2")]
    assert g.relationships[0].description == "Ada Selel works for Acme, the rope firm\nin Brask."
    assert g.problems == []


def test_the_plain_record_shortcut_reads_exactly_what_the_general_reading_reads(monkeypatch):
    """parse_extraction reads a line that is one whole record on its own; the stand-in's answers on both ci
    corpora and every fixture parse the same with the shortcut turned off."""
    from cookbook import llm as llm_
    from cookbook.data import load_corpus
    from cookbook.index import graph_extraction as ge
    from cookbook.llm import parse

    texts = [p.read_text() for p in sorted(FIXTURES.glob("*.txt"))]
    for name in ("world", "factbook"):
        c = load_corpus(name, "ci")
        si = llm_.ExtractiveLLM(gazetteer=c.gazetteer(), types={e.id: e.type for e in c.entities})
        for d in c.documents[:40]:
            texts += [r["output"] for r in ge.extract_records(d.text, si, entity_types=sorted({e.type for e in
                                                                                                c.entities}))]
    fast = [parse.parse_extraction(t) for t in texts]
    monkeypatch.setattr(parse, "_plain_record", lambda line: False)
    assert [parse.parse_extraction(t) for t in texts] == fast
