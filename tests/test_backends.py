"""The free real-model backends: Colab's built-in model (a stand-in ``google.colab.ai`` injected through
sys.modules), a local Ollama (tests/fake_openai.py serving /v1/models too), and a recorded run replayed
(exported from the cache the fake Ollama's answers went to). Nothing here touches the network: every server
is on 127.0.0.1."""

import json
import sys
import types

import openai
import pytest

from cookbook import llm
from cookbook.__main__ import main
from cookbook.llm import ExtractiveLLM, LLMCallFailed, LLMUnavailable, TokenLedger, from_parameter
from cookbook.llm.colab import ColabLLM
from cookbook.llm.prompts import prompt
from cookbook.llm.recording import ReplayLLM, export_recording
from cookbook.query import global_search
from tests.fake_openai import FakeServer, unreachable_url

ANSWER = prompt("answer", question="Who founded Acme?", sources=["[d1] Ada founded Acme."])
REPORTS = None


class FakeColabAI(types.ModuleType):
    """What google/colab/ai.py exposes: generate_text(prompt, model_name=..., stream=False) and list_models();
    ``behaviour`` is a list of what successive calls do: "extractive" (answer as the stand-in), an exception
    instance (raise it), or a string (return it)."""

    def __init__(self, behaviour=("extractive",), models=("google/gemini-2.5-flash", "google/gemma-3-27b")):
        super().__init__("google.colab.ai")
        self.behaviour, self.models, self.calls = list(behaviour), list(models), []

    def generate_text(self, prompt, model_name="google/gemini-2.5-flash", stream=False):
        self.calls.append((prompt, model_name))
        step = self.behaviour[min(len(self.calls) - 1, len(self.behaviour) - 1)]
        if isinstance(step, BaseException):
            raise step
        return ExtractiveLLM().complete(prompt, max_tokens=500) if step == "extractive" else step

    def list_models(self):
        return list(self.models)


class SecretNotFoundError(Exception):
    pass


def status_error(cls, status, message):
    """An ``openai`` SDK status error as generate_text lets it through (built without an HTTP response)."""
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.status_code, err.body, err.code = status, {"message": message}, None
    err.response = types.SimpleNamespace(headers={})
    return err


@pytest.fixture
def colab(monkeypatch, tmp_path):
    """A stand-in google.colab package: ``ai`` a FakeColabAI, ``userdata`` holding no secret."""
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MODEL_PROXY_API_KEY", raising=False)
    monkeypatch.delenv("COLAB_MODEL", raising=False)
    ai = FakeColabAI()
    userdata = types.ModuleType("google.colab.userdata")

    def get(key):
        raise SecretNotFoundError(f"Secret {key} does not exist.")

    userdata.get = get
    pkg = types.ModuleType("google.colab")
    pkg.ai, pkg.userdata = ai, userdata
    monkeypatch.setitem(sys.modules, "google.colab", pkg)
    monkeypatch.setitem(sys.modules, "google.colab.ai", ai)
    monkeypatch.setitem(sys.modules, "google.colab.userdata", userdata)
    return ai


def test_colab_answers_through_generate_text_behind_the_cache(colab, monkeypatch):
    monkeypatch.setenv("MODEL_PROXY_API_KEY", "proxy-token-0123456789")
    backend = from_parameter("colab")
    ledger = TokenLedger(backend)
    first = [ledger.complete(ANSWER, max_tokens=50) for _ in range(2)]
    assert first == [ExtractiveLLM().complete(ANSWER, max_tokens=50)] * 2
    assert colab.calls == [(ANSWER, "google/gemini-2.5-flash")]  # the second answer came from the cache
    assert (ledger.calls, ledger.hits, backend.model) == (1, 1, "google/gemini-2.5-flash")
    monkeypatch.setenv("COLAB_MODEL", "google/gemma-3-27b")
    assert from_parameter("colab").model == "google/gemma-3-27b"


