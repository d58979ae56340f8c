import json

import pytest

from cookbook import llm
from cookbook.index.reports import Report, data_references
from cookbook.llm import json_answers, prompts, tokens
from cookbook.query import global_search as answer
from cookbook.text import split_sentences

from .fake_openai import FakeServer, unreachable_url

KEY = "sk-test-THIS-MUST-NEVER-LEAK-0123456789"
MAP_OK = json.dumps({"points": [{"description": "The mining trade matters.", "score": 80}]})


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("COOKBOOK_TEST_KEY", KEY)
    return "COOKBOOK_TEST_KEY"


def client(url, env, **kw):
    return llm.OpenAICompatibleLLM("fake-model", base_url=url, api_key_env=env, **kw)


def test_success_sends_key_and_prompt(key_env):
    with FakeServer([("ok", "hello")]) as srv:
        out = client(srv.url, key_env).complete("TASK: answer\n## QUESTION\nhi", max_tokens=7)
    assert out == "hello"
    req = srv.requests[0]
    assert req["path"].endswith("/chat/completions") and req["body"]["max_tokens"] == 7
    headers = {k.lower(): v for k, v in req["headers"].items()}
    assert headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(client(srv.url, key_env))


def test_429_then_success_is_retried(key_env):
    with FakeServer([("status", 429), ("status", 503), ("ok", "fine")]) as srv:
        out = client(srv.url, key_env, max_retries=3).complete("x", max_tokens=5)
    assert out == "fine" and srv.n == 3


def test_timeout_raises_after_retries(key_env):
    with FakeServer([("sleep", 1.5)]) as srv:
        with pytest.raises(llm.LLMCallFailed, match=r"no answer within the timeout of 0\.3 s \(2 attempt"):
            client(srv.url, key_env, timeout=0.3, max_retries=1, backoff=0).complete("x", max_tokens=5)
    assert srv.n == 2  # first try + one retry


def test_empty_completion_is_empty_string(key_env):
    with FakeServer([("empty", None)]) as srv:
        assert client(srv.url, key_env).complete("x", max_tokens=5) == ""


def test_missing_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(llm.LLMUnavailable, match="no API key, NO_SUCH_KEY_VAR is not set") as info:
        llm.OpenAICompatibleLLM("m", base_url="http://localhost:11434/v1", api_key_env="NO_SUCH_KEY_VAR")
    assert "http://localhost:11434/v1, model 'm'" in str(info.value)


def test_no_openai_api_key_names_the_default_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(llm.LLMUnavailable, match=r"api\.openai\.com/v1, model 'gpt-4o-mini'.*OPENAI_API_KEY"):
        llm.OpenAICompatibleLLM("gpt-4o-mini")


def test_unreachable_endpoint_stops_global_search_and_costs_nothing(key_env):
    url = unreachable_url()
    ledger = llm.TokenLedger(client(url, key_env, max_retries=0), model="gpt-4o-mini")
    with pytest.raises(llm.LLMUnavailable, match="cannot connect") as info:
        answer.global_search("Which trades matter?", reports(), ledger, map_budget=5000)
    assert f"{url}, model 'fake-model'" in str(info.value)
    assert ledger.failures == 1 and ledger.calls == 0 and ledger.prompt_tokens == 0 and ledger.cost == 0


@pytest.mark.parametrize("status,cause", [(401, "API key was rejected"), (403, "forbidden"), (404, "not found")])
def test_refusal_is_one_clear_error_naming_endpoint_never_key(key_env, status, cause):
    with FakeServer([("status", status), ("ok", MAP_OK)]) as srv:
        ledger = llm.TokenLedger(client(srv.url, key_env), model="gpt-4o-mini")
        with pytest.raises(llm.LLMUnavailable) as info:
            answer.global_search("Which trades matter?", reports(), ledger, map_budget=5000)
    msg = str(info.value)
    assert f"{srv.url}, model 'fake-model'" in msg and f"HTTP {status}" in msg and cause in msg
    assert srv.n == 1  # a refusal is not retried, and nothing runs after it
    assert KEY not in msg and KEY[8:] not in msg and "THIS-MUST-NEVER-LEAK" not in msg
    assert info.value.__cause__ is None and KEY not in repr(info.value)
    assert ledger.failures == 1 and ledger.calls == 0 and ledger.cost == 0


