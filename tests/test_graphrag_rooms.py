"""Notebooks 11-12's modules against independent references: DRIFT's budget and determinism, the lazy search's
relevance-test budget and pruning, claim records read back, merging against networkx's connected components and
merge scores against brute force, an incrementally updated index equal to a full rebuild, and the graph view
working offline in headless Chromium."""

import itertools
import json
import shutil
import subprocess
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from cookbook import llm
from cookbook.data import load_corpus
from cookbook.data.gazetteer import gazetteer_mentions
from cookbook.harness import graph_view
from cookbook.index import claims, hierarchy, incremental, reports, resolution
from cookbook.index import graph_extraction as ge
from cookbook.index.graph import cooccurrence_graph
from cookbook.llm.claim_records import ClaimRecord, format_claims, parse_claims
from cookbook.llm.prompts import parse_prompt, prompt
from cookbook.query import drift_search, lazy_search, local_search


@pytest.fixture(scope="module")
def world():
    corpus = load_corpus("world", "ci")
    gaz = corpus.gazetteer()
    stand_in = llm.ExtractiveLLM(gazetteer=gaz, types={e.id: e.type for e in corpus.entities})
    return corpus, gaz, stand_in


@pytest.fixture(scope="module")
def typed(world):
    corpus, gaz, stand_in = world
    xg = ge.extract_graph(corpus.documents, stand_in, entity_types=sorted({e.type for e in corpus.entities}),
                          gazetteer=gaz, gleanings=1)
    hier = hierarchy.hierarchical_leiden(ge.to_entity_graph(xg), max_cluster_size=10, seed=7)
    reps = reports.graph_reports(hier, xg, llm.ExtractiveLLM(), budget=800)
    leaf = reps[len(hier.levels) - 1]
    return xg, hier, reps, leaf, local_search.local_index(xg, corpus.documents, reports=leaf, gazetteer=gaz)


class Recording:
    """A backend that records the task of every prompt it answers (by the stand-in)."""

    def __init__(self):
        self.inner, self.tasks = llm.ExtractiveLLM(), []

    def complete(self, prompt, *, max_tokens):
        self.tasks.append(parse_prompt(prompt)[0])
        return self.inner.complete(prompt, max_tokens=max_tokens)


def test_drift_runs_its_parameters_and_is_deterministic(world, typed):
    corpus, _, _ = world
    leaf, index = typed[3], typed[4]
    q = corpus.questions[5].text
    rec = Recording()
    a = drift_search.drift_search(q, leaf, index, rec, primer_k=6, primer_folds=2, k_followups=2, n_depth=2)
    assert rec.tasks[:2] == ["drift_primer"] * 2 and rec.tasks[-1] == "reduce"
    assert rec.tasks.count("drift_local") == len(a.actions) <= 2 * 2
    assert [x.depth for x in a.actions] == sorted(x.depth for x in a.actions)
    assert len({x.query for x in a.actions}) == len(a.actions)  # a follow-up is asked once
    b = drift_search.drift_search(q, leaf, index, llm.ExtractiveLLM(), primer_k=6, primer_folds=2, k_followups=2,
                                  n_depth=2)
    assert (a.text, a.source_ids, a.tokens) == (b.text, b.source_ids, b.tokens)
    ledger = llm.TokenLedger(llm.ExtractiveLLM())
    c = drift_search.drift_search(q, leaf, index, ledger, primer_k=6, primer_folds=2, k_followups=2, n_depth=2)
    assert c.tokens == ledger.prompt_tokens + ledger.completion_tokens and c.calls == ledger.calls


def test_drift_token_budget_stops_the_follow_ups(world, typed):
    corpus, _, _ = world
    leaf, index = typed[3], typed[4]
    q = corpus.questions[5].text
    free = drift_search.drift_search(q, leaf, index, llm.ExtractiveLLM(), n_depth=2, k_followups=3)
    primed = sum(1 for _ in free.primer)
    capped = drift_search.drift_search(q, leaf, index, llm.ExtractiveLLM(), n_depth=2, k_followups=3, token_budget=1)
    assert free.actions and not capped.actions and capped.calls == 1 + 1  # the first primer fold, then the reduce
    assert primed > 1