def test_colab_reads_the_proxy_token_from_colab_secrets(colab, monkeypatch):
    sys.modules["google.colab"].userdata.get = lambda key: "secret-token-from-colab-ui"
    ColabLLM().complete(ANSWER, max_tokens=50)
    import os

    assert os.environ["MODEL_PROXY_API_KEY"] == "secret-token-from-colab-ui"  # as google.colab.ai copies it
    assert llm.redact("token secret-token-from-colab-ui") == "token ***"


@pytest.mark.parametrize("case, cause", [
    ("outside Colab", "google.colab.ai cannot be imported"),
    ("no token", "no model proxy token (SecretNotFoundError: Secret MODEL_PROXY_API_KEY does not exist.)"),
    ("model not offered", "Colab does not offer this model; ai.list_models() names ['google/gemini-2.5-flash'"),
    ("token refused", "HTTP 401, the API key was rejected"),
])
def test_colab_that_cannot_be_used_stops_with_one_line(colab, monkeypatch, case, cause):
    if case == "outside Colab":
        monkeypatch.setitem(sys.modules, "google.colab", None)  # `from google.colab import ai` → ImportError
    if case != "no token":
        monkeypatch.setenv("MODEL_PROXY_API_KEY", "proxy-token-0123456789")
    if case == "model not offered":
        monkeypatch.setenv("COLAB_MODEL", "gpt-5")
    if case == "token refused":
        colab.behaviour = [status_error(openai.AuthenticationError, 401, "bad token")]
    with pytest.raises(LLMUnavailable) as e:
        from_parameter("colab").complete(ANSWER, max_tokens=50)
    message = str(e.value)
    assert message.startswith("LLM backend colab") and "gemini-2.5-flash" in message or "gpt-5" in message
    assert cause in message and "\n" not in message and "proxy-token-0123456789" not in message


def test_colab_retries_a_transient_fault_and_survives_one_failed_call(colab, monkeypatch):
    monkeypatch.setenv("MODEL_PROXY_API_KEY", "proxy-token-0123456789")
    colab.behaviour = [status_error(openai.InternalServerError, 503, "busy"), "fine"]
    backend = ColabLLM(backoff=0)
    assert backend.complete(ANSWER, max_tokens=50) == "fine" and len(colab.calls) == 2
    colab.behaviour, colab.calls = [None], []
    assert backend.complete(ANSWER, max_tokens=50) == ""  # no content: malformed output, which the steps survive
    colab.behaviour, colab.calls = [ValueError("Prompt cannot be empty.")], []
    with pytest.raises(LLMCallFailed, match="ValueError: Prompt cannot be empty"):
        backend.complete(ANSWER, max_tokens=50)
    assert len(colab.calls) == 1  # a bad request is not retried


def test_ollama_answers_behind_the_cache_and_strips_thinking(monkeypatch, tmp_path):
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path))
    monkeypatch.setenv("OLLAMA_MODEL", "qwen3")
    with FakeServer([("ok", "<think>They want a name.</think>\nAda founded Acme. [d1]")],
                    models=["qwen3:latest", "llama3.2:latest"]) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url.removesuffix("/v1"))
        backend = from_parameter("ollama")
        assert [backend.complete(ANSWER, max_tokens=50) for _ in range(2)] == ["Ada founded Acme. [d1]"] * 2
    assert server.n == 1 and server.requests[0]["body"]["model"] == "qwen3"
    assert {k.lower(): v for k, v in server.requests[0]["headers"].items()}["authorization"] == "Bearer ollama"