@pytest.mark.parametrize("concurrency", [1, 3])
def test_refusal_stops_community_reports(key_env, tiny_pipeline, concurrency):
    from cookbook.index import reports as reports_mod

    w, ms, g, h = tiny_pipeline
    with FakeServer([("status", 401)]) as srv:
        with pytest.raises(llm.LLMUnavailable, match="HTTP 401"):
            reports_mod.community_reports(h, g, w.documents, ms, client(srv.url, key_env, concurrency=concurrency),
                                          budget=300)
    # no call starts after the refusal: only those already in flight were sent
    assert 1 <= srv.n <= concurrency < h.levels[-1].max() + 1


def test_5xx_after_retries_on_the_only_batch_stops_the_search(key_env):
    """Before: the only map batch failing answered NO_ANSWER with a warning, as if the model had found nothing
    (issue 30); one failed batch among answers still scores 0 (tests/test_endpoint_faults.py's matrix)."""
    with FakeServer([("status", 503)]) as srv:
        ledger = llm.TokenLedger(client(srv.url, key_env, max_retries=1), model="gpt-4o-mini")
        with pytest.raises(llm.LLMUnavailable,
                           match=r"map step \(1 batch\(es\)\): all 1 call\(s\) failed.*LLMCallFailed.*HTTP 503"):
            answer.global_search("Which trades matter?", reports(), ledger, map_budget=5000)
    assert srv.n == 2
    assert ledger.failures == 1 and ledger.prompt_tokens == 0 and ledger.cost == 0
    assert "1 failed call(s), not charged" in ledger.table()


def test_unknown_price_is_said_in_words_never_nan():
    led = llm.TokenLedger(llm.ExtractiveLLM(), model="my-local-model")
    p = prompts.prompt("answer", question="Which glass?", sources=["[D1] The glass trade is central."])
    assert led.estimate([p], max_tokens=10)["max_cost_usd"] is None
    led.complete(p, max_tokens=100)
    assert led.cost is None
    table = led.table()
    assert "nan" not in table.lower() and "cost unknown" in table and "my-local-model" in table


def reports(n=3):
    return [Report(f"R0-{i}", 0, i, f"Group {i}", f"The mining trade is central to group {i}.", [], 5.0, [], [], 10)
            for i in range(n)]


def test_malformed_json_then_repair_over_http(key_env):
    script = [("ok", "Sure! here are points: {bad json"), ("ok", MAP_OK), ("ok", "final answer")]
    with FakeServer(script) as srv:
        ledger = llm.TokenLedger(client(srv.url, key_env))
        ans = answer.global_search("Which trades matter?", reports(), ledger, map_budget=5000)
    assert ans.points == [answer.Point("The mining trade matters.", 80, ("R0-0", "R0-1", "R0-2"), "repaired")]
    assert ans.text == "final answer" and ledger.retries == 1
    assert any("repaired" in w for w in ans.warnings)
    assert srv.requests[1]["body"]["messages"][0]["content"].startswith("TASK: repair")


def test_map_scores_zero_when_repair_fails_too(key_env):
    script = [("ok", "not json"), ("empty", None)]
    with FakeServer(script) as srv:
        ans = answer.global_search("Which trades matter?", reports(), client(srv.url, key_env), map_budget=5000)
    assert ans.points == [] and ans.text == answer.NO_ANSWER
    assert any("scored 0" in w for w in ans.warnings)


def test_missing_score_counts_as_malformed():
    class Stub:
        def __init__(self):
            self.outputs = [json.dumps({"points": [{"description": "x"}]}), MAP_OK, "done"]

        def complete(self, prompt, *, max_tokens):
            return self.outputs.pop(0)

    ans = answer.global_search("Which trades?", reports(1), Stub())
    assert [p.score for p in ans.points] == [80] and "repaired" in ans.warnings[0]


def test_prompt_round_trip_and_bad_task():
    p = prompts.prompt("answer", question="Q?", sources=["[D1] a", "[D2] b"])
    task, sec = prompts.parse_prompt(p)
    assert task == "answer" and prompts.cited_lines(sec["SOURCES"]) == [("D1", "a"), ("D2", "b")]
    with pytest.raises(ValueError, match="unknown task"):
        prompts.prompt("poem")
    with pytest.raises(ValueError, match="TASK"):
        prompts.parse_prompt("hello")