def test_drift_never_spends_more_than_its_token_budget(world, typed):
    # The budget is a ceiling: DRIFT stops before the call that would cross it, so an equal-token comparison is one.
    corpus, _, _ = world
    leaf, index = typed[3], typed[4]
    for q in corpus.questions[:4]:
        free = drift_search.drift_search(q.text, leaf, index, llm.ExtractiveLLM(), n_depth=2, k_followups=3,
                                         max_tokens=100)
        for share in (0.5, 0.75, 0.9):
            budget = int(share * free.tokens)
            a = drift_search.drift_search(q.text, leaf, index, llm.ExtractiveLLM(), n_depth=2, k_followups=3,
                                          max_tokens=100, token_budget=budget)
            assert a.tokens <= budget or (len(a.primer) == 1 and not a.actions), (q.text, budget, a.tokens)


def test_drift_scores_an_unreadable_answer_zero(typed):
    class Broken:
        def complete(self, prompt, *, max_tokens):
            return "not json" if "TASK: drift" in prompt else llm.ExtractiveLLM().complete(prompt,
                                                                                        max_tokens=max_tokens)

    a = drift_search.drift_search("Who works where?", typed[3], typed[4], Broken(), n_depth=1)
    assert a.warnings and all(x.score == 0 for x in a.primer) and not a.actions


@pytest.fixture(scope="module")
def lazy(world):
    corpus, gaz, _ = world
    mentions = gazetteer_mentions(corpus.documents, gaz)
    g = cooccurrence_graph(mentions, corpus.documents, corpus.entities)
    return lazy_search.lazy_index(g, mentions, corpus.documents, max_cluster_size=5, seed=7)


def test_lazy_sub_communities_refine_their_parents(lazy):
    for (level, c), kids in lazy.children.items():
        for kid in kids:
            assert kid[0] == level + 1 and set(lazy.docs_of[kid]) <= set(lazy.docs_of[(level, c)])


def test_lazy_search_keeps_its_budget_and_prunes_irrelevant_subtrees(world, lazy):
    corpus, _, _ = world
    q = corpus.global_questions[0].text
    for budget in (1, 3, 50):
        a = lazy_search.lazy_search(q, lazy, llm.ExtractiveLLM(), budget=budget, threshold=0)
        assert a.tests <= budget and len(a.ratings) == a.tests
    tested = [k for k, _ in lazy_search.lazy_search(q, lazy, llm.ExtractiveLLM(), budget=50, threshold=5).ratings]
    assert tested and all(level == 0 for level, _ in tested)  # nothing relevant: no sub-community is ever tested


def test_claim_records_read_back_and_a_bad_record_is_reported():
    tricky = ClaimRecord("Ada & Co", "NONE", "FRAUD", "SUSPECTED", "2020-01-01", "NONE", "Said <|> to\nfake ## it.",
                         "(quoted)")
    got, problems = parse_claims(format_claims([tricky]))
    assert got == [tricky] and problems == []
    got, problems = parse_claims("(Ada<|>Acme<|>X<|>PERHAPS<|>NONE<|>NONE<|>d<|>s)##(Bo<|>Cy<|>Y<|>false<|>NONE<|>"
                                 "NONE<|>d<|>s)<|COMPLETE|>")
    assert [c.status for c in got] == ["FALSE"] and problems[0][0] == 1 and "PERHAPS" in problems[0][1]


def test_claims_resolve_to_entities_and_score_against_facts(world):
    corpus, gaz, stand_in = world
    found, problems = claims.extract_claims(corpus.documents, stand_in,
                                            entity_types=sorted({e.type for e in corpus.entities}), gazetteer=gaz)
    ids = {e.id for e in corpus.entities}
    assert found and not problems and all(c.subject_id in ids and c.object_id in ids for c in found)
    score = claims.score_claims(found, corpus.facts)
    truth = {(f.subject, f.predicate, f.object) for f in corpus.facts}
    assert score["tp"] == len({(c.subject_id, c.type.lower(), c.object_id) for c in found} & truth) > 0


