"""The fault matrix: what every kind of endpoint failure does to global search, community reports and graph
extraction, against the fake OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py).

Each cell asserts one of two outcomes: the run stops with :class:`LLMUnavailable` naming the endpoint, the
model and the cause (the endpoint cannot be used), or the call is retried as the SDK would and, still failing,
costs one map batch (scored 0 with a warning), one report (left empty) or one text unit (a problem) — an
isolated transient fault. In every cell the key's text appears nowhere: not in the exception, its chain or its
traceback, not in a warning, a problem, what was printed, nor any file written (the response cache included).
Retries wait ``backoff=0`` and hangs are bounded by small timeouts and deadlines, so the matrix runs in seconds.
"""

import json
import re
import time
import traceback
from urllib.parse import quote, quote_plus

import numpy as np
import pytest
import scipy.sparse as sp

from cookbook import llm
from cookbook.data.records import Mention
from cookbook.index import graph_extraction as ge
from cookbook.index import reports as rp
from cookbook.index.graph import EntityGraph
from cookbook.index.hierarchy import Hierarchy
from cookbook.query import global_search as gs
from cookbook.query.dynamic_selection import select_reports

from .fake_openai import FakeServer, unreachable_url

KEY = "sk-test-THIS-MUST-NEVER-LEAK-0123456789"
MAP_OK = json.dumps({"points": [{"description": "The mining trade matters.", "score": 80}]})
REPORT_OK = json.dumps({"title": "Miners", "summary": "They mine.", "rating": 5,
                        "findings": [{"summary": "Mining.", "explanation": "Said so.", "sources": ["d1"]}]})
HTML = "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body>It works!</body></html>"
Q = "Which trades matter?"


@pytest.fixture
def env(monkeypatch, tmp_path):
    """The key in the environment and a cold response cache in tmp_path/cache (scanned for the key)."""
    monkeypatch.setenv("COOKBOOK_FAULT_KEY", KEY)
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path / "cache"))
    return tmp_path


def client(url, **kw):
    kw = {"timeout": 2.0, "max_retries": 1, "backoff": 0.0, **kw}
    return llm.OpenAICompatibleLLM("fake-model", base_url=url, api_key_env="COOKBOOK_FAULT_KEY", **kw)


def reports(n=3):
    """``n`` reports, each large enough to be a map batch of its own at ``map_budget=50``."""
    return [rp.Report(f"R0-{i}", 0, i, f"Group {i}", f"The mining trade is central to group {i}. " * 4, [], 5.0,
                      [], [], 10) for i in range(n)]


