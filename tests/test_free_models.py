"""Every notebook that calls a model, executed (papermill, SCALE="ci", the world) on the free real-model backends:
Colab's built-in model (a stand-in ``google.colab.ai`` on the kernel's path), a local Ollama (tests/fake_openai.py
on 127.0.0.1, answering as the stand-in), and a replay of the Ollama run, exported from its cache with
``cookbook record export`` — the replay's checks equal the recorded run's, with no server at all; a dead backend
stops a notebook with one line. Nothing here touches the network. The notebooks are copies with the Colab setup
cell left out (the stand-in makes ``google.colab`` importable, so the cell would install the package)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from cookbook.run.compare import notebook_lines
from tests.fake_openai import FakeModel, FakeServer, unreachable_url

pytestmark = pytest.mark.runs_notebooks  # kernels start here

ROOT = Path(__file__).resolve().parents[1]
USES_A_MODEL = ["00", "02", "04", "05", "08"]  # the notebooks whose LLM parameter reaches a model call
# Lean: each notebook through one live backend at the ci scale, the heaviest (05) and extraction (02) recorded
# and replayed.
ON_COLAB, RECORDED = ["00", "04", "08"], ["02", "05"]

COLAB_AI = f'''"""A stand-in for google.colab.ai (googlecolab/colabtools google/colab/ai.py)."""
import sys

sys.path.insert(0, {str(ROOT)!r})
from tests.fake_openai import FakeModel  # noqa: E402


def generate_text(prompt, model_name="google/gemini-2.5-flash", stream=False):
    return FakeModel().complete(prompt, max_tokens=500)


def list_models():
    return ["google/gemini-2.5-flash"]
'''


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """The notebooks that call a model, their Colab setup cell replaced by ``IN_COLAB = False``."""
    folder = tmp_path_factory.mktemp("notebooks")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        if path.name[:2] in USES_A_MODEL:
            nb = nbformat.read(str(path), as_version=4)
            setup = next(c for c in nb.cells if c.cell_type == "code")
            setup.source = "IN_COLAB = False  # the Colab setup cell, left out under test"
            nbformat.write(nb, str(folder / path.name))
    return folder


def run(copies, out, llm, env, only=USES_A_MODEL):
    """``cookbook run`` of the copies with ``-p LLM=<llm>``: (exit code, output, {notebook: checks})."""
    cmd = [sys.executable, "-m", "cookbook", "run", "--notebooks", str(copies), "--only", *only, "--scale", "ci",
           "--corpus", "world", "--out", str(out), "--quiet", "--no-html", "-p", f"LLM={llm}"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *env.pop("_path", [])]),
           "COOKBOOK_PROGRESS": "0", **env}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)
    checks = {p.name.split(".")[0]: {c["name"]: c["value"] for c in json.loads(p.read_text())["checks"]
                                     if not c.get("timing")}
              for p in sorted((out / "checks").glob("*.json"))} if (out / "checks").is_dir() else {}
    return proc.returncode, proc.stdout + proc.stderr, checks


def test_colab_runs_every_notebook_that_calls_a_model(copies, tmp_path):
    stub = tmp_path / "stub" / "google" / "colab"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("")
    (stub / "ai.py").write_text(COLAB_AI)
    (stub / "userdata.py").write_text("def get(key):\n    raise KeyError(key)\n")
    code, output, checks = run(copies, tmp_path / "colab", "colab",
                               {"_path": [str(tmp_path / "stub")], "MODEL_PROXY_API_KEY": "proxy-token-under-test",
                                "COOKBOOK_CACHE": str(tmp_path / "cache")}, only=ON_COLAB)
    assert code == 0, output[-3000:]
    assert len(checks) == len(ON_COLAB)
    executed = (tmp_path / "colab" / "notebooks" / "00_quickstart.world.ipynb").read_text()
    assert "about to send" in executed and "to colab (google/gemini-2.5-flash)" in executed
    assert "proxy-token-under-test" not in executed


def test_ollama_run_recorded_then_replayed_without_a_server(copies, tmp_path):
    cache = tmp_path / "cache"
    with FakeServer([("extractive", FakeModel())], models=["llama3.2:latest"]) as server:
        code, output, recorded = run(copies, tmp_path / "ollama", "ollama",
                                     {"OLLAMA_HOST": server.url.removesuffix("/v1"), "COOKBOOK_CACHE": str(cache)},
                                     only=RECORDED)
    assert code == 0, output[-3000:]
    assert server.n > 50 and len(recorded) == len(RECORDED)
    export = subprocess.run([sys.executable, "-m", "cookbook", "record", "export", str(tmp_path / "class.json.gz")],
                            cwd=ROOT, capture_output=True, text=True, env={**os.environ, "COOKBOOK_CACHE": str(cache)})
    assert export.returncode == 0 and "answers of 'llama3.2'" in export.stdout, export.stderr
    # the server is gone and the replay's cache is empty: every answer comes from the file
    code, output, replayed = run(copies, tmp_path / "replay", "replay",
                                 {"COOKBOOK_RECORDING": str(tmp_path / "class.json.gz"),
                                  "COOKBOOK_CACHE": str(tmp_path / "replay-cache"), "OLLAMA_HOST": unreachable_url()},
                                 only=RECORDED)
    assert code == 0, output[-3000:]
    assert replayed == recorded
    for stem in ("02_graph_extraction", "05_map_reduce_answering"):  # every output but the lines naming the backend
        timing = {c["name"] for c in json.loads((tmp_path / "ollama" / "checks" / f"{stem}.world.json").read_text())[
            "checks"] if c.get("timing")}
        lines = [[x for x in notebook_lines(tmp_path / run / "notebooks" / f"{stem}.world.ipynb", timing)
                  if "ollama" not in x and "replay" not in x] for run in ("ollama", "replay")]
        assert lines[0] == lines[1], stem
    executed = (tmp_path / "replay" / "notebooks" / "05_map_reduce_answering.world.ipynb").read_text()
    assert "answered by replay (llama3.2): nothing is sent" in executed


def test_a_dead_backend_stops_the_notebook_with_one_line(copies, tmp_path):
    code, output, _ = run(copies, tmp_path / "dead", "ollama", {"OLLAMA_HOST": unreachable_url().removesuffix("/v1"),
                                                                "COOKBOOK_CACHE": str(tmp_path / "cache")},
                          only=["05"])
    assert code == 1
    executed = nbformat.read(str(tmp_path / "dead" / "notebooks" / "05_map_reduce_answering.world.ipynb"), 4)
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert [e.ename for e in errors] == ["LLMUnavailable"]
    assert "\n" not in errors[0].evalue and "Ollama is not running there" in errors[0].evalue
    assert errors[0].evalue.startswith("LLM backend ollama at http://127.0.0.1:")
