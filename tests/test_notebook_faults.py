"""Notebooks 02, 04, 05 and 08 with ``LLM="openai"`` against an endpoint that cannot be used (the fake server of
tests/fake_openai.py): each stops in its real-model cell with one ``LLMUnavailable`` line naming the endpoint,
the model and the cause — in the run's table, its summary.json and the executed notebook — and the key is
nowhere in what the run printed or wrote."""

import json
import os
from pathlib import Path

import nbformat
import pytest

from .conftest import run_series
from .fake_openai import FakeServer

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-fake-9f8e7d6c5b4a-DO-NOT-LEAK"
STEMS = ("02_graph_extraction", "04_community_reports", "05_map_reduce_answering", "08_local_search")


@pytest.mark.runs_notebooks
def test_notebooks_stop_with_one_llm_unavailable_line(tmp_path):
    """An exhausted quota (OpenAI's 429 ``insufficient_quota``): before, 02 and 08 stopped on the SDK's
    ``RateLimitError`` after its retries, 04 had no real-model branch and 05 answered "No relevant information"
    with a warning per batch. Every other endpoint-wide failure takes the same path (tests/test_endpoint_faults.py)."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    cause = "HTTP 429, the quota is exhausted (insufficient_quota"
    with FakeServer([("quota", None)]) as srv:
        env = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": srv.url, "OPENAI_MODEL": "fake-model",
               "COOKBOOK_CACHE": str(cache)}
        run = run_series(out, "--only", *(s[:2] for s in STEMS), "--corpus", "world", "--no-html", "-p", "LLM=openai",
                         env=env)
    assert run.returncode != 0
    want = f"LLMUnavailable: LLM endpoint {srv.url}, model 'fake-model': {cause}"
    rows = {r["notebook"]: r for r in json.loads((out / "summary.json").read_text())}
    assert sorted(rows) == list(STEMS)
    for stem in STEMS:
        row = rows[stem]
        assert row["status"] == "error" and row["error"].startswith(want) and "\n" not in row["error"], row
        committed = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
        assert committed.cells[row["failing_cell"]].source.startswith('if LLM != "extractive":'), stem  # that cell
        executed = nbformat.read(out / "notebooks" / f"{stem}.world.ipynb", as_version=4)
        errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
        assert [(e.ename, e.evalue) for e in errors] == [("LLMUnavailable", row["error"].split(": ", 1)[1])]
    table = [line for line in run.stdout.splitlines() if "↳" in line]
    assert len(table) == len(STEMS) and all(want in line for line in table), run.stdout
    assert 1 <= srv.n <= 18  # a call or two per notebook; at most 8 in flight when the first fails
    scanned = [run.stdout, run.stderr] + [p.read_text(errors="replace") for folder in (out, cache)
                                          for p in folder.rglob("*") if p.is_file()]
    assert len(scanned) > 6
    for text in scanned:
        assert KEY not in text and KEY[8:24] not in text