def chain(exc):
    out = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def assert_no_key(tmp_path, *texts, exc=None, capsys=None):
    """The key's text (whole, or its secret middle) is in none of ``texts``, ``exc`` with its chain and
    traceback, what was printed, or any file under ``tmp_path``."""
    scanned = [str(t) for t in texts]
    if exc is not None:
        scanned += [f"{e!s} {e!r}" for e in chain(exc)]
        scanned.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    if capsys is not None:
        scanned += list(capsys.readouterr())
    scanned += [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    for text in scanned:
        assert KEY not in text and KEY[8:] not in text and "NEVER-LEAK" not in text, text[:300]


def assert_stops(exc, url, cause):
    msg = str(exc)
    assert isinstance(exc, llm.LLMUnavailable), f"{type(exc).__name__}: {msg}"
    assert f"LLM endpoint {url}, model 'fake-model'" in msg and "\n" not in msg
    assert re.search(cause, msg), msg


# The fault matrix over global search (3 map batches, one call at a time, then a reduce call); each row:
# (id, server script, client options, expected outcome, the cause or warning it names, requests sent).
# "stop": LLMUnavailable; "0": the first batch scores 0 with a warning and the run goes on.
R = 2  # requests per failed call of a retried status: the try and max_retries=1 retry
MATRIX = [
    # one failing call among answers: retried when the SDK would retry it, then the batch scores 0
    *[(f"{code}-once", [("status", code)] * (1 if code == 400 else R) + [("ok", MAP_OK)], {}, "0",
       rf"{code}.*scored 0", (1 if code == 400 else R) + 3) for code in (400, 408, 409, 429, 500, 502, 503, 504)],
    ("timeout-once", [("sleep", 1.0)] * R + [("ok", MAP_OK)], {"timeout": 0.2}, "0", "scored 0", R + 3),
    ("400-key-echo-once", [("echo", 400), ("ok", MAP_OK)], {}, "0", "400.*scored 0", 4),
    # the same status on every call: the third call in a row that fails after its retries stops the run
    *[(f"{code}-every-call", [("status", code)], {}, "stop", rf"3 calls in a row failed.*HTTP {code}",
       3 * (1 if code == 400 else R)) for code in (400, 408, 409, 429, 500, 502, 503, 504)],
    ("502-html-every-call", [("raw", (502, "text/html", "<html><body>502 Bad Gateway</body></html>"))], {}, "stop",
     r"3 calls in a row failed.*HTTP 502; the server says: <html>", 3 * R),
    ("500-key-echo-every-call", [("echo", 500)], {}, "stop", r"3 calls in a row.*HTTP 500.*provided: \*\*\*", 3 * R),
    # the endpoint cannot be used: the first call stops the run, nothing is retried
    ("401", [("status", 401)], {}, "stop", "HTTP 401, the API key was rejected", 1),
    ("403", [("status", 403)], {}, "stop", "HTTP 403, access is forbidden", 1),
    ("404", [("status", 404)], {}, "stop", "HTTP 404, not found", 1),
    ("429-insufficient-quota", [("quota", None)], {}, "stop", "HTTP 429, the quota is exhausted.*insufficient_quota",
     1),
    ("html-200", [("raw", (200, "text/html; charset=utf-8", HTML))], {}, "stop",
     r"not JSON but text/html \('<!DOCTYPE html>.*base URL", 1),
    ("empty-200", [("raw", (200, "application/json", ""))], {}, "stop", "not JSON although its content type", 1),
    ("non-json-200", [("raw", (200, "text/plain", "upstream connect error"))], {}, "stop",
     r"not JSON but text/plain \('upstream connect error'\)", 1),
    ("json-without-choices", [("raw", (200, "application/json", '{"object": "list", "data": []}'))], {}, "stop",
     r"not an OpenAI chat completion \(no 'choices' list\)", 1),
    # bodies no library reads: before, a raw UnicodeDecodeError / RecursionError that scored the batch 0
    ("non-utf8-200", [("bytes", (200, "application/json", b'{"choices": [{"message": {"content": "\xff\xfe"}}]}'))],
     {}, "stop", r"not UTF-8 text \(invalid start byte at byte 38", 1),
    ("deep-json-200", [("raw", (200, "application/json", "[" * 200_000 + "]" * 200_000))], {}, "stop",
     "JSON nested too deeply to read", 1),
    # a server that accepts and never answers: the call's deadline, not timeout x retries, bounds the wait
    ("hang", [("hang", None)], {"timeout": 0.2, "max_retries": 3, "deadline": 0.5}, "stop",
     r"no answer within the deadline of 0.5 s per call", None),
    # a prompt larger than the rate limit: refused before anything is sent
    ("tpm-smaller-than-a-prompt", [("ok", MAP_OK)], {"tokens_per_minute": 50}, "stop",
     "exceeds tokens_per_minute=50, so it could never be sent", 0),
]


@pytest.mark.parametrize("script,options,outcome,names,requests", [pytest.param(*row[1:], id=row[0]) for row in MATRIX])
def test_fault_matrix_global_search(env, capsys, script, options, outcome, names, requests):
    batches = [tuple(r.id for r in b) for b in gs.map_batches(reports(), 50)]
    assert len(batches) == 3
    with FakeServer(script) as srv:
        backend = llm.TokenLedger(llm.CachedLLM(client(srv.url, **options)), model="gpt-4o-mini")
        try:
            ans, exc = gs.global_search(Q, reports(), backend, map_budget=50, concurrency=1), None
        except Exception as e:
            ans, exc = None, e
    if outcome == "stop":
        assert exc is not None, f"no error; warnings {ans.warnings}"
        assert_stops(exc, srv.url, names)
        assert exc.__cause__ is None and exc.__context__ is None  # no SDK error, with the server's text, chained
    else:
        assert exc is None, f"{type(exc).__name__}: {exc}"
        assert sorted((p.reports, p.score) for p in ans.points) == sorted((b, 80) for b in batches[1:])
        assert len(ans.warnings) == 1 and re.search(names, ans.warnings[0]), ans.warnings
        assert backend.failures == 1
    if requests is not None:
        assert srv.n == requests
    else:  # the hang: no more attempts than fit the deadline (0.5 s / 0.2 s), fewer than max_retries allows
        assert 1 <= srv.n <= 3
    assert_no_key(env, *(ans.warnings if ans else []), ans.text if ans else "", backend.table(), exc=exc,
                  capsys=capsys)


def test_failures_in_a_row_are_counted_across_threads_and_reset_by_an_answer(env):
    """Concurrent calls share one count: with 4 calls in flight and 503 on every call, the run stops after the
    third failed call, whichever thread made it. One answer between failures resets the count."""
    with FakeServer([("status", 503)]) as srv:
        with pytest.raises(llm.LLMUnavailable, match=r"calls in a row failed.*HTTP 503") as info:
            gs.global_search(Q, reports(8), client(srv.url, concurrency=4), map_budget=50)
    assert srv.n <= 8 * R  # no new call starts once one has stopped the run
    assert_no_key(env, exc=info.value)
    # fail, answer, fail, fail, answer, fail, fail: never three in a row
    fail = [("status", 503)] * R
    script = fail + [("ok", "a")] + fail * 2 + [("ok", "b")] + fail * 2
    with FakeServer(script) as srv:
        backend = client(srv.url)
        outcomes = []
        for _ in range(7):
            try:
                outcomes.append(backend.complete("TASK: answer", max_tokens=5))
            except Exception as e:
                outcomes.append(type(e).__name__)
    assert outcomes == ["LLMCallFailed", "a", "LLMCallFailed", "LLMCallFailed", "b", "LLMCallFailed", "LLMCallFailed"]


def test_a_retry_after_beyond_the_deadline_is_not_waited_for(env):
    """A 429 asking for ten minutes: no retry inside a 5 s deadline, so the call fails at once, transiently."""
    rate_limited = ("raw", (429, "application/json", '{"error": {"message": "slow down"}}', {"Retry-After": "600"}))
    with FakeServer([rate_limited]) as srv:
        with pytest.raises(Exception, match=r"HTTP 429; the server says: slow down \(1 attempt") as info:
            client(srv.url, deadline=5.0, max_retries=3).complete("TASK: answer", max_tokens=5)
    assert type(info.value).__name__ == "LLMCallFailed" and srv.n == 1


# -- community reports: one level of three two-member communities, one report call each ----------------------

def report_inputs():
    A = sp.csr_matrix(np.kron(np.eye(3), np.ones((2, 2))) - np.eye(6))
    ids, names = [f"E{i}" for i in range(6)], ["Ada", "Bo", "Cy", "Di", "Ed", "Flo"]
    docs = {f"d{c}": f"{names[2 * c]} and {names[2 * c + 1]} mine coal." for c in range(3)}
    mentions = [Mention(f"d{i // 2}", docs[f"d{i // 2}"].index(n), docs[f"d{i // 2}"].index(n) + len(n), ids[i], n)
                for i, n in enumerate(names)]
    return Hierarchy([np.repeat(np.arange(3), 2)], [np.full(3, -1)], max_cluster_size=2), \
        EntityGraph(ids, names, A, A), docs, mentions


@pytest.mark.parametrize("script,names", [
    pytest.param([("status", 503)], r"3 calls in a row failed.*HTTP 503", id="503-every-call"),
    pytest.param([("raw", (200, "text/html", HTML))], "not JSON but text/html", id="html-200"),
    pytest.param([("quota", None)], "quota is exhausted", id="429-insufficient-quota"),
    pytest.param([("echo", 500)], r"calls in a row failed.*HTTP 500", id="500-key-echo-every-call"),
])
def test_dead_endpoint_stops_community_reports(env, capsys, script, names):
    """Before: every report came back empty with a warning; now the reports stop with LLMUnavailable."""
    h, g, docs, mentions = report_inputs()
    with FakeServer(script) as srv:
        with pytest.raises(Exception) as info:
            rp.community_reports(h, g, docs, mentions, client(srv.url), budget=300, concurrency=1)
    assert_stops(info.value, srv.url, names)
    assert_no_key(env, exc=info.value, capsys=capsys)


def test_one_failed_report_is_left_empty_and_the_others_written(env):
    h, g, docs, mentions = report_inputs()
    with FakeServer([("echo", 500)] * R + [("ok", REPORT_OK)]) as srv:
        out = rp.community_reports(h, g, docs, mentions, client(srv.url), budget=300, concurrency=1)[0]
    assert [r.summary for r in out] == ["", "They mine.", "They mine."] and srv.n == R + 2
    assert "report failed" in out[0].warning and "500" in out[0].warning and not out[1].warning
    assert_no_key(env, *(r.warning for r in out))


# -- graph extraction ------------------------------------------------------------------------------------------

GAZ = {"Ada Selel": ["E1"], "Acme": ["E2"], "Bo Tarn": ["E3"], "Cy Vell": ["E4"]}
TYPES = {"E1": "person", "E2": "org", "E3": "person", "E4": "person"}
DOCS = {"D1": "Ada Selel works for Acme.", "D2": "Bo Tarn works for Acme.", "D3": "Cy Vell works for Acme.",
        "D4": "Ada Selel knows Bo Tarn."}
STAND_IN = llm.ExtractiveLLM(gazetteer=GAZ, types=TYPES)


def extract(backend, docs=DOCS):
    return ge.extract_graph(docs, backend, entity_types=["org", "person"], gazetteer=GAZ, gleanings=0)


def test_a_failed_unit_is_a_problem_and_the_others_are_kept(env):
    """Before: the unit's error ended the extraction, losing the units already done."""
    script = [("extractive", STAND_IN), ("echo", 503), ("echo", 503), ("extractive", STAND_IN)]
    with FakeServer(script) as srv:
        got = extract(client(srv.url))
    want = extract(STAND_IN, {d: t for d, t in DOCS.items() if d != "D2"})
    assert got.entities == want.entities and got.relationships == want.relationships
    failed = [p for p in got.problems if p[0] == "D2"]
    assert len(failed) == 1 and failed[0][1] == 0 and "HTTP 503" in failed[0][2] and "unit left out" in failed[0][2]
    assert_no_key(env, *got.problems)


def test_an_empty_completion_is_a_problem_not_an_empty_graph(env):
    with FakeServer([("empty", None), ("extractive", STAND_IN)]) as srv:
        got = extract(client(srv.url), {"D1": DOCS["D1"], "D2": DOCS["D2"]})
    assert ("D1", 0, "empty completion in round 0") in got.problems
    assert {e.id for e in got.entities} == {"E2", "E3"}


@pytest.mark.parametrize("script,names", [
    pytest.param([("status", 503)], r"3 calls in a row failed.*HTTP 503", id="503-every-call"),
    pytest.param([("raw", (200, "text/html", HTML))], "not JSON but text/html", id="html-200"),
    pytest.param([("hang", None)], "no answer within the deadline", id="hang"),
])
def test_dead_endpoint_stops_extraction(env, capsys, script, names):
    with FakeServer(script) as srv:
        with pytest.raises(Exception) as info:
            extract(client(srv.url, timeout=0.2, max_retries=3, deadline=0.5))
    assert_stops(info.value, srv.url, names)
    assert_no_key(env, exc=info.value, capsys=capsys)


def test_extraction_resumes_from_the_cache_after_a_crash(env):
    """The quota runs out at the third text unit: the run stops, the two answers already paid for are kept,
    and the rerun sends only the two units not yet answered, with the graph of a run that never failed."""
    with FakeServer([("extractive", STAND_IN)] * 2 + [("quota", None)]) as srv:
        with pytest.raises(Exception) as info:
            extract(llm.CachedLLM(client(srv.url)))
    assert_stops(info.value, srv.url, "quota is exhausted")
    assert srv.n == 3
    with FakeServer([("extractive", STAND_IN)]) as srv:
        cached = llm.CachedLLM(client(srv.url))
        resumed = extract(cached)
    assert srv.n == 2 and cached.hits == 2
    assert resumed == extract(STAND_IN)
    assert_no_key(env)


def test_from_parameter_wires_the_endpoint_of_the_environment_behind_the_cache(monkeypatch, env):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_MODEL", "llama3")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    backend = llm.from_parameter("openai", concurrency=3)
    assert isinstance(backend, llm.CachedLLM) and backend.concurrency == 3
    assert repr(backend.inner) == "OpenAICompatibleLLM(model='llama3', base_url='http://localhost:11434/v1')"
    monkeypatch.delenv("OPENAI_MODEL")
    assert llm.from_parameter("openai").model == "gpt-4o-mini"


# -- the key in the response cache -----------------------------------------------------------------------------

def test_a_prompt_holding_the_key_is_never_cached(env):
    prompt = f"TASK: answer\n## QUESTION\nIs {KEY} my key?"
    with FakeServer([("ok", "It is.")]) as srv:
        cached = llm.CachedLLM(client(srv.url))
        assert [cached.complete(prompt, max_tokens=5) for _ in range(2)] == ["It is.", "It is."]
    assert srv.n == 2  # asked twice: never stored, so never read back
    assert_no_key(env)


def test_an_answer_holding_the_key_is_masked_and_never_cached(env):
    with FakeServer([("ok", f"Your key is {KEY}.")]) as srv:
        cached = llm.CachedLLM(client(srv.url))
        out = cached.complete("TASK: answer\n## QUESTION\nWhat is my key?", max_tokens=20)
    assert out == "Your key is ***."
    assert_no_key(env, out)

    class Echo:  # a backend of one's own that repeats the key: CachedLLM does not store it either
        model = "echo"

        def complete(self, prompt, *, max_tokens):
            return f"the key: {KEY}"

    echo = llm.CachedLLM(Echo())
    echo.complete("TASK: answer\n## QUESTION\nWhat is my key?", max_tokens=20)
    assert echo.uncached == 1
    assert not any(KEY in p.read_text() for p in (env / "cache").rglob("*") if p.is_file())


# -- hostile endpoints and keys (issue 30) -----------------------------------------------------------------------

def key_forms(key):
    """Every way the key's secret part could be printed (repr/JSON-escaped, URL-encoded, stripped)."""
    secret = key.strip()[8:]
    return {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1], quote(secret, safe="")}


