"""Local search (cookbook.query.local_search) against things it does not compute itself: token counts of the packed
text, the section shares the proportions promise, a ranking worked out by hand on a small graph, and gold
supporting passages on the world."""

import itertools

import pytest

from cookbook import llm
from cookbook.data.corpus import load_corpus
from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph, Relationship, extract_graph
from cookbook.index.reports import Report
from cookbook.llm.prompts import parse_prompt
from cookbook.llm.tokens import count_tokens
from cookbook.query import local_search


def E(i, name, docs, desc=""):
    return ExtractedEntity(i, name, "person", desc or f"{name} is a person.", docs)


# Ada (matched) - Bo (matched); Ada - Cy (w 3), Ada - Dee (w 1), Bo - Cy (w 1): Cy links to two matched entities;
# Cy - Eve (w 5) is a neighbour's own relationship; Fay is unconnected.
GRAPH = ExtractedGraph(
    [E("A", "Ada", ("d1", "d2")), E("B", "Bo", ("d1", "d3")), E("C", "Cy", ("d2", "d3", "d4")),
     E("D", "Dee", ("d5",)), E("F", "Fay", ("d6",), "Fay sings songs."), E("V", "Eve", ("d4",))],
    [Relationship("A", "B", "knows", "Ada knows Bo.", 2.0, ("d1",)),
     Relationship("A", "C", "knows", "Ada knows Cy.", 3.0, ("d2",)),
     Relationship("A", "D", "knows", "Ada knows Dee.", 1.0, ("d5",)),
     Relationship("B", "C", "knows", "Bo knows Cy.", 1.0, ("d3",)),
     Relationship("C", "V", "knows", "Cy knows Eve.", 5.0, ("d4",))])
DOCS = {"d1": "Ada knows Bo.", "d2": "Ada knows Cy.", "d3": "Bo knows Cy.", "d4": "Cy knows Eve.",
        "d5": "Ada knows Dee.", "d6": "Fay sings."}
GAZ = {"Ada": ["A"], "Bo": ["B"], "Cy": ["C"], "Dee": ["D"], "Fay": ["F"], "Eve": ["V"]}
REPORTS = [Report("R0-0", 0, 0, "Ada and Bo", "Ada and Bo work together.", [], 5.0, ["A", "B"], ["d1"], 10),
           Report("R0-1", 0, 1, "Cy", "Cy and Eve sing.", [], 9.0, ["C", "V"], ["d4"], 10)]
INDEX = local_search.local_index(GRAPH, DOCS, reports=REPORTS, gazetteer=GAZ)


def test_ranking_matches_the_order_worked_by_hand():
    ctx = local_search.local_context("Do Ada and Bo know each other?", INDEX, budget=2000, top_k_entities=2)
    assert ctx.entity_ids == ["A", "B", "C", "D", "V"]
    # between matched first (A-B); then outwards, Cy (linked to both) before Dee; A-C (w 3) before B-C (w 1);
    # then the neighbours' own (C-V).
    assert ctx.relationship_ids == ["r0", "r1", "r3", "r2", "r4"]
    # d1 supports A, B and r0 (3); d2 A, r1; d3 B, r3 (2 each); d5 r2 (1); d4 r4 (1); ties by id
    assert ctx.source_ids == ["d1", "d2", "d3", "d4", "d5"]
    assert ctx.report_ids == ["R0-0"]  # Cy's report is not a matched entity's


def test_ranking_equals_brute_force_over_every_gazetteer_subset():
    """Relationships in context = exactly those touching a matched entity or one of their neighbours,
    and the in-network ones (both ends matched) always come first."""
    for r in range(1, 4):
        for names in itertools.combinations(["Ada", "Bo", "Cy", "Dee", "Eve"], r):
            ctx = local_search.local_context(" and ".join(names) + "?", INDEX, budget=4000, top_k_entities=r)
            matched = {GAZ[n][0] for n in names}
            near = matched | {x for rel in GRAPH.relationships for x in (rel.source, rel.target)
                              if {rel.source, rel.target} & matched}
            want = {f"r{i}" for i, rel in enumerate(GRAPH.relationships) if {rel.source, rel.target} & near}
            assert set(ctx.relationship_ids) == want, names
            inside = [f"r{i}" in ctx.relationship_ids and {rel.source, rel.target} <= matched
                      for i, rel in enumerate(GRAPH.relationships)]
            k = sum(inside)
            assert all({GRAPH.relationships[int(x[1:])].source, GRAPH.relationships[int(x[1:])].target} <= matched
                       for x in ctx.relationship_ids[:k]), names