def test_parse_json_variants():
    assert json_answers.parse_json('```json\n{"a": 1}\n```') == {"a": 1}
    for bad, msg in [("", "empty"), ("[1, 2]", "not an object"), ("{oops", "no JSON|malformed")]:
        with pytest.raises(ValueError, match=msg):
            json_answers.parse_json(bad)


def test_extractive_is_deterministic_and_grounded():
    srcs = ["[D1] The glass trade is central to Vell. Ada Vell met Bo Tarn.",
            "[D2] The glass trade is central to Vell. Bo Tarn builds lenses.", "[D3] Ada Vell builds furnaces."]
    p = prompts.prompt("community_report", entities=["E1 | Ada Vell | degree 3", "E2 | Bo Tarn | degree 2"],
                   relationships=[], sources=srcs)
    a, b = llm.ExtractiveLLM().complete(p, max_tokens=400), llm.ExtractiveLLM().complete(p, max_tokens=400)
    assert a == b
    rep = json.loads(a)
    assert rep["title"] == "Ada Vell and Bo Tarn"
    # reference ranking: networkx PageRank on the TF-IDF cosine graph, restarting by repeats
    import networkx as nx

    from cookbook.embed import TfidfVectorizer

    sents = ["The glass trade is central to Vell.", "Ada Vell met Bo Tarn.", "Bo Tarn builds lenses.",
             "Ada Vell builds furnaces."]
    X = TfidfVectorizer().fit_transform(sents)
    S = (X @ X.T).toarray()
    G = nx.Graph()
    G.add_nodes_from(range(4))
    G.add_weighted_edges_from((i, j, S[i, j]) for i in range(4) for j in range(i + 1, 4) if S[i, j] > 0)
    pr = nx.pagerank(G, alpha=0.85, personalization={0: 2, 1: 1, 2: 1, 3: 1}, tol=1e-12)
    want = sorted(range(4), key=lambda i: (-round(pr[i], 9), sents[i]))[:3]
    assert rep["summary"] == " ".join(sents[i] for i in want)
    text = " ".join(s.split("] ", 1)[1] for s in srcs)
    assert all(s in text for s in split_sentences(rep["summary"]))
    # GraphRAG's schema: a finding cites its sources in its explanation, [Data: Sources (...)]
    assert all(set(data_references(f["explanation"])) <= {"D1", "D2", "D3"} for f in rep["findings"])
    assert all(data_references(f["explanation"]) for f in rep["findings"])
    with pytest.raises(ValueError, match="max_tokens"):
        llm.ExtractiveLLM().complete(p, max_tokens=0)


def test_ledger_counts_estimates_and_costs():
    led = llm.TokenLedger(llm.ExtractiveLLM(), model="gpt-4o-mini")
    p = prompts.prompt("answer", question="Which glass?", sources=["[D1] The glass trade is central."])
    est = led.estimate([p, p], max_tokens=100)
    assert est["calls"] == 2 and est["prompt_tokens"] == 2 * tokens.count_tokens(p)
    assert est["max_cost_usd"] == pytest.approx((est["prompt_tokens"] * 0.15 + 200 * 0.60) / 1e6)
    assert led.calls == 0  # a dry run sends nothing
    led.complete(p, max_tokens=100)
    assert led.calls == 1 and led.by_task["answer"]["prompt_tokens"] == tokens.count_tokens(p)
    assert led.cost > 0 and "answer" in led.table()


def test_count_tokens_estimate():
    assert tokens.count_tokens("abcd" * 10) in (10, tokens.count_tokens("abcd" * 10))
    assert tokens.count_tokens("") == 0


def test_fit_by_bisection_keeps_what_dropping_one_by_one_kept():
    """_fit bisects for the longest prefix that fits; the loop it replaced dropped the last item until it fit."""
    import json
    import random

    from cookbook.llm.extractive import _fit
    from cookbook.llm.tokens import count_tokens

    def one_by_one(obj, max_tokens, shrink):
        text = json.dumps(obj, sort_keys=True)
        while count_tokens(text) > max_tokens and obj[shrink]:
            obj[shrink] = obj[shrink][:-1]
            text = json.dumps(obj, sort_keys=True)
        return text

    rng = random.Random(0)
    for _ in range(200):
        items = [{"description": "w " * rng.randint(1, 30), "score": rng.randint(0, 100)}
                 for _ in range(rng.randint(0, 12))]
        budget = rng.randint(1, 400)
        assert _fit({"points": list(items)}, budget, "points") == one_by_one({"points": list(items)}, budget, "points")
