"""Community reports from the extracted graph in GraphRAG's schema, dynamic community selection and basic search
at equal cost (issue 24, items 1, 3 and 4): each against an independent reference — the graph's own tables,
a from-scratch traversal of the hierarchy, a hand count of tokens."""

import json
import random

import numpy as np
import pytest

from cookbook import llm
from cookbook.index import graph_extraction as ge
from cookbook.index import hierarchy, reports
from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph, Relationship
from cookbook.index.reports import Report
from cookbook.llm import extractive_report
from cookbook.llm.prompts import parse_prompt, prompt
from cookbook.llm.tokens import count_tokens
from cookbook.query import basic_search, dynamic_selection


def random_graph(seed, n=12, m=20):
    rng = random.Random(seed)
    ents = [ExtractedEntity(f"E{i:02d}", f"Name{i}", rng.choice(["person", "org"]), f"Entity {i} does things.",
                            ("d1",)) for i in range(n)]
    rels, seen = [], set()
    while len(rels) < m:
        a, b = rng.sample(range(n), 2)
        pred = rng.choice(["knows", "works_for", "makes"])
        if (a, b, pred) in seen:
            continue
        seen.add((a, b, pred))
        rels.append(Relationship(f"E{a:02d}", f"E{b:02d}", pred, f"Name{a} {pred} Name{b}.", float(rng.randint(1, 9)),
                                 ("d1",)))
    return ExtractedGraph(ents, sorted(rels, key=lambda r: (r.source, r.target, r.predicate)))


@pytest.mark.parametrize("seed", range(5))
def test_graph_context_holds_exactly_the_members_tables_in_graphrag_order(seed):
    g = random_graph(seed)
    members = [e.id for e in g.entities[: 8]]
    ctx = reports.graph_context(members, g, budget=10**6)
    deg = {e.id: 0 for e in g.entities}
    for r in g.relationships:
        deg[r.source] += 1
        deg[r.target] += 1
    # every member once, by degree then id; every relationship between two members once, none other
    assert [line.split("]")[0][1:] for line in ctx.entities] == sorted(members, key=lambda e: (-deg[e], e))
    inside = {f"r{i}" for i, r in enumerate(g.relationships) if r.source in members and r.target in members}
    got = [line.split("]")[0][1:] for line in ctx.relationships]
    assert sorted(got) == sorted(inside) and len(got) == len(set(got)) and ctx.complete
    # a relationship comes right after the first of its two ends to be listed
    order = ctx.source_ids
    for rid in got:
        r = g.relationships[int(rid[1:])]
        first = min(order.index(r.source), order.index(r.target))
        assert all(order[k].startswith("r") for k in range(first + 1, order.index(rid)))


