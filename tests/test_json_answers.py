"""JSON answers read the way real models write them (issue 22): a map answer with a string score, a
trailing comma, a one-line fence or pretty-printed costs no repair call; report findings given as plain
strings are kept; JSON nested 1,000 deep is a clear ``ValueError`` from the parser and is recomputed by the
cache reader, never a ``RecursionError``."""

import numpy as np
import pytest
import scipy.sparse as sp

from cookbook import cache, llm
from cookbook.data.records import Mention
from cookbook.index import reports
from cookbook.index.graph import EntityGraph
from cookbook.index.hierarchy import Hierarchy
from cookbook.llm import json_answers, prompts
from cookbook.query import global_search as answer

DEEP = ["[" * 1000 + "]" * 1000, '{"a": ' * 1000 + "1" + "}" * 1000, "[" * 100_000]


class Scripted:
    """Answers every call with the next of ``answers`` and counts the calls."""

    def __init__(self, *answers):
        self.answers, self.calls = list(answers), 0

    def complete(self, prompt, *, max_tokens):
        self.calls += 1
        return self.answers.pop(0) if self.answers else '{"points": []}'


def batch():
    return [reports.Report(f"R0-{i}", 0, i, f"T{i}", "Mining is central.", [], 1.0, [], [], 0) for i in range(2)]


@pytest.mark.parametrize("raw, score, ids", [
    ('{"points": [{"description": "Mining.", "score": "80", "reports": ["R0-1"]}]}', 80, ("R0-1",)),
    ('{"points": [{"description": "Mining.", "score": 80, "reports": ["R0-1"],},],}', 80, ("R0-1",)),
    ('```json {"points": [{"description": "Mining.", "score": 80.4, "reports": ["R0-1"]}]} ```', 80, ("R0-1",)),
    ('Here it is:\n```json\n{\n  "points": [\n    {\n      "description": "Mining.",\n      "score": " 75 ",\n'
     '      "reports": "R0-1"\n    },\n  ]\n}\n```\nHope this helps {really}.', 75, ("R0-1",)),
])
def test_map_reads_a_readable_answer_without_a_repair_call(raw, score, ids):
    model = Scripted(raw)
    points, warnings = answer.map_step("Which trade?", batch(), model)
    assert (model.calls, warnings) == (1, [])
    assert [(p.description, p.score, p.reports, p.note) for p in points] == [("Mining.", score, ids, "")]


@pytest.mark.parametrize("deep", DEEP, ids=["list-1000", "object-1000", "open-100000"])
def test_deep_json_is_a_clear_value_error(deep):
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        json_answers.parse_json(deep)
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        json_answers.read_json(deep)
    model = Scripted(deep, deep)  # unreadable: one repair call, which fails too
    points, warnings = answer.map_step("Which trade?", batch(), model, max_tokens=10**6)
    assert points == [] and model.calls == 2 and len(warnings) == 1
    assert "nested deeper than 100 levels" in warnings[0] and "RecursionError" not in warnings[0]


def one_community():
    A = sp.csr_matrix(np.array([[0, 2], [2, 0]]))
    g = EntityGraph(["E1", "E2"], ["Ada", "Bo"], A, A)
    docs = {"d1": "Ada hired Bo.", "d2": "Bo paints."}
    mentions = [Mention("d1", 0, 3, "E1", "Ada"), Mention("d1", 10, 12, "E2", "Bo"), Mention("d2", 0, 2, "E2", "Bo")]
    return Hierarchy([np.zeros(2, dtype=int)], [np.array([-1])], max_cluster_size=10), g, docs, mentions


def test_a_report_reads_findings_given_as_plain_strings():
    raw = ('```json\n{"title": "Ada and Bo", "summary": "Ada hired Bo.", "rating": "6",\n'
           ' "findings": ["Bo paints.", {"summary": "Ada hires.", "sources": "d1"}, 7],}\n```')
    r = reports.community_reports(*one_community(), Scripted(raw))[0][0]
    assert (r.title, r.rating, r.warning) == ("Ada and Bo", 6.0, "")
    assert r.findings == [reports.Finding("Bo paints.", "", ()), reports.Finding("Ada hires.", "", ("d1",))]


@pytest.mark.parametrize("deep", DEEP[:2], ids=["list-1000", "object-1000"])
def test_a_deep_report_answer_is_reported_not_a_recursion_error(deep):
    r = reports.community_reports(*one_community(), Scripted(deep), max_tokens=10**6)[0][0]
    assert r.findings == [] and "nested deeper than 100 levels" in r.warning and "RecursionError" not in r.warning


@pytest.mark.parametrize("deep", DEEP[:2], ids=["list-1000", "object-1000"])
def test_a_deep_cache_entry_is_recomputed(deep, tmp_path, monkeypatch):
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path))
    cached = llm.CachedLLM(llm.ExtractiveLLM())
    p = prompts.prompt("answer", question="Who founded Acme?", sources=["[d1] Ada founded Acme."])
    key = cached.key(p, 50)
    path = cache.cache_path("llm", key, suffix=".json", versioned=False)
    for entry in (deep, '{"inputs": ' + deep + ', "value": "stale"}'):
        path.write_text(entry, encoding="utf-8")
        assert cache.read_entry("llm", key) is None
        assert cached.complete_with_hit(p, max_tokens=50) == ("Ada founded Acme. [d1]", False)
    assert cache.read_entry("llm", key) == "Ada founded Acme. [d1]"  # the recomputed answer replaced it
