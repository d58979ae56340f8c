import numpy as np
import pytest

from cookbook import llm, metrics
from cookbook.index import reports
from cookbook.llm import tokens
from cookbook.query import global_search as answer


def test_context_packs_within_budget_most_members_first(tiny_pipeline):
    w, ms, g, h = tiny_pipeline
    docs_of = {}
    for m in ms:
        docs_of.setdefault(m.entity_id, set()).add(m.doc_id)
    docs_of = {e: sorted(d) for e, d in docs_of.items()}
    text = {d.id: d.text for d in w.documents}
    members = np.flatnonzero(h.levels[0] == 0)
    for budget in (100, 300, 800):
        ctx = reports.community_context(members, g, docs_of, text, budget)
        assert ctx.tokens <= budget
        hits = [sum(d in docs_of.get(g.ids[i], []) for i in members) for d in ctx.source_ids]
        assert hits == sorted(hits, reverse=True)
    full = reports.community_context(members, g, docs_of, text, 10**9)
    assert full.complete and set(full.source_ids) == {d for i in members for d in docs_of.get(g.ids[i], [])}


def test_substitution_fires_only_when_raw_context_overflows(tiny_pipeline):
    w, ms, g, h = tiny_pipeline
    small = reports.community_reports(h, g, w.documents, ms, llm.ExtractiveLLM(), budget=300)
    large = reports.community_reports(h, g, w.documents, ms, llm.ExtractiveLLM(), budget=100_000)
    assert any(r.substituted for r in small[0])
    assert not any(r.substituted for rs in large.values() for r in rs)
    for r in small[0]:
        if r.substituted:
            kids = {k.id for k in small[1] if h.parents[1][k.community] == r.community}
            assert set(r.children) == kids and set(r.sources) <= kids


def test_malformed_report_output_is_survived(tiny_pipeline):
    w, ms, g, h = tiny_pipeline

    class Broken:
        def complete(self, prompt, *, max_tokens):
            return "I cannot produce JSON today"

    rs = reports.community_reports(h, g, w.documents, ms, Broken(), budget=300)
    assert all(r.warning.startswith("report failed") and r.findings == [] for lvl in rs for r in rs[lvl])
    with pytest.raises(ValueError, match="budget"):
        reports.community_reports(h, g, w.documents, ms, Broken(), budget=10)


def test_global_search_packs_orders_and_is_deterministic(tiny_pipeline):
    w, ms, g, h = tiny_pipeline
    rs = reports.community_reports(h, g, w.documents, ms, llm.ExtractiveLLM(), budget=300)[1]
    q = w.global_questions[0]
    a = answer.global_search(q.text, rs, llm.ExtractiveLLM(), reduce_budget=120, seed=3)
    b = answer.global_search(q.text, rs, llm.ExtractiveLLM(), reduce_budget=120, seed=3)
    assert a.text == b.text and a.points == b.points
    for batch in answer.map_batches(rs, 200, seed=3):
        assert len(batch) == 1 or sum(tokens.count_tokens(f"[{r.id}] {r.text()}") + 1 for r in batch) <= 200
    assert sorted(r.id for b in answer.map_batches(rs, 200, seed=3) for r in b) == sorted(r.id for r in rs)
    lines = [line for line in a.text.splitlines() if line.startswith("- [score")]
    scores = [int(line.split("[score ")[1].split("]")[0]) for line in lines]
    assert scores == sorted(scores, reverse=True) and scores and min(scores) > 0
    assert sum(tokens.count_tokens(line[2:]) + 1 for line in lines) <= 120


def test_nothing_relevant_gives_the_plain_answer(tiny_pipeline):
    w, ms, g, h = tiny_pipeline
    rs = reports.community_reports(h, g, w.documents, ms, llm.ExtractiveLLM(), budget=300)[1]
    a = answer.global_search("Zyxw qvut?", rs, llm.ExtractiveLLM())
    assert a.text == answer.NO_ANSWER and a.points == []


def test_backend_errors_score_zero_and_continue(tiny_pipeline):
    w, ms, g, h = tiny_pipeline
    rs = reports.community_reports(h, g, w.documents, ms, llm.ExtractiveLLM(), budget=300)[1]

    class Flaky:
        def __init__(self):
            self.inner, self.n = llm.ExtractiveLLM(), 0

        def complete(self, prompt, *, max_tokens):
            self.n += 1
            if self.n == 1:
                raise TimeoutError("fake timeout")
            return self.inner.complete(prompt, max_tokens=max_tokens)

    a = answer.global_search(w.global_questions[0].text, rs, Flaky(), map_budget=200)
    assert any("backend error TimeoutError" in x for x in a.warnings) and a.points