def test_graph_context_stops_at_the_budget_and_says_so():
    g = random_graph(1)
    full = reports.graph_context([e.id for e in g.entities], g, budget=10**6)
    small = reports.graph_context([e.id for e in g.entities], g, budget=full.tokens // 2)
    assert not small.complete and small.tokens <= full.tokens // 2
    assert small.source_ids == full.source_ids[: len(small.source_ids)]  # a prefix of the same order
    with pytest.raises(ValueError, match="not an entity"):
        reports.graph_context(["nobody"], g, budget=100)


def test_graph_reports_cite_only_what_their_context_holds_and_follow_graphrags_schema():
    g = random_graph(3, n=30, m=60)
    h = hierarchy.hierarchical_leiden(ge.to_entity_graph(g), max_cluster_size=6, seed=0)
    rs = reports.graph_reports(h, g, llm.ExtractiveLLM(), budget=300)
    names = {e.id: e.name for e in g.entities}
    for level in rs.values():
        for r in level:
            assert r.title and r.summary and r.rating_explanation and 0 <= r.rating <= 10
            for f in r.findings:
                assert set(f.sources) <= set(r.sources) or r.substituted, (r.id, f.sources, r.sources)
                # the finding names the entities it cites
                assert all(names[x] in f.summary for x in f.sources if x in names and not r.substituted)


def test_a_real_models_graphrag_report_is_read_with_its_data_references():
    """What GraphRAG's prompt asks a model to write: findings without a sources field, references inside."""
    answer = json.dumps({"title": "Acme", "summary": "Acme employs Ada.", "rating": 6.5,
                         "rating_explanation": "A key employer.",
                         "findings": [{"summary": "Ada works at Acme",
                                       "explanation": "Ada is an engineer [Data: Entities (E1, E2); "
                                                      "Relationships (r0, +more)]."}]})

    class Model:
        model = "scripted"

        def complete(self, prompt_, *, max_tokens):
            return answer

    g = random_graph(0, n=2, m=1)
    one = hierarchy.Hierarchy([np.zeros(2, dtype=int)], [np.array([-1])], max_cluster_size=10)
    [r] = reports.graph_reports(one, g, Model())[0]
    assert (r.rating, r.rating_explanation, r.findings[0].sources) == (6.5, "A key employer.", ("E1", "E2", "r0"))


def test_the_stand_ins_findings_are_the_dominant_relationship_groups():
    rel = ["[r0] Ada -> Acme (works_for, weight 9): Ada works for Acme.",
           "[r1] Bo -> Acme (works_for, weight 9): Bo works for Acme.",
           "[r2] Cy -> Acme (works_for, weight 9): Cy works for Acme.",
           "[r3] Acme -> Crane K3 (makes, weight 9): Acme makes the Crane K3."]
    ents = ["[E1] Acme (org, degree 4): A firm.", "[E2] Ada (person, degree 1): An engineer."]
    rep = extractive_report.write_report(parse_prompt(prompt("community_report", entities=ents,
                                                             relationships=rel))[1])
    # a hand count: Acme is the object of three works_for relationships, the subject of one makes
    assert [f["summary"] for f in rep["findings"]] == ["Works for Acme: Ada, Bo and Cy.", "Acme makes Crane K3."]
    assert "Relationships (r0, r1, r2)" in rep["findings"][0]["explanation"]
    assert rep["rating"] == round(2 * np.log2(1 + 4), 1) and "cannot judge" in rep["rating_explanation"]


# ---------------------------------------------------------------- dynamic community selection

def _reference_selection(reports_, ratings, threshold, keep_parent):
    """GraphRAG's loop, written again: rate the roots, descend from every relevant one."""
    by_id = {r.id: r for r in reports_}
    parent = {c: r.id for r in reports_ for c in r.children}
    kept, queue = set(), [r.id for r in reports_ if r.level == 0]
    while queue:
        nxt = []
        for rid in queue:
            if ratings[rid] > threshold:
                kept.add(rid)
                nxt += by_id[rid].children
                if not keep_parent and rid in parent:
                    kept.discard(parent[rid])
        queue = nxt
    return sorted(kept)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("keep_parent", [False, True])
def test_selection_walks_the_hierarchy_as_graphrag_does(seed, keep_parent):
    rng = random.Random(seed)
    reps, frontier = [], []
    for c in range(3):
        reps.append(Report(f"R0-{c}", 0, c, "t", "s", [], 1.0, [], [], 0))
        frontier.append(reps[-1])
    for level in (1, 2):
        nxt = []
        for p in frontier:
            for _ in range(rng.randint(0, 3)):
                child = Report(f"R{level}-{len(nxt)}", level, len(nxt), "t", "s", [], 1.0, [], [], 0)
                p.children.append(child.id)
                nxt.append(child)
        reps += nxt
        frontier = nxt
    ratings = {r.id: rng.randint(0, 5) for r in reps}

    class Rater:
        model = "scripted"

        def complete(self, prompt_, *, max_tokens):
            rid = parse_prompt(prompt_)[1]["REPORT"].split("]")[0][1:]
            return json.dumps({"rating": ratings[rid], "reason": "scripted"})

    sel = dynamic_selection.select_reports("q?", reps, Rater(), keep_parent=keep_parent)
    assert [r.id for r in sel.reports] == _reference_selection(reps, ratings, 1, keep_parent)
    visited = set(_visited(reps, ratings))
    assert set(sel.ratings) == visited and sel.calls == len(visited)  # rated exactly what the walk reached


def _visited(reps, ratings):
    by_id = {r.id: r for r in reps}
    queue, seen = [r.id for r in reps if r.level == 0], []
    while queue:
        seen += queue
        queue = [c for rid in queue if ratings[rid] > 1 for c in by_id[rid].children]
    return seen


def test_a_malformed_rating_counts_as_not_relevant_with_a_warning():
    class Bad:
        model = "scripted"

        def complete(self, prompt_, *, max_tokens):
            return "I think it is quite relevant"

    sel = dynamic_selection.select_reports("q?", [Report("R0-0", 0, 0, "t", "s", [], 1.0, [], [], 0)], Bad())
    assert sel.reports == [] and sel.ratings == {"R0-0": 0} and "R0-0" in sel.warnings[0]


# ---------------------------------------------------------------- basic search at equal cost

def test_basic_search_reads_what_fits_the_budget_in_rank_order():
    text = {f"d{i}": f"Passage {i} says " + "word " * (3 * i + 1) for i in range(10)}
    ranked = [f"d{i}" for i in (3, 1, 7, 0, 9, 2)]
    cost = [count_tokens(f"[{d}] {text[d]}") + 1 for d in ranked]
    for budget in (cost[0], cost[0] + cost[1], sum(cost[:4]) + 1, 10**6):
        a = basic_search.basic_search("What does passage 3 say?", ranked, text, llm.ExtractiveLLM(), k=None,
                                      budget=budget)
        want = max(n for n in range(1, len(ranked) + 1) if sum(cost[:n]) <= budget)
        assert a.sources == ranked[:want]
    one = basic_search.basic_search("What?", ranked, text, llm.ExtractiveLLM(), k=None, budget=1)
    assert one.sources == ranked[:1]  # at least one passage is read
    assert basic_search.basic_search("What?", ranked, text, llm.ExtractiveLLM(), k=2).sources == ranked[:2]


def test_a_report_summary_counts_agree_with_the_community_it_describes():
    """A context cut by its budget lists fewer ENTITIES rows than its RELATIONSHIPS rows name: the summary counts
    the names of both tables and which of them are described, and its relation-type counts add up to the total
    (04 printed "5 entities … and 9 relationships (works_for 3, in_trade 2, makes 2)" of a 9-member community)."""
    import re

    rng = random.Random(3)
    for seed in range(20):
        base = random_graph(seed, n=10, m=14)
        ents, rels = base.entities, base.relationships
        g = ExtractedGraph(ents, [Relationship(r.source, r.target, rng.choice(["a", "b", "c", "d", "e"]),
                                               r.description, r.weight, r.doc_ids) for r in rels])
        members = [e.id for e in ents]
        for budget in (120, 250, 10**6):
            ctx = reports.graph_context(members, g, budget)
            summary = extractive_report.write_report(parse_prompt(prompt(
                "community_report", entities=ctx.entities, relationships=ctx.relationships))[1])["summary"]
            name_of = {e.id: e.name for e in ents}
            listed = [x for x in ctx.source_ids if not re.fullmatch(r"r\d+", x)]
            named = {name_of[x] for x in listed} | {n for line in ctx.relationships
                                                   for n in re.match(r"\[r\d+\] (.+?) -> (.+?) \(", line).groups()}
            want = (f"describe {len(listed)} entit" if len(named) == len(listed)
                    else f"name {len(named)} entities, describe {len(listed)} of them")
            assert summary.startswith(f"Its tables {want}"), (summary, len(named), len(listed))
            types = re.search(r"list (\d+) relationships? \(([^)]*)\)", summary)
            if ctx.relationships:
                counts = [int(x) for x in re.findall(r"\b(\d+)\b(?! other)", types.group(2))]  # "n of k other types"
                assert int(types.group(1)) == len(ctx.relationships) == sum(counts), summary
