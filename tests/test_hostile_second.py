"""The second hostile pass of issue 30, on what was new: the replay backend's recordings (`cookbook record
export`), the GraphRAG index reader, the graph view's GraphML, the Ollama backend against misbehaving servers,
credentials in every URL form and the new searches' arguments. Each test failed on the main it was written
against."""

import gzip
import json
import os

import pytest

from cookbook.cache import write_entry
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
