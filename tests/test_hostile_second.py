"""The second hostile pass of issue 30, on what was new: the replay backend's recordings (`cookbook record
export`), the GraphRAG index reader, the graph view's GraphML, the Ollama backend against misbehaving servers,
credentials in every URL form and the new searches' arguments. Each test failed on the main it was written
against."""

import base64
import gzip
import json
import os

import pytest

from cookbook.cache import write_entry
from cookbook.llm.base import public_url, redact
from cookbook.llm.recording import ReplayLLM, export_recording

GOOD = {"format": "graphrag-cookbook recording", "version": 1, "model": "m",
        "answers": [{"prompt": "TASK: answer", "max_tokens": 5, "text": "OK"}]}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COOKBOOK_CACHE", str(tmp_path / "cache"))
    write_entry("llm", {"model": "m1", "prompt": "TASK: answer\nQ", "max_tokens": 5, "params": {}}, "Fine.")
    return tmp_path


# ---------------------------------------------------------------- recordings: data loss, secrets, damage
def test_export_never_writes_through_or_deletes_a_file_beside_the_recording(cache):
    (cache / "thesis.txt").write_text("my thesis")
    os.symlink(cache / "thesis.txt", cache / ".r.json.tmp")  # the name the old export wrote to, then deleted
    (cache / ".s.json.tmp").write_text("my notes")
    export_recording(cache / "r.json", model="m1")
    export_recording(cache / "s.json", model="m1")
    assert (cache / "thesis.txt").read_text() == "my thesis" and (cache / ".r.json.tmp").is_symlink()
    assert (cache / ".s.json.tmp").read_text() == "my notes"


def test_export_keeps_a_dangling_link_without_force(cache):
    os.symlink(cache / "elsewhere.json", cache / "link.json")
    with pytest.raises(FileExistsError):
        export_recording(cache / "link.json", model="m1")
    assert (cache / "link.json").is_symlink()
    export_recording(cache / "link.json", model="m1", force=True)  # replaces the link, never its target
    assert not (cache / "link.json").is_symlink() and not (cache / "elsewhere.json").exists()


def test_export_leaves_out_answers_holding_a_secret(cache, monkeypatch):
    monkeypatch.setenv("MODEL_PROXY_API_KEY", "proxy-token-0123456789")
    write_entry("llm", {"model": "m1", "prompt": "TASK: answer\nQ2", "max_tokens": 5, "params": {}},
                "the key is sk-proj-ABCDEFGHIJKLMNOP")
    write_entry("llm", {"model": "m1", "prompt": "TASK: answer\nQ3", "max_tokens": 5, "params": {}},
                "my token proxy-token-0123456789")
    info = export_recording(cache / "r.json.gz", model="m1")
    text = gzip.decompress((cache / "r.json.gz").read_bytes()).decode()
    assert "sk-proj" not in text and "proxy-token" not in text and "Fine." in text
    assert info["answers"] == 1 and info["left_out"] == 2


@pytest.mark.parametrize("change", [{"params": 5}, {"params": [1, 2]}, {"params": "ab"},
                                    {"answers": [{"prompt": "x", "max_tokens": True, "text": "y"}]},
                                    {"answers": [{"prompt": "x", "max_tokens": 5, "text": "y"},
                                                 {"prompt": "x", "max_tokens": 5, "text": "z"}]}])
def test_a_damaged_recording_is_one_error_naming_the_file(tmp_path, change):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({**GOOD, **change}))
    with pytest.raises(ValueError, match="r.json"):
        ReplayLLM(path)


# ---------------------------------------------------------------- the graph view's GraphML
def test_write_graphml_never_writes_through_a_link(tmp_path):
    from cookbook.harness.graph_view import write_graphml

    os.symlink(tmp_path / "outside.graphml", tmp_path / "g.graphml")  # dangling
    with pytest.raises(FileExistsError, match="link"):
        write_graphml([{"id": "a"}], [], tmp_path / "g.graphml")
    assert not (tmp_path / "outside.graphml").exists()