def test_theme_coverage_and_bad_inputs():
    assert metrics.theme_coverage("Mining and ROBOTICS", ["mining", "robotics", "brewing"]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="themes is empty"):
        metrics.theme_coverage("x", [])
    with pytest.raises(ValueError, match="no reports"):
        answer.global_search("q?", [], llm.ExtractiveLLM())
    with pytest.raises(ValueError, match="question"):
        answer.global_search(" ", [object()], llm.ExtractiveLLM())


def test_theme_scores_punish_listing_every_theme(tiny_pipeline):
    w = tiny_pipeline[0]
    all_themes = sorted(set(w.group_themes))
    q = next(q for q in w.global_questions if len(q.themes) < len(all_themes) / 2)
    everything = metrics.theme_scores("Trades: " + ", ".join(all_themes) + ".", q.themes, all_themes)
    exact = metrics.theme_scores("Trades: " + " and ".join(q.themes) + ".", q.themes, all_themes)
    # Brute force from the definition: precision = gold share of the named themes.
    p = len(q.themes) / len(all_themes)
    assert everything.recall == 1.0 and everything.precision == pytest.approx(p)
    assert everything.f1 == pytest.approx(2 * p / (p + 1)) and everything.f1 < 0.5
    assert (exact.precision, exact.recall, exact.f1) == (1.0, 1.0, 1.0)
    assert metrics.theme_scores("nothing relevant", q.themes, all_themes).f1 == 0.0


def test_theme_scores_recall_is_theme_coverage_and_entity_recall():
    themes = ["aviation", "brewing", "mining", "robotics"]
    text = "Mining (Ada Lind, BOLT Ltd) and aviation."
    s = metrics.theme_scores(text, ["mining", "robotics"], themes, gold_entities=["Ada Lind", "Bolt Ltd", "Cy Moe"])
    assert s.recall == metrics.theme_coverage(text, ["mining", "robotics"]) == 0.5
    assert s.precision == 0.5 and s.f1 == 0.5
    assert s.entity_recall == pytest.approx(2 / 3)
    assert metrics.theme_scores(text, ["mining"], themes).entity_recall is None


def test_an_echo_of_the_question_scores_nothing_on_the_themes_it_names(tiny_world):
    """Issue 33 (second review): many world questions name their own gold themes ("In the astronomy trade, who
    …"), so echoing the question scored high. With ``question=`` an echo earns 0, or nan when nothing is left."""
    qs, themes = tiny_world.global_questions, sorted(set(tiny_world.group_themes))
    naive = [metrics.theme_scores(q.text, q.themes, themes).f1 for q in qs]
    assert max(naive) == 1.0  # the flaw the option fixes: without it, some echo scores perfectly
    echo = [metrics.theme_scores(q.text, q.themes, themes, question=q.text) for q in qs]
    assert all(s.f1 == 0.0 or np.isnan(s.f1) for s in echo)
    for q, s in zip(qs, echo):  # brute force: nan exactly when the question names every gold theme
        assert np.isnan(s.f1) == all(t.lower() in q.text.lower() for t in q.themes)
    # An answer that adds an unnamed gold theme is scored on it alone.
    themes4 = ["brewing", "mining", "robotics", "shipping"]
    s = metrics.theme_scores("Mining and shipping; robotics.", ["mining", "brewing"], themes4,
                             question="Who works in mining?")
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("args, kw, err, match", [
    (("x", ["mining"], []), {}, ValueError, "all_themes is empty"),
    (("x", [], ["mining"]), {}, ValueError, "themes is empty"),
    (("x", ["mining", "sailing"], ["mining"]), {}, ValueError, r"\['sailing'\] are not in all_themes"),
    (("x", "mining", ["mining"]), {}, TypeError, "gold_themes must be a sequence"),
    (("x", ["mining"], ["mining"]), {"gold_entities": "Ada"}, TypeError, "gold_entities"),
])
def test_theme_scores_bad_inputs(args, kw, err, match):
    with pytest.raises(err, match=match):
        metrics.theme_scores(*args, **kw)