@pytest.mark.parametrize("key", [KEY + "\r", KEY + "\n", "  " + KEY, "tok-NEVER-LEAK-\u00fcnic\u00f8de-0123456789"],
                         ids=["trailing-CR", "trailing-LF", "leading-spaces", "non-ascii"])
def test_a_key_no_header_can_carry_is_refused_unprinted(monkeypatch, env, capsys, key):
    """Before: a trailing CR/LF was printed in full by the HTTP library's message (escaped, so masking missed
    it), and a non-ASCII key escaped as a raw UnicodeEncodeError that never counted toward the stop rule."""
    monkeypatch.setenv("COOKBOOK_FAULT_KEY", key)
    with FakeServer([("ok", "hi")]) as srv:
        with pytest.raises(Exception) as info:
            client(srv.url).complete("TASK: answer", max_tokens=5)
    assert isinstance(info.value, llm.LLMUnavailable), f"{type(info.value).__name__}: {info.value}"
    assert "COOKBOOK_FAULT_KEY" in str(info.value) and "not shown" in str(info.value) and srv.n == 0
    seen = f"{info.value!s} {info.value!r} {capsys.readouterr()}"
    assert not any(form in seen for form in key_forms(key)), seen


def test_redact_masks_every_form_of_a_secret():
    key = "tok-every-form-0123456789\r"
    llm.base.add_secret(key)
    for shown in [key, key.strip(), repr(key), repr(key.encode()), json.dumps(key), quote(key, safe=""),
                  quote_plus(key)]:
        assert "every-form" not in llm.redact(f"header value {shown} refused"), shown


