"""Reliability: identical reruns, and outputs free of secrets."""

import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import nbformat
import pytest

from cookbook import checks

ROOT = Path(__file__).resolve().parents[1]


def run_series(out: Path, *extra, env=None):
    cmd = [sys.executable, "-m", "cookbook", "run", "--scale", "ci", "--out", str(out), "--quiet", *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=1800)


def comparable_checks(out: Path) -> dict:
    """Every check but the values (and over-budget warnings) of timing checks."""
    recs = {}
    for p in sorted((out / "checks").glob("*.json")):
        recs[p.stem] = [{k: v for k, v in asdict(c).items() if not (c.timing and k in ("value", "warning"))}
                        for c in checks.read(p).checks]
    return recs


def comparable_outputs(path: Path, timing_names: set[str]) -> list:
    """Outputs of every code cell not tagged "timing", with the checks-table lines of timing checks dropped."""
    nb = nbformat.read(path, as_version=4)
    cells = []
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code" or "timing" in c.metadata.get("tags", []):
            continue
        outs = []
        for o in c.outputs:
            if o.output_type == "stream":
                # the same text may arrive in one chunk or several, depending on when it was flushed
                if outs and isinstance(outs[-1], list) and outs[-1][0] == o.name:
                    outs[-1][1] += o.text
                else:
                    outs.append([o.name, o.text])
            elif o.output_type in ("display_data", "execute_result"):
                outs.append({k: v for k, v in o.data.items() if k in ("text/plain", "image/png")})
            else:
                outs.append((o.output_type, o.get("ename"), o.get("evalue")))
        for o in outs:
            if isinstance(o, list):
                o[1] = [ln for ln in o[1].splitlines() if ln.split(" ", 1)[0] not in timing_names]
        cells.append((i, outs))
    return cells


@pytest.mark.slow
def test_two_runs_are_identical_apart_from_timing(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        r = run_series(out, "--no-html")
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    checks_a, checks_b = comparable_checks(a), comparable_checks(b)
    assert checks_a == checks_b
    timing = {c["name"] for rec in checks_a.values() for c in rec if c["timing"]}
    assert "runtime_s" in timing
    notebooks = sorted(p.name for p in (a / "notebooks").glob("*.ipynb"))
    assert notebooks == sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for name in notebooks:
        assert comparable_outputs(a / "notebooks" / name, timing) == comparable_outputs(b / "notebooks" / name,
                                                                                       timing), name


def test_api_key_never_reaches_outputs(tmp_path):
    """Notebook 04's real-model path, against a fake OpenAI-compatible server on 127.0.0.1."""
    import os

    from .fake_openai import FakeServer

    key = "sk-fake-9f8e7d6c5b4a-DO-NOT-LEAK"
    with FakeServer([("extractive", None)]) as srv:
        env = {**os.environ, "OPENAI_API_KEY": key, "OPENAI_BASE_URL": srv.url, "OPENAI_MODEL": "fake-model"}
        r = run_series(tmp_path / "out", "--only", "04", "-p", "LLM=openai", env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert srv.n > 0, "the notebook never called the fake server"
    assert all({k.lower(): v for k, v in q["headers"].items()}["authorization"] == f"Bearer {key}"
               for q in srv.requests)
    nb = nbformat.read(tmp_path / "out" / "notebooks" / "04_map_reduce_answering.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "Skipped the real-model run" not in printed and "coverage:" in printed
    scanned = [r.stdout, r.stderr]
    for p in (tmp_path / "out").rglob("*"):
        if p.is_file():
            scanned.append(p.read_text(errors="replace"))
    assert len(scanned) > 5  # notebook, checks JSON, HTML page, index, summary, logs
    for text in scanned:
        assert key not in text and key[8:24] not in text