def test_write_graphml_that_fails_leaves_the_previous_file_and_no_empty_one(tmp_path):
    import networkx as nx

    from cookbook.harness.graph_view import write_graphml

    with pytest.raises(ValueError, match="GraphML"):
        write_graphml([{"id": "a", "tags": ["x"]}], [], tmp_path / "new.graphml")
    assert not (tmp_path / "new.graphml").exists()
    write_graphml([{"id": "a", "label": "A"}], [], tmp_path / "new.graphml")  # a retry is not refused
    with pytest.raises(ValueError):
        write_graphml([{"id": "b", "tags": None}], [], tmp_path / "new.graphml")
    assert list(nx.read_graphml(tmp_path / "new.graphml").nodes) == ["a"]


def test_write_graphml_refuses_a_folder_a_mention_and_an_edge_to_nowhere(tmp_path):
    from cookbook.harness.graph_view import GENERATOR, write_graphml

    with pytest.raises(ValueError, match="folder"):
        write_graphml([{"id": "a"}], [], tmp_path)
    (tmp_path / "notes.graphml").write_text(f"my notes on the {GENERATOR} files")
    with pytest.raises(FileExistsError):
        write_graphml([{"id": "a"}], [], tmp_path / "notes.graphml")
    assert (tmp_path / "notes.graphml").read_text().startswith("my notes")
    with pytest.raises(ValueError, match="zz"):
        write_graphml([{"id": "a"}], [("a", "zz", 1.0)], tmp_path / "g.graphml")


# ---------------------------------------------------------------- a GraphRAG index that is not one
def _dulce_json(tmp_path, table, change):
    import shutil

    from cookbook.data.storage import data_dir

    folder = tmp_path / "index"
    shutil.copytree(data_dir() / "dulce" / "index", folder)
    path = folder / f"{table}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in change(rows)))
    return folder


@pytest.mark.parametrize("table, change, says", [
    ("communities", lambda t: [{**r, "children": [r["community"]]} for r in t], "child"),  # hung for ever
    ("communities", lambda t: [{**r, "children": [999]} if i == 0 else r for i, r in enumerate(t)], "999"),
    ("communities", lambda t: [{**r, "entity_ids": ["nope"]} if i == 0 else r for i, r in enumerate(t)], "nope"),
    ("entities", lambda t: [{**r, "title": t[0]["title"]} if i == 1 else r for i, r in enumerate(t)], "title"),
    ("entities", lambda t: [{**r, "human_readable_id": 0} if i == 1 else r for i, r in enumerate(t)], "0"),
    ("text_units", lambda t: t + [t[0]], "text_units"),
    ("relationships", lambda t: [{**r, "weight": None} if i == 0 else r for i, r in enumerate(t)], "weight"),
    ("community_reports", lambda t: [{**r, "level": 7} if i == 0 else r for i, r in enumerate(t)], "level 7"),
])
def test_an_index_whose_tables_do_not_fit_is_one_error_naming_the_folder(tmp_path, table, change, says):
    from cookbook.data.graphrag_index import read_index_json
    from cookbook.data.storage import DataError

    folder = _dulce_json(tmp_path, table, change)
    with pytest.raises(DataError, match=f"{folder}.*{says}"):
        read_index_json(folder)


def test_a_parquet_index_with_a_null_token_count_names_its_folder(tmp_path):
    import shutil

    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    from cookbook.data.graphrag_index import read_graphrag_index
    from cookbook.data.storage import DataError, data_dir

    folder = tmp_path / "output"
    shutil.copytree(data_dir() / "dulce" / "output", folder)
    rows = pq.read_table(folder / "text_units.parquet").to_pylist()
    pq.write_table(pa.Table.from_pylist([{**rows[0], "n_tokens": None}, *rows[1:]]), folder / "text_units.parquet")
    with pytest.raises(DataError, match=str(folder)):
        read_graphrag_index(folder)


def test_communities_of_an_index_made_by_hand_with_a_cycle_stop(tmp_path):
    from dataclasses import replace

    from cookbook.data.recorded import load_recorded
    from cookbook.index.recorded import communities_of_index, graph_of_index

    idx = load_recorded("dulce").index
    looped = replace(idx, communities=[replace(c, children=(c.community,)) for c in idx.communities])
    with pytest.raises(ValueError, match="descendants"):
        communities_of_index(looped, graph_of_index(looped))