CREDENTIAL_URLS = ["http://alice:s3cret-pass-word@127.0.0.1:{port}/v1",
                   "http://127.0.0.1:{port}/v1?api-key=s3cret-query-key-42",
                   "http://tok3n-as-user-0123456@127.0.0.1:{port}/v1/"]


@pytest.mark.parametrize("template", CREDENTIAL_URLS, ids=["userinfo", "query", "token-as-user"])
def test_credentials_in_the_base_url_are_never_printed(env, template):
    """Before: OPENAI_BASE_URL's user:pass@ and ?api-key= appeared in repr() and every LLMUnavailable message."""
    url = template.format(port=unreachable_url().rsplit(":", 1)[1].split("/")[0])
    backend = client(url, max_retries=0)
    with pytest.raises(llm.LLMUnavailable, match="cannot connect") as info:
        backend.complete("TASK: answer", max_tokens=5)
    shown = f"{backend!r} {backend.endpoint()} {info.value} {info.value!r}"
    assert "127.0.0.1" in shown
    for secret in ("s3cret", "alice", "tok3n-as-user"):
        assert secret not in shown, shown


def test_a_server_echoing_the_base_urls_credentials_is_masked(env):
    """The credentials of the base URL are secrets from construction on: a server's error that repeats the
    URL it was called at (query included) is masked like the key."""
    echo = '{"error": {"message": "no route for ?token=q-s3cret-0123456789"}}'
    with FakeServer([("raw", (500, "application/json", echo))]) as srv:
        backend = client(srv.url + "?token=q-s3cret-0123456789", max_retries=0)
        with pytest.raises(llm.LLMCallFailed, match=r"no route for \?token=\*\*\*") as info:
            backend.complete("TASK: answer", max_tokens=5)
    assert "q-s3cret" not in f"{info.value} {backend!r}"