def test_merge_equals_networkx_components_and_scores_equal_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 25))
        edges = [(int(a), int(b), 1.0) for a, b in rng.integers(0, n, size=(int(rng.integers(0, 30)), 2)) if a != b]
        labels = resolution.merge(n, edges)
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from((a, b) for a, b, _ in edges)
        assert sorted(sorted(c) for c in nx.connected_components(g)) == \
            sorted(sorted(np.flatnonzero(labels == x).tolist()) for x in set(labels.tolist()))
        gold = [tuple(sorted({f"E{int(x)}" for x in rng.integers(0, 6, size=int(rng.integers(1, 3)))}))
                for _ in range(n)]
        right = wrong = should = 0
        for i, j in itertools.combinations(range(n), 2):  # the definition, pair by pair
            same = len(gold[i]) == 1 and gold[i] == gold[j]
            should += same
            if labels[i] == labels[j]:
                right += same
                wrong += not set(gold[i]) & set(gold[j])
        s = resolution.score_merges(labels, gold)
        assert (s["right"], s["wrong"], s["should"]) == (right, wrong, should)


def test_synonymy_edges_are_the_pairs_at_or_above_the_threshold():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(30, 8))
    S = [[float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) for b in V] for a in V]
    want = [(i, j) for i, j in itertools.combinations(range(30), 2) if S[i][j] >= 0.3]
    assert [(i, j) for i, j, _ in resolution.synonymy_edges(V, threshold=0.3)] == want


def test_an_updated_index_equals_a_full_rebuild(world):
    corpus, gaz, stand_in = world
    docs, types = corpus.documents, sorted({e.type for e in corpus.entities})
    old = incremental.build_index(docs[:70], stand_in, entity_types=types, gazetteer=gaz, seed=7)
    new = incremental.update_index(old, docs[70:], stand_in)
    full = incremental.build_index(docs, stand_in, entity_types=types, gazetteer=gaz, seed=7)
    assert incremental.same_index(new, full)
    assert new.work["extraction_calls"] < full.work["extraction_calls"]
    assert set(old.units) == {d.id for d in docs[:70]}  # the old index is left as it was
    assert not incremental.same_index(old, full)  # the comparison can fail
    # A full rebuild reuses nothing (it has no old answers): a report it does not ask for repeats a prompt of its own
    # build (a community recurring unchanged a level down); every report is accounted for once.
    assert full.work["reports_reused"] == 0 and new.work["reports_reused"] > 0
    for idx in (new, full):
        assert sum(idx.work[k] for k in ("report_calls", "reports_reused", "reports_repeated")) == \
            sum(map(len, idx.reports.values()))
    with pytest.raises(ValueError, match="already in the index"):
        incremental.update_index(new, docs[:1], stand_in)


def test_graph_view_is_deterministic_and_offline(typed):
    xg, hier, reps = typed[:3]
    a = graph_view.graph_view(xg, hier, reps, level=0, seed=1)
    assert a == graph_view.graph_view(xg, hier, reps, level=0, seed=1)
    assert a.count("<circle") == len(xg.entities)
    assert "http" not in a.replace("http://www.w3.org/2000/svg", "") and " src=" not in a


def test_graph_view_takes_string_community_labels_as_names(typed):
    """A string label once ended in int()'s "invalid literal" error. Relabelled by name, a graph draws the same
    colours as with int labels in the same order, its reports open by name, and node order changes nothing."""
    import re

    names = ["north", "south", "west"]
    nodes = [{"id": f"n{i}", "label": f"N{i}", "community": i % 3, "description": ""} for i in range(9)]
    edges = [(f"n{i}", f"n{(i + 3) % 9}", 1.0) for i in range(9)]
    by_int = graph_view.graph_html(nodes, edges, {k: (f"T{k}", f"R{k}") for k in range(3)}, seed=2)
    named = [{**n, "community": names[n["community"]]} for n in nodes]
    reports = {names[k]: (f"T{k}", f"R{k}") for k in range(3)}
    by_name = graph_view.graph_html(named, edges, reports, seed=2)

    def fills(page):
        return re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="5" fill="([^"]+)"', page)

    assert fills(by_name) == fills(by_int) and len(set(f[2] for f in fills(by_name))) == 3
    assert 'data-community="south"' in by_name and '"south": ["T1", "R1"]' in by_name
    int_colour = {n["community"]: c for n, (*_, c) in zip(nodes, fills(by_int))}
    shuffled = graph_view.graph_html(named[::-1], edges, reports, seed=2)
    assert {n["community"]: c for n, (*_, c) in zip(named[::-1], fills(shuffled))} == \
        {names[k]: int_colour[k] for k in range(3)}