@pytest.mark.parametrize("case, cause", [
    ("not running", "Ollama is not running there (start it with `ollama serve`"),
    ("not pulled", "the model is not pulled (run `ollama pull llama3.2`"),
    ("not Ollama", "GET /v1/models answered HTTP 404: is this an Ollama server?"),
])
def test_ollama_that_cannot_be_used_stops_with_one_line(monkeypatch, tmp_path, case, cause):
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path))
    monkeypatch.delenv("OLLAMA_MODEL", raising=False)
    with FakeServer([("ok", "x")], models=None if case == "not Ollama" else ["qwen3:latest"]) as server:
        url = unreachable_url() if case == "not running" else server.url
        monkeypatch.setenv("OLLAMA_HOST", url.removesuffix("/v1"))
        with pytest.raises(LLMUnavailable) as e:
            from_parameter("ollama")
    message = str(e.value)
    assert message.startswith(f"LLM backend ollama at {url}, model 'llama3.2': ") and cause in message
    assert "\n" not in message


def test_a_recorded_run_replays_identically_without_a_server(monkeypatch, tmp_path):
    """Global search on the fake Ollama (every prompt answered by the stand-in, so the answers are real
    text), exported, then replayed: the same answer, the same ledger, and a prompt off the recording stops."""
    from cookbook.data import load_corpus
    from cookbook.index import graph_extraction as ge
    from cookbook.index import hierarchy, reports

    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path / "cache"))
    corpus = load_corpus("world", "ci", seed=7)
    xg = ge.corpus_extraction(corpus)
    hier = hierarchy.hierarchical_leiden(ge.to_entity_graph(xg), max_cluster_size=10, seed=7)
    level = reports.graph_reports(hier, xg, ExtractiveLLM(), budget=800)[0]
    question = corpus.global_questions[0].text
    with FakeServer([("extractive", None)], models=["llama3.2:latest"]) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url.removesuffix("/v1"))
        recorded_ledger = TokenLedger(from_parameter("ollama"))
        recorded = global_search.global_search(question, level, recorded_ledger, seed=7)
    assert server.n == recorded_ledger.calls > 1
    assert main(["record", "export", str(tmp_path / "class.json.gz")]) == 0
    assert main(["record", "export", str(tmp_path / "class.json.gz")]) == 2  # never overwritten unasked
    monkeypatch.setenv("COOKBOOK_RECORDING", str(tmp_path / "class.json.gz"))
    replay = from_parameter("replay")
    replayed_ledger = TokenLedger(replay)
    replayed = global_search.global_search(question, level, replayed_ledger, seed=7)
    assert (replayed.text, replayed.points) == (recorded.text, recorded.points)
    assert replayed_ledger.by_task == recorded_ledger.by_task and replay.model == "llama3.2"
    with pytest.raises(LLMUnavailable) as e:
        global_search.global_search("Which rivers cross the most regions?", level, replay, seed=7)
    assert "no recorded answer for step 'map'" in str(e.value) and "Which rivers" in str(e.value)


def test_export_names_the_model_when_the_cache_holds_several(monkeypatch, tmp_path, capsys):
    from cookbook.cache import write_entry

    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path))
    for model in ("llama3.2", "gpt-4o-mini"):
        write_entry("llm", {"model": model, "prompt": "TASK: answer", "max_tokens": 5, "params": {}}, model)
    with pytest.raises(ValueError, match=r"name the model to export: .* of \['gpt-4o-mini', 'llama3.2'\]"):
        export_recording(tmp_path / "r.json")
    assert main(["record", "export", str(tmp_path / "r.json"), "--model", "gpt-4o-mini"]) == 0
    assert "1 answers of 'gpt-4o-mini'" in capsys.readouterr().out
    assert ReplayLLM(tmp_path / "r.json").complete("TASK: answer", max_tokens=5) == "gpt-4o-mini"
    assert json.loads((tmp_path / "r.json").read_text())["model"] == "gpt-4o-mini"


def _recording(path, model="llama3.2"):
    """A one-answer recording of ``model`` at ``path`` (gzip-compressed when it ends in .gz), made by export."""
    from cookbook.cache import write_entry

    write_entry("llm", {"model": model, "prompt": "TASK: answer\n## QUESTION\nHi?", "max_tokens": 5,
                        "params": {}}, "Hello.")
    return export_recording(path, model=model)