def test_write_index_json_refuses_before_writing_and_never_through_a_link(tmp_path):
    from cookbook.data.graphrag_index import write_index_json
    from cookbook.data.recorded import load_recorded

    idx = load_recorded("dulce").index
    (tmp_path / "a").mkdir()
    os.symlink(tmp_path / "outside.jsonl", tmp_path / "a" / "documents.jsonl")
    with pytest.raises(FileExistsError):
        write_index_json(idx, tmp_path / "a")
    assert not (tmp_path / "outside.jsonl").exists()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "entities.jsonl").write_text("mine")
    with pytest.raises(FileExistsError):
        write_index_json(idx, tmp_path / "b")
    assert sorted(os.listdir(tmp_path / "b")) == ["entities.jsonl"]


# ---------------------------------------------------------------- credentials in URLs, every form
def test_percent_encoded_credentials_are_masked_as_sent():
    for url, sent in (("http://alice:p%40ss-word-1234@h:1/v1", "p@ss-word-1234"),
                      ("redis://:pw%3Dsecret-123456@h:6379", "pw=secret-123456")):
        assert public_url(url).count("@") == 0
        assert redact(f"library says {sent}") == "library says ***"
    basic = base64.b64encode(b"alice:p@ss-word-1234").decode()
    assert redact(f"Authorization: Basic {basic}") == "Authorization: Basic ***"


def test_path_parameters_and_fragments_are_not_printed():
    assert public_url("http://h/v1;token=abcdefghijklm") == "http://h/v1;***"
    public_url("http://h/v1#token=fragment-secret-1")
    assert redact("echo fragment-secret-1") == "echo ***"


# ---------------------------------------------------------------- Ollama: its host, a crawling server
def test_an_ollama_host_with_a_query_keeps_v1_on_its_path():
    from cookbook.llm.ollama import ollama_base_url

    assert ollama_base_url("http://gpu:11434/?token=abc") == "http://gpu:11434/v1?token=abc"
    assert ollama_base_url("gpu:11434#x") == "http://gpu:11434/v1"


def test_the_ollama_check_is_bounded_when_the_model_list_trickles_in():
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from cookbook.llm.base import LLMUnavailable
    from cookbook.llm.ollama import OllamaLLM

    class Trickle(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": "llama3.2", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(len(body)):
                try:
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.1)  # each read quick, the whole list ~7 s

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(LLMUnavailable, match="did not finish"):
            OllamaLLM("llama3.2", host=f"127.0.0.1:{server.server_address[1]}", timeout=0.5)
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------- the new searches' arguments
def test_a_relevance_threshold_no_rating_reaches_is_refused():
    from cookbook.query import dynamic_selection, lazy_search

    with pytest.raises(ValueError, match="0-5"):
        lazy_search.lazy_search("Why?", None, None, threshold=6)
    with pytest.raises(ValueError, match="0-5"):
        dynamic_selection.select_reports("Why?", [object()], None, threshold=9)


def test_a_report_cannot_keep_the_graph_views_script_open():
    from cookbook.harness.graph_view import graph_html

    page = graph_html([{"id": "a", "community": 0}], [], {0: ("<!--<script>", "x </script> y")})
    payload = page.split('<script type="application/json">')[1].split("</script>")[0]
    assert "<" not in payload and json.loads(payload) == {"0": ["<!--<script>", "x </script> y"]}


@pytest.mark.parametrize("score", ["score_merges", "bcubed"])
def test_merge_scores_refuse_a_missing_label(score):
    from cookbook.index import resolution

    with pytest.raises(ValueError, match="missing label"):
        getattr(resolution, score)([float("nan"), float("nan")], [("E1",), ("E1",)])


def test_a_recording_that_unpacks_to_too_much_is_refused_unread(tmp_path, monkeypatch):
    from cookbook.llm import recording

    monkeypatch.setattr(recording, "MAX_RECORDING_BYTES", 10_000)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(b" " * 1_000_000 + json.dumps(GOOD).encode()))  # 1 KB packed
    with pytest.raises(ValueError, match="bomb.json.gz.*unpacks to more than"):
        ReplayLLM(path)
    (tmp_path / "big.json").write_bytes(b" " * 20_000 + json.dumps(GOOD).encode())
    with pytest.raises(ValueError, match="big.json.*bytes"):
        ReplayLLM(tmp_path / "big.json")