def test_write_graphml_never_overwrites_a_file_it_did_not_write(tmp_path):
    mine = tmp_path / "mine.graphml"
    mine.write_text("<graphml/>")
    with pytest.raises(FileExistsError):
        graph_view.write_graphml([{"id": "a"}], [], mine)
    assert mine.read_text() == "<graphml/>"
    ours = graph_view.write_graphml([{"id": "a"}, {"id": "b"}], [("a", "b", 2.0)], tmp_path / "ours.graphml")
    graph_view.write_graphml([{"id": "a"}], [], ours)  # its own file: replaced
    assert nx.read_graphml(ours).number_of_nodes() == 1


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
PROBE = """<script>window.addEventListener("load", function () {
  var c = document.querySelector("circle"), s = document.querySelector("svg"), before = s.getAttribute("viewBox");
  c.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  s.dispatchEvent(new WheelEvent("wheel", {deltaY: 100, clientX: 10, clientY: 10, bubbles: true, cancelable: true}));
  document.body.dataset.zoomed = String(before !== s.getAttribute("viewBox"));
});</script>"""


def rendered(page, tmp_path):
    """The DOM of ``page`` after Chromium ran its scripts (offline: a file URL, nothing else)."""
    path = tmp_path / "page.html"
    path.write_text(page, encoding="utf-8")
    out = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000",
                          "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120)
    return out.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium)")
def test_graph_view_zooms_and_shows_a_report_in_headless_chromium(tmp_path):
    view = graph_view.graph_html([{"id": "E1", "label": "Ada", "community": 3, "description": "An engineer."},
                                  {"id": "E2", "label": "Acme", "community": 3, "description": "A firm."}],
                                 [("E1", "E2", 1.0)], {3: ("Ada and Acme", "Ada works for Acme.")})
    dom = rendered(f"<html><body>{view}{PROBE}</body></html>", tmp_path)
    assert 'data-ready="1"' in dom and 'data-clicked="3"' in dom and 'data-zoomed="true"' in dom
    assert "<b>Ada and Acme</b>" in dom
    assert json.loads('"Ada works for Acme."') in dom


def test_drift_asks_the_follow_ups_a_model_writes(typed):
    """A backend that writes its own follow-up questions (as a real model would, in the prompts' JSON) drives
    DRIFT's queue: the local searches ask exactly those questions, best score first."""

    class Scripted:
        def complete(self, prompt, *, max_tokens):
            task = parse_prompt(prompt)[0]
            if task == "drift_primer":
                return json.dumps({"intermediate_answer": "A start.", "score": 40,
                                   "follow_up_queries": ["Who employs whom?", "Where are the firms?"]})
            if task == "drift_local":
                return json.dumps({"response": "An answer.", "score": 70, "follow_up_queries": ["What do they make?"]})
            return "Final."

    a = drift_search.drift_search("What is there?", typed[3], typed[4], Scripted(), primer_folds=1, k_followups=2,
                                  n_depth=2)
    assert [x.query for x in a.actions] == ["Where are the firms?", "Who employs whom?", "What do they make?"]
    assert [x.depth for x in a.actions] == [1, 1, 2] and a.text == "Final."


