"""The Corpus type and the Factbook corpus: gold checked against the fact list by brute force, against
the passages' text, and against the older ``realdata.raw_factbook`` loader."""

import re
from collections import Counter

import pytest

from cookbook import data as datasets
from cookbook.data import factbook
from cookbook.data.corpus import from_world, load_corpus
from cookbook.data.records import Corpus


@pytest.fixture(scope="module")
def fb_ci():
    return load_corpus("factbook", "ci")


@pytest.fixture(scope="module")
def fb_class():
    return load_corpus("factbook", "class")


@pytest.fixture(scope="module")
def corpora(fb_ci, fb_class, tiny_world, class_world):
    return {"factbook-ci": fb_ci, "factbook-class": fb_class,
            "world-ci": from_world(tiny_world), "world-class": from_world(class_world)}


NAMES = ("factbook-ci", "factbook-class", "world-ci", "world-class")


def _surfaces(corpus, eid):
    e = corpus.entity_index[eid]
    return (e.name, *e.aliases)


@pytest.mark.parametrize("name", NAMES)
def test_every_fact_passage_names_both_ends(corpora, name):
    c = corpora[name]
    for f in c.facts:
        text = c.doc_index[f.doc_id].text
        for end in (f.subject, f.object):
            assert any(s in text for s in _surfaces(c, end)), f"{f}: {end} not named in {f.doc_id}"


@pytest.mark.parametrize("name", NAMES)
def test_every_question_path_is_a_chain_of_facts(corpora, name):
    c = corpora[name]
    doc_of = {(f.subject, f.predicate, f.object): f.doc_id for f in c.facts}
    for q in c.questions:
        assert len(q.path) == q.hops + 1 and len(q.predicates) == q.hops == len(q.supporting), q
        for i, (s, o) in enumerate(zip(q.path, q.path[1:])):
            assert doc_of.get((s, q.predicates[i], o)) == q.supporting[i], f"{q.id} hop {i}"


@pytest.mark.parametrize("name", NAMES)
def test_answers_are_exactly_what_the_facts_imply(corpora, name):
    """Brute force over the fact list: inner hops take the subject's first fact, the last hop all."""
    c = corpora[name]
    for q in c.questions:
        cur = q.path[0]
        for pred in q.predicates[:-1]:
            cur = next(f.object for f in c.facts if f.subject == cur and f.predicate == pred)
        assert cur == q.path[-2], q.id
        implied = sorted({f.object for f in c.facts if f.subject == cur and f.predicate == q.predicates[-1]})
        assert list(q.answers) == implied, q.id


def test_largest_export_partner_is_the_first_listed(fb_class):
    """An inner exports_to hop names the partner the passage lists first (the Factbook lists by share)."""
    c = fb_class
    inner = [(q.path[i], q.path[i + 1], q.supporting[i]) for q in c.questions
             for i, p in enumerate(q.predicates[:-1]) if p == "exports_to"]
    assert len(inner) > 100
    for _, partner, doc in inner:
        body = c.doc_index[doc].text.split("Exports - partners: ", 1)[1]
        assert any(body.startswith(s + " ") for s in _surfaces(c, partner)), (doc, partner, body[:60])


def test_factbook_size_at_class_scale(fb_class):
    hops = Counter(q.hops for q in fb_class.questions)
    assert all(hops[h] >= 200 for h in (1, 2, 3)), hops
    assert len(fb_class.global_questions) >= 48
    types = Counter(e.type for e in fb_class.entities)
    assert set(types) == {"country", "capital", "org", "river", "industry"} and types["country"] > 200
    preds = Counter(f.predicate for f in fb_class.facts)
    assert set(preds) == {"borders", "exports_to", "shares_river", "member_of", "capital_of", "has_industry"}


def test_ci_scale_is_a_few_regions_with_two_dozen_global_questions(fb_ci, fb_class):
    assert len(fb_ci.group_names) == 4 and len(fb_ci.documents) < len(fb_class.documents) / 3
    assert len(fb_ci.global_questions) >= 24
    assert {q.hops for q in fb_ci.questions} == {1, 2, 3}


def _listed(c, field_slug):
    """Per country id, the lower-cased items its passage of one list field names (parentheses dropped), read
    from the passage text: an independent reading of what the corpus parsed."""
    out = {}
    for d in c.documents:
        code, slug = d.id.split("/", 1)
        if slug == field_slug:
            body = re.sub(r"\([^()]*\)", "", d.text.split(": ", 1)[1])
            out[f"country:{code}"] = {x.strip(" .").lower() for x in body.split(",") if x.strip(" .")}
    return out


