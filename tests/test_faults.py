"""The pipeline survives LLM faults: timeouts, 5xx, malformed JSON, empty and over-long output."""

import pytest

from cookbook import llm
from cookbook.index import reports
from cookbook.llm import prompts, tokens
from cookbook.query import global_search as answer


@pytest.mark.parametrize("fault", llm.FAULTS)
def test_map_reduce_survives_each_fault(tiny_pipeline, fault):
    w, ms, g, h = tiny_pipeline
    rs = reports.community_reports(h, g, w.documents, ms, llm.ExtractiveLLM(), budget=300)[1]
    clean = answer.global_search(w.global_questions[0].text, rs, llm.ExtractiveLLM(), map_budget=200)
    faulty = llm.FaultInjectingLLM(llm.ExtractiveLLM(), schedule=[fault])
    ledger = llm.TokenLedger(faulty)
    ans = answer.global_search(w.global_questions[0].text, rs, ledger, map_budget=200)
    assert faulty.injected == {fault: 1}
    assert ans.text  # completed with an answer
    first_batch = [r.id for r in answer.map_batches(rs, 200, seed=0)[0]]
    if fault in ("timeout", "server_error"):
        assert ledger.failures == 1 and any("backend error" in x for x in ans.warnings)
        assert not any(set(p.reports) & set(first_batch) for p in ans.points)  # the failed batch scored 0
        assert {p for p in clean.points if not set(p.reports) & set(first_batch)} == set(ans.points)
    elif fault in ("malformed", "empty"):
        assert ledger.retries == 1 and any("repaired" in x for x in ans.warnings)
        repaired = [p for p in ans.points if p.note == "repaired"]
        assert all(set(p.reports) <= set(first_batch) for p in repaired)
    else:  # overlong: cut at max_tokens, then parsed or repaired
        assert any("longer than max_tokens" in x for x in ans.warnings)
    assert all(p.note in ("", "repaired") for p in ans.points)


def test_reports_survive_faults_and_mark_them(tiny_pipeline):
    w, ms, g, h = tiny_pipeline
    faulty = llm.FaultInjectingLLM(llm.ExtractiveLLM(), schedule=list(llm.FAULTS))
    ledger = llm.TokenLedger(faulty)
    rs = reports.community_reports(h, g, w.documents, ms, ledger, budget=300)
    flat = [r for lvl in rs.values() for r in lvl]
    warned = [r for r in flat if r.warning]
    assert faulty.injected == {f: 1 for f in llm.FAULTS}
    # timeout, server error, malformed and empty each leave one marked, empty report; over-long is cut and noted
    assert sum(r.warning.startswith("report failed") for r in flat) == 4
    assert any("longer than max_tokens" in r.warning for r in warned)
    # the two calls that raised are counted as failures and charged nothing
    assert ledger.failures == 2 and ledger.calls == len(flat) - 2


class RefusingAt:
    """Extractive answers, except that prompts of task ``stage`` raise LLMUnavailable; when the stage is
    "repair", map output is malformed so that a repair request is made."""

    model = "refusing"

    def __init__(self, stage):
        self.stage, self.inner = stage, llm.ExtractiveLLM()

    def complete(self, prompt, *, max_tokens):
        task = prompts.parse_prompt(prompt)[0]
        if task == self.stage:
            raise llm.LLMUnavailable("LLM endpoint http://example.invalid/v1, model 'm': HTTP 401")
        if self.stage == "repair" and task == "map":
            return "not json"
        return self.inner.complete(prompt, max_tokens=max_tokens)


@pytest.mark.parametrize("stage", ["map", "repair", "reduce", "community_report"])
def test_an_unavailable_backend_is_never_swallowed(tiny_pipeline, stage):
    w, ms, g, h = tiny_pipeline
    with pytest.raises(llm.LLMUnavailable, match="HTTP 401"):
        rs = reports.community_reports(h, g, w.documents, ms, RefusingAt(stage), budget=300)
        answer.global_search(w.global_questions[0].text, rs[len(h.levels) - 1], RefusingAt(stage), map_budget=200)


def test_random_faults_never_crash_the_run(tiny_pipeline):
    w, ms, g, h = tiny_pipeline
    faulty = llm.FaultInjectingLLM(llm.ExtractiveLLM(), rate=0.5, seed=3)
    rs = reports.community_reports(h, g, w.documents, ms, faulty, budget=300)
    for q in w.global_questions:
        ans = answer.global_search(q.text, rs[len(h.levels) - 1], faulty, map_budget=150)
        assert isinstance(ans.text, str) and ans.text
    assert sum(faulty.injected.values()) > 5 and len(faulty.injected) >= 4


def test_fault_injector_bad_inputs():
    with pytest.raises(ValueError, match="fault"):
        llm.FaultInjectingLLM(llm.ExtractiveLLM(), schedule=["gremlins"])
    with pytest.raises(ValueError, match="rate"):
        llm.FaultInjectingLLM(llm.ExtractiveLLM(), rate=2)
    assert tokens.truncate("abcd" * 10, 3) == ("abcd" * 3, True)