def test_reduce_keeps_the_sentences_that_fit_of_a_point_longer_than_its_answer():
    # A DRIFT point is a whole local answer, often longer than the final answer's max_tokens: the stand-in must
    # answer with its first sentences (as a model writes within its limit), not drop it and answer nothing.
    long_point = "[score 90] [d1] " + " ".join(f"Sentence number {i} names Ada and Acme." for i in range(40))
    out = llm.ExtractiveLLM().complete(prompt("reduce", question="Who?", points=[long_point]), max_tokens=60)
    body = out.split("\n", 1)[1]
    assert "Sentence number 0 names Ada and Acme." in body and "Sentence number 39" not in body
    one_sentence = "[score 90] [d1] Ada — " + ", ".join(f"item {i}" for i in range(200)) + "."
    out = llm.ExtractiveLLM().complete(prompt("reduce", question="Who?", points=[one_sentence]), max_tokens=60)
    assert "Ada — item 0, item 1" in out  # a single sentence longer than the answer is cut, not dropped


def test_drift_final_answer_is_never_empty_at_short_answers(world, typed):
    corpus, _, _ = world
    leaf, index = typed[3], typed[4]
    for q in corpus.questions[:6]:
        a = drift_search.drift_search(q.text, leaf, index, llm.ExtractiveLLM(), max_tokens=100, primer_k=9,
                                      primer_folds=3, k_followups=3, n_depth=2)
        scored = [x for x in a.primer + a.actions if x.answer and x.score > 0]
        assert not scored or a.text.strip().count("\n") >= 1, (q.text, a.text)


def test_lazy_search_keeps_a_community_rated_at_the_threshold(lazy, world):
    # GraphRAG's dynamic selection keeps a report rated *at or above* its threshold (rating >= self.threshold);
    # the lazy search's relevance test follows it.
    class Rates(llm.ExtractiveLLM):
        def complete(self, prompt_, *, max_tokens):
            if parse_prompt(prompt_)[0] == "relevance_test":
                return json.dumps({"rating": 2, "reason": "scripted"})
            return super().complete(prompt_, max_tokens=max_tokens)

    q = world[0].global_questions[0].text
    assert lazy_search.lazy_search(q, lazy, Rates(), budget=5, threshold=2).relevant
    assert not lazy_search.lazy_search(q, lazy, Rates(), budget=5, threshold=3).relevant


def test_merge_precision_is_undefined_without_a_merge():
    # A resolver that merges nothing (the exact key over distinct names) has no precision: 0/0, not 1.0.
    s = resolution.score_merges([0, 1, 2], [("E1",), ("E1",), ("E2",)])
    assert np.isnan(s["precision"]) and s["recall"] == 0.0


def test_graph_view_gives_every_community_its_own_colour():
    # 25 communities: a palette that cycles would give two of them one colour, and the view has no legend.
    nodes = [{"id": f"n{i}", "label": f"N{i}", "community": i % 25, "description": ""} for i in range(50)]
    page = graph_view.graph_html(nodes, [])
    fills = {}
    for part in page.split("<circle")[1:]:
        fill, community = part.split('fill="')[1].split('"')[0], part.split('data-community="')[1].split('"')[0]
        fills.setdefault(fill, set()).add(community)
    assert len(fills) == 25 and all(len(c) == 1 for c in fills.values())


class FailingCalls:
    """Every call of ``task`` fails transiently (a timeout after its retries); other tasks by the stand-in."""

    def __init__(self, task):
        self.task = task

    def complete(self, prompt, *, max_tokens):
        if f"TASK: {self.task}" in prompt:
            raise TimeoutError("gateway timeout")
        return llm.ExtractiveLLM().complete(prompt, max_tokens=max_tokens)


def test_a_drift_or_lazy_search_whose_every_call_failed_stops(world, typed, lazy):
    """Issue 30's rule in notebook 11's searches: before, every call failing answered NO_ANSWER with warnings, as
    if the model had found nothing."""
    with pytest.raises(llm.LLMUnavailable, match=r"DRIFT search \(\d+ call\(s\)\): all \d+ call\(s\) failed"):
        drift_search.drift_search("Who works where?", typed[3], typed[4], FailingCalls("drift"), n_depth=1)
    with pytest.raises(llm.LLMUnavailable, match=r"lazy search's relevance tests: all \d+ call\(s\) failed"):
        lazy_search.lazy_search(world[0].global_questions[0].text, lazy, FailingCalls("relevance_test"), budget=3)