@pytest.mark.parametrize("url,cause", [
    ("localhost:11434/v1", "must start with http:// or https://"), ("", "must start with http://"),
    ("ftp://127.0.0.1/v1", "must start with http://"), ("http://u:s3cret-pw-0123@[::1/v1", "cannot be parsed"),
    ("http://127.0.0.1:99999/v1", "cannot be parsed"),
])
def test_a_base_url_that_is_no_url_is_refused_at_construction_unprinted(env, url, cause):
    """Before: a URL without its scheme was shown to the SDK (an 'unsupported protocol' per call), a malformed
    one raised the HTTP library's InvalidURL at construction, with the URL (and a password in it) in the message."""
    with pytest.raises(llm.LLMUnavailable, match=cause) as info:
        client(url)
    assert "s3cret" not in str(info.value) and "localhost" not in str(info.value).split("(e.g.")[0]


def test_public_url_strips_userinfo_and_query_values():
    assert llm.base.public_url("rediss://u:pw-0123456789@db.example:6380/0?password=pw2-0123456789&ssl=1#x") == \
        "rediss://db.example:6380/0?password=***&ssl=***"
    assert llm.base.public_url("falkor://localhost:6379") == "falkor://localhost:6379"
    assert llm.base.public_url("sk-this-is-a-key-not-a-url") == "<URL without a scheme>"
    assert llm.redact("AUTH failed for pw2-0123456789") == "AUTH failed for ***"  # a credential param: a secret
    assert llm.base.public_url("redis://:pw3-0123456789@db:notaport/") == "<URL that cannot be parsed>"
    assert llm.redact("bad port in redis://:pw3-0123456789@db:notaport/") == "bad port in redis://:***@db:notaport/"