@pytest.fixture(scope="module")
def world():
    c = load_corpus("world", "ci")
    gaz = c.gazetteer()
    stand_in = llm.ExtractiveLLM(gazetteer=gaz, types={e.id: e.type for e in c.entities}, max_records=4)
    g = extract_graph(c.documents, stand_in, entity_types=sorted({e.type for e in c.entities}), gazetteer=gaz,
                      gleanings=2)
    return c, local_search.local_index(g, c.documents, gazetteer=gaz)


@pytest.mark.parametrize("budget,tu,cp", [(60, 0.5, 0.1), (300, 0.2, 0.3), (800, 0.0, 0.0), (1500, 0.9, 0.1)])
def test_packed_context_never_exceeds_the_budget_and_each_share(world, budget, tu, cp):
    c, idx = world
    for q in c.questions[:8] + c.global_questions:
        ctx = local_search.local_context(q.text, idx, budget=budget, text_unit_prop=tu, community_prop=cp)
        lines = ctx.entities + ctx.relationships + ctx.sources + ctx.reports
        assert count_tokens("\n".join(lines)) <= budget
        assert sum(count_tokens(x) + 1 for x in ctx.sources) == ctx.tokens["sources"] <= int(budget * tu)
        assert sum(count_tokens(x) + 1 for x in ctx.reports) == ctx.tokens["reports"] <= int(budget * cp)
        graph_part = ctx.tokens["entities"] + ctx.tokens["relationships"]
        assert graph_part == sum(count_tokens(x) + 1 for x in ctx.entities + ctx.relationships)
        assert graph_part <= budget - int(budget * tu) - int(budget * cp)
        # The table labels each section with its own share, worked out here from the proportions.
        heads = [x for x in ctx.table().splitlines() if x.startswith("## ")]
        assert [h.split(" tokens of ")[1].split(")")[0].split(",")[0] for h in heads] == [
            str(budget - int(budget * tu) - int(budget * cp))] * 2 + [str(int(budget * tu)), str(int(budget * cp))]


def test_more_text_unit_share_reads_more_gold_passages(world):
    c, idx = world

    def recall(tu):
        hits = [len(set(q.supporting) & set(local_search.local_context(q.text, idx, text_unit_prop=tu,
                                                                       community_prop=0.0).source_ids))
                / len(set(q.supporting)) for q in c.questions]
        return sum(hits) / len(hits)

    assert recall(0.0) == 0.0
    assert recall(0.8) > recall(0.2) > 0.0


def test_one_hop_question_finds_its_supporting_passage(world):
    c, idx = world
    one_hop = [q for q in c.questions if q.hops == 1]
    found = [q.supporting[0] in local_search.local_context(q.text, idx).source_ids for q in one_hop]
    assert sum(found) >= 0.75 * len(found)


def test_answer_goes_through_one_ledgered_local_search_call_and_is_deterministic(world):
    c, idx = world
    sent = []

    class Recording:
        model = "extractive"

        def complete(self, prompt, *, max_tokens):
            sent.append(prompt)
            return llm.ExtractiveLLM().complete(prompt, max_tokens=max_tokens)

    ledger = llm.TokenLedger(Recording())
    a = local_search.local_search(c.questions[0].text, idx, ledger)
    task, sections = parse_prompt(sent[0])
    assert task == "local_search" and list(ledger.by_task) == ["local_search"] and ledger.calls == 1
    assert set(sections) == {"QUESTION", "ENTITIES", "RELATIONSHIPS", "SOURCES", "REPORTS", "INSTRUCTIONS"}
    assert a.text == local_search.local_search(c.questions[0].text, idx, llm.ExtractiveLLM()).text
    assert local_search.local_context(c.questions[0].text, idx).table().startswith("## ENTITIES")


def test_question_naming_no_entity_falls_back_to_description_similarity():
    ctx = local_search.local_context("Who sings?", INDEX)
    assert ctx.entity_ids[0] == "F"  # "Fay sings." would not be found by the gazetteer