class _NeverCalled:
    def complete(self, prompt, *, max_tokens):
        raise AssertionError("a refused size must fail before any model call")


@pytest.mark.parametrize("name", sorted(drift_search.LIMITS))
def test_drift_refuses_a_size_over_its_limit_before_any_call(typed, name):
    """Issue 34: n_depth=10**6 or k_followups=10**6 ran (n_depth rounds, each sorting the open follow-ups): every
    size parameter has an upper bound, named in the error, checked before the first call."""
    with pytest.raises(ValueError, match=rf"{name} must be at most {drift_search.LIMITS[name]} "
                                         rf"\(drift_search.LIMITS\['{name}'\]\), got 10000000000"):
        drift_search.drift_search("Who works where?", typed[3], typed[4], _NeverCalled(), **{name: 10**10})
    if drift_search.LIMITS[name] < 10**6:
        with pytest.raises(ValueError, match="must be at most"):
            drift_search.drift_search("Who works where?", typed[3], typed[4], _NeverCalled(), **{name: 10**6})


@pytest.mark.parametrize("name", sorted(lazy_search.LIMITS))
def test_lazy_search_refuses_a_size_over_its_limit_before_any_call(lazy, name):
    with pytest.raises(ValueError, match=rf"{name} must be at most {lazy_search.LIMITS[name]} "
                                         rf"\(lazy_search.LIMITS\['{name}'\]\)"):
        lazy_search.lazy_search("Who mines coal?", lazy, _NeverCalled(), **{name: 10**10})
    sizes = {"budget": 2, name: lazy_search.LIMITS[name]}  # the limit itself is allowed
    assert lazy_search.lazy_search("Who mines coal?", lazy, llm.ExtractiveLLM(), **sizes).tests <= sizes["budget"]


def test_lazy_search_deepens_after_z_successive_misses_as_the_blog_says():
    """Issue 34: the blog (LazyGraphRAG, Nov 2024, Table 1): "Recurses into relevant sub-communities after z
    successive communities yield zero relevant text chunks (iterative deepening)"; the search had pushed a relevant
    community's children into one best-first queue at once. Here a scripted rater (relevant iff the text says so)
    over a hand-made hierarchy, BM25 ranking a1 > b1 > a2 = c1 > a3 = d1: the order of tests is worked out by hand."""
    from cookbook.embed import BM25
    texts = {"a1": "coal iron gold tin RELEVANT zz", "a2": "coal iron qq ww RELEVANT zz", "a3": "coal qq ww ee rr zz",
             "b1": "coal iron gold qq ww zz", "c1": "iron gold qq ww ee zz", "d1": "gold qq ww ee RELEVANT zz"}
    docs_of = {(0, 0): ["a1", "a2", "a3"], (0, 1): ["b1"], (0, 2): ["c1"], (0, 3): ["d1"],
               (1, 0): ["a1", "a2"], (1, 1): ["a3"], (1, 2): ["d1"]}
    children = {k: [] for k in docs_of} | {(0, 0): [(1, 0), (1, 1)], (0, 3): [(1, 2)]}
    ids = list(texts)
    idx = lazy_search.LazyIndex(None, None, ids, texts, docs_of, children, BM25([texts[d] for d in ids]))

    class Rater:
        def complete(self, prompt, *, max_tokens):
            if "TASK: relevance_test" not in prompt:
                return llm.ExtractiveLLM().complete(prompt, max_tokens=max_tokens)
            return '{"rating": ' + ('5' if "RELEVANT" in prompt.split("Text:", 1)[-1] else '0') + '}'

    def order(z):
        a = lazy_search.lazy_search("coal iron gold tin?", idx, Rater(), budget=20, chunks_per_test=1, deepen_after=z)
        return [k for k, _ in a.ratings], a.relevant

    # z = 2: A relevant, B and C miss → deepen into A's children (D, ranked after them, is never tested); A's
    # first child is tested on a2 (a1 was read by A's test), its second on a3.
    assert order(2) == ([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)], ["a1", "a2"])
    # No z: the whole top level first, then the children of both relevant communities (d1 already read: skipped).
    assert order(None) == ([(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)], ["a1", "a2", "d1"])