def test_an_unexpected_error_is_a_named_failure_and_counts_toward_the_stop_rule(env, monkeypatch):
    """Whatever a library raises on a strange answer is LLMCallFailed, then LLMUnavailable at the third."""
    backend = client("http://127.0.0.1:9/v1")

    class Broken:  # an SDK that raises what no one expected, whatever is asked of it
        def __getattr__(self, name):
            raise KeyError("a field the library expected")
    backend._client = Broken()
    got = []
    for _ in range(3):
        try:
            backend.complete("TASK: answer", max_tokens=5)
        except Exception as e:
            got.append((type(e).__name__, str(e)))
    assert [kind for kind, _ in got] == ["LLMCallFailed", "LLMCallFailed", "LLMUnavailable"], got
    assert "unexpected KeyError" in got[0][1] and "3 calls in a row failed" in got[2][1]


def test_the_deadline_bounds_a_body_that_trickles_in(env):
    """Before: headers at once, then a byte every 0.15 s, returned after 38 s with deadline=8 (each read was
    within the timeout). The body here would take about 10 s; the call must stop at its 1 s deadline."""
    with FakeServer([("trickle", (0.04, "x" * 20))]) as srv:
        start = time.monotonic()
        with pytest.raises(llm.LLMUnavailable, match=r"no answer within the deadline of 1 s.*still arriving"):
            client(srv.url, timeout=0.5, deadline=1.0).complete("TASK: answer", max_tokens=5)
        took = time.monotonic() - start
    assert srv.n == 1 and took < 5, took  # far below the ~10 s the whole body takes