@pytest.mark.parametrize("name", ["fb_ci", "fb_class"])
def test_global_questions_follow_the_stated_rules(name, request):
    """The five families of data/README.md, recomputed here: items listed by the most of the scope's countries
    (at least two, ties by name; industries from the has_industry facts, commodities from the passages' text),
    the countries listing two of the five (one of the first), and the partners most of them list."""
    c = request.getfixturevalue(name)
    group = {e.id: e.group for e in c.entities}
    industries = {}
    for f in c.facts:
        if f.predicate == "has_industry":
            industries.setdefault(f.subject, set()).add(c.entity_index[f.object].name)
    lists = {"industries": industries, "exports": _listed(c, "exports-commodities")}
    partners = Counter()
    families = Counter()
    for q in c.global_questions:
        scope, family = q.family.split("/")
        families[family] += 1
        members = [e.id for e in c.entities if e.type == "country" and group[e.id] in q.groups]
        expected = "region" if len(q.groups) == 1 else "corpus" if len(q.groups) == len(c.group_names) else "regions"
        assert scope == expected and q.themes and q.entities, q.id
        assert (scope == "corpus") == (q.groups == tuple(range(len(c.group_names)))), q.id
        assert scope != "regions" or len(q.groups) == 2, q.id
        kind = "industries" if family in ("industries", "top-industry") else "exports"
        cnt = Counter(i for m in members for i in lists[kind].get(m, ()))
        ranked = sorted((kv for kv in cnt.items() if kv[1] >= 2), key=lambda kv: (-kv[1], kv[0]))
        if family in ("top-industry", "top-export"):
            assert q.themes == tuple(sorted(t for t, n in ranked if n == ranked[0][1])), q.id
            assert q.entities == tuple(sorted(m for m in members if lists[kind].get(m, set()) & set(q.themes)))
            continue
        assert q.themes == tuple(sorted(t for t, _ in ranked[:5])), q.id
        if family == "partners":
            partners = Counter(f.object for f in c.facts if f.predicate == "exports_to" and f.subject in members)
            top = sorted((kv for kv in partners.items() if kv[1] >= 2),
                         key=lambda kv: (-kv[1], c.entity_index[kv[0]].name))[:5]
            assert q.entities == tuple(sorted(e for e, _ in top)), q.id
            assert {c.entity_index[e].type for e in q.entities} == {"country"}
        else:
            several = [m for m in members if len(lists[kind].get(m, set()) & set(q.themes)) >= 2]
            assert q.entities == tuple(sorted(several)), q.id
    n = len(c.group_names)
    assert families == dict.fromkeys(("industries", "exports", "partners", "top-industry", "top-export"),
                                     n + 1 + n * (n - 1) // 2)  # each region, the corpus, each pair of regions


def test_passages_keep_the_package_wording(fb_class):
    """Background passages carry exactly the text the older, independent loader reads."""
    old = datasets.raw_factbook()
    # The older loader skips countries without a short-form name (this corpus uses their long form).
    docs = [d for d in fb_class.documents if d.id.endswith("/background") and d.id.split("/")[0] in old.documents]
    assert len(docs) > 200
    for d in docs:
        assert d.text.endswith(": " + old.documents[d.id.split("/")[0]]), d.id


def test_sentence_spans_cover_the_text_in_order(fb_ci):
    for d in fb_ci.documents:
        assert d.sentences[0][0] == 0 and d.sentences[-1][1] == len(d.text), d.id
        assert all(a[1] <= b[0] for a, b in zip(d.sentences, d.sentences[1:])), d.id


def test_factbook_has_no_mention_gold_and_world_keeps_its_own(fb_ci, tiny_world):
    w = load_corpus("world", "ci")
    assert fb_ci.mentions == [] and fb_ci.has_mention_gold is False
    assert w.has_mention_gold is True and w.mentions == tiny_world.mentions
    # no span gold is no count, not zero mentions (01 printed 'mentions': 0 beside 23,897 mentions found)
    assert fb_ci.stats()["mentions"] is None and w.stats()["mentions"] == len(w.mentions) > 0
    assert type(w) is type(fb_ci) is Corpus


def test_world_converts_losslessly(class_world):
    c = from_world(class_world)
    for key, value in class_world.stats().items():
        assert c.stats()[key] == value, key
    for attr in ("entities", "facts", "documents", "mentions", "global_questions"):
        assert getattr(c, attr) == getattr(class_world, attr), attr
    for q, cq in zip(class_world.questions, c.questions, strict=True):
        assert (cq.id, cq.text, cq.answers, cq.hops, cq.path, cq.supporting) == (
            q.id, q.text, (q.answer,), q.hops, q.path, q.supporting)
    assert c.gazetteer() == class_world.gazetteer() and c.themes == sorted(set(class_world.group_themes))


def test_factbook_is_deterministic_for_a_seed():
    build = factbook._build_factbook.__wrapped__  # bypass the per-process cache
    a, b = build("ci", 7), build("ci", 7)
    assert a == b
    other = build("ci", 8)
    assert other.facts == a.facts and other.documents == a.documents
    assert [q.text for q in other.questions] != [q.text for q in a.questions]


def test_factbook_is_cached_per_process():
    assert load_corpus("factbook", "ci") is load_corpus("factbook", "ci")


def test_unknown_corpus_or_scale_is_a_clear_error():
    with pytest.raises(ValueError, match=re.escape("['factbook', 'world']")):
        load_corpus("wikipedia")
    with pytest.raises(ValueError, match="factbook scale"):
        load_corpus("factbook", "large")