def test_neighbours_rank_by_distinct_matched_entities_as_graphrag_counts():
    """Issue 22, item 10: N1 has two relationships with one matched entity (heavier), N2 one with each of the
    two matched entities. GraphRAG's local context ranks by how many *distinct* matched entities a neighbour
    is linked to, so N2's relationships come first; counting relationships tied them and weight put N1 first."""
    from cookbook.index.graph_extraction import ExtractedEntity, ExtractedGraph, Relationship
    from cookbook.query.local_search import local_context, local_index

    ents = [ExtractedEntity(e, name, "person", "", ("d1",))
            for e, name in (("A", "Ada"), ("B", "Bo"), ("N1", "Nia"), ("N2", "Ned"))]
    rels = [Relationship("A", "N1", "knows", "Ada knows Nia.", 9.0, ("d1",)),
            Relationship("A", "N1", "works_with", "Ada works with Nia.", 9.0, ("d1",)),
            Relationship("A", "N2", "knows", "Ada knows Ned.", 1.0, ("d1",)),
            Relationship("B", "N2", "knows", "Bo knows Ned.", 1.0, ("d1",))]
    idx = local_index(ExtractedGraph(ents, rels), {"d1": "Ada and Bo."}, gazetteer={"Ada": ["A"], "Bo": ["B"]})
    ctx = local_context("What do Ada and Bo share?", idx, top_k_relationships=10)
    ends = [line.split("] ", 1)[1].split(" (")[0] for line in ctx.relationships]
    assert ends[:2] == ["Ada -> Ned", "Bo -> Ned"], ends
    assert ctx.entity_ids[2:] == ["N2", "N1"]  # the neighbours in that order


def test_the_drawn_assembly_shows_the_context_it_is_given():
    """plots.context_assembly: each section's boxes are the context's own lines in order (at most ``show``, then
    "+n more" with the gold passages among them counted here), coloured by how the entity got in; the budget bar's
    shares add up to the budget."""
    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure

    from cookbook.harness import plots

    ctx = local_search.local_context("Who does Ada know?", INDEX, budget=400, text_unit_prop=0.5, community_prop=0.2)
    assert len(ctx.source_ids) > 2 and ctx.entity_ids[0] == "A"
    gold = [ctx.source_ids[0], ctx.source_ids[-1]]
    ax = plots.context_assembly(ctx, matched=["A"], named=["A"], supporting=gold, show=2, ax=Figure().subplots())
    texts = [t.get_text() for t in ax.texts]
    names = {e.id: e.name for e in GRAPH.entities}
    for boxes in ([names[e] for e in ctx.entity_ids], ctx.source_ids, ctx.report_ids):
        shown = [t for t in texts if t in boxes]
        assert shown[:2] == list(boxes[:2])
    hidden_gold = sum(d in gold for d in ctx.source_ids[2:])
    assert f"+{len(ctx.source_ids) - 2} more ({hidden_gold} gold)" in texts
    boxes = [p for p in ax.patches if type(p).__name__ == "FancyBboxPatch"]
    by_label = {}
    for p in boxes:  # a box's label is the text drawn at its centre
        cx, cy = p.get_x() + p.get_width() / 2, p.get_y() + p.get_height() / 2
        label = next(t.get_text() for t in ax.texts if abs(t.get_position()[0] - cx) < 1e-9
                     and abs(t.get_position()[1] - cy) < 1e-9)
        by_label[label] = p.get_facecolor()
    assert by_label["Ada"] == to_rgba("tab:green")
    assert by_label[names[ctx.entity_ids[1]]] == to_rgba("lightgrey")  # not matched: a neighbour
    assert by_label[gold[0]] == to_rgba("gold") and by_label[ctx.source_ids[1]] == to_rgba("lightsteelblue")
    widths = [p.get_width() for p in ax.patches
              if type(p).__name__ == "Rectangle" and p.get_facecolor() == to_rgba("white")]
    assert sum(widths) == pytest.approx(1.0)


def test_a_report_longer_than_the_share_no_longer_empties_the_reports_section():
    """The Factbook's defaults packed 'REPORTS (0 lines)': the first-ranked report was longer than the reports'
    share and packing stopped there. Now it is given as its title and summary, or skipped for the next."""
    long = Report("R0-1", 0, 1, "Big", "A very long summary " * 40, [], 9.0, ["E1"], ["d1"], 400)
    short = Report("R0-2", 0, 2, "Acme", "Ada founded Acme.", [], 1.0, ["E1"], ["d1"], 30)
    g = ExtractedGraph([ExtractedEntity("E1", "Ada", "person", "", ("d1",))], [])
    idx = local_search.local_index(g, {"d1": "Ada founded Acme."}, reports=[long, short], gazetteer={"Ada": ["E1"]})
    ctx = local_search.local_context("Who is Ada?", idx, budget=400, community_prop=0.25)
    assert ctx.report_ids == ["R0-2"] and ctx.tokens["reports"] <= ctx.shares["reports"]
    assert local_search.local_context("Who is Ada?", idx, budget=400, community_prop=0.0).report_ids == []
