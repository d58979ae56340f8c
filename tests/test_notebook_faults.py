"""Notebooks 02, 04, 05 and 08 with ``LLM="openai"`` against an endpoint that cannot be used (the fake server of
tests/fake_openai.py): each stops in its real-model cell with one ``LLMUnavailable`` line naming the endpoint,
the model and the cause — in the run's table, its summary.json and the executed notebook — and the key is
nowhere in what the run printed or wrote."""

import json
import os
from pathlib import Path

import nbformat
import pytest

from .conftest import BACKGROUND, BackgroundRun, series_command
from .fake_openai import FakeServer

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-fake-9f8e7d6c5b4a-DO-NOT-LEAK"
STEMS = ("02_graph_extraction", "04_community_reports", "05_map_reduce_answering", "08_local_search")


NON_UTF8 = ("bytes", (200, "application/json", b'{"choices": [{"message": {"content": "\xff\xfe"}}]}'))


CASES = {"quota": ([("quota", None)], "HTTP 429, the quota is exhausted (insufficient_quota", STEMS),
         "non-utf8-body": ([NON_UTF8], "the response is not UTF-8 text", STEMS[:1])}


def _faulty_run(case):
    """Start ``case``'s notebooks against a fake server answering with its script (conftest.BACKGROUND)."""
    def start(folder):
        script, _, stems = CASES[case]
        srv = FakeServer(script).__enter__()
        env = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": srv.url, "OPENAI_MODEL": "fake-model",
               "COOKBOOK_CACHE": str(folder / "cache")}  # a cold response cache: the server must be asked
        argv = series_command(folder / "out", "--only", *(s[:2] for s in stems), "--corpus", "world", "--no-html",
                              "-p", "LLM=openai")
        return BackgroundRun(argv, folder, env=env, on_exit=lambda: srv.__exit__(None, None, None), server=srv)
    return start


for _case in CASES:
    BACKGROUND[f"notebooks-{_case}"] = _faulty_run(_case)


@pytest.mark.runs_notebooks
@pytest.mark.parametrize("case", [pytest.param(c, id=c, marks=pytest.mark.background(f"notebooks-{c}"))
                                  for c in CASES])
def test_notebooks_stop_with_one_llm_unavailable_line(case, background):
    """An exhausted quota (OpenAI's 429 ``insufficient_quota``): before, 02 and 08 stopped on the SDK's
    ``RateLimitError`` after its retries, 04 had no real-model branch and 05 answered "No relevant information"
    with a warning per batch. A body that is not UTF-8: before (issue 30), 02 reported ok 8/8 while every unit of
    its real-model section had failed. Every other endpoint-wide failure takes the same path
    (tests/test_endpoint_faults.py). Each run is started with the session (conftest.BACKGROUND) and read here."""
    _, cause, stems = CASES[case]
    started = background(f"notebooks-{case}")
    run, srv = started.result(), started.server
    out, cache = started.folder / "out", started.folder / "cache"
    assert run.returncode != 0
    want = f"LLMUnavailable: LLM endpoint {srv.url}, model 'fake-model': {cause}"
    rows = {r["notebook"]: r for r in json.loads((out / "summary.json").read_text())}
    assert sorted(rows) == list(stems)
    for stem in stems:
        row = rows[stem]
        assert row["status"] == "error" and row["error"].startswith(want) and "\n" not in row["error"], row
        committed = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
        real_model_cell = ('if LLM == "openai":', 'if LLM != "extractive":')
        assert committed.cells[row["failing_cell"]].source.startswith(real_model_cell), stem
        executed = nbformat.read(out / "notebooks" / f"{stem}.world.ipynb", as_version=4)
        errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
        assert [(e.ename, e.evalue) for e in errors] == [("LLMUnavailable", row["error"].split(": ", 1)[1])]
    table = [line for line in run.stdout.splitlines() if "↳" in line]
    assert len(table) == len(stems) and all(want in line for line in table), run.stdout
    assert 1 <= srv.n <= 18  # a call or two per notebook; at most 8 in flight when the first fails
    scanned = [run.stdout, run.stderr] + [p.read_text(errors="replace") for folder in (out, cache)
                                          for p in folder.rglob("*") if p.is_file()]
    assert len(scanned) > 2 + len(stems)  # stdout, stderr and at least one file per notebook
    for text in scanned:
        assert KEY not in text and KEY[8:24] not in text