def test_the_stand_ins_relevance_rating_is_not_passed_by_every_tested_community(world, lazy):
    # The lazy search tests only text units sharing a question word; the stand-in used to rate one shared word of a
    # six-word corpus-wide question round(5/6) = 1, so at GraphRAG's threshold 1 every test passed by construction
    # (notebook 11's demo: "rated 1" four times out of four). One shared word of several now rates 0.
    from cookbook.llm.extractive_search import relevance_test
    one_word = json.loads(relevance_test({"QUESTION": "Which organisations make which products, and in which trades?",
                                          "TEXT": "[d1] Gutratous is part of the textiles trade."}, 60))
    assert one_word["rating"] == 0, one_word
    ratings = Counter(r for q in world[0].global_questions[:6]
                      for _, r in lazy_search.lazy_search(q.text, lazy, llm.ExtractiveLLM(), budget=10).ratings)
    assert len(ratings) > 1, f"every relevance test rated alike: {ratings}"


def test_a_lazy_search_that_finds_nothing_names_no_community_reports(lazy):
    # A lazy index has no reports: its no-answer message used to be global search's ("... in the community reports").
    a = lazy_search.lazy_search("Which zyxx qwvv plorbs?", lazy, llm.ExtractiveLLM(), budget=3)
    assert a.text == lazy_search.NO_LAZY_ANSWER and "report" not in a.text


def test_a_lazy_answer_names_text_units_not_community_reports(world, lazy):
    # Its map and reduce read text units; the reduce answer used to open "Key points from the community reports:".
    answers = [lazy_search.lazy_search(q.text, lazy, llm.ExtractiveLLM(), budget=10, threshold=0).text
               for q in world[0].global_questions[:4]]
    assert answers and all("community reports" not in a.split("\n", 1)[0] for a in answers), answers
    assert any(a.startswith("Key points from the relevant text units:") for a in answers), answers


def test_contested_names_match_a_brute_force_over_pairs(world):
    """Issue 34 (review): B-cubed over every name rewarded the no-op resolver; the notebook scores the names
    resolution can matter for. Checked against every pair of names, word sets made independently."""
    names, gold = resolution.corpus_names(world[0])

    def words(n):
        return {w.strip(".,'()").lower() for w in n.split()} - {""}

    def matters(i):
        if len(gold[i]) > 1:
            return True
        return any(j != i and ((gold[j] == gold[i]) or (not set(gold[i]) & set(gold[j]) and
                                                      {w for w in words(names[i]) & words(names[j]) if len(w) > 1}))
                   for j in range(len(names)))

    got = resolution.contested(names, gold)
    assert got.tolist() == [matters(i) for i in range(len(names))]
    assert 0 < got.sum() < len(names)


def test_graph_view_colours_the_largest_communities_apart_and_singletons_grey():
    """Issue 34 (review): the Factbook's 222 singletons and 12 real communities got hues 0–17° from an even spread
    around the wheel (one red hairball) and no legend. Now: the largest communities take the qualitative palette in
    size order, single-entity communities are grey, and a legend lists the largest."""
    sizes = {"big": 5, "mid": 3, "small": 2, **{f"s{i}": 1 for i in range(30)}}
    nodes = [{"id": f"{c}-{k}", "label": c, "community": c, "description": ""} for c, n in sizes.items()
             for k in range(n)]
    page = graph_view.graph_html(nodes, [], {"big": ("The big one", "r")})
    fill = {}
    for part in page.split("<circle")[1:]:
        community = part.split('data-community="')[1].split('"')[0]
        fill.setdefault(community, set()).add(part.split('fill="')[1].split('"')[0])
    assert fill["big"] == {"#1f77b4"} and fill["mid"] == {"#ff7f0e"} and fill["small"] == {"#2ca02c"}
    assert all(fill[f"s{i}"] == {graph_view.SINGLETON} for i in range(30))
    legend = page.split('class="cb-legend"')[1].split("</div></div>")[0]
    assert legend.index("The big one (5)") < legend.index("community mid (3)") < legend.index("community small (2)")
    assert "30 single-entity communities" in legend
