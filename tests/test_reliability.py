"""Reliability: identical reruns, and outputs free of secrets."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from cookbook import checks
from cookbook.compare import compare_builds

ROOT = Path(__file__).resolve().parents[1]


def run_series(out: Path, *extra, env=None):
    cmd = [sys.executable, "-m", "cookbook", "run", "--scale", "ci", "--out", str(out), "--quiet", *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=1800)


@pytest.mark.slow
def test_two_runs_are_identical_apart_from_timing(tmp_path):
    """Same seed, two processes (so two hash seeds): every check and every output identical but wall times,
    as ``cookbook compare`` judges them."""
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        r = run_series(out, "--no-html")
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    notebooks = sorted(p.name for p in (a / "notebooks").glob("*.ipynb"))
    assert notebooks == sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert any(c.name == "runtime_s" and c.timing for c in checks.read(a / "checks" / "00_quickstart.json").checks)
    same, report = compare_builds(a, b)
    assert same, "\n".join(report)


def test_api_key_never_reaches_outputs(tmp_path):
    """Notebook 05's real-model path, against a fake OpenAI-compatible server on 127.0.0.1."""
    import os

    from .fake_openai import FakeServer

    key = "sk-fake-9f8e7d6c5b4a-DO-NOT-LEAK"
    with FakeServer([("extractive", None)]) as srv:
        env = {**os.environ, "OPENAI_API_KEY": key, "OPENAI_BASE_URL": srv.url, "OPENAI_MODEL": "fake-model",
               "COOKBOOK_CACHE": str(tmp_path / "cache")}  # a cold response cache: the server must be asked
        r = run_series(tmp_path / "out", "--only", "05", "-p", "LLM=openai", env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert srv.n > 0, "the notebook never called the fake server"
    assert all({k.lower(): v for k, v in q["headers"].items()}["authorization"] == f"Bearer {key}"
               for q in srv.requests)
    nb = nbformat.read(tmp_path / "out" / "notebooks" / "05_map_reduce_answering.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "Skipped the real-model run" not in printed and "coverage:" in printed
    assert "asked again: 0 new call(s)" in printed and "same answer: True" in printed  # the response cache
    scanned = [r.stdout, r.stderr]
    for p in [*(tmp_path / "out").rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if p.is_file():
            scanned.append(p.read_text(errors="replace"))
    assert len(scanned) > 5  # notebook, checks JSON, HTML page, index, summary, logs
    for text in scanned:
        assert key not in text and key[8:24] not in text
