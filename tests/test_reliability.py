"""Reliability: identical reruns, and outputs free of secrets."""

import os
from pathlib import Path

import nbformat
import pytest

from cookbook.harness import checks
from cookbook.run.compare import compare_builds

from .conftest import BACKGROUND, BackgroundRun, series_command

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.ci_series("world")
@pytest.mark.ci_series("world", hashseed=1)
def test_two_runs_are_identical_apart_from_timing(ci_series):
    """Same seed, two processes and two hash seeds: the session's world build, which the notebook tests read,
    and one more (conftest._ci_builds); every check and every output identical but wall times, as
    ``cookbook compare`` judges them."""
    (a, first), (b, again) = ci_series("world"), ci_series("world", hashseed=1)
    for r in (first, again):
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    notebooks = sorted(p.name for p in (a / "notebooks").glob("*.ipynb"))
    assert notebooks == sorted(f"{p.stem}.world.ipynb" for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert any(c.name == "runtime_s" and c.timing
               for c in checks.read(a / "checks" / "00_quickstart.world.json").checks)
    same, report = compare_builds(a, b)
    assert same, "\n".join(report)


class _JudgingStandIn:
    """The fake server's model: the offline stand-in, and a judge that calls every pair a tie (the stand-in
    itself refuses to judge)."""

    model = "fake-judge"

    def complete(self, prompt, *, max_tokens):
        from cookbook.llm import ExtractiveLLM

        if prompt.startswith("TASK: judge"):
            return '{"winner": "tie", "reason": "a fake judge"}'
        return ExtractiveLLM().complete(prompt, max_tokens=max_tokens)


KEY = "sk-fake-9f8e7d6c5b4a-DO-NOT-LEAK"


def _api_key_run(folder):
    """Notebook 05 with LLM=openai against the fake server, started with the session."""
    from .fake_openai import FakeServer

    srv = FakeServer([("extractive", _JudgingStandIn())]).__enter__()
    env = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": srv.url, "OPENAI_MODEL": "fake-model",
           "COOKBOOK_CACHE": str(folder / "cache")}  # a cold response cache: the server must be asked
    argv = series_command(folder / "out", "--only", "05", "--corpus", "world", "-p", "LLM=openai")
    return BackgroundRun(argv, folder, env=env, on_exit=lambda: srv.__exit__(None, None, None), server=srv)


BACKGROUND["api-key-05"] = _api_key_run


@pytest.mark.background("api-key-05")
def test_api_key_never_reaches_outputs(background):
    """Notebook 05's real-model path, against a fake OpenAI-compatible server on 127.0.0.1 (the run is started
    with the session, conftest.BACKGROUND, and read here)."""
    started = background("api-key-05")
    r, srv, key, tmp_path = started.result(), started.server, KEY, started.folder
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert srv.n > 0, "the notebook never called the fake server"
    assert all({k.lower(): v for k, v in q["headers"].items()}["authorization"] == f"Bearer {key}"
               for q in srv.requests)
    nb = nbformat.read(tmp_path / "out" / "notebooks" / "05_map_reduce_answering.world.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "Skipped the real-model run" not in printed and "coverage:" in printed
    assert "asked again: 0 new call(s)" in printed and "same answer: True" in printed  # the response cache
    assert "comprehensiveness" in printed  # the LLM judge ran, through the same endpoint
    scanned = [r.stdout, r.stderr]
    for p in [*(tmp_path / "out").rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if p.is_file():
            scanned.append(p.read_text(errors="replace"))
    assert len(scanned) > 5  # notebook, checks JSON, HTML page, index, summary, logs
    for text in scanned:
        assert key not in text and key[8:24] not in text