def test_a_short_trickle_within_the_deadline_is_an_answer(env):
    with FakeServer([("trickle", (0.001, "slow but fine"))]) as srv:
        assert client(srv.url, timeout=0.5, deadline=30.0).complete("TASK: answer", max_tokens=5) == "slow but fine"


@pytest.mark.parametrize("script", [[("status", 500)], [("raw", (200, "application/json", "{}"))]],
                         ids=["500", "200-not-a-completion"])
def test_a_global_search_whose_every_map_call_failed_stops(env, script):
    """Before: HTTP 500 on the only map batch answered "No relevant information was found" with a warning."""
    with FakeServer(script) as srv:
        with pytest.raises(llm.LLMUnavailable) as info:
            gs.global_search(Q, reports(3), client(srv.url), map_budget=5000)
    assert "no relevant" not in str(info.value).lower()
    if script[0][0] == "status":
        assert re.search(r"global search, the map step \(1 batch\(es\)\): all 1 call\(s\) failed.*HTTP 500",
                         str(info.value)), info.value


class Failing:
    """A backend of one's own whose every call raises a transient error (not LLMUnavailable)."""
    model = "failing"

    def complete(self, prompt, *, max_tokens):
        raise TimeoutError(f"gateway timeout for {KEY}")


def test_every_step_whose_calls_all_failed_stops(env):
    """Global search, community reports, extraction and dynamic selection alike: all calls failed -> LLMUnavailable
    naming the step (below the three-in-a-row rule: one or two calls). One failure among answers is survived."""
    with pytest.raises(llm.LLMUnavailable, match=r"global search.*all 1 call\(s\) failed.*TimeoutError"):
        gs.global_search(Q, reports(2), Failing(), map_budget=5000)
    h, g, docs, mentions = report_inputs()
    one = Hierarchy([np.zeros(6, dtype=int)], [np.array([-1])], max_cluster_size=6)
    with pytest.raises(llm.LLMUnavailable, match=r"community reports \(1 report\(s\)\): all 1 call"):
        rp.community_reports(one, g, docs, mentions, Failing(), budget=300)
    with pytest.raises(llm.LLMUnavailable, match=r"graph extraction: all 2 call") as info:
        extract(Failing(), {"D1": DOCS["D1"], "D2": DOCS["D2"]})
    assert_no_key(env, exc=info.value)
    mixed = llm.FaultInjectingLLM(STAND_IN, schedule=["timeout"])
    assert len(extract(mixed, {"D1": DOCS["D1"], "D2": DOCS["D2"]}).problems) == 1
    with pytest.raises(llm.LLMUnavailable, match=r"dynamic selection \(2 rating\(s\)\): all 2 call"):
        select_reports(Q, reports(2), Failing())
    mixed = llm.FaultInjectingLLM(llm.ExtractiveLLM(), schedule=["timeout"])
    assert len(select_reports(Q, reports(2), mixed).warnings) == 1


def test_a_claim_extraction_whose_every_call_failed_stops(env):
    """Notebook 12's claims follow the same rule as the graph extraction (issue 30)."""
    from cookbook.index.claims import extract_claims

    with pytest.raises(llm.LLMUnavailable, match=r"claim extraction: all 2 call\(s\) failed.*TimeoutError") as info:
        extract_claims({"D1": DOCS["D1"], "D2": DOCS["D2"]}, Failing(), entity_types=["org", "person"])
    assert_no_key(env, exc=info.value)
    mixed = llm.FaultInjectingLLM(STAND_IN, schedule=["timeout"])
    _, problems = extract_claims({"D1": DOCS["D1"], "D2": DOCS["D2"]}, mixed, entity_types=["org", "person"])
    assert [p[0] for p in problems if "unit left out" in p[2]] == ["D1"]