@pytest.mark.parametrize("name", ["class.json", "class.json.gz"])
@pytest.mark.parametrize("damage", ["cut", "garbled", "deflate", "deep"])
def test_a_damaged_recording_stops_the_replay_with_one_line_naming_it(monkeypatch, tmp_path, name, damage):
    """A recording cut short in a copy, bytes overwritten, a gzip whose compressed data is broken (zlib's own
    error), JSON nested deeper than Python recurses: each one LLMUnavailable line naming the file."""
    import gzip

    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path / "cache"))
    path = tmp_path / name
    _recording(path)
    raw = path.read_bytes()
    damaged = {"cut": raw[: len(raw) // 2],
               "garbled": raw[:12] + b"\xff" * 16 + raw[28:],
               "deflate": raw[:10] + bytes(range(7, 40)) if name.endswith(".gz") else b"\x1f\x8b\x08" + raw[3:],
               "deep": b"[" * 100_000 + b"]" * 100_000}[damage]
    path.write_bytes(gzip.compress(damaged, mtime=0) if damage == "deep" and name.endswith(".gz") else damaged)
    with pytest.raises(LLMUnavailable) as e:
        from_parameter("replay", recording=str(path))
    message = str(e.value)
    assert message.startswith(f"LLM backend replay of {path}: {path} is not a recording") and "\n" not in message


def test_export_keeps_a_file_already_there_byte_for_byte(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path / "cache"))
    mine = tmp_path / "class.json"
    mine.write_text("the teacher's own notes")
    _recording(tmp_path / "made.json")
    assert main(["record", "export", str(mine)]) == 2
    assert mine.read_text() == "the teacher's own notes"
    assert capsys.readouterr().err == f"cookbook record export: {mine} exists; pass --force to replace it\n"
    assert not list(tmp_path.glob(".class.json*"))
    assert main(["record", "export", str(mine), "--force"]) == 0
    assert ReplayLLM(mine).complete("TASK: answer\n## QUESTION\nHi?", max_tokens=5) == "Hello."
    folder = tmp_path / "class"  # a folder is no recording's file, even with --force: kept, and nothing beside it
    folder.mkdir()
    capsys.readouterr()
    assert main(["record", "export", str(folder), "--force"]) == 2
    assert capsys.readouterr().err == (f"cookbook record export: {folder} is a folder: name the recording's file, "
                                       f"e.g. {folder / 'class.json.gz'}\n")
    assert folder.is_dir() and not list(tmp_path.glob(".class*"))


def test_a_replay_is_the_recorded_model_whatever_else_is_named(monkeypatch, tmp_path):
    """A recording of llama3.2 replays as llama3.2 under any file name and whatever model the environment names
    for the live backends; a model named to from_parameter that is not the recording's stops it, in one line."""
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path / "cache"))
    _recording(tmp_path / "class.json.gz")
    (tmp_path / "renamed.json").write_bytes((tmp_path / "class.json.gz").read_bytes())  # still gzip inside
    for var in ("OLLAMA_MODEL", "COLAB_MODEL", "OPENAI_MODEL"):
        monkeypatch.setenv(var, "qwen3")
    replay = from_parameter("replay", recording=str(tmp_path / "renamed.json"))
    assert replay.model == "llama3.2" and replay.complete("TASK: answer\n## QUESTION\nHi?", max_tokens=5) == "Hello."
    assert from_parameter("replay", recording=str(tmp_path / "renamed.json"), model="llama3.2").model == "llama3.2"
    with pytest.raises(LLMUnavailable) as e:
        from_parameter("replay", recording=str(tmp_path / "renamed.json"), model="qwen3")
    assert str(e.value) == (f"LLM backend replay of {tmp_path / 'renamed.json'} (model 'llama3.2'): asked for model "
                            "'qwen3', but the recording holds the answers of 'llama3.2'; record a run of 'qwen3', or "
                            "leave the model unnamed")
